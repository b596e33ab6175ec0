"""Claims of Huang, Wen, Chi & Liang (2025) (MAE and CL) with their numerical checks.

`CLAIMS` maps a stable id to a [`Claim`][theorylab.core.claims.Claim], in the paper's order;
``claim.check(quick)`` returns a [`ClaimResult`][theorylab.core.claims.ClaimResult].
``python -m theorylab check --only huang2024`` runs them. Notes: docs/papers/huang2024.md.
"""

from theorylab.core.claims import Claim, lookup_claim

from .lemma51 import CLAIM as _L51
from .realvit import CLAIM as _RV
from .thm41 import CLAIM as _T41
from .thm42 import CLAIM as _T42
from .thm44 import CLAIM as _T44

#: id → claim, in the paper's order.
CLAIMS: dict[str, Claim] = {c.id: c for c in (_T41, _T42, _L51, _T44, _RV)}

__all__ = ["CLAIMS", "get_claim"]


def get_claim(claim_id: str) -> Claim:
    """The claim with this id (raises ``KeyError`` listing the ids)."""
    return lookup_claim(CLAIMS, claim_id)

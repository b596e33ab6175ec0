"""Claims of Huang, Wen, Chi & Liang (2025) (MAE and CL) with their numerical checks.

`CLAIMS` maps a stable id to a [`Claim`][theorylab.core.claims.Claim], in the paper's order;
``claim.check(quick)`` returns a [`ClaimResult`][theorylab.core.claims.ClaimResult].
``python -m theorylab check --only huang2024`` runs them. Notes: docs/papers/huang2024.md.

Theorem checks compare with a statement of the paper: ``thm4.1``, ``thm4.2``, ``thm4.4`` (the
paper's sentences, each through a declared metric), ``realvit-diversity``. Derivation checks
compare our own laws and reductions with the engines: ``thm4.1-eps``, ``thm4.2-laws``,
``phases-reduction``, ``lemma5.1``, ``lemma5.1-rates``, ``thm4.4-plateau``.
"""

from theorylab.core import claims as cc

from .lemma51 import CLAIM as _L51
from .lemma51_rates import CLAIM as _L51R
from .realvit import CLAIM as _RV
from .reduction import CLAIM as _RED
from .thm41 import CLAIM as _T41
from .thm41eps import CLAIM as _T41E
from .thm42 import CLAIM as _T42
from .thm42_laws import CLAIM as _T42L
from .thm44 import CLAIM as _T44
from .thm44_plateau import CLAIM as _T44P

#: id → claim, in the paper's order.
CLAIMS: dict[str, cc.Claim] = {c.id: c for c in (_T41, _T41E, _T42, _T42L, _RED, _L51, _L51R, _T44,
                                               _T44P, _RV)}

__all__ = ["CLAIMS", "get_claim"]


def get_claim(claim_id: str) -> cc.Claim:
    """The claim with this id (raises ``KeyError`` listing the ids)."""
    return cc.lookup_claim(CLAIMS, claim_id)

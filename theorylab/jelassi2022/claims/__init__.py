"""Claims of Jelassi, Sander & Li (2022) with their numerical checks.

`CLAIMS` maps a stable id to a [`Claim`][theorylab.core.claims.Claim]; ``claim.check(quick)``
returns a [`ClaimResult`][theorylab.core.claims.ClaimResult] (tidy table + verdict).
``python -m theorylab check`` runs them and writes ``docs/results/jelassi2022/<id>.md``,
``.csv`` and ``.png``.
"""

from theorylab.core.claims import Claim, lookup_claim

from .lemma41 import CLAIM as _L41
from .thm31 import CLAIM as _T31
from .thm32 import CLAIM as _T32
from .thm41 import CLAIM as _T41
from .thm42 import CLAIM as _T42
from .thm51 import CLAIM as _T51

#: id → claim, in the paper's order.
CLAIMS: dict[str, Claim] = {c.id: c for c in (_T31, _T32, _L41, _T41, _T42, _T51)}

__all__ = ["CLAIMS", "get_claim"]


def get_claim(claim_id: str) -> Claim:
    """The claim with this id (raises ``KeyError`` listing the ids)."""
    return lookup_claim(CLAIMS, claim_id)

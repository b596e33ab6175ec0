"""Claims of Jelassi, Sander & Li (2022) with their numerical checks.

`CLAIMS` maps a stable id to a [`Claim`][theorylab.core.claims.Claim]; ``claim.check(quick)``
returns a [`ClaimResult`][theorylab.core.claims.ClaimResult] (tidy table + verdict).
``python -m theorylab check`` runs them and writes ``docs/results/jelassi2022/<id>.md``,
``.csv`` and ``.png``. A theorem check and the derivation or engine checks of the same result
share their measurement (sweep points and an in-process memo).
"""

from theorylab.core import claims as cc

from .lemma41 import CLAIM as _L41
from .lemma41_reduction import CLAIM as _L41R
from .lemma41_symmetry import CLAIM as _L41S
from .thm31 import CLAIM as _T31
from .thm31_proof import CLAIM as _T31P
from .thm32 import CLAIM as _T32
from .thm41 import CLAIM as _T41
from .thm41_phases import CLAIM as _T41P
from .thm42 import CLAIM as _T42
from .thm42_noise import CLAIM as _T42N
from .thm51 import CLAIM as _T51

#: id → claim, in the paper's order.
CLAIMS: dict[str, cc.Claim] = {c.id: c for c in (_T31, _T31P, _T32, _L41, _L41R, _L41S, _T41, _T41P,
                                                 _T42, _T42N, _T51)}

__all__ = ["CLAIMS", "get_claim"]


def get_claim(claim_id: str) -> cc.Claim:
    """The claim with this id (raises ``KeyError`` listing the ids)."""
    return cc.lookup_claim(CLAIMS, claim_id)

"""Every shared setting of the huang2024 claims and figures: the MAE setting and its size
families, the P ladders and their runs, the ε ladder, the Phase I boundary grid, the CL
setting and its temperature ladder, and the figures' configs. A figure never takes its
configuration from a claim module; both read this package: [`mae`][theorylab.huang2024.setups.
mae] (the MAE setting, its ladders and runs) and [`cl`][theorylab.huang2024.setups.cl] (the
CL setting and its runs), re-exported here.

**MAE setting** (docs/papers/huang2024.md §9, the notes' reference computation): one cluster,
random areas, z ~ U[0.5, 1.5] (Gauss–Legendre, ``Z_NODES`` nodes; the alternative reading
z ≡ 1 is ``Z_LAWS["one"]``), Bernoulli masks with γ = ``GAMMA``, masked keys kept in the
softmax, loss normalised by 1/P, Q⁰ = 0.

**Step size.** With the 1/P normalisation the row Φ[p, ·] of a query p gets a gradient of
order 1/P (only the masked query p contributes to it), so theorylab steps with η = ``ETA_Q``·P:
the per-query step η_q = η/P is the same at every P, and the notes' phase length
P^{1−κ_c}/η (notes §4.5, written for a per-query rate) reads P^{1−κ_c}/η_q = (P/C)/η_q with
the actual sizes. Which η the paper's "P^{1−κ_c}/η" means is a reading
(``ETA_READINGS``): the per-query η_q (main) or the step η of the 1/P-normalised loss.

**Size families at fixed Δ** (``FAMILIES``): the configs name Δ and κ_c (``data.Delta``,
``data.kappa_c``) and get the admissible global size whose Δ is closest
([`sizes_for_gap`][theorylab.huang2024.data.sizes_for_gap]); on P = n⁴ the local size
C = P^{1/4} = n is exact, and the realised Δ and its rounding are columns of every table.
Δ > 0: Δ = 0.65, κ_c = 1/4 (κ_s = 0.95, the notes' §9 family; rounding ≤ 0.007 at every
rung); Δ < 0: Δ = −1/4, κ_c = 1/4 (κ_s = 1/2: C1 = n², exact at every rung).
"""

from __future__ import annotations

from . import cl, mae
from .cl import *  # noqa: F403  (the CL setting's names)
from .mae import *  # noqa: F403  (the MAE setting's names)

__all__ = [*mae.__all__, *cl.__all__]

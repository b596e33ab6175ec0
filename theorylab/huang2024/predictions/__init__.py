"""Predictions derived in the reconstructed model of Huang et al. (2025), one module per
derived result (docs/papers/huang2024.md; the paper's text was not read, so everything here is
DERIVED in the reconstruction, each result checked as its module says):

- [`rates`][theorylab.huang2024.predictions.rates]: the FP-correlation rates at Q⁰ = 0
  (Lemma 5.1), exactly and to leading order in P, and the two sign boundaries near Δ = 0
  (another local area's rate; the start of Phase I);
- [`reduced`][theorylab.huang2024.predictions.reduced]: the reduced population dynamics of an
  MAE config and its phase readings (Theorems 4.1–4.2);
- [`asymptotics`][theorylab.huang2024.predictions.asymptotics]: the leading orders in P of
  Theorems 4.1–4.2 and how a ladder reads them (local slopes, drift, polylog allowance);
- [`cl_plateau`][theorylab.huang2024.predictions.cl_plateau]: CL's plateau of global
  attention and the temperature τ_c above which it disappears (Theorem 4.4).
"""

from .asymptotics import (
    crossing_attention_exponent,
    crossing_value,
    local_slopes,
    sub_ladders,
)
from .cl_plateau import CLPlateau, cl_critical_temperature, cl_omega, cl_plateau
from .rates import (
    ZMoments,
    count_law,
    has_phase_one,
    initial_rate_matrix,
    initial_rates,
    leading_rates,
    lemma51_ratio,
    local_query_leading,
    other_rate_boundary,
    phase_one_boundary,
    sign_grid,
    z_moments,
)
from .reduced import phase_one_prediction, reduced_gd

__all__ = ["CLPlateau", "ZMoments", "cl_critical_temperature", "cl_omega", "cl_plateau",
           "count_law", "crossing_attention_exponent", "crossing_value", "has_phase_one",
           "initial_rate_matrix", "initial_rates", "leading_rates", "lemma51_ratio",
           "local_query_leading", "local_slopes", "other_rate_boundary", "phase_one_boundary",
           "phase_one_prediction", "reduced_gd", "sign_grid", "sub_ladders", "z_moments"]

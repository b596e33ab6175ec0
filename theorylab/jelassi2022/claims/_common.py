"""Helpers shared by the first paper's claim checks: the variants they declare and the
seed-stratified bootstrap of a power-law exponent."""

from __future__ import annotations

import math

import numpy as np

from theorylab.core import claims as cc

from ..setups import ADMISSIBLE_Q, REF_Q, TEMPERATURES, V_STARTS

__all__ = ["TEMPERATURE", "TEMPERATURE_ADMISSIBLE", "V_START", "exponent_interval", "N_BOOT",
           "LEVEL", "GD_VARIANTS"]

#: bootstrap resamples of every exponent interval, and their level (the generator is seeded, so
#: the same tables give the same interval).
N_BOOT = 2000
LEVEL = 0.95

TEMPERATURE = cc.Variant(
    "temperature",
    cc.Reading("1", TEMPERATURES["1"], "paper notes"),
    (cc.Reading("sqrt(D)", TEMPERATURES["sqrt(D)"], "paper notes"),
     cc.Reading("sqrt(d)", TEMPERATURES["sqrt(d)"], "printed in the paper")),
    "eq. (T) prints the softmax of A/√d, Simplification 3.1 sets d = D for the positional part, "
    "and the notes' §9 reference setting (a third-party script) has no temperature. With the "
    "diagonal of A frozen at ln ln d the temperature changes the diagonal's logit a/τ (1.53, "
    "0.48, 0.15 at d = 100), not only A's learning rate (which each reading scales by τ²)")
#: the temperature readings of the checks whose reference runs move to an admissible q under a
#: reading that puts the reference point beyond its association boundary (τ = √d).
TEMPERATURE_ADMISSIBLE = cc.Variant(
    TEMPERATURE.name, TEMPERATURE.main,
    (TEMPERATURE.alternatives[0],
     cc.Reading("sqrt(d)", TEMPERATURES["sqrt(d)"], "printed in the paper",
                setting=f"reference runs at q = {ADMISSIBLE_Q['sqrt(d)']:.2f} (D = 10, d = 100), "
                f"below this reading's boundary q*(10) ≈ 0.40; the run at q = {REF_Q:.2f} "
                "(beyond it) is reported")),
    TEMPERATURE.reason)
V_START = cc.Variant(
    "v_start",
    cc.Reading("random", V_STARTS["random"], "printed in the paper"),
    (cc.Reading("aligned", V_STARTS["aligned"], "project choice"),),
    "the abstract says gradient descent runs 'from random initialization'; the scale of v⁰ "
    "and whether it is aligned with w* are in the unread Parametrization paragraph. The aligned "
    "start makes the reduction to (α, γ, ρ) exact from step 0 and removes the sign problem and "
    "the d-dependence of phase I")
#: the variants of the checks that run GD from a start of v (the temperature, judged at an
#: admissible q, and the start).
GD_VARIANTS = (TEMPERATURE_ADMISSIBLE, V_START)


def exponent_interval(x, y, n_boot: int = N_BOOT, level: float = LEVEL,
                      seed: int = 0) -> tuple[float, float, float]:
    """(slope, lower, upper) of mean(log y) per level of x against log x.

    The point estimate is the least-squares slope of the per-level means of log y against
    log x; the interval is a percentile bootstrap that resamples the rows (seeds) within each
    level of x with replacement. Rows with a non-finite or non-positive y are dropped; NaN
    with fewer than two levels."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y) & (y > 0) & (x > 0)
    x, ly = x[keep], np.log(y[keep])
    levels = np.unique(x)
    if levels.size < 2:
        return math.nan, math.nan, math.nan
    lx = np.log(levels)
    cx = lx - lx.mean()
    den = float(cx @ cx)
    per = [ly[x == v] for v in levels]
    m = np.array([p.mean() for p in per])
    slope = float(cx @ (m - m.mean()) / den)
    if min(p.size for p in per) < 2:
        return slope, math.nan, math.nan
    rng = np.random.default_rng(seed)
    boots = np.empty((n_boot, levels.size))
    for j, p in enumerate(per):
        idx = rng.integers(0, p.size, (n_boot, p.size))
        boots[:, j] = p[idx].mean(axis=1)
    s = (boots - boots.mean(axis=1, keepdims=True)) @ cx / den
    a = (1 - level) / 2
    return slope, float(np.quantile(s, a)), float(np.quantile(s, 1 - a))

"""The measurement that the Theorem 4.2 checks share: GD on the empirical risk (E) from a random
start on a (d, N) grid, each run long enough for its start to escape and its noise directions
to settle, against the population dynamics at the same horizon.

**Horizon** (grows with d; DERIVED). A run of dimension d gets
T(d) = t_esc(d) + ``T_AFTER`` + ``K_RELAX``·d/(η·(κ²)·E[L₂]) steps: t_esc(d) the derived
escape bound of its random start, π/(hb) + ½ ln(…) at a norm ``V0_NORM_E`` (phase I cannot
last longer, [`escape_time`][theorylab.jelassi2022.predictions.random_start.escape_time]);
``T_AFTER`` the steps phases II and III take in the population run; and ``K_RELAX`` relaxation
times of the noise directions of v, whose curvature is σ²κ²E[L₂] = κ²E[L₂]/d
([`ReducedEngine.noise_moments`][theorylab.jelassi2022.engines.ReducedEngine.noise_moments]).

**Derived noise law** (sandwich formula of a converged fit). The fitted v has a part v_⊥ in the
d − 1 noise directions; each coordinate is the minimiser of a quadratic of curvature σ²κ²E[L₂]
driven by the empirical gradient, whose per-sample variance is σ²κ²V, V = E[ℓ'²S₂]. So
‖v_⊥‖² ≈ (d − 1)·V/(N κ² σ² E[L₂]²) and the noise-to-signal ratio of a patch's projection,
r² = σ²‖v_⊥‖²/α², is

    r² ≈ c·(d − 1)/N,     c = V / (κ² E[L₂]² α²),

at the population state (valid for N ≫ d). A fixed r therefore needs N ∝ d.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..data import bayes_error
from ..engines._reduced import ReducedEngine, reduced_start
from ..predictions.random_start import escape_time
from ..setups import REF_DIAG, reference_config, reference_q, with_readings

__all__ = ["empirical_point", "population_point", "horizon", "LR", "V0_NORM_E", "T_AFTER",
           "K_RELAX", "N_TEST"]

LR = 1.0
#: ‖v⁰‖ of the random start of (E): ten times the population checks' 0.01, so that phase I
#: (∝ 1/‖v⁰‖) costs a few hundred steps of N·D·d each.
V0_NORM_E = 0.1
#: steps of phases II–III after the escape (the population run at lr 1 has patch association
#: and its final error from step ~600 after its escape).
T_AFTER = 800
#: relaxation times of the noise directions of v added to the horizon.
K_RELAX = 5.0
N_TEST = 5000


def _cfg(d: int, temperature: str, v_start: str, **train):
    cfg = reference_config(lr_v=LR, **train).replace(
        data={"d": int(d), "q": reference_q(temperature)}, model={"diag": REF_DIAG})
    start = ({"v0_scale": V0_NORM_E / math.sqrt(d)} if v_start == "random"
             else {"alpha0": V0_NORM_E})
    return with_readings(cfg, temperature, v_start).replace(train=start).resolved()


def horizon(d: int, temperature: str, v_start: str, seeds) -> tuple[int, dict]:
    """T(d) of the module (steps) and its parts."""
    cfg = _cfg(d, temperature, v_start, method="montecarlo" if v_start == "random"
               else "exchangeable")
    a0, b0 = reduced_start(cfg, seeds)
    esc = escape_time(cfg, a0, b0, 10 * np.hypot(a0, b0))
    t_esc = float(np.max(np.where(np.isfinite(esc["t_blowup"]), esc["t_blowup"],
                                  esc["t_threshold"])))
    pop = population_point(d, temperature, int(t_esc + T_AFTER))
    L2 = float(pop.L2.iloc[0])
    relax = K_RELAX * d / (LR * cfg.value_scale ** 2 * L2) if L2 > 0 else math.inf
    T = int(math.ceil(t_esc + T_AFTER + relax))
    return T, {"t_esc": t_esc, "relax": relax, "L2": L2}


def population_point(d: int, temperature: str, steps: int) -> pd.DataFrame:
    """The population run (reduced engine, aligned start ‖v⁰‖ = V0_NORM_E, lr LR) at `steps`:
    its fair-coin error, loss, state and the noise moments E[L₂], V and c of the module."""
    cfg = _cfg(d, temperature, "aligned", method="exchangeable")
    eng = ReducedEngine(cfg, [cfg.train.alpha0], [0.0])
    path = eng.run(int(steps))
    last = path.iloc[-1]
    st = {k: np.array([float(last[k])]) for k in ("alpha", "beta", "gamma", "rho")}
    nm = eng.noise_moments(st)
    L2, V = float(nm["L2"][0]), float(nm["V"][0])
    c = V / (cfg.value_scale ** 2 * L2 ** 2 * float(last.alpha) ** 2)
    err = path.error_fair.to_numpy()
    moving = np.abs(err - err[-1]) > 1e-12
    return pd.DataFrame([{"d": d, "steps": int(steps), "pop_error": float(err[-1]),
                          "plateau_error": float(err[moving][-1]) if moving.any() else err[-1],
                          "pop_loss": float(last.loss), "alpha": float(last.alpha),
                          "gamma_minus_rho": float(last.gamma - last.rho), "L2": L2, "V": V,
                          "c": c, "bayes_error": bayes_error(cfg.data), "tau": cfg.temperature,
                          "q": float(cfg.data.q),
                          "pa": bool(last.gamma - last.rho > 0)}])


def empirical_point(d: int, N: int, seeds: list[int], steps: int, temperature: str,
                    v_start: str) -> pd.DataFrame:
    """The empirical runs at (d, N) for `seeds`, in one batched run: one row per seed at the
    last step, with r² = σ²‖v_⊥‖²/α² = tan²∠(v, w*)/d."""
    from ..sweep import run_sweep

    cfg = _cfg(d, temperature, v_start, engine="empirical", method="auto", steps=int(steps),
               n_train=int(N), n_test=N_TEST, n_records=2)
    tr = run_sweep(cfg, seeds=seeds, progress=False)
    last = tr[tr.step == steps]
    cos = last.cos_v_wstar.clip(-1, 1).to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        r2 = (1 - cos ** 2) / cos ** 2 / d
    return pd.DataFrame({
        "d": d, "N": N, "seed": last.seed.to_numpy(), "steps": steps,
        "test_error": last.error.to_numpy(), "test_error_se": last.error_se.to_numpy(),
        "train_loss": last.train_loss.to_numpy(), "alpha": last.alpha.to_numpy(),
        "beta": last.beta.to_numpy(), "cos_v_wstar": cos, "r2": r2,
        "gamma": last.gamma.to_numpy(), "rho": last.rho.to_numpy(),
        "pa_gap": last.pa_gap.to_numpy(),
        "patch_association": last.patch_association.astype(bool).to_numpy()})

"""The measurement that the Lemma 4.1–4.2 alignment checks share: does the part of v orthogonal
to w* shrink along population GD, in the d-dimensional model, and at the rate of the reduction?

Start state: the aligned reference path at lr ``LR`` (exact engine) at t_II (γ − ρ = 1: patch
association under way; 2·t_I under a reading whose reference point does not associate), with
an orthogonal part β⁰ = ``BETA0`` added in a random
direction e ⊥ w* (seeded). From there, per seed:

- **measured**: population GD of the full model (v ∈ ℝ^d, A ∈ ℝ^{D×D}) with the Monte Carlo
  engine (``M`` fresh draws of (y, c, noise) per step: unbiased gradients), ``STEPS`` steps;
  β = ‖v − ⟨v, w*⟩w*‖ and α = ⟨v, w*⟩ at every step, and the least-squares slope of
  log(β/|α|) against the step;
- **derived**: the same from the reduced engine (α, β, γ, ρ), exact in the data and to O(σ²β²)
  in the noise ([`ReducedEngine`][theorylab.jelassi2022.engines.ReducedEngine]);
- **identity** (no seed): at states of the aligned reference path the reduced engine at β = 0
  equals the exchangeable engine (loss and gradients, to rounding).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data import make_wstar
from ..engines._reduced import ReducedEngine
from ..observables import symmetric_A
from ..phases import exact_path, read_phases
from ..predictions.phase_one import _exchangeable
from ..setups import reference_config, with_readings
from ..trainer import run_experiment

__all__ = ["alignment_point", "identity_point", "LR", "BETA0", "SEEDS", "SETTINGS",
           "PAGE_SETTINGS"]

LR = 1.0
BETA0 = 0.1
SEEDS = (0, 1, 2, 3, 4)
#: (Monte Carlo draws per step, steps, seeds) of a full and of a quick check.
SETTINGS = {False: (50_000, 60, SEEDS), True: (5_000, 20, SEEDS[:3])}
#: the settings a page states (those of a full check).
PAGE_SETTINGS = {"start": "the aligned reference path (v⁰ = 0.01·w*) at t_II, plus β⁰ = "
                 f"{BETA0:g} along a random direction ⊥ w*", "lr": LR,
                 "Monte Carlo draws per step": SETTINGS[False][0],
                 "steps": SETTINGS[False][1], "seeds": len(SEEDS)}


def _start(temperature: str):
    """The config, the state the alignment runs start from, and the aligned reference path."""
    cfg = with_readings(reference_config(lr_v=LR), temperature, "aligned").resolved()
    path = exact_path(cfg, 3000)
    rd = read_phases(path, cfg)
    at = rd["t_II"] if np.isfinite(rd["t_II"]) else 2 * rd["t_I"]
    st = path.iloc[int(at) if np.isfinite(at) else len(path) - 1]
    return cfg, st, path


def alignment_point(temperature: str, seed: int, quick: bool) -> pd.DataFrame:
    """One seed: the measured and the derived slope of log(β/|α|) (see the module)."""
    M, steps, _ = SETTINGS[bool(quick)]
    cfg, st, _ = _start(temperature)
    w = make_wstar(cfg.data)
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 41]))
    e = rng.standard_normal(w.size)
    e -= (e @ w) * w
    e /= np.linalg.norm(e)
    part = cfg.data.make_partition()
    A = symmetric_A(cfg.data.D, part, cfg.diag, float(st.gamma), float(st.rho))
    v = float(st.alpha) * w + BETA0 * e
    mc = cfg.replace(train={"init_v": "gaussian", "method": "montecarlo", "mc_samples": M,
                            "steps": steps, "record": "all", "seed": int(seed)})
    tr = run_experiment(mc, initial={"A": A, "v": v}, progress=False).trajectory
    red = ReducedEngine(cfg, [float(st.alpha)], [BETA0])
    red.params["gamma"][:] = float(st.gamma)
    red.params["rho"][:] = float(st.rho)
    rp = red.run(steps)

    def slope(t):
        return float(np.polyfit(t.step, np.log(t.beta.abs() / t.alpha.abs()), 1)[0])

    return pd.DataFrame([{
        "seed": seed, "tau": cfg.temperature, "start_step": float(st.step),
        "alpha_start": float(st.alpha), "gamma_start": float(st.gamma),
        "rho_start": float(st.rho), "beta0": BETA0, "steps": steps, "mc_samples": M,
        "beta_end": float(tr.beta.iloc[-1]), "alpha_end": float(tr.alpha.iloc[-1]),
        "ratio_start": BETA0 / abs(float(st.alpha)),
        "ratio_end": float(tr.beta.iloc[-1] / abs(tr.alpha.iloc[-1])),
        "slope": slope(tr), "slope_derived": slope(rp),
        "beta_end_derived": float(rp.beta.iloc[-1])}])


def identity_point(temperature: str) -> pd.DataFrame:
    """At 8 states of the aligned reference path: |reduced (β = 0) − exchangeable| of the loss
    and of the gradients in α, γ, ρ (the reduction's β = 0 case is the exact engine)."""
    cfg, _, path = _start(temperature)
    ex = _exchangeable(cfg)
    idx = np.unique(np.linspace(0, len(path) - 1, 8).astype(int))
    st = path.iloc[idx]
    red = ReducedEngine(cfg, st.alpha.to_numpy(), np.zeros(len(st)))
    p = {"alpha": st.alpha.to_numpy(), "beta": np.zeros(len(st)),
         "gamma": st.gamma.to_numpy(), "rho": st.rho.to_numpy()}
    loss, _, _, g = red.evaluate(p)
    rows = []
    for i, r in enumerate(st.itertuples()):
        ev = ex.evaluate({"alpha": r.alpha, "gamma": r.gamma, "rho": r.rho}, 0, need_grad=True,
                         record=False)
        rows.append({"step": r.step, "loss_diff": abs(ev.loss - loss[i]),
                     **{f"grad_{k}_diff": abs(ev.grads[k] - g[k][i]) / (1 + abs(ev.grads[k]))
                        for k in ("alpha", "gamma", "rho")}})
    return pd.DataFrame(rows)

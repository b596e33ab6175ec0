"""Theorem 4.1 (RECONSTRUCTED, notes §4.4–4.5): GD on the population risk (P) goes through
three phases and ends with patch association and a small error.

Errors are compared like with like: the exact engines give the error with ties F = 0 counted as
errors (``error``) and with ties broken by a fair coin (``error_fair`` = error − tie_mass/2);
the fair-coin error is the one compared with the Bayes error, because the Bayes rule (and the
noise part of v in an empirical run) breaks ties at random.

Phase times are defined operationally on a recorded trajectory (log-spaced steps), see
[`phase_times`][]:

- end of phase I, ``t_I``: first recorded step with γ − ρ ≥ ``MOVE_TOL`` = 1e−3 (A has left its
  start; before it, only α moves). The threshold is far above what one GD step makes of a
  symmetric start (γ − ρ ≈ 3.5e−10 at step 1 of the reference run);
- end of phase II, ``t_II``: first recorded step with γ − ρ ≥ ½·(γ − ρ) at the last step;
- end of phase III, ``t_III``: first recorded step ≥ t_II from which the fair-coin error stays
  within ``ERR_TOL`` = 0.005 of the fair-coin error of hard patch association with the same σ
  ([`pa_limit_error`][]); NaN when never.

Patch association is read with a margin (``train.pa_margin`` = 1e−3 in logits A/τ): a rounding-
level asymmetry passes the literal Definition 2.2 but not the margin. The check asks that the
literal ordering is never violated at t ≥ 1 (min ``pa_gap`` > 0) and that patch association
with the margin, once reached, holds to the end.

The phase times along d and D are fitted and reported, not judged: the reconstructed statement
says T = poly(d), which every finite number of steps on a finite grid satisfies, so no
measurement here can contradict it (a decreasing phase time is polynomial too).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from theorylab.core.claims import Claim, ClaimResult, Threshold, threshold_values
from theorylab.core.claims.verdict import Verdict, ladder_threshold, loglog_fit
from theorylab.core.sweep import run_point, run_points

from ..config import PAPER_NAME
from ..data import bayes_error
from ..phases import ERR_TOL, MOVE_TOL, pa_limit_error, phase_times
from ..setups import REF_SETS, line_config, reference_config
from ..trainer import run_experiment

__all__ = ["CLAIM", "phase_times", "pa_limit_error", "MOVE_TOL", "ERR_TOL", "ALPHA_GROWTH",
           "THRESHOLDS", "judge", "verdict_phases", "scaling_reading"]

#: phase I is the phase in which α grows: by at least an order of magnitude.
ALPHA_GROWTH = 10.0

THRESHOLDS = (
    Threshold("ERR_TOL", ERR_TOL, "project choice",
              "half a percentage point of classification error, the resolution at which an "
              "error is called at its target (exact errors round at 1e−16)",
              role="final fair-coin error within it of the Bayes error (also ends phase III)"),
    Threshold("ALPHA_GROWTH", ALPHA_GROWTH, "project choice",
              "'α grows' read as an order of magnitude", role="α(t_I)/α(0) at least it"),
    Threshold("MOVE_TOL", MOVE_TOL, "project choice",
              "A has left its start: 1e−3 in logits, far above one GD step's γ − ρ from a "
              "symmetric start (≈ 3.5e−10)", role="ends phase I (t_I)", judged=False),
)


def verdict_phases(ref: pd.Series, err_tol: float = ERR_TOL,
                   alpha_growth: float = ALPHA_GROWTH) -> Verdict:
    """Phase part of the verdict, from the reference run's summary row (t_I, t_II, t_III,
    pa_status, min_pa_gap, alpha_growth_phase_I, loss_end_I, final_loss, final_error_fair,
    bayes_error).

    ``inconclusive`` (premise: inside the horizon): a phase time is NaN (the run ran out of
    steps: censored) or the error is NaN. ``disagrees``: phases out of order, the literal
    patch-association order violated at some t ≥ 1, patch association (with the margin) not
    held at the end, α not growing `alpha_growth`× in phase I, the loss not falling after
    phase I, or the final fair-coin error farther than `err_tol` from the Bayes error.
    ``agrees`` otherwise."""
    need = ["t_I", "t_II", "t_III", "final_error_fair", "bayes_error"]
    nan = [k for k in need if not np.isfinite(ref[k])]
    if nan:
        return Verdict("inconclusive", ("premise failed: inside the horizon: " + ", ".join(nan)
                                        + " not reached or NaN (censored by the number of "
                                        "steps)",))
    bad = []
    if not ref.t_I < ref.t_II <= ref.t_III:
        bad.append(f"phases out of order (t_I={ref.t_I:g}, t_II={ref.t_II:g}, "
                   f"t_III={ref.t_III:g})")
    if not ref.min_pa_gap > 0:
        bad.append(f"a row ranks another set's patch at least as high as its own at some t ≥ 1 "
                   f"(min pa_gap {ref.min_pa_gap:.2e})")
    if ref.pa_status == "censored-above":
        bad.append("patch association (margin) does not hold at the end")
    if not ref.alpha_growth_phase_I >= alpha_growth:
        bad.append(f"α grows only ×{ref.alpha_growth_phase_I:.2f} in phase I")
    if not ref.final_loss < ref.loss_end_I:
        bad.append("the loss does not fall after phase I")
    gap = ref.final_error_fair - ref.bayes_error
    if not abs(gap) <= err_tol:
        bad.append(f"final fair-coin error {ref.final_error_fair:.4f} is {gap:+.4f} from the "
                   f"Bayes error {ref.bayes_error:.4f} (tolerance {err_tol:g})")
    if bad:
        return Verdict("disagrees", tuple("phases: " + b for b in bad))
    return Verdict("agrees", (
        f"phases: I < II ≤ III ({ref.t_I:g} < {ref.t_II:g} ≤ {ref.t_III:g}), patch association "
        f"(margin) from step {ref.t_PA:g} to the end, final fair-coin error "
        f"{ref.final_error_fair:.4f} within {abs(gap):.1e} of the Bayes error",))


def scaling_reading(fits: pd.DataFrame) -> str:
    """The fitted phase-time exponents (reported, not judged: see the module docstring)."""
    ok = fits[np.isfinite(fits.exponent)] if len(fits) else fits
    if len(ok) == 0:
        return "scaling: no phase time has ≥ 4 uncensored grid points"
    return "scaling (reported, not judged): " + "; ".join(
        f"{r.phase} ∝ {r.axis}^{r.exponent:.2f} (r² {r.r2:.2f}, n={r.n})"
        for r in ok.itertuples())


def _run(cfg):
    return _readings(cfg, run_experiment(cfg, progress=False).trajectory)


def _readings(cfg, tr: pd.DataFrame):
    """The phase readings of the run of ``cfg`` with trajectory ``tr``: (tr, readings)."""
    pa = pa_limit_error(cfg)
    out = phase_times(tr, pa)
    after = tr[tr.step >= 1]
    t_pa, status = ladder_threshold(after.step, after.patch_association)
    out.update({
        "pa_limit_error_fair": pa,
        "final_loss": float(tr.loss.iloc[-1]), "final_error": float(tr.error.iloc[-1]),
        "final_tie_mass": float(tr.tie_mass.iloc[-1]),
        "final_error_fair": float(tr.error_fair.iloc[-1]),
        "final_alpha": float(tr.alpha.iloc[-1]), "final_gamma": float(tr.gamma.iloc[-1]),
        "final_rho": float(tr.rho.iloc[-1]),
        "t_PA": t_pa, "pa_status": status, "min_pa_gap": float(after.pa_gap.min()),
    })
    return tr, out


def _grid_reading(grid: pd.DataFrame) -> str:
    """Which grid runs end without patch association (margin), and whether q separates them."""
    lost = grid[grid.pa_status != "ok"]
    if not len(lost):
        return f"All {len(grid)} grid runs end with patch association (margin)."
    held = grid[grid.pa_status == "ok"]
    runs = ", ".join(f"{r.axis} = {r.d if r.axis == 'd' else r.D:g} (q = {r.q:.2f}, final "
                     f"γ − ρ = {r.final_gamma - r.final_rho:.3f})" for r in lost.itertuples())
    sep = (f"every one has a larger q than every run that keeps it (smallest q without "
           f"{lost.q.min():.2f}, largest q with {held.q.max():.2f}): Assumption 2 has q ≪ 1"
           if len(held) and lost.q.min() > held.q.max() else
           "q does not separate them from the runs that keep it")
    return (f"{len(lost)} of {len(grid)} grid runs end without patch association (margin): "
            f"{runs}; {sep}. Their missing phase times are censored in the fits.")


def _fits(grid: pd.DataFrame) -> pd.DataFrame:
    fits = []
    for axis in ("d", "D"):
        g = grid[grid.axis == axis]
        if len(g) == 0:
            continue
        for ph in ("t_I", "t_II", "t_III"):
            f = loglog_fit(g[axis], g[ph])
            fits.append({"axis": axis, "phase": ph, "n": f["n"], "exponent": f["slope"],
                         "r2": f["r2"], "censored": f["censored"]})
    return pd.DataFrame(fits, columns=["axis", "phase", "n", "exponent", "r2", "censored"])


def run(quick: bool) -> ClaimResult:
    cfg = reference_config(steps=20_000, n_records=300)
    tr, ref = _run(cfg)
    bayes = bayes_error(cfg.data)
    pa_fair = ref["pa_limit_error_fair"]
    pa_err, pa_ties = pa_limit_error(cfg, fair=False), 2 * (pa_limit_error(cfg, fair=False)
                                                              - pa_fair)
    upto_I = tr[tr.step < ref["t_I"]] if np.isfinite(ref["t_I"]) else tr
    alpha_growth = float(upto_I.alpha.iloc[-1] / tr.alpha.iloc[0])
    loss_I = float(upto_I.loss.iloc[-1])
    err_I = float(upto_I.error_fair.iloc[-1])

    # scaling grid: d at D = 10 (q = ln d / D, diag = ln ln d), D at d = 100
    steps = 12_000 if quick else 40_000
    d_list = [30, 100, 300, 1000] if quick else [30, 100, 300, 1000, 3000]
    D_list = [] if quick else [6, 8, 10, 14, 20]
    cells = []  # (row of the grid table, config)
    for d in d_list:
        c = reference_config(steps=steps, n_records=300).replace(
            data={"d": d, "q": math.log(d) / 10})
        cells.append(({"axis": "d", "D": 10, "d": d, "q": math.log(d) / 10}, c))
    for D in D_list:
        q = min(math.log(100) / D, 1.0)
        c = line_config(D, 2, 100, q, steps=steps, n_records=300)
        if D == 10:
            c = c.replace(data={"partition": REF_SETS})
        cells.append(({"axis": "D", "D": D, "d": 100, "q": q}, c))
    # one sweep point per grid run (theorylab.core.sweep): in this process by default; on a
    # Dask cluster and/or from a shared store with python -m theorylab.check --scheduler/--cache
    trajs = run_points([run_point(PAPER_NAME, c.to_dict(), "trajectory", row)
                        for row, c in cells])
    grid = pd.DataFrame([{**row, **_readings(c, tr)[1]} for (row, c), tr in zip(cells, trajs)])
    fits = _fits(grid)

    table = pd.DataFrame([{
        "t_I": ref["t_I"], "t_II": ref["t_II"], "t_III": ref["t_III"], "t_PA": ref["t_PA"],
        "pa_status": ref["pa_status"], "min_pa_gap": ref["min_pa_gap"],
        "alpha_growth_phase_I": alpha_growth, "loss_end_I": loss_I,
        "error_fair_end_I": err_I, "final_loss": ref["final_loss"],
        "final_error": ref["final_error"], "final_tie_mass": ref["final_tie_mass"],
        "final_error_fair": ref["final_error_fair"], "pa_limit_error": pa_err,
        "pa_limit_tie_mass": pa_ties, "pa_limit_error_fair": pa_fair, "bayes_error": bayes,
    }])
    v = judge({"table": table, "fits": fits})
    gap = ref["final_error"] - bayes
    half = ref["final_tie_mass"] / 2
    identity = gap - half
    first = tr[tr.step >= 1].iloc[0]
    glm_fair = float(tr.error_fair.iloc[0])
    reading = [
        f"Reference run (notes §9 setting, {int(tr.step.iloc[-1])} exact GD steps): phase I "
        f"ends at step {ref['t_I']:.0f} (α grows ×{alpha_growth:.0f} while |γ − ρ| < "
        f"{MOVE_TOL:g}; loss {loss_I:.6f}); phase II ends at {ref['t_II']:.0f}; the fair-coin "
        f"error reaches the patch-association error (end of phase III) at {ref['t_III']:.0f}.",
        f"During phase I the fair-coin error stays at the GLM's {glm_fair:.4f} (step 0) → "
        f"{err_I:.4f} (end of phase I): with train.tie_tol = {cfg.train.tie_tol:g} the ties of "
        f"the GLM are not decided by the tiny asymmetry γ − ρ = {first.gamma - first.rho:.1e} "
        f"of step {int(first.step)}.",
        f"Patch association: the literal Definition 2.2 holds at every recorded step t ≥ 1 "
        f"(smallest logit margin {ref['min_pa_gap']:.1e}, above 0), but that margin is a "
        f"rounding-level asymmetry at first; with the margin {cfg.train.pa_margin:g} it holds "
        f"from step {ref['t_PA']:.0f} to the end ({ref['pa_status']}).",
        f"Final loss {ref['final_loss']:.5f}; final error {ref['final_error']:.6f} with ties as "
        f"errors and {ref['final_error_fair']:.6f} with ties as a fair coin (tie mass "
        f"{ref['final_tie_mass']:.6f}); Bayes error {bayes:.6f}. The gap of the ties-as-errors "
        f"error to the Bayes error, {gap:.8f}, equals half the tie mass, {half:.8f}, to "
        f"{abs(identity):.1e}: " + (
            "hard patch association with this σ is Bayes-optimal once ties are a coin flip; "
            "the whole gap is the tie rule." if abs(identity) < 1e-9 else
            "the gap is NOT explained by the ties alone."),
        _grid_reading(grid),
        "Scaling of the phase times (log-log fits on ≥ 4 uncensored points): " + ("; ".join(
            f"{r.phase} vs {r.axis}: " + (f"{r.exponent:.2f} (r²={r.r2:.2f}" if np.isfinite(
                r.exponent) else f"no fit ({r.n} points") + f", {r.censored} censored)"
            for r in fits.itertuples()) or "none") + ". Along d, q = ln(d)/D and the frozen "
        "diagonal ln ln d change too (the S7 recipe), so d enters only through them: with "
        "temperature 1 and v ∥ w*, the exact population dynamics do not depend on d otherwise.",
    ]
    headline = {"t_I": ref["t_I"], "t_II": ref["t_II"], "t_III": ref["t_III"],
                "t_PA": ref["t_PA"], "final_error_fair": ref["final_error_fair"],
                "final_error_ties_as_errors": ref["final_error"], "bayes": bayes,
                "half_tie_identity": identity}

    def figure(fig):
        axs = fig.subplots(1, 3)
        s = tr.step.clip(lower=1)
        axs[0].plot(s, tr.alpha, label="alpha")
        axs[0].plot(s, tr.gamma, label="gamma")
        axs[0].plot(s, tr.rho, label="rho")
        axs[1].plot(s, tr.loss, label="loss")
        axs[1].plot(s, tr.error, label="error (ties as errors)")
        axs[1].plot(s, tr.error_fair, label="error (ties as a fair coin)")
        axs[1].axhline(bayes, color="k", ls=":", label="Bayes")
        for ax in axs[:2]:
            ax.set_xscale("log")
            for t in (ref["t_I"], ref["t_II"], ref["t_III"]):
                if np.isfinite(t):
                    ax.axvline(t, color="grey", ls="--", lw=0.8)
            ax.legend(fontsize=7)
            ax.set_xlabel("GD step")
        for axis, mk in (("d", "o"), ("D", "s")):
            g = grid[grid.axis == axis]
            for ph in ("t_I", "t_II", "t_III"):
                if len(g):
                    axs[2].plot(g[axis], g[ph], mk + "-", label=f"{ph} vs {axis}")
        axs[2].set_xscale("log")
        axs[2].set_yscale("log")
        axs[2].set_xlabel("d or D")
        axs[2].legend(fontsize=6)

    return ClaimResult("thm4.1", table, v, headline, reading,
                       extra={"grid": grid, "fits": fits, "trajectory": tr}, figure=figure)


def judge(tables: dict[str, pd.DataFrame], values=None) -> Verdict:
    """Phases (first row of the main table) on the written tables with the declared
    thresholds (or `values`); the scaling fits (``fits``) are reported with the verdict."""
    th = threshold_values(THRESHOLDS, values)
    v = verdict_phases(tables["table"].iloc[0], th["ERR_TOL"], th["ALPHA_GROWTH"])
    return Verdict(v.verdict, v.reasons + (scaling_reading(tables["fits"]),))


CLAIM = Claim(
    id="thm4.1",
    paper=PAPER_NAME,
    figsize=(10.0, 3.5),
    title="Theorem 4.1 (idealized: GD on the population risk)",
    label="RECONSTRUCTED",
    source="notes §4.4–4.5: a seminar slide (S2) and the README (S3) describe three phases; "
    "the statement itself was not read",
    statement="After T = poly(d) steps of GD on (P), F performs patch association, the "
    "population loss is small and the model generalizes; the dynamics pass through phase I "
    "(α grows, A static), II (γ − ρ grows) and III (loss falls, error near its optimum).",
    measured="Exact GD (exchangeable engine): α, γ, ρ, loss, error, patch association at every "
    "recorded step; operational phase times over a (d, D) grid with log-log fits.",
    predicted="Phases in order I < II ≤ III; the literal patch-association order never "
    "violated at t ≥ 1 and patch association with a margin held once reached; final fair-coin "
    "error within 0.005 of the Bayes error; phase times along d and D fitted and reported.",
    run=run,
    judge=judge,
    thresholds=THRESHOLDS,
    premises=("inside the horizon: the reference run reaches t_I, t_II and t_III within its "
              "20000 steps",),
    reconstructed="the three-phase picture and its order (a slide and the README): if the "
    "theorem defines the phases otherwise, t_I, t_II, t_III and the 'out of order' branch "
    "change; the patch-association and Bayes-error parts do not depend on it.",
    untested="T = poly(d): any finite step count on a finite grid is polynomial, so the "
    "phase-time fits along d and D are reported, not judged; the constants of the theorem.",
)

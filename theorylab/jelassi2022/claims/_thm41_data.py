"""The measurements that the two Theorem 4.1 checks share (the theorem check ``thm4.1`` and the
derivation check ``thm4.1-phases``), each a sweep point (cached by the sweep store), and an
in-process memo so that the second check of a process reuses the first one's tables.

- **reference runs**: the notes' §9 setting from the start of v of the reading
  (``REF_SEEDS`` random starts, or the aligned one), reduced population GD
  ([`ReducedEngine`][theorylab.jelassi2022.engines.ReducedEngine]) until every run is past
  its derived escape by ``AFTER_STEPS``; phase times read to the step;
- **escape ladder** in d (``ESCAPE_D``, ``ESCAPE_SEEDS``, lr ``ESCAPE_LR``): the threshold
  time t_I of each start against its derived value;
- **D ladder** (``BOUNDARY_D``, lr ``boundary_lr(D)``, aligned start, exact exchangeable
  engine): t_II at q = ``Q_TII`` against the derived t_blowup + slow flow, and the association
  boundary q*(D) by bisection. Phases II and III do not depend on the start of v beyond
  O(σ²β²) (the β terms of the reduced risk; at the end of a random start's phase I,
  σβ/α < 10⁻³ at d = 100), so the D ladder runs from the aligned start under both readings of
  the start.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
from scipy import optimize, stats

from theorylab.core import claims as cc
from theorylab.core.sweep import call_point, run_points

from ..data import bayes_error
from ..engines._reduced import ReducedEngine, reduced_start
from ..phases import ALPHA_GROWTH, GAP_II, exact_path, pa_limit_error, read_phases
from ..predictions.phase_two import plateau, slow_flow
from ..predictions.random_start import escape_time
from ..setups import (
    BOUNDARY_D,
    ESCAPE_D,
    ESCAPE_LR,
    ESCAPE_SEEDS,
    REF_Q,
    REF_SEEDS,
    boundary_lr,
    line_config,
    reference_config,
    reference_q,
    with_readings,
)

__all__ = ["measure", "reference_table", "reference_point", "escape_point", "boundary_point",
           "paired_start", "expected_escape_exponent", "page_settings",
           "dladder_point",
           "AFTER_STEPS", "BOUNDARY_HORIZON", "DECIDE_GAP", "BRACKET_WIDTH"]

#: the q of the D ladder's t_II: on the associating side of every temperature reading (the
#: boundary lies at q ≈ 0.38–0.45 for τ = √d, above 0.55 for τ = 1).
Q_TII = 0.3
#: the quick check's reduced settings (a smoke run of the pipeline): reference runs at lr 1 (10×
#: shorter), one start; escape ladder d = 10, 32 with 2 starts; D ladder 8, 12, two boundary
#: runs each with horizons of 2 derived t_II and no bisection round.
QUICK = {"ref_lr": 1.0, "ref_seeds": 1, "escape_d": (10, 32), "escape_seeds": 2,
         "D": (8, 12), "horizon": 2.0}
#: the two time scales of the phase-II derivation are separated on a run when α reaches this
#: share of its plateau value α* before t_II (α settles before A moves; otherwise the run is
#: outside the slow flow's regime and its t_II is reported, not judged).
SEPARATED = 0.95
#: reference runs continue this many steps after the latest derived escape of their starts
#: (the aligned run's phases II and III take ~16400 steps at lr 0.1; read as a horizon, not a
#: verdict: every reading is absolute).
AFTER_STEPS = 25_000
#: horizon of a boundary run, in units of the derived t_II of its D at q = ln(100)/10.
BOUNDARY_HORIZON = 6.0
#: a boundary run that reaches neither γ − ρ = ±GAP_II within its horizon is still decided when
#: |γ − ρ| ≥ DECIDE_GAP and γ − ρ moved away from 0 over the last tenth of the run.
DECIDE_GAP = 0.25
#: the bisection stops once the bracket of q*(D) is this narrow, or after this many rounds
#: (full, quick) after the first two runs of every D.
BRACKET_WIDTH = 0.025
BISECT_ROUNDS = (4, 0)
_MEMO: dict = {}


def _ref_cfg(temperature: str, v_start: str, q: float):
    return with_readings(reference_config().replace(data={"q": float(q)}), temperature, v_start)


def reference_point(temperature: str, v_start: str, quick: bool, q: float = REF_Q
                    ) -> pd.DataFrame:
    """The reference runs of a reading at `q` (D = 10, d = 100): one row per (run, recorded
    step) with the run's phase readings, start and errors as constant columns."""
    cfg = _ref_cfg(temperature, v_start, q)
    if quick:
        cfg = cfg.replace(train={"lr_v": QUICK["ref_lr"],
                                 "lr_A": cfg.train.lr_A_value / cfg.train.lr_v * QUICK["ref_lr"]})
    seeds = list(REF_SEEDS[:QUICK["ref_seeds"]] if quick else REF_SEEDS) \
        if v_start == "random" else [0]
    a0, b0 = reduced_start(cfg, seeds)
    theta = ALPHA_GROWTH * np.hypot(a0, b0)
    pred = escape_time(cfg, a0, b0, theta)
    esc = pred["t_blowup"]
    t_slow = slow_flow(cfg, GAP_II).t_slow
    a_star = plateau(cfg).alpha_star
    end = np.max(esc) + AFTER_STEPS * 0.1 / cfg.train.lr_v
    if not math.isfinite(end):
        raise ValueError("reference_point: no derived escape time (a start without blow-up)")
    horizon = int(math.ceil(end))
    path = ReducedEngine(cfg, a0, b0).run(horizon)
    record = np.unique(np.r_[0, np.geomspace(1, horizon, 300).astype(int), horizon])
    pa_fair = pa_limit_error(cfg)
    bayes = bayes_error(cfg.data)
    rows = []
    for b, seed in enumerate(seeds):
        p = path[path.run == b].drop(columns="run")
        rd = read_phases(p, cfg, pa_fair)
        keep = set(record) | {int(x) for x in (rd["t_I"], rd["t_II"], rd["t_PA"], rd["t_III"])
                              if np.isfinite(x)}
        t = p[p.step.isin(keep)].assign(run=b)
        before = p[p.step < rd["t_I"]] if np.isfinite(rd["t_I"]) else p
        upto_II = p[p.step <= rd["t_II"]] if np.isfinite(rd["t_II"]) else p
        gap = (p.gamma - p.rho).to_numpy()
        margin = (np.minimum(cfg.diag, p.gamma) - p.rho).to_numpy() / cfg.temperature
        last = t.iloc[-1]
        rows.append(t.assign(
            seed=seed, alpha0=a0[b], beta0=b0[b], horizon=horizon,
            t_I_pred=float(pred["t_threshold"][b]), t_blowup=float(esc[b]), t_slow=t_slow,
            t_II_pred=float(esc[b] + t_slow),
            **{k: rd[k] for k in ("t_I", "t_II", "t_PA", "t_III", "v0_norm")},
            final_gap=float(gap[-1]), min_pa_gap=float(margin[1:].min()),
            separated=bool(upto_II.alpha.max() >= SEPARATED * a_star),
            final_beta_over_alpha=float(abs(last.beta) / abs(last.alpha)),
            loss_end_I=float(before.loss.iloc[-1]), final_loss=float(last.loss),
            final_error_fair=float(last.error_fair), pa_limit_error_fair=pa_fair,
            bayes_error=bayes, tau=cfg.temperature, q=float(q)))
    return pd.concat(rows, ignore_index=True)


def paired_start(cfg, seeds) -> tuple[np.ndarray, np.ndarray]:
    """(α⁰, β⁰) of the random start v⁰ ~ N(0, s²·I_d) (s = v0_scale) drawn as paired starts:
    each seed fixes one standard normal z and one uniform u, the same at every d, and
    α⁰ = s·z, β⁰ = s·√(χ²_{d−1} quantile at u): the exact law of (⟨v⁰, w*⟩, ‖v⁰ − α⁰w*‖)
    at every d, with the seed's draws shared along the d ladder (its exponent in d carries no
    seed noise of its own). Aligned: (α⁰, 0)."""
    cfg = cfg.resolved()
    if cfg.train.init_v == "aligned":
        return reduced_start(cfg, seeds)
    zu = np.array([np.random.default_rng(np.random.SeedSequence([int(s), 12, 1])).random(2)
                   for s in seeds])
    z = stats.norm.ppf(zu[:, 0])
    s = cfg.train.v0_scale
    return s * z, s * np.sqrt(stats.chi2.ppf(zu[:, 1], cfg.data.d - 1))


@functools.cache
def expected_escape_exponent(temperature: str, v_start: str, n: int = 2000) -> float:
    """The derived exponent of t_I in d over ESCAPE_D, as an expectation over the start: the
    least-squares slope of E[ln t_I] (derived threshold times of `n` paired starts, a fixed
    quasi-sample of (z, u)) against ln d. For an aligned start it is the derived times' slope."""
    grid = (np.arange(n) + 0.5) / n
    z = stats.norm.ppf(grid)
    u = np.random.default_rng(7).permutation(grid)  # independent of z, stratified
    logs = []
    for d in ESCAPE_D:
        cfg = with_readings(reference_config(lr_v=ESCAPE_LR).replace(data={"d": int(d)}),
                            temperature, v_start).resolved()
        if cfg.train.init_v == "aligned":
            a0, b0 = reduced_start(cfg, [0])
        else:
            s = cfg.train.v0_scale
            a0, b0 = s * z, s * np.sqrt(stats.chi2.ppf(u, d - 1))
        t = escape_time(cfg, a0, b0, ALPHA_GROWTH * np.hypot(a0, b0))["t_threshold"]
        logs.append(float(np.mean(np.log(t))))
    return float(np.polyfit(np.log(ESCAPE_D), logs, 1)[0])


def escape_point(d: int, temperature: str, v_start: str, seeds: list[int]) -> pd.DataFrame:
    """Phase I at dimension d: the measured threshold time t_I of each paired start
    ([`paired_start`][]; reduced engine, lr ESCAPE_LR) and its derived value (threshold and
    blow-up times)."""
    cfg = with_readings(reference_config(lr_v=ESCAPE_LR).replace(data={"d": int(d)}),
                        temperature, v_start)
    a0, b0 = paired_start(cfg, seeds)
    theta = ALPHA_GROWTH * np.hypot(a0, b0)
    pred = escape_time(cfg, a0, b0, theta)
    cap = int(3 * max(pred["t_threshold"]) + 1000)
    path = ReducedEngine(cfg, a0, b0).run(cap, stop=lambda n, a, b, g, r: a >= theta)
    t_I = [read_phases(path[path.run == i])["t_I"] for i in range(len(seeds))]
    return pd.DataFrame({"d": d, "seed": seeds, "alpha0": a0, "beta0": b0, "theta": theta,
                         "t_I": t_I, "t_I_pred": pred["t_threshold"], "t_blowup": pred["t_blowup"],
                         "cap": cap,
                         "tau": cfg.temperature, "lr": ESCAPE_LR})


def _line(D: int, q: float, temperature: str):
    cfg = line_config(int(D), 2, 100, float(q), lr_v=boundary_lr(D)) if D != 10 else \
        reference_config(lr_v=boundary_lr(D)).replace(data={"q": float(q)})
    return with_readings(cfg, temperature, "aligned")


def dladder_point(D: int, temperature: str) -> pd.DataFrame:
    """t_II at q = Q_TII on the D ladder: measured (exact engine, aligned start, stopped at
    γ − ρ = GAP_II) and derived (t_blowup + slow flow, on per-set statistics); the derived root
    in q of the plateau rate r₀ (where the bisection of the boundary starts)."""
    from ..predictions.phase_one import phase_i

    cfg = _line(D, Q_TII, temperature).resolved()
    p1 = phase_i(cfg)
    sf = slow_flow(cfg, GAP_II)
    pred = p1.t_blowup + sf.t_slow
    horizon = int(math.ceil(3 * pred)) if math.isfinite(pred) else 200_000
    path = exact_path(cfg, horizon, stop_gap=GAP_II)
    rd = read_phases(path, cfg)
    a_star = plateau(cfg).alpha_star
    before = path[path.step <= rd["t_II"]] if np.isfinite(rd["t_II"]) else path
    return pd.DataFrame([{"D": D, "q": Q_TII, "lr": cfg.train.lr_v, "tau": cfg.temperature,
                          "t_I": rd["t_I"], "t_II": rd["t_II"], "t_blowup": p1.t_blowup,
                          "t_slow": sf.t_slow, "t_II_pred": pred, "rate0": sf.rate0,
                          "acceleration": sf.acceleration, "t_II_linear": p1.t_blowup + 1 / sf.rate0
                          if sf.rate0 > 0 else math.inf, "q_root": _rate_root(D, temperature),
                          "final_gap": rd["final_gap"], "steps_run": rd["steps_run"],
                          "alpha_star": a_star, "alpha_max": float(before.alpha.max()),
                          "separated": bool(before.alpha.max() >= SEPARATED * a_star)}])


def _rate_root(D: int, temperature: str) -> float:
    """The q at which the derived plateau rate r₀ of γ − ρ changes sign (NaN: no sign change
    on [0.1, 0.95])."""
    def rate(q):
        return plateau(_line(D, q, temperature)).rate
    lo, hi = 0.1, 0.95
    if not rate(lo) > 0 > rate(hi):
        return math.nan
    return float(optimize.brentq(rate, lo, hi, xtol=1e-4))


def boundary_point(D: int, q: float, temperature: str, horizon: int) -> pd.DataFrame:
    """One boundary run at (D, q): exact GD from the aligned start until |γ − ρ| ≥ GAP_II or
    `horizon` steps; its outcome (``associates``, ``anti-associates``, ``undecided``)."""
    cfg = _line(D, q, temperature).resolved()
    path = exact_path(cfg, int(horizon), stop_gap=GAP_II)
    gap = (path.gamma - path.rho).to_numpy()
    tail = max(1, len(gap) // 10)
    drift = float(gap[-1] - gap[-1 - tail]) if len(gap) > tail else 0.0
    g = float(gap[-1])
    if g >= GAP_II or (g >= DECIDE_GAP and drift > 0):
        outcome = "associates"
    elif g <= -GAP_II or (g <= -DECIDE_GAP and drift < 0):
        outcome = "anti-associates"
    else:
        outcome = "undecided"
    return pd.DataFrame([{"D": D, "q": q, "tau": cfg.temperature, "lr": cfg.train.lr_v,
                          "horizon": horizon, "steps_run": float(path.step.iloc[-1]),
                          "final_gap": g, "final_drift": drift, "outcome": outcome,
                          "t_II": read_phases(path, cfg)["t_II"]}])


def _bracket(rows: pd.DataFrame) -> tuple[float, float]:
    """(largest associating q below every anti-associating one, smallest anti-associating q);
    NaN where missing."""
    a = rows[rows.outcome == "associates"].q
    n = rows[rows.outcome == "anti-associates"].q
    hi = float(n.min()) if len(n) else math.nan
    below = a[a < hi] if len(n) else a
    return (float(below.max()) if len(below) else math.nan), hi


def _boundaries(Ds, temperature: str, dl: pd.DataFrame, quick: bool) -> pd.DataFrame:
    """Bisection of q*(D) at every D at once (one round of sweep points per step)."""
    runs = {D: [] for D in Ds}
    start = {}
    for D in Ds:
        r = dl[dl.D == D].iloc[0]
        q0 = r.q_root if np.isfinite(r.q_root) else 0.6
        factor = QUICK["horizon"] if quick else BOUNDARY_HORIZON
        h = int(math.ceil(factor * r.t_II_pred)) if np.isfinite(r.t_II_pred) else 100_000
        start[D] = (q0, h)
    width = 0.05

    def go(cells):
        pts = [call_point(f"{__name__}:boundary_point", D=int(D), q=round(float(q), 6),
                          temperature=temperature, horizon=start[D][1]) for D, q in cells]
        for (D, _), p in zip(cells, run_points(pts)):
            runs[D].append(cc.point_rows(p))

    go([(D, q) for D in Ds for q in (start[D][0] - width, start[D][0] + width)])
    for _ in range(BISECT_ROUNDS[1 if quick else 0]):
        cells = []
        for D in Ds:
            t = pd.concat(runs[D], ignore_index=True)
            lo, hi = _bracket(t)
            if math.isnan(hi):
                if t.q.max() < 0.99:
                    cells.append((D, min(0.99, t.q.max() + 2 * width)))
            elif math.isnan(lo):
                if t.q.min() > 0.02:
                    cells.append((D, max(0.02, t.q.min() - 2 * width)))
            elif hi - lo > BRACKET_WIDTH:
                # bisect the widest gap between the runs inside the bracket (undecided runs
                # split it: the boundary may sit on either side of them)
                qs = np.sort(t.q[(t.q >= lo) & (t.q <= hi)].to_numpy())
                j = int(np.argmax(np.diff(qs)))
                cells.append((D, 0.5 * (qs[j] + qs[j + 1])))
        if not cells:
            break
        go(cells)
    out = pd.concat([pd.concat(v, ignore_index=True) for v in runs.values()], ignore_index=True)
    return out.sort_values(["D", "q"], ignore_index=True)


def reference_table(quick: bool, temperature: str, v_start: str, q: float | None = None
                    ) -> pd.DataFrame:
    """The reference runs of a reading at `q` (None: the reading's
    [`reference_q`][theorylab.jelassi2022.setups.reference_q]; a sweep point, memoised per
    process: the lemma's check reads them too)."""
    q = reference_q(temperature) if q is None else float(q)
    key = (bool(quick), temperature, v_start, q)
    if key not in _MEMO:
        _MEMO[key] = cc.point_table(f"{__name__}:reference_point", [dict(
            temperature=temperature, v_start=v_start, quick=bool(quick), q=round(q, 12))])
    return _MEMO[key]


@functools.cache
def _d_ladder(quick: bool, temperature: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The D ladder and the boundary of a temperature reading (the start of v does not enter:
    aligned starts; memoised per process)."""
    Ds = QUICK["D"] if quick else BOUNDARY_D
    dl = cc.point_table(f"{__name__}:dladder_point",
                     (dict(D=int(D), temperature=temperature) for D in Ds))
    return dl, _boundaries(Ds, temperature, dl, quick)


def page_settings() -> dict[str, object]:
    """The settings of a full check as its pages state them."""
    from ..setups import ADMISSIBLE_Q, V0_NORM

    return {
        "start of v": f"random, v⁰ ~ N(0, (‖v⁰‖²/d)·I_d) with ‖v⁰‖ = {V0_NORM:g} (aligned reading:"
                      f" v⁰ = {V0_NORM:g}·w*)",
        "reference runs": f"D = 10, C = 2, d = 100, q = {REF_Q:.3f} "
                          + "".join(f"(τ = √d: q = {v:.2f}, and {REF_Q:.3f} reported)"
                                    for k, v in ADMISSIBLE_Q.items() if k == "sqrt(d)")
                          + f", lr 0.1, {len(REF_SEEDS)} seeds, {AFTER_STEPS} steps after the "
                          "latest derived escape",
        "d ladder (t_I)": f"d = {', '.join(map(str, ESCAPE_D))}, {len(ESCAPE_SEEDS)} paired "
                          f"starts, lr {ESCAPE_LR:g}",
        "D ladder (t_II, q*(D))": f"D = {', '.join(map(str, BOUNDARY_D))}, C = 2, d = 100, "
                                  f"aligned start, t_II at q = {Q_TII:g}, boundary horizons "
                                  f"{BOUNDARY_HORIZON:g} derived t_II",
    }


@functools.cache
def measure(quick: bool, temperature: str, v_start: str) -> dict[str, pd.DataFrame]:
    """Every table of both Theorem 4.1 checks under a reading (memoised per process)."""
    ref = reference_table(quick, temperature, v_start)
    # the reference point itself, reported where the reading judges at an admissible q
    at_ref = (reference_table(quick, temperature, v_start, REF_Q)
              if reference_q(temperature) != REF_Q else ref.iloc[:0])
    ds = QUICK["escape_d"] if quick else ESCAPE_D
    seeds = list(ESCAPE_SEEDS[:QUICK["escape_seeds"]] if quick else ESCAPE_SEEDS)
    esc = cc.point_table(f"{__name__}:escape_point", (
        dict(d=int(d), temperature=temperature, v_start=v_start, seeds=seeds) for d in ds))
    esc["exp_expected"] = expected_escape_exponent(temperature, v_start,
                                                   400 if quick else 2000)
    dl, bnd = _d_ladder(quick, temperature)
    return {"reference": ref, "escape": esc, "dladder": dl, "boundary": bnd, "at_ref_q": at_ref}

"""What a run of the first paper's model costs before it starts, and the guard of the derived
computations that evaluate the exchangeable engine.

[`cost_model`][] is this paper's `Paper.cost` hook ([`theorylab.core.cost`][]): the work of
one step of each engine, in units proportional to its arithmetic:

- ``population-exchangeable``: histograms × (patterns + 17) (the table's rows, each read with
  its pattern counts and ~17 per-row values); a config above [`DIRECT_WORK`][] is timed on the
  same C with fewer sets L (D = C·L');
- ``population-brute``: configurations × D, timed on fewer patches above the limit;
- ``population-montecarlo``: samples × D × (D + d), timed on fewer samples;
- ``empirical``: (n_train + n_test/4) × D × (D + d), timed on fewer samples.

The memory is the engines' own up-front estimate
([`memory_estimate`][theorylab.jelassi2022.engines.memory_estimate]).

[`exchangeable_guard`][] says what a derived computation of
many exact evaluations will take (``predictions.phase_ii``), refuses it above
[`DERIVED_LIMIT_S`][] unless asked, and shows its progress.
"""

from __future__ import annotations

import functools
import math

from theorylab.core.cost import CostModel, announce, estimate, format_seconds
from theorylab.core.resources import check_memory

from .config import ExperimentConfig, setting_of
from .data import make_wstar
from .engines import choose_method, count_patterns, make_engine, memory_estimate, n_histograms

__all__ = ["DERIVED_LIMIT_S", "DIRECT_WORK", "cost_model", "exchangeable_guard", "step_work",
           "exchangeable_rows"]

#: A step of at most this much work is timed as it is (about 0.1 s on the 2-core development
#: machine: 3e-8 s per unit of the exchangeable engine); above it, a smaller config.
DIRECT_WORK = 3e6
#: A derived computation predicted to take longer than this is refused unless
#: ``allow_long=True`` (10 minutes).
DERIVED_LIMIT_S = 600.0
#: Exact evaluations of ``predictions.phase_ii``: the doubling ladder and Brent's root search
#: of α* take 20–40 (measured: 31 at D = 10, C = 2); the estimate uses the upper end.
PHASE_II_EVALUATIONS = 40


def exchangeable_rows(D: int, C: int, q: float = 0.5) -> int:
    """Histograms of the exchangeable engine's table at D patches in sets of C (the patterns
    of positive probability under q: all of them for 0 < q < 1)."""
    pats = count_patterns(C)
    live = ((q > 0) | (pats[:, 0] + pats[:, 2] == 0)) & ((q < 1) | (pats[:, 1] == 0))
    return n_histograms(D // C - 1, int(live.sum()))


def step_work(cfg: ExperimentConfig, method: str | None = None) -> float:
    """Work of one gradient step of `cfg`'s engine (``method``: the population method it
    resolves to; default ``choose_method``), in the units of the module docstring."""
    t, D, d = cfg.train, cfg.data.D, cfg.data.d
    if method is None:
        method = "empirical" if t.engine == "empirical" else choose_method(
            cfg, setting_of(cfg).partition)
    if method == "exchangeable":
        C = cfg.data.C
        return float(exchangeable_rows(D, C)) * (count_patterns(C).shape[0] + 17)
    if method == "brute":
        # 3^(D − C) in logs, capped far beyond any table that fits (no OverflowError)
        return 2.0 * (D // cfg.data.C) * math.exp(min((D - cfg.data.C) * math.log(3), 700)) * D
    if method == "montecarlo":
        return float(t.mc_samples) * D * (D + d)
    return (t.n_train + t.n_test / 4) * D * (D + d)


def _smaller(cfg: ExperimentConfig, method: str, work: float) -> ExperimentConfig:
    """A config of the same engine whose step is at most [`DIRECT_WORK`][] (or as small as
    the engine allows)."""
    t, D, C = cfg.train, cfg.data.D, cfg.data.C
    if method in ("exchangeable", "brute"):
        L = D // C
        while L > 2 and step_work(_with_sets(cfg, C, L), method) > DIRECT_WORK:
            L -= 1
        return _with_sets(cfg, C, L)
    share = DIRECT_WORK / work
    if method == "montecarlo":
        return cfg.replace(train={"mc_samples": max(2, int(t.mc_samples * share))})
    return cfg.replace(train={"n_train": max(1, int(t.n_train * share)),
                              "n_test": max(1, int(t.n_test * share))})


def _with_sets(cfg: ExperimentConfig, C: int, L: int) -> ExperimentConfig:
    return cfg.replace(data={"D": C * L, "C": C, "L": None, "partition": "random"})


def cost_model(cfg) -> CostModel:
    """The [`CostModel`][theorylab.core.cost.CostModel] of a run of `cfg` (this paper's
    `Paper.cost`)."""
    from .trainer import record_steps

    s = setting_of(cfg)
    cfg, part, t = s.cfg, s.partition, s.cfg.train
    method = "empirical" if t.engine == "empirical" else choose_method(cfg, part)
    work = step_work(cfg, method)
    smaller = None
    if work > DIRECT_WORK:
        small = _smaller(cfg, method, work)
        if step_work(small, method) < work:
            smaller = functools.partial(cost_model, small)
    need, info = memory_estimate(cfg, part, method)
    need = float(need) if need < 1e300 else math.inf  # brute force's count can be astronomical

    def check() -> None:  # what make_engine and the exchangeable engine refuse up front
        check_memory(need, **info)
        rows = exchangeable_rows(cfg.data.D, cfg.data.C, cfg.data.q)
        if method == "exchangeable" and rows > t.max_configs:
            raise ValueError(f"train.max_configs: the exchangeable engine needs {rows} "
                             f"histograms (> max_configs={t.max_configs}); use "
                             "method='montecarlo'")

    return CostModel(
        engine=f"{method} (D = {cfg.data.D}, C = {cfg.data.C}, d = {cfg.data.d})",
        steps=t.steps, records=len(record_steps(t)), work=work,
        memory=need, build=lambda: make_engine(cfg, part, make_wstar(cfg.data)),
        smaller=smaller, flow=t.mode == "flow", check=check)


def exchangeable_guard(cfg, evaluations: int, what: str, allow_long: bool = False):
    """Before a derived computation of about `evaluations` exact (exchangeable) evaluations
    of `cfg`'s setting: say what it will take when that is more than a few seconds, refuse
    it above [`DERIVED_LIMIT_S`][] unless `allow_long` (``ValueError`` naming `what`), and
    return ``tick()``, to be called at each evaluation: it draws a progress bar when the
    computation is long and stderr is a terminal. The estimate costs about a second, and is
    skipped where one evaluation is at most [`DIRECT_WORK`][] (a small table)."""
    import sys

    from tqdm.auto import tqdm

    cfg = setting_of(cfg).cfg.replace(train={"engine": "population", "method": "exchangeable"})
    if step_work(cfg, "exchangeable") <= DIRECT_WORK:
        return lambda: None  # ≤ ~0.1 s an evaluation: nothing to say, nothing to measure
    est = estimate(cost_model(cfg), budget_s=0.3)
    seconds = est.setup_s + evaluations * est.step_s
    announce(what, seconds, limit_s=DERIVED_LIMIT_S, allow_long=allow_long,
             hint=f"{evaluations} exact evaluations of {format_seconds(est.step_s)} each; "
                  f"pass allow_long=True to run it anyway, or use a smaller data.D")
    if seconds <= 5.0 or not sys.stderr.isatty():
        return lambda: None
    bar = tqdm(total=evaluations, desc=what, leave=False)
    return lambda: bar.update(1)

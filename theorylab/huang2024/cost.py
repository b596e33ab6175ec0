"""What a run of the second paper's model costs before it starts: this paper's `Paper.cost`
hook ([`theorylab.core.cost`][]).

The work of one step, in units proportional to its arithmetic (only ratios matter):

- ``population-laplace``, ``population-exact``, ``population-brute`` (and any engine of the
  paper not listed here): P² × F with F = K·N features (every query against every key and
  feature); a config above [`DIRECT_WORK`][] is timed on a smaller P with the same local area
  size C and K (the global area and the number of local areas scaled down alike, random
  areas), and scaled by the ratio of P² × F (measured on the 2-core development machine,
  ``population-laplace`` from P = 256 to 512: ×9.4 in work, ×15.6 in time; the estimate is
  good to a factor of about 2);
- ``population-reduced``: (C1 + 1)(C + 1), the count pairs its two query classes sum over
  (a step never touches the P × P arrays);
- ``population-montecarlo``, ``empirical``: samples × P² × F; ``cl-montecarlo``: images ×
  2 views × P² × F; timed on fewer samples above the limit.

The memory is the engines' own up-front estimate ([`memory_estimate`][theorylab.huang2024.
engines.memory_estimate]); for ``population-reduced``, which never holds the P × P arrays,
its summation grids (built to be counted: milliseconds) times [`GRID_TEMPORARIES`][].
"""

from __future__ import annotations

import functools
import math

from theorylab.core.cost import CostModel

from .config import ExperimentConfig
from .engines import check_resources, make_engine, memory_estimate

__all__ = ["DIRECT_WORK", "GRID_TEMPORARIES", "cost_model", "step_work"]

#: A step of at most this much work is timed as it is (~0.4 s for ``population-laplace`` at
#: P = 256 on the development machine); above it, a smaller config.
DIRECT_WORK = 1.2e6
#: Arrays of a reduced grid's size alive at once in one ``population-reduced`` evaluation (the
#: weights, the masses e_t, e_o, the denominator, two shares, the loss term and the derivative
#: of one coordinate, with room for the backend's temporaries).
GRID_TEMPORARIES = 12
_SAMPLED = {"population-montecarlo": "mc_samples", "empirical": "n_train",
            "cl-montecarlo": "mc_samples"}


def step_work(cfg: ExperimentConfig) -> float:
    """Work of one gradient step of `cfg`'s engine (module docstring)."""
    d = cfg.data
    if cfg.train.engine == "population-reduced":
        return float((d.global_size + 1) * (d.local_size + 1))
    base = float(d.P) ** 2 * (d.K * (1 + (d.P - d.global_size) // d.local_size))  # P² × F
    field = _SAMPLED.get(cfg.train.engine)
    if field is None:
        return base
    views = 2 if cfg.train.engine == "cl-montecarlo" else 1
    return base * getattr(cfg.train, field) * views


def _smaller(cfg: ExperimentConfig, work: float) -> ExperimentConfig:
    """A config of the same engine whose step is about [`DIRECT_WORK`][]."""
    share = DIRECT_WORK / work
    field = _SAMPLED.get(cfg.train.engine)
    if field is not None:
        least = cfg.cl_negatives + 1 if cfg.train.engine == "cl-montecarlo" else 2
        return cfg.replace(train={field: max(least, int(getattr(cfg.train, field) * share))})
    d = cfg.data
    P, C1, C = d.P, d.global_size, d.local_size
    s = share ** (1 / 3)  # P² × F with F ∝ P
    n_local = max(1, int((P - C1) // C * s))
    C1 = max(C, int(round(C1 * s)))
    data = {k: None for k in ("kappa_s", "kappa_c", "Delta") if k in cfg.to_dict()["data"]}
    data.update(P=C1 + C * n_local, C1=C1, C=C, areas="random")
    return cfg.replace(data=data)


def cost_model(cfg) -> CostModel:
    """The [`CostModel`][theorylab.core.cost.CostModel] of a run of `cfg` (this paper's
    `Paper.cost`); ``ValueError`` where the run would be refused up front
    ([`check_resources`][theorylab.huang2024.engines.check_resources])."""
    from theorylab.core.trainer import record_schedule

    cfg = cfg.resolved()
    t = cfg.train
    work = step_work(cfg)
    d = cfg.data
    records = len(record_schedule(t.steps, t.n_records, t.record))
    if t.engine == "population-reduced":
        engine = make_engine(cfg)
        cells = sum(math.prod(g.shape) for g in engine.grids.values())
        return CostModel(
            engine=f"{t.engine} (P = {d.P}, C1 = {d.global_size}, C = {d.local_size})",
            steps=t.steps, records=records, work=work,
            memory=float(cells * 8 * GRID_TEMPORARIES), build=lambda: engine,
            smaller=None, flow=t.mode == "flow")
    # the run's up-front refusals (memory, enumeration limits) before the structure is built
    structure = check_resources(cfg)
    smaller = None
    if work > DIRECT_WORK:
        small = _smaller(cfg, work)
        if step_work(small) < work:
            smaller = functools.partial(cost_model, small)
    return CostModel(
        engine=f"{t.engine} (P = {d.P}, C1 = {d.global_size}, C = {d.local_size}, K = {d.K})",
        steps=t.steps, records=records, work=work, memory=float(memory_estimate(cfg, structure)[0]),
        build=lambda: make_engine(cfg, structure), smaller=smaller, flow=t.mode == "flow")

"""The second paper's timed cases: one GD step of the exact population engines on the
kernel's backends against plain torch autograd, timed interleaved in one run, after checking
that they agree.

- [`bench_config`][]: the timed problem at P (one cluster, a global area of P − 4 patches and
  a local area of 4, so Δ > 0 and a query's count rows grow like 5P; the coefficient law
  {0.5, 1.5}, Bernoulli masks γ = 0.5, masked keys in, ``loss_norm = "P"``).
- [`bench_exact`][]: one row per P: the numpy engine's, the torch engine's and the autograd
  baseline's step times ([`AutogradExactLoss`][theorylab.huang2024.bench.baselines
  .AutogradExactLoss]), their ratios, and the largest differences of loss and gradients.
- [`bench_laplace`][]: the same for ``population-laplace`` against its autograd twin.
- [`run`][]: ``theorylab bench --paper huang2024``: the exact step's table, starting with the
  machine line.
"""

from __future__ import annotations

import math

import numpy as np

from theorylab.core.bench import (
    device_sync,
    empty_cache,
    engine_step,
    interleaved_medians,
    machine_line,
    print_and_save,
)
from theorylab.core.faults import keeping

from ..config import PAPER_NAME, ExperimentConfig, config_from_dict
from ..engines import ExactEngine, LaplaceEngine, Params
from .baselines import AutogradExactLoss, AutogradLaplace

__all__ = ["QUICK_SIZES", "SIZES", "bench_config", "bench_exact", "bench_laplace",
           "bench_reduced",
           "check_sizes", "laplace_config", "run"]

#: P of the default run and of ``--quick``
SIZES = (64, 256, 576)
QUICK_SIZES = (16, 64)


def bench_config(P: int, backend: str = "numpy", device: str = "cpu") -> ExperimentConfig:
    """The timed problem at P (module docstring); P ≥ 6."""
    return config_from_dict({
        "data": {"P": P, "C1": P - 4, "C": 4, "z_law": "values", "z_values": [0.5, 1.5]},
        "model": {"mask": "bernoulli", "gamma": 0.5, "mask_keys": True, "loss_norm": "P"},
        "train": {"engine": "population-exact", "backend": backend, "device": device,
                  "lr": 2.0 * P, "max_configs": 10**12}})


def _state(engine, steps: int = 2) -> Params:
    """A non-trivial state: `steps` GD steps of `engine` from Q = 0 (on the exact engine Υ
    stays constant on atoms)."""
    params = engine.initial_params()
    for step in range(steps):
        params = engine.apply(params, engine.evaluate(params, step, need_grad=True,
                                                      record=False).grads)
    return params


def _diff(a, loss, grads: dict) -> float:
    """The largest absolute difference of loss and gradients to the evaluation ``a``."""
    return max([abs(loss - a.loss)] + [float(np.abs(np.asarray(grads[k]) - a.grads[k]).max())
                                       for k in a.grads])


def bench_exact(P: int, device: str = "cpu", *, repeats: int = 3,
                max_seconds: float | None = 60.0, numpy: bool = True) -> dict:
    """One row: the numpy engine's, the torch engine's and the autograd baseline's step at P,
    timed interleaved (medians), after checking that all three agree. ``numpy=False`` leaves
    the numpy engine out (large P on a GPU): its columns are NaN and the differences are taken
    to the torch engine."""
    cn, ct = bench_config(P), bench_config(P, "torch", device)
    s = cn.data.make_structure()
    en, et = ExactEngine(cn, s), ExactEngine(ct, s)
    base = AutogradExactLoss(en, device)
    params = _state(et)
    b = et.evaluate(params, 0, need_grad=True, record=False)
    a = en.evaluate(params, 0, need_grad=True, record=False) if numpy else b
    lc, gp, gu = base.loss_grad(params)

    def autograd_step():
        _l, gPhi, gUps = base.loss_grad(params)
        return en.apply(params, {"Phi": gPhi, "Ups": gUps})

    steps = {"torch": engine_step(et, params), "autograd": autograd_step}
    if numpy:
        steps["numpy"] = engine_step(en, params)
    med, timed = interleaved_medians(steps, device_sync(device), repeats=repeats,
                                     max_seconds=max_seconds)
    med.setdefault("numpy", math.nan)
    rows = int(sum(len(en.plans[p][3]) for p in range(P)))
    return {"device": device, "P": P, "count_rows": rows, "timed": timed,
            "numpy_s": med["numpy"], "torch_s": med["torch"], "autograd_s": med["autograd"],
            "numpy/autograd": med["numpy"] / med["autograd"],
            "torch/autograd": med["torch"] / med["autograd"],
            "torch_vs_numpy": _diff(a, b.loss, b.grads) if numpy else math.nan,
            "autograd_vs_" + ("numpy" if numpy else "torch"): _diff(a, lc, {"Phi": gp, "Ups": gu}),
            "loss": b.loss}


def laplace_config(P: int, backend: str = "numpy", device: str = "cpu") -> ExperimentConfig:
    """The timed problem of ``population-laplace`` at P: [`bench_config`][]'s problem (a
    global area of P − 4 patches and a local area of 4)."""
    return bench_config(P, backend, device).replace(train={"engine": "population-laplace"})


def bench_laplace(P: int, device: str = "cpu", *, repeats: int = 3,
                  max_seconds: float | None = 60.0) -> dict:
    """One row: the ``population-laplace`` step on ``device`` (torch backend; on a CPU also
    the numpy backend) against the same engine with its t-integral differentiated by plain
    autograd ([`AutogradLaplace`][theorylab.huang2024.bench.baselines.AutogradLaplace]),
    timed interleaved, after checking that they agree."""
    cfg = laplace_config(P, "torch", device)
    s = cfg.data.make_structure()
    eng, base = LaplaceEngine(cfg, s), AutogradLaplace(cfg, s)
    params = _state(eng, 1)
    a = eng.evaluate(params, 1, need_grad=True, record=False)
    b = base.evaluate(params, 1, need_grad=True, record=False)

    steps = {"engine": engine_step(eng, params, 1), "autograd": engine_step(base, params, 1)}
    if device == "cpu":
        steps["numpy"] = engine_step(LaplaceEngine(laplace_config(P), s), params, 1)
    med, timed = interleaved_medians(steps, device_sync(device), repeats=repeats,
                                     max_seconds=max_seconds)
    med.setdefault("numpy", math.nan)
    return {"device": device, "P": P, "timed": timed, "engine_s": med["engine"],
            "numpy_s": med["numpy"], "autograd_s": med["autograd"],
            "engine/autograd": med["engine"] / med["autograd"],
            "autograd_vs_engine": _diff(a, b.loss, b.grads),
            "loss": a.loss}


def run(args) -> list[dict]:
    """The command line's run: one row per P (``args.sizes``, else [`SIZES`][] or
    [`QUICK_SIZES`][] with ``--quick``), printed with the machine line; ``--out`` keeps it."""
    sizes = args.sizes or (QUICK_SIZES if args.quick else SIZES)
    estimates = check_sizes(sizes, args.device)
    print(machine_line(args.device, {"paper": PAPER_NAME, "engine": "population-exact",
                                     "dtype": "float64"}), flush=True)
    rows: list[dict] = []
    with keeping(lambda: measured_so_far(rows)):
        for P, estimate in zip(sizes, estimates):
            print(f"{estimate}; measuring ...", flush=True)
            try:
                row = bench_exact(P, args.device, repeats=args.repeats,
                                  max_seconds=args.max_seconds)
            except KeyboardInterrupt:
                if rows:  # the sizes measured so far: their table, as a full run prints it
                    print_and_save(rows, None)
                raise
            rows.append(row)
            print(f"P={P}: numpy {row['numpy_s']:.4g} s, torch {row['torch_s']:.4g} s, "
                  f"autograd {row['autograd_s']:.4g} s (torch/autograd "
                  f"{row['torch/autograd']:.3g}); |torch - numpy| <= "
                  f"{row['torch_vs_numpy']:.2g}", flush=True)
            empty_cache(args.device)
        print_and_save(rows, args.out)
    return rows


def measured_so_far(rows: list[dict]) -> str | None:
    """What a stopped run keeps: the sizes measured (printed above), for a fault's message."""
    if not rows:
        return None
    return (f"the rows of P = {', '.join(str(r['P']) for r in rows)} (printed above; no CSV "
            "written)")


def check_sizes(sizes, device: str = "cpu") -> list[str]:
    """Every P of ``sizes`` checked by the engine's own validator and resource check, before
    anything is measured: ``ValueError("--sizes: P=...: <the field's message>")`` for a P whose
    timed problem ([`bench_config`][]) is not a valid configuration (a global area of P − 4
    must hold the local area of 4: P >= 8) or does not fit this machine (the estimate is
    named). Returns one line per P with its estimate (count rows, memory)."""
    from theorylab.core.resources import format_bytes

    from ..engines import check_resources, exact_log10_rows, memory_estimate

    lines = []
    for P in sizes or ():
        try:
            cfg = bench_config(P, "torch" if device != "cpu" else "numpy", device)
            structure = check_resources(cfg)
            need, _info = memory_estimate(cfg, structure)
        except ValueError as e:
            raise ValueError(f"--sizes: P={P}: {e}") from None
        log_rows, _groups = exact_log10_rows(structure)
        lines.append(f"P={P}: about {10 ** log_rows:.3g} count rows, about "
                     f"{format_bytes(need)} for the engine (the autograd baseline holds "
                     "several times more)")
    return lines


def bench_reduced(P: int, device: str = "cpu", *, repeats: int = 3,
                  max_seconds: float | None = 60.0, steps: int = 20) -> dict:
    """One row: the ``population-reduced`` step (exact count sums) on ``device`` with the torch
    backend against the numpy backend on the CPU, timed interleaved at the state after `steps`
    steps of the numpy engine (the Δ = 0.5, κ_c = 1/4 size family at P), after checking that
    both give the same loss and gradients (``torch_vs_numpy``, the largest absolute
    difference)."""
    from ..engines import make_engine
    from ..setups import mae_config

    cfg = mae_config(P, Delta=0.5, kappa_c=0.25, engine="population-reduced").replace(
        train={"count_nodes": 0})
    en = make_engine(cfg)
    et = make_engine(cfg.replace(train={"backend": "torch", "device": device}))
    params = _state(en, steps)
    a = en.evaluate(params, 0, need_grad=True, record=False)
    b = et.evaluate(params, 0, need_grad=True, record=False)

    med, timed = interleaved_medians({"torch": engine_step(et, params),
                                      "numpy": engine_step(en, params)}, device_sync(device),
                                     repeats=repeats, max_seconds=max_seconds)
    return {"device": device, "P": P, "C1": int(cfg.data.C1), "C": int(cfg.data.C),
            "timed": timed, "numpy_s": med["numpy"], "engine_s": med["torch"],
            "numpy/torch": med["numpy"] / med["torch"], "torch_vs_numpy": _diff(a, b.loss, b.grads),
            "loss": a.loss}


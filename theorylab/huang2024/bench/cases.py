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
import statistics

import numpy as np

from theorylab.core.bench import interleaved_times, machine_line, print_and_save

from ..config import PAPER_NAME, ExperimentConfig, config_from_dict
from ..engines import ExactEngine, LaplaceEngine, Params
from .baselines import AutogradExactLoss, AutogradLaplace

__all__ = ["QUICK_SIZES", "SIZES", "bench_config", "bench_exact", "bench_laplace",
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


def _state(engine: ExactEngine) -> Params:
    """A non-trivial state: two GD steps from Q = 0 (Υ stays constant on atoms)."""
    params = engine.initial_params()
    for step in range(2):
        params = engine.apply(params, engine.evaluate(params, step, need_grad=True,
                                                      record=False).grads)
    return params


def _diff(a, loss, gPhi, gUps) -> float:
    """The largest absolute difference of loss and gradients to the evaluation ``a``."""
    return max(abs(loss - a.loss), float(np.abs(gPhi - a.grads["Phi"]).max()),
               float(np.abs(gUps - a.grads["Ups"]).max()))


def bench_exact(P: int, device: str = "cpu", *, repeats: int = 3,
                max_seconds: float | None = 60.0, numpy: bool = True) -> dict:
    """One row: the numpy engine's, the torch engine's and the autograd baseline's step at P,
    timed interleaved (medians), after checking that all three agree. ``numpy=False`` leaves
    the numpy engine out (large P on a GPU): its columns are NaN and the differences are taken
    to the torch engine."""
    import torch

    cn, ct = bench_config(P), bench_config(P, "torch", device)
    s = cn.data.make_structure()
    en, et = ExactEngine(cn, s), ExactEngine(ct, s)
    base = AutogradExactLoss(en, device)
    params = _state(et)
    b = et.evaluate(params, 0, need_grad=True, record=False)
    a = en.evaluate(params, 0, need_grad=True, record=False) if numpy else b
    lc, gp, gu = base.loss_grad(params)

    def diff(loss, gPhi, gUps):
        return _diff(a, loss, gPhi, gUps)

    def step(engine):
        return lambda: engine.apply(params, engine.evaluate(params, 0, need_grad=True,
                                                            record=False).grads)

    def autograd_step():
        _l, gPhi, gUps = base.loss_grad(params)
        return en.apply(params, {"Phi": gPhi, "Ups": gUps})

    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    steps = {"torch": step(et), "autograd": autograd_step}
    if numpy:
        steps["numpy"] = step(en)
    t = interleaved_times(steps, sync, repeats=repeats, max_seconds=max_seconds)
    med = {k: statistics.median(v) for k, v in t.items()}
    med.setdefault("numpy", math.nan)
    rows = int(sum(len(en.plans[p][3]) for p in range(P)))
    return {"device": device, "P": P, "count_rows": rows, "timed": len(t["torch"]),
            "numpy_s": med["numpy"], "torch_s": med["torch"], "autograd_s": med["autograd"],
            "numpy/autograd": med["numpy"] / med["autograd"],
            "torch/autograd": med["torch"] / med["autograd"],
            "torch_vs_numpy": (_diff(a, b.loss, b.grads["Phi"], b.grads["Ups"]) if numpy
                               else math.nan),
            "autograd_vs_numpy" if numpy else "autograd_vs_torch": diff(lc, gp, gu),
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
    import torch

    cfg = laplace_config(P, "torch", device)
    s = cfg.data.make_structure()
    eng, base = LaplaceEngine(cfg, s), AutogradLaplace(cfg, s)
    params = eng.initial_params()
    params = eng.apply(params, eng.evaluate(params, 0, need_grad=True, record=False).grads)
    a = eng.evaluate(params, 1, need_grad=True, record=False)
    b = base.evaluate(params, 1, need_grad=True, record=False)

    def step(engine):
        return lambda: engine.apply(params, engine.evaluate(params, 1, need_grad=True,
                                                            record=False).grads)

    steps = {"engine": step(eng), "autograd": step(base)}
    if device == "cpu":
        steps["numpy"] = step(LaplaceEngine(laplace_config(P), s))
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    t = interleaved_times(steps, sync, repeats=repeats, max_seconds=max_seconds)
    med = {k: statistics.median(v) for k, v in t.items()}
    med.setdefault("numpy", math.nan)
    return {"device": device, "P": P, "timed": len(t["engine"]), "engine_s": med["engine"],
            "numpy_s": med["numpy"], "autograd_s": med["autograd"],
            "engine/autograd": med["engine"] / med["autograd"],
            "autograd_vs_engine": _diff(a, b.loss, b.grads["Phi"], b.grads["Ups"]),
            "loss": a.loss}


def run(args) -> list[dict]:
    """The command line's run: one row per P (``args.sizes``, else [`SIZES`][] or
    [`QUICK_SIZES`][] with ``--quick``), printed with the machine line; ``--out`` keeps it."""
    import torch

    sizes = args.sizes or (QUICK_SIZES if args.quick else SIZES)
    print(machine_line(args.device, {"paper": PAPER_NAME, "engine": "population-exact",
                                     "dtype": "float64"}), flush=True)
    rows = []
    for P in sizes:
        row = bench_exact(P, args.device, repeats=args.repeats, max_seconds=args.max_seconds)
        rows.append(row)
        print(f"P={P}: numpy {row['numpy_s']:.4g} s, torch {row['torch_s']:.4g} s, autograd "
              f"{row['autograd_s']:.4g} s (torch/autograd {row['torch/autograd']:.3g}); "
              f"|torch - numpy| <= {row['torch_vs_numpy']:.2g}", flush=True)
        if args.device.startswith("cuda"):
            torch.cuda.empty_cache()
    print_and_save(rows, args.out)
    return rows


def check_sizes(sizes) -> None:
    """``ValueError("--sizes: ...")`` unless every P is ≥ 6 (a global area of P − 4 ≥ 2
    patches and a local area of 4)."""
    for P in sizes or ():
        if P < 6:
            raise ValueError(f"--sizes: every P must be >= 6 (got {P})")

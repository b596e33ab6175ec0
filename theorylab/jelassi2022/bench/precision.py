"""float32 against float64: the same evaluation of an engine in both dtypes on one device, at
one state and (for the empirical engine) on the same data, and the relative errors of the
float32 loss and gradients. The population Monte Carlo engine is left out: on torch it draws
its samples in the compute dtype, so its two dtypes see different samples."""

from __future__ import annotations

import numpy as np

from theorylab.jelassi2022.bench.cases import STATE, empirical_config, make_empirical_engine
from theorylab.jelassi2022.bench.cases import population_engine as _population_engine

__all__ = ["PRECISION_SIZES", "float32_errors"]

#: (on CUDA, at CPU sizes): the empirical engine's (N, D, d) and the exchangeable engine's (D, C)
PRECISION_SIZES = {"empirical": ((100_000, 64, 64), (2_000, 16, 64)),
                   "exchangeable": ((64, 4), (16, 4))}


def _flat(engine, grads) -> np.ndarray:
    if isinstance(grads, dict):
        return np.concatenate([np.ravel(engine.xp.to_numpy(engine.xp.asarray(g)))
                               if not isinstance(g, float) else np.array([g])
                               for _, g in sorted(grads.items())])
    return np.ravel(engine.xp.to_numpy(grads))


def _row(engine_name: str, size: str, device: str, e64, e32, p64, p32) -> dict:
    a = e64.evaluate(p64, 0, need_grad=True, record=False)
    b = e32.evaluate(p32, 0, need_grad=True, record=False)
    g64, g32 = _flat(e64, a.grads), _flat(e32, b.grads)
    scale = float(np.abs(g64).max()) or 1.0
    # the empirical engine's loss of a step is its training loss (the test loss is recorded)
    la, lb = ((a.train_loss, b.train_loss) if engine_name == "empirical" else (a.loss, b.loss))
    return {"engine": engine_name, "size": size, "device": device, "loss_float64": la,
            "loss_rel_err": abs(lb - la) / max(abs(la), 1e-300),
            "grad_rel_err": float(np.abs(g32 - g64).max()) / scale}


def float32_errors(device: str, cpu_sizes: bool) -> list[dict]:
    """One row per engine: relative errors of the float32 loss and gradient (the largest
    entry's error over the largest float64 entry)."""
    k = 1 if cpu_sizes else 0
    N, D, d = PRECISION_SIZES["empirical"][k]
    e64 = make_empirical_engine(empirical_config(D, d, N, device=device, offdiag0=0.1))
    e32 = make_empirical_engine(empirical_config(D, d, N, device=device, dtype="float32",
                                                 offdiag0=0.1), train=e64.train)
    p64 = e64.initial_params()
    p32 = {key: e32.xp.asarray(e64.xp.to_numpy(v)) if not isinstance(v, float) else v
           for key, v in p64.items()}
    rows = [_row("empirical", f"N={N}, D={D}, d={d}", device, e64, e32, p64, p32)]
    D, C = PRECISION_SIZES["exchangeable"][k]
    e64 = _population_engine(D, C, "exchangeable", device=device)
    e32 = _population_engine(D, C, "exchangeable", device=device, dtype="float32")
    rows.append(_row("exchangeable", f"D={D}, C={C}", device, e64, e32, dict(STATE),
                     dict(STATE)))
    return rows

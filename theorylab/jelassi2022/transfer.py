"""Fine-tuning runs of the first paper's model from a given attention (the transfer
experiment of Theorem 5.1): the run and its summary, shared by the claim check and the transfer
figure.

Early stopping reads a **validation split**: ``n_val`` fresh points of the downstream
distribution, drawn apart from the training and the test points, evaluated at every recorded
step; the best step is the one with the lowest validation error, and the test error reported
for it is measured on the test points, which never choose anything.

The downstream data (``DOWNSTREAM``) keep the pre-training partition and q with a new feature
w̃* (data seed 1), d = 20 and noise σ = 3/√d: at Assumption 2's σ = 1/√d a frozen
patch-associating attention reaches the target error of Theorem 5.1's check from one or two
samples; the noise is orthogonal to w̃*, so σ leaves the Bayes error unchanged and only sets how
many samples it takes to find w̃*."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .config import setting_of
from .data import make_wstar, sample
from .engines import make_engine
from .trainer import run_experiment

__all__ = ["DOWNSTREAM", "N_VAL", "downstream_fields", "finetune", "finetune_summary"]

#: the downstream data: dimension d, noise σ in units of 1/√d, data seed (w̃*).
DOWNSTREAM = {"d": 20, "sigma_units": 3.0, "seed": 1}
#: validation points that pick the early-stopping step.
N_VAL = 1000


def downstream_fields(sigma_units: float | None = None) -> dict:
    """The ``[data]`` fields of the downstream data: d, data seed and σ = `sigma_units`/√d
    from ``DOWNSTREAM`` (`sigma_units` None: its value); the partition and q stay those of
    pre-training. Use as ``cfg.replace(data=downstream_fields())``."""
    units = DOWNSTREAM["sigma_units"] if sigma_units is None else sigma_units
    d = DOWNSTREAM["d"]
    return {"d": d, "seed": DOWNSTREAM["seed"], "sigma": units / math.sqrt(d)}


def finetune(cfg, A0: np.ndarray | None = None, n_val: int = 0) -> pd.DataFrame:
    """Run ``cfg`` (fine-tuning, empirical engine) from the pre-trained attention ``A0`` (None:
    configured A⁰); return its trajectory. Freeze A with ``train.lr_A = 0``.

    **Arguments:**

    - `cfg`: the fine-tuning experiment (``train.engine = "empirical"`` when ``n_val > 0``).
    - `A0`: the starting attention (its diagonal is kept), or None.
    - `n_val`: size of the validation split (seeded by ``train.seed``, apart from the training
      and test points); its error at each recorded step is the column ``val_error``
      (0: no split, no column).
    """
    initial = None if A0 is None else {"A": A0}
    if n_val <= 0:
        return run_experiment(cfg, initial=initial, progress=False).trajectory
    s = setting_of(cfg)
    cfg, partition, wstar = s.cfg, s.partition, make_wstar(s.cfg.data)
    if cfg.train.engine != "empirical":
        raise ValueError(f"train.engine: a validation split needs 'empirical' (got "
                         f"{cfg.train.engine!r})")
    engine = make_engine(cfg, partition, wstar)
    xp = engine.xp
    rng = np.random.default_rng(np.random.SeedSequence([cfg.train.seed, 23]))
    val = sample(cfg.data, n_val, rng, partition=partition, wstar=wstar,
                 dtype=np.float32 if xp.dtype == "float32" else np.float64)
    Xv, yv = xp.asarray(val.X), xp.asarray(val.y)
    errors: dict[int, float] = {}
    record = engine.record

    def record_with_validation(params, step, ev):
        S = engine.attention(params["A"])
        sums, _ = engine._two_pass(Xv, yv, n_val, params, S, False)
        errors[step] = float(xp.item(sums.error))
        return record(params, step, ev)

    engine.record = record_with_validation
    traj = run_experiment(cfg, initial=initial, progress=False, engine=engine).trajectory
    return traj.assign(val_error=traj.step.map(errors).astype("float64"))


def finetune_summary(traj: pd.DataFrame) -> dict:
    """Last-step and best-step numbers of a fine-tuning run: errors, cos(v, w̃*),
    β = ‖v − ⟨v, w̃*⟩w̃*‖ (the part of v in the noise directions), the best step, and
    ``ran_out``: the best step is the last one and the selecting error still fell by more than
    one standard error over the last recorded interval (more steps could matter).

    The best step is the lowest ``val_error`` (validation split) when the trajectory has that
    column, else the lowest test error (then optimistic: the test points choose the step)."""
    last = traj.iloc[-1]
    sel = traj.val_error.to_numpy() if "val_error" in traj else traj.error.to_numpy()
    ib = int(np.nanargmin(sel))
    best = traj.iloc[ib]
    still = len(sel) > 1 and sel[-2] - sel[-1] > float(last.error_se)
    out = {
        "test_error_last": float(last.error), "test_error_best": float(best.error),
        "test_error_se": float(last.error_se), "best_step": int(best.step),
        "last_step": int(last.step), "ran_out": bool(ib == len(traj) - 1 and still),
        "train_loss_last": float(last.train_loss),
        "cos_v_wstar_last": float(last.cos_v_wstar), "cos_v_wstar_best": float(best.cos_v_wstar),
        "beta_last": float(last.beta), "beta_best": float(best.beta),
        "patch_association": bool(last.patch_association),
    }
    if "val_error" in traj:
        out["val_error_best"] = float(best.val_error)
    return out

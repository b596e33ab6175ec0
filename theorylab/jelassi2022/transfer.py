"""Fine-tuning runs of the first paper's model from a given attention (the transfer
experiment of Theorem 5.1): the run and its summary, shared by the claim check and the transfer
figure."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .trainer import run_experiment

__all__ = ["finetune", "finetune_summary"]


def finetune(cfg, A0: np.ndarray | None = None) -> pd.DataFrame:
    """Run ``cfg`` (fine-tuning) from the pre-trained attention ``A0`` (None: configured A⁰);
    return its trajectory. Freeze A with ``train.lr_A = 0``."""
    initial = None if A0 is None else {"A": A0}
    return run_experiment(cfg, initial=initial, progress=False).trajectory


def finetune_summary(traj: pd.DataFrame) -> dict:
    """Last-step and best-step (lowest recorded test error) numbers of a fine-tuning run:
    errors, cos(v, w̃*), β = ‖v − ⟨v, w̃*⟩w̃*‖ (the part of v in the noise directions), the
    best step, and ``ran_out``: the best step is the last one and the error still fell by more
    than one standard error over the last recorded interval (more steps could matter)."""
    last = traj.iloc[-1]
    err = traj.error.to_numpy()
    ib = int(np.nanargmin(err))
    best = traj.iloc[ib]
    still = len(err) > 1 and err[-2] - err[-1] > float(last.error_se)
    return {
        "test_error_last": float(last.error), "test_error_best": float(best.error),
        "test_error_se": float(last.error_se), "best_step": int(best.step),
        "last_step": int(last.step), "ran_out": bool(ib == len(traj) - 1 and still),
        "train_loss_last": float(last.train_loss),
        "cos_v_wstar_last": float(last.cos_v_wstar), "cos_v_wstar_best": float(best.cos_v_wstar),
        "beta_last": float(last.beta), "beta_best": float(best.beta),
        "patch_association": bool(last.patch_association),
    }

"""Theorem 5.1 (RECONSTRUCTED, digest §5): patch association learned in pre-training makes
fine-tuning on a new feature sample-efficient.

Pre-training: exact population GD on the reference setting (20000 steps; it ends with patch
association). Downstream: same partition, new feature w̃* (data seed 1), d = 20. Fine-tuning by
full-batch GD on Ñ samples for ``steps`` steps from the same v⁰ ~ N(0, 0.05² I_d) (v⁰ does not
know w̃*):

- (i) ``frozen``: A = pre-trained A, frozen; only v trained;
- (ii) ``uniform``: A = 0 (uniform attention, a GLM), frozen; only v trained;
- (iii) ``scratch``: A from the usual start (diagonal ln ln 100, off-diagonal 0) and v both
  trained.

``N_needed``: the smallest Ñ of the ladder with test error ≤ ``TARGET`` = 1/8, the Theorem 3.1
bound that no GLM beats in the low-SNR regime (the exact best GLM here has error 0.156).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..trainer import run_experiment
from ._base import Claim, ClaimResult
from ._common import REF_DIAG, reference_config

__all__ = ["CLAIM", "TARGET", "finetune"]

TARGET = 1 / 8


def finetune(cfg, A0: np.ndarray | None = None):
    """Run ``cfg`` (fine-tuning) from the pre-trained attention ``A0`` (None: configured A⁰);
    return the last trajectory row. Freeze A with ``train.lr_A = 0``."""
    initial = None if A0 is None else {"A": A0}
    return run_experiment(cfg, initial=initial, progress=False).trajectory.iloc[-1]


def _finetune(arm: str, N: int, A_pre: np.ndarray, steps: int, seed: int = 0) -> dict:
    cfg = reference_config(
        engine="empirical", method="auto", steps=steps, n_train=N, n_test=5000, n_records=6,
        init_v="gaussian", v0_scale=0.05, lr_A=0.1 if arm == "scratch" else 0.0, seed=seed,
    ).replace(data={"d": 20, "seed": 1}, model={"diag": 0.0 if arm == "uniform" else REF_DIAG})
    A0 = {"frozen": A_pre, "uniform": np.zeros_like(A_pre)}.get(arm)
    last = finetune(cfg, A0)
    return {"arm": arm, "N": N, "steps": steps, "test_error": float(last.error),
            "test_error_se": float(last.error_se), "train_loss": float(last.train_loss),
            "cos_v_wstar_new": float(last.cos_v_wstar),
            "patch_association": bool(last.patch_association)}


def run(quick: bool) -> ClaimResult:
    pre = run_experiment(reference_config(steps=20_000, n_records=10), progress=False)
    A_pre = pre.A
    steps = 1500
    ladder = [50, 200, 800] if quick else [25, 50, 100, 200, 400, 800, 1600, 3200]
    rows = [_finetune(arm, N, A_pre, steps) for arm in ("frozen", "uniform", "scratch")
            for N in ladder]
    table = pd.DataFrame(rows)
    need = {}
    for arm, g in table.groupby("arm", sort=False):
        ok = g[g.test_error <= TARGET]
        need[arm] = float(ok.N.min()) if len(ok) else math.inf
    nf, nu, ns = need["frozen"], need["uniform"], need["scratch"]
    ordered = nf < ns and nf < nu
    verdict = "agrees" if ordered and math.isinf(nu) else ("partial" if ordered else "disagrees")

    def fmt(x):
        return "never on the ladder" if math.isinf(x) else f"{x:.0f}"

    best_u = float(table[table.arm == "uniform"].test_error.min())
    reading = [
        f"Ñ needed for test error ≤ 1/8: pre-trained A frozen {fmt(nf)}, uniform attention "
        f"{fmt(nu)}, A and v from scratch {fmt(ns)} (ladder {ladder}, {steps} GD steps each).",
        f"Uniform attention is a GLM: its best test error on the ladder is {best_u:.4f}, at or "
        "above the exact best-GLM error 0.156 up to sampling error (ties F = 0 are broken by the "
        "noise part of v, i.e. by a coin), as Theorem 3.1 predicts.",
        "From scratch, A must go through phases I–II on few samples; with small Ñ the noise "
        "directions of v overfit first (training loss near 0) and the attention does not learn "
        "the partition in time.",
        "One seed, one downstream feature; the target 1/8 is the Theorem 3.1 bound, so reaching "
        "it needs something beyond a GLM.",
    ]
    headline = {"N_frozen": nf, "N_uniform": nu, "N_scratch": ns,
                "best_uniform_error": best_u}

    def figure(fig):
        ax = fig.add_subplot(1, 1, 1)
        for arm, g in table.groupby("arm", sort=False):
            ax.errorbar(g.N, g.test_error, yerr=g.test_error_se, marker="o", label=arm)
        ax.axhline(TARGET, color="k", ls="--", label="target 1/8")
        ax.set_xscale("log")
        ax.set_xlabel("Ñ (fine-tuning samples)")
        ax.set_ylabel("test error")
        ax.legend(fontsize=7)

    return ClaimResult("thm5.1", table, verdict, headline, reading,
                       extra={"n_needed": pd.DataFrame([need])}, figure=figure)


CLAIM = Claim(
    id="thm5.1",
    title="Theorem 5.1 (transfer)",
    label="RECONSTRUCTED",
    source="digest §5 (S1 and S4 describe the result in words; the statement was not read)",
    statement="After pre-training on the synthetic data, fine-tuning v on a downstream "
    "distribution with the same partition and a new feature needs few samples.",
    measured="Test error against Ñ for (i) pre-trained A frozen, (ii) uniform attention, "
    "(iii) A and v from scratch; the Ñ each needs to reach error 1/8.",
    predicted="(i) needs the fewest samples; (ii) never reaches 1/8 (Theorem 3.1); (iii) needs "
    "more than (i).",
    run=run,
)

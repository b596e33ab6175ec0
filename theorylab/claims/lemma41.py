"""Lemmas 4.1–4.2 (RECONSTRUCTED, digest §4.3): GD on (P) keeps v = α w* and A partition-
symmetric (diagonal a, same-set γ, cross-set ρ), so the dynamics reduce to (α, γ, ρ).

The exchangeable engine assumes the symmetry. The check runs the brute-force engine, which trains
every off-diagonal entry of A independently, from a symmetric start and reports the largest
deviation from partition symmetry along the whole trajectory (``sym_dev``) and the largest
difference of its (α, γ, ρ) from the exchangeable engine's at every recorded step.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..trainer import run_experiment
from ._base import Claim, ClaimResult
from ._common import REF_DIAG, line_config

__all__ = ["CLAIM", "SYM_TOL", "MATCH_TOL"]

#: rounding of a float64 GD trajectory: each step adds O(1e−16) relative error to every entry;
#: over ≤ 10⁴ steps a deviation above 1e−12 would be a symmetry-breaking bug, not rounding.
SYM_TOL = 1e-12
#: the two engines sum the same expectation in different orders; relative 1e−9 allows the
#: amplification of rounding through the unstable escape of phase I (α grows by a factor ~100).
MATCH_TOL = 1e-9


def run(quick: bool) -> ClaimResult:
    cases = [(6, 2, 0.4, 3000 if not quick else 1500)]
    if not quick:
        cases += [(8, 2, 0.45, 600), (6, 3, 0.6, 3000)]
    rows, summary = [], []
    for D, C, q, steps in cases:
        common = dict(steps=steps, lr_v=0.5, record="log", n_records=60)
        cfg_b = line_config(D, C, D * D, q, diag=REF_DIAG, method="brute", **common)
        cfg_x = cfg_b.replace(train={"method": "exchangeable"})
        tb = run_experiment(cfg_b, progress=False).trajectory
        tx = run_experiment(cfg_x, progress=False).trajectory
        m = tb.merge(tx, on="step", suffixes=("_brute", "_exch"))
        for col in ("alpha", "gamma", "rho", "loss"):
            m[f"d_{col}"] = (m[f"{col}_brute"] - m[f"{col}_exch"]).abs() / (
                1 + m[f"{col}_exch"].abs())
        m["D"], m["C"], m["q"] = D, C, q
        rows.append(m[["D", "C", "q", "step", "sym_dev_brute", "alpha_brute", "gamma_brute",
                       "rho_brute", "d_alpha", "d_gamma", "d_rho", "d_loss"]])
        summary.append({
            "D": D, "C": C, "q": q, "steps": steps,
            "max_sym_dev": float(tb.sym_dev.max()),
            "max_rel_diff_alpha_gamma_rho": float(m[["d_alpha", "d_gamma", "d_rho"]].max().max()),
            "final_alpha": float(tb.alpha.iloc[-1]), "final_gamma": float(tb.gamma.iloc[-1]),
            "final_rho": float(tb.rho.iloc[-1]),
            "max_abs_beta": float(tb.beta.abs().max()),
        })
    table = pd.DataFrame(summary)
    traj = pd.concat(rows, ignore_index=True)
    sym_ok = bool(np.all(table.max_sym_dev <= SYM_TOL))
    match_ok = bool(np.all(table.max_rel_diff_alpha_gamma_rho <= MATCH_TOL))
    moved = bool(np.all(np.abs(table.final_gamma - table.final_rho) > 1e-2))
    verdict = "agrees" if (sym_ok and match_ok and moved) else "disagrees"
    reading = [
        f"Brute-force GD on every entry of A keeps partition symmetry along whole trajectories: "
        f"largest sym_dev {table.max_sym_dev.max():.2e} (tolerance {SYM_TOL:g}) over "
        f"{int(table.steps.sum())} steps in {len(table)} settings; v stays parallel to w* "
        f"(largest β = {table.max_abs_beta.max():.1e}).",
        f"(α, γ, ρ) of the full-matrix run equal the exchangeable engine's to "
        f"{table.max_rel_diff_alpha_gamma_rho.max():.1e} (relative; tolerance {MATCH_TOL:g}).",
        "The runs leave the symmetric start (|γ − ρ| > 0.01 at the end), so the check is not "
        "vacuous. lr 0.5 (instead of 0.1) shortens phase I; the reduction does not depend on it.",
        "The statements of Lemmas 4.1–4.2 were not read (RECONSTRUCTED from a slide): what is "
        "checked is the reduction the slide describes.",
    ]
    headline = {"max_sym_dev": float(table.max_sym_dev.max()),
                "max_rel_diff": float(table.max_rel_diff_alpha_gamma_rho.max())}

    def figure(fig):
        ax = fig.add_subplot(1, 1, 1)
        for (D, C), g in traj.groupby(["D", "C"]):
            ax.plot(g.step.clip(lower=1), g.sym_dev_brute.clip(lower=1e-18), label=f"D={D}, C={C}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.axhline(SYM_TOL, color="k", ls="--", label="tolerance")
        ax.set_xlabel("GD step")
        ax.set_ylabel("sym_dev (brute force)")
        ax.legend(fontsize=7)

    return ClaimResult("lemma4.1-4.2", table, verdict, headline, reading,
                       extra={"trajectory": traj}, figure=figure)


CLAIM = Claim(
    id="lemma4.1-4.2",
    title="Lemmas 4.1–4.2 (reduction to alpha, gamma, rho)",
    label="RECONSTRUCTED",
    source="digest §4.3 (a seminar slide, S2, names the lemmas; the statements were not read)",
    statement="Along GD on (P) from v⁰ = α⁰ w* and a partition-symmetric A⁰, v stays parallel to "
    "w* and A stays partition-symmetric: A_ii = a, A_ij = γ (same set), ρ (different sets).",
    measured="sym_dev = max |A − (its partition-symmetric projection)| along brute-force GD on "
    "every entry of A; difference of (α, γ, ρ) from the exchangeable engine.",
    predicted="sym_dev at rounding level; identical (α, γ, ρ) trajectories.",
    run=run,
)

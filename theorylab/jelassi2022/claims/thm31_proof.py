"""Theorem 3.1's symmetric GLM against the proof (a derivation check): on Assumption 2's own
family q = C^k/D (k = 2, 3, 4) the exact error of the best GLM along the uniform direction,
sign(Σ_j c_j), in closed form ([`glm_best_error`][theorylab.jelassi2022.predictions.glm.
glm_best_error]) and by enumeration (D ≤ ``D_ENUM``), against the proved Paley–Zygmund bound
([`pz_bound`][theorylab.jelassi2022.predictions.glm.pz_bound]).

Judged: the closed form equals the enumeration (within ``ENUM_TOL`` of the predicted shift
``ENUM_SHIFT`` = 0); the exact error is at least ``BOUND_FACTOR`` × the proved bound at every
point (the proof says at least 1×); inside the proved region (Assumption 2 and
C²/(q(D − C)) ≤ 1 − √3/2) every exact error is at least 1/8. The proof settles these points, so
the check tests our closed form, enumeration and proof against each other, not the paper (the
free-direction GLM of [`thm31`][theorylab.jelassi2022.claims.thm31] is the theorem check).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from theorylab.core import claims as cc
from theorylab.core.claims.verdict import Verdict
from theorylab.core.figures.axes import style_axes

from ..config import PAPER_NAME
from ..predictions.glm import BOUND, X_PROVED, glm_best_error, glm_exact_errors, pz_bound

__all__ = ["CLAIM", "THRESHOLDS", "PREDICTIONS", "COUNTERFACTUALS", "judge", "family"]

#: the enumeration (convolution over sets) runs beside the closed form up to this D.
D_ENUM = 64
#: the unit of ENUM_SHIFT and ENUM_TOL (the resolution search steps from 1e-4 units).
ENUM_UNIT = 1e-12

THRESHOLDS = (
    cc.Threshold("ENUM_TOL", 1.0, "derived bound",
                 "two float64 sums of the same finite law (each term rounded to ~1e-16, at most a "
                 "few thousand terms): 1e-12", role="|closed form − enumeration − ENUM_SHIFT|, in "
                 "units of 1e-12"),
)
PREDICTIONS = (
    cc.Prediction("ENUM_SHIFT", 0.0, "shift", "closed form minus enumeration of the best-GLM error "
                  "(units of 1e-12)",
                  "derived", check="proofs_checks/jelassi2022/check_glm_closed_form.py",
                  tolerance="ENUM_TOL"),
)
#: the nearest wrong closed forms: off by two rounding budgets either way (a wrong tie weight or
#: a dropped term moves it by far more; these are the smallest offsets the check must see), in
#: units of ENUM_UNIT.
COUNTERFACTUALS = (
    cc.Counterfactual("closed form 2e-12 low", "the closed form lies 2e-12 below the enumeration",
                      {"ENUM_SHIFT": -2.0}),
    cc.Counterfactual("closed form 2e-12 high", "the closed form lies 2e-12 above the "
                      "enumeration", {"ENUM_SHIFT": 2.0}),
    cc.Counterfactual("closed form off by 0.01", "the closed form differs from the enumeration "
                      "by 0.01 (a wrong tie weight)", {"ENUM_SHIFT": 1e10}),
)

#: the powers k of the family q = C^k/D (Assumption 2: q = poly(C)/D) and the set sizes C.
FAMILY_K = (2, 3, 4)
FAMILY_C = (2, 3, 4, 6, 8)
def _grid(quick: bool):
    anchors = (8, 16, 64, 256, 1024) if quick else (
        6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048, 4096)
    for k in FAMILY_K:
        for C in FAMILY_C:
            first = C * max(2, C ** k // C + 1)  # the smallest D = multiple of C with q < 1
            Ds = sorted({first, *(a + (-a) % C for a in anchors)})
            for D in Ds:
                if D >= max(first, 2 * C):
                    yield k, C, D, C ** k / D


def _point(k: int, C: int, D: int, q: float) -> dict:
    n = D - C
    return {"k": k, "C": C, "D": D, "q": q, "x": C * C / (n * q), "spurious": n * q,
            "assumption2": bool(q < 1 and n * q > C), **glm_best_error(D, C, q),
            "pz_bound": pz_bound(D, C, q),
            "err_enum": glm_exact_errors(D, C, q)["err_best_glm"] if D <= D_ENUM else math.nan}




def family(quick: bool) -> pd.DataFrame:
    """The family table (one row per point)."""
    return pd.DataFrame([_point(*p) for p in _grid(quick)])


def _inside(t: pd.DataFrame) -> pd.Series:
    return t.assumption2.astype(bool) & (t.x <= X_PROVED)


def judge(tables: dict[str, pd.DataFrame], values=None) -> Verdict:
    """See the module."""
    th = cc.threshold_values((*THRESHOLDS, *PREDICTIONS), values)
    t = tables["table"]
    if not len(t) or t.err_best_glm.isna().any():
        return Verdict("inconclusive", ("no exact GLM errors",))
    enum = t.dropna(subset=["err_enum"])
    gap = ((enum.err_best_glm - enum.err_enum) / ENUM_UNIT - th["ENUM_SHIFT"]).abs()
    bad = []
    if len(enum) and gap.max() > th["ENUM_TOL"]:
        bad.append(f"closed form − enumeration − {th['ENUM_SHIFT'] * ENUM_UNIT:g} up to "
                   f"{gap.max() * ENUM_UNIT:.1e}")
    low = t[t.err_best_glm < t.pz_bound - 1e-15]
    if len(low):
        r = low.iloc[0]
        bad.append(f"{len(low)} points below the proved bound (e.g. "
                   f"k={r.k:g}, C={r.C:g}, D={r.D:g}: {r.err_best_glm:.4f} vs "
                   f"{r.pz_bound:.4f})")
    inside = t[_inside(t)]
    if not len(inside):
        return cc.premise_failed("no point inside the proved region")
    under = inside[inside.err_best_glm < BOUND]
    if len(under):
        bad.append(f"{len(under)} points inside the proved region below 1/8")
    if bad:
        return Verdict("disagrees", tuple("our derivation against itself: " + b for b in bad))
    return Verdict("agrees", (f"closed form = enumeration to {gap.max() * ENUM_UNIT:.1e} on "
                              f"{len(enum)} points; exact ≥ proved bound at all {len(t)} points "
                              "(smallest ratio "
                              f"{(t.err_best_glm / t.pz_bound.replace(0, np.nan)).min():.2f}"
                              f"); {len(inside)} points inside the proved region, lowest "
                              f"{inside.err_best_glm.min():.4f} ≥ 1/8",))


def run(quick: bool) -> cc.ClaimResult:
    t = family(quick)
    v = judge({"table": t})
    inside = t[_inside(t)]
    out = t[t.assumption2.astype(bool) & ~_inside(t)]
    below = t[t.err_best_glm < BOUND]
    reading = [
        f"Exact best-GLM error (uniform direction, ties by a coin) on q = C^k/D: {len(inside)} "
        f"points inside the proved region, lowest {inside.err_best_glm.min():.4f}; "
        f"{len(out)} points of Assumption 2 outside it, lowest {out.err_best_glm.min():.4f}; "
        f"{len(below)} points below 1/8 (all outside the proved region: "
        + ", ".join(f"k={r.k:g}, C={r.C:g}, D={r.D:g} ({r.err_best_glm:.4f})"
                    for r in below.itertuples()) + ").",
    ]
    brief = (f"closed form = enumeration, ≥ proved bound at {len(t)} points; "
             f"{len(inside)} in the proved region ≥ {inside.err_best_glm.min():.3f} (exact)")
    headline = {"min_in_region": float(inside.err_best_glm.min()), "n_in_region": len(inside)}

    def figure(fig):
        ax = fig.add_subplot(1, 1, 1)
        for (k, C), g in t.groupby(["k", "C"]):
            ax.plot(g.x, g.err_best_glm, "o-", ms=3, label=f"q = C^{k}/D, C={C}")
        ax.plot(t.x, t.pz_bound, "k.", ms=2, label="proved bound")
        ax.axhline(BOUND, color="k", ls="--", label="1/8")
        ax.axvline(X_PROVED, color="grey", ls=":", label="proved region x ≤ 1 − √3/2")
        style_axes(ax, "x = C² / (q (D - C))", "best GLM error (exact)", log="x",
                   legend={"fontsize": 6, "ncol": 2})

    return cc.ClaimResult("thm3.1-proof", t, v, headline, reading, figure=figure, brief=brief)


CLAIM = cc.Claim(
    **cc.declared(globals(), PAPER_NAME),
    id="thm3.1-proof",
    kind="derivation check",
    title="Theorem 3.1: the symmetric GLM against the proof",
    label="FOUND",
    source="notes §4.1; the closed form and the Paley–Zygmund bound are ours "
    "(proofs_checks/jelassi2022/check_glm_bound.py, check_glm_closed_form.py)",
    statement="The best GLM along the uniform direction errs with probability "
    "½P[|R| > C] + ¼P[|R| = C] (closed form), at least the proved bound, and at least 1/8 "
    "inside the proved region.",
    measured="Closed form, enumeration (D ≤ 64) and proved bound on q = C^k/D, k = 2, 3, 4, "
    "C = 2–8, D up to 4096.",
    predicted="closed form = enumeration to 1e−12; exact ≥ bound everywhere; ≥ 1/8 inside.",
    premises=("some point inside the proved region",),
    seeds="none (exact)",
    interval=cc.IntervalMethod("exact"),
    settings={"q": "C^k/D, k = 2, 3, 4", "C": "2, 3, 4, 6, 8", "D": "up to 4096",
              "enumeration": f"D ≤ {D_ENUM}"},
    reconstructed="nothing: the symmetric GLM is settled by the proof.",
    untested="Free-direction GLMs (the theorem check thm3.1).",
)

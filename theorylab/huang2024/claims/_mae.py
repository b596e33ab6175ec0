"""What the MAE claims (thm4.1, thm4.1-eps, thm4.2, phases-reduction) share: the reading
variants, the measurement of one reading (cached in this process, so the claims read the
same runs), and the local slopes they read.

Measurement ([`measure`][]) for one reading of the coefficient law and of the masked keys:
the two size families at fixed Δ over the ladder P = n⁴ (``setups.ladder``) with the
``population-reduced`` engine, the ε ladder at one P per family, and the first GD step near
the Phase I boundary up to P = 10⁸ (``setups.boundary_table``). The step-size reading does
not change a run: it picks the axis x the phase lengths are read against.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pandas as pd

from theorylab.core import claims as cc
from theorylab.core.claims.verdict import Verdict

from ..phases import EPS_REL
from ..predictions.asymptotics import local_slopes, sub_ladders
from ..setups import (
    ETA_Q,
    FAMILIES,
    boundary_table,
    crossing_table,
    eps_ladder,
    eps_ladder_P,
    eps_table,
    ladder,
    ladder_table,
)

__all__ = ["VARIANTS", "N_SUB", "measure", "reading_columns", "mae_settings", "readings_text",
           "x_axis", "slope_row", "ladder_decades", "ladder_premises"]

#: The reconstruction choices that can change the MAE verdicts, each a variant.
VARIANTS = (
    cc.Variant("coefficient_law",
               cc.Reading("uniform", "z ~ U[0.5, 1.5] (the notes' §9 setting)", "paper notes"),
               (cc.Reading("one", "z ≡ 1 (a point law)", "project choice"),),
               "the paper allows any law of the area coefficients on [L, U] (FOUND); the "
               "crossing value −(Δ/2) ln P is exact for z ≡ 1, while a spread law's lowest "
               "coefficients take over the global attention once |Φ|(U − L) ≫ 1"),
    cc.Variant("masked_keys",
               cc.Reading(True, "masked keys in the softmax (their positional logit only)",
                          "paper notes"),
               (cc.Reading(False, "masked keys left out of the softmax", "paper notes"),),
               "whether masked keys enter the softmax was not read (notes §2.2, UNCERTAIN); it "
               "moves the Phase I boundary and the constants of every phase"),
    cc.Variant("eta",
               cc.Reading("per-query", "η in P^{1−κ_c}/η is the per-query step η_q = η/P",
                          "project choice"),
               (cc.Reading("loss", "η in P^{1−κ_c}/η is the step of the 1/P-normalised loss",
                           "project choice"),),
               "the paper's step-size convention was not read (notes §4.1: η ≪ poly(P)); with the "
               "1/P loss normalisation a query's gradient carries 1/P, so the runs step with "
               "η = η_q·P, and the phase-length scale P^{1−κ_c}/η reads (P/C)/η_q or (P/C)/η"),
)

#: The ladder is read on this many consecutive sub-ladders (equal shares of ln P).
N_SUB = 3


@lru_cache(maxsize=16)
def _measure(quick: bool, z_law: str, mask_keys: bool) -> tuple:
    lad = ladder_table(tuple(FAMILIES), ladder(quick), mask_keys=mask_keys, z_law=z_law)
    eps = pd.concat([eps_table(f, eps_ladder_P(quick), mask_keys=mask_keys, z_law=z_law,
                               eps=eps_ladder(quick)) for f in FAMILIES], ignore_index=True)
    bnd = boundary_table(quick, mask_keys=mask_keys, z_law=z_law)
    cross = crossing_table(quick, mask_keys=mask_keys, z_law=z_law)
    return lad, eps, bnd, cross


def measure(quick: bool, readings: dict) -> dict[str, pd.DataFrame]:
    """The tables of one reading (copies; cached runs): ``ladder``, ``eps``, ``boundary`` and
    ``crossing`` (the end of Phase I beyond the ladder, up to P ≈ 10⁶), each with the reading
    columns (``coefficient_law``, ``masked_keys``, ``eta``)."""
    lad, eps, bnd, cross = _measure(bool(quick), str(readings["coefficient_law"]),
                             bool(readings["masked_keys"]))
    cols = reading_columns(readings)
    return {k: t.copy().assign(**cols) for k, t in
            (("ladder", lad), ("eps", eps), ("boundary", bnd), ("crossing", cross))}


def reading_columns(readings: dict) -> dict:
    """The reading values as table columns."""
    return {"coefficient_law": str(readings["coefficient_law"]),
            "masked_keys": bool(readings["masked_keys"]), "eta": str(readings["eta"])}


def x_axis(t: pd.DataFrame) -> np.ndarray:
    """The phase-length scale of each row under its ``eta`` reading: (P/C)/η_q
    ("per-query") or (P/C)/η with η = η_q·P ("loss")."""
    x = (t.P / t.C / ETA_Q).to_numpy(dtype=np.float64)
    if "eta" in t and (t["eta"] == "loss").any():
        x = np.where(t["eta"] == "loss", x / t.P.to_numpy(dtype=np.float64), x)
    return x


def ladder_decades(P) -> float:
    """log10(P_max/P_min)."""
    P = np.asarray(P, dtype=np.float64)
    return float(np.log10(P.max() / P.min())) if P.size else 0.0


def ladder_premises(lad: pd.DataFrame, min_decades: float) -> Verdict | None:
    """``inconclusive`` when a family's ladder spans fewer than `min_decades` decades (or there
    is none) or a rung did not reach t_I, t_II or T* inside its horizon; None when both hold."""
    short = [f"{f}: {ladder_decades(g.P):.2f} decades" for f, g in lad.groupby("family")
             if ladder_decades(g.P) < min_decades]
    if short or not len(lad):
        return cc.premise_failed("ladder shorter than "
                                 f"{min_decades:g} decades ({'; '.join(short)})")
    cens = lad[~np.isfinite(lad.t_II) | ~np.isfinite(lad.T_star) | ~np.isfinite(lad.t_I)]
    if len(cens):
        return Verdict("inconclusive", tuple(
            f"premise failed: inside the horizon: P={r.P:g} ({r.family}) did not reach t_I, "
            f"t_II or T*" for r in cens.itertuples()))
    return None


def slope_row(name: str, x, y, rungs, *, n: int = N_SUB, log_x: bool = True,
              log_y: bool = True) -> dict:
    """The local slopes of y against x on the `n` sub-ladders of `rungs` (the values that set
    the sub-ladders, e.g. P): ``slopes``, ``top``, ``drift``, the rungs of the top one, each
    sub-ladder's (lowest, highest) rung ``sub_rungs`` and the geometric middle ``x`` of its
    rungs."""
    g = sub_ladders(rungs, n)
    ls = local_slopes(x, y, g, log_x=log_x, log_y=log_y)
    rungs = np.asarray(rungs, dtype=np.float64)
    ls["name"] = name
    ls["top_rungs"] = rungs[g[-1]] if g else np.array([])
    ls["sub_rungs"] = [(float(rungs[i].min()), float(rungs[i].max())) for i in g]
    ls["x"] = [float(math.sqrt(a * b)) for a, b in ls["sub_rungs"]]
    return ls


def mae_settings(**more) -> dict:
    """The settings the MAE claims' runs share (start, per-query step, γ, ε), and `more`."""
    return {"Q⁰": 0, "η_q": 2.0, "γ": 0.5, "ε": EPS_REL, **more}


def readings_text(readings: dict, z_min: float | None = None) -> str:
    """The readings of a run in words (with the lowest coefficient `z_min` when given)."""
    z = "" if z_min is None else f" (z_min = {z_min:g})"
    return (f"readings: coefficients {readings['coefficient_law']}{z}, masked keys "
            f"{'in' if readings['masked_keys'] else 'out'}, η reading {readings['eta']}")

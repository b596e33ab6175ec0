"""Hand-made tables of the MAE ladders (thm4.1, thm4.1-eps, thm4.2, thm4.2-laws): shared by the
claims' unit tests."""

from __future__ import annotations

import math

import pandas as pd

from theorylab.huang2024.predictions.asymptotics import crossing_law, phase_one_length

NAN = math.nan
NS = range(3, 17)


def _phase_one_scale() -> float:
    C1 = 81.0 ** ((1 + 0.65 + 0.25) / 2)
    return 1.3 * (81 / 3 / 2) / phase_one_length(81.0, C1, 3.0, 0.5, 1.5, 0.5, 0.5)


_T_I_SCALE = _phase_one_scale()


def _ladder(*, cross="law", t_exp=1.0, neg_phase=False, nan_T=False, ns=NS, phi_own_exp=1.0,
            eta="per-query", own_exp=0.0, late_phase=False):
    rows = []
    for fam, D in (("pos", 0.65), ("neg", -0.25)):
        for n in ns:
            P, C = float(n ** 4), float(n)
            x = P / C / 2
            C1 = P ** ((1 + D + 0.25) / 2)
            # Δ > 0: the length of Phase I in the finite-P crossing law (its local exponent
            # against x rises through 1 on the ladder), 1.3 x at P = 81, times x^{t_exp − 1}
            t_I = (phase_one_length(P, C1, C, 0.5, 1.5, 0.5, 0.5) * _T_I_SCALE
                   * x ** (t_exp - 1) if fam == "pos" else 1.0)
            # the uniform law's finite-P crossing (its limit −(Δ/(2·0.5)) ln P), or the notes'
            # −(Δ/2) ln P that ignores the coefficients' spread (cross = "notes")
            phi, attn = crossing_law(P, C1, C, 0.5, 1.5, 0.5, 0.5)
            if cross == "notes":
                phi = -(D / 2) * math.log(P)
            rows.append({
                "family": fam, "P": P, "C1": C1, "C": C, "delta": D, "delta_target": D,
                "delta_rounding": 0.0, "x_phase": x, "phase_I": fam == "pos" or neg_phase,
                "dphi_glob_1": -0.1, "dphi_own_1": 0.01, "t_I": t_I,
                "phi_glob_end_I": phi,
                "attn_glob_end_I": attn,
                "t_II": (0.5 if late_phase else 3.0) * x ** t_exp,
                "T_star": NAN if nan_T and n == 5 else 3.3 * x ** t_exp + 2,
                "len_I": t_I, "len_II": 1.7 * x, "phi_own_T": 0.8 * math.log(P) ** phi_own_exp,
                "attn_own_T": 0.7 * (1 - 0.5 / math.log(P)) * P ** own_exp,
                "attn_own_max": 1 - 0.5 ** (C - 1), "neglect": 1e-3,
                "loss_monotone": True, "steps_run": 4 * x, "final_rel_excess": 0.05,
                "coefficient_law": "uniform", "masked_keys": True, "eta": eta})
    return pd.DataFrame(rows)


def _eps(gap_exp=0.5, tail="inverse", end=1e-4):
    from theorylab.huang2024.setups import EPS_LADDER

    rows = []
    for fam in ("pos", "neg"):
        for e in EPS_LADDER:
            # the phases' 500 steps, then a tail in 1/ε (derived), in log(1/ε), or in ε^{-k}
            k = {"inverse": 1.0, "log": 0.0, "steep": 1.5}[tail]
            T = 500 + (50 * math.log(0.2 / e) if k == 0 else 2 / e ** k)
            rows.append({"family": fam, "P": 4096.0, "C1": 2704, "C": 8, "delta": 0.65,
                         "eps_rel": e, "T_star": T, "t_II": 80.0, "phi_own_T": 6.0,
                         "attn_own_T": 0.99 - 3 * e ** gap_exp, "attn_own_max": 0.99,
                         "attn_gap_T": 3 * e ** gap_exp, "final_rel_excess": end,
                         "coefficient_law": "uniform", "masked_keys": True})
    return pd.DataFrame(rows)


def _boundary(flip=False):
    rows = []
    for P in (256.0, 65536.0, 1e8):
        for D in (-0.2, -0.1, -0.05, 0.05, 0.1, 0.2):
            rows.append({"kind": "grid", "delta_target": D, "P": P, "C": P ** 0.25, "C1": 1,
                         "delta": D, "phase_I": (D > 0) != flip, "ratio": 1.0})
        rows.append({"kind": "boundary", "delta_target": NAN, "P": P, "C": P ** 0.25, "C1": 1,
                     "delta": 0.7 / math.log(P), "phase_I": True, "ratio": 1.0})
    return pd.DataFrame(rows)


def _t42(**kw):
    eps = kw.pop("eps", _eps())
    bnd = kw.pop("boundary", _boundary())
    lad = _ladder(**kw)
    cross = pd.DataFrame(columns=["P", "C1", "C", "delta", "t_I", "phi_glob_end_I",
                                  "attn_glob_end_I"])
    return {"table": lad, "eps": eps, "boundary": bnd, "crossing": cross}

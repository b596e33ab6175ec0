"""Hand-made CL tables for the Theorem 4.4 checks (thm4.4 and thm4.4-plateau): the rows of
``setups.cl_measure_all`` for one temperature, with the MAE arm and the mild-imbalance ladder,
and the reduced-direction rows of ``setups.cl_reduced_measure``."""

from __future__ import annotations

import math

import pandas as pd

NAN = math.nan


def t44(glob=(0.64, 0.63, 0.62), pred=(0.64, 0.63, 0.60), exists=True, tau=0.1, seeds=(0, 1, 2),
        drift=0.0, jitter=0.01, phi_l=0.05, Ps=(32, 64, 128), mae_own=0.7, mae_moved=0.01,
        cl_own=0.03, mild=None, mild_seeds=(0, 1, 2), jensen=None, jensen_exists=True,
        steps=200, objective="cl"):
    """One temperature's CL rows (``objective``: ``cl``, or ``cl-reduced`` for the
    reduced-direction runs), the MAE arm's and the mild ladder's (none with ``cl-reduced``)."""
    jensen = jensen or tuple(0.85 * p for p in pred)
    rows = []
    for k in seeds:
        e = (k - 1) * jitter
        for P, g, p, j in zip(Ps, glob, pred, jensen):
            rows.append({"objective": objective, "tau": tau, "negatives": 15.0, "seed": k,
                         "P": P, "delta": 0.25, "rho": 0.35, "init_glob_lq": 0.35,
                         "init_own_lq": 0.05, "end_glob_lq": g + e,
                         "drift_glob_lq": drift + (k - 1) * 0.01, "steps": steps,
                         "end_own_lq": cl_own, "end_glob_gq": g + e, "end_phi_own_lq": phi_l,
                         "own_change_last_fifth": 0.0, "pred_exists": exists,
                         "pred_glob": p if exists else 1.0, "tau_c": 0.21,
                         "pred_exists_jensen": jensen_exists,
                         "pred_glob_jensen": j if jensen_exists else 1.0,
                         "tau_c_jensen": 0.25})
        for P in Ps:
            rows.append({"objective": "mae", "tau": NAN, "negatives": NAN, "seed": k, "P": P,
                         "delta": 0.25, "rho": 0.35, "init_glob_lq": 0.35, "init_own_lq": 0.05,
                         "end_glob_lq": 0.2, "drift_glob_lq": 0.0, "end_own_lq": mae_own,
                         "end_glob_gq": 0.9, "end_phi_own_lq": 3.0,
                         "own_change_last_fifth": mae_moved,
                         "pred_exists": NAN, "pred_glob": NAN, "tau_c": NAN,
                         "pred_exists_jensen": NAN, "pred_glob_jensen": NAN,
                         "tau_c_jensen": NAN})
    for k in mild_seeds:  # the mild-imbalance ladder (its own global attention)
        for P, g in zip(Ps, mild or glob):
            rows.append({"objective": "cl-mild", "tau": tau, "negatives": 15.0, "seed": k,
                         "P": P, "delta": 0.1, "rho": 0.25, "init_glob_lq": 0.25,
                         "init_own_lq": 0.05, "end_glob_lq": g + (k - 1) * jitter,
                         "drift_glob_lq": 0.0, "end_own_lq": cl_own,
                         "end_glob_gq": g + (k - 1) * jitter, "end_phi_own_lq": phi_l,
                         "own_change_last_fifth": 0.0})
    return {"table": pd.DataFrame(rows)}


def taus(*tables):
    """One table of several temperatures (the MAE arm, which has no τ, once)."""
    out = [tables[0]["table"]] + [t["table"][t["table"].objective != "mae"] for t in tables[1:]]
    return {"table": pd.concat(out, ignore_index=True)}



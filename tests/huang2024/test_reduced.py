"""The derived reduced population dynamics (``predictions.reduced_gd`` and its pieces): exact
against the engines' gradient where the derivation is exact (Φ_rest = 0), and the phase
readings of the ladder runs within the declared neglected order."""

from __future__ import annotations

import math

import numpy as np
import pytest

from theorylab.huang2024 import config_from_dict, make_engine
from theorylab.huang2024.ladders import (
    FAMILIES,
    derived_run,
    derived_summary,
    family_sizes,
    gd_run,
    mae_config,
    phase_summary,
)
from theorylab.huang2024.predictions import (
    _z_rule,
    phase_one_prediction,
    query_classes,
    reduced_gradient,
)


def _cfg(P, C1, C, engine="population-exact", K=1):
    return config_from_dict({
        "data": {"P": P, "K": K, "C1": C1, "C": C, "z_law": "values",
                 "z_values": [0.5, 1.0, 1.7], "z_probs": [0.2, 0.5, 0.3], "U": 2.0},
        "model": {"mask": "bernoulli", "gamma": 0.4, "mask_keys": True, "loss_norm": "P"},
        "train": {"engine": engine, "lr": 3.0}}).resolved()


def _set_state(prm, labels, thetas):
    """Every query row in its class's reduced state (Φ_own, Φ_trk, Φ_rest, Υ_self, Υ_own,
    Υ_trk, Υ_rest)."""
    P = len(labels)
    for p in range(P):
        j = labels[p]
        th = thetas["local" if j else "global"]
        prm.Phi[p, :] = th[2]
        prm.Phi[p, j] = th[0]
        own, glob = labels == j, labels == 0
        prm.Ups[p, :] = th[6]
        if j:
            prm.Phi[p, 0] = th[1]
            prm.Ups[p, glob] = th[5]
        prm.Ups[p, own] = th[4]
        prm.Ups[p, p] = th[3]


@pytest.mark.parametrize("phi_rest", [0.0, 0.4])
def test_reduced_gradient_equals_the_exact_engine(phi_rest):
    P, C1, C = 10, 4, 2
    cfg = _cfg(P, C1, C)
    eng = make_engine(cfg)
    lab = cfg.data.make_structure().labels[0]
    thetas = {"local": np.array([0.7, -1.3, phi_rest, 0.05, 0.3, -0.02, 0.01]),
              "global": np.array([1.1, 0.0, phi_rest, -0.1, 0.2, 0.0, 0.03])}
    prm = eng.initial_params()
    _set_state(prm, lab, thetas)
    ev = eng.evaluate(prm, 0, need_grad=True, record=True)
    zn, zp = _z_rule(cfg)
    qcs = query_classes(P, C1, C)
    w = cfg.model.gamma / P  # the query's weight P[p masked]·norm/K
    losses = {}
    for name, qc in qcs.items():
        ell, attn, g, _ = reduced_gradient(thetas[name], qc, cfg.model.gamma, zn, zp)
        losses[name] = ell
        p = int(np.flatnonzero((lab != 0) == (name == "local"))[0])
        j = lab[p]
        GP, GU = ev.grads["Phi"][p] / w, ev.grads["Ups"][p] / w
        other = [m for m in range(GP.size) if m not in (0, j)][0]
        own = (lab == j) & (np.arange(P) != p)
        rest = (lab != j) & (lab != 0)
        eng_g = [GP[j], GP[0] if j else 0.0, GP[other], GU[p], GU[own].mean(),
                 GU[lab == 0].mean() if j else 0.0, GU[rest].mean()]
        scale = np.max(np.abs(eng_g))
        exact = [0, 1, 3, 4, 5, 6]
        if phi_rest == 0.0:
            # exact derivation: equal to float64 rounding of two different sums (1e-12)
            assert np.max(np.abs(g[exact] - np.array(eng_g)[exact])) < 1e-12 * scale
        else:
            # the mean-field rest: off at the neglected order, far above rounding
            assert 1e-9 * scale < np.max(np.abs(g[exact] - np.array(eng_g)[exact])) < 0.05 * scale
        # the rest area's own Φ entry: its single-area covariance terms are dropped, a
        # relative error of order 1/n_rest (n_rest = 2 and 3 here)
        assert abs(g[2] - eng_g[2]) <= abs(eng_g[2]) / qc.n_rest
        if name == "local" and phi_rest == 0.0:
            assert attn == pytest.approx(ev.attn["attn_own_lq"], rel=1e-12)
    if phi_rest == 0.0:
        loss = w * (C1 * losses["global"] + (P - C1) * losses["local"])
        assert loss == pytest.approx(ev.loss, rel=1e-12)


def test_derived_phases_match_the_engine_on_small_ladders():
    """The quick-mode rungs: the phase steps and T* equal, Φ_glob(t_I) within the declared
    tolerance |Φ|·√v; with no rest area (P = 16, Δ > 0: C1 = 14, C = 2) exact to rounding."""
    gaps = []
    for P in (16, 36):
        for ks, kc in FAMILIES.values():
            C1, C = family_sizes(P, ks, kc)
            eng = phase_summary(gd_run(P, C1, C), P, C1, C)
            d = derived_summary(P, C1, C)
            for k in ("t_I", "t_II", "T_star", "phase_I"):
                assert eng[k] == d[f"{k}_derived"], (P, C1, C, k)
            gap = abs(eng["phi_glob_end_I"] - d["phi_glob_end_I_derived"])
            assert gap <= abs(d["phi_glob_end_I_derived"]) * d["neglect"] + 1e-9
            gaps.append(gap)
            tr, te = derived_run(P, C1, C), gd_run(P, C1, C)
            n = min(len(tr), len(te))
            traj_gap = np.max(np.abs(tr.phi_glob_lq.to_numpy()[:n] - te.phi_glob_lq.to_numpy()[:n]))
            if (P - C1) // C == 1:  # one local area: no rest for a local query, one for a global
                assert traj_gap < 1e-9
    assert max(gaps) > 0  # the comparison is not vacuous


def test_end_value_gap_shrinks_at_least_at_its_stated_order():
    """Δ > 0 rungs P = 36 and 64: the gap of Φ_glob(t_I) shrinks at least as fast as the
    neglected order √v (measured 2.7e-5 → 9.3e-6 against √v 1.8e-3 → 1.3e-3)."""
    out = []
    for P in (36, 64):
        C1, C = family_sizes(P, *FAMILIES["pos"])
        eng = phase_summary(gd_run(P, C1, C), P, C1, C)
        d = derived_summary(P, C1, C)
        out.append((abs(eng["phi_glob_end_I"] - d["phi_glob_end_I_derived"]), d["neglect"]))
    (g36, n36), (g64, n64) = out
    assert n64 < n36 and g64 / g36 <= n64 / n36


def test_phase_one_prediction_and_its_premises():
    P, C1, C = 64, 52, 3
    out = phase_one_prediction(mae_config(P, C1, C).resolved())
    assert out["phase_I"] and out["t_I"] > 1 and out["t_II"] > out["t_I"]
    assert out["phi_glob_end_I"] < -0.5 and math.isfinite(out["T_star"])
    neg = phase_one_prediction(mae_config(64, 16, 8).resolved())
    assert not neg["phase_I"] and neg["t_I"] == 1.0
    # a uniform law without train.z_nodes: DEFAULT_Z_NODES, same readings as 6 nodes
    unset = config_from_dict({**mae_config(P, C1, C).to_dict(),
                              "train": {"lr": 2.0 * P, "z_nodes": 0}}).resolved()
    other = phase_one_prediction(unset, max_steps=60)
    assert other["t_I"] == out["t_I"]
    assert other["phi_glob_end_I"] == pytest.approx(out["phi_glob_end_I"], abs=1e-8)
    with pytest.raises(ValueError, match="one cluster"):
        phase_one_prediction(_cfg(10, 4, 2, K=2))
    bad = config_from_dict({"data": {"P": 16, "C1": 8, "C": 4}, "model": {"mask_keys": False},
                            "train": {"lr": 1.0}}).resolved()
    with pytest.raises(ValueError, match="masked keys"):
        phase_one_prediction(bad)

"""The ``population-reduced`` engine (``theorylab.huang2024.engines._reduced``) and the derived
reduced dynamics built on it (``predictions.reduced``): exact against the engines' gradient
where the reduction is exact (φ_rest = 0), off at the neglected order otherwise; its Gauss rule
for large counts against exact sums; numpy against torch; L* with masked keys left out; the
phase readings of whole runs against the exact engine on small rungs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests._backends import assert_close
from theorylab.core.backend import get_backend
from theorylab.huang2024 import config_from_dict, make_engine
from theorylab.huang2024.data import zlaw_nodes
from theorylab.huang2024.engines._reduced import (
    EXPAND_MAX_P,
    _ClassGrid,
    class_terms,
    count_rule,
    query_classes,
)
from theorylab.huang2024.phases import read_phases
from theorylab.huang2024.predictions import phase_one_prediction
from theorylab.huang2024.setups import family_sizes, mae_config, mae_run


def _cfg(P, C1, C, engine="population-exact", K=1, mask_keys=True):
    return config_from_dict({
        "data": {"P": P, "K": K, "C1": C1, "C": C, "z_law": "values",
                 "z_values": [0.5, 1.0, 1.7], "z_probs": [0.2, 0.5, 0.3], "U": 2.0},
        "model": {"mask": "bernoulli", "gamma": 0.4, "mask_keys": mask_keys, "loss_norm": "P"},
        "train": {"engine": engine, "lr": 3.0}}).resolved()


def _set_state(prm, labels, thetas):
    """Every query row in its class's reduced state (Φ_own, Φ_trk, Φ_rest, Υ_self, Υ_own,
    Υ_trk, Υ_rest)."""
    for p in range(len(labels)):
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


@pytest.mark.parametrize("mask_keys", [True, False])
@pytest.mark.parametrize("phi_rest", [0.0, 0.4])
def test_class_gradient_equals_the_exact_engine(phi_rest, mask_keys):
    P, C1, C = 10, 4, 2
    cfg = _cfg(P, C1, C, mask_keys=mask_keys)
    eng = make_engine(cfg)
    lab = cfg.data.make_structure().labels[0]
    thetas = {"local": np.array([0.7, -1.3, phi_rest, 0.05, 0.3, -0.02, 0.01]),
              "global": np.array([1.1, 0.0, phi_rest, -0.1, 0.2, 0.0, 0.03])}
    prm = eng.initial_params()
    _set_state(prm, lab, thetas)
    ev = eng.evaluate(prm, 0, need_grad=True, record=True)
    z, pz = zlaw_nodes("values", 0, 2, [0.5, 1.0, 1.7], [0.2, 0.5, 0.3])
    w = cfg.model.gamma / P  # the query's weight P[p masked]·norm/K
    losses = {}
    for name, qc in query_classes(P, C1, C).items():
        grid = _ClassGrid(qc, cfg.model.gamma, z, pz, mask_keys, 0, get_backend("numpy"))
        t = class_terms(grid, thetas[name], True)
        g = t["grad"]
        losses[name] = t["ell"]
        p = int(np.flatnonzero((lab != 0) == (name == "local"))[0])
        j = lab[p]
        GP, GU = ev.grads["Phi"][p] / w, ev.grads["Ups"][p] / w
        other = [m for m in range(GP.size) if m not in (0, j)][0]
        own = (lab == j) & (np.arange(P) != p)
        rest = (lab != j) & (lab != 0)
        eng_g = [GP[j], GP[0] if j else 0.0, GP[other], GU[p], GU[own].mean(),
                 GU[lab == 0].mean() if j else 0.0, GU[rest].mean()]
        scale = np.max(np.abs(eng_g))
        exact = [0, 1, 4, 5, 6] if not mask_keys else [0, 1, 3, 4, 5, 6]
        if phi_rest == 0.0:
            # exact reduction: equal to float64 rounding of two different sums (1e-12)
            assert np.max(np.abs(g[exact] - np.array(eng_g)[exact])) < 1e-12 * scale
        else:
            # the mean-field rest: off at the neglected order, far above rounding
            assert 1e-9 * scale < np.max(np.abs(g[exact] - np.array(eng_g)[exact])) < 0.1 * scale
        # one rest area's own Φ entry: its single-area covariance terms are dropped, a
        # relative error of order 1/n_rest (n_rest = 2 and 3 here)
        assert abs(g[2] - eng_g[2]) <= abs(eng_g[2]) / qc.n_rest + 1e-15
        if name == "local" and phi_rest == 0.0:
            assert t["attn_own"] == pytest.approx(ev.attn["attn_own_lq"], rel=1e-12)
    if phi_rest == 0.0:
        loss = w * (C1 * losses["global"] + (P - C1) * losses["local"])
        assert loss == pytest.approx(ev.loss, rel=1e-12)


def test_whole_run_equals_the_exact_engine_without_rest_areas():
    """P = 16, C1 = 14, C = 2: a local query has no rest area, so its readings along the whole
    run agree with population-laplace to 1e-9 (measured 3e-12); the loss also holds the global
    queries, whose rest (the single local area) is in mean field: off at its neglected order."""
    for mk in (True, False):
        red = mae_run(16, 14, 2, mask_keys=mk, count_nodes=0)
        n = int(red.step.iloc[-1])
        ex = mae_run(16, 14, 2, engine="population-laplace", mask_keys=mk, steps=n)
        for c in ("phi_glob_lq", "phi_own_lq", "attn_own_lq"):
            assert np.max(np.abs(red[c].to_numpy() - ex[c].to_numpy())) < 1e-9, (mk, c)
        assert 1e-9 < np.max(np.abs(red.loss.to_numpy() - ex.loss.to_numpy())) < 1e-4


def test_phase_readings_match_the_exact_engine_on_small_rungs():
    """The ladders' first rungs: t_I, t_II, T* equal, Φ_glob(t_I) within |Φ|·√v."""
    for fam in ("pos", "neg"):
        C1, C = family_sizes(fam, 81)
        red = mae_run(81, C1, C, count_nodes=0)
        ex = mae_run(81, C1, C, engine="population-laplace", steps=int(red.step.iloc[-1]))
        cfg = mae_config(81, C1, C)
        a, b = read_phases(ex, cfg), read_phases(red, cfg)
        for k in ("t_I", "t_II", "T_star", "phase_I"):
            assert a[k] == b[k], (fam, k)
        if a["phase_I"]:
            gap = abs(a["phi_glob_end_I"] - b["phi_glob_end_I"])
            assert gap <= abs(b["phi_glob_end_I"]) * red.neglect.max()


@pytest.mark.parametrize("N,q", [(40, 0.5), (2000, 0.5), (37647, 0.25)])
def test_count_rule_is_exact_on_polynomials(N, q):
    x, w = count_rule(N, q, 12)
    assert len(x) == 12 and w.sum() == pytest.approx(1.0, abs=1e-14)
    from scipy.stats import binom

    n = np.arange(N + 1, dtype=float)
    p = binom.pmf(n, N, q)  # the whole pmf (count_rule's exact sums cut its far tails)
    n_cut, _ = count_rule(N, q, 0)
    assert n_cut.size < n.size or N < 100
    u, v = ((a - N * q) / math.sqrt(N * q * (1 - q)) for a in (n, x))
    for k in range(0, 2 * 12):
        # the standardised moments, to rounding of the largest terms (|u|^k weighted)
        scale = max(1.0, float(p @ np.abs(u) ** k))
        assert abs(float(w @ v ** k) - float(p @ u ** k)) <= 1e-9 * scale, k


def test_gauss_rule_equals_exact_sums_along_a_run():
    """The ladders' 24-node rule against exact count sums, 40 steps at P = 4096 (Δ > 0):
    every trajectory column to 1e-12."""
    C1, C = family_sizes("pos", 4096)
    cfg = mae_config(4096, C1, C, engine="population-reduced")
    outs = []
    for nodes in (24, 0):
        eng = make_engine(cfg.replace(train={"count_nodes": nodes}))
        p = eng.initial_params()
        rows = []
        for s in range(40):
            ev = eng.evaluate(p, s, need_grad=True, record=True)
            rows.append(eng.record(p, s, ev))
            p = eng.apply(p, ev.grads)
        outs.append(rows)
    for c in ("loss", "phi_own_lq", "phi_glob_lq", "attn_own_lq", "phi_own_gq"):
        d = max(abs(a[c] - b[c]) for a, b in zip(*outs))
        assert d < 1e-12, c


def test_torch_backend_equals_numpy():
    C1, C = family_sizes("pos", 256)
    cfg = mae_config(256, C1, C, engine="population-reduced")
    runs = []
    for backend in ("numpy", "torch"):  # torch against the numpy reference
        eng = make_engine(cfg.replace(train={"backend": backend}))
        p = eng.initial_params()
        for s in range(15):
            ev = eng.evaluate(p, s, need_grad=True, record=False)
            p = eng.apply(p, ev.grads)
        runs.append((ev.loss, p.theta["local"].copy()))
    assert_close(runs[1][0], runs[0][0])  # rounding only (tests._backends.TOL)
    assert_close(runs[1][1], runs[0][1])


def test_expanded_state_reproduces_the_exact_loss():
    """The full (Φ, Υ) built from the reduced state, fed to the exact engine, give the reduced
    engine's readings: the local queries' attention exactly (P = 16, C1 = 14, C = 2 after 10
    steps: no rest area for them), the loss up to the global queries' mean-field rest."""
    cfg = mae_config(16, 14, 2, engine="population-reduced")
    eng = make_engine(cfg)
    p = eng.initial_params()
    for s in range(10):
        ev = eng.evaluate(p, s, need_grad=True, record=False)
        p = eng.apply(p, ev.grads)
    ev = eng.evaluate(p, 10, need_grad=False, record=False)
    ex = make_engine(mae_config(16, 14, 2, engine="population-exact"))
    prm = ex.initial_params()
    lab = ex.structure.labels[0]
    # the engine's layout: area 0 the first C1 patches; relabel to the exact engine's areas
    order = np.argsort(lab, kind="stable")
    Phi, Ups = p.Phi, p.Ups
    prm.Phi[order] = Phi
    prm.Ups[np.ix_(order, order)] = Ups
    exev = ex.evaluate(prm, 0, need_grad=False, record=True)
    assert exev.attn["attn_own_lq"] == pytest.approx(ev.terms["local"]["attn_own"], rel=1e-10)
    assert exev.attn["attn_glob_lq"] == pytest.approx(ev.terms["local"]["attn_trk"], rel=1e-10)
    assert exev.loss == pytest.approx(ev.loss, rel=1e-4)
    big = make_engine(mae_config(EXPAND_MAX_P * 4, *family_sizes("pos", EXPAND_MAX_P * 4),
                                 engine="population-reduced"))
    assert big.initial_params().Ups is None  # not built: Υ would be P×P


def test_theorylab_run_at_a_large_P(tmp_path):
    """``theorylab run`` with population-reduced at P = 16384: the trajectory, and the final
    state as the classes' seven numbers (no P×P array)."""
    from theorylab.huang2024 import run_experiment

    C1, C = family_sizes("pos", 16384)
    cfg = mae_config(16384, C1, C, engine="population-reduced").replace(train={"steps": 30})
    res = run_experiment(cfg, out=tmp_path, progress=False)
    assert res.Ups is None and len(res.trajectory) == 31
    assert set(np.load(tmp_path / "final_state.npz")) == {"theta_local", "theta_global"}


def test_lstar_with_masked_keys_out():
    """With masked keys out L* is computed (the reduced conditional minimum): below the loss
    at Q⁰ = 0 and above 0; a run's relative excess falls to its ε. The same minimisation with
    masked keys in reproduces the closed form (the masked self key absorbs the query)."""
    cfg = mae_config(256, 196, 4, mask_keys=False, engine="population-reduced")
    eng = make_engine(cfg)
    ev = eng.evaluate(eng.initial_params(), 0, need_grad=False, record=False)
    assert 0 < eng.lstar < ev.loss
    tr = mae_run(256, 196, 4, mask_keys=False)
    assert tr.rel_excess.iloc[-1] <= 0.05 and tr.rel_excess.min() > 0


def test_premises_name_the_field():
    cfg = _cfg(10, 4, 2, K=2)
    with pytest.raises(ValueError, match="data.K"):
        make_engine(cfg.replace(train={"engine": "population-reduced"}))
    bad = config_from_dict({"data": {"P": 16, "C1": 8, "C": 4},
                            "model": {"mask": "fixed", "mask_size": 8},
                            "train": {"engine": "population-reduced", "z_nodes": 4}})
    with pytest.raises(ValueError, match="model.mask"):
        make_engine(bad)
    with pytest.raises(ValueError, match="train.count_nodes"):
        config_from_dict({"data": {"P": 16, "C1": 8, "C": 4},
                          "train": {"engine": "population-exact", "count_nodes": 8,
                                    "z_nodes": 4}})


def test_phase_one_prediction():
    P, C1, C = 64, 52, 3
    out = phase_one_prediction(mae_config(P, C1, C))
    assert out["phase_I"] and out["t_I"] > 1 and out["t_II"] > out["t_I"]
    assert out["phi_glob_end_I"] < -0.5 and math.isfinite(out["T_star"])
    neg = phase_one_prediction(mae_config(64, 16, 8))
    assert not neg["phase_I"] and neg["t_I"] == 1.0
    with pytest.raises(ValueError, match="data.K"):
        phase_one_prediction(_cfg(10, 4, 2, K=2))

"""The huang2024 figures: a quick render of every id (``theorylab figures --quick``, shared
with the CLI smoke test), their manifest entries, headline values that hold by construction,
and the attention maps of masked queries against the model's own attention masses."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from theorylab.core.figures import list_figures
from theorylab.huang2024.config import DataConfig
from theorylab.huang2024.data import information_gap, sample_batch
from theorylab.huang2024.figures._common import masked_query_attention
from theorylab.huang2024.figures._data import connected
from theorylab.huang2024.figures._diversity import idealised_mae_diverse, own_area_map
from theorylab.huang2024.figures._dynamics import (
    mae_plateau,
    phase_one_end,
    phase_one_heuristic,
)
from theorylab.huang2024.figures._mechanism import attention_split, pick_queries
from theorylab.huang2024.figures._rates import (
    RATES_LADDER,
    RATES_LADDER_QUICK,
    family_shape,
    measured_rates,
)
from theorylab.huang2024.model import mae_loss_grad
from theorylab.huang2024.phases import own_attention_target
from theorylab.huang2024.predictions import (
    initial_rates,
    leading_rates,
    phase_one_prediction,
    z_moments,
)
from theorylab.huang2024.setups import family_sizes, figure_config, mae_config
from theorylab.papers import load_all_figures

load_all_figures()  # every paper's figures registered

FAMILY_POS_36 = family_sizes("pos", 36)

IDS = ["huang2024-asymptotics", "huang2024-cl-temperature", "huang2024-dynamics",
       "huang2024-fig1", "huang2024-fig2", "huang2024-fig3", "huang2024-fig4",
       "huang2024-phase-diagram", "huang2024-rates"]


@pytest.fixture(scope="module")
def quick(quick_figures):
    """The quick render of every figure (conftest.py, shared with the CLI smoke test): its
    folder and this paper's manifest entries."""
    out, entries, _ = quick_figures
    return out, {fid: entries[fid] for fid in IDS if fid in entries}


def test_registered_ids():
    ids = sorted(s.id for s in list_figures() if s.paper == "huang2024")
    assert ids == IDS


def test_quick_render_and_manifest(quick):
    out, entries = quick
    assert sorted(entries) == IDS
    for fid in IDS:
        e = entries[fid]
        assert e["paper"] == "huang2024" and e["quick"] is True
        assert "RECONSTRUCTED" in e["caption"] or "reconstructed" in e["caption"].lower()
        assert e["reading"], fid
        for ext in ("pdf", "png"):
            assert (out / f"{fid}.{ext}").stat().st_size > 1000, (fid, ext)


def test_fig2_headline(quick):
    h = quick[1]["huang2024-fig2"]["headline"]
    P, C1, C = h["P"], h["C1"], h["C"]
    assert h["delta"] == pytest.approx(information_gap(P, C1, C), abs=1e-12)
    assert h["delta"] == pytest.approx(2 * h["kappa_s"] - h["kappa_c"] - 1, abs=1e-12)
    assert h["kappa_s"] == pytest.approx(math.log(C1) / math.log(P))
    # P^Δ = (C1/P)²/(C/P): the definition of Δ read as a ratio of gradient scales
    assert h["P_pow_delta"] == pytest.approx(h["gradient_scale_ratio"], rel=1e-12)
    assert h["N_k"] == [1 + (P - C1) // C] * h["K"]
    assert h["areas_4_connected"] and h["clusters_distinct"]


def test_connected_detects_split_areas():
    lab = np.array([0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3])
    assert connected(lab)
    lab2 = lab.copy()
    lab2[[0, 15]] = lab2[[15, 0]]
    assert not connected(lab2)


def test_dynamics_headline(quick):
    h = quick[1]["huang2024-dynamics"]["headline"]
    pos, neg = h["pos"], h["neg"]
    assert pos["delta"] > 0 > neg["delta"]
    for r in (pos, neg):
        assert r["delta"] == pytest.approx(information_gap(r["P"], r["C1"], r["C"]))
        # the end-of-Phase-I value is drawn and reported only where a Phase I exists
        if r["phase_I"] and r["delta"] > 0:
            cfg = figure_config(r["P"], r["C1"], r["C"], steps=r["steps"])
            assert r["phi_glob_pred"] == pytest.approx(phase_one_end(cfg, r["steps"]))
            # the derived end value and curves sit on the measured ones (the reduction is exact
            # up to the mean-field rest, measured ≤ 3e-5 in Φ at P ≥ 36)
            assert r["phi_glob_pred"] == pytest.approx(r["phi_glob_end_I"], abs=1e-3)
            assert r["max_abs_phi_glob_vs_derived"] < 1e-3
        else:  # NaN, written as null in the manifest
            assert r["phi_glob_pred"] is None
        # the derived first-step rates predict the measured presence of Phase I
        assert r["phase_I_predicted"] == r["phase_I"]
        assert r["final_attn_own_lq"] <= 1 - 0.5 ** (r["C"] - 1) + 1e-9
        parts = r["final_attn_own_lq"] + r["final_attn_glob_lq"] + r["final_attn_masked_lq"]
        assert parts <= 1 + 1e-9
        assert r["loss_monotone"]
    # Phase I (first step decouples the global correlation) for Δ > 0 only
    assert pos["phase_I"] and -pos["dphi_glob_1"] > pos["dphi_own_1"] > 0
    assert not neg["phase_I"] and neg["dphi_own_1"] >= -neg["dphi_glob_1"]
    assert pos["final_phi_own_lq"] > 0 > pos["final_phi_glob_lq"]
    # the CL column's MAE reference is run to its plateau (the premise the caption states)
    cl = h["cl"]
    assert cl["mae_plateau"] is True
    assert abs(cl["mae_attn_own_end_window"] - cl["mae_attn_own_before_window"]) \
        <= cl["mae_plateau_tol"]
    assert cl["mae_steps"] > cl["steps"]


def test_phase_one_end_is_the_derived_value_and_the_heuristic_is_the_notes():
    cfg = figure_config(36, *FAMILY_POS_36, steps=30)
    r = phase_one_prediction(cfg, max_steps=30)
    assert r["phase_I"] and phase_one_end(cfg, 30) == r["phi_glob_end_I"]
    assert phase_one_heuristic(cfg) == pytest.approx(-(cfg.delta / 2) * math.log(36), rel=1e-12)
    # masked keys left out of the softmax: the reduced engine covers it too
    out = cfg.replace(model={"mask_keys": False})
    assert phase_one_end(out, 30) == phase_one_prediction(out, max_steps=30)["phi_glob_end_I"]
    # several clusters: the reduction does not apply, no value is drawn
    assert math.isnan(phase_one_end(cfg.replace(data={"K": 2}), 30))


def test_mae_plateau_detects_a_rising_reading():
    step = np.arange(201)
    flat = pd.DataFrame({"step": step, "attn_own_lq": 0.6 + 0.01 * np.sin(step)})
    rising = pd.DataFrame({"step": step, "attn_own_lq": 0.3 * step / 200})
    assert mae_plateau(flat)["plateau"]
    r = mae_plateau(rising)
    # window means over steps 160–200 and 120–159: 0.27 and 0.2093, a change of 0.06 > 0.02
    assert not r["plateau"] and r["change"] == pytest.approx(0.06075, abs=1e-4)


def test_fig4_headline(quick):
    h = quick[1]["huang2024-fig4"]["headline"]
    loc, glob = h["local"], h["global"]
    assert loc["area"] != 0 and glob["area"] == 0
    # the trained model's largest FP correlation of a masked patch is with its own area
    assert loc["phi_argmax_area"] == loc["area"] and glob["phi_argmax_area"] == 0
    assert loc["phi_own"] > 0 > loc["phi_global"]
    total = loc["attn_own"] + loc["attn_global"] + loc["attn_other_local"] + loc["attn_masked"]
    assert total == pytest.approx(1.0, abs=1e-9)
    total = glob["attn_own"] + glob["attn_other_local"] + glob["attn_masked"]
    assert total == pytest.approx(1.0, abs=1e-9)
    # fig4 draws the trained Δ > 0 model of the dynamics figure; with one cluster every local
    # query has the same own-area and global Φ, so the row read here is the trajectory's mean
    dyn = quick[1]["huang2024-dynamics"]["headline"]["pos"]
    assert loc["phi_own"] == pytest.approx(dyn["final_phi_own_lq"], rel=1e-9)
    assert loc["phi_global"] == pytest.approx(dyn["final_phi_glob_lq"], rel=1e-9)
    # Monte Carlo attention of one query agrees with the exact engine (all local queries are
    # equivalent with one cluster)
    for r in (loc, glob):
        assert abs(r["attn_own"] - r["exact_attn_own"]) <= 4 * r["attn_own_se"] + 0.01


def test_phase_diagram_headline(quick):
    e = quick[1]["huang2024-phase-diagram"]
    h, st = e["headline"], e["settings"]
    assert h["n_cells"] == len(st["C1"]) * len(st["gamma"]) == len(h["cells"])
    for c in h["cells"]:
        assert c["delta"] == pytest.approx(information_gap(st["P"], c["C1"], st["C"]))
        assert c["target"] == pytest.approx(own_attention_target(st["C"], c["gamma"]))
        assert c["learned"] == (c["final_attn_own_lq"] >= c["target"])
    assert h["n_cl_collapses"] == sum(c["cl_collapses"] for c in h["cells"])
    # the CL rule of the Theorem 4.4 check, recomputed from the cell's numbers
    for c in h["cells"]:
        if c["cl_collapses"]:
            assert c["cl_final_attn_glob_lq"] - c["mae_mc_final_attn_glob_lq"] > 0.02
    assert h["n_learned"] == sum(c["learned"] for c in h["cells"])
    assert h["n_phase_I_delta_pos"] == h["n_delta_pos"] and h["n_phase_I_delta_nonpos"] == 0


def test_fig3_headline(quick):
    h = quick[1]["huang2024-fig3"]["headline"]
    s = quick[1]["huang2024-fig3"]["settings"]
    assert h["max_decomposition_residual"] < 1e-9
    # the metrics of the idealised own-area maps are the notes' §5.4 formula
    np.testing.assert_allclose(h["idealised_diverse"], h["idealised_diverse_formula"],
                               atol=1e-12)
    np.testing.assert_allclose(h["idealised_nmi"], h["idealised_diverse"], atol=1e-12)
    np.testing.assert_allclose(h["idealised_shared"], 0.0, atol=1e-12)
    if s["P"] == 16:
        assert h["uniform_distance"] == pytest.approx(2.008, abs=1e-3)  # notes §5.3
    assert all(d > 0 for d in h["diverse"]) and all(0 <= x <= 1 for x in h["nmi"])
    assert all(d < h["uniform_distance"] for d in h["distance"])
    # CL: the sharpness identity holds for its maps too (rounding only)
    for a, b, c in zip(h["cl_total"], h["cl_shared"], h["cl_diverse"]):
        assert abs(a - b - c) < 1e-9
    # the real panels: untrained, start and uniform references beside MAE and CL, intervals
    # over seeds, and the three oriented last-layer differences the claim judges
    assert set(h["real"]) == {"untrained", "initial", "mae", "cl", "uniform"}
    assert all(abs(h["real"]["uniform"][m]) < 1e-12 for m in ("nmi", "total", "diverse"))
    assert abs(h["real"]["initial"]["js_start"]) < 1e-6  # the start against itself (float32)
    for k, (mean, lo, hi) in h["real_interval"].items():
        assert lo <= mean <= hi, k  # two seeds in the quick run: a finite interval
    assert set(h["real_last_layer_oriented_cl_minus_mae"]) == {"distance", "nmi", "moved"}


def test_fig1_one_colour_scale_per_row(quick):
    h = quick[1]["huang2024-fig1"]["headline"]
    real = [v for k, v in h.items() if k.startswith("real ") and k.endswith("max weight")]
    assert len(real) == 4 and h["colour scale max (real row)"] == max(real)
    assert h["uniform weight 1/P (real)"] == pytest.approx(1 / 49)
    P = quick[1]["huang2024-fig1"]["settings"]["P"]
    assert h["uniform weight 1/P (synthetic)"] == pytest.approx(1 / P)
    assert h["colour scale max (synthetic row)"] > 1 / P  # rows of P weights summing to 1


def test_fig1_masses_are_probabilities(quick):
    h = quick[1]["huang2024-fig1"]["headline"]
    syn = [v for k, v in h.items() if k.startswith("synthetic")]
    assert len(syn) == 8 and all(0 <= v <= 1 + 1e-12 for v in syn)  # float64 sums of a row
    for name in ("MAE", "CL"):
        for where in ("local", "global"):
            own = h[f"synthetic {name} {where} query: own-area mass"]
            glob = h[f"synthetic {name} {where} query: global-area mass"]
            if where == "global":  # a global query's own area is the global area
                assert own == pytest.approx(glob, abs=1e-12)
            else:
                assert own + glob <= 1 + 1e-12


def test_idealised_formula_matches_metric_direct():
    d = DataConfig(P=64, C1=32, C=8, areas="contiguous")
    lab = d.make_structure().labels[0]
    from theorylab.huang2024.diversity import sharpness_decomposition

    sh = sharpness_decomposition(own_area_map(lab))
    assert float(sh.diverse) == pytest.approx(idealised_mae_diverse(64, 32, 8), abs=1e-12)
    assert idealised_mae_diverse(128, 32, 8) == pytest.approx(0.5)  # notes §5.4 example


@pytest.mark.parametrize("mask_keys", [True, False])
def test_masked_query_attention_matches_model(mask_keys):
    """Row p of a map equals the model's attention of masked query p (own-area mass)."""
    d = DataConfig(P=16, C1=8, C=2, K=2, areas="random", seed=3)
    s = d.make_structure()
    rng = np.random.default_rng(0)
    Phi = rng.normal(size=(s.P, s.F))
    Ups = rng.normal(size=(s.P, s.P))
    batch = sample_batch(rng, s, 40, law="uniform", L=0.5, U=1.5, values=None, probs=None,
                         mask_kind="bernoulli", gamma=0.5, mask_size=8)
    maps = masked_query_attention(s, Phi, Ups, batch.cluster, batch.z, batch.mask,
                                  mask_keys=mask_keys)
    np.testing.assert_allclose(maps.sum(axis=2), 1.0, atol=1e-12)
    be = mae_loss_grad(s, Phi, Ups, batch, mask_keys=mask_keys, need_grad=False)
    lab = s.labels[batch.cluster]
    checked = 0
    for b in range(len(batch)):
        for p in np.flatnonzero(batch.mask[b]):
            own = (lab[b] == lab[b, p]) & ~batch.mask[b]
            assert maps[b, p, own].sum() == pytest.approx(be.attn_own[b, p], abs=1e-12)
            assert maps[b, p, batch.mask[b]].sum() == pytest.approx(
                be.attn_masked[b, p] if mask_keys else 0.0, abs=1e-12)
            checked += 1
    assert checked > 100


def test_attention_split_and_pick_queries():
    lab = np.array([0, 0, 0, 0, 1, 1, 2, 2, 0])
    loc, glob = pick_queries(lab)
    assert lab[loc] == 1 and lab[glob] == 0
    maps = np.full((2, 9, 9), 1.0 / 9)
    mask = np.zeros((2, 9), dtype=bool)
    mask[0, 6] = True
    sp = attention_split(maps, mask, lab, 4)
    assert sp["attn_own"] == pytest.approx(1 / 9)
    assert sp["attn_global"] == pytest.approx(5 / 9)
    assert sp["attn_other_local"] == pytest.approx((1.5) / 9)
    assert sp["attn_masked"] == pytest.approx(1.5 / 9)


@pytest.mark.parametrize("ladder", [RATES_LADDER, RATES_LADDER_QUICK])
def test_rates_ladder_spans_a_decade_and_a_half(ladder):
    assert math.log10(ladder[-1] / ladder[0]) >= 1.5


def test_rates_data_are_computed(quick):
    """The figure's points are the engine's gradient and the derived rates recomputed here
    (not numbers stored in the module)."""
    h = quick[1]["huang2024-rates"]["headline"]
    pts = h["points"]
    assert {(p["family"], p["mask_keys"]) for p in pts} == {
        (f, mk) for f in ("pos", "neg") for mk in (True, False)}
    assert sorted({p["P"] for p in pts}) == list(RATES_LADDER_QUICK)
    mu = z_moments(mae_config(16, 4, 2).resolved())
    for p in pts:
        C1, C, sizes = family_shape(p["P"], p["family"])
        assert (p["C1"], p["C"]) == (C1, C)
        kw = {"gamma": 0.5, "mask_keys": p["mask_keys"]}
        ex, ld = initial_rates(p["P"], sizes, 1, mu, **kw), leading_rates(p["P"], sizes, 1, mu,
                                                                          **kw)
        # the same float64 sums in the same order: equal to rounding
        assert p["own_exact"] == pytest.approx(ex[1], rel=1e-12)
        assert p["glob_leading"] == pytest.approx(ld[0], rel=1e-12)
        # engine against the exact sum: a Laplace integral with trapezoid error ~1e-11
        # relative (the lemma5.1 claim's EXACT_TOL is 1e-10)
        assert p["own"] == pytest.approx(ex[1], rel=1e-9)
        assert p["glob"] == pytest.approx(ex[0], rel=1e-9)
        assert p["glob"] < 0 < p["own"]
    for key in ("pos/in", "pos/out", "neg/in", "neg/out"):
        assert h[key]["max_rel_diff_exact"] < 1e-9
        # all local queries are equivalent with one cluster: their rates agree to rounding
        assert h[key]["max_within_kind_spread"] < 1e-12
    # the measurement is the engine's: a fresh gradient at the smallest P gives the same rates
    fresh = measured_rates(16, "neg", True)
    p16 = next(p for p in pts if p["P"] == 16 and p["family"] == "neg" and p["mask_keys"])
    for k in ("own", "glob", "other"):
        assert p16[k] == pytest.approx(fresh[k], rel=1e-12)


def test_rates_leading_order_error_shrinks(quick):
    """The leading order's error on the own and global rates falls along the ladder, and at
    every P it is O(1) times its stated neglected order (1/P own, 1/(P a_1) global): at most
    4 times it (measured 0.05–3.0 on the quick ladder; masked keys left out roughly double
    it, the unmasked count having relative fluctuation 1/((1 − γ) P))."""
    pts = quick[1]["huang2024-rates"]["headline"]["points"]
    for fam in ("pos", "neg"):
        for mk in (True, False):
            rows = sorted((p for p in pts if p["family"] == fam and p["mask_keys"] == mk),
                          key=lambda p: p["P"])
            for k in ("own", "glob"):
                err = [abs(p[f"{k}_leading"] / p[k] - 1) for p in rows]
                assert err[-1] < err[0], (fam, mk, k, err)
                for p, e in zip(rows, err):
                    a1 = 0.5 * p["C1"] / p["P"] if mk else p["C1"] / (p["P"] - 1)
                    order = 1 / p["P"] if k == "own" else 1 / (p["P"] * a1)
                    assert e <= 4 * order, (fam, mk, k, p["P"], e / order)


def test_asymptotics_headline(quick):
    """The local slopes drawn are those of the ladder (three sub-ladders each), and the Phase I
    boundary shrinks along the boundary ladder with masked keys in."""
    h = quick[1]["huang2024-asymptotics"]["headline"]
    for name in ("crossing slope", "t_I (Δ>0)", "t_II (Δ>0)", "T* (Δ>0)", "t_II (Δ<0)"):
        assert 1 <= len(h[f"local slopes {name}"]) <= 3
    b = h["Phase I boundary, keys in"]
    vals = [b[k] for k in sorted(b, key=float)]
    assert vals[-1] < vals[0] and all(v > 0 for v in vals)


def test_cl_temperature_headline(quick):
    """τ_c with the exact expectation over the negatives (≈ 0.21–0.22) lies below the Jensen
    formula's (≈ 0.25) on every rung."""
    h = quick[1]["huang2024-cl-temperature"]["headline"]
    exact = {k[len("tau_c "):]: v for k, v in h.items() if k.startswith("tau_c")}
    assert exact
    for P, v in exact.items():
        assert 0.19 < v < h[f"Jensen tau_c {P}"] < 0.3


def test_cl_captions_give_the_negatives_of_the_figure_and_of_the_check():
    """A CL figure's caption states its own number of negatives and, where it is not the
    Theorem 4.4 check's, the check's: no figure claims the check's setting it does not use."""
    import re

    from theorylab.huang2024.claims.thm44 import NEGATIVES
    from theorylab.huang2024.figures import _cl, _diversity, _dynamics

    texts = [v for m in (_cl, _dynamics, _diversity) for k, v in vars(m).items()
             if not k.startswith("__") and isinstance(v, str) and "negatives" in v
             and "InfoNCE" in v]
    assert len(texts) >= 3
    for text in texts:
        said = {int(n) for n in re.findall(r"(\d+) negatives", text)}
        assert _cl.CL_NEGATIVES in said, text[:200]
        if _cl.CL_NEGATIVES != NEGATIVES:
            assert f"check uses {NEGATIVES}" in text, text[:200]

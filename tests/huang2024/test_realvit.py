"""The real-image experiment (theorylab.huang2024.realvit) and its claim's verdict: config
validation, the tables of one reading (schemas, references, arms shared between readings), the
command line, and the verdict on hand-made agreeing, disagreeing, no-difference, degenerate and
premise-failed tables, with its counterfactuals and resolution."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from theorylab.huang2024 import realvit as rv
from theorylab.huang2024.claims import realvit as claim

NAN = math.nan
UNI = 3.6094654417755114  # mean attention distance of uniform attention on the 7 × 7 grid


# -- config ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("field,value", [
    ("n_train", 1), ("steps", 0), ("patch_size", 5), ("heads", 3), ("mask_ratio", 0.0),
    ("mask_ratio", 1.0), ("temperature", 0.0), ("lr", NAN), ("noise", -1.0), ("seeds", ()),
    ("seeds", (0, 0)), ("seeds", [0]), ("threads", -1), ("depth", True), ("item_pool", 3),
    ("item_pool", 1), ("init", "mimetic"), ("sigma", 0.0), ("n_traj", 10_000),
    ("warmup", 1.0)])
def test_config_rejects_bad_values_naming_the_field(field, value):
    with pytest.raises(ValueError, match=f"realvit.{field}"):
        replace(rv.QUICK, **{field: value})


def test_config_checkpoints_and_settings():
    assert rv.FULL.patches == 49
    assert rv.FULL.checkpoints == (0, 50, 100, 200, 400, 600, 800)
    assert rv.QUICK.checkpoints[0] == 0 and rv.QUICK.checkpoints[-1] == rv.QUICK.steps
    assert set(rv.SETTINGS) == {"quick", "full", "gpu"}
    assert len(rv.GPU.seeds) == 8 and rv.GPU.patches == 49
    assert rv.uniform_distance(rv.FULL) == pytest.approx(UNI, rel=1e-12)


def test_arm_keys_share_what_an_arm_does_not_read():
    a = rv.FULL
    b = replace(a, mask_ratio=0.75)
    assert rv.arm_key(a, "cl") == rv.arm_key(b, "cl")  # CL reads no mask ratio
    assert rv.arm_key(a, "mae") != rv.arm_key(b, "mae")
    assert rv.arm_key(a, "reference") == rv.arm_key(replace(a, steps=5), "reference")
    assert rv.arm_key(a, "cl") != rv.arm_key(replace(a, init="scratch"), "cl")
    with pytest.raises(ValueError, match="arm"):
        rv.arm_key(a, "dino")


# -- one reading on real data ----------------------------------------------------------------------
TINY = replace(rv.QUICK, n_train=64, n_eval=8, n_traj=4, n_show=2, steps=4, batch_size=16)


@pytest.mark.fashion_mnist
def test_one_reading_tables_references_and_shared_arms():
    rv.clear_memo()
    a = rv.run_realvit(TINY)
    S, L, H = len(TINY.seeds), TINY.depth, TINY.heads
    assert list(a.table.columns) == list(rv.TABLE_SCHEMA)
    assert a.table.groupby("model").size().to_dict() == {m: S * L * (H + 1)
                                                         for m in rv.MODELS}
    # head = -1 is the mean of the per-head values
    for _, g in a.table.groupby(["seed", "model", "layer"]):
        mean = g[g["head"] >= 0][list(rv.METRICS)].mean()
        assert np.allclose(g[g["head"] == -1][list(rv.METRICS)].to_numpy()[0], mean,
                           rtol=1e-12)
    # references: the start has moved 0 from itself; uniform attention has NMI and focus 0
    init = a.table[a.table.model == "initial"]
    assert init.js_start.abs().max() < 1e-6  # float32 maps of the same model, twice
    uni = a.table[a.table.model == "uniform"]
    assert uni[["nmi", "total", "shared", "diverse", "head_js"]].abs().max().max() < 1e-12
    assert np.allclose(uni.distance_patches, UNI, rtol=1e-12)
    assert (uni.js_start > 0).all()  # the local start is far from uniform
    # the start is local: focus well above uniform's, distance well below
    last = rv.head_average(a.table, layer=-1).set_index("model")
    assert (last.loc["initial"].total > 0.3).all()
    assert (last.loc["initial"].distance_patches < 0.35 * UNI).all()
    assert list(a.curves.columns) == list(rv.CURVE_SCHEMA)
    assert set(a.curves.model) == {"mae", "cl"} and a.curves.step.max() == TINY.steps
    assert list(a.levels.columns) == list(rv.LEVEL_SCHEMA)
    assert np.allclose(a.levels.cl_chance, math.log(TINY.batch_size))
    assert set(a.trajectory.step) == set(TINY.checkpoints)
    assert a.maps[(0, "mae")].shape == (L, TINY.n_show, H, 49, 49)
    assert set(a.seconds) == {"reference", "mae", "cl"}
    # another mask ratio retrains MAE only: CL (and the references) come from the memo
    b = rv.run_realvit(replace(TINY, mask_ratio=0.75))
    assert b.seconds["cl"] == 0.0 and b.seconds["reference"] == 0.0 and b.seconds["mae"] > 0
    pd.testing.assert_frame_equal(a.table[a.table.model == "cl"].reset_index(drop=True),
                                  b.table[b.table.model == "cl"].reset_index(drop=True))
    # deterministic: a fresh process state gives the same tables
    rv.clear_memo()
    c = rv.run_realvit(TINY)
    pd.testing.assert_frame_equal(a.table, c.table)
    pd.testing.assert_frame_equal(a.curves, c.curves)


def test_command_line_refuses_bad_device_seeds_and_steps(capsys, tmp_path):
    assert claim.main(["--setting", "quick", "--out", str(tmp_path), "--device", "tpu"]) == 2
    assert capsys.readouterr().err.startswith("error: --device:")
    assert claim.main(["--setting", "quick", "--out", str(tmp_path), "--seeds", "1", "1"]) == 2
    assert capsys.readouterr().err.startswith("error: --seeds:")
    assert claim.main(["--setting", "quick", "--out", str(tmp_path), "--steps", "0"]) == 2
    assert capsys.readouterr().err.startswith("error: --steps:")


@pytest.mark.fashion_mnist
def test_command_line_runs_every_reading_at_a_tiny_size(capsys, tmp_path):
    """The GPU command's path on the CPU at a tiny size: every reading's tables and verdict."""
    rv.clear_memo()
    assert claim.main(["--setting", "quick", "--out", str(tmp_path), "--steps", "2",
                       "--seeds", "0", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    names = ["main", "init=scratch", "init=local-wide", "mask_ratio=0.75", "mask_ratio=0.4"]
    assert [line.split(":")[0] for line in out[:-1]] == names
    for name in names:
        tables = {t: pd.read_csv(tmp_path / name / f"{t}.csv")
                  for t in ("table", "trajectory", "loss", "levels")}
        assert claim.judge(tables).verdict in ("agrees", "disagrees", "partial",
                                               "inconclusive")


@pytest.mark.slow
@pytest.mark.fashion_mnist
def test_gpu_setting_runs_on_the_cpu_for_one_step(capsys, tmp_path):
    """The GPU command (``--setting gpu``), run on the CPU for one step and two seeds: the
    larger model, batch and data set go through the whole path."""
    rv.clear_memo()
    assert claim.main(["--setting", "gpu", "--out", str(tmp_path), "--steps", "1",
                       "--seeds", "0", "1", "--main-only", "--device", "cpu"]) == 0
    t = pd.read_csv(tmp_path / "main" / "table.csv")
    assert t.layer.max() == rv.GPU.depth - 1 and t["head"].max() == rv.GPU.heads - 1
    assert capsys.readouterr().out.startswith("main: ")
    rv.clear_memo()


# -- verdict ---------------------------------------------------------------------------------------
def _tables(mae_dist, cl_dist, mae_nmi=None, cl_nmi=None, mae_js=None, cl_js=None, *,
            start_focus=0.37, mae_loss=0.2, cl_loss=3.0, layers=2):
    """Hand-made tables: per seed, the last layer's head means of MAE and CL (distance in
    patches, NMI, JS from the start), the start (focus `start_focus`), untrained and uniform
    rows; the first layer carries the opposite values (not judged); loss curves falling from
    1.0 (MAE) and 4.2 (CL) to `mae_loss` and `cl_loss` against levels 0.45 and log 64."""
    n = len(mae_dist)
    mae_nmi = [0.40] * n if mae_nmi is None else mae_nmi
    cl_nmi = [0.28] * n if cl_nmi is None else cl_nmi
    mae_js = [0.03] * n if mae_js is None else mae_js
    cl_js = [0.20] * n if cl_js is None else cl_js
    rows = []
    for layer in range(layers):
        last = layer == layers - 1
        for s in range(n):
            vals = {"mae": (mae_dist[s], mae_nmi[s], mae_js[s], 0.4),
                    "cl": (cl_dist[s], cl_nmi[s], cl_js[s], 0.5),
                    "initial": (1.09, 0.37, 0.0, start_focus),
                    "untrained": (3.6, 0.004, 0.6, 0.005),
                    "uniform": (UNI, 0.0, 0.65, 0.0)}
            if not last:
                vals["mae"], vals["cl"] = vals["cl"], vals["mae"]
            for model, (d, nmi, js, tot) in vals.items():
                for head in (0, -1):
                    rows.append({"seed": s, "model": model, "layer": layer, "head": head,
                                 "distance_patches": d, "nmi": nmi, "js_start": js,
                                 "total": tot})
    loss = []
    for s in range(n):
        for arm, a, b in (("mae", 1.0, mae_loss), ("cl", 4.2, cl_loss)):
            loss += [{"seed": s, "model": arm, "step": t, "loss": v}
                     for t, v in zip(range(0, 101, 10), np.linspace(a, b, 11))]
    levels = pd.DataFrame({"seed": range(n), "mae_mean_predictor": 0.45,
                           "cl_chance": math.log(64)})
    return {"table": pd.DataFrame(rows), "loss": pd.DataFrame(loss), "levels": levels}


AGREE = dict(mae_dist=[1.05, 1.03, 1.06], cl_dist=[2.2, 1.9, 1.7])


def test_verdict_agrees_and_rejects_both_counterfactuals():
    t = _tables(**AGREE)
    v = claim.judge(t)
    assert v.verdict == "agrees", v.reasons
    assert all(r.endswith(": agrees") for r in v.reasons)
    values = claim.CLAIM.values()
    for cf in claim.COUNTERFACTUALS:
        assert claim.judge(t, {**values, **cf.values}).verdict == "disagrees", cf.name


def test_verdict_disagrees_when_mae_de_localises_more():
    t = _tables(mae_dist=[2.2, 1.9, 1.7], cl_dist=[1.05, 1.03, 1.06], mae_nmi=[0.28] * 3,
                cl_nmi=[0.40] * 3, mae_js=[0.2] * 3, cl_js=[0.03] * 3)
    assert claim.judge(t).verdict == "disagrees"
    # the 'opposite order' statement then holds
    assert claim.judge(t, {"ORDER": -1.0}).verdict == "agrees"


def test_verdict_no_difference_disagrees_and_the_null_statement_agrees():
    same = _tables(mae_dist=[1.05, 1.06, 1.07], cl_dist=[1.05, 1.06, 1.07],
                   mae_nmi=[0.4, 0.41, 0.42], cl_nmi=[0.4, 0.41, 0.42],
                   mae_js=[0.03, 0.04, 0.05], cl_js=[0.03, 0.04, 0.05])
    assert claim.judge(same).verdict == "disagrees"
    assert claim.judge(same, {"ORDER": 0.0}).verdict == "agrees"


def test_verdict_partial_and_undecided():
    # more global at the end, but moved alike: partial
    t = _tables(**AGREE, mae_js=[0.1, 0.1, 0.1], cl_js=[0.1, 0.1, 0.1])
    assert claim.judge(t).verdict == "partial"
    # seeds disagree in sign on every metric: nothing decided
    noisy = _tables(mae_dist=[1.0, 2.0, 1.0], cl_dist=[2.0, 1.0, 1.5], mae_nmi=[0.3, 0.4, 0.3],
                    cl_nmi=[0.4, 0.3, 0.35], mae_js=[0.1, 0.2, 0.1], cl_js=[0.2, 0.1, 0.15])
    v = claim.judge(noisy)
    assert v.verdict == "inconclusive" and v.reasons[0] == "no judged metric decided"


def test_verdict_premise_the_start_is_not_local():
    t = _tables(**AGREE, start_focus=0.01)
    v = claim.judge(t)
    assert v.verdict == "inconclusive"
    assert v.reasons[0].startswith("premise failed: the start is local")
    assert any(r.startswith("distance") for r in v.reasons)  # the metrics still reported
    assert claim.judge(t, {"MIN_FOCUS": 0.001}).verdict == "agrees"


def test_verdict_premise_a_loss_stayed_on_its_plateau():
    t = _tables(**AGREE, mae_loss=0.44)  # 0.98 of the mean predictor's 0.45
    v = claim.judge(t)
    assert v.verdict == "inconclusive"
    assert v.reasons[0].startswith("premise failed: the losses left their plateau")
    assert "mae seed 0" in v.reasons[0]
    assert claim.judge(t, {"MAX_LOSS_RATIO": 1.0}).verdict == "agrees"
    t = _tables(**AGREE, cl_loss=4.0)  # 0.96 log 64
    assert claim.judge(t).verdict == "inconclusive"
    no_loss = dict(_tables(**AGREE), loss=pd.DataFrame(columns=["seed", "model", "step",
                                                                "loss"]))
    assert claim.judge(no_loss).verdict == "inconclusive"


def test_verdict_degenerate_tables():
    # one seed: no interval
    assert claim.judge(_tables(mae_dist=[1.0], cl_dist=[2.0], mae_nmi=[0.4], cl_nmi=[0.3],
                               mae_js=[0.0], cl_js=[0.2])).verdict == "inconclusive"
    # a NaN
    t = _tables(mae_dist=[1.0, NAN, 1.0], cl_dist=[2.0, 2.0, 2.0])
    assert claim.judge(t).verdict == "inconclusive"
    # no CL rows
    t = _tables(**AGREE)
    t["table"] = t["table"][t["table"].model != "cl"]
    assert claim.judge(t).verdict == "inconclusive"


def test_paired_differences_are_oriented_and_scaled():
    t = _tables(**AGREE)["table"]
    d = claim.paired_differences(t, "distance")
    assert np.allclose(d, (np.array(AGREE["cl_dist"]) - AGREE["mae_dist"]) / UNI)
    assert np.allclose(claim.paired_differences(t, "nmi"), 0.40 - 0.28)
    assert np.allclose(claim.paired_differences(t, "moved"), 0.20 - 0.03)


def test_classify_reads_order_and_effect():
    d = np.array([0.10, 0.12, 0.11])
    assert claim.classify(d, 1.0, 0.0, 0.01)[0] == "agrees"
    assert claim.classify(d, 1.0, 0.2, 0.01)[0] == "disagrees"  # effect of 0.2 excluded
    assert claim.classify(d, -1.0, 0.0, 0.01)[0] == "disagrees"
    assert claim.classify(d, 0.0, 0.0, 0.01)[0] == "disagrees"
    assert claim.classify(np.array([0.001, -0.002, 0.0]), 0.0, 0.0, 0.01)[0] == "agrees"
    assert claim.classify(np.array([0.1]), 1.0, 0.0, 0.01)[0] == "nan"


def test_resolution_of_effect_is_the_smallest_excluded_size():
    from theorylab.core.claims.readings import resolution

    t = _tables(**AGREE)
    res = resolution(claim.judge, t, claim.CLAIM.values(), claim.PREDICTIONS)
    row = res.set_index("prediction").loc["EFFECT"]
    # as EFFECT rises, metric i stops agreeing above lo_i − MIN_DIFF and disagrees above
    # hi_i − MIN_DIFF; the verdict turns `disagrees` once none agrees and one disagrees
    ivs = [claim.classify(claim.paired_differences(t["table"], n), 1, 0, 0.01)[1]
           for n in claim.JUDGED]
    flip = max(max(iv[1] for iv in ivs), min(iv[2] for iv in ivs)) - 0.01
    assert row.value_up == pytest.approx(flip, rel=1e-4)
    assert row.change_down == "none within ±100"


def test_claim_declarations():
    c = claim.CLAIM
    assert c.kind == "theorem check" and len(c.counterfactuals) >= 1
    assert [v.name for v in c.variants] == ["init", "mask_ratio"]
    for v in c.variants:
        for r in v.readings:
            cfg = replace(rv.FULL, **claim.reading_config({**c.main_readings(), v.name:
                                                           r.value}))
            assert cfg.patches == 49


@pytest.mark.slow
@pytest.mark.fashion_mnist
def test_smaller_full_check_every_reading(monkeypatch):
    """The full check's path at a smaller size (1,024 items, 150 steps, 3 seeds): every
    reading is run and judged, the CL arm is shared by the mask-ratio readings, and the
    counterfactuals are judged on the main reading's tables."""
    small = replace(rv.FULL, n_train=1024, n_eval=64, n_traj=16, steps=150)
    monkeypatch.setattr(rv, "FULL", small)
    rv.clear_memo()
    res = claim.CLAIM.check(quick=False)
    assert res.verdict in ("agrees", "disagrees", "partial", "inconclusive")
    assert claim.judge(res.tables).verdict == res.verdict
    r = res.readings
    assert list(r.choice) == ["main", "init", "init", "mask_ratio", "mask_ratio"]
    assert len(res.counterfactuals) == 2
    for (choice, _), vres in res.variant_results.items():
        assert set(vres.table.model) == set(rv.MODELS)
        if choice == "mask_ratio":
            pd.testing.assert_frame_equal(
                vres.table[vres.table.model == "cl"].reset_index(drop=True),
                res.table[res.table.model == "cl"].reset_index(drop=True))
    rv.clear_memo()

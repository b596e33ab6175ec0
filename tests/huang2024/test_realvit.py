"""The real-image experiment (theorylab.huang2024.realvit) and its claim's verdict: config
validation, the tables of one reading (schemas, references, arms shared between readings), the
command line, and the verdict on hand-made agreeing, disagreeing, no-difference, degenerate and
premise-failed tables, with its counterfactuals and resolution."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from theorylab.core.claims import t_interval
from theorylab.huang2024 import realvit as rv
from theorylab.huang2024.claims import realvit as claim
from theorylab.vision.store import clear_memo

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
    assert rv.FULL.checkpoints == (0, 31, 62, 125, 250, 375, 500)
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
    # CL with MAE's masked views reads the mask ratio too
    assert rv.arm_key(a, "cl_maeviews") != rv.arm_key(b, "cl_maeviews")
    assert rv.arm_key(a, "mae_clviews")["arm"] == "mae_clviews"
    with pytest.raises(ValueError, match="arm"):
        rv.arm_key(a, "dino")


# -- one reading on real data ----------------------------------------------------------------------
TINY = replace(rv.QUICK, n_train=64, n_eval=8, n_traj=4, n_show=2, steps=4, batch_size=16)


@pytest.mark.fashion_mnist
def test_one_reading_tables_references_and_shared_arms():
    clear_memo()
    a = rv.run_realvit(TINY)
    S, L, H = len(TINY.seeds), TINY.depth, TINY.heads
    assert list(a.table.columns) == list(rv.TABLE_SCHEMA)
    assert a.table.groupby("model").size().to_dict() == {m: S * L * (H + 1)
                                                         for m in rv.MODELS
                                                         if m not in rv.CONTROLS}
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
    # the augmentation control adds its two arms and reuses the others
    d = rv.run_realvit(TINY, controls=True)
    assert set(d.table.model) == set(rv.MODELS) and set(d.curves.model) == set(rv.ARM_VIEWS)
    assert d.seconds["mae"] == 0.0 and d.seconds["cl_maeviews"] > 0
    # deterministic: a fresh process state gives the same tables
    clear_memo()
    c = rv.run_realvit(TINY)
    pd.testing.assert_frame_equal(a.table, c.table)
    pd.testing.assert_frame_equal(a.curves, c.curves)


def test_check_device_refuses_claims_without_it_and_a_missing_gpu(capsys):
    import torch

    from theorylab.commands.check import main as check

    assert check(["--only", "jelassi2022", "--device", "cuda"]) == 2
    assert capsys.readouterr().err.startswith("error: --device: cuda runs only the claims")
    assert "cuda" in claim.CLAIM.devices
    if not torch.cuda.is_available():
        assert check(["--only", "huang2024/realvit-diversity", "--device", "cuda"]) == 2
        assert "torch.cuda.is_available() is False" in capsys.readouterr().err
    assert check(["--rejudge", "huang2024/realvit-diversity", "--device", "cpu"]) == 2


def test_device_context_selects_the_gpu_setting(monkeypatch):
    from theorylab.core.claims import active_device, use_device

    seen = {}

    def fake(cfg, **kw):
        seen.update(cfg=cfg, **kw)
        raise RuntimeError("stop")

    monkeypatch.setattr(rv, "run_realvit", fake)
    monkeypatch.setattr(rv, "resolve_device", lambda d: __import__("torch").device(d))
    with use_device("cuda"):
        assert active_device() == "cuda"
        with pytest.raises(RuntimeError, match="stop"):
            claim.run(False, claim.CLAIM.main_readings())
    assert active_device() == "cpu"
    assert seen["cfg"] == rv.GPU and seen["device"] == "cuda" and seen["controls"]
    with pytest.raises(RuntimeError, match="stop"):
        claim.run(False, {**claim.CLAIM.main_readings(), "init": "local-wide"})
    assert seen["cfg"] == replace(rv.FULL, sigma=3.0) and not seen["controls"]
    with pytest.raises(ValueError, match="--device"):
        with use_device("tpu"):
            pass


# -- verdict ---------------------------------------------------------------------------------------
MAIN = {"mae": (0.01, 0.41), "cl": (0.30, 0.24)}  # (shared, diverse) per arm
ROBUST = {"mae_clviews": (0.01, 0.40), "cl_maeviews": (0.25, 0.26)}


def _tables(arms=None, *, seeds=3, noise=(0.0, 0.01, -0.01), losses=None, layers=2):
    """Hand-made tables: per seed, the last layer's head means (shared, diverse; total their
    sum) of each arm in `arms` (arm → (shared, diverse); CL's shared plus `noise[s]` and its
    diverse minus it, so that the differences vary between seeds), the start,
    untrained and uniform rows; the first layer carries MAE's values for every arm (not
    judged); loss curves falling from 1.0 (MAE-type) and 4.2 (CL-type) to `losses[arm]`
    (default 0.2 and 3.0) against levels 0.45 and log 64."""
    arms = dict(MAIN if arms is None else arms)
    losses = losses or {}
    refs = {"initial": (0.004, 0.37), "untrained": (0.005, 0.001), "uniform": (0.0, 0.0)}
    rows = []
    for layer in range(layers):
        last = layer == layers - 1
        for s in range(seeds):
            for model, (sh, dv) in {**arms, **refs}.items():
                if not last and model in arms:
                    sh, dv = MAIN["mae"]
                e = noise[s % len(noise)] if model == "cl" else 0.0
                for head in (0, -1):
                    rows.append({"seed": s, "model": model, "layer": layer, "head": head,
                                 "shared": sh + e, "diverse": dv - e, "total": sh + dv,
                                 "distance_patches": 1.0, "nmi": dv, "js_start": 0.1,
                                 "head_js": 0.05})
    loss = []
    for s in range(seeds):
        for arm in arms:
            a, b = (1.0, 0.2) if arm.startswith("mae") else (4.2, 3.0)
            b = losses.get(arm, b)
            loss += [{"seed": s, "model": arm, "step": t, "loss": v}
                     for t, v in zip(range(0, 101, 10), np.linspace(a, b, 11))]
    levels = pd.DataFrame({"seed": range(seeds), "mae_mean_predictor": 0.45,
                           "cl_chance": math.log(64)})
    return {"table": pd.DataFrame(rows), "loss": pd.DataFrame(loss), "levels": levels}


def _controls(v):
    return [r for r in v.reasons if r.startswith("augmentation control")]


def test_verdict_agrees_and_rejects_every_counterfactual():
    t = _tables()
    v = claim.judge(t)
    assert v.verdict == "agrees", v.reasons
    assert set(v.judged) == {"SHARED", "DIVERSE"}
    assert _controls(v) == ["augmentation control: not run under this reading (main reading "
                            "only)"]
    values = claim.CLAIM.values()
    for cf in claim.COUNTERFACTUALS:
        assert claim.judge(t, {**values, **cf.values}).verdict == "disagrees", cf.name


def test_verdict_one_half_missing_disagrees_and_its_null_statement_agrees():
    # CL builds the shared pattern, but MAE is no more diverse than CL
    t = _tables({"mae": (0.01, 0.30), "cl": (0.30, 0.30)})
    v = claim.judge(t)
    assert v.verdict == "disagrees"
    assert any(r.startswith("DIVERSE") and ": disagrees:" in r for r in v.reasons)
    assert claim.judge(t, {"DIVERSE": 0.0}).verdict == "agrees"
    # the opposite order: MAE shares, CL differs between queries
    t = _tables({"mae": (0.30, 0.24), "cl": (0.01, 0.41)})
    assert claim.judge(t).verdict == "disagrees"
    assert claim.judge(t, {"SHARED": -0.3, "DIVERSE": -0.17}).verdict == "agrees"


def test_verdict_noisy_seeds_are_inconclusive():
    t = _tables({"mae": (0.01, 0.41), "cl": (0.06, 0.36)}, noise=(0.0, 0.2, -0.2))
    v = claim.judge(t)
    assert v.verdict == "inconclusive"
    assert "cannot distinguish" in " ".join(v.reasons)


def test_augmentation_control_says_which_half_is_robust():
    v = claim.judge(_tables({**MAIN, **ROBUST}))
    assert v.verdict == "agrees"
    lines = _controls(v)
    assert lines[0].startswith("augmentation control: SHARED half robust to the augmentation")
    assert lines[1].startswith("augmentation control: DIVERSE half robust to the augmentation")
    assert set(v.reported) == {"SHARED under the augmentation control",
                               "DIVERSE under the augmentation control"}
    # CL without placement differences builds no shared pattern; MAE with CL's views keeps
    # its diversity: the shared half is the augmentation's, the diverse half the objective's
    v = claim.judge(_tables({**MAIN, "mae_clviews": (0.01, 0.40),
                             "cl_maeviews": (0.01, 0.40)}))
    assert v.verdict == "agrees"  # the verdict is the main arms'
    shared, diverse = _controls(v)
    assert "SHARED half NOT robust" in shared and "control pairings disagrees, agrees" in shared
    assert "DIVERSE half NOT robust" in diverse  # MAE − cl_maeviews is 0.01
    # a control arm on its loss plateau leaves its pairings undecided
    v = claim.judge(_tables({**MAIN, **ROBUST}, losses={"cl_maeviews": 4.1}))
    shared, _ = _controls(v)
    assert "NOT robust" in shared and "stayed on its loss plateau" in shared
    assert v.verdict == "agrees"  # the main arms' premise holds


def test_verdict_premise_the_attention_is_focused():
    t = _tables({"mae": (0.01, 0.05), "cl": (0.10, 0.02)})
    v = claim.judge(t)
    assert v.verdict == "inconclusive"
    assert v.reasons[0].startswith("premise failed: the attention is focused")
    assert any(r.startswith("SHARED") for r in v.reasons)  # the halves still reported
    assert not claim.judge(t, {"MIN_FOCUS": 0.05}).reasons[0].startswith("premise")


def test_verdict_premise_a_loss_stayed_on_its_plateau():
    t = _tables(losses={"mae": 0.44})  # 0.98 of the mean predictor's 0.45
    v = claim.judge(t)
    assert v.verdict == "inconclusive"
    assert v.reasons[0].startswith("premise failed: the losses left their plateau")
    assert "mae seed 0" in v.reasons[0]
    assert claim.judge(t, {"MAX_LOSS_RATIO": 1.0}).verdict == "agrees"
    assert claim.judge(_tables(losses={"cl": 4.0})).verdict == "inconclusive"  # 0.96 log 64
    no_loss = dict(_tables(), loss=pd.DataFrame(columns=["seed", "model", "step", "loss"]))
    assert claim.judge(no_loss).verdict == "inconclusive"


def test_verdict_degenerate_tables():
    assert claim.judge(_tables(seeds=1)).verdict == "inconclusive"  # no interval
    t = _tables()
    t["table"].loc[(t["table"].model == "cl") & (t["table"].seed == 1), "shared"] = NAN
    assert claim.judge(t).verdict == "inconclusive"
    t = _tables()
    t["table"] = t["table"][t["table"].model != "cl"]
    assert claim.judge(t).verdict == "inconclusive"


def test_split_differences_side_table_and_arm_summary():
    t = _tables({**MAIN, **ROBUST})["table"]
    assert np.allclose(claim.split_differences(t, "shared", "cl", "mae"),
                       [0.29, 0.30, 0.28], atol=1e-12)
    assert np.allclose(claim.split_differences(t, "diverse", "mae", "cl"), [0.17, 0.18, 0.16],
                       atol=1e-12)
    assert np.isnan(claim.split_differences(t, "shared", "cl", "dino")).all()
    arms = claim.arm_summary(t)
    assert list(arms.model.unique()) == [m for m in rv.MODELS if m in set(t.model)]
    side = claim.side_table(t)
    assert set(side.metric) == {"distance", "nmi", "moved", "head_js"}
    mean = side[side.seed == -1].set_index("metric").value
    assert np.allclose(mean[["distance", "moved", "head_js"]], 0.0, atol=1e-12)
    assert mean["nmi"] == pytest.approx(0.17, abs=1e-12)  # nmi = diverse in these tables


def test_resolution_a_moved_bound_is_a_point_statement():
    from theorylab.core.claims.readings import resolution

    t = _tables()
    res = resolution(claim.judge, t, claim.CLAIM.values(), claim.PREDICTIONS)
    row = res.set_index("prediction").loc["SHARED"]
    # above its declared value the bound is judged as a point (± SPLIT_TOL, two-sided): a
    # point just above 0.05 misses the interval of the differences (about 0.29) at once
    assert claim.MIN_SPLIT < row.value_up < claim.MIN_SPLIT + 1e-3
    m, lo, hi = t_interval(claim.split_differences(t["table"], "shared", "cl", "mae"))
    assert claim.judge(t, {"SHARED": m}).verdict == "agrees"
    assert claim.judge(t, {"SHARED": hi + 2 * claim.SPLIT_TOL}).verdict == "disagrees"


def test_claim_declarations():
    from theorylab.core.claims import quote_problem

    c = claim.CLAIM
    assert c.kind == "theorem check" and len(c.counterfactuals) == 4
    assert [v.name for v in c.variants] == ["init", "mask_ratio"]
    assert claim.INIT_READINGS["local-wide"]["sigma"] == 3.0
    assert c.interval is not None and c.interval.seeds == len(rv.FULL.seeds) >= 3
    notes = (Path(__file__).resolve().parents[2] / "docs" / "papers" / "huang2024.md"
             ).read_text(encoding="utf-8")
    for p in c.predictions:
        assert p.source == "paper" and quote_problem(notes, p.quote, p.section) == ""
    for v in c.variants:
        for r in v.readings:
            cfg = replace(rv.FULL, **claim.reading_config({**c.main_readings(), v.name:
                                                           r.value}))
            assert cfg.patches == 49


@pytest.mark.slow
@pytest.mark.fashion_mnist
def test_smaller_full_check_every_reading(monkeypatch):
    """The full check's path at a smaller size (1,024 items, 150 steps, 3 seeds): every
    reading is run and judged (the augmentation control under the main reading only), the CL
    arm is shared by the mask-ratio readings, and the counterfactuals are judged on the main
    reading's tables."""
    small = replace(rv.FULL, n_train=1024, n_eval=64, n_traj=16, steps=150)
    monkeypatch.setattr(rv, "FULL", small)
    clear_memo()
    res = claim.CLAIM.check(quick=False)
    assert res.verdict in ("agrees", "disagrees", "partial", "inconclusive")
    assert claim.judge(res.tables).verdict == res.verdict
    r = res.readings
    assert list(r.choice) == ["main", "init", "init", "mask_ratio", "mask_ratio"]
    assert len(res.counterfactuals) == 4
    assert set(res.table.model) == set(rv.MODELS)  # the main reading has the controls
    for (choice, _), vres in res.variant_results.items():
        assert set(vres.table.model) == set(rv.MODELS) - set(rv.CONTROLS)
        if choice == "mask_ratio":
            pd.testing.assert_frame_equal(
                vres.table[vres.table.model == "cl"].reset_index(drop=True),
                res.table[res.table.model == "cl"].reset_index(drop=True))
    clear_memo()

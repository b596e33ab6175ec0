"""The real-image experiment (theorylab.huang2024.realvit) and its claim's verdict: config
validation, the per-layer table schema, the command line, and the verdict on hand-made
agreeing, disagreeing, degenerate and premise-failed tables. (The placement of the items and
the self-supervised objectives are tests/vision/test_ssl.py.)"""

from __future__ import annotations

import copy
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch

from theorylab.huang2024 import realvit as rv
from theorylab.huang2024.claims import realvit as claim
from theorylab.vision.nets import MaskedEncoder, ViT

NAN = math.nan


# -- config ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("field,value", [
    ("n_train", 1), ("epochs", 0), ("patch_size", 5), ("heads", 3), ("mask_ratio", 0.0),
    ("mask_ratio", 1.0), ("temperature", 0.0), ("lr", NAN), ("noise", -1.0), ("seeds", ()),
    ("seeds", (0, 0)), ("seeds", [0]), ("threads", -1), ("depth", True), ("item_pool", 3),
    ("item_pool", 0), ("mae_epochs", -1)])
def test_config_rejects_bad_values_naming_the_field(field, value):
    with pytest.raises(ValueError, match=f"realvit.{field}"):
        replace(rv.QUICK, **{field: value})


def test_config_patches_steps_and_dict():
    assert rv.FULL.patches == 49 and rv.QUICK.as_dict()["seeds"] == [0, 1]
    assert rv.FULL.steps == 16 * (4096 // 128)
    assert rv.FULL.epochs_of("mae") == 32 and rv.FULL.epochs_of("cl") == 16
    assert rv.QUICK.steps == 4 * (64 // 32) and rv.QUICK.epochs_of("mae") == 4


# -- measurement -----------------------------------------------------------------------------------
def _enc(seed=0):
    torch.manual_seed(seed)
    return MaskedEncoder(ViT(28, 7, 1, dim=16, depth=2, heads=2))


def test_layer_attention_rows_are_distributions_and_last_is_the_last_layer():
    x = np.random.default_rng(0).normal(size=(5, 1, 28, 28)).astype(np.float32)
    A = rv.layer_attention(_enc(), x, chunk=2)
    assert A.shape == (2, 5, 2, 16, 16)  # (layers, images, heads, P, P)
    # float32 softmax rows: sum to 1 within a few float32 ulps
    assert np.max(np.abs(A.sum(-1) - 1)) < 1e-5
    assert np.array_equal(rv.last_layer_attention(_enc(), x), A[-1])
    # the two layers differ (the first block changes the tokens the second attends with)
    assert np.max(np.abs(A[0] - A[1])) > 1e-4


def test_metrics_table_schema_and_reference_maps():
    P = 16
    uniform = np.full((2, 1, P, P), 1 / P)
    ident = np.broadcast_to(np.eye(P), (2, 1, P, P))
    t = rv.metrics_table(np.concatenate([uniform, ident], axis=1), seed=0, model="mae",
                         patch_size=7, layer=2)
    assert dict(t.dtypes.astype(str)) == {k: ("object" if v == "object" else v)
                                          for k, v in rv.TABLE_SCHEMA.items()}
    assert t["head"].tolist() == [0, 1, -1] and set(t.layer) == {2}
    # closed forms (diversity.py): uniform NMI 0, identity NMI 1 and distance 0; 1e-12 is
    # float64 rounding of sums of 256 terms
    assert abs(t.nmi[0]) < 1e-12 and abs(t.nmi[1] - 1) < 1e-12
    assert abs(t.distance_patches[1]) < 1e-12
    assert abs(t.distance_pixels[0] - 7 * t.distance_patches[0]) < 1e-12
    assert abs(t.nmi[2] - 0.5) < 1e-12  # head average
    with pytest.raises(ValueError, match="maps"):
        rv.metrics_table(uniform[0], seed=0, model="mae", patch_size=7)


@pytest.mark.fashion_mnist
def test_same_initialisation_and_deterministic(monkeypatch):
    """MAE and CL start from the same encoder weights: the init rows are those of an encoder
    built by the same seed, and two runs give identical tables."""
    cfg = replace(rv.QUICK, n_train=64, n_eval=8, batch_size=32, seeds=(0,))
    snapshots = []
    real = copy.deepcopy

    def spy(m):
        out = real(m)
        snapshots.append({k: v.clone() for k, v in out.state_dict().items()})
        return out

    monkeypatch.setattr(rv.copy, "deepcopy", spy)
    a = rv.run_realvit(cfg)
    assert len(snapshots) == 2  # one copy of the initial encoder per objective
    for k, v in snapshots[0].items():
        assert torch.equal(v, snapshots[1][k]), k
    monkeypatch.setattr(rv.copy, "deepcopy", real)
    b = rv.run_realvit(cfg)
    pd.testing.assert_frame_equal(a.table.drop(columns="train_seconds"),
                                  b.table.drop(columns="train_seconds"))
    pd.testing.assert_frame_equal(a.curves, b.curves)
    assert set(a.table.model) == set(rv.MODELS)
    # every model: (heads + head average) rows per layer
    assert (a.table.groupby("model").size() == cfg.depth * (cfg.heads + 1)).all()
    assert list(a.curves.columns) == list(rv.CURVE_SCHEMA)
    assert len(a.curves) == 2 * cfg.epochs and a.curves.step.max() == cfg.steps
    # the uniform reference: NMI, focus and diverse 0 exactly (1/P rows), per layer
    uni = a.table[a.table.model == "uniform"]
    assert uni[["nmi", "total", "diverse"]].abs().max().max() < 1e-12
    assert a.maps[(0, "mae")].shape[:2] == (cfg.depth, 4)


def test_command_line_refuses_bad_device_and_seeds(capsys, tmp_path):
    assert rv.main(["--setting", "quick", "--out", str(tmp_path), "--device", "tpu"]) == 2
    assert capsys.readouterr().err.startswith("error: --device:")
    assert rv.main(["--setting", "quick", "--out", str(tmp_path), "--seeds", "1", "1"]) == 2
    assert capsys.readouterr().err.startswith("error: --seeds:")


# -- verdict ---------------------------------------------------------------------------------------
def _curves(n_seeds, late=0.02):
    """Loss curves of 8 epochs per seed and objective whose last quarter brings `late` of the
    total decrease (1.0 → 0.5)."""
    rows = []
    for s in range(n_seeds):
        for model in ("mae", "cl"):
            # epochs 1..6 fall linearly to 0.5 + late·0.5, then 7..8 reach 0.5
            head = np.linspace(1.0, 0.5 + late * 0.5, 6)
            loss = np.concatenate([head, [0.5 + late * 0.25, 0.5]])
            rows += [{"seed": s, "model": model, "epoch": e + 1, "step": 10 * (e + 1),
                      "loss": v} for e, v in enumerate(loss)]
    return pd.DataFrame(rows)


def _table(mae_nmi, cl_nmi, mae_div=None, cl_div=None, focus=(0.4, 0.41, 0.42), late=0.02,
           layers=2):
    """Head-averaged rows per seed and layer (the last layer carries the given values, the
    first the opposite direction); `focus` is the ``total`` of every trained encoder per seed
    (0.4: far from uniform attention, whose focus is 0); `late`: the loss curves' last-quarter
    share of the decrease."""
    rows = []
    mae_div = mae_nmi if mae_div is None else mae_div
    cl_div = cl_nmi if cl_div is None else cl_div
    for layer in range(layers):
        last = layer == layers - 1
        for s, (a, b, c, d) in enumerate(zip(mae_nmi, cl_nmi, mae_div, cl_div)):
            f = focus[s % len(focus)] if last else 0.0
            if not last:
                a, b, c, d = b, a, d, c
            for model, n, dv, tot in (("init", 0.01, 0.01, 0.01), ("mae", a, c, f),
                                      ("cl", b, d, f), ("uniform", 0.0, 0.0, 0.0)):
                rows.append({"seed": s, "model": model, "layer": layer, "head": -1, "nmi": n,
                             "diverse": dv, "total": tot})
                rows.append({"seed": s, "model": model, "layer": layer, "head": 0,
                             "nmi": 0.0, "diverse": 0.0, "total": 0.0})
    return {"table": pd.DataFrame(rows), "loss": _curves(len(mae_nmi), late)}


def test_verdict_agrees_and_disagrees_on_the_last_layer():
    t = _table([0.10, 0.11, 0.12], [0.05, 0.04, 0.06])
    v = claim.judge(t)
    assert v.verdict == "agrees"
    # the first layer points the other way and is reported, not judged
    assert any(r.startswith("layer 0 (not judged): nmi cl>mae") for r in v.reasons)
    assert claim.judge(_table([0.05, 0.04, 0.06], [0.10, 0.11, 0.12])).verdict == "disagrees"


def test_verdict_premise_attention_near_uniform():
    """Both encoders near uniform attention (focus 0.01–0.02): inconclusive, whatever the
    metrics say."""
    near = _table([0.05, 0.04, 0.06], [0.10, 0.11, 0.12], focus=(0.010, 0.015, 0.020))
    v = claim.judge(near)
    assert v.verdict == "inconclusive" and v.reasons[0].startswith("premise failed: attention")
    # the premise's flip: a threshold below the focus interval lets the metrics decide
    assert claim.judge(near, {"MIN_FOCUS": 0.001}).verdict == "disagrees"
    assert claim.MIN_FOCUS == pytest.approx(math.log(2) / math.log(49), rel=1e-15)


def test_verdict_premise_loss_not_plateaued():
    """A loss still falling (the last quarter brings 30 % of the decrease): inconclusive."""
    falling = _table([0.10, 0.11, 0.12], [0.05, 0.04, 0.06], late=0.3)
    v = claim.judge(falling)
    assert v.verdict == "inconclusive"
    assert v.reasons[0].startswith("premise failed: the losses plateaued")
    assert claim.judge(falling, {"MAX_LATE_DROP": 0.5}).verdict == "agrees"
    # no loss table, or curves too short to test: the premise fails
    no_loss = dict(falling, loss=falling["loss"].iloc[:0])
    assert claim.judge(no_loss, {"MAX_LATE_DROP": 0.5}).verdict == "inconclusive"
    short = falling["loss"][falling["loss"].epoch <= 3]
    assert claim.judge(dict(falling, loss=short), {"MAX_LATE_DROP": 0.5}).verdict == \
        "inconclusive"


def test_late_drop_share():
    # 1.0 → 0.5 over 8 epochs, epoch 6 (75 %) at 0.6: (0.6 − 0.5) / (1.0 − 0.5) = 0.2
    assert claim.late_drop([1.0, 0.9, 0.8, 0.7, 0.65, 0.6, 0.55, 0.5]) == pytest.approx(0.2)
    assert math.isnan(claim.late_drop([1.0, 0.5, 0.4]))  # fewer than 4 epochs
    assert math.isnan(claim.late_drop([0.5, 0.6, 0.7, 0.8]))  # no decrease
    assert claim.late_drop([1.0, 0.4, 0.45, 0.5]) < 0  # rose at the end: plateaued


def test_verdict_degenerate_tables():
    # seeds disagree in sign
    assert claim.judge(_table([0.10, 0.02, 0.12], [0.05, 0.06, 0.06])).verdict == "inconclusive"
    # every seed agrees in sign, but the paired difference 0.005 is below MIN_DIFF = 0.01
    assert claim.judge(_table([0.10, 0.30, 0.50], [0.095, 0.295, 0.495])).verdict == \
        "inconclusive"
    assert claim.judge(_table([0.100, 0.101, 0.102], [0.098, 0.099, 0.1])).verdict == \
        "inconclusive"
    # NaN
    assert claim.judge(_table([NAN, 0.1], [0.05, 0.05])).verdict == "inconclusive"
    # the two metrics contradict each other
    assert claim.judge(_table([0.10, 0.11, 0.12], [0.05, 0.05, 0.05], [0.05, 0.05, 0.05],
                              [0.10, 0.11, 0.12])).verdict == "inconclusive"
    # one decided, the other not: partial
    assert claim.judge(_table([0.10, 0.11, 0.12], [0.05, 0.05, 0.05], [0.10, 0.02, 0.2],
                              [0.05, 0.05, 0.05])).verdict == "partial"
    # no CL rows
    t = _table([0.1], [0.05])
    assert claim.judge(dict(t, table=t["table"][t["table"].model != "cl"])).verdict == \
        "inconclusive"
    # one seed: no interval, no verdict
    assert claim.judge(_table([0.10], [0.05])).verdict == "inconclusive"


# -- the store of trained runs ---------------------------------------------------------------------
def _fake_result(cfg):
    t = pd.DataFrame({"seed": [0]})
    return rv.RealViTResult(t, t, {}, {}, cfg, "fake", 0.0)


def test_stored_realvit_computes_once_per_key(tmp_path, monkeypatch):
    calls = []

    def fake(cfg, **kw):
        calls.append(cfg)
        return _fake_result(cfg)

    monkeypatch.setattr(rv, "run_realvit", fake)
    a = rv.stored_realvit(rv.QUICK, tmp_path)
    b = rv.stored_realvit(rv.QUICK, tmp_path)  # read back: no second computation
    assert len(calls) == 1 and b.description == "fake" and b.config == a.config
    assert len(list((tmp_path / "realvit").glob("*.pkl"))) == 1
    rv.stored_realvit(replace(rv.QUICK, epochs=3), tmp_path)  # another setting: computed
    rv.stored_realvit(rv.QUICK, None)  # no folder: always computed
    assert len(calls) == 3


def test_run_key_follows_config_stand_in_and_source(tmp_path, monkeypatch):
    base = rv.run_key(rv.QUICK)
    assert base == rv.run_key(rv.QUICK)
    assert rv.run_key(replace(rv.QUICK, lr=3e-3)) != base
    assert rv.run_key(rv.QUICK, stand_in=True) != base
    # a changed line in a module that computes the run changes the key
    mod = tmp_path / "h24_key_probe.py"
    mod.write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(rv, "_SOURCE_MODULES", (*rv._SOURCE_MODULES, "h24_key_probe"))
    k1 = rv.run_key(rv.QUICK)
    mod.write_text("X = 2\n")
    assert rv.run_key(rv.QUICK) != k1 != base


def test_seed_summary_interval_over_seeds_of_the_last_layer():
    rows = [{"seed": s, "model": "mae", "layer": layer, "head": -1, "nmi": v + layer}
            for s, v in enumerate([0.1, 0.2, 0.3]) for layer in (0, 1)]
    out = rv.seed_summary(pd.DataFrame(rows), layer=-1, metrics=("nmi",)).iloc[0]
    # mean of 1.1, 1.2, 1.3; half-width t_{0.975, 2} · 0.1 / √3 = 4.3027 · 0.057735
    assert out["mean"] == pytest.approx(1.2, abs=1e-12) and out.n_seeds == 3
    assert out.hi - out["mean"] == pytest.approx(4.302653 * 0.1 / math.sqrt(3), rel=1e-6)

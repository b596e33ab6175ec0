"""Tests of the figure framework, the image data helpers and the small nets (fast: < 20 s)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from theorylab.core import figures
from theorylab.core.figures import FigureContext, FigureResult, new_figure, register, run_figures
from theorylab.core.figures.registry import _REGISTRY
from theorylab.papers import load_all_figures
from theorylab.vision.imagedata import (
    block_permutation,
    invert_permutation,
    load_fashion_mnist,
    permute_blocks,
    read_idx,
    stratified_subset,
)
from theorylab.vision.nets import Attention, ViT, patchify, unpatchify

load_all_figures()  # every paper's figures registered

MY_IDS = (
    "jelassi2022-fig1a",
    "jelassi2022-fig1b",
    "jelassi2022-fig2",
    "jelassi2022-fig5",
    "jelassi2022-fig6",
    "jelassi2022-fig7",
)

needs_fashion_mnist = pytest.mark.fashion_mnist  # skipped without the files (conftest.py)


# ---------------------------------------------------------------------------------------------
# registry and runner


def test_registry_lists_image_figure_ids():
    ids = [spec.id for spec in figures.list_figures()]
    for fid in MY_IDS:
        assert fid in ids
    assert ids == sorted(ids)
    spec = figures.get_figure("jelassi2022-fig5")
    assert spec.paper_figure == "Figure 5"
    assert "Fashion-MNIST" in spec.caption and spec.data_source and spec.title


def test_image_captions_name_the_stand_in_data():
    for fid in ("jelassi2022-fig1a", "jelassi2022-fig5", "jelassi2022-fig6", "jelassi2022-fig7"):
        caption = figures.get_figure(fid).caption
        assert "Stand-in data" in caption and "dataset-fashion-mnist" in caption


def test_unknown_id_is_a_clear_error():
    with pytest.raises(KeyError, match="known ids"):
        figures.get_figure("no-such-figure")


def test_cli_list(capsys):
    from theorylab.commands.figures import main

    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    for fid in MY_IDS:
        assert fid in out


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA error path")
def test_cli_cuda_without_cuda_fails_clearly(tmp_path, capsys):
    from theorylab.commands.figures import main

    assert main(["--device", "cuda", "--only", "jelassi2022-fig1b", "--out", str(tmp_path)]) == 2
    assert "CUDA is not available" in capsys.readouterr().err
    assert not (tmp_path / "manifest.json").exists()


def test_cli_unknown_id(tmp_path, capsys):
    from theorylab.commands.figures import main

    assert main(["--only", "nope", "--out", str(tmp_path)]) == 2
    assert "unknown figure id" in capsys.readouterr().err


def _check_outputs(out, fid):
    for ext in ("pdf", "png"):
        path = out / f"{fid}.{ext}"
        assert path.is_file() and path.stat().st_size > 1000, path
    manifest = json.loads((out / "manifest.json").read_text())
    entry = manifest["figures"][fid]
    for key in figures.MANIFEST_KEYS:
        assert key in entry, key
    return manifest, entry


def test_quick_run_writes_pdf_png_and_manifest(tmp_path):
    manifest = run_figures(["jelassi2022-fig1b"], out=tmp_path, quick=True, seed=0,
                           progress=False)
    _, entry = _check_outputs(tmp_path, "jelassi2022-fig1b")
    assert entry["quick"] is True and entry["device"] == "cpu"
    assert entry["paper_figure"] == "Figure 1b"
    assert entry["headline"]["sets_localized"] == [[1, 2, 5, 6], [3, 4, 7, 8], [9, 10, 13, 14],
                                                   [11, 12, 15, 16]]
    assert manifest["figures"]["jelassi2022-fig1b"] == entry
    assert b"CreationDate" not in (tmp_path / "jelassi2022-fig1b.pdf").read_bytes()


def test_output_is_deterministic_and_manifest_merges(tmp_path):
    run_figures(["jelassi2022-fig1b"], out=tmp_path, quick=True, progress=False)
    first = {ext: (tmp_path / f"jelassi2022-fig1b.{ext}").read_bytes() for ext in ("pdf", "png")}
    stale = json.loads((tmp_path / "manifest.json").read_text())
    stale["figures"]["other-figure"] = {"paper_figure": "x"}
    (tmp_path / "manifest.json").write_text(json.dumps(stale))
    run_figures(["jelassi2022-fig1b"], out=tmp_path, quick=True, progress=False)
    for ext in ("pdf", "png"):
        assert (tmp_path / f"jelassi2022-fig1b.{ext}").read_bytes() == first[ext]
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert set(manifest["figures"]) == {"jelassi2022-fig1b", "other-figure"}
    assert not list(tmp_path.glob(".*tmp"))


def test_quick_fig2_learns_beyond_chance(tmp_path):
    run_figures(["jelassi2022-fig2"], out=tmp_path, quick=True, progress=False)
    _, entry = _check_outputs(tmp_path, "jelassi2022-fig2")
    h, s = entry["headline"], entry["settings"]
    # f*(-X) = -f*(X) (cubic teacher) and X ~ -X, so P(y = +1) = 1/2 exactly: chance error 0.5.
    # The quick run (60 Adam steps, seeded, deterministic) measured 0.28 test / 0.06 train error;
    # 0.40 leaves room for platform round-off yet is 4.5 binomial standard deviations
    # (sqrt(0.25 / 500) = 0.022) below chance, so a model that does not learn fails.
    assert h["final_test_error"] < 0.40
    assert h["final_train_error"] < h["final_test_error"]  # it fits its training set first
    assert h["min_test_error"] <= h["final_test_error"]
    # errors are counts over the test set: a multiple of 1/n_test (stored as float32: relative
    # error < 1e-7, i.e. < 1e-4 of a count at n_test = 500)
    k = h["final_test_error"] * s["n_test"]
    assert abs(k - round(k)) < 1e-3


def test_alignment_scores_and_the_chance_overlap_of_fig2():
    """`alignment_scores` is 1 on the set mask itself, 0-ish on its complement, and its Top-C
    overlap on random similarities matches the chance value written in Figure 2's headline."""
    import theorylab.jelassi2022.figures._gaussian as g
    from theorylab.jelassi2022.partition import Partition
    from theorylab.vision.nets import cosine_similarity_matrix

    sets = Partition(tuple(map(tuple, np.arange(16).reshape(4, 4).tolist())))  # any, C = 4
    mask = sets.same_set_mask().astype(float)
    perfect = g.alignment_scores(mask, sets)
    assert perfect["patch_association"] == 1.0 and perfect["topC_overlap"] == 1.0
    assert perfect["within_minus_between"] == 1.0
    anti = g.alignment_scores(2 * np.eye(16) - mask, sets)  # diag 1, own set -1, others 0
    assert anti["patch_association"] == 0.0
    assert anti["topC_overlap"] == 0.25  # only i itself (diagonal 1) among i's Top-C
    # chance: row i's Top-C = i plus 3 of the other 15, 3 of which are in i's set:
    # (1 + 3·3/15)/4 = 0.4. 400 random 16x64 Gaussian P give 6,400 rows; the standard error of
    # the mean overlap is about 0.2/sqrt(6400) = 0.0025, so 0.02 is an 8-sigma band
    gen = torch.Generator().manual_seed(0)
    overlaps = [g.alignment_scores(
        cosine_similarity_matrix(torch.randn(16, 64, generator=gen, dtype=torch.float64)).numpy(),
        sets)["topC_overlap"] for _ in range(400)]
    assert abs(np.mean(overlaps) - (1 + 3 * 3 / 15) / 4) < 0.02


def test_register_new_figure_and_extra_outputs(tmp_path):
    fid = "test-only-figure"

    @register(fid, paper="testpaper", paper_figure="none",
              caption="A test figure. Nothing else.", data_source="none")
    def _fig(ctx: FigureContext) -> FigureResult:
        fig = new_figure((2.0, 2.0))
        fig.subplots().plot([0, 1], [ctx.seed, 1])
        return FigureResult(fig, headline={"x": np.float64(1.5)}, settings={"quick": ctx.quick},
                            extra={"b": new_figure((1.0, 1.0))})

    try:
        assert figures.get_figure(fid).title == "A test figure"
        with pytest.raises(ValueError, match="already registered"):
            register(fid, paper="testpaper", paper_figure="none", caption="x",
                     data_source="none")(lambda ctx: None)
        run_figures([fid], out=tmp_path, progress=False)
        entry = json.loads((tmp_path / "manifest.json").read_text())["figures"][fid]
        assert entry["headline"] == {"x": 1.5}
        assert (tmp_path / f"{fid}-b.png").is_file()
        assert sorted(entry["files"]) == sorted(
            [f"{fid}.pdf", f"{fid}.png", f"{fid}-b.pdf", f"{fid}-b.png"])
    finally:
        _REGISTRY.pop(fid, None)


@needs_fashion_mnist
def test_quick_fig6_records_both_runs_consistently(tmp_path):
    run_figures(["jelassi2022-fig6"], out=tmp_path, quick=True, progress=False)
    _, entry = _check_outputs(tmp_path, "jelassi2022-fig6")
    h, s = entry["headline"], entry["settings"]
    # accuracies are counts over the n_test test images: multiples of 1/n_test
    for key in ("test_acc_vit", "test_acc_positional"):
        k = h[key] * s["n_test"]
        assert abs(k - round(k)) < 1e-9, key
    # Figure 6 keeps its own setting: no translations (those are Figure 1a's)
    assert s.get("translate_patches", 0) == 0


@needs_fashion_mnist
def test_quick_fig1a_trains_with_translations_and_reports_locality(tmp_path):
    run_figures(["jelassi2022-fig1a", "jelassi2022-fig6"], out=tmp_path, quick=True,
                progress=False)
    manifest, entry = _check_outputs(tmp_path, "jelassi2022-fig1a")
    h, s = entry["headline"], entry["settings"]
    assert s["translate_patches"] == 1
    assert s["no_translation_reference"]["translate_patches"] == 0
    # the reference without translations is Figure 6's vanilla ViT (deliberately shared), while
    # the translated run has its own settings and its own accuracy
    h6 = manifest["figures"]["jelassi2022-fig6"]["headline"]
    assert h["test_acc_no_translation"] == h6["test_acc_vit"]
    assert manifest["figures"]["jelassi2022-fig6"]["settings"].get("translate_patches", 0) == 0
    for prefix in ("init_", "trained_", "no_translation_trained_"):
        for key in ("cos_neighbours", "cos_far", "corr_with_distance", "above_threshold_local"):
            assert prefix + key in h, prefix + key
    assert "random at init" in h["paper"]
    # the 'init' locality is that of the model's own initial P (same seed as the trained run):
    # at D = 49, dim 32 the encodings are random Gaussian, so the correlation with distance is
    # small (1,176 distinct pairs: |Spearman| of a random matrix is ~0.03; 0.15 is 5 sigma)
    assert abs(h["init_corr_with_distance"]) < 0.15
    assert abs(h["init_cos_neighbours"]) < 0.15


def test_fig1a_settings_are_its_own_and_captions_carry_the_labels():
    from theorylab.jelassi2022.figures import _fig1a, _fig7
    from theorylab.jelassi2022.figures import _images as im

    assert _fig1a.FIG1A_FULL["translate_patches"] == 1
    assert _fig1a.FIG1A_QUICK["translate_patches"] == 1
    # Figures 6 and 7 train without translations (their settings lack the key: default 0)
    for s in (im.VIT_FM_FULL, im.VIT_FM_QUICK, _fig7.FIG7_FULL["fashion_mnist"],
              _fig7.FIG7_FULL["digits"]):
        assert s.get("translate_patches", 0) == 0
    cap1a = figures.get_figure("jelassi2022-fig1a").caption
    assert "translations" in cap1a and "centred" in cap1a and "exchangeable" in cap1a
    assert "local connectivity after training" in cap1a
    # no measured number in the caption: the only decimals allowed are the paper's threshold
    import re

    assert set(re.findall(r"\d+\.\d+", cap1a)) <= {"0.55"}
    assert "%" not in cap1a
    for fid in ("jelassi2022-fig6", "jelassi2022-fig7"):
        assert "RECONSTRUCTED" in figures.get_figure(fid).caption, fid
    assert "INFERRED" in figures.get_figure("jelassi2022-fig5").caption
    import theorylab.vision.imagedata as idata
    import theorylab.vision.nets._vit as vit

    assert "RECONSTRUCTED" in vit.__doc__ and "RECONSTRUCTED" in vit.ViT.__doc__
    assert "INFERRED" in idata.block_permutation.__doc__


# ---------------------------------------------------------------------------------------------
# image data


@pytest.mark.parametrize(("size", "g"), [(16, 2), (16, 4), (16, 8), (28, 7), (28, 14), (8, 2)])
def test_block_permutation_is_a_bijection_moving_whole_blocks(size, g):
    perm = block_permutation(size, g, seed=3)
    assert np.array_equal(np.sort(perm), np.arange(size * size))
    inv = invert_permutation(perm)
    assert np.array_equal(perm[inv], np.arange(size * size))
    img = np.arange(size * size, dtype=float).reshape(size, size)
    out = permute_blocks(img, perm)
    assert np.array_equal(permute_blocks(out, inv), img)
    # every g x g block of the output is a g x g block of the input, in its internal order
    nb = size // g
    src_blocks = {img[r * g:(r + 1) * g, c * g:(c + 1) * g].tobytes()
                  for r in range(nb) for c in range(nb)}
    for r in range(nb):
        for c in range(nb):
            assert out[r * g:(r + 1) * g, c * g:(c + 1) * g].tobytes() in src_blocks


@pytest.mark.parametrize("size", [8, 16, 28])
def test_block_permutation_full_size_is_identity(size):
    assert np.array_equal(block_permutation(size, size, seed=0), np.arange(size * size))


def test_block_permutation_rejects_non_divisor():
    with pytest.raises(ValueError, match="divisor"):
        block_permutation(28, 8, seed=0)


def test_stratified_subset_is_balanced_and_seeded():
    labels = np.repeat(np.arange(10), 50)
    idx = stratified_subset(labels, 100, seed=1)
    assert len(set(idx.tolist())) == 100
    assert np.array_equal(np.bincount(labels[idx]), np.full(10, 10))
    assert np.array_equal(idx, stratified_subset(labels, 100, seed=1))


def test_read_idx_roundtrip(tmp_path):
    import gzip

    arr = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    header = bytes([0, 0, 0x08, 3]) + np.array(arr.shape, dtype=">i4").tobytes()
    path = tmp_path / "x-idx3-ubyte.gz"
    with gzip.open(path, "wb") as fh:
        fh.write(header + arr.tobytes())
    assert np.array_equal(read_idx(path), arr)


def test_missing_fashion_mnist_names_the_apt_package(tmp_path):
    with pytest.raises(FileNotFoundError, match="dataset-fashion-mnist"):
        load_fashion_mnist("train", root=tmp_path)


@needs_fashion_mnist
def test_fashion_mnist_files_parse():
    x, y = load_fashion_mnist("test")
    assert x.shape == (10000, 28, 28) and x.dtype == np.uint8
    assert y.shape == (10000,) and set(np.unique(y)) == set(range(10))


# ---------------------------------------------------------------------------------------------
# nets


@pytest.mark.parametrize(("c", "h", "p"), [(1, 28, 4), (1, 16, 2), (3, 8, 2), (2, 12, 3)])
def test_patchify_unpatchify_roundtrip(c, h, p):
    x = torch.randn(3, c, h, h)
    tokens = patchify(x, p)
    assert tokens.shape == (3, (h // p) ** 2, c * p * p)
    assert torch.equal(unpatchify(tokens, p, c, h, h), x)
    # token k = r*(h/p) + c holds the pixel block [r p:(r+1)p, c p:(c+1)p]
    g = h // p
    assert torch.equal(tokens[:, g + 1].reshape(3, c, p, p), x[:, :, p:2 * p, p:2 * p])


def test_positional_attention_does_not_depend_on_input():
    torch.manual_seed(0)
    attn = Attention(16, 4, positional=True)
    pos = torch.randn(9, 16)
    x1, x2 = torch.randn(2, 9, 16), 10 * torch.randn(5, 9, 16)
    S1, S2 = attn.attention(x1, pos), attn.attention(x2, pos)
    assert S1.shape == (1, 4, 9, 9)
    assert torch.equal(S1, S2)
    assert torch.allclose(S1.sum(-1), torch.ones(1, 4, 9))
    # and a vanilla attention does depend on it
    van = Attention(16, 4)
    assert not torch.allclose(van.attention(x1[:1]), van.attention(x2[:1]))


def test_positional_vit_uses_positions_only_through_attention():
    torch.manual_seed(0)
    model = ViT(8, 2, 10, dim=16, depth=2, heads=2, positional_attention=True).eval()
    model(torch.randn(4, 1, 8, 8)).sum().backward()
    assert model.P.grad is not None and model.P.grad.abs().sum() > 0
    # with P = 0 every attention row is uniform, and as P is not added to the tokens the model
    # is then invariant to any permutation of the patches
    perm = block_permutation(8, 2, seed=1)
    x = torch.randn(3, 1, 8, 8)
    xp = torch.as_tensor(permute_blocks(x.numpy(), perm))
    with torch.no_grad():
        model.pos.zero_()
        assert torch.allclose(model(xp), model(x), atol=1e-5)


def test_vit_is_patch_permutation_equivariant_when_P_is_permuted():
    """A block permutation with g = patch size is a patch permutation: a ViT whose P rows are
    permuted the same way gives the same outputs (why Figure 5's ViT curve is flat)."""
    from theorylab.jelassi2022.figures._fig5 import _patch_permutation

    torch.manual_seed(0)
    size, p = 8, 2
    model = ViT(size, p, 10, dim=16, depth=2, heads=2).eval()
    perm = block_permutation(size, p, seed=4)
    pi = _patch_permutation(perm, size, p)
    x = torch.randn(3, 1, size, size)
    xp = torch.as_tensor(permute_blocks(x.numpy(), perm))
    permuted = ViT(size, p, 10, dim=16, depth=2, heads=2).eval()
    permuted.load_state_dict(model.state_dict())
    with torch.no_grad():
        permuted.pos.copy_(model.pos[torch.as_tensor(pi)])
        assert torch.allclose(permuted(xp), model(x), atol=1e-5)


def test_cpu_threads_is_restored():
    from theorylab.vision.nets import cpu_threads

    before = torch.get_num_threads()
    with cpu_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="threads"), cpu_threads(0):
        pass


# ---------------------------------------------------------------------------------------------
# translation augmentation (Figure 1a) and positional-encoding weight decay


def _shift_reference(x: np.ndarray, dy: int, dx: int, fill: float) -> np.ndarray:
    """Independent numpy reference: np.roll, then overwrite what wrapped around with `fill`."""
    out = np.roll(x, (dy, dx), axis=(-2, -1)).copy()
    if dy > 0:
        out[..., :dy, :] = fill
    elif dy < 0:
        out[..., dy:, :] = fill
    if dx > 0:
        out[..., :, :dx] = fill
    elif dx < 0:
        out[..., :, dx:] = fill
    return out


def test_translate_images_moves_whole_patches():
    from theorylab.vision.nets import translate_images

    p, g = 2, 4  # 8x8 image, 2x2 patches: a 4x4 patch grid
    img = torch.arange(1.0, 65.0).reshape(1, 1, 8, 8)
    out = translate_images(img, torch.tensor([[p, -p]]), fill=-7.0)  # one patch down, one left
    expected = np.full((8, 8), -7.0, dtype=np.float32)
    expected[2:, :6] = img[0, 0, :6, 2:].numpy()
    assert np.array_equal(out[0, 0].numpy(), expected)
    # in patch terms: output patch (r, c) is input patch (r - 1, c + 1), uncut
    tin, tout = patchify(img, p)[0], patchify(out, p)[0]
    for r in range(1, g):
        for c in range(g - 1):
            assert torch.equal(tout[r * g + c], tin[(r - 1) * g + c + 1])
    assert torch.equal(translate_images(img, torch.zeros(1, 2, dtype=torch.int64)), img)
    # a batch: each image gets its own shift; a shift of the whole frame leaves only fill
    batch = torch.randn(6, 2, 8, 8)
    shifts = [[0, 0], [2, 2], [-2, 0], [0, -2], [8, 0], [2, -2]]
    out = translate_images(batch, torch.tensor(shifts), fill=0.5)
    for b, (dy, dx) in enumerate(shifts):
        assert np.array_equal(out[b].numpy(), _shift_reference(batch[b].numpy(), dy, dx, 0.5))
    assert torch.equal(batch, batch.clone())  # input untouched (a copy is returned)


def test_random_patch_shifts_are_uniform_over_whole_patches():
    from theorylab.vision.nets import random_patch_shifts

    shifts = random_patch_shifts(9000, 1, 4, torch.Generator().manual_seed(0))
    assert shifts.shape == (9000, 2) and shifts.dtype == torch.int64
    combos, counts = torch.unique(shifts, dim=0, return_counts=True)
    assert {tuple(c) for c in combos.tolist()} == {(a, b) for a in (-4, 0, 4) for b in (-4, 0, 4)}
    # each of the 9 (row, column) shifts has probability 1/9: count ~ Binomial(9000, 1/9), mean
    # 1000, sd 29.8; +-150 is 5 sd (catches e.g. a {-1, 0} range or correlated axes)
    assert (counts - 1000).abs().max() < 150


class _Recorder(torch.nn.Module):
    """Linear classifier that keeps a copy of every training-mode input batch."""

    def __init__(self, pixels: int, classes: int) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(pixels, classes)
        self.seen: list[torch.Tensor] = []

    def forward(self, x):
        if self.training:
            self.seen.append(x.detach().clone())
        return self.lin(x.flatten(1))


def test_training_feeds_translated_images_in_the_same_order():
    from theorylab.vision.nets import TrainConfig, train_classifier, translate_images

    rng = np.random.default_rng(0)
    x = (1.0 + rng.random((32, 1, 8, 8))).astype(np.float32)
    x[0, 0, 0, 0] = -3.0  # the training minimum: the default fill value
    y = rng.integers(0, 3, 32)
    runs = {}
    for k in (0, 1):
        models = []

        def make(models=models):
            models.append(_Recorder(64, 3))
            return models[-1]

        cfg = TrainConfig(epochs=2, batch_size=8, translate_patches=k, translate_unit=2)
        train_classifier(make, x, y, x[:4], y[:4], cfg, seed=3)
        runs[k] = torch.cat(models[0].seen)
    plain, aug = runs[0], runs[1]
    assert plain.shape == aug.shape == (64, 1, 8, 8)  # 2 epochs x 4 batches of 8
    # translate_patches = 0 feeds the training images unchanged ...
    xs = {img.numpy().tobytes() for img in torch.as_tensor(x)}
    assert all(img.numpy().tobytes() in xs for img in plain)
    # ... and with translations, image i of the augmented stream is the image i of the plain
    # stream (same batch order, hence the same labels) shifted by whole 2-pixel patches in
    # {-1, 0, 1} per axis, the border filled with the training minimum
    options = [(a, b) for a in (-2, 0, 2) for b in (-2, 0, 2)]
    moved = 0
    for src, got in zip(plain, aug, strict=True):
        hits = [s for s in options
                if torch.equal(translate_images(src[None], torch.tensor([s]), -3.0)[0], got)]
        assert hits, "augmented image is not a whole-patch translation of the plain one"
        moved += hits[0] != (0, 0)
    # P(no shift) = 1/9 per image: 64 images, expected 57 moved; fewer than 40 would be > 5 sd
    assert moved >= 40


def test_pos_weight_decay_applies_to_the_positional_encodings_only():
    from theorylab.vision.nets import TrainConfig, param_groups

    model = ViT(8, 2, 10, dim=16, depth=1, heads=2)

    def decay_of(groups):
        return {id(p): g["weight_decay"] for g in groups for p in g["params"]}

    for pos_wd, expected_pos in ((None, 0.05), (0.0, 0.0), (0.3, 0.3)):
        wd = decay_of(param_groups(model, TrainConfig(weight_decay=0.05,
                                                      pos_weight_decay=pos_wd)))
        assert len(wd) == len(list(model.parameters()))  # every parameter exactly once
        assert wd[id(model.pos)] == expected_pos
        assert wd[id(model.embed.weight)] == 0.05  # matrices keep the global decay
        assert wd[id(model.embed.bias)] == 0.0 and wd[id(model.norm.weight)] == 0.0
    with pytest.raises(ValueError, match="pos_weight_decay"):
        TrainConfig(pos_weight_decay=-1.0)
    with pytest.raises(ValueError, match="translate"):
        TrainConfig(translate_patches=-1)


# ---------------------------------------------------------------------------------------------
# locality scores (Figure 1a) and the patch permutation (Figure 5)


def test_locality_scores_on_constructed_similarities():
    from theorylab.jelassi2022.figures._images import _grid_distance, locality_scores

    grid = 7
    dist = _grid_distance(grid)
    # perfectly local: similarity a strictly decreasing function of distance. Spearman is then
    # exactly -1 (ties in distance are ties in similarity); neighbours have e^-1
    local = locality_scores(np.exp(-dist), grid)
    assert local["corr_with_distance"] == pytest.approx(-1.0, abs=1e-12)
    assert local["cos_neighbours"] == pytest.approx(np.exp(-1.0))
    assert local["cos_far"] == pytest.approx(np.exp(-dist[dist >= 3.5]).mean())
    # anti-local: the sign flips
    anti = locality_scores(-np.exp(-dist), grid)
    assert anti["corr_with_distance"] == pytest.approx(1.0, abs=1e-12)
    assert anti["cos_neighbours"] == pytest.approx(-np.exp(-1.0))
    # above-threshold pairs: all 8-neighbours, or none
    nbr8 = np.where(dist <= np.sqrt(2) + 1e-9, 0.9, 0.0)
    assert locality_scores(nbr8, grid)["above_threshold_local"] == 1.0
    far = np.where(dist >= 3, 0.9, 0.0) + np.eye(grid * grid)
    assert locality_scores(far, grid)["above_threshold_local"] == 0.0
    assert np.isnan(local["above_threshold_local"])  # e^-1 < 0.55: no pair above threshold
    # random (a ViT's P at init: Gaussian rows, dim 64): no locality. Off-diagonal cosines have
    # sd 1/8; the 84 4-neighbour pairs average to sd 0.014, so 0.07 is 5 sd; Spearman over 1,176
    # distinct pairs has sd ~ 1/sqrt(1175) = 0.029, so 0.15 is 5 sd
    from theorylab.vision.nets import cosine_similarity_matrix

    P = torch.randn(grid * grid, 64, generator=torch.Generator().manual_seed(1),
                    dtype=torch.float64)
    rand = locality_scores(cosine_similarity_matrix(P).numpy(), grid)
    assert abs(rand["cos_neighbours"]) < 0.07
    assert abs(rand["corr_with_distance"]) < 0.15


@pytest.mark.parametrize(("size", "patch", "g"), [(16, 2, 2), (16, 2, 4), (16, 2, 8), (8, 2, 4)])
def test_patch_permutation_induced_by_a_block_permutation(size, patch, g):
    from theorylab.jelassi2022.figures._fig5 import _patch_permutation

    grid, k = size // patch, g // patch
    perm = block_permutation(size, g, seed=7)
    pi = _patch_permutation(perm, size, patch)
    assert np.array_equal(np.sort(pi), np.arange(grid * grid))  # a permutation of the patches
    x = torch.randn(2, 1, size, size)
    xp = permute_blocks(x.numpy(), perm)
    # patch j of the permuted image is patch pi[j] of the original
    assert torch.equal(patchify(torch.as_tensor(xp), patch), patchify(x, patch)[:, pi])
    assert np.array_equal(permute_blocks(xp, invert_permutation(perm)), x.numpy())
    # the k x k patches of one g x g block move together and keep their arrangement
    for br in range(grid // k):
        for bc in range(grid // k):
            corner = pi[br * k * grid + bc * k]
            for i in range(k):
                for j in range(k):
                    assert pi[(br * k + i) * grid + bc * k + j] - corner == i * grid + j


def test_patch_permutation_rejects_blocks_smaller_than_patches():
    from theorylab.jelassi2022.figures._fig5 import _patch_permutation

    with pytest.raises(ValueError, match="whole patches"):
        _patch_permutation(block_permutation(8, 1, seed=0), 8, 2)


# ---------------------------------------------------------------------------------------------
# positional vs vanilla attention in the full ViT; a short training run that must learn


def _block_attentions(model: ViT, x: torch.Tensor) -> list[torch.Tensor]:
    """Attention matrices of every block of `model` on input `x` (via forward hooks)."""
    out: list[torch.Tensor] = []
    hooks = [blk.attn.register_forward_hook(
        lambda mod, args, _res: out.append(mod.attention(*args).detach()))
        for blk in model.blocks]
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in hooks:
            h.remove()
    return out


def test_vit_attention_depends_on_the_input_only_when_vanilla():
    torch.manual_seed(0)
    x1, x2 = torch.randn(1, 1, 8, 8), 3 * torch.randn(1, 1, 8, 8) + 1
    pos_model = ViT(8, 2, 10, dim=16, depth=2, heads=2, positional_attention=True).eval()
    for S1, S2 in zip(_block_attentions(pos_model, x1), _block_attentions(pos_model, x2),
                      strict=True):
        assert torch.equal(S1, S2)  # both layers: a function of P only, bit for bit
    van_model = ViT(8, 2, 10, dim=16, depth=2, heads=2).eval()
    for S1, S2 in zip(_block_attentions(van_model, x1), _block_attentions(van_model, x2),
                      strict=True):
        assert (S1 - S2).abs().max() > 1e-3  # every layer reacts to the tokens


def _quadrant_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """8x8 noise images, class k (4 balanced classes) has a bright 4x4 quadrant k."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 4
    x = 0.5 * rng.standard_normal((n, 1, 8, 8))
    for i, k in enumerate(y):
        r, c = divmod(int(k), 2)
        x[i, 0, 4 * r:4 * r + 4, 4 * c:4 * c + 4] += 2.0
    return x.astype(np.float32), y.astype(np.int64)


@pytest.mark.parametrize("positional", [False, True])
def test_short_training_learns_an_easy_task_well_above_chance(positional):
    """Which quadrant is bright is a matter of *position*: a ViT whose P were ignored (or a
    positional ViT whose attention stayed uniform) is permutation invariant and stuck at chance
    (4 balanced classes: 25%; with P frozen at 0 both models measured 24%). The Bayes accuracy
    is ~100% (4x4 blocks, +2 signal vs 0.5 noise sd) and both models measured 100% after 20
    epochs of 10 steps (~1.5 s). We ask for >= 85%: 60 points above chance, with room for
    platform round-off."""
    from theorylab.vision.nets import TrainConfig, train_classifier

    xtr, ytr = _quadrant_data(320, 0)
    xte, yte = _quadrant_data(200, 1)
    cfg = TrainConfig(epochs=20, batch_size=32, lr=3e-3)
    res = train_classifier(lambda: ViT(8, 2, 4, dim=16, depth=1, heads=2,
                                       positional_attention=positional),
                           xtr, ytr, xte, yte, cfg, seed=0)
    assert res.test_acc >= 0.85, res.test_acc


def test_a_trained_image_vit_reads_back_from_the_real_image_store(tmp_path, monkeypatch):
    """The first paper's image ViTs live in the same store as the second paper's arms: a run
    put under ``--cache`` is read back in a new process (memo cleared) with the same weights,
    history and accuracy, without training again."""
    from theorylab.core.sweep import runner
    from theorylab.jelassi2022.figures import _images
    from theorylab.vision import nets, store
    from theorylab.vision.imagedata import digits

    calls = []
    train = nets.train_classifier

    def counted(*a, **k):
        calls.append(1)
        return train(*a, **k)

    counted.__module__ = train.__module__  # the same source, hence the same key
    monkeypatch.setattr(nets, "train_classifier", counted)
    data = digits(0.2, seed=0)
    s = {**_images.VIT_FM_QUICK, "image_size": 8, "patch_size": 2, "dim": 8, "heads": 2,
         "n_train": len(data.y_train), "n_test": len(data.y_test)}
    ctx = FigureContext(out=tmp_path, quick=True, seed=0)
    monkeypatch.setitem(runner._DEFAULTS, "cache", str(tmp_path / "cache"))
    store.clear_memo()
    first = _images._train_vit(data, s, positional=True, seed=0, ctx=ctx, desc="probe")
    assert len(list((tmp_path / "cache" / store.SUBFOLDER).glob("*.npz"))) == 1
    store.clear_memo()  # a new process: the folder answers
    again = _images._train_vit(data, s, positional=True, seed=0, ctx=ctx, desc="probe")
    assert calls == [1]
    x = torch.as_tensor(data.x_test[:16], dtype=torch.float32)
    with torch.no_grad():
        torch.testing.assert_close(first.model(x), again.model(x), rtol=0, atol=0)
    assert again.test_acc == first.test_acc and not again.model.training
    assert first.history.reset_index(drop=True).equals(again.history.reset_index(drop=True))
    store.clear_memo()

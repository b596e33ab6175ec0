"""Tests of the figure framework, the image data helpers and the small nets (fast: < 20 s)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from theorylab import figures
from theorylab.figures import FigureContext, FigureResult, new_figure, register, run_figures
from theorylab.figures._registry import _REGISTRY
from theorylab.imagedata import (
    block_permutation,
    fashion_mnist_available,
    invert_permutation,
    load_fashion_mnist,
    permute_blocks,
    read_idx,
    stratified_subset,
)
from theorylab.nets import Attention, ViT, patchify, unpatchify

MY_IDS = (
    "jelassi2022-fig1a",
    "jelassi2022-fig1b",
    "jelassi2022-fig2",
    "jelassi2022-fig5",
    "jelassi2022-fig6",
    "jelassi2022-fig7",
)

needs_fashion_mnist = pytest.mark.skipif(
    not fashion_mnist_available(),
    reason="Fashion-MNIST files missing (apt-get install dataset-fashion-mnist)",
)


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
    from theorylab.figures.__main__ import main

    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    for fid in MY_IDS:
        assert fid in out


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA error path")
def test_cli_cuda_without_cuda_fails_clearly(tmp_path, capsys):
    from theorylab.figures.__main__ import main

    assert main(["--device", "cuda", "--only", "jelassi2022-fig1b", "--out", str(tmp_path)]) == 2
    assert "CUDA is not available" in capsys.readouterr().err
    assert not (tmp_path / "manifest.json").exists()


def test_cli_unknown_id(tmp_path, capsys):
    from theorylab.figures.__main__ import main

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
    # errors are counts over the test set: a multiple of 1/n_test (float32 round-off: 1e-4)
    k = h["final_test_error"] * s["n_test"]
    assert abs(k - round(k)) < 1e-4 * s["n_test"]


def test_alignment_scores_and_the_chance_overlap_of_fig2():
    """`alignment_scores` is 1 on the set mask itself, 0-ish on its complement, and its Top-C
    overlap on random similarities matches the chance value written in Figure 2's headline."""
    import theorylab.figures._gaussian as g
    from theorylab.nets import cosine_similarity_matrix

    sets = np.arange(16).reshape(4, 4)  # any partition into 4 sets of C = 4
    mask = g.set_mask(sets, 16).astype(float)
    perfect = g.alignment_scores(mask, sets)
    assert perfect["patch_association"] == 1.0 and perfect["topC_overlap"] == 1.0
    assert perfect["within_minus_between"] == 1.0
    anti = g.alignment_scores(1.0 - mask + np.eye(16), sets)
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

    @register(fid, paper_figure="none", caption="A test figure. Nothing else.",
              data_source="none")
    def _fig(ctx: FigureContext) -> FigureResult:
        fig = new_figure((2.0, 2.0))
        fig.subplots().plot([0, 1], [ctx.seed, 1])
        return FigureResult(fig, headline={"x": np.float64(1.5)}, settings={"quick": ctx.quick},
                            extra={"b": new_figure((1.0, 1.0))})

    try:
        assert figures.get_figure(fid).title == "A test figure"
        with pytest.raises(ValueError, match="already registered"):
            register(fid, paper_figure="none", caption="x", data_source="none")(lambda ctx: None)
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
    assert h["final_train_loss_vit"] > 0 and h["final_train_loss_positional"] > 0


@needs_fashion_mnist
def test_quick_fig1a_trains_with_translations_and_reports_locality(tmp_path):
    run_figures(["jelassi2022-fig1a"], out=tmp_path, quick=True, progress=False)
    _, entry = _check_outputs(tmp_path, "jelassi2022-fig1a")
    h, s = entry["headline"], entry["settings"]
    assert s["translate_patches"] == 1
    assert s["no_translation_reference"]["translate_patches"] == 0
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
    from theorylab.figures import _images as im

    assert im.FIG1A_FULL["translate_patches"] == 1 and im.FIG1A_QUICK["translate_patches"] == 1
    # Figures 6 and 7 train without translations (their settings lack the key: default 0)
    for s in (im.VIT_FM_FULL, im.VIT_FM_QUICK, im.FIG7_FULL["fashion_mnist"],
              im.FIG7_FULL["digits"]):
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
    import theorylab.imagedata as idata
    import theorylab.nets._vit as vit

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
    from theorylab.figures._images import _patch_permutation

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
    from theorylab.nets import cpu_threads

    before = torch.get_num_threads()
    with cpu_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="threads"), cpu_threads(0):
        pass

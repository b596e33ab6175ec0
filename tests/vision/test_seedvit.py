"""The seed-batched ViT and its self-supervised training (theorylab.vision.seedvit, .seedssl)
and the attention distances (theorylab.vision.attention_metrics): a seed batched with others
trains exactly as alone, the local start is the declared window, the augmentations and losses
do what their docstrings say, and the divergences take their closed-form values."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from theorylab.vision import seedssl as ss
from theorylab.vision.attention_metrics import head_divergence, js_divergence
from theorylab.vision.nets import translate_images
from theorylab.vision.seedvit import (
    SeedViT,
    clip_grad_norm_per_seed_,
    decay_groups,
    local_bias,
    relative_offsets,
)

# float32 tolerances: a product of width-16 vectors in float32 rounds at ~16·2⁻²⁴ ≈ 1e-6 per
# layer; 1e-5 bounds the difference of the same float32 computation done in another batch
# layout (bmm over 1 or 2 seeds), which need not be bitwise equal.
F32 = 1e-5


def _small(seeds, init="local", **kw):
    return SeedViT(seeds, dim=16, depth=2, heads=2, init=init, **kw)


# -- the model -------------------------------------------------------------------------------------
def test_a_seed_gets_the_same_weights_whatever_the_batch():
    both, alone = _small((3, 5)), _small((5,))
    for (name, a), (_, b) in zip(both.named_parameters(), alone.named_parameters()):
        assert torch.equal(a[1], b[0]), name
    x = torch.randn(2, 3, 1, 28, 28)
    with torch.no_grad():
        out_both = both(x)
        out_alone = alone(x[1:])
    assert torch.allclose(out_both[1], out_alone[0], atol=F32, rtol=0)


def test_local_start_is_the_gaussian_window_and_scratch_is_zero():
    g = 7
    rel = relative_offsets(g)
    # offset index of query (0, 0) → key (1, 2) is Δ = (1, 2)
    assert rel[0, 1 * g + 2] == (1 + g - 1) * (2 * g - 1) + 2 + g - 1
    table = local_bias(g, 1.0)
    assert float(table[rel[10, 10]]) == 0.0  # self: offset 0
    assert float(table[rel[0, 1 * g + 2]]) == pytest.approx(-(1 + 4) / 2)
    m = _small((0, 1))
    for blk in m.blocks:
        assert torch.equal(blk.rel, table.expand_as(blk.rel))
        # with the content logits switched off, the attention is exactly softmax(window)
        with torch.no_grad():
            blk.qkv.weight.zero_()
            blk.qkv.bias.zero_()
    A = m.attentions(torch.randn(2, 3, 1, 28, 28))
    want = table[rel].double().softmax(-1).float()
    assert torch.allclose(A, want.expand_as(A), atol=1e-6, rtol=0)
    s = _small((0,), init="scratch")
    assert all(float(b.rel.detach().abs().max()) == 0.0 for b in s.blocks)
    with pytest.raises(ValueError, match="init"):
        _small((0,), init="mimetic")
    with pytest.raises(ValueError, match="sigma"):
        local_bias(7, 0.0)


def test_attention_rows_are_distributions_and_forward_matches_them():
    torch.manual_seed(0)
    m = _small((0, 1))
    x = torch.randn(2, 4, 1, 28, 28)
    A = m.attentions(x)
    assert A.shape == (2, 2, 4, 2, 49, 49)
    assert float((A.sum(-1) - 1).abs().max()) < 1e-5  # float32 softmax rows
    # the fused attention of forward equals the explicit maps of `attentions`
    blk = m.blocks[0]
    with torch.no_grad():
        t = m.tokens(x)
        _, _, v = blk._qkv(blk.norm1(t))
        explicit = (A[0] @ v).transpose(2, 3).reshape(t.shape)
        fused = blk(t) - blk.mlp(blk.norm2(t + blk.proj(explicit))) - t
    assert torch.allclose(blk.proj(explicit), fused, atol=F32, rtol=0)


def test_float32_forward_is_close_to_float64():
    m = _small((0,))
    x = torch.randn(1, 3, 1, 28, 28)
    with torch.no_grad():
        a32 = m.attentions(x)
        a64 = m.double().attentions(x.double())
    # float32 logits of width 8 and a softmax over 49 keys: errors of a few 1e-7
    assert float((a32.double() - a64).abs().max()) < 1e-5


def test_mask_token_replaces_masked_patches_only():
    m = _small((0,))
    with torch.no_grad():
        m.mask_token.fill_(3.0)
    x = torch.randn(1, 2, 1, 28, 28)
    mask = torch.zeros(1, 2, 49, dtype=torch.bool)
    mask[0, 0, 5] = True
    with torch.no_grad():
        t, t0 = m.tokens(x, mask), m.tokens(x)
    assert torch.equal(t[0, 0, 5], 3.0 + m.pos[0, 5])
    assert torch.equal(t[0, 1], t0[0, 1]) and torch.equal(t[0, 0, :5], t0[0, 0, :5])


def test_per_seed_clipping_matches_clip_grad_norm_of_each_seed_alone():
    torch.manual_seed(1)
    w = torch.nn.Parameter(torch.randn(3, 4, 5))
    b = torch.nn.Parameter(torch.randn(3, 5))
    w.grad = torch.randn(3, 4, 5) * torch.tensor([0.01, 1.0, 10.0])[:, None, None]
    b.grad = torch.randn(3, 5)
    want = []
    for s in range(3):
        ws, bs = torch.nn.Parameter(w[s].clone()), torch.nn.Parameter(b[s].clone())
        ws.grad, bs.grad = w.grad[s].clone(), b.grad[s].clone()
        torch.nn.utils.clip_grad_norm_([ws, bs], 1.0)
        want.append((ws.grad, bs.grad))
    norms = clip_grad_norm_per_seed_([w, b], 1.0)
    assert norms.shape == (3,)
    for s in range(3):
        assert torch.allclose(w.grad[s], want[s][0], atol=1e-6)
        assert torch.allclose(b.grad[s], want[s][1], atol=1e-6)


def test_weight_decay_falls_on_weight_matrices_only():
    m = _small((0,))
    groups = decay_groups(m, 0.05)
    decayed = {id(p) for p in groups[0]["params"]}
    names = {n for n, p in m.named_parameters() if id(p) in decayed}
    assert names and all(n.endswith("weight") and "norm" not in n for n in names)
    assert not any(n.endswith("rel") or n.endswith("pos") for n in names)


# -- views and objectives --------------------------------------------------------------------------
def test_place_items_matches_padding_and_translation():
    items = torch.randn(2, 3, 1, 14, 14)
    off = torch.randint(0, 15, (2, 3, 2))
    out = ss.place_items(items, off, fill=-2.0, canvas=28)
    pad = torch.nn.functional.pad(items.reshape(6, 1, 14, 14), (0, 14, 0, 14), value=-2.0)
    want = translate_images(pad, off.reshape(6, 2), -2.0).reshape(2, 3, 1, 28, 28)
    assert torch.equal(out, want)
    # a fill per seed
    fill = torch.tensor([-1.0, -3.0])
    out2 = ss.place_items(items, off, fill[:, None], 28)
    assert float(out2[1, 0, 0, 27, 27]) == -3.0 or bool(off[1, 0].eq(14).all())
    with pytest.raises(ValueError, match="offsets"):
        ss.place_items(items, off + 15, 0.0, 28)


def test_augment_keeps_the_item_and_fills_the_background():
    S, B = 2, 16
    items = torch.rand(S, B, 1, 14, 14) + 5.0  # every item pixel above 5
    fill = torch.tensor([-1.0, -2.0])
    aug = ss.Augment(contrast=0.0, brightness=0.0, noise=0.0, flip=0.0)
    x = ss.augment(items, ss.SeedStreams((0, 1)), fill, aug)
    assert x.shape == (S, B, 1, 28, 28)
    for s in range(S):
        assert int((x[s] > 5.0).sum()) == B * 14 * 14  # the whole item is on the canvas
        assert int((x[s] == fill[s]).sum()) == B * (28 * 28 - 14 * 14)
    # a seed's views do not depend on the other seeds of the batch
    y = ss.augment(items[1:], ss.SeedStreams((1,)), fill[1:], aug)
    assert torch.equal(x[1], y[0])


def test_random_masks_mask_exactly_round_ratio_p():
    m = ss.random_masks(ss.SeedStreams((0, 1, 2)), 5, 49, 0.6)
    assert m.shape == (3, 5, 49) and (m.sum(-1) == round(0.6 * 49)).all()


def test_info_nce_bounds():
    z = torch.eye(8, dtype=torch.float64).expand(2, 8, 8)
    assert float(ss.info_nce(z, z, 0.05).max()) < 1e-6  # positives at cos 1, negatives at 0
    same = torch.ones(2, 8, 4, dtype=torch.float64)
    # indistinguishable embeddings: log B up to float64 rounding
    want = torch.full((2,), math.log(8), dtype=torch.float64)
    assert torch.allclose(ss.info_nce(same, same, 0.1), want, atol=1e-12, rtol=0)


def test_mae_loss_reads_masked_patches_only():
    m = _small((0, 1))
    dec = ss.mae_decoder((0, 1), 16, 16)
    x = torch.randn(2, 3, 1, 28, 28)
    mask = torch.zeros(2, 3, 49, dtype=torch.bool)
    mask[:, :, :7] = True  # the first row of patches
    x2 = x.clone()
    x2[:, :, :, 8:, :] += 1.0  # visible rows only: only the encoder's input of them changes
    with torch.no_grad():
        pred = dec(m(x, mask))
        err = ((pred - ss.patchify_seeds(x, 4)) ** 2).mean(-1)
        loss = ss.mae_loss(m, dec, x, mask)
    assert torch.allclose(loss, err[:, :, :7].mean((1, 2)), atol=1e-6)
    # a masked patch's pixels reach the loss only as a target
    x3 = x.clone()
    x3[0, 0, :, :4, :4] += 1.0
    with torch.no_grad():
        assert float(ss.mae_loss(m, dec, x3, mask)[0]) != float(loss[0])
        assert float(ss.mae_loss(m, dec, x3, mask)[1]) == float(loss[1])


def test_mean_predictor_is_the_per_pixel_variance():
    items = torch.zeros(1, 4, 1, 28, 28)
    items[0, :, 0, 0, 0] = torch.tensor([0.0, 1.0, 2.0, 3.0])
    aug = ss.Augment(flip=0.0, contrast=0.0, brightness=0.0, noise=0.0)
    mp = ss.mean_predictor_mse(items, ss.SeedStreams((0,)), torch.zeros(1), aug, n=4000)
    # one pixel of 784 varies, uniformly over {0, 1, 2, 3} (variance 1.25)
    assert float(mp[0]) == pytest.approx(1.25 / 784, rel=0.1)


@pytest.mark.parametrize("objective", ["mae", "cl"])
def test_a_seed_trains_the_same_batched_or_alone(objective):
    items = torch.randn(2, 32, 1, 14, 14)
    fill = items.amin(dim=(1, 2, 3, 4))
    sch = ss.SSLSchedule(steps=3, batch_size=8, lr=1e-3)
    runs = []
    for seeds, sl in (((4, 7), slice(1, 2)), ((7,), slice(1, 2))):
        m = _small(seeds)
        head = (ss.mae_decoder(seeds, 16, 16) if objective == "mae"
                else ss.cl_projector(seeds, 16))
        src = items[sl] if len(seeds) == 1 else items
        f = fill[sl] if len(seeds) == 1 else fill
        losses = ss.train_seeds(objective, m, head, src, f, sch, ss.Augment())
        runs.append((m, losses))
    (both, lb), (alone, la) = runs
    assert lb.shape == (4, 2) and la.shape == (4, 1)
    assert torch.allclose(lb[:, 1], la[:, 0], atol=1e-4, rtol=1e-4)
    for (name, a), (_, b) in zip(both.named_parameters(), alone.named_parameters()):
        # three Adam steps of size ≤ lr = 1e-3 from equal weights: float32 layouts differ
        # by ~1e-6 relative, far below one step
        assert torch.allclose(a[1], b[0], atol=1e-5, rtol=0), name


def test_train_seeds_calls_checkpoints_and_rejects_unknown_objectives():
    items = torch.randn(1, 16, 1, 14, 14)
    seen = []
    m = _small((0,))
    ss.train_seeds("mae", m, ss.mae_decoder((0,), 16, 16), items, items.amin()[None],
                   ss.SSLSchedule(steps=4, batch_size=8, lr=1e-3), ss.Augment(),
                   checkpoints=(0, 2, 4), on_checkpoint=seen.append)
    assert seen == [0, 2, 4]
    with pytest.raises(ValueError, match="objective"):
        ss.train_seeds("dino", m, ss.mae_decoder((0,), 16, 16), items, items.amin()[None],
                       ss.SSLSchedule(steps=1, batch_size=8, lr=1e-3), ss.Augment())


def test_schedule_warms_up_then_decays_to_zero():
    sch = ss.SSLSchedule(steps=100, batch_size=8, lr=1.0, warmup=0.1)
    assert sch.lr_at(0) == pytest.approx(0.1) and sch.lr_at(9) == pytest.approx(1.0)
    assert sch.lr_at(99) < 1e-3


# -- divergences -----------------------------------------------------------------------------------
def test_js_divergence_closed_forms():
    P = 6
    eye = np.eye(P)
    uni = np.full((P, P), 1 / P)
    assert js_divergence(eye, eye) == 0.0
    # disjoint rows: JS = ln 2, i.e. 1 in units of ln 2
    assert js_divergence(eye, np.roll(eye, 1, axis=1)) == pytest.approx(1.0, abs=1e-15)
    # one-hot against uniform over P: ½ log(2P/(P+1)) + ½ (1 − 1/P)·log 2 ... in closed form
    a, b = eye[0], uni[0]
    m = (a + b) / 2
    want = 0.5 * (np.sum(a[a > 0] * np.log(a[a > 0] / m[a > 0]))
                  + np.sum(b * np.log(b / m))) / math.log(2)
    assert js_divergence(eye, uni) == pytest.approx(want, rel=1e-14)
    assert js_divergence(uni, eye) == js_divergence(eye, uni)  # symmetric
    batch = np.stack([eye, uni])
    assert js_divergence(batch, uni).shape == (2,)
    with pytest.raises(ValueError, match="A"):
        js_divergence(-eye, eye)


def test_head_divergence_identical_heads_zero_and_pairwise_mean():
    P = 5
    eye, uni = np.eye(P), np.full((P, P), 1 / P)
    same = np.stack([eye, eye, eye])
    assert np.all(head_divergence(same) == 0)
    A = np.stack([eye, eye, uni])  # heads 0 and 1 equal, head 2 uniform
    d = js_divergence(eye, uni)
    assert np.allclose(head_divergence(A), [d / 2, d / 2, d], rtol=1e-14)
    assert head_divergence(eye[None]).tolist() == [0.0]

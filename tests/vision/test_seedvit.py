"""The seed-batched ViT (theorylab.vision.nets._seedvit): a seed batched with others gets
and computes what it gets alone, the local start is the declared window, the fused attention
equals the explicit maps, float32 stays close to float64, and clipping and weight decay act per
seed and on the declared weights."""

from __future__ import annotations

import pytest
import torch

from theorylab.vision.nets import (
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

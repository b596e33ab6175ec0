"""Self-supervised training of the small ViT (theorylab.vision.nets): the placement of items
on a canvas, the MAE and InfoNCE objectives, the contrastive views and the training loop."""

from __future__ import annotations

import math

import pytest
import torch

from theorylab.vision.nets import (
    MaskedEncoder,
    SSLConfig,
    ViT,
    augment_view,
    info_nce,
    mae_loss,
    patchify,
    place_items,
    random_offsets,
    random_patch_mask,
    train_ssl,
)


# -- placement -------------------------------------------------------------------------------------
def test_place_items_puts_the_item_at_its_offset_on_background():
    items = torch.arange(2 * 14 * 14, dtype=torch.float32).reshape(2, 1, 14, 14) + 1
    out = place_items(items, torch.tensor([[0, 0], [14, 3]]), fill=-5.0)
    assert out.shape == (2, 1, 28, 28)
    assert torch.equal(out[0, 0, :14, :14], items[0, 0])
    assert torch.equal(out[1, 0, 14:, 3:17], items[1, 0])
    # everything else is background: 28² − 14² pixels of each canvas
    assert int((out[0] == -5.0).sum()) == 28 * 28 - 14 * 14
    assert int((out[1] == -5.0).sum()) == 28 * 28 - 14 * 14
    with pytest.raises(ValueError, match="offsets"):
        place_items(items, torch.tensor([[0, 15], [0, 0]]), fill=0.0)


def test_random_offsets_cover_the_canvas():
    off = random_offsets(4000, 14, torch.Generator().manual_seed(0))
    # 14×14 items on a 28×28 canvas: offsets 0..14 on each axis, each hit
    assert int(off.min()) == 0 and int(off.max()) == 14
    assert len(torch.unique(off[:, 0])) == 15


# -- objectives ------------------------------------------------------------------------------------
def _enc(seed=0):
    torch.manual_seed(seed)
    return MaskedEncoder(ViT(28, 7, 1, dim=16, depth=2, heads=2))


def test_info_nce_is_low_for_matching_views_and_log_b_for_identical_rows():
    z = torch.eye(8, dtype=torch.float64)
    assert float(info_nce(z, z, 0.05)) < 1e-6  # positives at cos 1, negatives at 0: e^-20
    same = torch.ones(8, 4, dtype=torch.float64)
    # every similarity equal: the loss is log B up to float64 rounding
    assert abs(float(info_nce(same, same, 0.1)) - math.log(8)) < 1e-12


def test_mae_loss_reads_masked_patches_only():
    enc = _enc()
    dec = torch.nn.Linear(16, 49)
    x = torch.randn(3, 1, 28, 28)
    mask = random_patch_mask(3, 16, 0.5, torch.Generator().manual_seed(0))
    assert mask.sum(1).tolist() == [8, 8, 8]
    with torch.no_grad():
        loss = mae_loss(enc, dec, x, mask)
        changed = mae_loss(enc, dec, x2_of(x, mask), mask)
    assert float(changed) != float(loss) and torch.isfinite(loss)


def x2_of(x, mask):
    """x with the pixels of the first masked patch of image 0 shifted: its target changes."""
    x2 = x.clone()
    r, c = divmod(int(torch.nonzero(mask[0])[0]), 4)
    x2[0, 0, r * 7:(r + 1) * 7, c * 7:(c + 1) * 7] += 1.0
    return x2


def test_mae_loss_ignores_visible_targets():
    enc = _enc()
    dec = torch.nn.Linear(16, 49)
    x = torch.randn(2, 1, 28, 28)
    mask = torch.zeros(2, 16, dtype=torch.bool)
    mask[:, :4] = True  # the first row of patches is masked
    with torch.no_grad():
        a = mae_loss(enc, dec, x, mask)
        # a masked patch is replaced by the mask token, so its pixels reach the loss only as
        # a target; scaling the pixels of the masked row changes the loss, while the loss is
        # a mean over masked patches only (checked against the hand-computed mean)
        pred = dec(enc(x, mask))
        err = ((pred - patchify(x, 7)) ** 2).mean(-1)
    # same float32 operations in a different order: agreement to float32 rounding
    assert abs(float(a) - float(err[:, :4].mean())) < 1e-5


def test_augment_view_keeps_shape_and_draws_from_the_generator():
    x = torch.randn(4, 1, 28, 28)
    a = augment_view(x, torch.Generator().manual_seed(1), -1.0, shift=4, noise=0.1)
    b = augment_view(x, torch.Generator().manual_seed(1), -1.0, shift=4, noise=0.1)
    c = augment_view(x, torch.Generator().manual_seed(2), -1.0, shift=4, noise=0.1)
    assert a.shape == x.shape and torch.equal(a, b) and not torch.equal(a, c)
    # no shift, no noise: each view is the image or its mirror, times a contrast, plus a
    # brightness: correlation 1 with one of the two
    d = augment_view(x, torch.Generator().manual_seed(3), 0.0, shift=0, noise=0.0)
    for i in range(4):
        corr = [float(torch.corrcoef(torch.stack([d[i].ravel(), src.ravel()]))[0, 1])
                for src in (x[i], x[i].flip(-1))]
        assert max(corr) > 1 - 1e-5, corr


def test_train_ssl_lowers_both_losses_and_repeats_exactly():
    items = torch.randn(16, 1, 14, 14)

    def place(ib, gen):
        return place_items(ib, random_offsets(len(ib), 14, gen), 0.0)

    cfg = SSLConfig(epochs=6, batch_size=8, lr=3e-3, weight_decay=0.0)
    for objective, out in (("mae", 49), ("cl", 16)):
        curves = []
        for _ in range(2):
            enc = _enc(0)
            torch.manual_seed(1)
            head = torch.nn.Linear(16, out)
            curves.append(train_ssl(objective, enc, head, items, cfg, 0, 0.0, place))
        assert curves[0] == curves[1]  # seeded: the same run twice
        assert len(curves[0]) == 6 and curves[0][-1] < curves[0][0], (objective, curves[0])

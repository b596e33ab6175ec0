"""Self-supervised training of the seed-batched ViT (theorylab.vision.nets._ssl): the views,
masks and losses do what their docstrings say, a seed's draws and training do not depend on
the other seeds of the batch, checkpoints are called, and the schedule warms up and decays."""

from __future__ import annotations

import math

import pytest
import torch

from theorylab.vision.nets import SeedViT, patchify_seeds, translate_images
from theorylab.vision.nets import _ssl as ss


def _small(seeds, init="local", **kw):
    return SeedViT(seeds, dim=16, depth=2, heads=2, init=init, **kw)


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
        err = ((pred - patchify_seeds(x, 4)) ** 2).mean(-1)
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


@pytest.mark.parametrize("objective, views", [("mae", None), ("cl", None), ("mae", "cl"),
                                              ("cl", "mae")])
def test_a_seed_trains_the_same_batched_or_alone(objective, views):
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
        losses = ss.train_seeds(objective, m, head, src, f, sch, ss.Augment(), views=views)
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


def test_crossed_views_differ_only_as_they_say(monkeypatch):
    """CL with MAE's views contrasts one view (noise 0 here: the same pixels) under two masks;
    CL with its own views sees two placements and no mask; MAE with CL's views reconstructs
    the other view of the pair, MAE with its own views its input."""
    items = torch.rand(1, 16, 1, 14, 14) + 1.0
    fill = torch.zeros(1)
    aug = ss.Augment(noise=0.0)
    sch = ss.SSLSchedule(steps=1, batch_size=8, lr=1e-3)
    for views in ("mae", "cl"):
        m = _small((0,))
        seen = []
        forward = m.forward
        monkeypatch.setattr(m, "forward", lambda x, mask=None, f=forward, seen=seen: (
            seen.append((x.clone(), mask)), f(x, mask))[1])
        ss.train_seeds("cl", m, ss.cl_projector((0,), 16), items, fill, sch, aug, views=views)
        (x1, m1), (x2, m2) = seen[:2]
        if views == "mae":
            assert torch.equal(x1, x2) and not torch.equal(m1, m2)
            assert int(m1.sum(-1).max()) == int(m1.sum(-1).min()) == round(0.6 * 49)
        else:
            assert not torch.equal(x1, x2) and m1 is None and m2 is None
    for views in ("mae", "cl"):
        got = []
        mae_loss = ss.mae_loss
        monkeypatch.setattr(ss, "mae_loss", lambda model, dec, x, mask, target=None, got=got,
                            f=mae_loss: (got.append((x.clone(), target)),
                                         f(model, dec, x, mask, target))[1])
        ss.train_seeds("mae", _small((0,)), ss.mae_decoder((0,), 16, 16), items, fill, sch, aug,
                       views=views)
        x, target = got[0]
        assert (target is None) if views == "mae" else not torch.equal(x, target)
        monkeypatch.setattr(ss, "mae_loss", mae_loss)
    with pytest.raises(ValueError, match="views"):
        ss.train_seeds("cl", _small((0,)), ss.cl_projector((0,), 16), items, fill, sch, aug,
                       views="dino")


def test_schedule_warms_up_then_decays_to_zero():
    sch = ss.SSLSchedule(steps=100, batch_size=8, lr=1.0, warmup=0.1)
    assert sch.lr_at(0) == pytest.approx(0.1) and sch.lr_at(9) == pytest.approx(1.0)
    assert sch.lr_at(99) < 1e-3

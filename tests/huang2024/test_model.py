"""The MAE model of Huang et al. (2025), Def. 2.4 (RECONSTRUCTED): the full-matrix and the
reduced (Φ, Υ) parametrisations give the same loss and gradients."""

from __future__ import annotations

import numpy as np
import pytest

from theorylab.huang2024 import FullQModel, config_from_dict, mae_loss_grad
from theorylab.huang2024.data import sample_batch


def _batch(cfg, structure, B, seed):
    d, m = cfg.data, cfg.model
    return sample_batch(np.random.default_rng(seed), structure, B, law=d.z_law, L=d.L, U=d.U,
                        values=d.z_values, probs=d.z_probs, mask_kind=m.mask, gamma=m.gamma,
                        mask_size=cfg.mask_size)


@pytest.mark.parametrize("mask_keys", [True, False])
@pytest.mark.parametrize("loss_norm", ["P", "mask", "none"])
@pytest.mark.parametrize("mask", ["bernoulli", "fixed"])
def test_full_Q_and_reduced_coordinates_agree(mask_keys, loss_norm, mask):
    cfg = config_from_dict({"data": {"P": 9, "K": 2, "C1": 5, "C": 2},
                            "model": {"mask": mask, "gamma": 0.5, "mask_keys": mask_keys,
                                      "loss_norm": loss_norm}})
    s = cfg.data.make_structure()
    rng = np.random.default_rng(3)
    d = s.P + s.F
    basis, _ = np.linalg.qr(rng.standard_normal((d, d)))  # a random orthonormal basis
    model = FullQModel(s, basis)
    Q = rng.standard_normal((d, d))  # every block of Q nonzero, including unused ones
    batch = _batch(cfg, s, 40, 5)
    loss_q, grad_q = model.loss_grad(Q, batch, mask_keys=mask_keys, loss_norm=loss_norm)
    Phi, Ups = model.reduced(Q)
    ev = mae_loss_grad(s, Phi, Ups, batch, mask_keys=mask_keys, loss_norm=loss_norm)
    # two float64 evaluations of O(1) quantities through different contractions: rounding only
    assert abs(loss_q - ev.loss) < 1e-12
    assert np.abs(grad_q - model.grad_from_reduced(ev.grad_Phi, ev.grad_Ups)).max() < 1e-12


def loss(s, Phi, Ups, batch):
    return mae_loss_grad(s, Phi, Ups, batch, need_grad=False).loss


def test_reduced_gradient_matches_finite_differences():
    cfg = config_from_dict({"data": {"P": 8, "C1": 4, "C": 2}})
    s = cfg.data.make_structure()
    rng = np.random.default_rng(0)
    Phi, Ups = rng.standard_normal((8, s.F)), rng.standard_normal((8, 8))
    batch = _batch(cfg, s, 20, 1)
    ev = mae_loss_grad(s, Phi, Ups, batch)
    h = 1e-6
    for (i, j) in [(0, 0), (3, 1), (7, 2)]:
        Pp, Pm = Phi.copy(), Phi.copy()
        Pp[i, j] += h
        Pm[i, j] -= h
        fd = (loss(s, Pp, Ups, batch) - loss(s, Pm, Ups, batch)) / (2 * h)
        # central difference: O(h²) truncation + O(1e-16/h) rounding ≈ 1e-10
        assert abs(fd - ev.grad_Phi[i, j]) < 1e-8
        Up, Um = Ups.copy(), Ups.copy()
        Up[j, i] += h
        Um[j, i] -= h
        fd = (loss(s, Phi, Up, batch) - loss(s, Phi, Um, batch)) / (2 * h)
        assert abs(fd - ev.grad_Ups[j, i]) < 1e-8


def test_uniform_attention_at_zero_and_perfect_reconstruction_limit():
    cfg = config_from_dict({"data": {"P": 8, "C1": 4, "C": 2}})
    s = cfg.data.make_structure()
    batch = _batch(cfg, s, 10, 2)
    ev = mae_loss_grad(s, np.zeros((8, s.F)), np.zeros((8, 8)), batch)
    unm = (~batch.mask).sum(axis=1)
    # Q = 0: every key has weight 1/P, so the mass on masked keys is |ℳ|/P for every query
    assert np.allclose(ev.attn_masked, (8 - unm)[:, None] / 8, atol=1e-15)
    # a huge own-area FP correlation reconstructs exactly whenever an own-area key is unmasked
    Phi = np.zeros((8, s.F))
    Phi[np.arange(8), s.feature_index()[0]] = 200.0
    ev = mae_loss_grad(s, Phi, np.zeros((8, 8)), batch)
    lab = s.labels[0]
    for b in range(len(batch)):
        for p in np.flatnonzero(batch.mask[b]):
            if np.any(~batch.mask[b] & (lab == lab[p])):
                assert ev.attn_own[b, p] > 1 - 1e-12  # e^{-100}-level leakage

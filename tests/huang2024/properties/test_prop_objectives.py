"""Properties of Huang et al. (2025)'s MAE and CL objectives that the reconstruction's proofs
rely on (docs/papers/huang2024.md §2, §4; docs/properties.md, second table).

Strategies: ``theorylab/huang2024/testing.py`` (tiny configurations: P ≤ 6, K ≤ 2, discrete
laws of z with ≤ 3 values, so the brute-force population sum has at most a few thousand rows).

Tolerances. Every compared quantity is O(1)–O(10): z ≤ 1.5, P ≤ 6, the weights of the
population sums add up to 1 and ``loss_norm`` ≤ 1, so a loss is at most ½·P·U² ≈ 7 and every
gradient entry is of the same order. The two sides of each comparison are the same sums in a
different order (a permuted batch, another engine's grouping, another basis), so they differ
by rounding only: a few thousand float64 terms, each with a relative error of a few eps
(2.2e-16), give at most ~1e-12 of the scale. We compare with ``atol = 1e-10 · (1 + scale)``
(``_close``): a margin of ~100 over the rounding, while any modelling error (a wrong
permutation, a missing term, a wrong basis) moves the values by O(0.01–1).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from theorylab.huang2024 import config_from_dict
from theorylab.huang2024 import testing as ts
from theorylab.huang2024.cl import CLBatch, cl_loss_grad, swap_views
from theorylab.huang2024.data import AreaStructure
from theorylab.huang2024.engines import BruteEngine, ExactEngine, LaplaceEngine, Params, batch_lstar
from theorylab.huang2024.model import FullQModel, mae_loss_grad

RTOL = 1e-10  # see the module docstring: ~100 × the rounding of the tiny population sums


def _close(a, b, rtol: float = RTOL) -> None:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    scale = max(np.max(np.abs(a), initial=0.0), np.max(np.abs(b), initial=0.0))
    np.testing.assert_allclose(a, b, rtol=0, atol=rtol * (1 + scale))


def _eval(engine, params: Params):
    ev = engine.evaluate(params, 0, need_grad=True, record=False)
    return ev.loss, ev.grads["Phi"], ev.grads["Ups"]


# ---------------------------------------------------------------------------------------------
# 1. relabelling patches


def _relabel_patches(s: AreaStructure, params: Params, pi: np.ndarray):
    """Structure and state after moving patch p to π[p]: labels'[:, π] = labels,
    Φ'[π] = Φ, Υ'[π p, π q] = Υ[p, q]."""
    labels = np.empty_like(s.labels)
    labels[:, pi] = s.labels
    Phi = np.empty_like(params.Phi)
    Phi[pi] = params.Phi
    Ups = np.empty_like(params.Ups)
    Ups[np.ix_(pi, pi)] = params.Ups
    return AreaStructure(labels), Params(Phi, Ups)


@given(data=st.data(), cfg=ts.configs())
def test_relabelling_patches_within_areas_is_a_symmetry_of_the_exact_population_loss(data, cfg):
    """A permutation π of the patches that maps every area of every cluster to itself (inside
    the atoms) leaves the population loss unchanged and maps the gradients by π (Φ rows, Υ rows
    and columns); exact engine on a symmetric state, brute force on an arbitrary one."""
    s = cfg.data.make_structure()
    pi = data.draw(ts.atom_permutations(s))
    s2, _ = _relabel_patches(s, Params(np.zeros((s.P, s.F)), np.zeros((s.P, s.P))), pi)
    np.testing.assert_array_equal(s2.labels, s.labels)  # π maps every area to itself
    exact = ExactEngine(cfg, s)
    params = data.draw(ts.symmetric_states(s))
    _, moved = _relabel_patches(s, params, pi)
    loss, gPhi, gUps = _eval(exact, params)
    loss2, gPhi2, gUps2 = _eval(exact, moved)
    _close(loss2, loss)
    _close(gPhi2[pi], gPhi)
    _close(gUps2[np.ix_(pi, pi)], gUps)
    brute = BruteEngine(cfg, s)
    params = data.draw(ts.states(s))
    _, moved = _relabel_patches(s, params, pi)
    loss, gPhi, gUps = _eval(brute, params)
    loss2, gPhi2, gUps2 = _eval(brute, moved)
    _close(loss2, loss)
    _close(gPhi2[pi], gPhi)
    _close(gUps2[np.ix_(pi, pi)], gUps)


@given(data=st.data(), cfg=ts.configs(max_P=5))
def test_relabelling_any_patches_with_the_areas_is_a_symmetry(data, cfg):
    """Any permutation of the patches, applied to the areas too (Def. 2.1 allows any
    partition), leaves the population loss unchanged and maps the gradients (brute force,
    arbitrary state)."""
    s = cfg.data.make_structure()
    pi = np.random.default_rng(data.draw(ts.seeds)).permutation(s.P)
    params = data.draw(ts.states(s))
    s2, moved = _relabel_patches(s, params, pi)
    loss, gPhi, gUps = _eval(BruteEngine(cfg, s), params)
    loss2, gPhi2, gUps2 = _eval(BruteEngine(cfg, s2), moved)
    _close(loss2, loss)
    _close(gPhi2[pi], gPhi)
    _close(gUps2[np.ix_(pi, pi)], gUps)


# ---------------------------------------------------------------------------------------------
# 2. relabelling clusters


@given(data=st.data(), cfg=ts.configs(K=2))
def test_relabelling_clusters_is_a_symmetry(data, cfg):
    """Exchanging the clusters (labels rows, feature blocks of Φ) leaves the loss unchanged and
    maps ∂L/∂Φ by the same column permutation (brute force, and exact on a symmetric state).
    Clusters are equally likely (RECONSTRUCTED), so this holds for every pair of partitions."""
    s = cfg.data.make_structure()
    sigma = np.array([1, 0])
    s2 = AreaStructure(s.labels[sigma])
    # feature f(k', j) of the new structure is feature f(σ k', j) of the old one
    cols = np.concatenate([s.offset[sigma[k]] + np.arange(s.n_areas[sigma[k]])
                           for k in range(s.K)])
    for make, state in ((BruteEngine, ts.states(s)), (ExactEngine, ts.symmetric_states(s))):
        params = data.draw(state)
        moved = Params(params.Phi[:, cols], params.Ups)
        loss, gPhi, gUps = _eval(make(cfg, s), params)
        loss2, gPhi2, gUps2 = _eval(make(cfg, s2), moved)
        _close(loss2, loss)
        _close(gPhi2, gPhi[:, cols])
        _close(gUps2, gUps)


# ---------------------------------------------------------------------------------------------
# 3. orthogonal transforms of the embedding space; 6. reduced = full Q


@given(data=st.data(), cfg=ts.configs(max_P=5))
def test_orthogonal_transform_of_the_embedding_space_is_a_symmetry(data, cfg):
    """With positions and features the columns of an orthogonal R (E = R[:, :P],
    V = R[:, P:]), L_R(Q) = L_I(RᵀQR) and ∂L_R/∂Q = R ∂L_I Rᵀ: the loss sees Q only through
    inner products of orthonormal tokens (FullQModel, computed in the embedding space)."""
    s = cfg.data.make_structure()
    d = s.P + s.F
    R = data.draw(ts.orthogonal_matrices(d))
    Q = np.random.default_rng(data.draw(ts.seeds)).standard_normal((d, d))
    batch = BruteEngine(cfg, s).batch
    kw = {"mask_keys": cfg.model.mask_keys, "loss_norm": cfg.model.loss_norm}
    loss_r, g_r = FullQModel(s, basis=R).loss_grad(Q, batch, **kw)
    loss_i, g_i = FullQModel(s).loss_grad(R.T @ Q @ R, batch, **kw)
    _close(loss_r, loss_i)
    _close(g_r, R @ g_i @ R.T)


@given(data=st.data(), cfg=ts.configs(max_P=5))
def test_reduced_parametrisation_equals_full_Q(data, cfg):
    """At a random Q in a random orthonormal basis: the loss at (Φ, Υ) = (EᵀQV, EᵀQE) equals
    the loss at Q, ∂L/∂Q = E ∂Φ Vᵀ + E ∂Υ Eᵀ (chain rule), so Vᵀ ∂L/∂Q = 0 and moving Q by
    V·M (rows in feature directions) changes nothing."""
    s = cfg.data.make_structure()
    d = s.P + s.F
    R = data.draw(ts.orthogonal_matrices(d))
    rng = np.random.default_rng(data.draw(ts.seeds))
    Q = rng.standard_normal((d, d))
    model = FullQModel(s, basis=R)
    batch = BruteEngine(cfg, s).batch
    kw = {"mask_keys": cfg.model.mask_keys, "loss_norm": cfg.model.loss_norm}
    loss_q, g_q = model.loss_grad(Q, batch, **kw)
    be = mae_loss_grad(s, *model.reduced(Q), batch, **kw)
    _close(be.loss, loss_q)
    _close(model.grad_from_reduced(be.grad_Phi, be.grad_Ups), g_q)
    _close(model.V.T @ g_q, np.zeros((s.F, d)))
    loss_m, _ = model.loss_grad(Q + model.V @ rng.standard_normal((s.F, d)), batch, **kw)
    _close(loss_m, loss_q)


# ---------------------------------------------------------------------------------------------
# 4. swapping the CL views


@st.composite
def _cl_batches(draw, s: AreaStructure):
    rng = np.random.default_rng(draw(ts.seeds))
    B = draw(st.integers(2, 6))
    K, P, Nmax = s.K, s.P, int(s.n_areas.max())
    cluster = rng.integers(0, K, size=B)
    z = rng.uniform(0.5, 1.5, size=(B, Nmax))
    z = np.where(np.arange(Nmax)[None, :] < s.n_areas[cluster][:, None], z, 0.0)
    return CLBatch(cluster, z, rng.random((B, P)) < 0.5, rng.random((B, P)) < 0.5)


@given(data=st.data(), cfg=ts.configs())
def test_swapping_the_cl_views_leaves_the_symmetric_infonce_loss_unchanged(data, cfg):
    """With ``cl_symmetric`` the InfoNCE loss is ½(ℓ^{1→2} + ℓ^{2→1}); swapping the views
    swaps the two terms, so the loss, the per-image losses and the gradients are unchanged
    (gradients: autograd sums in another order, hence the rounding tolerance)."""
    s = cfg.data.make_structure()
    batch = data.draw(_cl_batches(s))
    params = data.draw(ts.states(s, scale=1.0))
    kw = {"temperature": data.draw(st.sampled_from([0.1, 0.5, 1.0])),
          "negatives": data.draw(st.integers(1, len(batch) - 1)),
          "mask_keys": cfg.model.mask_keys}
    a = cl_loss_grad(s, params.Phi, params.Ups, batch, **kw)
    b = cl_loss_grad(s, params.Phi, params.Ups, swap_views(batch), **kw)
    _close(b.loss, a.loss)
    _close(b.per_sample, a.per_sample)
    _close(b.grad_Phi, a.grad_Phi)
    _close(b.grad_Ups, a.grad_Ups)
    _close(b.attn_own[:, ::-1], a.attn_own)


@given(data=st.data(), cfg=ts.configs())
def test_relabelling_patches_is_a_symmetry_of_the_cl_loss(data, cfg):
    """Moving patch p to π[p] in the areas, both views' masks, Φ rows and Υ rows and columns
    leaves the InfoNCE batch loss (mean pooling over patches) unchanged and maps its gradients
    by π (the CL side of property 1; image by image, so on any batch)."""
    s = cfg.data.make_structure()
    batch = data.draw(_cl_batches(s))
    params = data.draw(ts.states(s, scale=1.0))
    pi = np.random.default_rng(data.draw(ts.seeds)).permutation(s.P)
    s2, moved = _relabel_patches(s, params, pi)
    m1, m2 = np.empty_like(batch.mask1), np.empty_like(batch.mask2)
    m1[:, pi], m2[:, pi] = batch.mask1, batch.mask2
    kw = {"temperature": 0.5, "negatives": len(batch) - 1, "mask_keys": cfg.model.mask_keys}
    a = cl_loss_grad(s, params.Phi, params.Ups, batch, **kw)
    b = cl_loss_grad(s2, moved.Phi, moved.Ups, CLBatch(batch.cluster, batch.z, m1, m2), **kw)
    _close(b.loss, a.loss)
    _close(b.per_sample, a.per_sample)
    _close(b.grad_Phi[pi], a.grad_Phi)
    _close(b.grad_Ups[np.ix_(pi, pi)], a.grad_Ups)


# ---------------------------------------------------------------------------------------------
# 5. exact = brute force


@given(data=st.data(), cfg=ts.configs())
def test_exact_equals_brute_force_on_random_symmetric_states(data, cfg):
    """The exchangeable exact sum (counts of unmasked keys per atom) equals the enumeration of
    every mask and coefficient vector: loss, both gradients and L*, for random P, area sizes,
    K, mask laws, ``mask_keys``, ``loss_norm`` and laws of z; so does ``population-laplace``
    where it applies (Bernoulli masks, ``loss_norm`` P or none)."""
    s = cfg.data.make_structure()
    params = data.draw(ts.symmetric_states(s))
    brute, exact = BruteEngine(cfg, s), ExactEngine(cfg, s)
    lb, pb, ub = _eval(brute, params)
    le, pe, ue = _eval(exact, params)
    _close(le, lb)
    _close(pe, pb)
    _close(ue, ub)
    np.testing.assert_equal(np.isnan(exact.lstar), np.isnan(brute.lstar))
    if cfg.model.mask == "bernoulli" and cfg.model.loss_norm != "mask":
        # population-laplace: the same sum through 1/Z = ∫e^{−tZ}dt, trapezoid rule in ln t
        # (step 0.2: ~1e-15 of the scale per its docstring), so the same tolerance applies
        ll, pl, ul = _eval(LaplaceEngine(cfg, s), params)
        _close(ll, lb)
        _close(pl, pb)
        _close(ul, ub)


# ---------------------------------------------------------------------------------------------
# 7. what the §2/§4 derivation uses


@given(data=st.data(), cfg=ts.configs(mask_keys=True))
def test_loss_is_at_least_its_infimum_on_every_state(data, cfg):
    """L ≥ L* = E[norm · Σ_{areas A ⊂ ℳ} |A|·½z²] on every state (masked keys in the softmax):
    a masked patch whose area is entirely masked can only output other features. The closed
    form equals the same sum over the enumerated batch (``batch_lstar``). The slack is the
    rounding tolerance only (L* is attained in a limit, so L − L* can be arbitrarily small)."""
    s = cfg.data.make_structure()
    brute = BruteEngine(cfg, s)
    _close(batch_lstar(s, brute.batch, cfg.model.loss_norm), brute.lstar)
    for params in (data.draw(ts.states(s, scale=4.0)), data.draw(ts.symmetric_states(s))):
        loss = brute.evaluate(params, 0, need_grad=False, record=False).loss
        assert loss >= brute.lstar - RTOL * (1 + abs(loss)), (loss, brute.lstar)


@given(data=st.data(), cfg=ts.configs())
def test_population_gradient_keeps_the_atom_symmetry_and_rows_of_dUps_sum_to_zero(data, cfg):
    """At a state whose Υ is constant on each atom of every row, the population ∂L/∂Υ is too
    (its component along the directions the symmetry forbids is zero), so GD stays in the
    exact engine's domain (notes §4). Adding a constant to a row of Υ shifts every logit of that
    query (masked keys kept or not), so each row of ∂L/∂Υ sums to 0 on every state."""
    s = cfg.data.make_structure()
    brute = BruteEngine(cfg, s)
    atom, _ = s.atoms()
    _, _, gUps = _eval(brute, data.draw(ts.symmetric_states(s)))
    scale = np.max(np.abs(gUps), initial=0.0)
    for p in range(s.P):
        for a in np.unique(atom):
            g = gUps[p, (atom == a) & (np.arange(s.P) != p)]
            if g.size:
                assert np.ptp(g) <= RTOL * (1 + scale), (p, a, g)
    _close(gUps.sum(axis=1), np.zeros(s.P))
    _, _, gUps = _eval(brute, data.draw(ts.states(s)))
    _close(gUps.sum(axis=1), np.zeros(s.P))


@pytest.mark.parametrize("mask_keys", [True, False])
def test_zero_init_is_symmetric_and_exact_equals_brute_there(mask_keys):
    """Q⁰ = 0 (the reconstructed initialisation) is a symmetric state; one GD step of the exact
    engine equals one of brute force (a deterministic smoke check of the domain GD stays in)."""
    cfg = config_from_dict({
        "data": {"P": 6, "K": 2, "C1": 4, "C": 2, "z_law": "values", "z_values": [0.5, 1.5]},
        "model": {"gamma": 0.5, "mask_keys": mask_keys},
        "train": {"engine": "population-brute", "lr": 0.5},
    })
    s = cfg.data.make_structure()
    brute, exact = BruteEngine(cfg, s), ExactEngine(cfg, s)
    p0 = brute.initial_params()
    for _ in range(2):
        pb = brute.apply(p0, brute.evaluate(p0, 0, need_grad=True, record=False).grads)
        pe = exact.apply(p0, exact.evaluate(p0, 0, need_grad=True, record=False).grads)
        _close(pe.Phi, pb.Phi)
        _close(pe.Ups, pb.Ups)
        exact.check_symmetric(pb.Ups)
        p0 = pb

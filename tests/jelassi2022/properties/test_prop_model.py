"""Properties of eq. (T) itself: softmax (1), relabelling (2), odd activations (5), rotations (7),
analytic gradients against torch.autograd and numpy against torch (10).

Tolerances: F and the losses are sums of polynomials of the projections U = ⟨v, X_j⟩; rounding
errors of F are a small multiple of ``eps · tie_scale`` (tie_scale = D·|σ|(κ·max|U|) bounds every
term, ``model.tie_scale``), so F is compared with ``atol = 1e-10 · tie_scale`` (float64,
eps = 2.2e-16: a margin of ~5e5 covers the O(D·d) rounding steps); losses and gradients with
a relative 1e-10 of their own scale.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from theorylab import Activation, PositionalAttentionModel
from theorylab.core.backend import get_backend
from theorylab.jelassi2022 import testing as ts
from theorylab.jelassi2022.data import Sample
from theorylab.jelassi2022.engines import EmpiricalEngine
from theorylab.jelassi2022.model import (
    attention,
    evaluate_projections,
    grad_A_from_dS,
    model_output,
    tie_scale,
)

NP = get_backend("numpy")


def _model(mc) -> PositionalAttentionModel:
    return PositionalAttentionModel(mc.make_activation(), mc.temperature, mc.value_scale)


@st.composite
def _inputs(draw, max_D=8, odd=None):
    """(partition, A, v, X, y, model) with X ~ N(0, 0.5²) of shape (N, D, d)."""
    part = draw(ts.partitions(max_D=max_D))
    mc = draw(ts.model_configs(odd=odd))
    A = draw(ts.attention_matrices(part))
    d = draw(st.integers(2, 5))
    N = draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(ts.seeds))
    X = 0.5 * rng.standard_normal((N, part.D, d))
    y = rng.choice([-1.0, 1.0], size=N)
    v = rng.standard_normal(d)
    return part, A, v, X, y, _model(mc)


def _assert_F_close(a, b, atol, rtol=1e-9):
    """Elementwise |a − b| ≤ rtol·|b| + atol (atol may be per-sample)."""
    a, b = np.asarray(a), np.asarray(b)
    bad = np.abs(a - b) > rtol * np.abs(b) + atol
    tol = np.broadcast_to(atol, a.shape)[bad]
    assert not bad.any(), f"F differs: {a[bad]} vs {b[bad]} (atol {tol})"


def _F_atol(X, v, model):
    # 1e-10 × the per-sample bound on |terms of F| (see the module docstring)
    return 1e-10 * NP.to_numpy(tie_scale(X @ v, model, NP)) + 1e-300


# -- 1. softmax ------------------------------------------------------------------------------------
@given(_inputs(), st.data())
def test_softmax_rows_and_row_shift_invariance(inp, data):
    """Eq. (T): S_ij = exp(A_ij/√d)/Σ_r exp(A_ir/√d) (FOUND). Rows of S are positive and sum to
    1; adding a constant to a row of A changes neither S nor F; hence (DERIVED, notes §2.4:
    ∂S_ij/∂A_ik = S_ij(δ_jk − S_ik)/√d) each row of ∂L/∂A, diagonal included, sums to zero."""
    part, A, v, X, y, model = inp
    S = attention(A, model.temperature)
    assert np.all(S > 0)
    np.testing.assert_allclose(S.sum(axis=1), 1.0, rtol=0, atol=1e-14)  # D ≤ 16 roundings of ≤ 1
    row = data.draw(st.integers(0, part.D - 1))
    shift = data.draw(st.floats(-5.0, 5.0))
    A2 = A.copy()
    A2[row] += shift
    # entries change by ≤ 8 ulp of |A| ≤ 8 after the shift; S moves by ≤ ~1e-14 relative
    np.testing.assert_allclose(attention(A2, model.temperature), S, rtol=1e-13, atol=1e-15)
    _assert_F_close(model_output(X, A2, v, model), model_output(X, A, v, model),
                    _F_atol(X, v, model))
    ev = evaluate_projections(X @ v, y, np.full(len(y), 1 / len(y)), S, model, NP)
    dA = grad_A_from_dS(S, ev.dS, model.temperature, NP, freeze_diag=False)
    scale = np.abs(S * ev.dS).sum(axis=1) / model.temperature  # size of the summed terms
    assert np.all(np.abs(dA.sum(axis=1)) <= 1e-12 * (scale + 1e-300))
    frozen = grad_A_from_dS(S, ev.dS, model.temperature, NP)
    assert np.all(np.diag(frozen) == 0)  # Simplification 3.1: the diagonal is frozen
    off = ~np.eye(part.D, dtype=bool)
    np.testing.assert_array_equal(frozen[off], dA[off])


# -- 2. relabelling --------------------------------------------------------------------------------
@given(_inputs(), st.data())
def test_relabelling_patches_is_a_symmetry_of_F(inp, data):
    """Eq. (T) (FOUND) has no positional structure except through A: relabelling the patches by
    Π (X_j ↦ X_Π(j), A ↦ ΠAΠᵀ) leaves F, the empirical loss and error unchanged and maps
    ∂L/∂A to Π(∂L/∂A)Πᵀ and ∂L/∂v to itself."""
    part, A, v, X, y, model = inp
    perm = data.draw(ts.permutations_of(part.D))
    inv = np.argsort(perm)
    X2, A2 = X[:, inv], A[np.ix_(inv, inv)]  # X2[:, perm[i]] = X[:, i], A2[perm i, perm j] = A_ij
    _assert_F_close(model_output(X2, A2, v, model), model_output(X, A, v, model),
                    _F_atol(X, v, model))
    w = np.full(len(y), 1 / len(y))
    evs = []
    for XX, AA in ((X, A), (X2, A2)):
        S = attention(AA, model.temperature)
        ev = evaluate_projections(XX @ v, y, w, S, model, NP)
        dA = grad_A_from_dS(S, ev.dS, model.temperature, NP)
        dv = ev.dU.reshape(-1) @ XX.reshape(-1, XX.shape[2])
        evs.append((float(ev.loss), float(ev.error), dA, dv))
    (l1, e1, dA1, dv1), (l2, e2, dA2, dv2) = evs
    assert l2 == pytest.approx(l1, rel=1e-10, abs=1e-300)  # same terms, other summation order
    assert e2 == e1
    g = max(np.abs(dA1).max(), np.abs(dv1).max(), 1e-300)
    np.testing.assert_allclose(dA2, dA1[np.ix_(inv, inv)], rtol=0, atol=1e-10 * g)
    np.testing.assert_allclose(dv2, dv1, rtol=0, atol=1e-10 * g)


# -- 5. odd activations ----------------------------------------------------------------------------
@given(_inputs(odd=True))
def test_odd_activation_makes_F_odd_and_loss_label_flip_invariant(inp):
    """Eq. (T) with an odd σ (cubic, as the paper notes §2.4 recommends, or h⁵ + 0.03h of S7):
    F(−X) = −F(X), so flipping y together with X leaves the empirical loss (E) unchanged."""
    part, A, v, X, y, model = inp
    assert model.activation.is_odd
    F = model_output(X, A, v, model)
    _assert_F_close(model_output(-X, A, v, model), -F, _F_atol(X, v, model), rtol=1e-12)
    S = attention(A, model.temperature)
    w = np.full(len(y), 1 / len(y))
    a = evaluate_projections(X @ v, y, w, S, model, NP, need_grad=False)
    b = evaluate_projections(-X @ v, -y, w, S, model, NP, need_grad=False)
    assert float(b.loss) == pytest.approx(float(a.loss), rel=1e-12)
    assert float(b.error) == float(a.error)


# -- 7. rotations ----------------------------------------------------------------------------------
@given(_inputs(), ts.seeds)
def test_rotating_wstar_noise_and_v_leaves_F_unchanged(inp, seed):
    """Assumption 1 (FOUND) fixes only w* and the law of ξ, which is rotation-equivariant, and
    eq. (T) reads X only through ⟨v, X_j⟩: rotating w*, ξ and v by one orthogonal Q leaves F
    unchanged sample by sample (and the coefficients c_j = ⟨w*, X_j⟩ too)."""
    part, A, v, X, y, model = inp
    d = X.shape[2]
    Q, R = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, d)))
    Q = Q * np.sign(np.diag(R))  # Haar orthogonal
    rng = np.random.default_rng(seed + 1)
    wstar = rng.standard_normal(d)
    wstar /= np.linalg.norm(wstar)
    c = rng.integers(-1, 2, size=X.shape[:2]).astype(float)
    xi = X - (X @ wstar)[..., None] * wstar  # noise orthogonal to w*
    Xa = c[..., None] * wstar + xi
    Xb = c[..., None] * (Q @ wstar) + xi @ Q.T
    np.testing.assert_allclose(Xb @ (Q @ wstar), c, atol=1e-13)  # |X| ≲ 5: a few ulp
    _assert_F_close(model_output(Xb, A, Q @ v, model), model_output(Xa, A, v, model),
                    _F_atol(Xa, v, model))


# -- 10. analytic gradients = torch.autograd -------------------------------------------------------
def _autograd(X, y, A, v, model):
    """Loss (E) and its gradients written directly in torch (float64 reference)."""
    At = torch.tensor(A, dtype=torch.float64, requires_grad=True)
    vt = torch.tensor(v, dtype=torch.float64, requires_grad=True)
    Xt, yt = torch.tensor(X), torch.tensor(y)
    S = torch.softmax(At / model.temperature, dim=1)
    S.retain_grad()
    H = model.value_scale * (Xt @ vt) @ S.T
    sig = sum(c * H**k for k, c in enumerate(model.activation.coeffs))
    F = sig.sum(dim=1)
    # logaddexp, not softplus: torch softplus is the identity above 20 (relative error e^-20)
    loss = torch.logaddexp(torch.zeros_like(F), -yt * F).mean()
    loss.backward()
    gA = At.grad.numpy().copy()
    np.fill_diagonal(gA, 0.0)  # frozen diagonal (Simplification 3.1)
    dS = S.grad.numpy()
    Sn = S.detach().numpy()
    scale_A = (Sn * (np.abs(dS) + (Sn * np.abs(dS)).sum(1, keepdims=True))).max()
    scale_A /= model.temperature
    return float(loss.detach()), gA, vt.grad.numpy().copy(), scale_A


@pytest.mark.parametrize(
    "backend,dtype,rtol",
    [
        ("numpy", "float64", 1e-10),  # float64: exact formulas, rounding only
        ("torch", "float64", 1e-10),
        # float32 (eps 1.2e-7): sums over N·D² terms and polynomial powers of H lose ~1e3 eps
        ("numpy", "float32", 2e-3),
        ("torch", "float32", 2e-3),
    ],
)
@given(inp=_inputs(max_D=6))
def test_engine_gradients_match_autograd(backend, dtype, rtol, inp):
    """The derived gradients of the module docstring of ``theorylab.jelassi2022.model``
    (DERIVED from
    eq. (T) and problem (E)) equal torch.autograd of the empirical loss (E), for drawn
    shapes (N, D, d), both backends and both dtypes."""
    part, A, v, X, y, model = inp
    d = X.shape[2]
    from theorylab import DataConfig, ExperimentConfig, ModelConfig, TrainConfig

    coeffs = list(model.activation.coeffs)
    cfg = ExperimentConfig(
        data=DataConfig(D=part.D, partition=part.to_list(), d=d, q=0.5),
        model=ModelConfig(activation=coeffs, temperature=model.temperature,
                          value_scale=model.value_scale, diag=float(A[0, 0])),
        train=TrainConfig(engine="empirical", backend=backend, dtype=dtype, n_train=len(y),
                          n_test=len(y)),
    ).resolved()
    npdt = np.float32 if dtype == "float32" else np.float64
    smp = Sample(X=X.astype(npdt), y=y.astype(np.int8), ell=np.zeros(len(y), dtype=np.int64),
                 c=np.zeros(X.shape[:2], dtype=np.int8), wstar=np.eye(d)[0])
    xp = get_backend(backend, dtype)
    eng = EmpiricalEngine(cfg, xp, part, smp.wstar, train=smp, test=smp)
    Xr = X.astype(npdt).astype(np.float64)  # the engine sees the rounded inputs
    params = {"A": xp.asarray(A), "v": xp.asarray(v)}
    ev = eng.evaluate(params, 0, need_grad=True, record=False)
    A_used = xp.to_numpy(params["A"]).astype(np.float64)
    v_used = xp.to_numpy(params["v"]).astype(np.float64)
    loss, gA, gv, scale_A = _autograd(Xr, y, A_used, v_used, model)
    assert ev.train_loss == pytest.approx(loss, rel=rtol, abs=rtol * 1e-3)
    gA_e = xp.to_numpy(ev.grads["A"]).astype(np.float64)
    gv_e = xp.to_numpy(ev.grads["v"]).astype(np.float64)
    # ∂L/∂v_k = Σ_nj ∂L/∂U_nj X_njk: two summation orders differ by at most ~(N·D)·eps·Σ|terms|,
    # so the tolerance is rtol × Σ_nj |∂L/∂U_nj|·|X_njk| (the magnitude of the summed terms)
    np_xp = get_backend("numpy")
    S = np_xp.row_softmax(A_used / model.temperature)
    dU = evaluate_projections(Xr @ v_used, y.astype(np.float64), 1.0 / len(y), S, model,
                              np_xp).dU
    scale_v = float(np.einsum("nj,njk->k", np.abs(dU), np.abs(Xr)).max())
    # absolute floor: values below ~1e-30 underflow in float32 (tiny = 1.2e-38, and products of
    # such values vanish), so float32 cannot resolve gradients of that size
    floor = 1e-30 if dtype == "float32" else 1e-300
    np.testing.assert_allclose(gA_e, gA, rtol=0, atol=rtol * max(scale_A, floor))
    np.testing.assert_allclose(gv_e, gv, rtol=0, atol=rtol * max(scale_v, np.abs(gv).max(), floor))


def test_activation_is_odd_flag_matches_definition():
    """Helper check for item 5: `Activation.is_odd` agrees with σ(−h) = −σ(h)."""
    h = np.linspace(-2, 2, 9)
    for spec in ("cubic", "quintic", [0.0, 1.0, 0.5]):
        act = Activation.from_spec(spec)
        assert act.is_odd == bool(np.allclose(act(-h), -act(h)))


def _plain_horner(coeffs, h):
    """σ and σ' by the textbook Horner rule on full arrays (the reference of the fast path)."""
    p, dp = np.full_like(h, coeffs[-1]), np.zeros_like(h)
    for c in reversed(coeffs[:-1]):
        dp = dp * h + p
        p = p * h + c
    return p, dp


@given(spec=ts.activations(), h=st.lists(st.floats(-50, 50), min_size=1, max_size=20))
def test_activation_fast_horner_equals_plain_horner(spec, h):
    """`Activation.value_and_grad` and `__call__` skip exact ×1 and +0 steps: the values are the
    plain Horner rule's to the bit (up to the sign of zero), on numpy and torch."""
    act = Activation.from_spec(spec)
    h = np.asarray(h, dtype=np.float64)
    p, dp = _plain_horner(act.coeffs, h)
    for backend in (np.asarray, torch.from_numpy):
        v, g = (np.asarray(x) for x in act.value_and_grad(backend(h.copy())))
        np.testing.assert_array_equal(v, p)  # array_equal: −0.0 == 0.0
        np.testing.assert_array_equal(g, dp)
        np.testing.assert_array_equal(np.asarray(act(backend(h.copy()))), p)

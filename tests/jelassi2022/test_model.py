"""Eq. (T): analytic gradients against finite differences and torch.autograd; numpy vs torch."""

import numpy as np
import pytest
import torch

from tests._backends import assert_close
from theorylab import Activation, PositionalAttentionModel, get_backend, model_output
from theorylab.jelassi2022.model import attention, evaluate_projections, grad_A_from_dS


def _problem(seed=0, N=40, D=6, d=5, act="quintic"):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, D, d)) * 0.5
    y = rng.choice([-1.0, 1.0], N)
    A = rng.standard_normal((D, D))
    v = rng.standard_normal(d) * 0.5
    model = PositionalAttentionModel(Activation.from_spec(act), temperature=1.7, value_scale=1.3)
    return X, y, A, v, model


def _loss_and_grads(X, y, A, v, model, xp):
    X, y, A, v = (xp.asarray(a) for a in (X, y, A, v))
    S = attention(A, model.temperature, xp)
    N = X.shape[0]
    ev = evaluate_projections(X @ v, y, 1.0 / N, S, model, xp)
    dA = grad_A_from_dS(S, ev.dS, model.temperature, xp)
    dv = ev.dU.reshape(-1) @ X.reshape(-1, X.shape[2])
    return xp.item(ev.loss), xp.to_numpy(dA), xp.to_numpy(dv)


def _loss_np(X, y, A, v, model):
    F = model_output(X, A, v, model)
    return float(np.mean(np.logaddexp(0, -y * F)))


def test_gradients_match_finite_differences():
    X, y, A, v, model = _problem()
    loss, dA, dv = _loss_and_grads(X, y, A, v, model, get_backend())
    assert loss == pytest.approx(_loss_np(X, y, A, v, model), rel=1e-14)
    h = 1e-6  # central differences: truncation O(h²) ~ 1e-12, rounding ~ 1e-16/h = 1e-10
    for i, k in [(0, 1), (2, 5), (5, 3)]:
        E = np.zeros_like(A)
        E[i, k] = h
        fd = (_loss_np(X, y, A + E, v, model) - _loss_np(X, y, A - E, v, model)) / (2 * h)
        assert dA[i, k] == pytest.approx(fd, rel=1e-6, abs=1e-9)
    for j in range(v.size):
        e = np.zeros_like(v)
        e[j] = h
        fd = (_loss_np(X, y, A, v + e, model) - _loss_np(X, y, A, v - e, model)) / (2 * h)
        assert dv[j] == pytest.approx(fd, rel=1e-6, abs=1e-9)
    assert np.all(np.diag(dA) == 0)  # frozen diagonal


@pytest.mark.parametrize("act", ["cubic", "quintic", [0.1, -0.5, 0.2, 0.3]])
def test_gradients_match_autograd(act):
    X, y, A, v, model = _problem(seed=1, act=act)
    _, dA, dv = _loss_and_grads(X, y, A, v, model, get_backend())
    Xt, yt = torch.tensor(X), torch.tensor(y)
    At = torch.tensor(A, requires_grad=True)
    vt = torch.tensor(v, requires_grad=True)
    S = torch.softmax(At / model.temperature, dim=1)
    H = model.value_scale * (Xt @ vt) @ S.T
    F = model.activation(H).sum(1)
    # logaddexp, not softplus: torch softplus switches to the identity above 20 (error e^-20)
    torch.logaddexp(torch.zeros_like(F), -yt * F).mean().backward()
    gA = At.grad.numpy() * (1 - np.eye(A.shape[0]))
    # float64, same formula evaluated in another order: agreement to ~1e-13 relative
    np.testing.assert_allclose(dA, gA, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(dv, vt.grad.numpy(), rtol=1e-10, atol=1e-13)


def test_numpy_equals_torch():
    X, y, A, v, model = _problem(seed=2)
    a = _loss_and_grads(X, y, A, v, model, get_backend("numpy"))
    b = _loss_and_grads(X, y, A, v, model, get_backend("torch"))
    for x, y_ in zip(a, b):  # loss, gradients of A and v: rounding only
        assert_close(y_, x)


def test_float32_error_is_bounded():
    X, y, A, v, model = _problem(seed=3)
    a = _loss_and_grads(X, y, A, v, model, get_backend("torch", "float64"))
    b = _loss_and_grads(X, y, A, v, model, get_backend("torch", "float32"))
    # float32 eps = 1.2e-7; sums of ~N·D terms amplify it (tests._backends.TOL)
    assert_close(b[0], a[0], "float32")
    np.testing.assert_allclose(b[2], a[2], rtol=1e-3, atol=1e-5)


def test_softmax_is_stable_for_huge_logits():
    A = np.array([[1000.0, 0.0], [0.0, -1000.0]])
    S = attention(A, 1.0)
    assert np.all(np.isfinite(S)) and np.allclose(S.sum(1), 1)

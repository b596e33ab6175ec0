"""The two reads of the data X (n, D, d) in a step of the empirical engines, U = X·v and
Σ_nj dU_nj X_nj, and their batched forms (K data sets, R runs on each).

On a CPU, when no gradient flows through them, they run the kernel's measured (or pinned)
implementation of the contraction ([`theorylab.core.primitives`][]: ``einsum``, ``blas`` or
``torch``, chosen per shape class) on numpy views of the backend's arrays (no copies: CPU
tensors share their memory); elsewhere (CUDA, autograd) they are the backend's ``@``. The
engine's ``primitive`` (``$THEORYLAB_PRIMITIVE``, default ``"auto"``) picks the
implementation.
"""

from __future__ import annotations

import numpy as np

from theorylab.core.primitives import run_primitive

__all__ = ["project", "project_batched", "pullback", "pullback_batched"]


def _measured(xp, *arrays) -> bool:
    return xp.device == "cpu" and not any(getattr(a, "requires_grad", False) for a in arrays)


def project(xp, X, v, primitive: str = "auto"):
    """U_nj = ⟨v, X_nj⟩ for X (n, D, d): one read of X."""
    if not _measured(xp, X, v):
        return X @ v
    Xn = xp.to_numpy(X)
    return xp.asarray(np.ascontiguousarray(
        run_primitive(primitive, "project", Xn, Xn, xp.to_numpy(v))))


def pullback(xp, dU, X, primitive: str = "auto"):
    """Σ_nj dU_nj X_nj ∈ ℝ^d: the second (and last) read of X."""
    if not _measured(xp, dU, X):
        return dU.reshape(-1) @ X.reshape(-1, X.shape[-1])
    Xn = xp.to_numpy(X)
    return xp.asarray(np.ascontiguousarray(
        run_primitive(primitive, "pullback", Xn, xp.to_numpy(dU), Xn)))


def project_batched(xp, X, V, primitive: str = "auto"):
    """U_{k r n j} = ⟨V_kr, X_knj⟩ for X (K, n, D, d) and V (K, R, d): (K, R, n, D).

    One batched matrix product (X_k viewed as (n·D, d)); R runs share each data set. On a CPU
    with R = 1, K calls of [`project`][] instead (a batched product with one column was 2–3×
    slower there than numpy's einsum; docs/performance.md)."""
    K, n, D, d = X.shape
    if V.shape[1] == 1 and xp.device == "cpu":
        U = xp.zeros((K, 1, n, D))
        for k in range(K):
            U[k, 0] = project(xp, X[k], V[k, 0], primitive)
        return U
    U = xp.swap(X.reshape(K, n * D, d) @ xp.swap(V))  # (K, R, n·D)
    return U.reshape(K, V.shape[1], n, D)


def pullback_batched(xp, dU, X, primitive: str = "auto"):
    """Σ_nj dU_{k r n j} X_{k n j} for dU (K, R, n, D), X (K, n, D, d): (K, R, d).

    On a CPU with R = 1, K calls of [`pullback`][] (see [`project_batched`][])."""
    K, R, n, D = dU.shape
    if R == 1 and xp.device == "cpu":
        out = xp.zeros((K, 1, X.shape[-1]))
        for k in range(K):
            out[k, 0] = pullback(xp, dU[k, 0], X[k], primitive)
        return out
    return dU.reshape(K, R, n * D) @ X.reshape(K, n * D, X.shape[-1])

"""One pass over X per empirical step: the fused training pass of problem (E).

The plain pass of [`EmpiricalEngine`][theorylab.jelassi2022.engines.EmpiricalEngine] reads the
data X twice per step: U = X·v, then ∂L/∂v = Σ_nj ∂L/∂U_nj X_nj once ∂L/∂U is known. The fused
kernel here makes **one** pass: for each sample n it forms U_n = X_n·v, the model of
Jelassi et al. (2022), eq. (T) (FOUND), H_n = κ S U_n, F_n = Σ_i σ(H_ni), the logistic loss
ℓ(y_n F_n) and G_n = w ℓ'(y_n F_n) y_n σ'(H_n), then ∂L/∂U_n = κ Sᵀ G_n and adds
Σ_j ∂L/∂U_nj X_nj to ∂L/∂v while X_n (D·d values, ≤ a few hundred kB) is still in the caches.
U and G are kept (N·D values each, a fraction 2/d of X) and ∂L/∂S = κ Gᵀ U is one matrix
product after the pass. The loss, loss², error and tie sums are those of
[`evaluate_projections`][theorylab.jelassi2022.model.evaluate_projections], formula for formula.

**Why it is not always used.** A step must read every entry of X at least once (∂L/∂v = Xᵀ ∂L/∂U
with a generic ∂L/∂U), so one pass is the floor; but the kernel does the attention part
(O(D²) per sample) in scalar-loop code where the plain pass uses BLAS, and the balance depends on
the CPU and the shape. The choice is the kernel's autotuner
([`MeasuredChoice`][theorylab.core.primitives.MeasuredChoice]): with ``"auto"`` (default) the
first training pass of a *shape class* (D, d, dtype, N rounded down to a power of two, torch's
thread count: the kernel is single-threaded, so with many threads the two-pass step may win)
times both passes on the call's own data, interleaved (one untimed call each, then three
rounds), and keeps the faster for the process. ``"fused"`` or ``"two-pass"`` pin one, through
``$THEORYLAB_EMPIRICAL_PASS``. The fused pass is a candidate only on a CPU, in float64, for
C-contiguous X held in memory (not streamed), with numba importable
([`theorylab.core.jit.HAVE_NUMBA`][]); the batched engine (many runs in one step) and the
forward-only test pass keep the plain code. Measured speeds, and why a one-pass step
still does not reach 2× autograd on every CPU: docs/performance.md.

The loops are written out (four-row blocks inline, not a shared helper): the same blocks
behind a helper function ran 1.35–1.47× slower at the four speed-target sizes (measured), so the two
four-row dot-product blocks (X·v and S·u) stay as two copies.

**Rounding.** The kernel sums in another order than BLAS (vectorised partial sums), so
gradients differ from the plain pass by rounding only: ≤ 1e-13 relative observed at N ≤ 2·10⁴
(tests/jelassi2022/test_fused.py), and runs in two processes that chose differently
agree to that level, not to the bit; pin a pass where they must agree bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

from theorylab.core.jit import HAVE_NUMBA, njit, prefetch
from theorylab.core.primitives import MeasuredChoice, env_choice

__all__ = ["PASSES", "PASS_ENV", "FusedPass", "PassChoice", "default_pass", "fused_grad_pass",
           "fused_eligible", "pass_choices"]

#: the implementations of the empirical training pass; "auto" measures them (see the module)
PASSES = ("auto", "fused", "two-pass")
PASS_ENV = "THEORYLAB_EMPIRICAL_PASS"

#: values of X prefetched ahead of the row being read (4 kB): the fastest of 0, 512, 1024 and
#: 2048 at the four speed-target sizes on a 2-core Intel Xeon (Emerald Rapids) VM, 1.07× over none
PREFETCH_AHEAD = 512


def default_pass() -> str:
    """``$THEORYLAB_EMPIRICAL_PASS`` when set (one of [`PASSES`][]), else ``"auto"``."""
    return env_choice(PASS_ENV, PASSES)


@njit
def _fused(X1, D, d, v, S, y, w, kappa, coef, dcoef, maj, tie_tol, ahead, U, G, dv):
    """The fused pass over X1 = X.reshape(-1) (N·D·d values); writes U, G (N, D) and adds
    ∂L/∂v to ``dv``; returns (loss, loss², error, ties) as sums weighted by ``w``."""
    N = y.shape[0]
    n1 = X1.shape[0]
    Dd = D * d
    loss = 0.0
    loss_sq = 0.0
    err = 0.0
    ties = 0.0
    nc = coef.shape[0]
    ndc = dcoef.shape[0]
    nm = maj.shape[0]
    u = np.empty(D)
    h = np.empty(D)
    gq = np.empty(D)
    du = np.empty(D)
    sig = np.empty(D)
    for n in range(N):
        base = n * Dd
        # U_n = X_n·v, four rows at a time (four independent sums), prefetching ahead
        j = 0
        while j + 4 <= D:
            r = base + j * d
            for p in range(0, 4 * d, 8):
                q = r + ahead + p
                if q < n1:
                    prefetch(X1, q)
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            a3 = 0.0
            for k in range(d):
                vk = v[k]
                a0 += X1[r + k] * vk
                a1 += X1[r + d + k] * vk
                a2 += X1[r + 2 * d + k] * vk
                a3 += X1[r + 3 * d + k] * vk
            u[j] = a0
            u[j + 1] = a1
            u[j + 2] = a2
            u[j + 3] = a3
            j += 4
        while j < D:
            r = base + j * d
            a0 = 0.0
            for k in range(d):
                a0 += X1[r + k] * v[k]
            u[j] = a0
            j += 1
        # H = κ S u, four rows of S at a time
        i = 0
        while i + 4 <= D:
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            a3 = 0.0
            for jj in range(D):
                uj = u[jj]
                a0 += S[i, jj] * uj
                a1 += S[i + 1, jj] * uj
                a2 += S[i + 2, jj] * uj
                a3 += S[i + 3, jj] * uj
            h[i] = kappa * a0
            h[i + 1] = kappa * a1
            h[i + 2] = kappa * a2
            h[i + 3] = kappa * a3
            i += 4
        while i < D:
            a0 = 0.0
            for jj in range(D):
                a0 += S[i, jj] * u[jj]
            h[i] = kappa * a0
            i += 1
        # σ(H), σ'(H) by Horner, vectorised over i
        for i in range(D):
            sig[i] = coef[nc - 1]
            gq[i] = dcoef[ndc - 1]
        for c in range(nc - 2, -1, -1):
            cc = coef[c]
            for i in range(D):
                sig[i] = sig[i] * h[i] + cc
        for c in range(ndc - 2, -1, -1):
            cc = dcoef[c]
            for i in range(D):
                gq[i] = gq[i] * h[i] + cc
        F = 0.0
        umax = 0.0
        for i in range(D):
            F += sig[i]
            a = abs(u[i])
            if a > umax:
                umax = a
        yn = y[n]
        m = yn * F
        ell = max(-m, 0.0) + math.log1p(math.exp(-abs(m)))  # log(1 + e^{−m}), stable
        loss += w * ell
        loss_sq += w * ell * ell
        hm = kappa * umax
        pm = maj[nm - 1]
        for c in range(nm - 2, -1, -1):
            pm = pm * hm + maj[c]
        tol = tie_tol * D * pm
        if m <= tol:
            err += w
        if abs(m) <= tol:
            ties += w
        if m >= 0.0:  # sigmoid(−m), stable
            e = math.exp(-m)
            sg = e / (1.0 + e)
        else:
            sg = 1.0 / (1.0 + math.exp(m))
        g = -w * sg * yn
        for i in range(D):
            gq[i] = g * gq[i]
            du[i] = 0.0
        # ∂L/∂U_n = κ Sᵀ G_n, four rows of S at a time
        i = 0
        while i + 4 <= D:
            g0 = kappa * gq[i]
            g1 = kappa * gq[i + 1]
            g2 = kappa * gq[i + 2]
            g3 = kappa * gq[i + 3]
            for jj in range(D):
                du[jj] += g0 * S[i, jj] + g1 * S[i + 1, jj] + g2 * S[i + 2, jj] + g3 * S[i + 3, jj]
            i += 4
        while i < D:
            g0 = kappa * gq[i]
            for jj in range(D):
                du[jj] += g0 * S[i, jj]
            i += 1
        for i in range(D):
            U[n, i] = u[i]
            G[n, i] = gq[i]
        # ∂L/∂v += Σ_j ∂L/∂U_nj X_nj, four rows at a time (X_n is in the caches now)
        j = 0
        while j + 4 <= D:
            r = base + j * d
            s0 = du[j]
            s1 = du[j + 1]
            s2 = du[j + 2]
            s3 = du[j + 3]
            for k in range(d):
                dv[k] += (s0 * X1[r + k] + s1 * X1[r + d + k] + s2 * X1[r + 2 * d + k]
                          + s3 * X1[r + 3 * d + k])
            j += 4
        while j < D:
            r = base + j * d
            s0 = du[j]
            for k in range(d):
                dv[k] += s0 * X1[r + k]
            j += 1
    return loss, loss_sq, err, ties


def fused_eligible(xp, X, streamed: bool = False) -> bool:
    """True when the fused pass can run on ``X``: numba importable, a CPU backend, float64,
    X in memory (not streamed) and C-contiguous."""
    if not HAVE_NUMBA or streamed or xp.dtype != "float64" or getattr(xp, "device", "cpu") != "cpu":
        return False
    arr = xp.to_numpy(X)
    return arr.dtype == np.float64 and arr.ndim == 3 and arr.flags.c_contiguous


class FusedPass:
    """The fused pass (see the module) on one data set, prepared once: the polynomial
    coefficients of σ, σ' and |σ|, the labels as float64 and the (U, G) work arrays are made
    here, so that a step only runs the kernel and the product for ∂L/∂S.

    **Arguments:**

    - `X`: (N, D, d) float64, C-contiguous; `y`: (N,) labels ±1.
    - `model`: the model's σ and κ, a
      [`PositionalAttentionModel`][theorylab.jelassi2022.model.PositionalAttentionModel].
    - `tie_tol`: see ``TrainConfig``; `weight`: the weight of each sample (1/N).

    Calling it with ``(v, S)`` returns ``(sums, dv, dS)``: ``sums`` = (loss, loss², error,
    ties) as Python floats, ``dv`` = ∂L/∂v (d,), ``dS`` = ∂L/∂S = κ Gᵀ U (D, D).
    """

    def __init__(self, X, y, model, tie_tol: float, weight: float) -> None:
        N, D, _ = X.shape
        act = model.activation
        self.X1 = X.reshape(-1)
        self.shape = X.shape
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.coefs = tuple(np.asarray(a.coeffs, dtype=np.float64)
                           for a in (act, act.derivative(), act.majorant()))
        self.kappa = float(model.value_scale)
        self.tie_tol, self.weight = float(tie_tol), float(weight)
        self.U, self.G = np.empty((N, D)), np.empty((N, D))

    def __call__(self, v, S):
        _, D, d = self.shape
        dv = np.zeros(d)
        sums = _fused(self.X1, D, d, np.ascontiguousarray(v, dtype=np.float64),
                      np.ascontiguousarray(S, dtype=np.float64), self.y, self.weight,
                      self.kappa, *self.coefs, self.tie_tol, PREFETCH_AHEAD, self.U, self.G, dv)
        dS = self.kappa * (self.G.T @ self.U)
        return tuple(float(x) for x in sums), dv, dS


def fused_grad_pass(X, y, v, S, model, tie_tol: float, weight: float):
    """One fused pass on numpy arrays: ``FusedPass(X, y, model, tie_tol, weight)(v, S)``
    (see [`FusedPass`][] for the arguments and what it returns)."""
    return FusedPass(X, y, model, tie_tol, weight)(v, S)


class PassChoice(MeasuredChoice):
    """The measured choice between the fused and the two-pass training pass, per shape class,
    kept for the process (the kernel's autotuner; the rule is in the module docstring)."""

    @staticmethod
    def shape_class(X) -> tuple:
        """(D, d, dtype, N rounded down to a power of two, torch threads): the kernel is
        single-threaded while the two-pass step's products use the thread pools, so a change of
        ``--threads`` within a process is a new class."""
        import torch

        n = max(int(X.shape[0]), 1)
        return (int(X.shape[1]), int(X.shape[2]), str(X.dtype), 1 << (n.bit_length() - 1),
                torch.get_num_threads())


_CHOICE = PassChoice()


def pass_choices() -> PassChoice:
    """The process-wide [`PassChoice`][] (``cache``, ``timings``; ``clear()`` forgets)."""
    return _CHOICE

"""Probe for issue 15: would a one-pass compiled kernel (numba) beat the empirical engine?

    python benchmarks/fused_probe.py [--repeats 5] [--threads 1]

Not part of the package and not a dependency: it needs ``numba`` importable (for example
``pip install --target DIR numba`` and ``PYTHONPATH=DIR``) and exits with a message otherwise.

For each of issue 15's sizes it builds the empirical engine (problem (E) of Jelassi et al.
(2022), eq. (T) with the default cubic σ(h) = h³) and a numba kernel that makes one pass over X:
per sample U = X_n·v, H = κ S U, σ and σ', the logistic loss, G = ℓ'·y·σ'(H), ∂L/∂U = κ Sᵀ G,
∂L/∂S += κ G Uᵀ and ∂L/∂v += Σ_j ∂L/∂U_j X_nj while X_n is still in L1. It checks ∂L/∂v, ∂L/∂S
and the loss against the engine to 1e-12 relative, then times engine, kernel and plain torch
autograd interleaved (medians). The kernel computes only the training loss and the
gradients (no error, tie or loss² sums), so it is a lower bound on what a fused engine would
cost. ``fastmath=True`` lets LLVM vectorise the reductions (reassociated sums).
"""

from __future__ import annotations

import math
import statistics
import sys

import numpy as np

from theorylab.bench.empirical import (
    ISSUE15_SIZES,
    autograd_for,
    empirical_config,
    interleaved_times,
    machine_line,
    make_empirical_engine,
)
from theorylab.core.cli import ArgumentParser
from theorylab.core.threads import add_threads_argument, set_threads, threads_from_args

#: kernel vs engine: ∂L/∂v, ∂L/∂S and the loss agree to this (reassociated float64 sums over
#: ≤ 2·10⁴ samples: ~1e-14 observed)
CHECK_RTOL = 1e-12


def make_kernel(nb):
    @nb.njit(fastmath=True, error_model="numpy")
    def fused(X, v, S, y, w, kappa, c1, c3, dS, dv):  # pragma: no cover - compiled
        n, D, d = X.shape
        U = np.empty(D)
        dsig = np.empty(D)
        dU = np.empty(D)
        loss = 0.0
        for s in range(n):
            Xs = X[s]
            for j in range(D):
                acc = 0.0
                for k in range(d):
                    acc += Xs[j, k] * v[k]
                U[j] = acc
            F = 0.0
            for i in range(D):
                acc = 0.0
                for j in range(D):
                    acc += S[i, j] * U[j]
                h = kappa * acc
                F += c1 * h + c3 * h * h * h
                dsig[i] = c1 + 3.0 * c3 * h * h
            m = y[s] * F
            if m > 0:  # stable log(1 + e^{−m}) and σ(−m)
                e = math.exp(-m)
                loss += w[s] * math.log1p(e)
                sg = e / (1.0 + e)
            else:
                e = math.exp(m)
                loss += w[s] * (-m + math.log1p(e))
                sg = 1.0 / (1.0 + e)
            g = -w[s] * sg * y[s]
            for j in range(D):
                dU[j] = 0.0
            for i in range(D):
                gi = kappa * g * dsig[i]
                for j in range(D):
                    dU[j] += gi * S[i, j]
                    dS[i, j] += gi * U[j]
            for j in range(D):
                u = dU[j]
                for k in range(d):
                    dv[k] += u * Xs[j, k]
        return loss

    return fused


def probe(fused, N: int, D: int, d: int, repeats: int) -> dict[str, float]:
    """Check the kernel against the engine at one size, then time engine, kernel and autograd
    interleaved; returns the medians in ms."""
    eng = make_empirical_engine(empirical_config(D, d, N, offdiag0=0.1))
    coeffs = eng.model.activation.coeffs
    if any(c != 0.0 for i, c in enumerate(coeffs) if i not in (1, 3)):
        raise ValueError(f"model.activation: the probe handles c1·h + c3·h³ (got {coeffs})")
    c1, c3 = coeffs[1], (coeffs[3] if len(coeffs) > 3 else 0.0)
    params = eng.initial_params()
    xp = eng.xp
    X, y = xp.to_numpy(eng.X), xp.to_numpy(eng.y)
    v = xp.to_numpy(params["v"])
    S = xp.to_numpy(eng.attention(params["A"]))
    w = np.full(N, 1.0 / N)
    kappa = eng.model.value_scale

    def kernel():
        dS, dv = np.zeros((D, D)), np.zeros(d)
        return fused(X, v, S, y, w, kappa, c1, c3, dS, dv), dS, dv

    loss, dS, dv = kernel()
    ev = eng.evaluate(params, 0, need_grad=True, record=False)
    gA = xp.to_numpy(eng.grad_A(xp.asarray(S), xp.asarray(dS)))
    for name, a, b in (("dv", dv, xp.to_numpy(ev.grads["v"])),
                       ("dA", gA, xp.to_numpy(ev.grads["A"])),
                       ("loss", loss, ev.train_loss)):
        err = np.max(np.abs(np.asarray(a) - b)) / np.max(np.abs(b))
        if not err <= CHECK_RTOL:
            raise AssertionError(f"{name}: kernel and engine differ ({err:.2e})")

    def step():
        e = eng.evaluate(params, 0, need_grad=True, record=False)
        eng.apply(params, e.grads)

    base = autograd_for(eng, params)
    times = interleaved_times({"engine": step, "kernel": kernel, "autograd": base.step},
                              repeats=repeats)
    return {k: 1e3 * statistics.median(t) for k, t in times.items()}


def main(argv=None) -> int:
    p = ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=5)
    add_threads_argument(p)
    args = p.parse_args(argv)
    try:
        import numba as nb
    except ImportError:
        print("numba is not importable: nothing to probe", file=sys.stderr)
        return 1
    set_threads(threads_from_args(args))
    print(machine_line("cpu") + f"; numba {nb.__version__}")
    fused = make_kernel(nb)
    for N, D, d in ISSUE15_SIZES:
        med = probe(fused, N, D, d, args.repeats)
        print(f"N={N} D={D} d={d}: engine {med['engine']:.4g} ms, one-pass kernel "
              f"{med['kernel']:.4g} ms, autograd {med['autograd']:.4g} ms; kernel vs engine "
              f"{med['engine'] / med['kernel']:.2f}x, vs autograd "
              f"{med['autograd'] / med['kernel']:.2f}x", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

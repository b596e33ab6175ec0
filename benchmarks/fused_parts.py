"""Where the time of the fused empirical pass goes: probes cut from the kernel.

``PYTHONPATH=. python benchmarks/fused_parts.py [--repeats 9]`` prints the markdown table of
docs/performance.md ("Why T2 ... is out of reach"). At the four speed-target sizes it times, one
thread, interleaved, each as a ratio to one gemv read of the same X (``torch.mv`` on X viewed
as (N·D, d)):

- ``U only``: the kernel's first loop alone (U_n = X_n·v, four rows at a time, prefetching);
- ``U + re-read``: that loop, then ∂L/∂v = Σ_j u_j X_nj from the cache (∂L/∂U set to U: no
  model work at all);
- ``whole pass``: the kernel of ``theorylab.jelassi2022.engines.fused`` as it is.

The probes are made from the kernel's own source (the model part cut out), so they follow any
change to it. Data: standard normal X, a random row-stochastic S, cubic σ, κ = D.
"""

from __future__ import annotations

import argparse
import inspect
import math
import statistics

import numba
import numpy as np
import torch

import theorylab.jelassi2022.engines.fused as fused
from theorylab.bench.empirical import ISSUE15_SIZES, interleaved_times, machine_line
from theorylab.core.jit import FASTMATH, prefetch
from theorylab.core.threads import set_threads

MODEL_START = "        # H = κ S u"
PULL_START = "        # ∂L/∂v += "
RETURN = "    return loss"


def probes() -> dict:
    """The compiled kernel and the two probes cut from its source."""
    src = inspect.getsource(fused._fused.py_func).replace("@njit\n", "")
    for marker in (MODEL_START, PULL_START, RETURN):
        if marker not in src:
            raise SystemExit(f"the kernel changed: {marker.strip()!r} not found; update this probe")
    a, b, c = src.index(MODEL_START), src.index(PULL_START), src.index(RETURN)
    cut = {
        "U only": src[:a] + "        for i in range(D):\n            U[n, i] = u[i]\n" + src[c:],
        "U + re-read": src[:a] + "        for i in range(D):\n            du[i] = u[i]\n"
                       + src[b:],
    }
    out = {}
    for name, code in cut.items():
        ns = {"np": np, "math": math, "prefetch": prefetch}
        exec(code, ns)  # noqa: S102 - the package's own kernel source, cut
        out[name] = numba.njit(fastmath=set(FASTMATH), error_model="numpy")(ns["_fused"])
    out["whole pass"] = fused._fused
    return out


def ratios(kernels: dict, N: int, D: int, d: int, repeats: int) -> dict[str, float]:
    """Median time of each kernel ÷ median time of one gemv read of X, timed interleaved."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, D, d))
    v = 0.1 * rng.standard_normal(d)
    S = rng.random((D, D))
    S /= S.sum(axis=1, keepdims=True)
    y = np.sign(rng.standard_normal(N))
    coefs = (np.array([0, 0, 0, 1.0]), np.array([0, 0, 3.0]), np.array([0, 0, 0, 1.0]))
    args = (X.reshape(-1), D, d, v, S, y, 1 / N, float(D), *coefs, 1e-12, fused.PREFETCH_AHEAD,
            np.empty((N, D)), np.empty((N, D)), np.zeros(d))
    fns = {name: (lambda k=k: k(*args)) for name, k in kernels.items()}
    tX, tv = torch.from_numpy(X.reshape(-1, d)), torch.from_numpy(v)
    fns["gemv"] = lambda: torch.mv(tX, tv)
    med = {k: statistics.median(t) for k, t in interleaved_times(fns, repeats=repeats).items()}
    return {k: med[k] / med["gemv"] for k in kernels}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=9)
    args = p.parse_args()
    set_threads(1)
    print(machine_line("cpu"))
    kernels = probes()
    print("| N, D, d | " + " | ".join(kernels) + " |")
    print("|---|" + "---|" * len(kernels))
    for N, D, d in ISSUE15_SIZES:
        r = ratios(kernels, N, D, d, args.repeats)
        print(f"| {N}, {D}, {d} | " + " | ".join(f"{x:.2f}" for x in r.values()) + " |",
              flush=True)


if __name__ == "__main__":
    main()

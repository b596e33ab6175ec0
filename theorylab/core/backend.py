"""One small array-backend interface (after einops): numpy is the reference, torch runs on CPU/CUDA.

The engines are written once against [`Backend`][]; each backend implements a handful of methods.
Arrays are plain ``numpy.ndarray`` or ``torch.Tensor``; arithmetic operators and ``@`` are shared.

**Measured primitives.** The two reads of the data X in a step, U = X·v
([`Backend.project`][]) and Σ_nj dU_nj X_nj ([`Backend.pullback`][]), dominate the empirical
engines. On a CPU they have three implementations (the candidates, [`PRIMITIVES`][]):

- ``einsum``: ``np.einsum("njk,k->nj")`` / ``np.einsum("nj,njk->k")`` (the plain reference);
- ``blas``: numpy's matrix–vector product on X viewed as (n·D, d) (OpenBLAS/MKL gemv);
- ``torch``: torch's CPU matrix–vector product on the same memory (zero-copy ``from_numpy``).

No candidate is fastest on every CPU: einsum was 2.3–2.8× faster than gemv on an AMD EPYC, and
1.4–1.7× slower than both gemv's on an Intel Xeon (docs/performance.md). With ``"auto"`` (the
default) the first call for a *shape class* — the operation, D, d, the dtype and the number of
rows rounded to a power of two — times the candidates on the call's own arguments, interleaved
(one untimed call each, then three rounds of one call per candidate), and keeps the candidate of
the smallest median for the rest of the process ([`PrimitiveChoice`][]). ``einsum``, ``blas``
or ``torch`` pin one, through ``get_backend(..., primitive=)`` or the environment variable
``THEORYLAB_PRIMITIVE``. The candidates sum in different orders, so results differ by rounding
only (≈ 1e-15 relative per product; trajectories ≤ 1e-13, tests/core/test_primitives.py): pin a
candidate where runs in different processes must agree to the bit. CUDA and tensors that need
gradients always use ``@``.

**Subnormals.** [`flush_denormals`][] turns on flush-to-zero and denormals-are-zero for the
calling thread while a block runs (the exchangeable and Monte Carlo steps): sigmoid factors of
large margins times small weights fall below 2.2e-308, where the CPU takes a slow microcode path.
Flushing changes a sum only by such tiny terms (below 1e-300 absolute; tested to 1e-15 relative).
"""

from __future__ import annotations

import contextlib
import os
import statistics
import time
from collections.abc import Iterator

import numpy as np
from scipy import special

__all__ = [
    "Backend", "NumpyBackend", "TorchBackend", "get_backend", "host_free_bytes", "DTYPES",
    "PRIMITIVES", "PRIMITIVE_ENV", "PrimitiveChoice", "default_primitive", "flush_denormals",
    "primitive_choices",
]

DTYPES = ("float64", "float32")

#: implementations of the reads of X on a CPU; "auto" measures them (see the module)
PRIMITIVES = ("auto", "einsum", "blas", "torch")
PRIMITIVE_ENV = "THEORYLAB_PRIMITIVE"


def default_primitive() -> str:
    """``$THEORYLAB_PRIMITIVE`` when set (one of [`PRIMITIVES`][]), else ``"auto"``."""
    raw = os.environ.get(PRIMITIVE_ENV, "").strip() or "auto"
    if raw not in PRIMITIVES:
        raise ValueError(f"{PRIMITIVE_ENV}: must be one of {PRIMITIVES} (got {raw!r})")
    return raw


def _torch_view(a: np.ndarray):
    import torch

    return torch.from_numpy(a)


def _rows(X: np.ndarray) -> np.ndarray:
    return X.reshape(-1, X.shape[-1])


def _project_einsum(X, v):
    return np.einsum("njk,k->nj", X, v)


def _project_blas(X, v):
    return (_rows(X) @ v).reshape(X.shape[:-1])


def _project_torch(X, v):
    return (_torch_view(_rows(X)) @ _torch_view(v)).numpy().reshape(X.shape[:-1])


def _pullback_einsum(dU, X):
    return np.asarray(np.einsum("nj,njk->k", dU, X))


def _pullback_blas(dU, X):
    return dU.reshape(-1) @ _rows(X)


def _pullback_torch(dU, X):
    return (_torch_view(np.ascontiguousarray(dU).reshape(-1)) @ _torch_view(_rows(X))).numpy()


_IMPLEMENTATIONS = {
    "project": {"einsum": _project_einsum, "blas": _project_blas, "torch": _project_torch},
    "pullback": {"einsum": _pullback_einsum, "blas": _pullback_blas, "torch": _pullback_torch},
}


class PrimitiveChoice:
    """The measured choice of implementation per shape class, cached for the process.

    ``choose(op, X, *args)`` returns the name of the implementation to use for ``op``
    ("project" or "pullback") on arrays like ``X`` (n, D, d); see the module for the rule."""

    rounds = 3

    def __init__(self) -> None:
        self.cache: dict[tuple, str] = {}
        self.timings: dict[tuple, dict[str, float]] = {}

    @staticmethod
    def shape_class(op: str, X: np.ndarray) -> tuple:
        n = max(int(X.shape[0]), 1)
        return (op, int(X.shape[1]), int(X.shape[2]), X.dtype.name, 1 << (n.bit_length() - 1))

    def run(self, op: str, X: np.ndarray, a, b):
        """``op`` on (a, b) with the implementation chosen for X's shape class (measured now
        on this call's arguments when the class is new)."""
        impls = _IMPLEMENTATIONS[op]
        if not X.flags.writeable:  # torch.from_numpy needs writeable memory
            return impls["blas"](a, b)
        key = self.shape_class(op, X)
        name = self.cache.get(key)
        if name is not None:
            return impls[name](a, b)
        times: dict[str, list[float]] = {k: [] for k in impls}
        for f in impls.values():  # warm-up, untimed
            f(a, b)
        for _ in range(self.rounds):  # interleaved rounds
            for k, f in impls.items():
                t0 = time.perf_counter()
                f(a, b)
                times[k].append(time.perf_counter() - t0)
        med = {k: statistics.median(v) for k, v in times.items()}
        name = min(med, key=med.get)
        self.cache[key] = name
        self.timings[key] = med
        return impls[name](a, b)

    def clear(self) -> None:
        self.cache.clear()
        self.timings.clear()


_CHOICE = PrimitiveChoice()


def primitive_choices() -> PrimitiveChoice:
    """The process-wide [`PrimitiveChoice`][] (its ``cache`` and ``timings`` say what was
    measured and picked; ``clear()`` forgets it)."""
    return _CHOICE


def _run_primitive(primitive: str, op: str, X, a, b):
    if primitive == "auto":
        return _CHOICE.run(op, X, a, b)
    if primitive == "torch" and not X.flags.writeable:
        primitive = "blas"
    return _IMPLEMENTATIONS[op][primitive](a, b)


@contextlib.contextmanager
def flush_denormals() -> Iterator[None]:
    """Within the block the calling thread flushes subnormal results to zero and reads subnormal
    inputs as zero (x86 FTZ/DAZ, ARM FZ, through ``torch.set_flush_denormal``); the mode is off
    again after the block (it is off by default; a no-op where unsupported). It acts on numpy
    and torch alike in this thread; other threads (BLAS pools) keep their mode."""
    import torch

    on = torch.set_flush_denormal(True)
    try:
        yield
    finally:
        if on:
            torch.set_flush_denormal(False)


class Backend:
    """Interface of an array backend. All reductions take an ``axis`` argument."""

    name: str
    device: str
    dtype: str

    def asarray(self, x, dtype: str | None = None):  # pragma: no cover - interface
        raise NotImplementedError

    def to_numpy(self, x) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def zeros(self, shape, dtype: str | None = None):  # pragma: no cover - interface
        raise NotImplementedError

    def exp(self, x):  # pragma: no cover - interface
        raise NotImplementedError

    def abs(self, x):  # pragma: no cover - interface
        raise NotImplementedError

    def sum(self, x, axis=None):  # pragma: no cover - interface
        raise NotImplementedError

    def max(self, x, axis=None, keepdims=False):  # pragma: no cover - interface
        raise NotImplementedError

    def softplus_neg(self, m):  # pragma: no cover - interface
        """log(1 + exp(−m)), stable for all m (the logistic loss of margin m)."""
        raise NotImplementedError

    def sigmoid(self, x):  # pragma: no cover - interface
        raise NotImplementedError

    def index_add(self, target, index, values):  # pragma: no cover - interface
        """``target[index[i]] += values[i]`` with repeated indices accumulated; returns target.

        ``index`` comes from [`asindex`][]."""
        raise NotImplementedError

    def asindex(self, idx):  # pragma: no cover - interface
        """An integer index array usable for row gathers ``table[idx]`` and ``index_add``."""
        raise NotImplementedError

    def synchronize(self) -> None:
        """Wait for queued device work (CUDA); a no-op elsewhere."""

    def free_bytes(self) -> int:
        """Free memory of the device the arrays live on, in bytes.

        CPU: available physical pages × page size (``os.sysconf``; no psutil). CUDA: the first
        value of ``torch.cuda.mem_get_info``. Used to choose chunk sizes (``chunk_size = 0``)."""
        return host_free_bytes()

    def cast(self, x, dtype: str | None = None):  # pragma: no cover - interface
        """``x`` (already on this backend) converted to ``dtype`` (default: the compute dtype)."""
        raise NotImplementedError

    def itemsize(self, dtype: str | None = None) -> int:
        return np.dtype(dtype or self.dtype).itemsize

    def to_host(self, x):
        """Host copy of ``x`` for streaming: a numpy array (numpy), pinned CPU tensor (CUDA)."""
        return x

    def chunk_to_device(self, host, sl):
        """Rows ``host[sl]`` of a [`to_host`][] array, on the device in the compute dtype."""
        return self.asarray(host[sl])

    def swap(self, x):
        """Swap the last two axes (the transpose of a stack of matrices)."""
        return x.swapaxes(-1, -2)

    def project(self, X, v):
        """U_nj = ⟨v, X_nj⟩ for X (n, D, d): one read of X."""
        return X @ v

    def pullback(self, dU, X):
        """Σ_nj dU_nj X_nj ∈ ℝ^d: the second (and last) read of X."""
        return dU.reshape(-1) @ X.reshape(-1, X.shape[-1])

    def project_batched(self, X, V):
        """U_{k r n j} = ⟨V_kr, X_knj⟩ for X (K, n, D, d) and V (K, R, d): (K, R, n, D).

        One batched matrix product (X_k viewed as (n·D, d)); R runs share each data set. On a
        CPU with R = 1, K calls of [`project`][] instead (a batched product with one column was
        2–3× slower there than numpy's einsum; docs/performance.md)."""
        K, n, D, d = X.shape
        if V.shape[1] == 1 and self.device == "cpu":
            U = self.zeros((K, 1, n, D))
            for k in range(K):
                U[k, 0] = self.project(X[k], V[k, 0])
            return U
        U = self.swap(X.reshape(K, n * D, d) @ self.swap(V))  # (K, R, n·D)
        return U.reshape(K, V.shape[1], n, D)

    def pullback_batched(self, dU, X):
        """Σ_nj dU_{k r n j} X_{k n j} for dU (K, R, n, D), X (K, n, D, d): (K, R, d).

        On a CPU with R = 1, K calls of [`pullback`][] (see [`project_batched`][])."""
        K, R, n, D = dU.shape
        if R == 1 and self.device == "cpu":
            out = self.zeros((K, 1, X.shape[-1]))
            for k in range(K):
                out[k, 0] = self.pullback(dU[k, 0], X[k])
            return out
        return dU.reshape(K, R, n * D) @ X.reshape(K, n * D, X.shape[-1])

    # -- shared helpers built on the primitives -------------------------------------------------
    def row_softmax(self, logits):
        """Max-subtracted row softmax: S_ij = exp(a_ij − max_r a_ir) / Σ_r exp(a_ir − max_r a_ir).

        Rows are the last axis; leading axes (a batch of matrices) are carried along."""
        z = logits - self.max(logits, axis=-1, keepdims=True)
        e = self.exp(z)
        return e / self.sum(e, axis=-1)[..., None]

    def item(self, x) -> float:
        return float(self.to_numpy(x))

    def is_finite(self, *xs) -> bool:
        return all(bool(np.all(np.isfinite(self.to_numpy(x)))) for x in xs)


class NumpyBackend(Backend):
    """The reference backend (CPU, numpy + scipy.special)."""

    name = "numpy"

    def __init__(self, dtype: str = "float64", primitive: str | None = None) -> None:
        self.device = "cpu"
        self.dtype = dtype
        self._np_dtype = np.dtype(dtype)
        self.primitive = _check_primitive(primitive)

    def asarray(self, x, dtype=None):
        return np.asarray(x, dtype=dtype or self._np_dtype)

    def to_numpy(self, x):
        return np.asarray(x)

    def zeros(self, shape, dtype=None):
        return np.zeros(shape, dtype=dtype or self._np_dtype)

    def exp(self, x):
        return np.exp(x)

    def abs(self, x):
        return np.abs(x)

    def sum(self, x, axis=None):
        return np.sum(x, axis=axis)

    def max(self, x, axis=None, keepdims=False):
        return np.max(x, axis=axis, keepdims=keepdims)

    def softplus_neg(self, m):
        return np.logaddexp(0.0, -m)

    def sigmoid(self, x):
        return special.expit(x)

    def index_add(self, target, index, values):
        n = target.shape[0]
        if values.ndim == 1:
            target += np.bincount(index, weights=values, minlength=n)
        else:
            for k in range(values.shape[1]):
                target[:, k] += np.bincount(index, weights=values[:, k], minlength=n)
        return target

    def asindex(self, idx):
        return np.asarray(idx, dtype=np.int64)

    def cast(self, x, dtype=None):
        return np.asarray(x, dtype=dtype or self._np_dtype)

    # the reads of X: the implementation measured fastest here, or the pinned one (module doc)
    def project(self, X, v):
        return _run_primitive(self.primitive, "project", X, X, v)

    def pullback(self, dU, X):
        return _run_primitive(self.primitive, "pullback", X, dU, X)


class TorchBackend(Backend):
    """torch on ``device`` ("cpu", "cuda", "cuda:1", ...)."""

    name = "torch"

    def __init__(self, dtype: str = "float64", device: str = "cpu", section: str = "",
                 primitive: str | None = None) -> None:
        import torch

        self._torch = torch
        if device.startswith("cuda"):
            if not torch.cuda.is_available():
                raise ValueError(f"{section}device: {device!r} requested but CUDA is not "
                                 f"available (got {device!r})")
            index = device.partition(":")[2]
            if index and int(index) >= torch.cuda.device_count():
                raise ValueError(f"{section}device: this machine has "
                                 f"{torch.cuda.device_count()} CUDA device(s) (got {device!r})")
        self.device = device
        self.dtype = dtype
        self._t_dtype = getattr(torch, dtype)
        self.primitive = _check_primitive(primitive)

    def _dt(self, dtype):
        return getattr(self._torch, dtype) if dtype else self._t_dtype

    def asarray(self, x, dtype=None):
        t = self._torch
        if isinstance(x, t.Tensor):
            return x.to(device=self.device, dtype=self._dt(dtype))
        return t.as_tensor(np.asarray(x), dtype=self._dt(dtype), device=self.device)

    def to_numpy(self, x):
        if isinstance(x, self._torch.Tensor):
            return x.detach().cpu().numpy()
        return np.asarray(x)

    def zeros(self, shape, dtype=None):
        return self._torch.zeros(shape, dtype=self._dt(dtype), device=self.device)

    def exp(self, x):
        return self._torch.exp(x)

    def abs(self, x):
        return self._torch.abs(x)

    def sum(self, x, axis=None):
        return self._torch.sum(x) if axis is None else self._torch.sum(x, dim=axis)

    def max(self, x, axis=None, keepdims=False):
        if axis is None:
            return self._torch.max(x)
        return self._torch.amax(x, dim=axis, keepdim=keepdims)

    def softplus_neg(self, m):
        return self._torch.logaddexp(self._torch.zeros_like(m), -m)

    def sigmoid(self, x):
        return self._torch.sigmoid(x)

    def index_add(self, target, index, values):
        return target.index_add_(0, index, values)

    def asindex(self, idx):
        return self._torch.as_tensor(np.asarray(idx), device=self.device, dtype=self._torch.long)

    def cast(self, x, dtype=None):
        return x.to(dtype=self._dt(dtype))

    # On the CPU the reads of X go through the measured (or pinned) implementation of the module
    # doc; CPU tensors share memory with numpy, so no copies are made.
    def project(self, X, v):
        if self.device != "cpu" or X.requires_grad or v.requires_grad:
            return X @ v
        Xn = X.numpy()
        return self._torch.from_numpy(
            np.ascontiguousarray(_run_primitive(self.primitive, "project", Xn, Xn, v.numpy())))

    def pullback(self, dU, X):
        if self.device != "cpu" or X.requires_grad or dU.requires_grad:
            return super().pullback(dU, X)
        Xn = X.numpy()
        return self._torch.from_numpy(np.ascontiguousarray(
            _run_primitive(self.primitive, "pullback", Xn, dU.numpy(), Xn)))

    def synchronize(self) -> None:
        if self.device.startswith("cuda"):
            self._torch.cuda.synchronize()

    def free_bytes(self) -> int:
        if self.device.startswith("cuda"):
            free, _total = self._torch.cuda.mem_get_info(self._torch.device(self.device))
            return int(free)
        return host_free_bytes()

    def to_host(self, x):
        t = self._torch
        if isinstance(x, t.Tensor):
            h = x.detach().cpu()
        else:
            x = np.ascontiguousarray(x)
            h = t.from_numpy(x if x.flags.writeable else x.copy())
        if self.device.startswith("cuda"):
            h = h.pin_memory()  # page-locked: chunk copies run at full PCIe rate, asynchronously
        return h

    def chunk_to_device(self, host, sl):
        t = self._torch
        part = host[sl] if isinstance(host, t.Tensor) else t.from_numpy(np.asarray(host[sl]))
        return part.to(device=self.device, dtype=self._t_dtype, non_blocking=True)


def host_free_bytes() -> int:
    """Available physical memory of this machine (``SC_AVPHYS_PAGES × SC_PAGE_SIZE``).

    Falls back to 4 GiB where ``os.sysconf`` does not know these names (non-POSIX systems)."""
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - platform dependent
        return 4 << 30


def _check_primitive(primitive: str | None) -> str:
    if primitive is None:
        return default_primitive()
    if primitive not in PRIMITIVES:
        raise ValueError(f"primitive: must be one of {PRIMITIVES} (got {primitive!r})")
    return primitive


def get_backend(name: str = "numpy", dtype: str = "float64", device: str = "cpu", *,
                section: str = "", primitive: str | None = None) -> Backend:
    """Return a backend: ``"numpy"`` (CPU only) or ``"torch"`` (``device`` cpu or cuda).

    ``primitive``: how the reads of X are made on a CPU (one of [`PRIMITIVES`][]; default
    ``$THEORYLAB_PRIMITIVE`` or ``"auto"``, see the module). Errors are one-line
    ``ValueError``s naming ``<section>dtype``, ``<section>device`` or
    ``<section>backend`` (a paper passes the section of its config, ``"train."``)."""
    if dtype not in DTYPES:
        raise ValueError(f"{section}dtype: must be one of {DTYPES} (got {dtype!r})")
    if name == "numpy":
        if device != "cpu":
            raise ValueError(f"{section}device: the numpy backend runs on 'cpu' only "
                             f"(got {device!r})")
        return NumpyBackend(dtype, primitive)
    if name == "torch":
        return TorchBackend(dtype, device, section=section, primitive=primitive)
    raise ValueError(f"{section}backend: must be 'numpy' or 'torch' (got {name!r})")

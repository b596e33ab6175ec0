"""One small array-backend interface (after einops): numpy is the reference, torch runs on CPU/CUDA.

The engines are written once against [`Backend`][]; each backend implements a handful of methods.
Arrays are plain ``numpy.ndarray`` or ``torch.Tensor``; arithmetic operators and ``@`` are shared.
"""

from __future__ import annotations

import os

import numpy as np
from scipy import special

__all__ = [
    "Backend", "NumpyBackend", "TorchBackend", "get_backend", "host_free_bytes", "DTYPES",
]

DTYPES = ("float64", "float32")


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

    def __init__(self, dtype: str = "float64") -> None:
        self.device = "cpu"
        self.dtype = dtype
        self._np_dtype = np.dtype(dtype)

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

    # numpy's einsum streams X once with SIMD; BLAS gemv on (n·D, d) with small d was 2.3× slower
    # (benchmarks/step_speed.py, N = 10⁴, D = d = 64)
    def project(self, X, v):
        return np.einsum("njk,k->nj", X, v)

    def pullback(self, dU, X):
        return np.einsum("nj,njk->k", dU, X)


class TorchBackend(Backend):
    """torch on ``device`` ("cpu", "cuda", "cuda:1", ...)."""

    name = "torch"

    def __init__(self, dtype: str = "float64", device: str = "cpu", section: str = "") -> None:
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

    # On the CPU, torch's float64 matrix-vector products over (n·D, d) with small d were 2.8×
    # slower than numpy's einsum (benchmarks/step_speed.py, N = 10⁴, D = d = 64); CPU tensors
    # share memory with numpy, so the two reads of X go through numpy's einsum without copies.
    def project(self, X, v):
        if self.device != "cpu" or X.requires_grad or v.requires_grad:
            return X @ v
        return self._torch.from_numpy(
            np.einsum("njk,k->nj", X.numpy(), v.numpy()))

    def pullback(self, dU, X):
        if self.device != "cpu" or X.requires_grad or dU.requires_grad:
            return super().pullback(dU, X)
        return self._torch.from_numpy(
            np.asarray(np.einsum("nj,njk->k", dU.numpy(), X.numpy())))

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


def get_backend(name: str = "numpy", dtype: str = "float64", device: str = "cpu", *,
                section: str = "") -> Backend:
    """Return a backend: ``"numpy"`` (CPU only) or ``"torch"`` (``device`` cpu or cuda).

    Errors are one-line ``ValueError``s naming ``<section>dtype``, ``<section>device`` or
    ``<section>backend`` (a paper passes the section of its config, ``"train."``)."""
    if dtype not in DTYPES:
        raise ValueError(f"{section}dtype: must be one of {DTYPES} (got {dtype!r})")
    if name == "numpy":
        if device != "cpu":
            raise ValueError(f"{section}device: the numpy backend runs on 'cpu' only "
                             f"(got {device!r})")
        return NumpyBackend(dtype)
    if name == "torch":
        return TorchBackend(dtype, device, section=section)
    raise ValueError(f"{section}backend: must be 'numpy' or 'torch' (got {name!r})")

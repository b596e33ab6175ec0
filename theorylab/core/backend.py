"""One small array-backend interface (after einops): numpy is the reference, torch runs on CPU/CUDA.

The engines are written once against [`Backend`][]; each backend implements a handful of methods.
Arrays are plain ``numpy.ndarray`` or ``torch.Tensor``; arithmetic operators, ``@``, slicing and
integer-array indexing (with index arrays from [`Backend.asindex`][]) are shared, so an engine
written against a backend runs on numpy, torch on a CPU and torch on CUDA as one code path.
Reductions take ``axis`` (an int or a tuple) and, where it matters, ``keepdims``.

The measured contractions of a (n, D, d) array with a vector on a CPU and the flush-to-zero of
subnormals are in [`theorylab.core.primitives`][] (``flush_denormals`` re-exported here).
"""

from __future__ import annotations

import os

import numpy as np
from scipy import special

from theorylab.core.primitives import flush_denormals

__all__ = [
    "Backend", "NumpyBackend", "TorchBackend", "check_device", "get_backend", "host_free_bytes",
    "DTYPES",
    "flush_denormals",
]

DTYPES = ("float64", "float32")


class _Draws:
    """What [`Backend.rng`][] returns: ``integers(high, n)``, ``random(shape)``,
    ``normal(shape)``."""

    def __init__(self, integers, random, normal) -> None:
        self.integers, self.random, self.normal = integers, random, normal


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

    def sum(self, x, axis=None, keepdims=False):  # pragma: no cover - interface
        raise NotImplementedError

    def log(self, x):  # pragma: no cover - interface
        raise NotImplementedError

    def sqrt(self, x):  # pragma: no cover - interface
        raise NotImplementedError

    def where(self, cond, a, b):  # pragma: no cover - interface
        """Elementwise ``a`` where ``cond`` else ``b`` (either may be a Python number)."""
        raise NotImplementedError

    def maximum(self, a, b):  # pragma: no cover - interface
        raise NotImplementedError

    def isfinite(self, x):  # pragma: no cover - interface
        raise NotImplementedError

    def logaddexp(self, a, b):  # pragma: no cover - interface
        """log(e^a + e^b), stable (``a`` or ``b`` may be a Python number)."""
        raise NotImplementedError

    def logsumexp(self, x, axis):  # pragma: no cover - interface
        """log Σ exp(x) along ``axis``, max-subtracted."""
        raise NotImplementedError

    def einsum(self, spec: str, *operands):  # pragma: no cover - interface
        raise NotImplementedError

    def take_along_axis(self, x, idx, axis: int):  # pragma: no cover - interface
        """``out[..., i, ...] = x[..., idx[..., i, ...], ...]`` along ``axis`` (numpy's
        ``take_along_axis``, torch's ``gather``); ``idx`` from [`asindex`][]."""
        raise NotImplementedError

    def moveaxis(self, x, source: int, destination: int):  # pragma: no cover - interface
        raise NotImplementedError

    def concatenate(self, xs, axis: int = 0):  # pragma: no cover - interface
        raise NotImplementedError

    def stack(self, xs, axis: int = 0):  # pragma: no cover - interface
        raise NotImplementedError

    def arange(self, n: int):  # pragma: no cover - interface
        """0, 1, …, n − 1 as an index array (see [`asindex`][])."""
        raise NotImplementedError

    def full(self, shape, value: float, dtype: str | None = None):  # pragma: no cover
        raise NotImplementedError

    def asbool(self, x):  # pragma: no cover - interface
        """A boolean array on this backend (masks)."""
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

    def rng(self, seq: np.random.SeedSequence):  # pragma: no cover - interface
        """A generator of random arrays on this backend, seeded by ``seq``: ``integers(high,
        n)`` (n integers in [0, high)), ``random(shape)`` (uniform on [0, 1)) and
        ``normal(shape)`` (standard normal). numpy draws float64 with ``default_rng(seq)``;
        torch draws on its device in the compute dtype with a ``torch.Generator`` seeded from
        ``seq`` (the two backends' draws differ, their laws agree)."""
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

    # -- shared helpers -----------------------------------------------------------------------
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

    cast = asarray

    def to_numpy(self, x):
        return np.asarray(x)

    def zeros(self, shape, dtype=None):
        return np.zeros(shape, dtype=dtype or self._np_dtype)

    # elementwise functions: numpy's own (the interface's arguments are theirs)
    exp = staticmethod(np.exp)
    abs = staticmethod(np.abs)
    log = staticmethod(np.log)
    sqrt = staticmethod(np.sqrt)
    isfinite = staticmethod(np.isfinite)

    def sum(self, x, axis=None, keepdims=False):
        return np.sum(x, axis=axis, keepdims=keepdims)

    # of two arrays (or an array and a number), and the logistic function: numpy's own
    where = staticmethod(np.where)
    maximum = staticmethod(np.maximum)
    logaddexp = staticmethod(np.logaddexp)
    sigmoid = staticmethod(special.expit)

    logsumexp = staticmethod(special.logsumexp)

    def einsum(self, spec, *operands):
        return np.einsum(spec, *operands, optimize=len(operands) > 2)

    # gathers and shapes: numpy's own
    take_along_axis = staticmethod(np.take_along_axis)
    moveaxis = staticmethod(np.moveaxis)
    concatenate = staticmethod(np.concatenate)
    stack = staticmethod(np.stack)

    def arange(self, n):
        return np.arange(n, dtype=np.int64)

    def full(self, shape, value, dtype=None):
        return np.full(shape, value, dtype=dtype or self._np_dtype)

    def asbool(self, x):
        return np.asarray(x, dtype=bool)

    def max(self, x, axis=None, keepdims=False):
        return np.max(x, axis=axis, keepdims=keepdims)

    def softplus_neg(self, m):
        return np.logaddexp(0.0, -m)

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

    def rng(self, seq):
        g = np.random.default_rng(seq)
        return _Draws(lambda high, n: g.integers(0, high, size=n), g.random, g.standard_normal)

class TorchBackend(Backend):
    """torch on ``device`` ("cpu", "cuda", "cuda:1", ...)."""

    name = "torch"

    def __init__(self, dtype: str = "float64", device: str = "cpu", section: str = "") -> None:
        import torch

        self._torch = torch
        check_device(device, section)
        self.device = device
        self.dtype = dtype
        self._t_dtype = getattr(torch, dtype)
        # elementwise functions, those of two arrays, the logistic function, einsum and
        # logsumexp: torch's own, of the same name (the interface's arguments are theirs)
        for name in ("exp", "abs", "log", "sqrt", "isfinite", "where", "maximum", "sigmoid",
                     "einsum", "logsumexp"):
            setattr(self, name, getattr(torch, name))
        # gathers and axes: torch's own (``dim`` is the interface's ``axis``)
        self.take_along_axis = torch.take_along_dim
        self.moveaxis = torch.movedim

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

    def sum(self, x, axis=None, keepdims=False):
        if axis is None:
            return self._torch.sum(x)
        return self._torch.sum(x, dim=axis, keepdim=keepdims)

    def logaddexp(self, a, b):
        t = self._torch
        if not isinstance(a, t.Tensor):
            a = t.full_like(b, a)
        elif not isinstance(b, t.Tensor):
            b = t.full_like(a, b)
        return t.logaddexp(a, b)

    def concatenate(self, xs, axis=0):
        return self._torch.cat(list(xs), dim=axis)

    def stack(self, xs, axis=0):
        return self._torch.stack(list(xs), dim=axis)

    def arange(self, n):
        return self._torch.arange(n, device=self.device, dtype=self._torch.long)

    def full(self, shape, value, dtype=None):
        return self._torch.full(shape, value, dtype=self._dt(dtype), device=self.device)

    def asbool(self, x):
        t = self._torch
        if isinstance(x, t.Tensor):
            return x.to(device=self.device, dtype=t.bool)
        return t.as_tensor(np.asarray(x, dtype=bool), device=self.device)

    def max(self, x, axis=None, keepdims=False):
        if axis is None:
            return self._torch.max(x)
        return self._torch.amax(x, dim=axis, keepdim=keepdims)

    def softplus_neg(self, m):
        return self._torch.logaddexp(self._torch.zeros_like(m), -m)

    def index_add(self, target, index, values):
        return target.index_add_(0, index, values)

    def asindex(self, idx):
        return self._torch.as_tensor(np.asarray(idx), device=self.device, dtype=self._torch.long)

    def cast(self, x, dtype=None):
        return x.to(dtype=self._dt(dtype))

    def rng(self, seq):
        t, dev, dt = self._torch, self.device, self._t_dtype
        g = t.Generator(device=dev)
        g.manual_seed(int(seq.generate_state(1, np.uint64)[0] >> np.uint64(1)))
        return _Draws(lambda high, n: t.randint(0, high, (n,), generator=g, device=dev),
                      lambda shape: t.rand(shape, generator=g, device=dev, dtype=dt),
                      lambda shape: t.randn(shape, generator=g, device=dev, dtype=dt))

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

def check_device(device: str, section: str = "") -> None:
    """Raise a one-line ``ValueError`` naming ``<section>device`` when the torch ``device``
    ("cpu", "cuda", "cuda:N") does not exist on this machine (no CUDA, or too few devices)."""
    if not device.startswith("cuda"):
        return
    import torch

    if not torch.cuda.is_available():
        raise ValueError(f"{section}device: {device!r} requested but CUDA is not "
                         f"available (got {device!r})")
    index = device.partition(":")[2]
    if index and int(index) >= torch.cuda.device_count():
        raise ValueError(f"{section}device: this machine has "
                         f"{torch.cuda.device_count()} CUDA device(s) (got {device!r})")


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

    Errors are one-line
    ``ValueError``s naming ``<section>dtype``, ``<section>device`` or
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

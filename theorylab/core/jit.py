"""Compiled CPU kernels with numba: availability, one decorator, and a prefetch intrinsic.

numba compiles a Python loop to machine code once per machine (``cache=True`` keeps the code
next to the module, so later processes load it in a fraction of a second). Where no cache
folder is writable (a read-only install and a read-only HOME, as on a shared cluster
environment; numba looks at ``$NUMBA_CACHE_DIR``, then ``__pycache__`` next to the source, then
the user-wide cache folder) the kernel is compiled without a disk cache: each process then
compiles it once, on its first call. The kernels that use
it are optional fast paths: each has a plain numpy/torch counterpart that gives the same result
up to rounding, and a choice rule that measures both (the first paper's fused empirical pass,
for one). [`HAVE_NUMBA`][] is False when numba cannot be
imported; the fast paths are then simply not candidates.

Floating point: [`FASTMATH`][] allows only *reassociation* and *contraction* (a·b + c as one
FMA), which let LLVM vectorise the reductions; NaN and infinity keep their IEEE meaning (no
``nnan``/``ninf``), so a diverging run still shows ``nan``/``inf`` as the plain path does.

numba itself is imported on the first call of a kernel, not when this module or a module
defining kernels is imported (numba takes about half a second to import; a command that only
validates a config never needs it): [`HAVE_NUMBA`][] says whether numba is installed (without
importing it), and a kernel whose first call finds numba broken runs as plain Python from then
on ([`numba_import_error`][] says why).
"""

from __future__ import annotations

import functools
import importlib.util
import threading
import types

__all__ = ["HAVE_NUMBA", "FASTMATH", "njit", "prefetch", "numba_version", "numba_import_error"]

#: LLVM fast-math flags of every kernel: reassociated sums and fused multiply-adds only
FASTMATH = frozenset({"reassoc", "contract"})

#: numba is installed (found on the path; imported only when a kernel is first called)
HAVE_NUMBA = importlib.util.find_spec("numba") is not None

_NUMBA: dict[str, object] = {}  # "module": numba once imported, "error": why it could not be
_LOCK = threading.RLock()


def _numba():
    """numba, imported on first use (None when it is absent or fails to import)."""
    if "module" not in _NUMBA:
        with _LOCK:
            if "module" not in _NUMBA:
                module = None
                if HAVE_NUMBA:
                    try:
                        import numba as module
                    except Exception as err:  # noqa: BLE001 - broken LLVM, ...: "absent"
                        _NUMBA["error"] = f"{type(err).__name__}: {err}"
                _NUMBA["module"] = module
    return _NUMBA["module"]


def numba_version() -> str | None:
    """numba's version, or None when it cannot be imported (imports numba)."""
    module = _numba()
    return None if module is None else module.__version__


def numba_import_error() -> str | None:
    """Why numba could not be imported, once a kernel or [`numba_version`][] tried; else
    None."""
    return _NUMBA.get("error")


def prefetch(arr, idx):
    """Hint the CPU to load ``arr[idx]`` (1-D array) into the caches (``llvm.prefetch``, read,
    high locality) inside a kernel compiled by [`njit`][]; no bounds check, callers keep
    ``idx`` in range. Called from plain Python (numba absent) it does nothing."""
    return None


@functools.lru_cache(maxsize=1)
def _prefetch_intrinsic():
    """The numba intrinsic that [`prefetch`][] stands for inside a compiled kernel."""
    from llvmlite import ir
    from numba import types as nbtypes
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def prefetch_intrinsic(typingctx, arr, idx):  # pragma: no cover - compiled into kernels
        sig = nbtypes.void(arr, idx)

        def codegen(context, builder, signature, args):
            aryty = signature.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]],
                                           wraparound=False, boundscheck=False)
            i8p = builder.bitcast(ptr, ir.IntType(8).as_pointer())
            i32 = ir.IntType(32)
            fnty = ir.FunctionType(ir.VoidType(), [i8p.type, i32, i32, i32])
            fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
            builder.call(fn, [i8p, ir.Constant(i32, 0), ir.Constant(i32, 3),
                              ir.Constant(i32, 1)])
            return context.get_dummy_value()

        return sig, codegen

    return prefetch_intrinsic


class _Kernel:
    """A function compiled by numba on its first call (see [`njit`][])."""

    def __init__(self, fn):
        self.py_func = fn
        self._compiled = None
        functools.update_wrapper(self, fn)

    def _dispatcher(self):
        if self._compiled is None:
            with _LOCK:
                if self._compiled is None:
                    self._compiled = _compile(self.py_func)
        return self._compiled

    def __call__(self, *args, **kwargs):
        return self._dispatcher()(*args, **kwargs)


def _compile(fn):
    """numba's dispatcher of ``fn`` (or ``fn`` itself without numba), with the stand-ins of
    its globals ([`prefetch`][], other [`njit`][] kernels) replaced by what numba compiles."""
    module = _numba()
    if module is None:
        return fn
    names = fn.__code__.co_names
    swapped = {}
    for name in names:
        value = fn.__globals__.get(name)
        if value is prefetch:
            swapped[name] = _prefetch_intrinsic()
        elif isinstance(value, _Kernel):
            swapped[name] = value._dispatcher()
    if swapped:
        fn = types.FunctionType(fn.__code__, {**fn.__globals__, **swapped}, fn.__name__,
                                fn.__defaults__, fn.__closure__)
    options = {"nogil": True, "fastmath": set(FASTMATH), "error_model": "numpy"}
    try:
        return module.njit(cache=True, **options)(fn)
    except RuntimeError as err:  # "cannot cache function ...: no locator available for file"
        if "cannot cache" not in str(err):
            raise
        return module.njit(cache=False, **options)(fn)


def njit(fn):
    """``numba.njit`` with this package's settings (cached on disk where a cache folder is
    writable, else compiled in memory; no GIL, IEEE NaN/inf, [`FASTMATH`][], numpy's error
    model: x/0 gives inf, not an exception), compiled on the first call: numba is imported
    then, not when the kernel is defined. Without numba the kernel runs as plain, slow Python
    (callers check [`HAVE_NUMBA`][] before choosing a kernel)."""
    return _Kernel(fn)

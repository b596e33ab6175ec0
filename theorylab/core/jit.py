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
"""

from __future__ import annotations

__all__ = ["HAVE_NUMBA", "FASTMATH", "njit", "prefetch", "numba_version"]

#: LLVM fast-math flags of every kernel: reassociated sums and fused multiply-adds only
FASTMATH = frozenset({"reassoc", "contract"})

try:  # pragma: no branch - the import either works or not on a machine
    import numba as _numba
except Exception:  # noqa: BLE001 - any failure to import (missing, broken LLVM) means "absent"
    _numba = None

HAVE_NUMBA = _numba is not None


def numba_version() -> str | None:
    """numba's version, or None when it cannot be imported."""
    return None if _numba is None else _numba.__version__


def njit(fn):
    """``numba.njit`` with this package's settings (cached on disk where a cache folder is
    writable, else compiled in memory; no GIL, IEEE NaN/inf,
    [`FASTMATH`][], numpy's error model: x/0 gives inf, not an exception). Without numba the
    function is returned unchanged (it is then plain, slow Python; callers check
    [`HAVE_NUMBA`][] before choosing a kernel)."""
    if _numba is None:
        return fn
    options = {"nogil": True, "fastmath": set(FASTMATH), "error_model": "numpy"}
    try:
        return _numba.njit(cache=True, **options)(fn)
    except RuntimeError as err:  # "cannot cache function ...: no locator available for file"
        if "cannot cache" not in str(err):
            raise
        return _numba.njit(cache=False, **options)(fn)


if _numba is not None:
    from llvmlite import ir as _ir
    from numba import types as _types
    from numba.core import cgutils as _cgutils
    from numba.extending import intrinsic as _intrinsic

    @_intrinsic
    def prefetch(typingctx, arr, idx):  # pragma: no cover - compiled into kernels
        """Hint the CPU to load ``arr[idx]`` (1-D array) into the caches (``llvm.prefetch``,
        read, high locality). No bounds check: callers keep ``idx`` in range."""
        sig = _types.void(arr, idx)

        def codegen(context, builder, signature, args):
            aryty = signature.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            ptr = _cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]],
                                            wraparound=False, boundscheck=False)
            i8p = builder.bitcast(ptr, _ir.IntType(8).as_pointer())
            i32 = _ir.IntType(32)
            fnty = _ir.FunctionType(_ir.VoidType(), [i8p.type, i32, i32, i32])
            fn = _cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
            builder.call(fn, [i8p, _ir.Constant(i32, 0), _ir.Constant(i32, 3),
                              _ir.Constant(i32, 1)])
            return context.get_dummy_value()

        return sig, codegen
else:  # pragma: no cover - exercised only where numba is missing

    def prefetch(arr, idx):
        """No-op without numba."""
        return None

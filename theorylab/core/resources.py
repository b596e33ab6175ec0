"""Up-front resource checks: refuse a run whose estimated memory does not fit, before anything
is allocated, with a message that names the field to shrink and what would fit.

A paper estimates the bytes its engine will hold (an upper estimate, measured against the
engine's peak resident memory in the paper's tests) and calls [`check_memory`][].
"""

from __future__ import annotations

from .backend import host_free_bytes

__all__ = ["MEMORY_SHARE", "check_memory", "format_bytes"]

#: A run may plan to use at most this share of the memory that is free when it starts.
MEMORY_SHARE = 0.8


def format_bytes(n: float) -> str:
    """``1.5 GB`` style (powers of 1000); any size, however large (an integer beyond a float's
    range is shown as ``>1e308 B``)."""
    try:
        n = float(n)
    except OverflowError:
        return ">1e308 B"
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1000 or unit == "PB":
            return f"{n:.3g} {unit}"
        n /= 1000
    return f"{n:.3g} PB"  # pragma: no cover


def check_memory(need: float, *, field: str, what: str, hint: str,
                 free: float | None = None, share: float = MEMORY_SHARE) -> None:
    """Raise ``ValueError("<field>: <what> needs about <need> but <free> is free; <hint>")``
    when ``need`` bytes exceed ``share`` of the free memory (``free``; default: this
    machine's available physical memory)."""
    free = host_free_bytes() if free is None else free
    if need > share * free:
        raise ValueError(f"{field}: {what} needs about {format_bytes(need)} of memory but "
                         f"{format_bytes(free)} is free; {hint}")

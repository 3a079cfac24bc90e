"""Limits every fuzz example runs under: what one input may cost in memory (its time is the
hypothesis deadline of tests/fuzz/conftest.py)."""
from __future__ import annotations

import resource
import tracemalloc
from collections.abc import Callable

__all__ = ["MAX_HEAP_BYTES", "MAX_RSS_GROWTH_BYTES", "bounded"]


# A few KB of input may cost a parser some MB, never more: Python's heap at its peak...
MAX_HEAP_BYTES = 64 * 2**20
# ...and the process's peak resident size (what libxml2 allocates itself too) may grow only so much.
MAX_RSS_GROWTH_BYTES = 256 * 2**20


def _max_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


def bounded[T](call: Callable[[], T]) -> T:
    """``call()``, failing the example if it took more memory than the limits allow."""
    rss0 = _max_rss()
    tracemalloc.start()
    try:
        out = call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak <= MAX_HEAP_BYTES, f"one example took {peak / 2**20:.1f} MiB of Python heap"
    grown = _max_rss() - rss0
    assert grown <= MAX_RSS_GROWTH_BYTES, f"one example grew the process by {grown / 2**20:.1f} MiB"
    return out

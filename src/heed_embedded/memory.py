"""What a long-running ``heed serve`` process gives back of its memory (issue 34: resident memory
flat over months, not only the database).

Python's own objects are a small part of a serving process (some 30 MB of 270, traced in a soak);
the rest is C's heap: SQLite's page caches, lxml's trees, the buffers of requests and answers. With
glibc, every thread that allocates while another does gets an arena of its own (up to eight a
core), and the pages freed inside an arena stay the process's until it is trimmed: with hundreds of
turn threads the resident memory creeps up with each burst of work. So a serving process keeps to
``ARENAS`` arenas (unless the operator set ``MALLOC_ARENA_MAX``) and gives the free pages of every
arena back to the system every ``TRIM_EVERY_S`` (``malloc_trim``). Elsewhere than glibc both are
nothing."""
from __future__ import annotations

import ctypes
import os
import platform
import time
from typing import Any

__all__ = ["ARENAS", "TRIM_EVERY_S", "Trimmer", "limit_arenas"]

ARENAS = 2  # malloc arenas of a serving process (the turns hold the GIL for most of their allocations)
TRIM_EVERY_S = 60.0
_M_ARENA_MAX = -8  # glibc's mallopt parameter


def _libc() -> Any | None:
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        libc = ctypes.CDLL(None)
        return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


def limit_arenas() -> bool:
    """Keep this process (and the workers it forks or spawns) to ``ARENAS`` malloc arenas, before
    its threads start; an operator's ``MALLOC_ARENA_MAX`` is left as it is. True if it was set."""
    if os.environ.get("MALLOC_ARENA_MAX"):
        return False
    libc = _libc()
    if libc is None:
        return False
    os.environ["MALLOC_ARENA_MAX"] = str(ARENAS)  # a spawned worker's glibc reads it at its start
    return bool(libc.mallopt(_M_ARENA_MAX, ARENAS))


class Trimmer:
    """``malloc_trim(0)`` at most every ``every_s``: ``maybe(now)`` from a loop that wakes often."""

    def __init__(self, every_s: float = TRIM_EVERY_S) -> None:
        self.every_s = every_s
        self._libc = _libc()
        self._next = time.monotonic() + every_s

    def maybe(self) -> bool:
        """Trim if it is time; True if it trimmed."""
        if self._libc is None or time.monotonic() < self._next:
            return False
        self._next = time.monotonic() + self.every_s
        self._libc.malloc_trim(0)
        return True

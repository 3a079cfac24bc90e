"""The local runtime's clock: wall-clock speed while work is pending, jumps when idle."""
from __future__ import annotations

import time


def is_simulated(start: float, until: float, now: float | None = None) -> bool:
    """A run whose clock is not the wall clock: it starts elsewhere in time, or runs past now."""
    now = time.time() if now is None else now
    return abs(start - now) > 60.0 or until > start + 1.0


class SimClock:
    def __init__(self, start: float) -> None:
        self._offset = start - time.time()
        self.jumps: list[tuple[float, float]] = []  # (wall-clock time, offset from then on)
        self.jumps.append((time.time(), self._offset))

    def now(self) -> float:
        return time.time() + self._offset

    def jump_to(self, t: float) -> float:
        """Move forward to ``t`` (never back); returns how far it jumped."""
        delta = t - self.now()
        if delta > 0:
            self._offset += delta
            self.jumps.append((time.time(), self._offset))
            return delta
        return 0.0

    def at(self, wall: float) -> float:
        """The simulated time it was at wall-clock time ``wall`` (a site's log is in wall time)."""
        offset = self.jumps[0][1]
        for since, off in self.jumps:
            if since <= wall:
                offset = off
        return wall + offset

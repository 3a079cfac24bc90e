"""The local runtime's clock: wall-clock speed while work is pending, jumps when idle."""
from __future__ import annotations

import time


class SimClock:
    def __init__(self, start: float) -> None:
        self._offset = start - time.time()

    def now(self) -> float:
        return time.time() + self._offset

    def jump_to(self, t: float) -> float:
        """Move forward to ``t`` (never back); returns how far it jumped."""
        delta = t - self.now()
        if delta > 0:
            self._offset += delta
            return delta
        return 0.0

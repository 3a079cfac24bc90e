"""Progress of a long operator command (an import, a purge): a bar on a terminal, a line every
few seconds otherwise (a log, a CI job), always on stderr so stdout stays the result."""
from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

INTERVAL_S = 5.0  # between two lines when stderr is not a terminal
WIDTH = 30


class Progress:
    def __init__(self, label: str, *, stream: TextIO | None = None, interval_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval_s = INTERVAL_S if interval_s is None else interval_s
        self.clock = clock
        self.last = clock()
        self.drawn = False

    def __call__(self, done: int, total: int, what: str) -> None:
        if self.tty:
            filled = int(WIDTH * done / total) if total else WIDTH
            self.stream.write(f"\r\033[K{self.label}: [{'#' * filled}{'.' * (WIDTH - filled)}] {done}/{total} {what}")
            self.stream.flush()
            self.drawn = True
            return
        now = self.clock()
        if now - self.last >= self.interval_s:
            self.last = now
            self.stream.write(f"{self.label}: {done}/{total} {what}\n")
            self.stream.flush()

    def close(self) -> None:
        if self.tty and self.drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()

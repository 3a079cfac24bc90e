"""The small interfaces between the pure core and the outside world (clock, HTTP)."""
from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol


class Clock(Protocol):
    """Wall-clock epoch seconds. Injected everywhere; the core never reads time itself."""

    def now(self) -> float:
        """Seconds since the epoch, as a float; never goes backwards on one clock."""
        ...


class SystemClock:
    """The machine's wall clock (Lambda's, or the operator's), as epoch seconds."""

    def now(self) -> float:
        """``time.time()``."""
        return time.time()


class FakeClock:
    """A clock for tests: time moves only when told to."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.t = float(start)

    def now(self) -> float:
        """The time it was set to, moved only by ``advance``."""
        return self.t

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward."""
        self.t += seconds


@dataclass(frozen=True)
class FetchRequest:
    """One GET. ``headers`` carries only request-specific headers (conditional ones);
    the transport adds User-Agent, Accept-Encoding and nothing else."""

    url: str
    purpose: str  # robots, tdmrep, render, or a source kind's own (heed_core.kinds: feed, article, sitemap, ...)
    max_bytes: int
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FetchResult:
    """What came back. ``error`` is a stable code when no HTTP status was obtained
    (e.g. ``timeout``, ``connect_error``, ``dns_error``, ``private_address``,
    ``too_large``, ``decompression_error``, ``deadline``, ``invalid_url``).
    ``sent`` is False when no byte left the machine (refused before connecting)."""

    url: str
    status: int | None
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    t_start: float = 0.0
    t_end: float = 0.0
    error: str | None = None
    sent: bool = True
    truncated: bool = False
    ip: str | None = None

    def header(self, name: str) -> str | None:
        """First value of a header (case-insensitive), or None."""
        lname = name.lower()
        for k, v in self.headers:
            if k.lower() == lname:
                return v
        return None

    def header_all(self, name: str) -> list[str]:
        """Every value of a repeated header, in order, unjoined."""
        lname = name.lower()
        return [v for k, v in self.headers if k.lower() == lname]


class Transport(Protocol):
    """Sends one GET, never follows a redirect, never raises for network trouble:
    failures come back as ``FetchResult.error``."""

    def fetch(self, request: FetchRequest) -> FetchResult:
        """Send ``request`` once and return what came back, ``t_start``/``t_end`` on the
        transport's clock. Bodies are cut at ``request.max_bytes`` (``truncated``); a refusal
        before any byte left (a private address, a bad URL) comes back with ``sent=False``."""
        ...

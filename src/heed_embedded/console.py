"""What ``heed serve`` tells the person or the journal watching it: the progress line, when it is
worth a line, with counts that go on from the state's across restarts; and whether a stream is
journald's (which stamps every line itself).

On a terminal the line is a bar, redrawn at most twice a second. Elsewhere (nohup, CI, systemd) a
line is written only when something changed since the last one: at most one every ``BUSY_S`` while
pages are fetched, skipped or results put, at most one every ``IDLE_S`` while only the waiting
hosts or the next firing moved, none at all while nothing did."""
from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, TextIO

from heed_embedded.db import Database

__all__ = ["BUSY_S", "IDLE_S", "KEPT", "Progress", "Totals", "to_journal", "totals_so_far"]

BUSY_S = 10.0
IDLE_S = 60.0
KEEP_S = 10.0  # the totals written to the state at most this often (and at the stop)
TOTALS_KEY = "totals"  # the manifest row that carries the counts across restarts
KEPT = ("requests", "skips", "turns", "failures", "transient", "faults", "rounds")  # counted by serve alone
_WORK = ("requests", "skips", "events", "rounds")  # what moves when the crawl is at work


def to_journal(fd: int) -> bool:
    """True when ``fd`` is connected to journald: systemd sets ``JOURNAL_STREAM`` to the device and
    inode of the service's stdout and stderr stream (a child whose output was redirected keeps the
    variable, so the descriptor is compared, as systemd.exec(5) says to)."""
    value = os.environ.get("JOURNAL_STREAM", "")
    dev, _, ino = value.partition(":")
    try:
        st = os.fstat(fd)
        return (st.st_dev, st.st_ino) == (int(dev), int(ino))
    except (OSError, ValueError):
        return False


def totals_so_far(db: Database) -> dict[str, int]:
    """What the state counted before this run: results, requests and skips from their tables' own
    sequences (every row ever put, whatever retention pruned since: exact through a SIGKILL), the
    rest as the last ``heed serve`` kept them. The one place these are read."""
    with db.read("totals") as c:
        row = c.execute("SELECT value FROM manifest WHERE key = ?", (TOTALS_KEY,)).fetchone()
        seqs = dict(c.execute("SELECT name, seq FROM sqlite_sequence WHERE name IN ('events', 'requests', 'skips')"))
    kept: Any = json.loads(row[0]) if row else {}
    out = {k: int(kept.get(k) or 0) if isinstance(kept, dict) else 0 for k in KEPT}
    out["events"] = int(seqs.get("events") or 0)
    for what, table in (("requests", "requests"), ("skips", "skips")):
        if table in seqs:  # a state whose log is a table (schema 5): its sequence, not a kept count
            out[what] = int(seqs[table] or 0)
    return out


class Totals:
    """The counts of every run so far: the state's at the start, plus this run's; kept in the state
    at most every ``KEEP_S`` and at the stop (a SIGKILL loses at most those seconds' counts)."""

    def __init__(self, db: Database, clock: Callable[[], float] = time.monotonic) -> None:
        self.db = db
        self.clock = clock
        self.base = totals_so_far(db)
        self._kept: dict[str, int] = {k: self.base[k] for k in KEPT}
        self._at = clock()

    def add(self, run: Mapping[str, int]) -> dict[str, int]:
        """The totals with this run's counts ``run`` added."""
        return {**run, **{k: self.base.get(k, 0) + int(run.get(k, 0)) for k in (*KEPT, "events")}}

    def keep(self, run: Mapping[str, int], *, now: bool = False) -> None:
        """Writes the totals to the state when they moved and ``KEEP_S`` went by (``now``: at once)."""
        totals = self.add(run)
        kept = {k: totals[k] for k in KEPT}
        if kept == self._kept or not now and self.clock() - self._at < KEEP_S:
            return
        with self.db.write("totals", durable=False) as c:  # counts, not the crawl's state: no wait for the disk
            c.execute("INSERT OR REPLACE INTO manifest (key, value) VALUES (?, ?)", (TOTALS_KEY, json.dumps(kept)))
        self._kept, self._at = kept, self.clock()


class Progress:
    """A bar on a terminal; elsewhere a line when something changed (see the module)."""

    def __init__(self, bot: str, stream: TextIO, clock: Callable[[], float] = time.monotonic) -> None:
        self.bot = bot
        self.stream = stream
        self.clock = clock
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.last = -1e18
        self.shown: tuple[Any, ...] | None = None
        self.drawn = False

    def show(self, stats: Mapping[str, int], counts: Mapping[str, Any], nxt: float | None, *,
             force: bool = False) -> bool:
        """Writes the line if it is due (``force``: at once, as at the stop); True if it did."""
        now = self.clock()
        when = datetime.fromtimestamp(nxt, UTC).strftime("%Y-%m-%d %H:%M:%SZ") if nxt else "-"
        errors = stats["failures"] + stats["faults"]
        said = (*(stats[k] for k in _WORK), counts["waiting"], counts["held"], errors, stats["transient"], when)
        if not force:
            if self.tty:
                if now - self.last < 0.5:
                    return False
            elif said == self.shown:
                return False
            elif now - self.last < (BUSY_S if self.shown is None or said[:len(_WORK)] != self.shown[:len(_WORK)]
                                    else IDLE_S):
                return False
        self.last, self.shown = now, said
        line = (f"{self.bot}: rounds {stats['rounds']} | requests {stats['requests']} | waits {counts['waiting']} "
                f"hosts | at work {counts['held']} | errors {errors} (transient {stats['transient']}) | events "
                f"{stats['events']} | next firing {when}")
        try:
            if self.tty:
                self.stream.write("\r\033[K" + line[:max(40, _columns() - 1)])
                self.drawn = True
            else:
                self.stream.write(line + "\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass
        return True

    def close(self) -> None:
        if self.tty and self.drawn:
            try:
                self.stream.write("\r\033[K")
                self.stream.flush()
            except (OSError, ValueError):
                pass


def _columns() -> int:
    try:
        return os.get_terminal_size(2).columns
    except OSError:
        return 160

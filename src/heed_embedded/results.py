"""The bot's product on one machine: events in a table (exported as JSONL) and page texts kept as
versions (the request and skip log is ``heed_embedded.journal``'s).

``SqliteResults`` implements ``heed_core.store.Results``: an event is a row of ``events`` (its
``seq`` is the order it was put in), written in the drain's transaction with the drain mark that
says it left, so an event is there exactly once; a text is a row of ``texts`` (its version id is
the row's). ``export_events`` appends the envelopes of the events not yet exported to a JSONL
file, from a position kept in the database (the file is an export, not the record).
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from heed_core.urls import BadUrl, authority

from heed_embedded.db import Database

__all__ = ["SqliteResults", "events_since", "export_events"]


def _host(url: Any) -> str:
    try:
        return authority(str(url))
    except BadUrl:
        return ""


class SqliteResults:
    """Implements ``heed_core.store.Results`` on ``db``; ``clock`` is the crawl's (an event's
    ``at``), the row's ``wall`` the machine's."""

    def __init__(self, db: Database, clock: Callable[[], float] = time.time,
                 on_event: Callable[[int], None] | None = None) -> None:
        self.db = db
        self.clock = clock
        self.on_event = on_event  # told how many events went in (the engine's counts)

    def emit_many(self, events: Sequence[tuple[str, str, dict[str, Any]]]) -> list[str]:
        """Every event as a row (none is refused: the list of failures is always empty)."""
        if not events:
            return []
        at, wall = self.clock(), time.time()
        # (Made before the write: staged in a batch, the lock held for SQL only.)
        rows = [(rid, dt, json.dumps(rec, ensure_ascii=False, default=str, separators=(",", ":")), at, wall)
                for dt, rid, rec in events]
        self.db.stage("events", "INSERT INTO events (rid, detail_type, record, at, wall) VALUES (?, ?, ?, ?, ?)", rows,
                      many=True)
        if self.on_event is not None:
            on_event, n = self.on_event, len(events)
            self.db.after_commit(lambda: on_event(n))
        return []

    def store_text(self, key: str, text: str) -> str:
        with self.db.write(f"text {key}") as c:
            cur = c.execute("INSERT INTO texts (key, text, at) VALUES (?, ?, ?)", (key, text, self.clock()))
        return str(cur.lastrowid)

    def load_text(self, key: str) -> str | None:
        with self.db.read(f"text {key}") as c:
            row = c.execute("SELECT text FROM texts WHERE key = ? ORDER BY vid DESC LIMIT 1", (key,)).fetchone()
        return str(row[0]) if row else None


def events_since(db: Database, after: int, limit: int = 5000) -> list[dict[str, Any]]:
    """The events put after ``seq`` ``after``, in order, each its record with its ``seq``,
    ``detail_type``, ``put_at`` and ``wall`` (the engine's own view; the doors read envelopes)."""
    with db.read("events") as c:
        rows = c.execute("SELECT seq, rid, detail_type, record, at, wall FROM events WHERE seq > ? "
                         "ORDER BY seq LIMIT ?", (after, limit)).fetchall()
    out = []
    for seq, rid, dt, rec, at, wall in rows:
        data = json.loads(rec)
        out.append({"seq": seq, "detail_type": dt, **data, "id": data.get("id", rid), "put_at": at, "wall": wall})
    return out


def _last_line(path: Path) -> dict[str, Any] | None:
    """The last whole JSON line of a file (a line cut by a crash is passed over)."""
    if not path.is_file() or path.stat().st_size == 0:
        return None
    with path.open("rb") as f:
        f.seek(max(0, path.stat().st_size - 65536))
        lines = [ln for ln in f.read().splitlines() if ln.strip()]
    for line in reversed(lines):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    return None


def export_events(db: Database, path: Path) -> int:
    """Append to ``path`` the envelopes of the events committed since the export's position (the
    ``_export`` consumer: kept in the database, so a file moved or deleted is started afresh with
    what comes next, never filled again from the first event), one JSON line each (``heed events
    --json``'s lines); returns how many. The position moves after the lines are flushed; a crash
    in between writes them again, unless the file still ends with them. A line cut by a crash is
    ended first, so the file stays one JSON per line."""
    from heed_embedded.events import EXPORT, advance, position, read_after, seq_of

    start = position(db, EXPORT)
    last = _last_line(path)
    if last is not None:  # the file's own last line, where it is the one this export wrote last
        at = int(last["seq"]) if isinstance(last.get("seq"), int) else seq_of(db, str(last.get("id") or ""))
        if at is not None and (start is None or at > start):
            start = at
    start = start or 0
    written = 0
    while True:
        rows, upto = read_after(db, start, limit=5000)
        if upto == start:
            return written
        with path.open("ab") as f:
            if f.tell() > 0:
                with path.open("rb") as r:
                    r.seek(f.tell() - 1)
                    if r.read(1) != b"\n":
                        f.write(b"\n")
            f.write(b"".join(json.dumps(row.envelope, ensure_ascii=False, default=str).encode("utf-8") + b"\n"
                             for row in rows))
            f.flush()
        advance(db, EXPORT, upto)
        start, written = upto, written + len(rows)

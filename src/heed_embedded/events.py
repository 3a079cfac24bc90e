"""The results of a state directory as the doors read them: the events table in commit order, each
row as its CloudEvents envelope (``heed_core.envelope``), and the named consumers' positions.

An event's ``seq`` is its place in commit order (the drain's transaction writes it with the mark
that says it left: each result is there once). A consumer's position is the ``seq`` of the last
event it has taken; it moves only when the consumer says its lines are out (``advance``), so a
consumer killed at any moment and started again gets every event at least once and skips none.
Files under the state directory are exports: moving or deleting one changes none of this."""
from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from heed_core.envelope import envelope, type_of

from heed_embedded.db import Database

__all__ = ["CONSUMER_NAME", "EXPORT", "WEBHOOK", "Consumer", "Row", "advance", "consumers", "last_seq", "position",
           "by_url", "read_after", "reset", "seq_of"]

CONSUMER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")  # a consumer's own name; heed's begin with "_"
EXPORT = "_export"  # heed serve's events.jsonl: a file moved away is started afresh from here, not from 0
WEBHOOK = "_webhook"  # the events taken into the webhook's deliveries


@dataclass(frozen=True)
class Row:
    """One event: its place in commit order and its envelope."""

    seq: int
    envelope: dict[str, Any]

    @property
    def type(self) -> str:
        return str(self.envelope["type"])

    @property
    def group(self) -> str:
        """What its order is kept within (a webhook's deliveries): its source."""
        return str(self.envelope["source"])


@dataclass(frozen=True)
class Consumer:
    name: str
    seq: int
    updated: float
    lag: int  # events committed after its position


def read_after(db: Database, after: int, *, limit: int = 500, types: Sequence[str] = ()) -> tuple[list[Row], int]:
    """The events after ``seq`` ``after`` in commit order, at most ``limit`` of them looked at, and
    the ``seq`` read up to (past the events of other types than ``types``, when given)."""
    wanted = {type_of(t) for t in types}
    with db.read("events") as c:
        rows = c.execute("SELECT seq, rid, detail_type, record, at FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
                         (after, limit)).fetchall()
    out: list[Row] = []
    upto = after
    for seq, rid, kind, record, at in rows:
        upto = int(seq)
        env = envelope(str(kind), str(rid), json.loads(record), at=float(at))
        if not wanted or env["type"] in wanted:
            out.append(Row(int(seq), env))
    return out, upto


def by_url(db: Database, urls: Sequence[str]) -> list[Row]:
    """The events about any of ``urls`` (their record's ``url``), in commit order."""
    marks = ",".join("?" for _ in urls)
    with db.read("events by url") as c:
        rows = c.execute("SELECT seq, rid, detail_type, record, at FROM events WHERE json_extract(record, '$.url') "
                         f"IN ({marks}) ORDER BY seq", tuple(urls)).fetchall()
    return [Row(int(seq), envelope(str(kind), str(rid), json.loads(rec), at=float(at)))
            for seq, rid, kind, rec, at in rows]


def last_seq(db: Database) -> int:
    with db.read("events") as c:
        row = c.execute("SELECT max(seq) FROM events").fetchone()
    return int(row[0] or 0)


def seq_of(db: Database, event_id: str) -> int | None:
    """The ``seq`` of the event with that id (its first, should a result have been found twice)."""
    with db.read("events") as c:
        row = c.execute("SELECT min(seq) FROM events WHERE rid = ?", (event_id,)).fetchone()
    return int(row[0]) if row and row[0] is not None else None


def position(db: Database, name: str) -> int | None:
    """The consumer's position (None: a consumer never seen)."""
    with db.read("consumer") as c:
        row = c.execute("SELECT seq FROM consumers WHERE name = ?", (name,)).fetchone()
    return int(row[0]) if row else None


def advance(db: Database, name: str, seq: int) -> None:
    """Move the consumer to ``seq`` (its lines up to there are out). Never moves it back, but for
    ``reset`` (``--since``, ``--from-start``: the consumer asked to start there)."""
    with db.write(f"consumer {name}") as c:
        c.execute("INSERT INTO consumers (name, seq, updated) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET "
                  "seq = max(seq, excluded.seq), updated = excluded.updated", (name, seq, time.time()))


def reset(db: Database, name: str, seq: int) -> None:
    """Put the consumer at ``seq``, back or forth."""
    with db.write(f"consumer {name}") as c:
        c.execute("INSERT OR REPLACE INTO consumers (name, seq, updated) VALUES (?, ?, ?)", (name, seq, time.time()))


def consumers(db: Database) -> list[Consumer]:
    """Every named consumer, its position and how many events it has still to take."""
    with db.read("consumers") as c:
        rows = c.execute("SELECT c.name, c.seq, c.updated, (SELECT count(*) FROM events e WHERE e.seq > c.seq) "
                         "FROM consumers c ORDER BY c.name").fetchall()
    return [Consumer(str(n), int(s), float(u), int(lag)) for n, s, u, lag in rows]

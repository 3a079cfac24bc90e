"""How long a state directory keeps what grows, and the pruning that keeps it so while ``heed serve``
runs: every table is bounded by a retention here or by its rows' own expiry (``SqliteStore.prune``:
host items, URL records, in-flight marks and caps, as DynamoDB's TTL would).

==============  =======  =====================================================================
what            default  why
==============  =======  =====================================================================
requests, skips 400 d    a site owner's log line a year old still has its answer (``heed serve
                         --keep-requests``)
events          400 d    the results; a consumer further behind than this misses the oldest;
                         one the webhook has still to deliver is kept until it is delivered
dead letters    14 d     the work queue's and the webhook's, as SQS keeps a dead-letter queue's
text versions   30 d     a text replaced by a newer version, as the AWS bucket's lifecycle expires
                         non-current versions (COMMON-08: what a site owner had deleted does not
                         live on as an old version)
==============  =======  =====================================================================

Pruning deletes the oldest rows first, a few thousand at a time (a serving process's writers are
never held long), then returns the freed pages to the file system (incremental auto-vacuum; a
database made before it was on is vacuumed once to turn it on)."""
from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from heed_core.errors import ConfigError

from heed_embedded.db import Database

__all__ = ["DAY", "Retention", "RetentionError", "ensure_incremental", "parse_duration", "prune"]

DAY = 86400.0
CHUNK = 5000  # rows a delete takes at a time
VACUUM_PAGES = 2000  # pages returned to the file system at a time (8 MB of 4 KB pages; each step a transaction)
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(d|h|m|s)")
_UNIT = {"d": DAY, "h": 3600.0, "m": 60.0, "s": 1.0}


class RetentionError(ConfigError):
    code = "retention"


def parse_duration(text: str, where: str = "retention") -> float:
    """``400d``, ``12h``, ``30m``, ``90s`` as seconds (``RetentionError`` otherwise; above nothing)."""
    m = _DURATION.fullmatch(str(text).strip().lower())
    if m is None or float(m.group(1)) <= 0:
        raise RetentionError(f"{where}: {text!r} is not a duration such as 400d, 12h, 30m or 90s")
    return float(m.group(1)) * _UNIT[m.group(2)]


@dataclass(frozen=True)
class Retention:
    """Seconds each kind of record is kept (see the module's table)."""

    requests_s: float = 400 * DAY
    events_s: float = 400 * DAY
    dead_letters_s: float = 14 * DAY
    text_versions_s: float = 30 * DAY

    KEYS: ClassVar[dict[str, str]] = {"requests": "requests_s", "events": "events_s", "dead_letters": "dead_letters_s",
            "text_versions": "text_versions_s"}

    @classmethod
    def from_settings(cls, data: Mapping[str, Any] | None, where: str = "retention") -> Retention:
        """From a settings file's ``retention:`` mapping (``requests: 400d``, ...), checked key by key."""
        out = cls()
        for key, value in (data or {}).items():
            if key not in cls.KEYS:
                raise RetentionError(f"{where}: unknown key {key!r} (known: {', '.join(cls.KEYS)})")
            out = cls(**{**asdict(out), cls.KEYS[key]: parse_duration(value, f"{where}.{key}")})
        return out

    def shown(self) -> dict[str, str]:
        """Each retention as it is written (``400d``), for ``heed state info``."""
        def text(s: float) -> str:
            for unit in ("d", "h", "m"):
                if s % _UNIT[unit] == 0:
                    return f"{int(s // _UNIT[unit])}{unit}"
            return f"{s:g}s"
        return {k: text(getattr(self, attr)) for k, attr in self.KEYS.items()}


def _first_at_or_after(c: sqlite3.Connection, table: str, key: str, cutoff: float) -> int:
    """The first ``key`` (id, seq) whose row's ``wall`` is at or after ``cutoff``, in a table whose
    keys grow with it (rows are appended as time goes), or one past the last key when every row is
    older: found by halving the key range, each step a key lookup (no index on the time)."""
    # (min and max apart: SQLite answers each from the key's b-tree, but both in one query by a scan)
    first = c.execute(f"SELECT min({key}) FROM {table}").fetchone()[0]
    last = c.execute(f"SELECT max({key}) FROM {table}").fetchone()[0]
    if first is None:
        return 0
    if float(c.execute(f"SELECT wall FROM {table} WHERE {key} = ?", (last,)).fetchone()[0]) < cutoff:
        return int(last) + 1
    best, lo, hi = int(last), int(first), int(last) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        row = c.execute(f"SELECT {key}, wall FROM {table} WHERE {key} >= ? ORDER BY {key} LIMIT 1", (mid,)).fetchone()
        if row is None or int(row[0]) > hi:
            hi = mid - 1  # no row in [mid, hi]
        elif float(row[1]) >= cutoff:
            best, hi = int(row[0]), mid - 1
        else:
            lo = int(row[0]) + 1
    return best


def _prune_log(db: Database, table: str, cutoff: float, keep: str = "") -> int:
    """Delete the rows of an append-only table older than ``cutoff`` (its ``wall``), oldest first,
    ``CHUNK`` at a time, each chunk a transaction of its own; ``keep``: a condition a row must
    also meet to go."""
    key = "seq" if table == "events" else "id"
    gone = 0
    while True:
        with db.write(f"prune {table}") as c:
            bound = _first_at_or_after(c, table, key, cutoff)
            extra = f" AND {keep}" if keep else ""
            n = c.execute(f"DELETE FROM {table} WHERE {key} IN (SELECT {key} FROM {table} WHERE {key} < ?{extra} "
                          f"ORDER BY {key} LIMIT {CHUNK})", (bound,)).rowcount
        gone += n
        if n < CHUNK:
            return gone


def prune(db: Database, now: float, retention: Retention) -> dict[str, int]:
    """Everything past its retention at ``now``, deleted; the freed pages returned. Returns how
    many rows of each table went."""
    out = {"requests": _prune_log(db, "requests", now - retention.requests_s),
           "skips": _prune_log(db, "skips", now - retention.requests_s)}
    # An event the webhook has still to deliver (or that waits in its dead letters) stays.
    out["events"] = _prune_log(db, "events", now - retention.events_s,
                               "seq NOT IN (SELECT seq FROM deliveries UNION SELECT seq FROM delivery_dead)")
    cutoff = now - retention.dead_letters_s
    with db.write("prune dead letters") as c:
        out["dead"] = c.execute("DELETE FROM dead WHERE dead_at < ?", (cutoff,)).rowcount
        out["delivery_dead"] = c.execute("DELETE FROM delivery_dead WHERE dead_at < ?", (cutoff,)).rowcount
    cutoff = now - retention.text_versions_s
    with db.write("prune text versions") as c:
        # A version is non-current from when a newer one of its key was kept.
        out["texts"] = c.execute(
            "DELETE FROM texts WHERE vid IN (SELECT t.vid FROM texts t WHERE EXISTS (SELECT 1 FROM texts n "
            "WHERE n.key = t.key AND n.vid > t.vid AND n.at < ?) LIMIT ?)", (cutoff, CHUNK * 4)).rowcount
    _vacuum(db)
    return out


def _vacuum(db: Database) -> None:
    """Every free page back to the file system, ``VACUUM_PAGES`` at a time (a writer waits for one
    step at most)."""
    with db.read("auto vacuum") as c:
        if int(c.execute("PRAGMA auto_vacuum").fetchone()[0]) != 2:
            return
    while True:
        with db.write("incremental vacuum") as c:
            if int(c.execute("PRAGMA freelist_count").fetchone()[0]) == 0:
                return
            c.execute(f"PRAGMA incremental_vacuum({VACUUM_PAGES})").fetchall()


def ensure_incremental(db: Database) -> bool:
    """A database made before incremental auto-vacuum was on, vacuumed once to turn it on (the
    file rewritten: it takes a while on a big one, and as much free disk again). True if it was
    done now; False if it was on already, or the database was busy (tried again at the next start)."""
    c = db.conn()
    try:
        if int(c.execute("PRAGMA auto_vacuum").fetchone()[0]) == 2:
            return False
        c.execute("PRAGMA auto_vacuum=INCREMENTAL")
        c.execute("VACUUM")
        return True
    except sqlite3.OperationalError:
        return False  # another process held it (an operator's command): the next start tries again

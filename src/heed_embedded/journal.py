"""The request and skip log of a state directory, as tables: the record a site owner's questions are
answered from ("what did your bot do on my site?", "why did it fetch this?").

``SqliteJournal`` implements ``heed_core.store.Journal``: each request (and each skip) is a row,
written in the transaction of the turn that made it (inside a batch, a write joins its open
transaction: the request's row lands with the host's commit), indexed by host and time and by URL,
so ``heed audit --host`` and ``heed explain`` read an index, never a whole log. Each row keeps the
record whole (JSON) beside the indexed columns. Files (``heed audit --json``, the old
``requests.jsonl``) are exports; a state of an older schema has its log files read in once
(``import_logs``). Retention (``heed_embedded.retention``) deletes the oldest rows first."""
from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from heed_core.urls import BadUrl, authority

from heed_embedded.db import Database

__all__ = ["SqliteJournal", "host_ranges", "import_logs", "records_by_host", "records_by_url"]

Tap = Callable[[str, dict[str, Any]], None]
_IMPORT_BATCH = 5000


def _host(url: Any) -> str:
    try:
        return authority(str(url))
    except BadUrl:
        return ""


def _epoch(value: Any, fallback: float) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return fallback


def _dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, default=str, separators=(",", ":"))


def _request_row(record: dict[str, Any]) -> tuple[str, float, float, str, str]:
    wall = float(record.get("wall") or time.time())
    return (record["host"], _epoch(record.get("t_start"), wall), wall, str(record.get("url", "")), _dumps(record))


def _skip_row(record: dict[str, Any]) -> tuple[str, float, float, str, str, str]:
    wall = float(record.get("wall") or time.time())
    return (record["host"], _epoch(record.get("t"), wall), wall, str(record.get("url", "")),
            str(record.get("reason", "")), _dumps(record))


_INSERT_REQUEST = "INSERT INTO requests (host, t, wall, url, record) VALUES (?, ?, ?, ?, ?)"
_INSERT_SKIP = "INSERT INTO skips (host, t, wall, url, reason, record) VALUES (?, ?, ?, ?, ?, ?)"


class SqliteJournal:
    """Implements ``heed_core.store.Journal`` on ``db``: each record with its host and the wall time
    (``wall``), and ``clock: "simulated"`` when the crawl's clock is a simulated one; ``tap`` sees
    each record once it is written (the log lines and counts of ``heed serve``). A row that cannot
    be written (a full disk) is the turn's failure: the database says so on its own writes too."""

    def __init__(self, db: Database, *, simulated: bool = False, tap: Tap | None = None) -> None:
        self.db = db
        self.simulated = simulated
        self.tap = tap

    def _stamp(self, record: dict[str, Any]) -> dict[str, Any]:
        record = {**record, "host": _host(record.get("url"))}
        record["wall"] = round(time.time(), 3)
        if self.simulated:
            record["clock"] = "simulated"
        return record

    def request(self, record: dict[str, Any]) -> None:
        record = self._stamp(record)
        # Written with the turn's commit, which follows (``stage``), and kept if that is undone.
        self.db.stage("request log", _INSERT_REQUEST, _request_row(record), keep=True)
        if self.tap is not None:
            self.tap("request", record)

    def skip(self, record: dict[str, Any]) -> None:
        record = self._stamp(record)
        self.db.stage("skip log", _INSERT_SKIP, _skip_row(record))
        if self.tap is not None:
            tap = self.tap
            self.db.after_commit(lambda: tap("skip", record))  # (a skip is written with its turn, or not at all)

    def sync(self) -> None:
        """(Each row is committed with its turn: nothing is held back to sync.)"""

    def close(self) -> None:
        """(The database is the caller's to close.)"""


# --- reading: by host and time, by URL ----------------------------------------------------------------

def host_ranges(name: str, port: int | None) -> list[tuple[str, str]]:
    """The ranges of the ``host`` column (``scheme://host:port``) a host name (and a port) covers:
    both schemes, every port unless one is given."""
    out = []
    for scheme in ("http", "https"):
        if port is not None:
            key = f"{scheme}://{name}:{port}"
            out.append((key, key))
        else:
            out.append((f"{scheme}://{name}:", f"{scheme}://{name}:\uffff"))
    return out


def records_by_host(db: Database, table: str, ranges: Sequence[tuple[str, str]], *, since: float | None = None,
                    until: float | None = None, limit: int | None = None) -> Iterator[dict[str, Any]]:
    """The records of ``table`` (``requests`` or ``skips``) whose host lies in one of ``ranges``
    (inclusive), in time order, within [since, until]: an index range each, never a whole table."""
    assert table in ("requests", "skips")
    where = " OR ".join("(host BETWEEN ? AND ?)" for _ in ranges)
    args: list[Any] = [v for r in ranges for v in r]
    sql = f"SELECT record FROM {table} WHERE ({where})"
    if since is not None:
        sql += " AND t >= ?"
        args.append(since)
    if until is not None:
        sql += " AND t <= ?"
        args.append(until)
    sql += " ORDER BY t, id"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    with db.read(f"{table} by host") as c:
        for (rec,) in c.execute(sql, args):
            yield json.loads(rec)


def records_by_url(db: Database, table: str, urls: Sequence[str]) -> list[dict[str, Any]]:
    """The records of ``table`` about any of ``urls``, in the order they were written."""
    assert table in ("requests", "skips")
    marks = ",".join("?" for _ in urls)
    with db.read(f"{table} by url") as c:
        return [json.loads(r) for (r,) in c.execute(f"SELECT record FROM {table} WHERE url IN ({marks}) ORDER BY id",
                                                    tuple(urls))]


# --- a state of an older schema: its log files, read in once ------------------------------------------

def _lines(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line a crash cut in two (the file was appended to, never rewritten)
            if isinstance(rec, dict) and rec.get("url"):
                yield rec


def import_logs(db: Database, requests: Path, skips: Path) -> dict[str, int]:
    """The request and skip logs a state kept as files before the tables existed, into the tables
    (in batches: a big log does not hold the database for long). Returns how many of each."""
    out = {"requests": 0, "skips": 0}
    for table, path, row, sql in (("requests", requests, _request_row, _INSERT_REQUEST),
                                  ("skips", skips, _skip_row, _INSERT_SKIP)):
        if not path.is_file():
            continue
        batch: list[tuple[Any, ...]] = []
        for rec in _lines(path):
            rec.setdefault("host", _host(rec.get("url")))
            batch.append(row(rec))
            if len(batch) >= _IMPORT_BATCH:
                with db.write(f"import {table}") as c:
                    c.executemany(sql, batch)
                out[table] += len(batch)
                batch = []
        if batch:
            with db.write(f"import {table}") as c:
                c.executemany(sql, batch)
            out[table] += len(batch)
    return out

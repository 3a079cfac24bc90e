"""The one SQLite database of a state directory: its schema, its connections and its transactions.

WAL mode (readers never wait for the writer, and the operator's commands read while ``heed serve``
writes), ``synchronous=FULL`` by default (every commit is on disk when it returns: a SIGKILL or a
power cut loses nothing committed), a busy timeout (a writer of another process is waited for,
never an error). Each thread has its own connection; the writers of one process take turns on a
lock of their own, so they queue instead of spinning in SQLite's busy handler.

A write is ``with db.write() as c:`` (``BEGIN IMMEDIATE``: the write lock is taken first, so a
transaction never fails half-way for another writer); nested, it joins the outer transaction, so
a caller can make several ports' writes one atomic commit (the drain of a batch)."""
from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from heed_core.errors import HeedError, ServiceFault, TransientError

__all__ = ["SCHEMA_VERSION", "Database", "translate"]

SCHEMA_VERSION = 1

# Keys: a host is an authority (scheme://host:port), as in DynamoDB's H#<authority>; every record
# that DynamoDB keeps as an item of its own is a row here, so the store's semantics stay key for key.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS manifest (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS hosts (
  host TEXT PRIMARY KEY, v INTEGER NOT NULL, own TEXT, lease REAL NOT NULL DEFAULT 0,
  st TEXT NOT NULL, ob TEXT, expires REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS aux (
  host TEXT NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL, expires REAL NOT NULL,
  PRIMARY KEY (host, kind)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS marks (host TEXT PRIMARY KEY, v INTEGER NOT NULL, sent TEXT NOT NULL,
  expires REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS urls (url TEXT PRIMARY KEY, host TEXT NOT NULL, data TEXT NOT NULL,
  expires REAL NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS urls_host ON urls (host);
CREATE TABLE IF NOT EXISTS sources (id TEXT PRIMARY KEY, data TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS source_reads (id TEXT PRIMARY KEY, data TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS quotas (key TEXT PRIMARY KEY, n INTEGER NOT NULL, expires REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS quota_takers (key TEXT NOT NULL, taker TEXT NOT NULL, granted INTEGER NOT NULL,
  PRIMARY KEY (key, taker)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS blocks (domain TEXT PRIMARY KEY, reason TEXT NOT NULL, at REAL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS purges (domain TEXT PRIMARY KEY, at REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, data TEXT NOT NULL, version INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS domain_index (host TEXT PRIMARY KEY, rname TEXT NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS domain_rname ON domain_index (rname);
CREATE TABLE IF NOT EXISTS texts (vid INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, text TEXT NOT NULL,
  at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS texts_key ON texts (key, vid);
CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY AUTOINCREMENT, rid TEXT NOT NULL,
  detail_type TEXT NOT NULL, record TEXT NOT NULL, at REAL NOT NULL, wall REAL NOT NULL);
CREATE TABLE IF NOT EXISTS queue (
  id INTEGER PRIMARY KEY AUTOINCREMENT, grp TEXT NOT NULL, dedup TEXT NOT NULL, body TEXT NOT NULL,
  sent REAL NOT NULL, visible REAL NOT NULL, receives INTEGER NOT NULL DEFAULT 0, head INTEGER NOT NULL,
  holder TEXT, receipt TEXT, first_received REAL);
CREATE INDEX IF NOT EXISTS queue_ready ON queue (head, visible);
CREATE INDEX IF NOT EXISTS queue_group ON queue (grp, id);
CREATE INDEX IF NOT EXISTS queue_holder ON queue (holder) WHERE holder IS NOT NULL;
CREATE TABLE IF NOT EXISTS dedup (id TEXT PRIMARY KEY, until REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS recoveries (host TEXT PRIMARY KEY, n INTEGER NOT NULL, v INTEGER NOT NULL,
  at REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS dead (
  id INTEGER PRIMARY KEY, grp TEXT NOT NULL, dedup TEXT NOT NULL, body TEXT NOT NULL, sent REAL NOT NULL,
  receives INTEGER NOT NULL, first_received REAL, dead_at REAL NOT NULL, why TEXT NOT NULL);
"""

_BUSY = ("database is locked", "database table is locked", "database is busy")


def translate(exc: sqlite3.Error, what: str) -> HeedError:
    """An SQLite error as Heed's kind of error (raise the result ``from exc``): another writer that
    held the database past the busy timeout is ``TransientError`` (try again later); anything
    else (a full disk, a damaged file, a read-only directory) is ``ServiceFault``: the machine's
    fault, never the work item's."""
    text = str(exc)
    if isinstance(exc, sqlite3.OperationalError) and any(b in text for b in _BUSY):
        return TransientError(f"{what}: {text}")
    return ServiceFault(f"{what}: {type(exc).__name__}: {text}")


class Database:
    """The database at ``path``, opened (and its schema made) on first use, one connection a thread."""

    def __init__(self, path: Path, *, synchronous: str = "FULL", busy_timeout_s: float = 60.0) -> None:
        if synchronous.upper() not in ("FULL", "NORMAL"):
            raise ValueError(f"synchronous must be FULL or NORMAL, not {synchronous!r}")
        self.path = Path(path)
        self.synchronous = synchronous.upper()
        self.busy_timeout_s = busy_timeout_s
        self._local = threading.local()
        self._lock = threading.RLock()  # this process's writers, one at a time
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        self._ready = False

    # --- connections ----------------------------------------------------------------------------
    def conn(self) -> sqlite3.Connection:
        """This thread's connection (autocommit: transactions are explicit)."""
        c: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if c is None:
            try:
                c = sqlite3.connect(str(self.path), timeout=self.busy_timeout_s, isolation_level=None,
                                    check_same_thread=False)
                c.execute("PRAGMA journal_mode=WAL")
                c.execute(f"PRAGMA synchronous={self.synchronous}")
                c.execute("PRAGMA foreign_keys=OFF")
                c.execute("PRAGMA cache_size=-4000")  # 4 MB a connection: many threads, one page cache each
            except sqlite3.Error as exc:
                raise translate(exc, f"open {self.path}") from exc
            self._local.conn = c
            self._local.depth = 0
            with self._all_lock:
                self._all.append(c)
            if not self._ready:
                self._make_schema(c)
        return c

    def _make_schema(self, c: sqlite3.Connection) -> None:
        with self._lock:
            if self._ready:
                return
            try:
                version = int(c.execute("PRAGMA user_version").fetchone()[0])
                if version > SCHEMA_VERSION:
                    raise ServiceFault(f"{self.path}: written by a newer heed (schema {version}; this one knows "
                                       f"{SCHEMA_VERSION})")
                if version < SCHEMA_VERSION:
                    c.execute("BEGIN IMMEDIATE")
                    for statement in _SCHEMA.split(";"):
                        if statement.strip():
                            c.execute(statement)
                    c.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                    c.execute("COMMIT")
            except sqlite3.Error as exc:
                if c.in_transaction:
                    c.execute("ROLLBACK")
                raise translate(exc, f"schema of {self.path}") from exc
            self._ready = True

    def close(self) -> None:
        """Close every connection this object opened (the last one checkpoints the WAL)."""
        with self._all_lock:
            conns, self._all = self._all, []
        for c in conns:
            try:
                c.close()
            except sqlite3.Error:
                pass
        self._local = threading.local()

    # --- transactions ---------------------------------------------------------------------------
    @contextmanager
    def write(self, what: str = "write") -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``), or the enclosing one when
        nested. SQLite's errors leave as ``TransientError``/``ServiceFault`` (``translate``); any
        exception rolls the outermost transaction back."""
        c = self.conn()
        if self._local.depth:
            self._local.depth += 1
            try:
                yield c
            except sqlite3.Error as exc:
                raise translate(exc, what) from exc
            finally:
                self._local.depth -= 1
            return
        with self._lock:
            try:
                c.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise translate(exc, what) from exc
            self._local.depth = 1
            try:
                yield c
                c.execute("COMMIT")
            except BaseException as exc:
                if c.in_transaction:
                    try:
                        c.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass
                if isinstance(exc, sqlite3.Error):
                    raise translate(exc, what) from exc
                raise
            finally:
                self._local.depth = 0

    @contextmanager
    def read(self, what: str = "read") -> Iterator[sqlite3.Connection]:
        """A consistent snapshot for several SELECTs (inside a write: that transaction)."""
        c = self.conn()
        if self._local.depth or c.in_transaction:
            try:
                yield c
            except sqlite3.Error as exc:
                raise translate(exc, what) from exc
            return
        try:
            c.execute("BEGIN")
            try:
                yield c
            finally:
                if c.in_transaction:
                    c.execute("COMMIT")
        except sqlite3.Error as exc:
            raise translate(exc, what) from exc

    def in_write(self) -> bool:
        """True inside ``write()`` on this thread."""
        return bool(getattr(self._local, "depth", 0))

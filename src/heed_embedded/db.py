"""The one SQLite database of a state directory: its schema (``schema``), its connections and its
transactions.

WAL mode (readers never wait for the writer, and the operator's commands read while ``heed serve``
writes), ``synchronous=FULL`` by default (every commit is on disk when it returns: a SIGKILL or a
power cut loses nothing committed; the wait for the disk comes after the write lock is let go,
one ``fsync`` shared by the commits that end together), a busy timeout (a writer of another
process is waited for, never an error). A thread reads and writes on a connection it holds
alone; the writers of one process take turns on a lock of their own, so they queue instead of
spinning in SQLite's busy handler. A thread that waits on the network, or has nothing to do,
gives its connection back (``put_back``) to the process's idle ones, and takes one of them when
it next reads or writes: hundreds of turns waiting on slow sites share the few connections of
the turns at work, each with its statements prepared and its pages cached, where a connection a
thread (opened, its schema read, its statements prepared, for every new thread) cost
milliseconds a turn.

A write is ``with db.write() as c:`` (``BEGIN IMMEDIATE``: the write lock is taken first, so a
transaction never fails half-way for another writer); nested, it joins the outer transaction, so
a caller can make several ports' writes one atomic commit. In a ``batch`` the ports' writes that
need no answer from the database are staged instead (``heed_embedded.staged``: a turn's writes
after its request, made ready with no lock held) and written together at the batch's flush."""
from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from heed_core.errors import ConfigError, HeedError, ServiceFault, TransientError

from heed_embedded.groupsync import GroupSync
from heed_embedded.groupwrite import WriteGroups
from heed_embedded.schema import SCHEMA, SCHEMA_VERSION, upgrade
from heed_embedded.staged import Staging

__all__ = ["SCHEMA_VERSION", "Database", "translate"]

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


MAX_IDLE_CONNECTIONS = 32  # connections kept open for the next thread that needs one; more are closed


class Database(Staging):
    """The database at ``path``, opened (and its schema made) on first use: a connection a thread
    while it reads or writes, taken from the idle ones (``put_back``) or opened."""

    def __init__(self, path: Path, *, synchronous: str = "FULL", busy_timeout_s: float = 60.0) -> None:
        if synchronous.upper() not in ("FULL", "NORMAL"):
            raise ValueError(f"synchronous must be FULL or NORMAL, not {synchronous!r}")
        self.path = Path(path)
        self.synchronous = synchronous.upper()
        self.busy_timeout_s = busy_timeout_s
        self._local = threading.local()
        self._lock = threading.RLock()  # this process's writers, one at a time
        self._all: list[sqlite3.Connection] = []
        self._idle: list[sqlite3.Connection] = []  # open, no transaction, no thread's (``put_back``)
        self._all_lock = threading.Lock()
        self._ready = False
        self._wlock: tuple[int | None, int] = (None, 0)  # the writer lock file's descriptor, and whose
        self._disk = GroupSync(f"{self.path}-wal")  # durable commits wait for the disk here, together
        self.groups = WriteGroups(self, translate)  # small writes of this process's threads, one transaction for many

    # --- connections ----------------------------------------------------------------------------
    def conn(self) -> sqlite3.Connection:
        """This thread's connection (autocommit: transactions are explicit): the one it holds, else
        an idle one, else a new one."""
        c: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if c is None:
            with self._all_lock:
                c = self._idle.pop() if self._idle else None
            if c is None:
                try:
                    c = self._open_connection()
                except sqlite3.Error as exc:
                    raise translate(exc, f"open {self.path}") from exc
                with self._all_lock:
                    self._all.append(c)
            self._local.conn = c
            if not hasattr(self._local, "depth"):
                self._local.depth = 0
                self._local.open = False
            if not self._ready:
                self._make_schema(c)
        return c

    def put_back(self) -> None:
        """This thread's connection to the idle ones, unless a transaction is open on it (the
        thread is about to wait on the network, or has nothing to do): the next thread that
        reads or writes takes it. More than ``MAX_IDLE_CONNECTIONS`` idle are closed."""
        local = self._local
        c: sqlite3.Connection | None = getattr(local, "conn", None)
        if c is None or getattr(local, "open", False) or getattr(local, "depth", 0) or c.in_transaction:
            return
        del local.conn
        with self._all_lock:
            if len(self._idle) < MAX_IDLE_CONNECTIONS:
                self._idle.append(c)
                return
            self._all = [x for x in self._all if x is not c]
        try:
            c.close()
        except sqlite3.Error:
            pass

    def _open_connection(self) -> sqlite3.Connection:
        """A connection set up for this state. Turning an older database's rollback journal to
        WAL needs its exclusive lock, and SQLite answers "locked" at once, without waiting the busy
        timeout, where two connections would otherwise wait for each other (several processes
        opening one older state together): the set-up is tried again until the busy timeout."""
        deadline = time.monotonic() + self.busy_timeout_s
        pause = 0.005
        while True:
            c = sqlite3.connect(str(self.path), timeout=self.busy_timeout_s, isolation_level=None,
                                check_same_thread=False)
            try:
                self._set_up(c)
                return c
            except sqlite3.OperationalError as exc:
                c.close()
                if not any(b in str(exc) for b in _BUSY) or time.monotonic() + pause > deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.25)

    @staticmethod
    def _set_up(c: sqlite3.Connection) -> None:
        # A new database: pages that retention frees go back to the file system (PRAGMA
        # incremental_vacuum after each prune), which only a database made so can do
        # without a VACUUM; set before anything is written, WAL's first page included.
        # Only there: on a database with tables the pragma would still write its header (one
        # more write for every connection a thread opens, and a state a newer Heed wrote
        # changed when it is refused).
        if c.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is None:
            c.execute("PRAGMA auto_vacuum=INCREMENTAL")
        c.execute("PRAGMA journal_mode=WAL")
        # Commits never wait for the disk under the write lock: a durable one waits after
        # it, in ``GroupSync`` (``synchronous=FULL``'s one wait, shared by the commits
        # that end together); the checkpoints keep NORMAL's syncs.
        c.execute("PRAGMA synchronous=NORMAL")
        c.execute("PRAGMA foreign_keys=OFF")
        c.execute("PRAGMA cache_size=-4000")  # 4 MB a connection: many threads, one page cache each

    def _make_schema(self, c: sqlite3.Connection) -> None:
        with self._lock:
            if self._ready:
                return
            try:
                version = int(c.execute("PRAGMA user_version").fetchone()[0])
                if version > SCHEMA_VERSION:
                    # Upgrades go one way: a state a newer heed migrated is refused, never half-read.
                    raise ConfigError(f"{self.path}: written by a newer heed (schema {version}; this one reads up "
                                      f"to {SCHEMA_VERSION}): run that heed or a newer one, or a backup of this state "
                                      "made before the upgrade")
                if version < SCHEMA_VERSION:
                    c.execute("BEGIN IMMEDIATE")
                    upgrade(c)
                    for statement in SCHEMA.split(";"):
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
            conns, self._all, self._idle = self._all, [], []
        for c in conns:
            try:
                c.close()
            except sqlite3.Error:
                pass
        self._local = threading.local()
        self._disk.close()
        fd, pid = self._wlock
        if fd is not None and pid == os.getpid():
            os.close(fd)
        self._wlock = (None, 0)

    # --- transactions ---------------------------------------------------------------------------
    @contextmanager
    def write(self, what: str = "write", *, durable: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``); nested in another write,
        part of it; in a ``batch`` whose transaction is open, a savepoint of it (each of the
        batch's writes is kept or undone whole, alone), and the outermost write is not
        committed at its end but with the batch. SQLite's
        errors leave as ``TransientError``/``ServiceFault`` (``translate``). ``durable=False``:
        a transaction begun by this write is committed without waiting for the disk
        (``synchronous=NORMAL``: it survives the process killed, as every commit does in WAL
        mode, not a power cut); a durable write that joins it commits it first and goes on in a
        durable one."""
        c = self.conn()
        local = self._local
        if getattr(local, "open", False):
            if durable and local.sync != self.synchronous and not local.depth:
                # The pending non-durable writes committed, then a durable transaction.
                try:
                    self._commit(c)
                except sqlite3.Error as exc:
                    self._rollback(c)
                    raise translate(exc, what) from exc
                try:
                    self._begin(c, what, durable=True)
                except BaseException:
                    self._release()
                    raise
            if local.depth:
                # Inside another write: part of that unit (kept or undone with it), as a nested
                # write always was.
                local.depth += 1
                try:
                    yield c
                except sqlite3.Error as exc:
                    raise translate(exc, what) from exc
                finally:
                    local.depth -= 1
                return
            # A unit of its own in a batch's open transaction: a savepoint, undone alone.
            local.sp = getattr(local, "sp", 0) + 1
            name = f"w{local.sp}"
            try:
                c.execute(f"SAVEPOINT {name}")
            except sqlite3.Error as exc:
                raise translate(exc, what) from exc
            local.depth = 1
            try:
                yield c
                c.execute(f"RELEASE {name}")
            except BaseException as exc:
                try:
                    c.execute(f"ROLLBACK TO {name}")
                    c.execute(f"RELEASE {name}")
                except sqlite3.Error:
                    pass
                if isinstance(exc, sqlite3.Error):
                    raise translate(exc, what) from exc
                raise
            finally:
                local.depth = 0
            return
        self._flush_staged(what)  # what the batch staged goes first, committed on its own
        self._acquire()
        try:
            self._begin(c, what, durable=durable)
        except BaseException:
            self._release()
            raise
        local.depth = 1
        try:
            yield c
        except BaseException as exc:
            local.depth = 0
            self._rollback(c)
            if isinstance(exc, sqlite3.Error):
                raise translate(exc, what) from exc
            raise
        local.depth = 0
        if not getattr(local, "batching", 0):
            self._end(c, what)

    def _acquire(self) -> None:
        """This process's writer lock, then the directory's (``heed.db-wlock``, an ``flock``):
        the writers of ``heed serve``'s processes wait in the kernel and go on the moment the
        lock is free, where SQLite's busy handler would poll with sleeps of up to 100 ms while
        the database stays idle. (An operator's command takes only SQLite's own lock: it waits
        in the busy handler, as before.)"""
        self._lock.acquire()
        try:
            fd = self._wlock_fd()
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            self._lock.release()
            raise

    def _release(self) -> None:
        try:
            fd = self._wlock_fd()
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            self._lock.release()

    def _wlock_fd(self) -> int | None:
        pid = os.getpid()
        if self._wlock[1] != pid:  # opened by this process (a forked child opens its own)
            try:
                fd = os.open(f"{self.path}-wlock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except OSError:
                fd = None  # a read-only directory: SQLite's lock alone
            self._wlock = (fd, pid)
        return self._wlock[0]

    def _begin(self, c: sqlite3.Connection, what: str, *, durable: bool) -> None:
        """Open this thread's transaction (its lock held by the caller)."""
        sync = self.synchronous if durable else "NORMAL"
        try:
            c.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise translate(exc, what) from exc
        self._local.open = True
        self._local.sync = sync

    def _commit(self, c: sqlite3.Connection) -> None:
        c.execute("COMMIT")
        self._local.open = False

    def _end(self, c: sqlite3.Connection, what: str, *, wait_for_disk: bool = True) -> None:
        """Commit this thread's transaction and let the next writer in (rolled back if the commit
        fails), then wait for the disk when it is durable, unless told not to (``_on_disk``)."""
        durable = self._local.sync == "FULL"
        try:
            self._commit(c)
        except sqlite3.Error as exc:
            self._rollback(c)
            raise translate(exc, what) from exc
        self._release()
        if durable and wait_for_disk:
            self._on_disk(what)
        after, self._local.after = getattr(self._local, "after", []), []
        for fn in after:
            fn()

    def _on_disk(self, what: str) -> None:
        """Return once this thread's commits are on disk (``GroupSync``)."""
        try:
            self._disk.sync()
        except OSError as exc:
            raise ServiceFault(f"{what}: committed, but the disk did not take it: {exc}") from exc

    def _rollback(self, c: sqlite3.Connection) -> None:
        if not getattr(self._local, "open", False):
            return
        self._local.open = False
        self._local.after = []
        try:
            if c.in_transaction:
                c.execute("ROLLBACK")
        except sqlite3.Error:
            pass
        finally:
            self._release()

    @contextmanager
    def batch(self, what: str = "batch") -> Iterator[None]:
        """The writes made inside, on this thread, in as few transactions as can be: those that
        can be are staged (``later``) and written together at the end (or at ``flush``, as before
        a request, or before a read); a write that cannot begins a transaction, committed at the
        end: one commit and one wait for the disk instead of one for each. Each write is still kept
        or undone whole (a savepoint). When the block raises an ``Exception``, what its writes
        did is committed all the same (each was whole); a ``BaseException`` (the process going
        down) commits nothing more."""
        self.conn()
        local = self._local
        local.batching = getattr(local, "batching", 0) + 1
        if local.batching == 1:
            local.staged, local.after = [], []
        try:
            yield
        except Exception:
            self._finish(what)
            raise
        except BaseException:
            local.staged, local.after = [], []
            self._rollback(self.conn())
            raise
        else:
            self._finish(what)
        finally:
            local.batching -= 1

    def _finish(self, what: str) -> None:
        if self._local.batching == 1 and not self._local.depth:
            self.flush(what)

    def flush(self, what: str = "flush") -> None:
        """Commit the writes a ``batch`` holds so far (before a request: what it decided is on
        disk before the request leaves)."""
        self._flush_staged(what)
        local = self._local
        if getattr(local, "open", False) and not getattr(local, "depth", 0):
            self._end(self.conn(), what)

    @contextmanager
    def read(self, what: str = "read") -> Iterator[sqlite3.Connection]:
        """A consistent snapshot for several SELECTs (inside a write: that transaction); what this
        thread staged is written first (a turn reads its own writes)."""
        self._flush_staged(what)
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

    def query(self, sql: str, params: Sequence[Any] = (), what: str = "read") -> list[Any]:
        """The rows of one statement: its own snapshot (SQLite's autocommit: no ``BEGIN`` and
        ``COMMIT`` around it, two calls into SQLite fewer than ``read``), or, inside a write,
        that transaction's."""
        self._flush_staged(what)
        c = self.conn()
        try:
            return c.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise translate(exc, what) from exc

    def in_write(self) -> bool:
        """True inside ``write()`` (or a ``batch`` with writes pending) on this thread."""
        return bool(getattr(self._local, "open", False))

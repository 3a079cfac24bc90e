"""Small writes that a process's threads ask for at the same time, made in one transaction
(``WriteGroups``: a group commit of the marks of the requests about to leave, with their claims).
Apart from ``db`` so that each file stays small enough to read whole (issue 36)."""
from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from heed_core.errors import HeedError, ServiceFault

__all__ = ["WriteGroups"]


class _Database(Protocol):
    """What of ``heed_embedded.db.Database`` a group uses (its lock, its transactions)."""

    _local: threading.local

    def conn(self) -> sqlite3.Connection: ...
    def in_write(self) -> bool: ...
    def write(self, what: str = ..., *, durable: bool = ...) -> AbstractContextManager[sqlite3.Connection]: ...
    def _acquire(self) -> None: ...
    def _release(self) -> None: ...
    def _begin(self, c: sqlite3.Connection, what: str, *, durable: bool) -> None: ...
    def _rollback(self, c: sqlite3.Connection) -> None: ...
    def _end(self, c: sqlite3.Connection, what: str, *, wait_for_disk: bool = ...) -> None: ...
    def _on_disk(self, what: str) -> None: ...


class _Ask[T]:
    __slots__ = ("done", "durable", "error", "lead", "plain", "value", "work")

    def __init__(self, work: Callable[[sqlite3.Connection], T], durable: bool, plain: bool) -> None:
        self.work, self.durable, self.plain = work, durable, plain
        self.done = threading.Event()
        self.lead = False  # set with ``done``: the group's leader handed on its role, nothing was written
        self.value: Any = None
        self.error: BaseException | None = None

    def outcome(self) -> T:
        if self.error is not None:
            raise self.error
        value: T = self.value
        return value


class WriteGroups:
    """The database's write lock is taken once for the small writes that queue for it together
    in this process: the first to ask leads (it waits for the lock; the asks that come meanwhile
    join it), writes every ask in one transaction, each one whole or not at all (a savepoint,
    unless the ask is ``plain``: one statement, which only a failing database fails), commits,
    and hands the lead to the first ask that came after. Each thread goes on once its write is
    committed, or with the error of its own write; a ``durable`` one once it is on disk too (its
    own wait, shared by all that end together: the group's others do not wait for it). One transaction
    for many: the lock is taken, handed between processes and committed once, where each of the
    writes had its own (at 1,000 hosts, the marks of the requests about to leave were a third of
    the lock's takings). An ask's ``work`` runs on the leader's thread: it writes on the
    connection it is given and keeps nothing in its own thread's state."""

    def __init__(self, db: _Database, translate: Callable[[sqlite3.Error, str], HeedError]) -> None:
        self.db = db
        self.translate = translate  # an SQLite error as Heed's (``heed_embedded.db.translate``)
        self._mutex = threading.Lock()
        self._asks: list[_Ask[Any]] = []
        self._leading = False

    def write[T](self, what: str, work: Callable[[sqlite3.Connection], T], *, durable: bool = False,
                 plain: bool = False) -> T:
        """``work(c)`` written in a transaction shared with the asks of this process's other
        threads; its value, or its error. In a transaction of this thread's own: part of it."""
        if self.db.in_write():
            with self.db.write(what, durable=durable) as c:
                return work(c)
        ask: _Ask[T] = _Ask(work, durable, plain)
        with self._mutex:
            self._asks.append(ask)
            lead = not self._leading
            self._leading = True
        if not lead:
            ask.done.wait()
            if ask.lead:
                ask.done.clear()
                self._lead(what, ask)
        else:
            self._lead(what, ask)
        value = ask.outcome()
        if durable:
            # Each durable ask's thread waits for the disk itself, after the group's commit (one
            # ``fsync`` shared by them all): the others of the group go on at once.
            self.db._on_disk(what)
        return value

    def _lead(self, what: str, own: _Ask[Any]) -> None:
        db, asks = self.db, []
        try:
            db._acquire()
            with self._mutex:
                asks, self._asks = self._asks, []  # every ask that came while the lock was waited for
            self._write(what, asks)
        except BaseException as exc:
            with self._mutex:
                if own in self._asks:  # (the lock never came: the others wait for the next leader)
                    self._asks.remove(own)
                    asks.append(own)
            for ask in asks:
                if ask.error is None:
                    ask.error = exc
            raise
        finally:
            with self._mutex:
                if self._asks:
                    nxt = self._asks[0]
                    nxt.lead = True  # (it is still waiting: it leads the next group)
                    nxt.done.set()
                else:
                    self._leading = False
            for ask in asks:
                ask.done.set()

    def _write(self, what: str, asks: list[_Ask[Any]]) -> None:
        """The asks in one transaction (the lock held), committed and the lock let go (a durable
        ask's thread waits for the disk itself)."""
        db = self.db
        try:
            c = db.conn()
            db._begin(c, what, durable=any(a.durable for a in asks))
        except BaseException:
            db._release()
            raise
        try:
            self._each(what, c, asks)
        except BaseException:
            db._rollback(c)  # (the lock let go)
            raise
        db._end(c, what, wait_for_disk=False)  # committed and the lock let go (or rolled back)

    def _each(self, what: str, c: sqlite3.Connection, asks: list[_Ask[Any]]) -> None:
        local = self.db._local
        for ask in asks:
            local.depth = 1  # a write the work makes is part of its ask
            try:
                if ask.plain:
                    ask.value = ask.work(c)
                    continue
                c.execute("SAVEPOINT g")
                try:
                    ask.value = ask.work(c)
                    c.execute("RELEASE g")
                except BaseException:
                    c.execute("ROLLBACK TO g")
                    c.execute("RELEASE g")
                    raise
            except sqlite3.Error as exc:
                ask.error = self.translate(exc, what)
            except Exception as exc:  # the ask's own failure (a claim lost): its thread's to raise
                ask.error = exc
            finally:
                local.depth = 0
            if not c.in_transaction:
                raise ServiceFault(f"{what}: the database ended the transaction") from ask.error
        failed = next((a.error for a in asks if a.plain and a.error is not None), None)
        if failed is not None:
            raise failed  # a plain write failed: the database did, and the transaction goes with it

"""A batch's writes staged: made ready while the turn goes on, written together at the batch's
flush (``Database.later``, ``stage``, ``unit``, ``after_commit``).

A turn's writes after its request (the request's record, the host's item, the skips, the outbox's
drain, the hides and acknowledgements of its tokens) are each a small piece of prepared work: its
statements and their values, made while no lock is held. At the batch's flush they are written as
one unit, with the units and marks other threads of the process ask for meanwhile, in one
transaction (``groupwrite.WriteGroups``): the database's write lock is held for SQL alone, never
for the Python that decides what to write, and it is taken, committed and handed on once for many
turns. A unit is whole or not at all: a host's item that changed under the turn (its conditional
write finds another version: ``Conflict``) undoes the unit, and only the record of the request
(``keep``: the request was made) is written. What the turn's thread reads next sees its staged
writes (a read flushes them first); a write that cannot be staged (one that needs its result:
a kept text's version is its row's id, a cap's grant is read and written) flushes them and goes
on in a transaction of its own, and what the turn writes after it joins that, as before.
Apart from ``db`` so that each file stays small enough to read whole (issue 36)."""
from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from heed_core.errors import TransientError

from heed_embedded.groupwrite import WriteGroups

__all__ = ["Conflict", "Staging", "Work", "write_staged"]

Work = Callable[[sqlite3.Connection], None]  # a staged write: its statements, run on the unit's connection


class Conflict(TransientError):
    """A staged conditional write found the row changed (another version of a host's item): the
    unit it belongs to is undone."""


def run_one(sql: str, params: Sequence[Any], c: sqlite3.Connection) -> None:
    c.execute(sql, params)


def run_many(sql: str, rows: Sequence[Sequence[Any]], c: sqlite3.Connection) -> None:
    c.executemany(sql, rows)


class Staging:
    """``Database``'s staged writes (its base class): each thread's unit in ``_local.staged``,
    what waits for its commit in ``_local.after``."""

    _local: threading.local
    synchronous: str
    if TYPE_CHECKING:
        def write(self, what: str = ..., *, durable: bool = ...) -> AbstractContextManager[sqlite3.Connection]: ...

    def can_stage(self) -> bool:
        """True in a ``batch`` with no transaction open on this thread: a write is staged."""
        local = self._local
        return bool(getattr(local, "batching", 0)) and not getattr(local, "open", False) \
            and not getattr(local, "depth", 0)

    def stage(self, what: str, sql: str, params: Sequence[Any], *, many: bool = False, keep: bool = False) -> None:
        """One statement (``many``: over each of ``params``' rows) written with this thread's
        staged unit (``later``)."""
        self.later(what, partial(run_many if many else run_one, sql, params), keep=keep)

    def later(self, what: str, work: Work, *, keep: bool = False) -> None:
        """``work(c)`` written with the batch's staged unit, at its flush (``heed_embedded.staged``);
        outside a batch, or with its transaction open, written now. ``keep``: written even when
        the unit is undone (a request's record: the request was made)."""
        if self.can_stage():
            self._local.staged.append((work, keep))
            return
        with self.write(what) as c:
            work(c)

    def after_commit(self, fn: Callable[[], None]) -> None:
        """``fn()`` once what this thread wrote or staged is committed (now, when nothing waits)."""
        local = self._local
        if getattr(local, "batching", 0) and (getattr(local, "staged", None) or getattr(local, "open", False)):
            local.after.append(fn)
        else:
            fn()

    @contextmanager
    def unit(self, what: str) -> Iterator[None]:
        """Writes kept or undone together: staged in a batch (an error undoes what was staged
        inside), else one ``write``."""
        if not self.can_stage():
            with self.write(what):
                yield
            return
        local = self._local
        n, m = len(local.staged), len(local.after)
        try:
            yield
        except BaseException:
            del local.staged[n:], local.after[m:]
            raise

    def _flush_staged(self, what: str) -> None:
        local = self._local
        if getattr(local, "staged", None) and not getattr(local, "open", False) and not getattr(local, "depth", 0):
            write_staged(self, what)  # type: ignore[arg-type]


class _Database(Protocol):
    """What of ``heed_embedded.db.Database`` a flush uses."""

    _local: threading.local
    synchronous: str
    groups: WriteGroups


def write_staged(db: _Database, what: str) -> None:
    """Write this thread's staged unit (``db._local.staged``), then run what waited for its commit.
    Its record of a request survives a unit that is undone: written alone, before the error."""
    local = db._local
    items: list[tuple[Work, bool]] = local.staged
    after: list[Callable[[], None]] = local.after
    local.staged, local.after = [], []
    if not items:
        for fn in after:
            fn()
        return

    def unit(c: sqlite3.Connection) -> None:
        for work, _keep in items:
            work(c)

    durable = db.synchronous == "FULL"
    try:
        db.groups.write(what, unit, durable=durable)
    except Exception:
        kept = [work for work, keep in items if keep]
        if kept:
            try:
                db.groups.write(f"{what}: the request's record", lambda c: [w(c) for w in kept], durable=durable)
            except Exception:  # noqa: BLE001 - the database itself fails: the first error says why
                pass
        raise
    for fn in after:
        fn()

"""Writes made together. The small writes of a process's threads (heed_embedded.groupwrite): the
asks that queue while the write lock is taken are written in one transaction, each one whole or
not at all, and each thread goes on with its own value or its own error. A row a thread stages
in a batch (``Database.stage``: a turn's record of its request) is written before its next write
of its own, or at the batch's end (tests/unit/test_embedded_staged.py: a turn's staged unit)."""
from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from heed_core.errors import ServiceFault

from heed_embedded.db import Database


class Boom(Exception):
    pass


def _db(tmp_path: Path) -> Database:
    db = Database(tmp_path / "heed.db")
    with db.write("table") as c:
        c.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)")
    return db


def _begun(db: Database, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    begun: list[str] = []
    begin = Database._begin

    def begins(self: Database, c: sqlite3.Connection, what: str, *, durable: bool) -> None:
        begun.append(what)
        begin(self, c, what, durable=durable)
    monkeypatch.setattr(Database, "_begin", begins)
    return begun


def _ask_while_the_lock_is_held(db: Database, works: list[tuple[str, Any, bool]]) -> dict[str, Any]:
    """Each (name, work, plain) asked on a thread of its own while another writer holds the lock;
    the lock let go once all are waiting. Each name's value or error."""
    out: dict[str, Any] = {}
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with db.write("other"):
            holding.set()
            release.wait(5)

    def ask(name: str, work: Any, plain: bool) -> None:
        try:
            out[name] = db.groups.write("mark", work, plain=plain)
        except Exception as exc:
            out[name] = exc
    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(5)
    threads = [threading.Thread(target=ask, args=w) for w in works]
    for t in threads:
        t.start()
        time.sleep(0.02)  # (each in turn: the first leads, the others join it)
    release.set()
    for t in [holder, *threads]:
        t.join(10)
    return out


def _insert(k: str, v: int) -> Any:
    def work(c: sqlite3.Connection) -> int:
        c.execute("INSERT INTO t (k, v) VALUES (?, ?)", (k, v))
        return v
    return work


def test_the_writes_asked_while_the_lock_is_taken_are_one_transaction(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a database whose write lock another writer holds, and a record of transactions begun
    db = _db(tmp_path)
    begun = _begun(db, monkeypatch)
    # WHEN five threads ask for a small write each meanwhile
    out = _ask_while_the_lock_is_held(db, [(f"k{i}", _insert(f"k{i}", i), True) for i in range(5)])
    # THEN each has its own value, all five rows are there, written in one transaction after the
    # other writer's
    assert out == {f"k{i}": i for i in range(5)}
    assert db.query("SELECT k, v FROM t ORDER BY k") == [(f"k{i}", i) for i in range(5)]
    assert begun == ["other", "mark"]


def test_an_ask_that_fails_is_undone_alone_and_its_thread_gets_its_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a write that inserts a row and then fails (a claim lost, say), asked with two others
    db = _db(tmp_path)
    begun = _begun(db, monkeypatch)

    def failing(c: sqlite3.Connection) -> None:
        c.execute("INSERT INTO t (k, v) VALUES ('lost', 0)")
        with db.write("nested") as n:  # a write inside the ask is part of it
            n.execute("INSERT INTO t (k, v) VALUES ('lost too', 0)")
        raise Boom("taken")
    # WHEN the three are written together
    out = _ask_while_the_lock_is_held(db, [("a", _insert("a", 1), False), ("lost", failing, False),
                                           ("b", _insert("b", 2), False)])
    # THEN the failing one's rows are undone and its thread has its error; the others are kept
    assert isinstance(out["lost"], Boom)
    assert (out["a"], out["b"]) == (1, 2)
    assert db.query("SELECT k FROM t ORDER BY k") == [("a",), ("b",)]
    assert begun == ["other", "mark"]


def test_a_plain_write_the_database_refuses_fails_the_whole_group(tmp_path: Path) -> None:
    # GIVEN a plain write (one statement) that the database refuses, asked with two others
    db = _db(tmp_path)
    with db.write("seed") as c:
        c.execute("INSERT INTO t (k, v) VALUES ('taken', 0)")
    # WHEN the three are written together
    out = _ask_while_the_lock_is_held(db, [("a", _insert("a", 1), True), ("dup", _insert("taken", 9), True),
                                           ("b", _insert("b", 2), True)])
    # THEN nothing of the group is written and every thread has the database's error, as Heed's
    assert all(isinstance(out[k], ServiceFault) for k in ("a", "dup", "b")), out
    assert db.query("SELECT k FROM t ORDER BY k") == [("taken",)]
    # AND the next ask leads a group of its own and is written
    assert db.groups.write("mark", _insert("c", 3), plain=True) == 3
    assert db.query("SELECT k FROM t ORDER BY k") == [("c",), ("taken",)]


def test_an_ask_inside_a_transaction_of_its_own_thread_is_part_of_it(tmp_path: Path) -> None:
    # GIVEN a thread with a write transaction open
    db = _db(tmp_path)
    with pytest.raises(Boom), db.write("outer") as c:
        c.execute("INSERT INTO t (k, v) VALUES ('outer', 0)")
        # WHEN it asks for a small write, then its transaction fails
        assert db.groups.write("mark", _insert("inner", 1)) == 1
        raise Boom("undone")
    # THEN the ask was part of that transaction: undone with it (it did not wait for itself)
    assert db.query("SELECT k FROM t") == []


_ROW = "INSERT INTO t (k, v) VALUES (?, ?)"


@pytest.fixture
def counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Database, list[str]]:
    """A database, and the transactions begun on it."""
    db = _db(tmp_path)
    return db, _begun(db, monkeypatch)


def test_a_staged_row_is_written_before_the_batchs_next_write_of_its_own(counted: tuple[Database, list[str]]) -> None:
    # GIVEN a batch on one thread, and a record of the transactions begun
    db, begun = counted
    with db.batch("turns"):
        # WHEN it stages a row, then makes a write that cannot be staged (one that reads in it)
        db.stage("request log", _ROW, ("staged", 1))
        staged_alone = list(begun)
        with db.write("write host") as c:
            first = c.execute("SELECT k FROM t").fetchall()
            c.execute(_ROW, ("host", 2))
    # THEN staging began no transaction; the write found the staged row committed before it
    assert staged_alone == []
    assert first == [("staged",)]
    assert begun == ["write host", "write host"]
    assert db.query("SELECT k FROM t ORDER BY k") == [("host",), ("staged",)]


def test_a_staged_row_with_no_write_after_it_is_written_at_the_batchs_end_and_at_once_outside_one(
        counted: tuple[Database, list[str]]) -> None:
    # GIVEN a batch that stages a row and writes nothing after it
    db, begun = counted
    with db.batch("turns"):
        db.stage("request log", _ROW, ("alone", 1))
    # THEN the batch's end wrote it, in one transaction of its own
    assert db.query("SELECT k FROM t") == [("alone",)]
    assert len(begun) == 1
    # AND outside a batch a staged row is written at once
    db.stage("request log", _ROW, ("now", 2))
    assert db.query("SELECT k FROM t ORDER BY k") == [("alone",), ("now",)]


def test_a_batch_the_process_leaves_drops_its_staged_rows_and_the_next_batch_does_not_write_them(
        tmp_path: Path) -> None:
    # GIVEN a batch that stages a row and is left by a BaseException (the process going down)
    db = _db(tmp_path)
    with pytest.raises(KeyboardInterrupt), db.batch("turns"):
        db.stage("request log", _ROW, ("lost", 1))
        raise KeyboardInterrupt
    # WHEN the thread's next batch writes
    with db.batch("turns"), db.write("write host") as c:
        c.execute(_ROW, ("next", 2))
    # THEN the dropped row is nowhere (nothing more is committed once the process is going down)
    assert db.query("SELECT k FROM t") == [("next",)]


def test_in_a_group_only_the_durable_asks_wait_for_the_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a disk whose wait holds until it is let go, and a durable ask (a claim) and a plain
    # one (a mark) written together
    db = _db(tmp_path)
    disk_free, waited = threading.Event(), threading.Event()

    def slow_disk() -> None:
        waited.set()
        assert disk_free.wait(5)
    monkeypatch.setattr(db._disk, "sync", slow_disk)
    out: dict[str, Any] = {}
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with db.write("other", durable=False):
            holding.set()
            release.wait(5)

    def ask(name: str, durable: bool) -> None:
        out[name] = db.groups.write("mark", _insert(name, 1), durable=durable, plain=not durable)
    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(5)
    durable = threading.Thread(target=ask, args=("claim", True))
    plain = threading.Thread(target=ask, args=("mark", False))
    durable.start()
    time.sleep(0.02)
    plain.start()
    time.sleep(0.02)
    release.set()
    # WHEN the group is committed and the disk is still busy
    plain.join(5)
    # THEN the plain ask's thread has gone on; the durable one waits for the disk, then goes on
    assert out == {"mark": 1} and not plain.is_alive()
    assert waited.wait(5) and durable.is_alive()
    disk_free.set()
    durable.join(5)
    assert out == {"mark": 1, "claim": 1}
    holder.join(5)


def test_a_leader_that_cannot_take_the_lock_fails_alone_and_the_next_ask_leads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a leader whose taking of the lock fails once another thread's ask has joined it
    db = _db(tmp_path)
    joined = threading.Event()
    acquire = Database._acquire
    calls: list[int] = []

    def failing_once(self: Database) -> None:
        calls.append(threading.get_ident())
        if len(calls) == 1:
            assert joined.wait(5)
            time.sleep(0.02)  # (the other ask is in the queue by now)
            raise OSError("no lock")
        acquire(self)
    monkeypatch.setattr(Database, "_acquire", failing_once)
    out: dict[str, Any] = {}

    def ask(name: str) -> None:
        try:
            out[name] = db.groups.write("mark", _insert(name, 1), plain=True)
        except Exception as exc:
            out[name] = exc
    leader = threading.Thread(target=ask, args=("leader",))
    leader.start()
    while not calls:
        time.sleep(0.005)
    other = threading.Thread(target=ask, args=("other",))
    other.start()
    joined.set()
    # WHEN both are done
    leader.join(5)
    other.join(5)
    # THEN the leader has its error and wrote nothing; the other led a group of its own
    assert isinstance(out["leader"], OSError) and out["other"] == 1
    assert db.query("SELECT k FROM t") == [("other",)]

"""A turn's writes staged (heed_embedded.staged): in a batch, the writes after a request (its
record, the host's item, the events, the URL records and drain marks, the hides and
acknowledgements) are made ready with no lock held and written together at the batch's flush, one
transaction; a host's item that changed under the turn undoes them all but the request's record;
what waits for the commit (the loop's wake-ups, the log's taps) runs once it is committed."""
from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from heed_core.errors import TransientError
from heed_core.hoststate import DrainMark
from heed_core.work import UrlRecord

from heed_embedded.db import Database
from heed_embedded.journal import SqliteJournal
from heed_embedded.queue import WorkQueue
from heed_embedded.results import SqliteResults
from heed_embedded.store import SqliteStore

HOST = "http://a.test"


class Parts:
    def __init__(self, tmp_path: Path) -> None:
        self.db = Database(tmp_path / "heed.db")
        self.sent: list[tuple[int, int]] = []  # (how many sent, how many tokens held by no one) when told
        self.store = SqliteStore(self.db, lambda: 1000.0)
        self.queue = WorkQueue(self.db, lambda: 1000.0, on_send=self._told)
        self.results = SqliteResults(self.db, lambda: 1000.0)
        self.taps: list[str] = []
        self.journal = SqliteJournal(self.db, tap=lambda what, record: self.taps.append(what))
        self.begun: list[str] = []

    def _told(self, n: int) -> None:
        # What another connection sees when the loop is woken (the rows must be committed by then).
        with sqlite3.connect(self.db.path) as other:
            free = other.execute("SELECT count(*) FROM queue WHERE holder IS NULL").fetchone()[0]
        self.sent.append((n, free))

    def count(self) -> dict[str, int]:
        return {t: int(self.db.query(f"SELECT count(*) FROM {t}")[0][0])
                for t in ("requests", "skips", "events", "urls", "marks", "queue")}


@pytest.fixture
def parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Parts:
    p = Parts(tmp_path)
    begin = Database._begin

    def begins(self: Database, c: sqlite3.Connection, what: str, *, durable: bool) -> None:
        p.begun.append(what)
        begin(self, c, what, durable=durable)
    monkeypatch.setattr(Database, "_begin", begins)
    p.store.write_host(HOST, 0, owner="t1", lease_until=2000.0, state={"n": 0}, outbox=None, expires_at=9e9)
    p.queue.send_raw([(HOST, "tok-a", "{}"), ("http://b.test", "tok-b", "{}")])
    p.begun.clear()
    p.sent.clear()
    return p


def _turn(p: Parts, version: int) -> None:
    """A turn's writes after its request, as the core makes them."""
    got = p.queue.receive(2, "w")
    p.begun.clear()
    with p.db.batch("turns"):
        p.journal.request({"url": f"{HOST}/a", "t_start": "2026-12-07T00:00:00Z", "t_end": "2026-12-07T00:00:01Z",
                           "method": "GET", "status": 200, "purpose": "article"})
        assert p.store.write_host(HOST, version, owner="t1", lease_until=2000.0, state={"n": 1}, outbox=None,
                                  expires_at=9e9)
        p.journal.skip({"url": f"{HOST}/b", "reason": "robots_disallowed", "t": "2026-12-07T00:00:01Z"})
        with p.db.unit("drain"):
            p.results.emit_many([("page", "rid-1", {"url": f"{HOST}/a"})])
            p.store.write_drained([UrlRecord(url=f"{HOST}/a")], [(HOST, DrainMark(version + 1))])
        p.queue.hide([(got[0].receipt, 0.0)])
        p.queue.delete([got[1].receipt])
        # (Nothing of it is written yet: no transaction begun, the lock free for another thread.)
        other = threading.Thread(target=lambda: p.db.stage("other", "INSERT INTO meta VALUES ('x', '{}', 0)", ()))
        other.start()
        other.join(5)
        assert not other.is_alive()
        assert p.begun == ["other"] and p.sent == [] and p.taps == ["request"]
        p.begun.clear()


def test_a_turns_writes_after_its_request_are_one_transaction_at_the_batchs_end(parts: Parts) -> None:
    # WHEN a turn makes its writes in a batch
    _turn(parts, 1)
    # THEN they were written together, in one transaction at the batch's end
    assert parts.begun == ["turns"]
    assert parts.count() == {"requests": 1, "skips": 1, "events": 1, "urls": 1, "marks": 1, "queue": 1}
    assert parts.store.read_host(HOST).version == 2
    # AND the loop was woken once they were committed (the token back now is free to another reader)
    assert parts.sent == [(0, 1), (0, 1)]
    assert parts.taps == ["request", "skip"]


def test_a_turn_reads_its_own_staged_writes(parts: Parts) -> None:
    with parts.db.batch("turns"):
        parts.store.write_host(HOST, 1, owner="t1", lease_until=2000.0, state={"n": 7}, outbox=None, expires_at=9e9)
        # WHEN the turn reads the host again
        rec = parts.store.read_host(HOST)
    # THEN it sees what it staged (the read wrote it first)
    assert (rec.version, rec.state) == (2, {"n": 7})


def test_a_host_item_changed_under_the_turn_undoes_the_unit_but_keeps_the_requests_record(parts: Parts) -> None:
    # GIVEN the host's item changed by another writer (an operator) while the turn was at work
    parts.store.write_host(HOST, 1, owner=None, lease_until=0.0, state={"n": "operator"}, outbox=None, expires_at=9e9)
    # WHEN the turn's staged writes, conditional on the version it read, are flushed
    with pytest.raises(TransientError, match="changed during the turn"):
        _turn(parts, 1)
    # THEN nothing of the turn is written but the record of the request it made
    assert parts.count() == {"requests": 1, "skips": 0, "events": 0, "urls": 0, "marks": 0, "queue": 2}
    assert parts.store.read_host(HOST).state == {"n": "operator"}
    held = parts.db.query("SELECT count(*) FROM queue WHERE holder IS NOT NULL")[0][0]
    assert held == 2  # its tokens stay held: they come back after the visibility timeout, or as the engine hides them
    assert parts.sent == [] and parts.taps == ["request"]  # no wake-up, no skip logged: nothing of it happened


def test_a_unit_that_fails_undoes_only_what_it_staged(parts: Parts) -> None:
    with parts.db.batch("turns"):
        parts.results.emit_many([("page", "before", {})])
        with pytest.raises(RuntimeError), parts.db.unit("drain"):
            parts.results.emit_many([("page", "inside", {})])
            raise RuntimeError("a service fault")
        parts.results.emit_many([("page", "after", {})])
    assert [r for (r,) in parts.db.query("SELECT rid FROM events ORDER BY seq")] == ["before", "after"]


def test_outside_a_batch_each_write_is_made_at_once(parts: Parts) -> None:
    told: list[Any] = []
    parts.db.after_commit(lambda: told.append(1))
    parts.store.write_host(HOST, 1, owner="t1", lease_until=2000.0, state={}, outbox=None, expires_at=9e9)
    assert told == [1] and parts.begun == ["write http://a.test"]
    assert not parts.store.write_host(HOST, 1, owner="t1", lease_until=2000.0, state={}, outbox=None, expires_at=9e9)

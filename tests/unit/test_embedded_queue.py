"""The embedded work queue's order of due tokens (the longest chain first) and the database under
it: the schema of an older state directory brought up to date, durable commits that share one
wait for the disk."""
from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from heed_core.errors import ServiceFault

from heed_embedded.db import SCHEMA_VERSION, Database
from heed_embedded.queue import CHAIN_CAP_S, DUE_WINDOW, Message, WorkQueue


class Clock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def queue(tmp_path: Path) -> tuple[WorkQueue, Clock]:
    clock = Clock()
    return WorkQueue(Database(tmp_path / "heed.db"), clock), clock


def _one_each(q: WorkQueue, hosts: list[str]) -> None:
    q.send_raw([(h, f"tok-{h}", f'{{"host": "{h}"}}') for h in hosts])


def _defer(q: WorkQueue, clock: Clock, chains: dict[str, float | None], seconds: float) -> None:
    """Every host received once, then hidden for ``seconds`` with its chain."""
    got = q.receive(len(chains), "w")
    assert sorted(m.group for m in got) == sorted(chains)
    q.hide([(m.receipt, seconds, chains[m.group]) for m in got])


def test_due_tokens_come_out_longest_chain_first(queue: tuple[WorkQueue, Clock]) -> None:
    q, clock = queue
    _one_each(q, ["a", "b", "c"])
    _defer(q, clock, {"a": 2.0, "b": 16.0, "c": 8.0}, seconds=2.0)
    assert q.receive(3, "w") == []  # hidden: a longer chain never makes a token come out early
    clock.t += 2.0
    assert [m.group for m in q.receive(1, "w")] == ["b"]
    assert [m.group for m in q.receive(2, "w")] == ["c", "a"]


def test_a_token_due_longer_ago_than_the_difference_of_chains_goes_first(queue: tuple[WorkQueue, Clock]) -> None:
    q, clock = queue
    _one_each(q, ["old", "new"])
    got = {m.group: m for m in q.receive(2, "w")}
    q.hide([(got["old"].receipt, 1.0, 2.0)])
    q.hide([(got["new"].receipt, 4.0, 4.0)])  # due 3 s later, a chain 2 s longer
    clock.t += 4.0
    assert [m.group for m in q.receive(2, "w")] == ["old", "new"]


@pytest.mark.parametrize(("later_s", "first"), [(CHAIN_CAP_S - 1.0, "long"), (CHAIN_CAP_S + 1.0, "waiting")])
def test_a_chain_counts_no_more_than_the_cap(tmp_path: Path, later_s: float, first: str) -> None:
    clock = Clock()
    q = WorkQueue(Database(tmp_path / "heed.db"), clock)
    _one_each(q, ["waiting", "long"])
    got = {m.group: m for m in q.receive(2, "w")}
    q.hide([(got["waiting"].receipt, 0.0, 0.0)])  # due now, nothing known ahead of it
    q.hide([(got["long"].receipt, later_s, 100 * CHAIN_CAP_S)])  # due later, a chain far past the cap
    clock.t += later_s
    assert [m.group for m in q.receive(1, "w")] == [first]


def test_a_new_token_counts_as_the_longest_and_a_hide_without_a_chain_keeps_it(
        queue: tuple[WorkQueue, Clock]) -> None:
    q, clock = queue
    _one_each(q, ["known", "kept"])
    _defer(q, clock, {"known": 30.0, "kept": 20.0}, seconds=0.0)
    _one_each(q, ["fresh"])  # its host's work is not known yet: learnt first
    got = q.receive(3, "w")
    assert [m.group for m in got] == ["fresh", "known", "kept"]
    q.hide([(m.receipt, 0.0) if m.group == "kept" else (m.receipt, 0.0, 1.0) for m in got])
    assert [m.group for m in q.receive(3, "w")] == ["kept", "known", "fresh"]


def test_fifo_per_host_holds_whatever_the_chains(queue: tuple[WorkQueue, Clock]) -> None:
    q, clock = queue
    q.send_raw([("h", "t1", "first"), ("h", "t2", "second"), ("g", "t3", "other")])
    got = q.receive(10, "w")
    assert [(m.group, m.body) for m in got] == [("h", "first"), ("h", "second"), ("g", "other")]
    q.hide([(m.receipt, 0.0, 5.0 if m.group == "g" else 1.0) for m in got])
    got = q.receive(1, "w")
    assert [(m.group, m.body) for m in got] == [("g", "other")]
    rest = q.receive(10, "w")
    assert [m.body for m in rest] == ["first", "second"]


def test_the_order_looks_at_the_oldest_due_window_only(queue: tuple[WorkQueue, Clock]) -> None:
    q, clock = queue
    hosts = [f"h{i:04d}" for i in range(DUE_WINDOW + 1)]
    _one_each(q, hosts)
    got = q.receive(len(hosts), "w")
    assert len(got) == len(hosts)
    # Every host due, the last one latest and with the longest chain: the window of the oldest
    # due tokens (a bounded read, whatever the backlog) does not reach it yet.
    q.hide([(m.receipt, 0.0 if m.group != hosts[-1] else 0.5, 50.0 if m.group == hosts[-1] else 1.0)
            for m in got])
    clock.t += 1.0
    first = q.receive(1, "w")
    assert first[0].group != hosts[-1]
    q.delete([first[0].receipt])
    assert q.receive(1, "w")[0].group == hosts[-1]


def test_a_state_of_schema_2_gets_the_chain_column_and_keeps_its_messages(tmp_path: Path) -> None:
    path = tmp_path / "heed.db"
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE queue (id INTEGER PRIMARY KEY AUTOINCREMENT, grp TEXT NOT NULL, dedup TEXT NOT NULL, "
        "body TEXT NOT NULL, sent REAL NOT NULL, visible REAL NOT NULL, receives INTEGER NOT NULL DEFAULT 0, "
        "head INTEGER NOT NULL, holder TEXT, receipt TEXT, first_received REAL);"
        "CREATE INDEX queue_ready ON queue (head, visible);"
        "INSERT INTO queue (grp, dedup, body, sent, visible, head) VALUES ('h', 'd', 'body', 1.0, 1.0, 1);"
        "PRAGMA user_version=2;")
    old.close()
    clock = Clock()
    q = WorkQueue(Database(path), clock)
    got = q.receive(5, "w")
    assert [(m.group, m.body) for m in got] == [("h", "body")]
    q.hide([(got[0].receipt, 0.0, 3.0)])
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert check.execute("SELECT chain FROM queue").fetchall() == [(3.0,)]
    indexes = {r[0] for r in check.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "queue_ready" not in indexes and "queue_due" in indexes


def _count_fsyncs(monkeypatch: pytest.MonkeyPatch, pause_s: float) -> list[int]:
    calls: list[int] = []
    real = os.fsync

    def slow_fsync(fd: int) -> None:
        calls.append(fd)
        time.sleep(pause_s)  # a slow disk: commits pile up behind the one under way
        real(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    return calls


def _write(db: Database, n: int, durable: bool = True) -> None:
    with db.write("test", durable=durable) as c:
        c.execute("INSERT OR REPLACE INTO meta (key, data, version) VALUES (?, 'x', 1)", (f"k{n}",))


def test_a_durable_commit_waits_for_the_disk_and_a_non_durable_one_does_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = Database(tmp_path / "heed.db")
    _write(db, 0)
    calls = _count_fsyncs(monkeypatch, 0.0)
    _write(db, 1)
    _write(db, 2)
    assert len(calls) == 2
    _write(db, 3, durable=False)
    assert len(calls) == 2
    normal = Database(tmp_path / "heed.db", synchronous="NORMAL")
    _write(normal, 4)
    assert len(calls) == 2


def test_durable_commits_that_end_together_share_one_wait_for_the_disk_outside_the_lock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = Database(tmp_path / "heed.db")
    _write(db, 0)
    calls = _count_fsyncs(monkeypatch, 0.05)
    start = threading.Barrier(16)
    done: list[float] = []

    def writer(n: int) -> None:
        start.wait()
        _write(db, n)
        done.append(time.monotonic())

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(done) == 16
    # Sixteen commits, each on disk when its write returned, in a few fsyncs: the lock was not
    # held through them (an fsync under the lock is one commit's alone: sixteen of them).
    assert len(calls) <= 4
    check = sqlite3.connect(tmp_path / "heed.db")
    assert check.execute("SELECT count(*) FROM meta").fetchone()[0] == 16


def test_an_fsync_that_fails_fails_every_commit_it_was_for_and_every_one_after(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = Database(tmp_path / "heed.db")
    _write(db, 0)
    real = os.fsync
    calls: list[int] = []
    started = threading.Event()

    def failing_fsync(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 1:
            started.set()
            time.sleep(0.2)  # the commits that end meanwhile wait for the next fsync
            real(fd)
            return
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    outcomes: dict[int, str] = {}

    def writer(n: int) -> None:
        try:
            _write(db, n)
            outcomes[n] = "ok"
        except ServiceFault as exc:
            outcomes[n] = str(exc)

    first = threading.Thread(target=writer, args=(1,))
    first.start()
    started.wait(5)
    rest = [threading.Thread(target=writer, args=(n,)) for n in range(2, 6)]
    for t in rest:
        t.start()
    for t in [first, *rest]:
        t.join()
    # The first fsync was for commit 1 alone; the second, for the four that ended during it, failed:
    # none of the four says it is on disk, and no commit after does either (nor tries the disk again)
    assert outcomes[1] == "ok" and len(calls) == 2
    assert all("did not take it" in outcomes[n] for n in range(2, 6)), outcomes
    with pytest.raises(ServiceFault, match="failed before"):
        _write(db, 6)
    assert len(calls) == 2


def test_a_schema_upgrade_another_process_made_meanwhile_is_not_made_again(tmp_path: Path) -> None:
    path = tmp_path / "heed.db"
    Database(path).conn()  # today's schema
    half = sqlite3.connect(path)
    half.execute("PRAGMA user_version=2")  # as if read by a process before another upgraded it
    half.close()
    q = WorkQueue(Database(path), Clock())
    q.send_raw([("h", "t", "body")])
    assert [m.body for m in q.receive(1, "w")] == ["body"]
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_databases_of_schema_2_opened_by_two_processes_at_once_both_open(tmp_path: Path) -> None:
    path = tmp_path / "heed.db"
    old = sqlite3.connect(path)
    old.executescript("CREATE TABLE queue (id INTEGER PRIMARY KEY AUTOINCREMENT, grp TEXT NOT NULL, "
                      "dedup TEXT NOT NULL, body TEXT NOT NULL, sent REAL NOT NULL, visible REAL NOT NULL, "
                      "receives INTEGER NOT NULL DEFAULT 0, head INTEGER NOT NULL, holder TEXT, receipt TEXT, "
                      "first_received REAL); PRAGMA user_version=2;")
    old.close()
    errors: list[BaseException] = []
    gate = threading.Barrier(4)

    def opener() -> None:
        gate.wait()
        try:
            Database(path).conn()
        except BaseException as exc:  # noqa: BLE001 - what the test looks for
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_a_hide_tells_when_its_soonest_token_comes_out_and_a_hide_for_now_wakes_at_once(tmp_path: Path) -> None:
    # GIVEN a queue whose process listens for sends and hides
    clock = Clock()
    sent: list[int] = []
    hidden: list[float] = []
    q = WorkQueue(Database(tmp_path / "heed.db"), clock, on_send=sent.append, on_hide=hidden.append)
    _one_each(q, ["a", "b"])
    first, second = q.receive(2, "w")
    # WHEN both are hidden, for 4 s and for 2 s
    q.hide([(first.receipt, 4.0), (second.receipt, 2.0)])
    # THEN the process is told the soonest comes out in 2 s (its loop may be waiting past then,
    # on a read made before this hide)
    assert hidden == [clock.t + 2.0]
    # and a token hidden for no time wakes the receivers at once instead; hidden beside one for
    # 3 s, both happen (the later one is not lost behind the wake-up)
    clock.t += 5.0
    (again,) = q.receive(1, "w")
    q.hide([(again.receipt, 0.0)])
    assert len(hidden) == 1 and sent[-1] == 0
    first, second = q.receive(2, "w")
    sent.clear()
    q.hide([(first.receipt, 0.0), (second.receipt, 3.0)])
    assert sent == [0] and hidden[-1] == clock.t + 3.0


def test_the_turns_read_of_hosts_is_one_statement_with_the_answer_of_the_chunked_reads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a state with a host, its drain mark and cached robots.txt, a block and a purge
    import heed_embedded.store as store_module

    store = store_module.SqliteStore(Database(tmp_path / "heed.db"), lambda: 1000.0)
    a, b, c = "http://a.example:80", "http://b.example:80", "http://c.example:80"
    with store.db.write() as conn:
        conn.execute("INSERT INTO hosts (host, v, own, lease, st, ob, expires) "
                     "VALUES (?, 3, 'o', 5.0, '{}', NULL, 9e9)", (a,))
        conn.execute("INSERT INTO marks (host, v, sent, expires) VALUES (?, 2, '[\"x\"]', 9e9)", (a,))
        conn.execute("INSERT INTO aux (host, kind, data, expires) VALUES (?, 'robots', '{\"body\": \"\"}', 9e9)", (a,))
        conn.execute("INSERT INTO blocks (domain, reason) VALUES ('b.example', 'asked')")
        conn.execute("INSERT INTO purges (domain, at) VALUES ('example', 7.0)")
    statements: list[str] = []
    store.db.conn().set_trace_callback(statements.append)
    # WHEN a turn reads the three hosts
    short = store.read_turn_hosts([a, b, c], aux=("robots",))
    store.db.conn().set_trace_callback(None)
    # THEN it took one statement (a snapshot of its own), and got what it reads in chunks (a read
    # of more hosts than one statement takes)
    assert len(statements) == 1
    assert (short[a].version, short[a].owner, short[a].drained.version) == (3, "o", 2)
    assert short[a].aux == {"robots": {"body": ""}}
    assert (short[a].purged_at, short[a].blocked, short[b].blocked, short[c].purged_at) == (7.0, None, "asked", 7.0)
    monkeypatch.setattr(store_module, "CHUNK", 1)
    assert store.read_turn_hosts([a, b, c], aux=("robots",)) == short


def test_a_receive_takes_nothing_another_took_after_its_read_and_no_follower_without_its_head(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN two hosts' messages (h: two, g: one) and two receivers of one queue (two processes),
    # the second of which receives h's head right after the first has read its candidates
    clock = Clock()
    db = tmp_path / "heed.db"
    first, other = WorkQueue(Database(db), clock), WorkQueue(Database(db), clock)
    first.send_raw([("h", "t1", "h first"), ("h", "t2", "h second"), ("g", "t3", "g only")])
    read = WorkQueue._candidates
    taken: list[Message] = []
    reading = [False]

    def candidates(*a: object, **k: object) -> object:
        out = read(*a, **k)  # type: ignore[arg-type]
        if not reading[0]:
            reading[0] = True
            taken.extend(other.receive(1, "other"))
        return out
    monkeypatch.setattr(WorkQueue, "_candidates", staticmethod(candidates))
    # WHEN the first receives everything it read
    got = first.receive(10, "first")
    # THEN the other one had h's head; the first has g's message alone: neither h's head a second
    # time nor h's second message without its head (FIFO)
    assert [m.body for m in taken] == ["h first"]
    assert [m.body for m in got] == ["g only"]
    # AND h gives out nothing while the other holds its head; once the other hands it back, the
    # head comes out first, its second message behind it
    monkeypatch.undo()
    assert first.receive(10, "first") == []
    other.hide([(taken[0].receipt, 0.0)])
    assert [m.body for m in first.receive(10, "first")] == ["h first", "h second"]

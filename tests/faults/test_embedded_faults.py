"""tests/faults, on the embedded engine: each fault alone, judged from the sites' logs and the events
table by the same invariants (``check``: each URL fetched once, or the documented bounded refetch;
no result lost or doubled; no gap shorter than the host's gap).

A fault is a port's method (the store's, the queue's, the results') that raises before it runs:
``Crash`` (a BaseException, as the process dying on the spot: nothing after it in that turn runs,
the tokens it held stay held, and the "restart" hands them back, as ``heed serve`` does after a
SIGKILL), ``TransientError`` (the database busy past its timeout), or a call of its own."""
from __future__ import annotations

import itertools
import json
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from heed_core.crawl import ROTATE_AT, Crawler
from heed_core.errors import TransientError
from heed_core.ports import SystemClock
from heed_core.profile import Profile

from heed_embedded.db import Database
from heed_embedded.engine import Engine
from heed_embedded.journal import SqliteJournal
from heed_embedded.results import events_since
from heed_embedded.service import process_batch
from heed_embedded.store import SqliteStore

from tests.faults.conftest import GAP, FaultWeb, holds, profile, site_gaps


class Crash(BaseException):
    """The process dies here: nothing after it runs (not an exception a turn could catch)."""


@dataclass
class Fault:
    obj: Any
    name: str
    action: str  # crash | busy | call
    when: Callable[..., bool] = lambda *a, **k: True
    times: int = 1  # -1: always
    every: int = 1
    call: Callable[..., None] | None = None
    seen: int = 0
    fired: int = 0


@dataclass
class Harness:
    """The embedded engine on one database, restarted (a new session that hands back what the
    dead one held, and makes its hosts safe) after each crash, until a run ends without one."""

    tmp: Path
    profile: Profile
    web: FaultWeb
    faults: list[Fault] = field(default_factory=list)
    crashes: int = 0
    sessions: int = 0

    def __post_init__(self) -> None:
        self.db = Database(self.tmp / "heed.db")
        self.journal = SqliteJournal(self.db)
        self.engine = self._engine()
        self.lock = threading.Lock()
        self.stop = threading.Event()

    def _engine(self) -> Engine:
        self.sessions += 1
        return Engine(self.profile, self.db, SystemClock(), self.journal, session=f"s{self.sessions}",
                      threads=8, allow_private=True)

    def add(self, obj: Any, name: str, action: str = "crash", **kw: Any) -> Fault:
        fault = Fault(obj, name, action, **kw)
        self.faults.append(fault)
        original = getattr(obj, name)

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with self.lock:
                fire = (fault.times < 0 or fault.fired < fault.times) and fault.when(*args, **kwargs)
                if fire:
                    fault.seen += 1
                    fire = fault.seen % fault.every == 0
                    fault.fired += fire
            if fire:
                if fault.action == "crash":
                    self.crashes += 1
                    self.stop.set()
                    raise Crash(f"killed before {name}")
                if fault.action == "busy":
                    raise TransientError(f"{name}: database is locked (fault injected)")
                assert fault.call is not None
                fault.call(*args, **kwargs)
            return original(*args, **kwargs)
        setattr(obj, name, wrapped)
        return fault

    def restart(self) -> None:
        self.engine = self._engine()
        self.engine.recover(self.engine.queue.release())

    def run(self, patience_s: float = 3.0) -> None:
        """Turns until idle; after a crash, the restart and again, until a run ends without one."""
        for _ in range(30):
            self.stop = threading.Event()
            before = self.crashes
            self.engine.run(self.stop, until_idle=patience_s)
            if self.crashes == before:
                return
            self.restart()
        raise AssertionError("still crashing after 30 restarts")

    def crawl(self, before: Callable[[Harness], None] | None = None) -> Harness:
        self.engine.store.put_sources(self.web.sources())
        if before is not None:
            before(self)
        else:
            self.engine.tick(tasks=["feed"])
        self.run()
        return self

    def events(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        while True:
            batch = events_since(self.db, int(out[-1]["seq"]) if out else 0)
            if not batch:
                return out
            out += batch

    def skips(self) -> list[dict[str, Any]]:
        with self.db.read("skips") as c:
            return [json.loads(r) for (r,) in c.execute("SELECT record FROM skips ORDER BY id")]


@pytest.fixture
def web() -> Iterator[FaultWeb]:
    w = FaultWeb().start(hosts=3, articles=3)
    yield w
    w.stop()


def check(web: FaultWeb, h: Harness, *, refetched: int = 0, articles: int = 3) -> None:
    """tests/faults/conftest's invariants, on the events table and wall-clock gaps."""
    holds(web, h.events(), refetched=refetched, articles=articles)


def _host_write(web: FaultWeb, n: int, version: int) -> Callable[..., bool]:
    host = f"http://{web.servers[n].host}"
    return lambda h, expected, **kw: h == host and expected == version


def test_baseline_without_faults(web: FaultWeb, tmp_path: Path) -> None:
    h = Harness(tmp_path, profile(), web).crawl()
    check(web, h)
    assert all(n == 1 for n in Counter(f"{r.host}{r.path}" for r in web.log()).values())


# --- delivery ------------------------------------------------------------------------------------
def test_every_token_delivered_twice_and_out_of_order(web: FaultWeb, tmp_path: Path) -> None:
    """Every token of a round sent again, last first, as new messages (past the deduplication
    window): the hosts remember the tokens they took in for days."""
    def again(h: Harness) -> None:
        sent: list[tuple[str, str, str]] = []
        send = h.engine.queue.send_raw

        def keep(messages: Any) -> int:
            sent.extend(messages)
            return send(messages)
        h.engine.queue.send_raw = keep  # type: ignore[method-assign]
        h.engine.tick(tasks=["feed"])
        h.run()
        before = (len(web.log()), len(h.events()))
        assert sent
        send([(g, f"again-{n}-{d}", b) for n, (g, d, b) in enumerate(reversed(sent))])
        h.run()
        assert (len(web.log()), len(h.events())) == before

    check(web, Harness(tmp_path, profile(), web).crawl(again))


# --- crashes ---------------------------------------------------------------------------------------
def test_a_crash_before_the_commit_refetches_that_page_once_after_the_gap(web: FaultWeb, tmp_path: Path) -> None:
    # GIVEN the process dies right before the commit that follows the feed's request on one host
    # (the claim is version 1, robots.txt's commit 2, the feed's 3)
    h = Harness(tmp_path, profile(), web)
    fault = h.add(h.engine.store, "write_host", when=_host_write(web, 0, 2))
    h.crawl()
    assert fault.fired == 1
    # THEN that feed was read twice (the documented refetch), everything else once, every result
    # once; the second read came after the host's gap, counted from the restart
    check(web, h, refetched=1)
    reads = [r for r in web.servers[0].log() if r.path == "/feed.xml"]
    assert len(reads) == 2 and reads[1].t_start - reads[0].t_end >= GAP


def test_a_host_item_changed_under_the_turn_undoes_its_commit_and_asks_again_after_the_gap(
        web: FaultWeb, tmp_path: Path) -> None:
    # GIVEN another writer (an operator's change) lands on one host's item while its robots.txt
    # request is in flight: the turn's commit, staged (no transaction open), is conditional on the
    # version the turn read (1)
    h = Harness(tmp_path, profile(), web)
    host = f"http://{web.servers[0].host}"

    def operator(name: str, expected: int, **kw: Any) -> None:
        assert not h.db.in_write()  # (the turn holds no lock: the other writer goes on at once)

        def change() -> None:  # (another thread: no batch of its own, committed at once)
            rec = h.engine.store.read_host(name)
            assert h.engine.store.update_host_state(name, rec.version, rec.state)
        t = threading.Thread(target=change)
        t.start()
        t.join(10)
    fault = h.add(h.engine.store, "write_host", action="call", call=operator, when=_host_write(web, 0, 1))
    h.engine.store.put_sources(web.sources())
    h.engine.tick(tasks=["feed"])
    h.run(patience_s=8.0)  # (a batch whose commit failed is back after 5 s at the least: engine.Engine._batch)
    assert fault.fired == 1
    # THEN nothing of that turn's commit landed but its record of the request: robots.txt was asked
    # a second time, after the host's gap; every page once, every result once, no gap broken
    check(web, h)
    reads = [r for r in web.servers[0].log() if r.path == "/robots.txt"]
    assert len(reads) == 2 and reads[1].t_start - reads[0].t_end >= GAP
    logged = h.db.query("SELECT count(*) FROM requests WHERE url = ?", (f"{host}/robots.txt",))[0][0]
    assert logged == 2


def test_a_first_turn_claims_its_host_with_its_requests_mark_once_connected(
        web: FaultWeb, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a record of the write transaction each thread is in when a host is claimed, and when
    # a request's mark is written (a group's writes run on its leader's thread, in a transaction
    # the leader names after its own ask: "mark", "claim and mark", or a turn's "turns")
    h = Harness(tmp_path, profile(), web)
    serial = itertools.count(1)
    current: dict[int, int] = {}
    claims: list[tuple[str, int | None]] = []
    marks: dict[str, list[int | None]] = {}
    begin, claim, write_attempt = Database._begin, Crawler._claim, SqliteStore.write_attempt

    def transaction() -> int | None:
        return current.get(threading.get_ident()) if h.engine.db.in_write() else None

    def begins(db: Database, c: sqlite3.Connection, what: str, *, durable: bool) -> None:
        current[threading.get_ident()] = next(serial)
        begin(db, c, what, durable=durable)

    def claiming(crawler: Crawler, token: Any, *a: Any, **k: Any) -> Any:
        claims.append((token.host, transaction()))
        return claim(crawler, token, *a, **k)

    def marking(c: sqlite3.Connection, url: str, host: str, *a: Any) -> None:
        marks.setdefault(host, []).append(transaction())
        write_attempt(c, url, host, *a)
    monkeypatch.setattr(Database, "_begin", begins)
    monkeypatch.setattr(Crawler, "_claim", claiming)
    monkeypatch.setattr(SqliteStore, "write_attempt", staticmethod(marking))
    # WHEN the crawl runs
    h.crawl()
    # THEN each host's first request (its robots.txt) was claimed once, in a write transaction,
    # and that same transaction wrote the mark of its request: the claim with the mark, once
    # connected (perhaps with others of its process), never in a transaction of its own before it
    assert sorted(host for host, _ in claims) == sorted(f"http://{s.host}" for s in web.servers), claims
    for host, txn in claims:
        assert txn is not None, (host, claims)
        assert marks[host][0] == txn, (host, txn, marks[host])
    check(web, h)


def test_a_claim_lost_once_connected_sends_nothing_and_the_turn_comes_back(web: FaultWeb, tmp_path: Path) -> None:
    # GIVEN another token takes one host between its first turn's plan and its claim (the claim
    # is written once the connection is made, with the request's mark)
    h = Harness(tmp_path, profile(), web)
    host = f"http://{web.servers[0].host}"

    def taken(name: str, expected: int, **kw: Any) -> None:
        with h.db.write("another token's claim") as c:  # (in the claim's transaction: undone with it)
            c.execute("INSERT INTO hosts (host, v, own, lease, st, ob, expires) VALUES (?, 1, 'other', 0, '{}', "
                      "NULL, 9e9)", (name,))
    fault = h.add(h.engine.store, "write_host", action="call", call=taken,
                  when=lambda name, expected, **kw: name == host and expected == 0)
    # WHEN the crawl runs
    h.crawl()
    # THEN the lost claim sent nothing (robots.txt asked once), its turn came back and claimed the
    # host, and every page and result came once, every gap kept
    assert fault.fired == 1
    assert [r.path for r in web.servers[0].log()].count("/robots.txt") == 1
    check(web, h)


def test_a_page_whose_request_is_cut_twice_is_given_up_never_asked_a_third_time(
        web: FaultWeb, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN the process dies while one article's request is in flight (after the site answered,
    # before the commit), every time that page is asked for
    from heed_core.adapters.http import RequestsTransport

    target = f"{web.servers[0].base_url}/a/1"
    h = Harness(tmp_path, profile(), web)
    fetch = RequestsTransport.fetch

    def cut(self: RequestsTransport, request: Any) -> Any:
        result = fetch(self, request)
        if request.url == target:
            h.crashes += 1
            h.stop.set()
            raise Crash(f"killed with {target} in flight")
        return result
    monkeypatch.setattr(RequestsTransport, "fetch", cut)
    h.crawl()
    # THEN the page was asked twice, then given up with a reason (a skip, not a third request)
    per_url = Counter(f"{r.host}{r.path}" for r in web.log())
    assert h.crashes == 2 and per_url[target.removeprefix("http://")] == 2, per_url
    skips = [s for s in h.skips() if s["url"] == target]
    assert [s["reason"] for s in skips] == ["interrupted_twice"], skips
    # AND every other page once, every other result once, its mark gone with the give-up's commit
    assert all(n == 1 for u, n in per_url.items() if u != target.removeprefix("http://")), per_url
    kinds = Counter(e["detail_type"] for e in h.events())
    assert kinds == {"item.found": 9, "article.read": 8}, kinds
    with h.db.read() as c:
        assert c.execute("SELECT count(*) FROM attempts").fetchone()[0] == 0


def test_a_crash_after_the_commit_and_before_the_ack_refetches_nothing(web: FaultWeb, tmp_path: Path) -> None:
    h = Harness(tmp_path, profile(), web)
    fault = h.add(h.engine.queue, "delete", times=2)
    h.crawl()
    assert fault.fired == 2
    check(web, h)


def test_a_crash_in_the_drain_rolls_back_the_turn_with_it_and_loses_no_result(web: FaultWeb, tmp_path: Path) -> None:
    # GIVEN the process dying while its batches' outboxes leave (the events, mid-transaction)
    h = Harness(tmp_path, profile(), web)
    # (up to twice: the fault is on the first process's engine, and a second drain meets it only
    # when two batches drain side by side before the first crash stops that process)
    fault = h.add(h.engine.results, "emit_many", times=2)
    h.crawl()
    assert fault.fired >= 1 and h.crashes == fault.fired
    # THEN the drain is one transaction with the commit after the request (one wait for the disk):
    # nothing of it was kept, so each page whose drain was cut is asked once more (a request cut
    # before its commit), after the gap; nothing lost or doubled
    check(web, h, refetched=fault.fired)


def test_a_drain_that_fails_leaves_the_outbox_and_the_next_turn_drains_it_first(web: FaultWeb,
                                                                                 tmp_path: Path) -> None:
    # GIVEN the database refusing the events of two drains (busy past its timeout)
    h = Harness(tmp_path, profile(), web)
    fault = h.add(h.engine.results, "emit_many", action="busy", times=2)
    h.crawl()
    assert fault.fired == 2
    # THEN the commits stood without their drains, and the next turn of each host drained its
    # outbox before deciding: nothing asked twice, nothing lost or doubled
    check(web, h)
    assert all(n == 1 for n in Counter(f"{r.host}{r.path}" for r in web.log()).values())


def test_a_crash_in_a_tick_sends_nothing_and_the_next_sends_each_host_once(web: FaultWeb, tmp_path: Path) -> None:
    def ticks(h: Harness) -> None:
        fault = h.add(h.engine.queue, "send_raw", times=1)
        with pytest.raises(Crash):
            h.engine.tick(tasks=["feed"])
        assert fault.fired == 1 and h.engine.queue.counts()["ready"] == 0  # the tick's transaction rolled back
        h.engine.tick(tasks=["feed"])

    h = Harness(tmp_path, profile(), web).crawl(ticks)
    check(web, h)
    assert Counter(r.host for r in web.log() if r.path == "/feed.xml") == {s.host: 1 for s in web.servers}


# --- a busy database ----------------------------------------------------------------------------------
def test_a_busy_database_on_a_share_of_calls_costs_the_sites_nothing(web: FaultWeb, tmp_path: Path) -> None:
    h = Harness(tmp_path, profile(), web)
    for obj, name, every in ((h.engine.store, "read_turn_hosts", 3), (h.engine.store, "write_host", 9),
                             (h.engine.store, "write_drained", 3)):
        h.add(obj, name, "busy", times=-1, every=every)
    h.crawl()
    assert sum(f.fired for f in h.faults) >= 3
    # THEN a turn that met a busy database is tried again later and not charged
    assert not [s for s in h.skips() if s["reason"] == "processing_failed"]
    check(web, h, refetched=len(web.servers) * 4)


def test_another_process_holding_the_write_lock_is_waited_for(web: FaultWeb, tmp_path: Path) -> None:
    # GIVEN another process (an operator's command) holding the database's write lock for 1.5 s mid-crawl
    h = Harness(tmp_path, profile(), web)
    held = threading.Event()

    def hold() -> None:
        time.sleep(0.4)
        other = sqlite3.connect(str(tmp_path / "heed.db"), isolation_level=None, timeout=30)
        other.execute("BEGIN IMMEDIATE")
        held.set()
        time.sleep(1.5)
        other.execute("COMMIT")
        other.close()
    t = threading.Thread(target=hold)
    t.start()
    h.crawl()
    t.join()
    # THEN the crawl waited for it: no error, nothing lost, nothing asked twice
    assert held.is_set()
    check(web, h)
    assert not [s for s in h.skips() if s["reason"] == "processing_failed"]


def test_a_text_store_failure_keeps_nothing_half_written(web: FaultWeb, tmp_path: Path) -> None:
    p = profile(tasks={"feed": {"article_followup": {"mode": "short_summary", "summary_shorter_than": 600,
                                                     "once_ever": True, "keep_text": True,
                                                     "per_source_per_window": 10, "total_per_window": 100,
                                                     "window_s": 900}}})
    h = Harness(tmp_path, p, web)
    fault = h.add(h.engine.results, "store_text", "busy", times=2)
    h.crawl()
    assert fault.fired == 2
    check(web, h, refetched=2)
    assert all("text_key" in e for e in h.events() if e["detail_type"] == "article.read")


# --- races, poison, dead letters ----------------------------------------------------------------------
def test_two_turns_racing_on_one_host_never_overlap(web: FaultWeb, tmp_path: Path) -> None:
    """A token handed out twice at once (its copies in other groups), worked on side by side."""
    def race(h: Harness) -> None:
        e = h.engine
        e.tick(tasks=["feed"])
        first = e.queue.receive(1, "racer")
        e.queue.send_raw([(f"copy-{n}", f"copy-{n}-{time.time()}", first[0].body) for n in range(3)])
        got = e.queue.receive(10, "racer")
        copies = [m for m in got if m.group.startswith("copy-")]
        e.queue.hide([(m.receipt, 0.0) for m in got if m not in copies])  # the other hosts' tokens: back at once
        threads = [threading.Thread(target=process_batch, args=([m], e.crawler, e.queue, e.store, e.results,
                                                                 e.journal, e.db)) for m in first + copies]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    h = Harness(tmp_path, profile(), web).crawl(race)
    check(web, h)
    for s in web.servers:
        log = s.log()
        assert all(b.t_start >= a.t_end for a, b in pairwise(log)), "two requests in flight to one host"


def test_poison_and_undecodable_messages_are_set_aside_with_a_reason(web: FaultWeb, tmp_path: Path) -> None:
    host = f"http://{web.servers[0].host}"

    def poison(h: Harness) -> None:
        # The token with a bad item travels in its host's group, as every token does: ahead of the
        # round's token for that host, not beside it (in a group of its own, its turn could find
        # the round's turn holding the host and come back only after the run).
        h.engine.queue.send_raw([(group, f"p{n}", body) for n, (group, body) in enumerate(
            [("p0", "not json"), ("p1", json.dumps({"host": "nowhere"})),
             (host, json.dumps({"v": 2, "host": host, "tok": "bad", "items": [{"u": host + "/x"}]}))])])
        h.engine.tick(tasks=["feed"])

    h = Harness(tmp_path, profile(), web).crawl(poison)
    reasons = Counter(s["reason"] for s in h.skips())
    assert reasons["bad_token"] == 2 and reasons["bad_work_item"] == 1
    check(web, h)
    with h.db.read() as c:
        assert c.execute("SELECT max(receives) FROM dead").fetchone()[0] is None  # nothing went dead
    assert ROTATE_AT < h.engine.queue.max_receive_count


def test_a_token_that_keeps_failing_is_charged_then_dead_lettered_and_redriven(web: FaultWeb,
                                                                                tmp_path: Path) -> None:
    # GIVEN one host whose turns fail for good (a bug), and a queue that gives a token up after 10
    # receives (above what a sound host's token needs here: five requests, a receive each, and a few
    # deferrals)
    h = Harness(tmp_path, profile(), web)
    h.engine.queue.max_receive_count = 10
    bad = f"http://{web.servers[0].host}"
    turn = h.engine.crawler.host_turn

    def failing(token: Any, snapshot: Any = None) -> Any:
        if token.host == bad and h.faults[0].fired < 12:
            h.faults[0].fired += 1
            raise RuntimeError("a bug in a turn")
        return turn(token, snapshot)
    h.faults.append(Fault(h.engine.crawler, "host_turn", "call"))
    h.engine.crawler.host_turn = failing  # type: ignore[method-assign]
    h.crawl()
    # THEN its work item was charged and given up (processing_failed), never looping; or its token
    # went to the dead-letter table, from which a redrive brings it back
    reasons = Counter(s["reason"] for s in h.skips())
    dead = h.engine.queue.dead_letters()
    assert reasons["processing_failed"] >= 1 or dead, (reasons, dead)
    assert [r.path for r in web.servers[0].log()] in ([], ["/robots.txt"], ["/robots.txt", "/feed.xml"])
    if dead:
        moved = h.engine.queue.redrive()
        assert [m["group"] for m in moved] == [bad] and h.engine.queue.dead_letters() == []
    # AND the sound hosts were crawled to the end, untouched by the bad one
    for server in web.servers[1:]:
        assert {f"/a/{i}" for i in range(3)} <= {r.path for r in server.log()}


@pytest.mark.parametrize("slack", [0.0, 0.4])
def test_a_hosts_own_token_is_hidden_longer_by_the_profiles_end_stamp_slack(web: FaultWeb, tmp_path: Path,
                                                                             slack: float) -> None:
    """politeness.end_stamp_slack_s: every gap a host's own token keeps is that much longer (a
    site stamps a request's end after the bot does); at 0 the gaps sit at the profile's delay."""
    h = Harness(tmp_path, profile(politeness={"end_stamp_slack_s": slack}), web).crawl()
    check(web, h)
    gaps = sorted(g for host_gaps in site_gaps(web).values() for g in host_gaps)
    assert gaps and gaps[0] >= GAP
    median = gaps[len(gaps) // 2]
    assert GAP + slack <= median < GAP + slack + 0.15, (slack, gaps)

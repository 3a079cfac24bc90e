"""How many turns one process of the embedded engine runs at once (heed_embedded.concurrency):
the turns at work held to a few while the turns waiting on the network are as many as come, a
turn back from the network served before a new one, threads made when needed and gone when
idle, and the machine's bounds (memory, file descriptors) and the profile's ``max_in_flight``."""
from __future__ import annotations

import resource
import threading
import time
from pathlib import Path

import pytest

from heed_core.errors import ConfigError
from heed_core.profile import load_profile_data

from heed_embedded import concurrency
from heed_embedded.concurrency import MAX_TURNS, Slots, TurnPool, concurrency_cap, default_processes
from heed_embedded.db import Database
from heed_embedded.engine import Engine


class Wakes:
    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> None:
        self.n += 1


def _started(slots: Slots, n: int) -> None:
    assert slots.free() >= n
    slots.start(n)


def test_turns_waiting_on_the_network_free_their_slot_for_new_turns() -> None:
    # GIVEN 4 slots for turns at work, 100 turns at most
    wakes = Wakes()
    slots = Slots(100, 4, wakes)
    _started(slots, 4)
    assert slots.free() == 0
    # WHEN the four wait on their sites
    for _ in range(4):
        slots.give()
    # THEN four more may start, the loop told each time, and 8 are in flight
    assert slots.free() == 4 and wakes.n == 4
    _started(slots, 4)
    assert (slots.busy, slots.active, slots.waiting, slots.peak_waiting) == (8, 4, 4, 4)


def test_in_flight_never_passes_the_cap_however_many_wait() -> None:
    slots = Slots(6, 4, Wakes())
    _started(slots, 4)
    for _ in range(4):
        slots.give()
    # Two more reach the cap of 6 in flight, though the slots at work are free.
    assert slots.free() == 2
    _started(slots, 2)
    slots.give()
    assert slots.free() == 0 and slots.busy == 6


def test_an_answer_waits_for_a_slot_and_goes_before_new_turns() -> None:
    # GIVEN two turns at work (the 2 slots taken) and one waiting on its site
    slots = Slots(100, 2, Wakes())
    _started(slots, 2)
    slots.give()
    _started(slots, 1)
    done = threading.Event()

    def answer() -> None:
        slots.take("answer")  # its answer is in: no slot is free
        done.set()
    t = threading.Thread(target=answer)
    t.start()
    assert not done.wait(0.1)
    # WHEN a turn at work ends, THEN its slot goes to the answer, not to a new turn
    assert slots.free() == 0
    slots.end()
    assert done.wait(2)
    t.join()
    assert slots.active == 2 and slots.free() == 0


def test_a_request_about_to_leave_takes_a_slot_before_the_answers() -> None:
    slots = Slots(100, 1, Wakes())
    _started(slots, 1)
    slots.give()
    _started(slots, 1)
    slots.give()
    _started(slots, 1)  # the one slot at work is taken; two turns wait on the network
    order: list[str] = []

    def take(why: str) -> None:
        slots.take(why)
        order.append(why)
        slots.end()
    answer = threading.Thread(target=take, args=("answer",))
    answer.start()
    time.sleep(0.05)
    mark = threading.Thread(target=take, args=("mark",))
    mark.start()
    time.sleep(0.05)
    slots.end()  # the slot comes free: the mark first, though the answer waited longer
    mark.join(2)
    answer.join(2)
    assert order == ["mark", "answer"]


def _answer_while_hosts_are_due(wait_s: float) -> tuple[Slots, threading.Event, threading.Thread]:
    """One slot at work, answers giving way for ``wait_s``; its turn waits on its site, the loop
    finds hosts due, and the answer comes in (``got`` is set once it has its slot)."""
    slots = Slots(100, 1, Wakes(), answer_wait_s=wait_s)
    _started(slots, 1)
    slots.give()
    slots.due(True)
    got = threading.Event()
    t = threading.Thread(target=lambda: (slots.take("answer"), got.set()))
    t.start()
    return slots, got, t


def test_while_hosts_are_due_an_answer_gives_way_to_their_turns_for_a_while_then_goes_first() -> None:
    # GIVEN one slot at work, answers that give way for 0.3 s, and a turn waiting on its site
    # WHEN the loop finds hosts due and the answer comes in
    slots, got, t = _answer_while_hosts_are_due(0.3)
    # THEN the free slot goes to a new turn (a host that is due), not to the answer
    assert not got.wait(0.1)
    assert slots.free() == 1
    _started(slots, 1)
    slots.give()  # that turn's request is out: its slot comes free, and hosts are still due
    assert not got.wait(0.05) and slots.free() == 1
    # and once the answer gave way its while, it is first in line: the slot is its own
    assert got.wait(2)
    t.join()
    assert slots.free() == 0 and slots.active == 1


def test_with_no_host_due_an_answer_takes_the_free_slot_at_once() -> None:
    slots, got, t = _answer_while_hosts_are_due(30.0)
    assert not got.wait(0.1)
    # WHEN the loop looks again and finds no host due, THEN the answer waiting takes the slot
    slots.due(False)
    assert got.wait(2)
    t.join()
    # and an answer that comes when nothing is due takes a free slot without waiting
    slots.end()
    _started(slots, 1)
    slots.give()
    slots.take("answer")
    assert slots.active == 1


def test_the_loop_is_told_only_when_a_new_turn_may_start_or_none_is_left() -> None:
    # GIVEN one slot at work, its turn at work, and an answer waiting for a slot
    wakes = Wakes()
    slots = Slots(100, 1, wakes)
    _started(slots, 1)
    slots.give()
    _started(slots, 1)
    wakes.n = 0
    got = threading.Event()
    t = threading.Thread(target=lambda: (slots.take("answer"), got.set()))
    t.start()
    assert not got.wait(0.05)
    # WHEN the turn at work waits on its site: its slot goes to the answer
    slots.give()
    assert got.wait(2)
    t.join()
    # THEN the loop is not woken: no new turn could start
    assert wakes.n == 0 and slots.free() == 0
    # and when that turn ends, its slot is free for a new one: the loop is told
    slots.end()
    assert wakes.n == 1 and slots.free() == 1
    # as it is when the last turn in flight ends, a fixed pool's too (what the loop's wait for idle needs)
    capped = Slots(1, 1, wakes)
    _started(capped, 1)
    wakes.n = 0
    capped.end()
    assert wakes.n == 1 and capped.busy == 0


def test_a_thread_holding_the_write_lock_never_waits_for_a_slot() -> None:
    slots = Slots(100, 1, Wakes())
    _started(slots, 1)
    slots.give()
    _started(slots, 1)
    slots.take("answer", now=True)  # would wait otherwise: every other turn may be waiting for its lock
    assert slots.active == 2


def test_a_fixed_pool_keeps_each_turn_its_slot_while_it_waits() -> None:
    # --threads N: N turns at once, waiting or not, as the old pool did
    slots = Slots(3, 3, Wakes())
    _started(slots, 3)
    slots.give()
    assert slots.free() == 0
    slots.take("answer")
    slots.end()
    assert slots.free() == 1 and slots.peak_waiting == 1


def test_the_pool_starts_a_thread_only_when_none_is_idle_and_ends_idle_ones(tmp_path: Path) -> None:
    exited: list[str] = []
    pool = TurnPool("t", idle_s=0.2, on_exit=lambda: exited.append(threading.current_thread().name))
    gate = threading.Event()
    ran: list[int] = []
    for i in range(3):
        pool.submit(lambda i=i: (gate.wait(2), ran.append(i)))  # type: ignore[misc]
    assert pool.threads == 3  # three jobs at once: three threads
    gate.set()
    deadline = time.monotonic() + 2
    while len(ran) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    pool.submit(lambda: ran.append(3))  # an idle thread takes it: none is started
    assert pool.threads == 3 and pool.peak == 3
    deadline = time.monotonic() + 3
    while pool.threads and time.monotonic() < deadline:
        time.sleep(0.02)
    assert pool.threads == 0 and sorted(ran) == [0, 1, 2, 3] and len(exited) == 3


def test_threads_share_the_idle_connections_and_none_moves_with_a_transaction_open(tmp_path: Path) -> None:
    db = Database(tmp_path / "heed.db")
    with db.write() as c:
        c.execute("CREATE TABLE t (x INTEGER)")
    first = db.conn()
    db.put_back()  # this thread waits on the network: its connection is another's
    took: list[object] = []
    worker = threading.Thread(target=lambda: (took.append(db.conn()), db.put_back()))
    worker.start()
    worker.join()
    assert took == [first]  # the idle connection was taken, none opened
    with db.write() as c:
        c.execute("INSERT INTO t VALUES (1)")
        db.put_back()  # inside a transaction: the connection stays with it
        assert db.conn() is c
    with db.batch():
        with db.write() as c:
            c.execute("INSERT INTO t VALUES (2)")
        db.put_back()  # a batch's transaction is open until its end (or a flush)
        assert db.conn() is c and c.in_transaction
        db.flush()
        db.put_back()  # committed: now it may go
        with db.write() as c2:
            c2.execute("INSERT INTO t VALUES (3)")
    with db.read() as c:
        assert [r[0] for r in c.execute("SELECT x FROM t ORDER BY x")] == [1, 2, 3]
    db.close()


def test_a_job_that_raises_does_not_take_its_thread_down() -> None:
    pool = TurnPool("t", idle_s=5)
    ran = threading.Event()

    def boom() -> None:
        raise KeyboardInterrupt  # a BaseException: as a ThreadPoolExecutor's future would hold it
    pool.submit(boom)
    time.sleep(0.05)
    pool.submit(ran.set)
    assert ran.wait(2) and pool.threads == 1
    pool.close()


def test_the_cap_follows_the_file_descriptors_and_the_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    real = resource.getrlimit

    def limits(which: int) -> tuple[int, int]:
        if which == resource.RLIMIT_NOFILE:
            return (364, 364)  # no higher hard limit to raise the soft one to
        return real(which)
    monkeypatch.setattr(resource, "getrlimit", limits)
    monkeypatch.setattr(concurrency, "_memory_available", lambda: 64 << 30)
    assert concurrency_cap(1) == ((364 - concurrency.FD_MARGIN) // concurrency.FDS_PER_TURN, "RLIMIT_NOFILE")
    monkeypatch.setattr(concurrency, "_memory_available", lambda: 600 << 20)  # a small VPS
    cap, bound = concurrency_cap(2)
    assert bound == "memory" and cap == (600 << 20) // 2 // 2 // concurrency.TURN_MEMORY
    monkeypatch.setattr(concurrency, "_memory_available", lambda: None)
    monkeypatch.setattr(resource, "getrlimit", lambda which: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    assert concurrency_cap(1) == (MAX_TURNS, "MAX_TURNS")


def test_two_processes_a_core_by_default_as_the_memory_allows(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a machine of 2 cores with memory to spare: two processes a core
    monkeypatch.setattr(concurrency, "_memory_available", lambda: 16 << 30)
    assert default_processes(2) == 2 * concurrency.PROCESSES_PER_CORE == 4
    # a small VPS (600 MB available, 1 core): half of it holds one process, not two
    monkeypatch.setattr(concurrency, "_memory_available", lambda: 600 << 20)
    assert default_processes(1) == 1
    # a machine that says nothing of its memory: the cores decide; never fewer than one
    monkeypatch.setattr(concurrency, "_memory_available", lambda: None)
    assert default_processes(3) == 6
    monkeypatch.setattr(concurrency, "_memory_available", lambda: 0)
    assert default_processes(8) == 1


def test_aube_11_max_in_flight_caps_the_turns_of_every_process(tmp_path: Path) -> None:
    # GIVEN AubeBot's one request at a time over all hosts
    aube = load_profile_data({"extends": "aubebot"})
    assert aube.politeness.max_in_flight == 1
    engine = Engine(aube, Database(tmp_path / "heed.db"), _Clock(), _Journal(), session="s")
    # THEN one turn at a time, fixed (it keeps its slot while it waits)
    assert (engine.slots.cap, engine.slots.fixed, engine.bound) == (1, True, "politeness.max_in_flight")
    # and a profile of 5 at once over 2 processes: 2 each, never 3 + 3
    five = load_profile_data({"extends": "aubebot", "politeness": {"max_in_flight": 5}})
    engine = Engine(five, Database(tmp_path / "heed2.db"), _Clock(), _Journal(), session="s", processes=2)
    assert engine.slots.cap == 2
    # and without a limit the cap is the machine's, the turns at work a few
    free = load_profile_data({"extends": "aubebot", "politeness": {"max_in_flight": None}})
    engine = Engine(free, Database(tmp_path / "heed3.db"), _Clock(), _Journal(), session="s")
    assert engine.slots.cap > engine.slots.active_cap and not engine.slots.fixed


class _Clock:
    def now(self) -> float:
        return time.time()


class _Journal:
    def request(self, record: dict[str, object]) -> None:
        pass

    def skip(self, record: dict[str, object]) -> None:
        pass


def test_the_engine_asks_the_kinds_for_a_render_service_and_a_language_model(tmp_path: Path) -> None:
    # GIVEN WannadoBot reading its agenda pages through a language model on Bedrock (WANNADO-10)
    llm = load_profile_data({"extends": "wannadobot",
                             "tasks": {"agenda": {"extractor": "bedrock", "bedrock_model_id": "model-1"}}})
    # THEN one machine refuses it in one line, naming the model (an AWS service)
    with pytest.raises(ConfigError, match="model-1"):
        Engine(llm, Database(tmp_path / "heed.db"), _Clock(), _Journal(), session="s")
    # and a render service the kinds name is the engine's (WANNADO-09)
    rendered = load_profile_data({"extends": "wannadobot",
                                  "tasks": {"agenda": {"render_endpoint": "http://127.0.0.1:9/render"}}})
    engine = Engine(rendered, Database(tmp_path / "heed2.db"), _Clock(), _Journal(), session="s")
    assert engine.crawler.render is not None

"""How many turns one process of the embedded engine runs at once: as many as the work asks for.

A turn is work (its plan, the parse of the answer, the commit) around waits on the network (DNS
and the connection; the request and its answer). ``Slots`` keeps the turns at work at ``active``
or fewer, and lets as many turns wait on the network as come, up to ``cap``: while sites take
their time more turns start, and requests in flight are what Little's law says, the rate at
which hosts come due (bounded by the CPU) times how long sites take to answer: a few for sites
on loopback, hundreds for slow ones, as many as the hosts due when all of them wait on slow
sites. A turn whose connection is made takes a slot again before anything else (the mark of its
request, which leaves right after). An answer gives way to the hosts that are due, for
half the bot's shortest gap at most (``ANSWER_GIVES_WAY``), then goes before them: the
next request of its host counts its gap from the answer's end, not from when it is read, so a
wave of hosts due at once (a round's first requests) goes out before the first answers are
parsed. Only ``active`` turns ever compete for the CPU and the database's write lock (each of
them waits less for it, and the queue's order of due tokens, the longest chains first, still
says who is served first).

``cap`` is what the machine allows a process (``concurrency_cap``: the memory available, the
file descriptors, the address space), lower when the profile caps requests at once
(``politeness.max_in_flight``: AUBE-11's one over all hosts); ``TurnPool`` gives each turn a
thread, started when none is idle and ended after ``IDLE_THREAD_S`` with nothing to do."""
from __future__ import annotations

import os
import resource
import threading
import time
from collections import deque
from collections.abc import Callable

__all__ = ["ACTIVE_TURNS", "ANSWER_GIVES_WAY", "PROCESSES_PER_CORE", "Slots", "TurnPool", "concurrency_cap",
           "default_processes"]

ACTIVE_TURNS = 16  # turns of one process at work at once (the old fixed pool's size: 4, 8 and 32 did no better)
# An answer gives way to hosts that are due for at most this share of the shortest gap the bot
# keeps: its host's next request counts its gap from the answer's end, not from when it is read.
ANSWER_GIVES_WAY = 0.5  # (a quarter: the first wave at 1,000 x 5, 20 ms, 0.93-1.04 s; a half: 0.76-0.78 s)
IDLE_THREAD_S = 30.0  # a turn's thread with nothing to do for this long ends
MAX_TURNS = 1024  # turns at once in one process, whatever the machine allows
# What a turn in flight may hold: its thread's stack, a page and its parse, its thread's SQLite
# connection and page cache (``Database.conn``: one a thread, up to 4 MB). The bench's turns hold
# under 1 MB (10,000 hosts at the mix of latencies: 380 MB for 340 threads); a real site's page
# is bigger.
TURN_MEMORY = 6 << 20
FDS_PER_TURN = 3  # a request's socket, its thread's connection to the database and its WAL
FD_MARGIN = 64  # the logs, the lock files, the interpreter's own
# Processes crawling a core, by default. The one write lock's holder waits for its process's GIL
# between its statements, behind the threads of that process that read answers and parse them;
# with two a core each process has half of them, and the lock is held shorter (10,000 x 3 with the
# latency mix: 0.33 of the ideal against 0.29 with one a core, alternating; docs/performance.md).
PROCESSES_PER_CORE = 2
PROCESS_MEMORY = 256 << 20  # what a crawling process may come to hold (the bench's: 100 MB at 10,000 x 3)


def _memory_available() -> int | None:
    """Bytes of memory this process may still take: the kernel's MemAvailable, or less when its
    cgroup (a systemd ``MemoryMax=``, a container's limit) leaves less."""
    found: list[int] = []
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            found += [int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:")]
        with open("/proc/self/cgroup", encoding="ascii") as f:
            group = next((line.strip()[3:] for line in f if line.startswith("0::")), None)
        if group is not None:
            with open(f"/sys/fs/cgroup{group}/memory.max", encoding="ascii") as f:
                limit = f.read().strip()
            if limit != "max":
                with open(f"/sys/fs/cgroup{group}/memory.current", encoding="ascii") as f:
                    found.append(int(limit) - int(f.read()))
    except (OSError, ValueError):
        pass
    return max(0, min(found)) if found else None


def default_processes(cores: int | None = None) -> int:
    """How many processes ``heed serve`` crawls with when not told: ``PROCESSES_PER_CORE`` a core
    it may run on (its CPU affinity: a container's or systemd's ``CPUAffinity=``), no more than
    half the memory available holds at ``PROCESS_MEMORY`` each, at least one."""
    n = PROCESSES_PER_CORE * max(1, cores if cores is not None else (os.process_cpu_count() or 1))
    available = _memory_available()
    if available is not None:
        n = min(n, available // 2 // PROCESS_MEMORY)
    return max(1, n)


def concurrency_cap(processes: int = 1) -> tuple[int, str]:
    """How many turns one of ``processes`` processes may have in flight on this machine, and what
    bounds it: half the memory available, shared by the processes, at ``TURN_MEMORY`` a turn;
    the file descriptors (``RLIMIT_NOFILE``, its soft limit first raised towards the hard one,
    as systemd asks of a program that needs more) at ``FDS_PER_TURN`` a turn; a finite
    ``RLIMIT_AS`` at a thread's stack a turn; at most ``MAX_TURNS``."""
    processes = max(1, processes)
    bounds = {"MAX_TURNS": MAX_TURNS}
    available = _memory_available()
    if available is not None:
        bounds["memory"] = available // 2 // processes // TURN_MEMORY
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = MAX_TURNS * FDS_PER_TURN + FD_MARGIN
    if soft != resource.RLIM_INFINITY and soft < want:
        raised = want if hard == resource.RLIM_INFINITY else min(hard, want)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
        except (OSError, ValueError):
            pass
    if soft != resource.RLIM_INFINITY:
        bounds["RLIMIT_NOFILE"] = (soft - FD_MARGIN) // FDS_PER_TURN
    space = resource.getrlimit(resource.RLIMIT_AS)[0]
    if space != resource.RLIM_INFINITY:
        bounds["RLIMIT_AS"] = space // 2 // processes // (threading.stack_size() or 8 << 20)
    bound = min(bounds, key=lambda k: bounds[k])
    return max(1, bounds[bound]), bound


class Slots:
    """The turns of one process (the module's docstring): at most ``cap`` in flight, at most
    ``active`` of them at work; with ``active >= cap`` (a fixed pool) a turn keeps its slot
    from start to end. Otherwise a turn gives its slot back (``give``) for every wait on the
    network and takes one again (``take``) for the work after it, waiting for one if none is
    free: the mark of its request (``"mark"``) before anything; the answers (``"answer"``)
    before new turns, unless the loop found hosts due (``due``): then after them, for
    ``answer_wait_s`` at most. The loop asks ``free`` and ``start``s that many turns; a turn
    calls ``end`` when it is over. ``wake`` tells the loop a slot came free for a new turn
    (never called under this object's lock)."""

    def __init__(self, cap: int, active: int, wake: Callable[[], None], *, answer_wait_s: float = 0.0) -> None:
        self.cap = max(1, cap)
        self.active_cap = max(1, min(active, self.cap))
        self.fixed = self.active_cap >= self.cap
        self._wake = wake
        self._lock = threading.Lock()
        self.busy = 0  # turns in flight
        self.active = 0  # turns holding a slot
        self.waiting = 0  # turns waiting on the network
        self.peak_waiting = 0
        self._marks: deque[threading.Event] = deque()  # turns waiting for a slot to mark their request
        self._answers: deque[threading.Event] = deque()  # turns waiting for a slot for their answer
        self._overdue: deque[threading.Event] = deque()  # answers that waited ``answer_wait_s`` already
        self.answer_wait_s = answer_wait_s  # how long an answer gives way to hosts that are due
        self.starts_first = False  # hosts are due (``due``): they go before answers, for ``answer_wait_s``

    def _hand_over(self) -> None:
        """Free slots to the turns waiting for one (under the lock): the marks, the answers that
        waited their while, then the other answers unless hosts are due."""
        while self.active < self.active_cap:
            line = self._marks or self._overdue or (None if self._starts_wait() else self._answers)
            if not line:
                return
            self.active += 1
            line.popleft().set()

    def _starts_wait(self) -> bool:
        """Whether answers give way to new turns now: hosts are due, and one may start."""
        return self.starts_first and self.busy < self.cap

    def _owed(self) -> int:
        return len(self._marks) + len(self._overdue) + (0 if self._starts_wait() else len(self._answers))

    def free(self) -> int:
        """How many new turns may start now."""
        with self._lock:
            return self._free()

    def _free(self) -> int:
        return max(0, min(self.cap - self.busy, self.active_cap - self.active - self._owed()))

    def _tells(self) -> bool:
        """Whether the loop is told of a slot given back (under the lock): only when a new turn may
        start now (always so when none is left in flight: the loop's wait for idle). A slot
        handed to a turn waiting for one changes nothing the loop could do; woken for it, it
        would look and wait again (a thread's wake, across CPUs, for nothing: docs/performance.md)."""
        return self._free() > 0

    def due(self, due: bool) -> None:
        """What the loop found when it last looked at the queue: hosts due (their turns start
        before answers are read, each answer for ``answer_wait_s`` at most: the request of a
        host that waits goes out, where an answer's gap is already counted from its end) or
        none (the answers waiting take the free slots)."""
        if self.fixed or not self.answer_wait_s:
            return
        with self._lock:
            self.starts_first = due
            if not due:
                self._hand_over()

    def start(self, n: int) -> None:
        with self._lock:
            self.busy += n
            self.active += n

    def give(self) -> None:
        """The turn waits on the network: its slot goes to another."""
        with self._lock:
            self.waiting += 1
            self.peak_waiting = max(self.peak_waiting, self.waiting)
            if self.fixed:
                return
            self.active -= 1
            self._hand_over()
            tell = self._tells()
        if tell:
            self._wake()

    def take(self, why: str, *, now: bool = False) -> None:
        """The turn has work again (``"mark"`` or ``"answer"``): it waits for a slot (``now``: it
        takes one at once, over ``active`` if need be: its thread holds what other turns may
        be waiting for, the database's write lock)."""
        with self._lock:
            self.waiting -= 1
            if self.fixed:
                return
            if now or (self.active < self.active_cap and not self._marks and (why == "mark" or not (
                    self._answers or self._overdue or self._starts_wait()))):
                self.active += 1
                return
            given = threading.Event()
            (self._marks if why == "mark" else self._answers).append(given)
        if why == "answer" and self.answer_wait_s and not given.wait(self.answer_wait_s):
            with self._lock:
                if not given.is_set():
                    # It gave way long enough: first in line now, before any new turn.
                    self._answers.remove(given)
                    self._overdue.append(given)
                    self._hand_over()
        given.wait()

    def end(self) -> None:
        with self._lock:
            self.busy -= 1
            self.active -= 1
            self._hand_over()
            tell = self._tells()
        if tell:
            self._wake()


class TurnPool:
    """Threads for the engine's turns, as many as it asks for: a turn submitted runs on an idle
    thread, or a new one when none is idle; a thread idle for ``idle_s`` ends, ``on_exit`` (its
    database connection given back) called on it first. How many turns run at once is ``Slots``'s
    to decide, never the pool's."""

    def __init__(self, name: str, *, idle_s: float = IDLE_THREAD_S,
                 on_exit: Callable[[], None] | None = None) -> None:
        self.name = name
        self.idle_s = idle_s
        self.on_exit = on_exit
        self._cond = threading.Condition()
        self._jobs: deque[Callable[[], None]] = deque()
        self._idle = 0
        self._closed = False
        self._started = 0
        self.threads = 0
        self.peak = 0  # the most threads it had at once

    def submit(self, job: Callable[[], None]) -> None:
        with self._cond:
            self._jobs.append(job)
            if self._idle >= len(self._jobs):
                self._cond.notify()
                return
            self.threads += 1
            self._started += 1
            self.peak = max(self.peak, self.threads)
            name = f"{self.name}-{self._started}"
        threading.Thread(target=self._work, name=name, daemon=True).start()

    def _work(self) -> None:
        while True:
            with self._cond:
                self._idle += 1
                until = time.monotonic() + self.idle_s
                while not self._jobs and not self._closed and (left := until - time.monotonic()) > 0:
                    self._cond.wait(left)
                self._idle -= 1
                if not self._jobs:
                    self.threads -= 1
                    break
                job = self._jobs.popleft()
            try:
                job()
            except BaseException:  # noqa: BLE001 - the job's own, as a ThreadPoolExecutor's future holds it
                pass
        if self.on_exit is not None:
            self.on_exit()

    def close(self) -> None:
        """Idle threads end now (a job still queued runs first)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

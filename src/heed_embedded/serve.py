"""``heed serve``: a bot that runs for months on one machine, every core at work.

The process that holds the state directory (``EmbeddedState.serve_lock``) first hands back at
once whatever tokens a process before it held (it was killed: ``WorkQueue.release``) and makes
their hosts safe (``Engine.recover``), then starts ``workers - 1`` worker processes beside itself
(each an ``Engine`` on the same database, with threads for the requests: parsing and extraction
run on every core, each process under its own GIL). It fires the profile's schedules on the
wall clock (``scheduler.tick``), exports the events table to ``events.jsonl``, writes a JSON log
line on stdout for each request, skip, round and trouble (its time stamp left to journald where
it is journald's), and a progress line on stderr when something changed (a bar on a terminal:
``heed_embedded.console``). A worker that dies is replaced, its tokens handed back. SIGTERM (or
SIGINT) stops it: no new turn starts, the requests in flight end and are committed, and it
exits within ``grace_s``. ``once``: one round of every task now, until no work is left within
``patience_s``, then exit."""
from __future__ import annotations

import ctypes
import json
import multiprocessing
import os
import signal
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from heed_core.adapters.webhook_post import WebhookPoster
from heed_core.errors import HeedError
from heed_core.ports import SystemClock
from heed_core.profile import Profile, load_profile_data
from heed_core.webhook import Endpoint

from heed_embedded.concurrency import default_processes
from heed_embedded.console import Progress, Totals, to_journal
from heed_embedded.db import Database
from heed_embedded.engine import LEAD_S, Engine, key_file_signer
from heed_embedded.journal import SqliteJournal
from heed_embedded.memory import Trimmer
from heed_embedded.results import export_events
from heed_embedded.retention import Retention, ensure_incremental, prune
from heed_embedded.scheduler import META_KEY, next_firing
from heed_embedded.state import DATABASE, EmbeddedState
from heed_embedded.webhooks import Deliverer, stopped

__all__ = ["JsonLog", "ServeOptions", "serve"]

_STATS = ("requests", "skips", "events", "turns", "failures", "transient", "faults", "rounds")
_MAX_LINE = 4000  # a log line stays under PIPE_BUF: processes side by side never interleave one
_PRUNE_S = 3600.0


@dataclass(frozen=True)
class ServeOptions:
    once: bool = False
    workers: int = 0  # processes, this one included (0: concurrency.default_processes)
    threads: int = 0  # turns at once in each process (0: as many as the work asks, Engine's docstring)
    batch: int = 1
    patience_s: float = 15.0  # --once: how long to wait for hidden work before ending
    allow_private: bool = False
    quiet: bool = False  # no log line per request and skip
    grace_s: float = 10.0
    synchronous: str = "FULL"


def _now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class JsonLog:
    """One JSON object a line on ``fd`` (stdout), each written whole with one ``write``. To journald
    (``console.to_journal``), which stamps every line itself, a line has no ``t`` of its own and
    begins with its syslog priority (``<4>`` a warning, ``<6>`` the rest: ``journalctl -p warning``),
    which journald takes off."""

    def __init__(self, bot: str, fd: int = 1, *, quiet: bool = False) -> None:
        self.bot = bot
        self.fd = fd
        self.quiet = quiet
        self.lock = threading.Lock()
        self.journal = to_journal(fd)

    def __call__(self, event: str, fields: dict[str, Any]) -> None:
        if self.quiet and event in ("request", "skip"):
            return
        level = "warning" if event in _TROUBLE else "info"
        rec = {**({} if self.journal else {"t": _now_iso()}), "level": level, "bot": self.bot, "event": event,
               **fields}
        line = json.dumps(rec, ensure_ascii=False, default=str, separators=(",", ":"))
        if len(line.encode("utf-8")) > _MAX_LINE:
            rec = {k: (v[:300] + "…" if isinstance(v, str) and len(v) > 300 else v) for k, v in rec.items()}
            line = json.dumps(rec, ensure_ascii=False, default=str, separators=(",", ":"))[:_MAX_LINE]
        if self.journal:
            line = ("<4>" if level == "warning" else "<6>") + line
        try:
            os.write(self.fd, (line + "\n").encode("utf-8"))
        except (BrokenPipeError, OSError):
            pass  # the reader of our log is gone: the crawl goes on (its state is in the database)


_TROUBLE = frozenset({"transient", "failure", "service_fault", "drain", "batch_failed", "worker_died", "times_ahead",
                      "recovered", "webhook_retry", "webhook_dead", "webhook_gone", "webhook_trouble", "prune_failed",
                      "desk_action"})  # a site owner's stop, slow down or remove (the desk): the operator is told


class _Tally:
    """What a process counted, where the serving process can read it (shared memory)."""

    def __init__(self, array: Any) -> None:
        self.array = array
        self.lock = threading.Lock()

    def add(self, what: str, n: int = 1) -> None:
        if what in _STATS:
            with self.lock:
                self.array[_STATS.index(what)] += n

    def get(self) -> dict[str, int]:
        return {k: int(self.array[i]) for i, k in enumerate(_STATS)}


def _journal(db: Database, log: JsonLog, tally: _Tally) -> SqliteJournal:
    """The request and skip log: a row each, in the transaction of the turn that made it."""
    def tap(what: str, record: dict[str, Any]) -> None:
        tally.add("requests" if what == "request" else "skips")
        log(what, record)
    return SqliteJournal(db, tap=tap)


def _engine(profile: Profile, db: Database, state_path: Path, opts: ServeOptions, session: str, log: JsonLog,
            tally: _Tally) -> tuple[Engine, SqliteJournal]:
    journal = _journal(db, log, tally)
    engine = Engine(profile, db, SystemClock(), journal, session=session, threads=opts.threads,
                    processes=max(1, opts.workers), batch=opts.batch,
                    allow_private=opts.allow_private, signer=key_file_signer(profile), log=log, lead_s=LEAD_S)
    original = engine.count

    def count(what: str, n: int = 1) -> None:
        original(what, n)
        tally.add(what, n)
    engine.count = count  # type: ignore[method-assign]
    return engine, journal


def _session() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _die_with_parent(parent: int) -> None:
    """A worker never outlives the process that serves the directory (a SIGKILL of it included)."""
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(0)


def _worker(spec: dict[str, Any], array: Any, stop: Any) -> None:
    """A worker process: an engine on the directory's database until told to stop."""
    _die_with_parent(int(spec["parent"]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the serving process tells us (Ctrl-C reaches the group)
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    opts = ServeOptions(**spec["opts"])
    profile = load_profile_data(spec["profile"])
    path = Path(spec["path"])
    db = Database(path / DATABASE, synchronous=opts.synchronous)
    log = JsonLog(profile.name, quiet=opts.quiet)
    tally = _Tally(array)
    engine, journal = _engine(profile, db, path, opts, str(spec["session"]), log, tally)
    syncer = threading.Thread(target=_sync_loop, args=(journal, stop), daemon=True)
    syncer.start()
    try:
        engine.run(stop)
    finally:
        stop.set()
        syncer.join(5.0)  # (it wakes at once) no sync on a journal being closed
        journal.sync()
        journal.close()
        db.close()


def _sync_loop(journal: SqliteJournal, stop: Any) -> None:
    trimmer = Trimmer()
    while not stop.wait(1.0):
        journal.sync()
        trimmer.maybe()  # the heap's free pages back to the system, once a minute


def serve(profile: Profile, state: EmbeddedState, opts: ServeOptions, *, stderr: TextIO | None = None,
          stop: threading.Event | None = None, on_ready: Callable[[], None] | None = None,
          webhook: Endpoint | None = None, retention: Retention | None = None) -> dict[str, Any]:
    """Serve ``state`` with ``profile`` until SIGTERM/SIGINT (or ``stop``), or, with
    ``opts.once``, until one round is done; with ``webhook``, every result is posted there too
    (``heed_embedded.webhooks``: a thread of this process). The caller holds
    ``state.serve_lock()``. Returns what it did (the counts, the tokens still waiting)."""
    err = stderr or sys.stderr
    log = JsonLog(profile.name, quiet=opts.quiet)
    stop = stop or threading.Event()
    workers = opts.workers or default_processes()
    limit = profile.politeness.max_in_flight
    if limit:
        # AUBE-11: requests at once over all hosts: one thread makes one request at a time.
        workers = max(1, min(workers, int(limit)))
    # (a share each, rounded down: the processes' shares never add up to more than the limit)
    threads = max(1, min(opts.threads or int(limit), int(limit) // workers)) if limit else opts.threads
    opts = ServeOptions(**{**asdict(opts), "threads": threads, "workers": workers})
    ctx = multiprocessing.get_context("spawn")
    own = _Tally(ctx.Array("q", len(_STATS), lock=False))
    engine, journal = _engine(profile, state.db, state.path, opts, _session(), log, own)
    clock = engine.clock
    started = clock.now()
    totals = Totals(state.db)  # the counts of the runs before this one, read before this one counts

    ahead = state.times_ahead(started)
    if ahead is not None:
        log("times_ahead", {"latest": datetime.fromtimestamp(ahead[0], UTC).isoformat(), "detail": ahead[1]})
        print(f"heed: warning: {ahead[1]}", file=err)
    # Whatever a process before this one held, it holds no more: back at once, its hosts made safe.
    released = engine.queue.release()
    if released:
        engine.recover(released)
        log("resumed", {"tokens": len(released), "why": "held by a process that is gone (killed or stopped)"})
    children: list[tuple[Any, _Tally, str, Any]] = []
    spec = {"path": str(state.path), "profile": json.loads(json.dumps(profile.data, default=str)),
            "opts": asdict(opts), "parent": os.getpid()}

    def spawn() -> None:
        session = _session() + f"/w{len(children)}"
        array = ctx.Array("q", len(_STATS), lock=False)
        child_stop = ctx.Event()
        # A worker forked while this process runs no other thread starts at once, its modules
        # already loaded (a spawned one imports them all again: a second of CPU each); one that
        # replaces a dead worker, with threads about, is spawned.
        start = multiprocessing.get_context("fork") if threading.active_count() == 1 and hasattr(os, "fork") else ctx
        if start is not ctx:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
        proc = start.Process(target=_worker, args=({**spec, "session": session}, array, child_stop), daemon=False,
                             name="heed-worker")
        proc.start()
        children.append((proc, _Tally(array), session, child_stop))

    # The workers start now: the tokens of a dead process are back and their hosts safe.
    for _ in range(workers - 1):
        spawn()
    retention = retention or Retention()
    state.set("retention", retention.shown())  # what heed state info shows as in force
    if ensure_incremental(state.db):
        log("vacuumed", {"detail": "the database was rewritten once, so pages freed by retention go back to the "
                                   "file system from now on (incremental auto-vacuum)"})
    engine.store.prune(started)
    engine.queue.prune(started)
    pruned = prune(state.db, started, retention)
    if any(pruned.values()):
        log("pruned", {k: v for k, v in pruned.items() if v})
    state.set("profile", json.loads(json.dumps(profile.data, default=str)))
    tasks: list[str] = sorted({s.task for s in profile.schedules})
    if opts.once or engine.store.get_meta(META_KEY) is None:
        engine.tick(tasks=tasks, now=engine.round_time())  # --once, or the very first start: a round of each task
    else:
        engine.tick()  # the rounds due since the last tick (one of each task, however many were missed)
    last_tick = clock.now()
    counts0 = engine.queue.counts()
    log("start", {"state": str(state.path), "workers": workers, "threads": threads, "once": opts.once,
                  "waiting": counts0["waiting"], "ready": counts0["ready"], "pid": os.getpid()})

    stopping = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        if stopping.is_set():
            os._exit(130 if signum == signal.SIGINT else 143)  # a second signal: now
        stopping.set()
        stop.set()

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)} \
        if threading.current_thread() is threading.main_thread() else {}
    loop = threading.Thread(target=engine.run, args=(stop,), name="heed-engine", daemon=True)
    loop.start()
    hooks: Deliverer | None = None
    hook_thread: threading.Thread | None = None
    if webhook is not None:
        hooks = Deliverer(state.db, webhook, WebhookPoster(), log=log)
        halted = stopped(state.db, webhook.url)
        if halted is not None:
            log("webhook_gone", {"url": webhook.url, "answer": halted.get("answer"),
                                 "detail": "stopped since it answered 410 Gone: `heed events dead --redrive` resumes"})
        hook_thread = threading.Thread(target=hooks.run, args=(stop,), name="heed-webhook", daemon=True)
        hook_thread.start()
    progress = Progress(profile.name, err)
    gone: list[dict[str, int]] = []  # what workers that died had counted
    idle_since: float | None = None
    # Pruned hourly, or more often where a retention is shorter (a tenth of it, a minute at least).
    prune_every = max(60.0, min(_PRUNE_S, retention.requests_s / 10, retention.events_s / 10))
    next_prune = started + prune_every
    exported = 0
    if on_ready is not None:
        on_ready()

    def stats() -> dict[str, int]:
        total = own.get()
        for t in [c[1] for c in children]:
            for k, v in t.get().items():
                total[k] += v
        for g in gone:
            for k, v in g.items():
                total[k] += v
        return total

    trimmer = Trimmer()
    try:
        while not stop.is_set():
            stop.wait(0.25)
            now = clock.now()
            trimmer.maybe()  # the heap's free pages back to the system, once a minute
            for proc, tally, session, child_stop in list(children):
                if not proc.is_alive() and not stop.is_set():
                    # A worker that died: its tokens back at once (their hosts made safe), and a new one.
                    gone.append(tally.get())
                    children.remove((proc, tally, session, child_stop))
                    back = engine.queue.release([session])
                    engine.recover(back)
                    log("worker_died", {"pid": proc.pid, "exitcode": proc.exitcode, "tokens_back": len(back)})
                    spawn()
            if not opts.once:
                nxt = next_firing(profile, last_tick)
                if nxt is not None and now >= nxt:
                    engine.tick()
                    last_tick = now
            exported += export_events(state.db, state.events_log)
            journal.sync()
            if now >= next_prune:
                engine.store.prune(now)
                engine.queue.prune(now)
                try:
                    pruned = prune(state.db, now, retention)
                except HeedError as exc:  # a busy or full disk: the next hour tries again
                    log("prune_failed", {"error": str(exc)[:300]})
                    pruned = {}
                if any(pruned.values()):
                    log("pruned", {k: v for k, v in pruned.items() if v})
                next_prune = now + prune_every
            counts = engine.queue.counts()
            total = stats()
            progress.show(totals.add(total), counts, next_firing(profile, now) if not opts.once else None)
            totals.keep(total)
            if opts.once:
                idle = counts["held"] == 0 and counts["ready"] == 0 and engine.busy() == 0 and (
                    counts["next"] is None or counts["next"] - now > opts.patience_s) and (
                    hooks is None or hooks.idle(opts.patience_s))
                if idle:
                    idle_since = idle_since or time.monotonic()
                    if time.monotonic() - idle_since >= 0.5:
                        break
                else:
                    idle_since = None
    finally:
        stop.set()
        for _, _, _, child_stop in children:
            child_stop.set()
        deadline = time.monotonic() + opts.grace_s
        loop.join(max(0.0, deadline - time.monotonic()))
        if hook_thread is not None:
            hook_thread.join(max(0.0, deadline - time.monotonic()))
        for proc, *_ in children:
            proc.join(max(0.0, deadline - time.monotonic()))
            if proc.is_alive():
                proc.kill()  # past the grace: its tokens are handed back at the next start
                proc.join(1.0)
        exported += export_events(state.db, state.events_log)
        journal.sync()
        journal.close()
        counts = engine.queue.counts()
        total = stats()
        progress.show(totals.add(total), counts, None, force=not progress.tty)
        totals.keep(total, now=True)
        progress.close()
        for s, handler in old.items():
            signal.signal(s, handler)
    delivered = {f"webhook_{k}": v for k, v in hooks.counts.items()} if hooks is not None else {}
    summary = {**total, "waiting": counts["waiting"], "dead": counts["dead"], "exported": exported, **delivered,
               "wall_time_s": round(clock.now() - started, 3), "stopped": "signal" if stopping.is_set() else
               ("idle" if opts.once else "stop")}
    if loop.is_alive():
        summary["cut"] = True  # turns still at work past the grace: their tokens come back at the next start
    log("stop", summary)
    return summary

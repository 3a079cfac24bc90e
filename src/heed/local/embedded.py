"""`heed local run` on the embedded engine (heed_embedded): the same rounds as the AWS-fidelity run
(``heed.local.runtime.LocalRun``), on the SQLite ports, in this process.

Without ``--state`` the run's database is a throwaway in a temporary folder and its clock may be
simulated (``--start``, ``--until``: wall-clock speed while work is pending, a jump to the next
due token or round when idle), its records marked as such. With ``--state DIR`` it is the
directory's database, on the wall clock (a simulated run is refused there: the directory keeps
true time), and every request and skip also goes to the directory's request log (its tables)."""
from __future__ import annotations

import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from heed_core.crawl import iso
from heed_core.politeness import patience
from heed_core.ports import Clock, SystemClock
from heed_core.profile import Profile
from heed_core.rounds import play_rounds
from heed_core.work import Source

from heed_embedded.db import Database
from heed_embedded.engine import Engine, key_file_signer
from heed_embedded.journal import SqliteJournal
from heed_embedded.results import events_since
from heed_embedded.state import EmbeddedState
from heed_embedded.store import SqliteTexts

from heed.local.clock import SimClock, is_simulated
from heed.local.runtime import Output

__all__ = ["EmbeddedRun"]


class _Tee:
    """The run's journal: its --out files (``Output``) and, with a state directory, its log."""

    def __init__(self, out: Output, also: SqliteJournal | None) -> None:
        self.out = out
        self.also = also

    def request(self, record: dict[str, Any]) -> None:
        self.out.journal("request", record)
        if self.also is not None:
            self.also.request(record)

    def skip(self, record: dict[str, Any]) -> None:
        self.out.journal("skip", record)
        if self.also is not None:
            self.also.skip(record)


class EmbeddedRun:
    """Rounds of ``profile`` on the embedded engine, driven as ``LocalRun`` drives the handlers:
    ``fire(t, tasks)`` starts rounds, ``drain()`` runs until nothing is left within the
    patience, ``advance_to(t)`` moves a simulated clock, letting each hidden token come due."""

    def __init__(self, profile: Profile, sources: list[Source], *, start: float, until: float, out_dir: Path,
                 allow_private: bool, progress: Callable[[str], None] | None = None,
                 patience_s: float | None = None, resolver: Callable[[str, int], list[str]] | None = None,
                 state: EmbeddedState | None = None, threads: int | None = None) -> None:
        self.signer = key_file_signer(profile)  # refused here, before anything exists
        self.profile = profile
        self.sources = sources
        self.start = start
        self.until = max(until, start)
        self.state = state
        self.simulated = state is None and is_simulated(start, self.until)
        self.out = Output(out_dir, simulated=self.simulated)
        self.allow_private = allow_private
        self.progress = progress
        self.resolver = resolver
        p = profile
        pol = p.politeness
        self.patience_s = patience_s if patience_s is not None else patience(pol)
        limit = p.politeness.max_in_flight
        self.threads = max(1, threads or int(limit or 16))
        self.clock: Clock = SystemClock() if state is not None else SimClock(start)
        self.jumps: list[float] = []  # wall times at which the simulated clock jumped ahead
        self.rounds = 0
        self.invocations = 0  # (the AWS run's fetcher invocations; here: batches of turns)
        self._tmp: Path | None = None
        self._seq = 0  # the last event exported to the run's items.jsonl
        self.engine: Engine | None = None

    # --- set-up --------------------------------------------------------------------------------------
    def setup(self) -> None:
        if self.state is not None:
            db = self.state.db
            also: SqliteJournal | None = SqliteJournal(db)
        else:
            self._tmp = Path(tempfile.mkdtemp(prefix="heed-run-"))
            db = Database(self._tmp / "heed.db", synchronous="NORMAL")  # a throwaway: no power cut to survive
            also = None
        self._also = also
        self.db = db
        with db.read("events") as c:
            self._seq = int(c.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0])
        engine = Engine(self.profile, db, self.clock, _Tee(self.out, also), session=f"local-{uuid.uuid4().hex[:8]}",
                        threads=self.threads, allow_private=self.allow_private, resolver=self.resolver,
                        signer=self.signer)
        self.engine = engine
        if self.state is not None:
            back = engine.queue.release()  # a crawl before this one was killed: its tokens, at once
            engine.recover(back)
            from heed.operator.actions import import_sources

            # The sources file is imported: what the crawl learnt of a source (closed, last read) stays.
            import_sources(engine.store, self.sources, time.time())
        else:
            engine.store.put_sources(self.sources)

    @property
    def store(self) -> Any:
        assert self.engine is not None
        return self.engine.store

    @property
    def texts(self) -> SqliteTexts:
        return SqliteTexts(self.db)

    # --- the run -------------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        wall0 = time.monotonic()
        self.setup()
        if self.state is not None and self.engine is not None:
            self.start = self.until = self.engine.round_time()  # (on a state directory: now, and a fresh second)
        try:
            left = play_rounds(self, self.profile, self.start, self.until)
            summary = {"bot": self.profile.name, "engine": "embedded", "start": iso(self.start),
                       "until": iso(self.until), "clock": "simulated" if self.simulated else "wall",
                       "rounds": self.rounds, "batches": self.invocations, "deferred_at_end": left,
                       "wall_time_s": round(time.monotonic() - wall0, 3)}
        finally:
            self._export()
            if self.state is not None:
                self.state.set("last_out", str(self.out.dir.resolve()))
                self.state.set("profile", _plain(self.profile.data))
        self.out.close(summary)
        self.close()
        return summary

    def now(self) -> float:
        """The run's clock (simulated, or the wall on a state directory)."""
        return self.clock.now()

    def fire(self, t: float, tasks: list[str]) -> None:
        assert self.engine is not None
        self.engine.tick(tasks=list(tasks), now=t)
        self.rounds += len(tasks)

    def drain(self) -> int:
        """Run turns until none is held or visible and none comes due within the patience;
        returns how many tokens are still hidden."""
        assert self.engine is not None
        done = threading.Event()
        shower = threading.Thread(target=self._show, args=(done,), daemon=True) if self.progress else None
        if shower is not None:
            shower.start()
        try:
            left = self.engine.run(until_idle=self.patience_s)
        finally:
            done.set()
            if shower is not None:
                shower.join()  # its last line drawn before the database can close under it
            self.invocations = int(self.engine.counts["turns"])
            self._export()
        self._show_progress(left)
        return left

    def advance_to(self, t: float) -> int:
        """Move the (simulated) clock to ``t``, stopping at each hidden token that comes due on the
        way and draining there. Returns how many tokens are still hidden at ``t``."""
        assert self.engine is not None
        while True:
            nxt = self.engine.queue.next_visible()
            if nxt is None or nxt > t:
                self._jump(t)
                return int(self.engine.queue.counts()["waiting"])
            self._jump(nxt)
            self.drain()

    def _jump(self, t: float) -> None:
        if isinstance(self.clock, SimClock) and self.clock.jump_to(t):
            self.jumps.append(time.time())

    def _export(self) -> None:
        """The events put since the last export, into the run's items.jsonl."""
        while True:
            batch = events_since(self.db, self._seq)
            if not batch:
                return
            for e in batch:
                self._seq = int(e["seq"])
                record = {k: v for k, v in e.items() if k not in ("seq", "detail_type", "put_at", "wall")}
                self.out.item(str(e["detail_type"]), record)

    def _show(self, done: threading.Event) -> None:
        while not done.wait(0.5):
            self._show_progress(-1)

    def _show_progress(self, hidden: int) -> None:
        if self.progress is not None and self.engine is not None:
            waiting = hidden if hidden >= 0 else int(self.engine.queue.counts()["waiting"])
            self.progress(f"{self.profile.name}: round {self.rounds} | requests {self.out.n['requests']} | "
                          f"items {self.out.n['items']} | skips {self.out.n['skips']} | deferred hosts {waiting} | "
                          f"t={iso(self.clock.now())}")

    def close(self) -> None:
        """Stop: the throwaway database goes, a state directory's stays (its owner closes it)."""
        if self._also is not None:
            self._also.sync()
            self._also.close()
            self._also = None
        if self.state is None and self._tmp is not None:
            self.db.close()
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    _also: SqliteJournal | None = None


def _plain(data: Any) -> Any:
    import json

    return json.loads(json.dumps(data, default=str))


def run_embedded(args: Any, profile: Profile, sources: list[Source], start: float, until: float, out: Path,
                 progress: Callable[[str], None]) -> dict[str, Any]:
    """`heed local run` on the embedded engine: on ``--state DIR`` (opened, migrated if of the
    first format, held for the run), else on a throwaway database."""
    from heed.state_dir import open_local

    if args.state is None:
        return EmbeddedRun(profile, sources, start=start, until=until, out_dir=out, allow_private=args.allow_private,
                           progress=progress, patience_s=args.patience).run()
    with open_local(Path(args.state), write=True, bot=profile.name) as state, state.serve_lock():
        ahead = state.times_ahead(time.time())
        if ahead is not None:
            import sys

            print(f"heed: warning: {ahead[1]}", file=sys.stderr)
        return EmbeddedRun(profile, sources, start=start, until=until, out_dir=out, allow_private=args.allow_private,
                           progress=progress, patience_s=args.patience, state=state).run()

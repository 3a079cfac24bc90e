"""One process's share of the embedded engine: the crawler on the SQLite ports, and the loop that
feeds it from the work queue.

The loop is Lambda's event source mapping on one machine: it takes the visible tokens (up to
one batch per free slot, ``batch`` hosts a batch), runs each batch on a thread of its own
(``service.process_batch``), and when nothing is visible it waits until the next hidden token
comes due (or this process sent, hid or acknowledged one; or ``poll_s`` passed, for another
process's). Nothing sleeps to be polite: a host that must wait is a hidden token. With a lead
(``heed serve``'s ``LEAD_S``) that token comes out that much early, and its turn plans for when
the host is due and holds its request, connected, until then: the work before a request is no
part of the host's gap.

How many turns run at once follows the work (``heed_embedded.concurrency``): the turns not
waiting on a site are kept to a few (``ACTIVE_TURNS``), those waiting on a site are as many as
come, so requests in flight grow with the hosts due and with how long sites take to answer,
up to what the machine's memory and file descriptors allow a process and a profile's
``politeness.max_in_flight`` (AUBE-11's one request at a time over all hosts). ``threads``
given (``heed serve --threads N``) is a fixed pool instead: N turns at once, waiting or not.
None of it touches a gap: a host is one token, one turn at a time, and its gap is its hidden
token's."""
from __future__ import annotations

import heapq
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

from heed_core import kinds, politeness
from heed_core.adapters.http import RequestsTransport, Resolver
from heed_core.errors import ConfigError
from heed_core.hoststate import HostView
from heed_core.ports import Clock, FetchResult, Transport
from heed_core.profile import Profile
from heed_core.store import Journal, Results
from heed_core.turn import host_gap

from heed_embedded.concurrency import ACTIVE_TURNS, ANSWER_GIVES_WAY, Slots, TurnPool, concurrency_cap
from heed_embedded.crawler import EmbeddedCrawler, SlotTransport
from heed_embedded.db import Database
from heed_embedded.queue import Message, WorkQueue
from heed_embedded.results import SqliteResults
from heed_embedded.scheduler import META_KEY, tick
from heed_embedded.service import process_batch
from heed_embedded.store import SqliteStore

__all__ = ["LEAD_S", "Engine", "EmbeddedCrawler", "SlotTransport", "key_file_signer", "longest_gap", "recovery_hold"]

POLL_S = 0.2  # how often an idle loop looks at the queue for what another process sent
# How early a host's token comes out of its hide (``heed serve``): its turn's receive, plan and
# connection are done by the time the host is due, and the request is marked and leaves then
# (``EmbeddedCrawler._plan``), instead of beginning then.
LEAD_S = 0.25  # (0.1: 1,000 x 5 chains a little longer in a slow hour; docs/performance.md)


def key_file_signer(profile: Profile) -> Any:
    """The Web Bot Auth signer of a bot run on this machine (its key file), or None when the
    profile does not sign; ``ConfigError``, one line, when it cannot sign (never unsigned)."""
    from heed_core.identity.settings import WebBotAuthSettings

    settings = WebBotAuthSettings.from_profile(profile)
    if not settings.enabled:
        return None
    if not settings.key_file:
        raise ConfigError(f"{profile.name}: identity.web_bot_auth is enabled but has no key_file: on one machine "
                          "the bot signs with a key file (make one with: heed identity keygen --out KEYFILE)")
    from heed_core.identity.keys import IdentityError, read_key_file
    from heed_core.identity.signing import WebBotAuthSigner
    from heed_core.ports import SystemClock

    try:
        return WebBotAuthSigner.from_settings(settings, read_key_file(settings.key_file), SystemClock())
    except IdentityError as exc:
        raise ConfigError(f"identity.web_bot_auth.key_file: {exc}") from exc


def recovery_hold(profile: Profile, view: HostView, now: float) -> float:
    """How long a host whose turn was cut (its process killed) waits before its next request: the
    longest gap the host can ask for (its delay, Crawl-delay up to the cap, the round spacing)
    plus the clock-skew margin. The cut request ended at the latest when its process died,
    before ``now``: counted from ``now``, the gap is never shorter (COMMON-05)."""
    return host_gap(profile, view, now) + profile.politeness.clock_skew_margin_s


def longest_gap(profile: Profile) -> float:
    """The longest gap any host of ``profile`` can ask for between two requests
    (``heed_core.politeness.longest_gap``), with the clock-skew margin."""
    return politeness.longest_gap(profile.politeness) + profile.politeness.clock_skew_margin_s


class Engine:
    """The crawl of ``profile`` on ``db`` in this process: ``tick`` starts rounds, ``run`` feeds
    the crawler until stopped or idle, ``recover`` makes safe the hosts a dead process held.
    ``session`` names this process's hold on the tokens it takes; ``clock`` is the crawl's
    (wall time in a state directory, a simulated one in a conformance run). ``threads``: 0 (the
    default) follows the work, N > 0 is N turns at once, fixed; ``processes``: how many engines
    share the machine with this one (and the profile's ``max_in_flight``); ``lead_s``: how early
    a host's token comes out of its hide for its pace (``LEAD_S`` on the wall clock; 0, the
    default, where the clock is simulated: a request is held on it)."""

    def __init__(self, profile: Profile, db: Database, clock: Clock, journal: Journal, *, session: str,
                 threads: int = 0, processes: int = 1, batch: int = 1, allow_private: bool = False,
                 resolver: Resolver | None = None, signer: Any = None, transport: Transport | None = None,
                 log: Callable[[str, dict[str, Any]], None] | None = None,
                 results: Results | None = None, lead_s: float = 0.0) -> None:
        self.profile = profile
        self.db = db
        self.clock = clock
        self.journal = journal
        self.session = session
        cap, self.bound = (threads, "--threads") if threads > 0 else concurrency_cap(processes)
        limit = profile.politeness.max_in_flight
        if limit and int(limit) // max(1, processes) < cap:
            # AUBE-11: requests at once over all hosts and every process (a turn one request at a time).
            cap, self.bound = max(1, int(limit) // max(1, processes)), "politeness.max_in_flight"
        self.slots = Slots(cap, cap if threads > 0 else ACTIVE_TURNS, self._wake,
                           answer_wait_s=ANSWER_GIVES_WAY * profile.politeness.min_delay_s)
        self.batch = max(1, batch)
        self.log = log or (lambda event, fields: None)
        self._cond = threading.Condition()
        self._wakeups = 0
        self._hints: list[float] = []  # when tokens this process hid come out (a heap, clock time)
        self._looks_at = 0.0  # when the waiting loop looks at the queue again (clock time; 0: not waiting)
        self.counts: Counter[str] = Counter()
        self._count_lock = threading.Lock()
        self.store = SqliteStore(db, clock.now)
        self.queue = WorkQueue(db, clock.now, on_send=self._sent, on_hide=self._hidden)
        self.results: Any = results or SqliteResults(db, clock.now)
        p = profile
        model = kinds.extractor_model(p)  # WANNADO-10: a language model where the profile switches it on
        if model:
            raise ConfigError(f"{p.name}: its pages are read by a language model on Bedrock ({model}), an AWS "
                              "service: on one machine use extractor: structured (or deploy the stack)")
        self.transport: Transport = SlotTransport(transport or RequestsTransport(
            user_agent=p.user_agent, clock=clock, allow_private=allow_private,
            connect_timeout_s=p.fetch.connect_timeout_s, read_timeout_s=p.fetch.read_timeout_s,
            total_deadline_s=p.fetch.total_deadline_s, resolver=resolver, signer=signer), self.slots, db, clock)
        render: Callable[[str, int], FetchResult] | None = None
        endpoint = kinds.render_endpoint(p)  # WANNADO-09: the kind whose sources may ask for it
        if endpoint:
            from heed_core.extract.render import RenderClient

            client = RenderClient(self.transport, endpoint, user_agent=p.user_agent)
            render = lambda url, max_bytes: client.render(url, max_bytes=max_bytes)  # noqa: E731
        self.crawler = EmbeddedCrawler(p, self.store, self.transport, journal, self.results, clock, tokens=self.queue,
                                       render=render, db=db)
        if not limit:
            # (A bot with a cap of requests at once holds its slots for their requests' whole
            # time: none is taken for a request held until later.)
            self.crawler.lead_s = lead_s

    # --- counts and wake-ups --------------------------------------------------------------------------
    def count(self, what: str, n: int = 1) -> None:
        with self._count_lock:
            self.counts[what] += n

    def _wake(self, n: int = 1) -> None:
        with self._cond:
            self._wakeups += 1
            self._cond.notify_all()

    def _sent(self, n: int = 0) -> None:
        """Messages went in (or came back, or a host's next came to the head of its group): the
        loop looks at once if it could start a turn; with no slot free it looks when one comes
        free (``Slots``'s wake-up), so a wake-up now would find nothing to do."""
        if self.slots.free():
            self._wake()

    def _hidden(self, visible_at: float) -> None:
        """A token this process hid comes out at ``visible_at``: a loop waiting past then looks
        at the queue when it does (the time it waits for was read before this hide), not at its
        next wake-up (up to ``poll_s`` later: a gap that long late)."""
        with self._cond:
            heapq.heappush(self._hints, visible_at)
            if self._looks_at and visible_at < self._looks_at:
                self._cond.notify_all()

    # --- rounds ------------------------------------------------------------------------------------
    def tick(self, tasks: list[str] | None = None, now: float | None = None) -> dict[str, Any]:
        """The scheduler: the rounds due now (or a round of each of ``tasks``)."""
        out = tick(self.profile, self.db, self.store, self.queue, self.journal,
                   now=self.clock.now() if now is None else now, tasks=tasks, log=self.log)
        if out["rounds"]:
            self.count("rounds", len(out["rounds"]))
        return out

    def round_time(self) -> float:
        """Now, for a round started by hand (``--once``, ``heed local run``): a round's id names its
        second, so a round in the same second as the last one would be that round again (its
        tokens taken in once); such a round waits for the next second."""
        now = self.clock.now()
        last = (self.store.get_meta(META_KEY) or {}).get("started")
        if last is not None and int(now) <= int(float(last)):
            time.sleep(max(0.0, int(float(last)) + 1 - now) + 0.001)
            now = self.clock.now()
        return now

    # --- the loop --------------------------------------------------------------------------------------
    def busy(self) -> int:
        return self.slots.busy

    def run(self, stop: threading.Event | None = None, *, until_idle: float | None = None,
            poll_s: float = POLL_S) -> int:
        """Feed the crawler until ``stop`` is set (the batches at work finish first: their
        requests in flight end and are committed), or, with ``until_idle``, until no token is held
        or visible and none comes due within ``until_idle`` seconds. Returns how many tokens are
        still waiting (hidden) when it returns."""
        slots = self.slots
        pool = TurnPool("heed-turn", on_exit=self.db.put_back)  # a thread that ends: its connection to another
        try:
            while stop is None or not stop.is_set():
                with self._cond:
                    self._wakeups = 0
                free = slots.free()
                # A read first: a receive is a write (the database's lock), and most wake-ups
                # (a turn ended) find nothing due. With no slot free there is nothing to take (and
                # the wait is ``poll_s``, or the next wake-up): the queue is not read at all.
                now = self.clock.now()
                nxt = self.queue.next_visible() if free > 0 else None
                due = nxt is not None and nxt <= now
                msgs = self.queue.receive(free * self.batch, self.session) if due else []
                if free > 0:
                    # Hosts due (and taken: another process may have been first) start before
                    # answers are read, for a while; with none, the answers waiting take the slots.
                    slots.due(bool(msgs))
                groups = _batches(msgs, self.batch)
                slots.start(len(groups))
                for group in groups:
                    pool.submit(partial(self._batch, group))
                if msgs:
                    continue
                with self._cond:
                    if self._wakeups:
                        continue
                    if until_idle is not None and slots.busy == 0 and (nxt is None or nxt - now > until_idle):
                        if self.queue.counts()["held"] == 0:
                            break
                    if slots.free() == 0 or nxt is None:
                        timeout = poll_s
                    else:
                        timeout = max(0.0005, min(poll_s, nxt - now))
                    # Until then, until a token this process hid comes out (the read above may have
                    # come before that hide was committed), or until a wake-up.
                    hints = self._hints
                    while hints and hints[0] <= now:
                        heapq.heappop(hints)
                    if hints:
                        timeout = max(0.0005, min(timeout, hints[0] - now))
                    self._looks_at = now + timeout
                    self._cond.wait(timeout)
                    self._looks_at = 0.0
            with self._cond:
                while slots.busy:
                    self._cond.wait(0.5)
        finally:
            pool.close()
        self.log("threads", {"peak": pool.peak, "cap": slots.cap, "bound": self.bound, "active": slots.active_cap,
                             "in_flight": slots.peak_waiting, "held": self.crawler.held})
        return int(self.queue.counts()["waiting"])

    def _batch(self, msgs: list[Message]) -> None:
        try:
            # The batch's writes after each request (its texts, the host's commit, the drain, the
            # hides and acknowledgements) are one transaction, one wait for the disk.
            with self.db.batch("turns"):
                process_batch(msgs, self.crawler, self.queue, self.store, self.results, self.journal, self.db,
                              count=self.count, log=self.log)
        except Exception as exc:  # noqa: BLE001 - hides or acks that failed: the tokens come back on their own
            self.count("failures")
            self.log("batch_failed", {"error": f"{type(exc).__name__}: {exc}"[:500],
                                      "hosts": sorted({m.group for m in msgs})})
            try:
                # A commit after a request may be what failed: not back before any gap it began.
                self.queue.hide([(m.receipt, max(5.0, longest_gap(self.profile))) for m in msgs])
            except Exception:  # noqa: BLE001 - the visibility timeout brings them back
                pass
        finally:
            self.db.put_back()  # the thread may wait a while for its next turn: its connection serves others
            self.slots.end()

    # --- a process that died -----------------------------------------------------------------------------
    def recover(self, released: list[tuple[str, str]]) -> list[str]:
        """The hosts of tokens a dead process held (``WorkQueue.release``: (host, owner)), made safe
        before their tokens' turns run again: a host that token held may have had a request in
        flight when the process died, so its next request waits ``recovery_hold`` from now, twice
        as long each time the host is recovered again with no commit in between (a page whose
        request kills the process is not asked again at every restart: at most every visibility
        timeout, as SQS would hand it out); a drain it had begun is over (its transaction died
        with it): its outbox is drained at once by the next turn. Returns the hosts changed."""
        now = self.clock.now()
        changed = []
        for host, owner in released:
            for _ in range(5):
                rec = self.store.read_host(host, aux=self.crawler.aux)
                if rec.version == 0:
                    break
                view = HostView.from_record(rec)
                touched = False
                if view.owner == owner and view.lease_until > now:
                    again = self._recovered(host, rec.version)
                    base = recovery_hold(self.profile, view, now)
                    hold = now + min(max(base, self.queue.visibility_timeout_s), base * 2 ** again)
                    if view.pacing.next_allowed < hold:
                        view.pacing = replace(view.pacing, next_allowed=hold)
                        touched = True
                if view.undrained() and view.drain_until > now:
                    view.drain_until = 0.0
                    touched = True
                if not touched:
                    break
                if self.store.update_host_state(host, rec.version, view.state_blob(now)):
                    self._note_recovery(host, rec.version + 1, now)
                    changed.append(host)
                    break
        if changed:
            self.log("recovered", {"hosts": changed, "why": "their tokens were held by a process that is gone"})
        return changed

    def _recovered(self, host: str, version: int) -> int:
        """How often the host was recovered before with no commit since (0: not)."""
        with self.db.read("recoveries") as c:
            row = c.execute("SELECT n, v FROM recoveries WHERE host = ?", (host,)).fetchone()
        return int(row[0]) if row is not None and int(row[1]) >= version else 0

    def _note_recovery(self, host: str, version: int, now: float) -> None:
        with self.db.write("recoveries") as c:
            row = c.execute("SELECT n, v FROM recoveries WHERE host = ?", (host,)).fetchone()
            n = int(row[0]) + 1 if row is not None and int(row[1]) >= version - 1 else 1
            c.execute("INSERT OR REPLACE INTO recoveries (host, n, v, at) VALUES (?, ?, ?, ?)", (host, n, version, now))

    def close(self) -> None:
        self.db.close()


def _batches(msgs: list[Message], size: int) -> list[list[Message]]:
    """Received messages in batches of ``size`` groups, a group never split (FIFO per host)."""
    groups: dict[str, list[Message]] = {}
    for m in msgs:
        groups.setdefault(m.group, []).append(m)
    out: list[list[Message]] = []
    for n, group in enumerate(groups.values()):
        if n % size == 0:
            out.append([])
        out[-1] += group
    return out


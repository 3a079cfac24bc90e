"""The core's crawler as the embedded engine runs it (``EmbeddedCrawler``: each request marked in
flight in the database, the claim of the host written with the mark) and the transport its turns
use (``SlotTransport``: a turn's slot given back while it waits on the network)."""
from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from heed_core.crawl import Crawler, TurnResult
from heed_core.drain import Pending
from heed_core.hoststate import HostRecord, HostView
from heed_core.ports import Clock, FetchRequest, FetchResult, Transport
from heed_core.turn import Plan, TokenIn, plan_turn

from heed_embedded.concurrency import Slots
from heed_embedded.db import Database
from heed_embedded.store import SqliteStore

__all__ = ["INTERRUPTED_TWICE", "LEAD_WHYS", "EmbeddedCrawler", "SlotTransport"]

INTERRUPTED_TWICE = "interrupted_twice"
_ATTEMPT_TTL_S = 30 * 86400.0  # a mark whose page is never asked for again goes with the host item's TTL
# The waits a turn may come early for (``EmbeddedCrawler.lead_s``): its host's gap, its work's
# time, and the wait after a request (the gap again, or the next work's time).
LEAD_WHYS = frozenset({"gap", "not_before", "fetched"})
LEAD_JITTER_S = 0.005  # a turn early by a little more than the lead (the hide's own rounding) still plans ahead


class _ClaimLost(Exception):
    """Another token took the host between the plan and the connection: the request is not sent."""


class EmbeddedCrawler(Crawler):
    """The core's crawler, with the drain of an outbox left by a crash made one transaction (as
    the batch's drain is): nothing of it is committed unless all of it is.

    Each request is marked in flight before it is made (``attempts``: the URL and how many of its
    requests got no committed answer), a write of its own once the connection is made (with the
    claim of the host, when the turn needs one), and the mark is deleted by the commit that
    settles the answer, in the same transaction. A mark still there when the URL is
    asked for again says a process was killed with that request in flight (or its commit did
    not land): the second request is made, a third never. The page is given up instead, a skip
    with reason ``interrupted_twice`` (``heed explain``, ``heed audit``), so a page whose
    request kills the process, or that a kill happens to cut twice, is asked at most twice."""

    MAX_CUT = 2  # requests of one URL that got no committed answer, then it is given up
    # What the queue's hides for a host's pace are shortened by (``service._Hides``), and a turn
    # that comes that much early plans for when its host is due (``_plan``); 0: neither.
    lead_s = 0.0

    def __init__(self, *args: Any, db: Database, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.db = db
        self._local = threading.local()  # a turn's claim, made with its request's mark; when it may leave
        self._held = 0  # requests planned ahead, held until their host was due (``_plan``)
        self._held_lock = threading.Lock()
        assert isinstance(self.store, SqliteStore)
        self.marks: SqliteStore = self.store  # the marks of requests in flight are the store's

    def _drain_now(self, pending: list[Pending]) -> None:
        with self.db.unit("drain"):
            super()._drain_now(pending)

    def host_turn(self, token: TokenIn, snapshot: HostRecord | None = None) -> TurnResult:
        self.marks.hold_mark(None)
        self._local.send_at = 0.0
        return super().host_turn(token, snapshot)

    def _plan(self, view: HostView, token: TokenIn, now: float) -> tuple[Plan, float]:
        """A turn that comes early (its token's hide was ``lead_s`` shorter than its host's wait)
        plans for when its host is due: its request is prepared and connected meanwhile, and is
        marked and leaves at that time, not before (``SlotTransport``), so the host's gap is
        what it would have been with the token on time, and the turn's work before the
        connection does not lengthen it. Only the wait for the host's pace or its work's time
        is made so: for those the plan a little later is the same plan, its request held until
        then."""
        plan = plan_turn(self.p, view, token, now)
        lead = self.lead_s
        if (lead <= 0 or plan.request is not None or plan.foreign_owner or plan.why not in LEAD_WHYS
                or plan.wait is None or plan.wait <= 0):
            return plan, now
        at = now + plan.wait + self.p.politeness.end_stamp_slack_s  # as the hide would have kept it
        if at - now > lead + LEAD_JITTER_S:
            return plan, now
        ahead = plan_turn(self.p, view, token, at)
        if ahead.request is None:
            return plan, now
        self._local.send_at = at
        with self._held_lock:
            self._held += 1
        return ahead, at

    @property
    def held(self) -> int:
        """How many requests were planned ahead and held until their host was due."""
        return self._held

    def _give_up(self, plan: Plan, now: float) -> tuple[str, str] | None:
        assert plan.request is not None
        url = plan.request.url
        cut = self.marks.attempts(url)
        if cut < self.MAX_CUT:
            return None
        self.marks.hold_mark(url, plan.view.host)  # the give-up's commit deletes the mark: a later round asks afresh
        return INTERRUPTED_TWICE, (f"asked {cut} times and never answered: the process was killed (or its "
                                   "commit failed) while each request was in flight; not asked a third time")

    def _claim_and_fetch(self, plan: Plan, claim: Callable[[], int | None] | None,
                         version: int) -> tuple[int, FetchResult] | None:
        if claim is None or getattr(self.transport, "before_send", None) is None:
            return super()._claim_and_fetch(plan, claim, version)
        # The claim is written with the mark, once the connection is made: one transaction
        # before the request (the database's one write lock taken once, not twice: a host's
        # first turn was three of them with its answer's). Lost, it sends nothing.
        claimed = [version]
        self._local.claim = (claim, claimed)
        try:
            result = self._fetch(plan)
        except _ClaimLost:
            return None
        finally:
            self._local.claim = None
        return claimed[0], result

    def _fetch(self, plan: Plan) -> FetchResult:
        assert plan.request is not None
        url, now = plan.request.url, self.clock.now()
        # What the turn decided before is on disk first: the mark comes right before the
        # request, with no wait between them that a kill could fall into (a mark whose request
        # never left would count as one cut).
        self.db.flush("claim")
        host = plan.view.host
        pending = getattr(self._local, "claim", None)

        def write(c: sqlite3.Connection) -> None:
            # (On the thread that leads the group: what it writes of its own is none of this.)
            if pending is not None:
                claim, claimed = pending
                held = self.marks.held_mark()
                self.marks.hold_mark(None)  # a claim deletes no mark: the turn holds none yet
                try:
                    got = claim()
                finally:
                    self.marks.hold_mark(*(held or (None,)))
                if got is None:
                    raise _ClaimLost(host)  # (its writes are undone; the connection closed unused)
                claimed[0] = got
            self.marks.write_attempt(c, url, host, now, now + _ATTEMPT_TTL_S)

        def mark() -> None:
            self.db.flush("before the request")  # what the turn decided is committed before the request leaves
            # With the marks (and claims) of this process's other requests about to leave: one
            # transaction, the database's write lock taken once for them all (``WriteGroups``).
            self.db.groups.write("claim and mark" if pending else "mark", write, durable=pending is not None,
                                 plain=pending is None)
            self.marks.hold_mark(url, host)

        # The mark is written once the connection is made, right before the request's first byte
        # (the transport's hook): a kill before it sent nothing, and no mark says otherwise (a
        # mark written before the request was prepared and connected was one more cut, for a
        # request that never left, when a kill fell in between). A request planned ahead
        # (``_plan``) is held, connected, until its host is due, and marked then: a kill while
        # it is held counts no cut. A transport without the hook (a test's) is held and marked
        # before it is called.
        hook = getattr(self.transport, "before_send", None)
        send_at = getattr(self._local, "send_at", 0.0)
        if hook is None:
            hold_until(self.clock, send_at)
            mark()
            return super()._fetch(plan)
        hook(mark, send_at)
        try:
            result = super()._fetch(plan)
        finally:
            hook(None)
        if send_at and result.sent and result.t_start < send_at:
            result = replace(result, t_start=send_at)  # it was held until then (``_plan``)
        return result

    def charge_failure(self, token: TokenIn, limit: int, detail: str) -> None:
        # A turn that failed in this process after its request: the answer came and the failure
        # is charged (``processing_failed`` at ``limit``), so the request was not cut.
        super().charge_failure(token, limit, detail)
        self.marks.clear_attempt()


def hold_until(clock: Clock, at: float) -> None:
    """Return once ``clock`` reads ``at`` or later (at once for 0): a request held for its time."""
    while at and (left := at - clock.now()) > 0:
        time.sleep(left)


class SlotTransport:
    """The engine's transport as its turns use it: a turn gives its slot back while it waits on
    the network (``Slots.give``: DNS and the connection; the request and its answer) and takes
    one for the work between and after (``Slots.take``: the mark of the request, once
    connected; the answer), never waiting for one while its thread holds the database's write
    lock (every other turn could be waiting for that lock)."""

    before_send: Callable[..., None]  # the inner transport's hook, if it has one

    def __init__(self, inner: Transport, slots: Slots, db: Database, clock: Clock) -> None:
        self.inner = inner
        self.slots = slots
        self.db = db
        self.clock = clock
        if callable(getattr(inner, "before_send", None)):
            self.before_send = self._before_send

    def fetch(self, request: FetchRequest) -> FetchResult:
        self.db.put_back()  # no transaction is open across a request: its connection serves another turn
        self.slots.give()
        try:
            return self.inner.fetch(request)
        finally:
            self.slots.take("answer", now=self.db.in_write())

    def _before_send(self, hook: Callable[[], None] | None, send_at: float = 0.0) -> None:
        """``hook`` (the mark) run once the connection is made, right before the request's first
        byte, with a slot; first, with none, the request held until ``send_at`` (a clock time;
        0: not held)."""
        if hook is None:
            self.inner.before_send(None)  # type: ignore[attr-defined]
            return

        def marked() -> None:
            hold_until(self.clock, send_at)  # before the mark: a kill meanwhile counts no cut
            self.slots.take("mark", now=self.db.in_write())
            try:
                hook()
            finally:
                self.db.put_back()
                self.slots.give()
        self.inner.before_send(marked)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)  # refusal: the transport's own

"""The core's crawler as the embedded engine runs it (``EmbeddedCrawler``: each request marked in
flight in the database, the claim of the host written with the mark) and the transport its turns
use (``SlotTransport``: a turn's slot given back while it waits on the network)."""
from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from typing import Any

from heed_core.crawl import Crawler, TurnResult
from heed_core.drain import Pending
from heed_core.hoststate import HostRecord
from heed_core.ports import FetchRequest, FetchResult, Transport
from heed_core.turn import Plan, TokenIn

from heed_embedded.concurrency import Slots
from heed_embedded.db import Database
from heed_embedded.store import SqliteStore

__all__ = ["INTERRUPTED_TWICE", "EmbeddedCrawler", "SlotTransport"]

INTERRUPTED_TWICE = "interrupted_twice"
_ATTEMPT_TTL_S = 30 * 86400.0  # a mark whose page is never asked for again goes with the host item's TTL


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

    def __init__(self, *args: Any, db: Database, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.db = db
        self._local = threading.local()  # a turn's claim, made with its request's mark
        assert isinstance(self.store, SqliteStore)
        self.marks: SqliteStore = self.store  # the marks of requests in flight are the store's

    def _drain_now(self, pending: list[Pending]) -> None:
        with self.db.unit("drain"):
            super()._drain_now(pending)

    def host_turn(self, token: TokenIn, snapshot: HostRecord | None = None) -> TurnResult:
        self.marks.hold_mark(None)
        return super().host_turn(token, snapshot)

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
        # request that never left, when a kill fell in between). A transport without the hook
        # (a test's) is marked before it is called.
        hook = getattr(self.transport, "before_send", None)
        if hook is None:
            mark()
            return super()._fetch(plan)
        hook(mark)
        try:
            return super()._fetch(plan)
        finally:
            hook(None)

    def charge_failure(self, token: TokenIn, limit: int, detail: str) -> None:
        # A turn that failed in this process after its request: the answer came and the failure
        # is charged (``processing_failed`` at ``limit``), so the request was not cut.
        super().charge_failure(token, limit, detail)
        self.marks.clear_attempt()


class SlotTransport:
    """The engine's transport as its turns use it: a turn gives its slot back while it waits on
    the network (``Slots.give``: DNS and the connection; the request and its answer) and takes
    one for the work between and after (``Slots.take``: the mark of the request, once
    connected; the answer), never waiting for one while its thread holds the database's write
    lock (every other turn could be waiting for that lock)."""

    before_send: Callable[[Callable[[], None] | None], None]  # the inner transport's hook, if it has one

    def __init__(self, inner: Transport, slots: Slots, db: Database) -> None:
        self.inner = inner
        self.slots = slots
        self.db = db
        if callable(getattr(inner, "before_send", None)):
            self.before_send = self._before_send

    def fetch(self, request: FetchRequest) -> FetchResult:
        self.db.put_back()  # no transaction is open across a request: its connection serves another turn
        self.slots.give()
        try:
            return self.inner.fetch(request)
        finally:
            self.slots.take("answer", now=self.db.in_write())

    def _before_send(self, hook: Callable[[], None] | None) -> None:
        if hook is None:
            self.inner.before_send(None)  # type: ignore[attr-defined]
            return

        def marked() -> None:
            self.slots.take("mark", now=self.db.in_write())
            try:
                hook()
            finally:
                self.db.put_back()
                self.slots.give()
        self.inner.before_send(marked)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)  # refusal: the transport's own

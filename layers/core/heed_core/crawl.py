"""One host turn, executed: read the host once, plan, make at most one request, commit once.

``Crawler.host_turn(token)`` is the small imperative shell around the pure core: the snapshot
(one read, or the batch's), ``turn.plan_turn`` (pure: what to take in, skip, and the one request or
the wait), the request, the inputs the answer needs (kept texts, an extractor's answer, URL
records, global caps: each fetched once and remembered for the turn), the settlement (``settle``,
``robots_step``, ``admit``: pure), and one conditional write of the host's item that carries the
pacing of the request just made. A turn never sleeps: when the host is not ready it answers
"defer for N seconds" and the caller hides the token for that long (COMMON-05, AUBE-09). The
effects that leave the host go into its outbox; the turn that committed it holds it until its
drain is over (``DRAIN_LEASE_S``), so no copy of a token drains it twice.

``Crawler`` keeps the turn's outline (snapshot, plan, slot, claim, request, settle, commit); the
steps live beside it: ``settle_turn`` (the answer settled), ``committer`` (the writes, the journal
and the commit after a request, retried) and ``slots`` (AUBE-11's requests in flight)."""
from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from heed_core import kinds
from heed_core.committer import (
    COMMIT_TRIES,
    HOST_ITEM_TTL_S,
    CommitFailed,
    Committer,
    TurnAction,
    TurnResult,
    commit_answer,
)
from heed_core.drain import Pending
from heed_core.hoststate import HostRecord, HostView
from heed_core.ports import Clock, FetchResult, Transport
from heed_core.profile import Profile
from heed_core.refusals import iso
from heed_core.settle_turn import ROTATE_AT, Settler
from heed_core.slots import SLOT_WAIT_S, RequestSlots
from heed_core.store import HostStore, Journal, Results, Tokens
from heed_core.turn import Plan, TokenIn, give_up_request, plan_turn

# The turn's results, limits and waits live with the step they belong to (``committer``,
# ``settle_turn``, ``slots``); they are named here as well, where the rest of the code asks.
__all__ = ["COMMIT_TRIES", "HOST_ITEM_TTL_S", "ROTATE_AT", "SLOT_WAIT_S", "CommitFailed", "Crawler", "TurnAction",
           "TurnResult", "iso"]

DRAIN_RECHECK_S = 1.0  # a token that finds another turn's outbox still leaving looks again this soon


class Crawler:
    """The executor of host turns: the pure plan (``turn.plan_turn``), at most one request through
    ``transport`` (or ``render`` for a rendered agenda page), the pure settlement of its answer,
    and one conditional commit to ``store``. Every request and skip goes to ``journal``; texts go
    to ``results`` before the commit that points at them; events, URL records and tokens for
    other hosts leave through the host's outbox (drained by the caller, or here first if a crash
    left one behind). It reads the time only from ``clock``.

    Guarantees (COMMON-05): a request is made only while this token holds the host's lease (a
    conditional write), only once the host's gap has passed on ``clock``, and every write after it
    carries the gap it began, counted from its end. A bot that caps its requests in flight over
    all hosts (``politeness.max_in_flight``, AUBE-11) makes one only while it holds one of the
    store's request slots, taken right before and freed right after its answer (a conditional
    write each; a turn that finds none held free comes back in ``SLOT_WAIT_S``, never sleeps).
    A commit that cannot land raises
    ``CommitFailed`` with that gap's end. Raises ``TransientError`` when the store is busy (the
    token comes back; nothing was half-committed) and ``ServiceFault`` when a service refuses
    for good (nothing is charged to the work)."""

    def __init__(self, profile: Profile, store: HostStore, transport: Transport, journal: Journal,
                 results: Results, clock: Clock, *, tokens: Tokens | None = None,
                 render: Callable[[str, int], FetchResult] | None = None, extractor: Any = None) -> None:
        self.p = profile
        self.store = store
        self.transport = transport
        self.journal = journal
        self.results = results
        self.tokens = tokens
        self.clock = clock
        self.render = render
        self.extractor = extractor
        self.lease_s = profile.fetch.total_deadline_s + 30.0
        # PRAHA-03: a host's tdmrep.json is read with its state only where a kind of the bot needs it.
        self.aux = ("robots", "tdmrep") if kinds.reads_tdmrep(profile) else ("robots",)
        # The turn's steps: the writes and the journal, the settlement of an answer, AUBE-11's slots.
        self.commits = Committer(profile, store, journal, results, tokens, clock, self.lease_s, self.aux)
        self.settler = Settler(profile, store, results, clock, self.lease_s, extractor)
        self.slots = RequestSlots(profile, store, self.lease_s)

    # --- the turn -------------------------------------------------------------------------
    def host_turn(self, token: TokenIn, snapshot: HostRecord | None = None) -> TurnResult:
        """One turn for the host ``token`` names: at most one request, one commit; the answer says
        whether the token is done (ack) or comes back after a wait (defer). A turn never sleeps:
        a host that is not ready answers ``defer`` with the wait, counted from ``TurnResult.at``.
        ``TransientError`` (store busy, the item changed, an outbox that would not drain) means
        the token comes back and the turn is done again from the new state; ``CommitFailed``
        says not before when. ``snapshot`` is the host's record when the caller read it already
        (one read for a batch's hosts, taken with ``aux=self.aux``); the commit is conditional on
        its version all the same."""
        result = self._turn(token, snapshot)
        if not result.at:
            result.at = self.clock.now()  # a wait counts from here (a little late: never shorter)
        return result

    def _turn(self, token: TokenIn, snapshot: HostRecord | None) -> TurnResult:
        host = token.host
        now = self.clock.now()
        rec = snapshot if snapshot is not None and snapshot.host == host else self.store.read_host(host, aux=self.aux)
        view = HostView.from_record(rec)
        if view.undrained():
            if view.drain_until > now:
                # The turn that committed it is draining it now (this may be a copy of its very
                # token): wait for that, never drain it a second time.
                return TurnResult("defer", delay_s=max(0.5, min(DRAIN_RECHECK_S, view.drain_until - now)),
                                  why="draining", took_also=False)
            # A crash came between a commit and its drain: drain it before the next decision.
            self._drain_now([Pending(host, rec.outbox, rec.drained)])  # type: ignore[arg-type]
        plan, now = self._plan(view, token, now)
        if plan.foreign_owner:
            return TurnResult("defer", delay_s=max(0.5, plan.wait or 0.0), why=plan.why, took_also=False)
        if plan.request is None:
            return self.commits.without_request(token, view, plan, now)
        given_up = self._give_up(plan, now)
        if given_up is not None:
            give_up_request(self.p, plan, now, *given_up)
            return self.commits.without_request(token, view, plan, now)
        # AUBE-11: a slot of the requests in flight over all hosts, before anything is written (a
        # turn that gets none has changed nothing: it comes back and plans again).
        slot = self._take_slot(token, plan, now)
        if slot is None:
            return self.slots.wait(self.commits, token, view, plan, now)
        try:
            claim: Callable[[], int | None] | None = None
            if view.owner != token.owner or view.lease_until < now + self.lease_s / 2:
                # COMMON-05: claim the host before the request (one conditional write); a token
                # that holds it already (its lease renewed by every commit) needs no claim.
                claim = partial(self._claim, token, plan, view.version, now)
            fetched = self._claim_and_fetch(plan, claim, view.version)
            if fetched is None:
                return TurnResult("defer", delay_s=1.0, why="lease_taken", took_also=False)
            version, result = fetched
        finally:
            # Right after the answer (or a turn that never asked): the next request may leave.
            self.slots.release(slot)
        return commit_answer(self.commits, self.settler, token, plan, version, result)

    def _claim(self, token: TokenIn, plan: Plan, version: int, now: float) -> int | None:
        """COMMON-05: the host's lease taken for ``token`` (one conditional write on ``version``);
        the item's version after it, or None when another token took the host first."""
        self.commits.put_aux(token.host, plan.aux)
        claimed = self.commits.write(token.host, version, plan.view, token.owner, now + self.lease_s, None, now)
        if claimed is None:
            return None
        # What the claim wrote is settled: its skips are journaled now, once.
        self.commits.journal_skips(plan.skips, now)
        plan.skips, plan.aux = [], []
        return claimed

    def _claim_and_fetch(self, plan: Plan, claim: Callable[[], int | None] | None,
                         version: int) -> tuple[int, FetchResult] | None:
        """The claim (when the token needs one), then the request: the host's version the answer's
        commit is conditional on, and the answer; None when the claim was lost (nothing sent)."""
        if claim is not None:
            claimed = claim()
            if claimed is None:
                return None
            version = claimed
        return version, self._fetch(plan)

    # --- the steps an engine may change (``heed_embedded.crawler.EmbeddedCrawler``) ------------
    def _plan(self, view: HostView, token: TokenIn, now: float) -> tuple[Plan, float]:
        """The plan and the time it is for (an engine that holds a request may plan for later)."""
        return plan_turn(self.p, view, token, now), now

    def _take_slot(self, token: TokenIn, plan: Plan, now: float) -> tuple[int, str] | None:
        """AUBE-11: the slot this request holds (``slots.RequestSlots.take``)."""
        return self.slots.take(token, plan, now)

    def _drain_now(self, pending: list[Pending]) -> None:
        self.commits.drain_now(pending)

    def charge_failure(self, token: TokenIn, limit: int, detail: str) -> None:
        """A turn that failed for a reason other than load is charged to the item at the head
        of the host's frontier (``committer.Committer.charge_failure``)."""
        self.commits.charge_failure(token, limit, detail)

    # --- the request ---------------------------------------------------------------------------
    def _give_up(self, plan: Plan, now: float) -> tuple[str, str] | None:
        """(reason, detail) when the plan's request must not be made again (an engine that
        keeps a durable mark of each request in flight: one whose earlier requests were cut, by a
        process killed mid-request, too often); None here: nothing is given up."""
        return None

    def _fetch(self, plan: Plan) -> FetchResult:
        request = plan.request
        assert request is not None and plan.item is not None
        if plan.role == "item" and plan.item.ctx.get("render") and self.render is not None:
            return self.render(request.url, request.max_bytes)  # WANNADO-09: the render service asks
        return self.transport.fetch(request)  # journaled with the answer's commit (``committer.commit_answer``)

"""The commit step of a host turn: the host's item written once, conditionally, and what it says.

``Committer`` holds the writes of ``crawl.Crawler``'s turn: the aux records before the write that
points at them, the conditional write of the host's item (with the pacing of the request just
made, and the outbox it holds for its drain), the drain of an outbox a crash left behind, the
journal of requests and skips, a turn without a request, and a failure charged to the work.
``commit_answer`` is the commit after a request: tried again on a busy table or a changed item
(the same answer settled again on a fresh read), never by making the request a second time.
Apart from ``crawl.Crawler`` so that the executor keeps the turn's outline (issue 36)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from heed_core import politeness
from heed_core.drain import Pending, drain
from heed_core.errors import ServiceFault, TransientError
from heed_core.hoststate import DRAIN_LEASE_S, TOKENS_FOR_S, HostView, Outbox
from heed_core.ports import Clock, FetchResult
from heed_core.profile import Profile
from heed_core.refusals import iso
from heed_core.settle_turn import Commit, Inputs, Settler
from heed_core.store import HostStore, Journal, Results, Tokens
from heed_core.turn import Plan, SkipRec, TokenIn, plan_turn, remaining_s

__all__ = ["COMMIT_TRIES", "HOST_ITEM_TTL_S", "CommitFailed", "Committer", "TurnAction", "TurnResult",
           "commit_answer"]

TurnAction = Literal["ack", "defer"]

HOST_ITEM_TTL_S = 30 * 86400.0
COMMIT_TRIES = 3  # a commit after a request is tried this often (AWS's backoff between) before the turn gives up


class CommitFailed(TransientError):
    """The commit after a request did not land (throttled, a 5xx, the item kept changing). The
    request's end is known: ``not_before`` is the end of the gap it began, and the token must not
    come back before it (COMMON-05: a failed commit never shortens the gap)."""

    def __init__(self, message: str, not_before: float) -> None:
        super().__init__(message)
        self.not_before = not_before


@dataclass
class TurnResult:
    """What the caller does with the token after a turn: ``ack`` (delete it: its work is done or
    handed on) or ``defer`` (hide it for ``delay_s``, counted from ``at``; ``left(now)`` says
    what remains). ``pending`` is the committed outbox to drain, ``wake`` the hosts it gave work."""

    action: TurnAction  # "ack": the token is done | "defer": hide it for ``delay_s``
    delay_s: float = 0.0
    requests: int = 0
    why: str = ""
    pending: Pending | None = None  # this turn's committed outbox, for the caller to drain
    wake: set[str] = field(default_factory=set)  # hosts that got work (tokens in the outbox)
    at: float = 0.0  # the clock time ``delay_s`` counts from (the caller hides for what is left of it)
    # The later tokens of the host in the batch (``TokenIn.also``): their work was written with
    # this turn, so they may be acknowledged. False for a turn that wrote nothing (another turn
    # holds the host, an outbox still leaving): they wait with the first.
    took_also: bool = True
    # What the host's known work still takes at its pace (``turn.remaining_s``), for a deferring
    # turn: a queue may hand the longest chains out first. None: not known (nothing to order by).
    chain_s: float | None = None

    def left(self, now: float) -> float:
        """How much of the wait is left at ``now`` (never less than nothing)."""
        return max(0.0, self.delay_s - (now - self.at)) if self.at else self.delay_s


class Committer:
    """The writes of a host turn: each a conditional write of the host's item (``write``: None
    when the item changed under the turn), the aux records it points at put before it, the skips
    journaled once it landed. Raises ``TransientError`` when the store is busy and
    ``ServiceFault`` when an outbox's drain is refused for good."""

    def __init__(self, profile: Profile, store: HostStore, journal: Journal, results: Results,
                 tokens: Tokens | None, clock: Clock, lease_s: float, aux: tuple[str, ...]) -> None:
        self.p = profile
        self.store = store
        self.journal = journal
        self.results = results
        self.tokens = tokens
        self.clock = clock
        self.lease_s = lease_s
        self.aux = aux

    def without_request(self, token: TokenIn, view: HostView, plan: Plan, now: float) -> TurnResult:
        """A plan that makes no request, committed: its state and effects written when there is
        anything to keep, its skips journaled, and the token done (idle) or back after the wait."""
        v = plan.view
        idle = plan.wait is None
        owner = None if idle else token.owner
        outbox = Outbox(version=view.version + 1, events=tuple(plan.events), sources=tuple(plan.sources),
                        tokens=tuple(plan.tokens)) if plan.events or plan.sources or plan.tokens else None
        needs_write = plan.dirty or outbox is not None or (idle and view.owner is not None)
        if needs_write and view.version == 0 and outbox is None and not _worth_an_item(v):
            # A host with no item and nothing to keep gets none: a purged one stays purged.
            needs_write = False
        pending = None
        if needs_write:
            self.put_aux(token.host, plan.aux)
            lease = now + (plan.wait or 0.0) + self.lease_s
            if self.write(token.host, view.version, v, owner, lease, outbox, now) is None:
                raise TransientError(f"{token.host}: the host item changed during the turn")
            if outbox is not None:
                pending = Pending(token.host, outbox, view.drained)
        self.journal_skips(plan.skips, now)
        wake = {t.host for t in plan.tokens if t.host != token.host}
        if idle:
            return TurnResult("ack", why=plan.why, pending=pending, wake=wake)
        return TurnResult("defer", delay_s=max(0.0, plan.wait or 0.0), why=plan.why, pending=pending, wake=wake,
                          chain_s=remaining_s(self.p, v, now))

    def charge_failure(self, token: TokenIn, limit: int, detail: str) -> None:
        """A turn that failed for a reason other than load is charged to the item at the head
        of the host's frontier; at ``limit`` failures the item is given up (``processing_failed``),
        so one bad item never blocks its host."""
        now = self.clock.now()
        rec = self.store.read_host(token.host, aux=self.aux)
        v = HostView.from_record(rec)
        skips: list[SkipRec] = []
        if (token.items or token.bad) and token.tok not in v.tokens_done:
            known = {i.work_id for i in v.frontier}
            v.frontier += [i for i in token.items if i.work_id not in known]
            v.tokens_done[token.tok] = now + TOKENS_FOR_S
            skips += [SkipRec(what, "bad_work_item", why) for what, why in token.bad]  # said once, as plan_turn
        if not v.frontier:
            return
        v.frontier.sort(key=lambda i: i.order_key)
        head = next((i for i in v.frontier if i.not_before <= now), v.frontier[0])
        v.frontier = [i for i in v.frontier if i.work_id != head.work_id]
        if head.failures + 1 >= limit:
            skips.append(SkipRec.of(head, head.url, "processing_failed", f"{limit} failed attempts; last: {detail}"))
        else:
            v.frontier.append(replace(head, failures=head.failures + 1))
        if self.store.write_host(token.host, v.version, owner=v.owner, lease_until=v.lease_until,
                                 state=v.state_blob(now), outbox=rec.outbox, expires_at=now + HOST_ITEM_TTL_S):
            self.journal_skips(skips, now)

    def put_aux(self, host: str, records: list[tuple[str, dict[str, Any]]]) -> None:
        """The host's big robots.txt and tdmrep.json records, put before the write that points at
        them (by their stamp). Raises ``TransientError`` when the store is busy."""
        for kind, data in records:
            self.store.put_aux(host, kind, data)  # before the write that points at it (by its stamp)

    def write(self, host: str, version: int, view: HostView, owner: str | None, lease: float,
              outbox: Outbox | None, now: float) -> int | None:
        """The host's item written if it is still at ``version``: the new version, or None when it
        changed under the turn. An outbox is held for its drain (``DRAIN_LEASE_S``)."""
        # A commit with an outbox holds it for its drain: a token that comes meanwhile waits.
        view.drain_until = now + DRAIN_LEASE_S if outbox else 0.0
        ok = self.store.write_host(host, version, owner=owner, lease_until=lease if owner else 0.0,
                                   state=view.state_blob(now), outbox=outbox, expires_at=now + HOST_ITEM_TTL_S)
        return version + 1 if ok else None

    def drain_now(self, pending: list[Pending]) -> None:
        """An outbox a crash left behind, drained before the turn decides anything. Raises
        ``TransientError`` when it did not all leave, ``ServiceFault`` when a service refused it."""
        if self.tokens is None:
            raise TransientError("no token queue to drain an outbox into")
        report = drain(pending, self.store, self.results, self.tokens)
        if report.fault:
            raise ServiceFault(f"outbox not drained: {report.fault}")
        if report.failed:
            raise TransientError(f"outbox not drained: {report.failed}")

    # --- journal ------------------------------------------------------------------------------
    def record_request(self, result: FetchResult, purpose: str, source: str) -> None:
        """The request journaled (a skip instead when nothing left: refused before connecting)."""
        if not result.sent:
            # Refused before any byte left (e.g. private_address): a skip, not a request.
            detail = "refused before connecting"
            if result.error == "private_address":
                detail += ": a private, loopback or link-local address (a local run opts in with --allow-private)"
            self.journal.skip({"bot": self.p.name, "url": result.url, "reason": result.error or "refused",
                               "detail": detail, "purpose": purpose, "source": source,
                               "t": iso(result.t_end or self.clock.now())})
            return
        rec: dict[str, Any] = {"bot": self.p.name, "t_start": iso(result.t_start), "t_end": iso(result.t_end),
                               "method": "GET", "url": result.url, "purpose": purpose,
                               "bytes": len(result.body), "source": source}
        if result.status is not None:
            rec["status"] = result.status
        if result.error:
            rec["error"] = result.error
        self.journal.request(rec)

    def journal_skips(self, skips: list[SkipRec], now: float) -> None:
        """The skips journaled, once their commit landed."""
        for s in skips:
            self.journal.skip({"bot": self.p.name, "url": s.url, "reason": s.reason, "detail": s.detail,
                               "purpose": s.purpose, "source": s.source, "round": s.round, "t": iso(now)})


def commit_answer(commits: Committer, settler: Settler, token: TokenIn, plan: Plan, version: int,
                  result: FetchResult) -> TurnResult:
    """Settle the answer and commit it. The commit carries the gap this request began; if it
    does not land it is tried again (AWS's backoff for a busy table; on a changed item, the
    same answer settled again on a fresh read), and if it still does not, ``CommitFailed``
    keeps the token away until that gap is over. The request is never made a second time here."""
    p, clock = commits.p, commits.clock
    item, request = plan.item, plan.request
    assert item is not None and request is not None
    t_end = result.t_end or clock.now()
    gap_end = politeness.gap_end(p.politeness, t_end, plan.delay if plan.role in ("item", "tdmrep", "hop")
                                 else p.politeness.min_delay_s)
    # The request is journaled with the commit, after the answer is settled (its parse is no
    # part of the transaction: on one machine a transaction holds the database's one write lock),
    # and journaled all the same when settling it fails.
    journaled = False
    try:
        inputs = Inputs()
        for attempt in range(COMMIT_TRIES):
            commit = settler.settle(token, plan, plan.view.copy(), version, result, inputs)
            if not journaled:
                journaled = True
                commits.record_request(result, request.purpose, item.source_id)
            try:
                commits.put_aux(token.host, commit.aux)
                landed = commits.write(token.host, version, commit.view, commit.owner, commit.lease,
                                       commit.outbox if commit.outbox else None, clock.now())
            except TransientError as exc:
                if attempt + 1 == COMMIT_TRIES:
                    raise CommitFailed(f"{token.host}: commit after the request failed: {exc}", gap_end) from exc
                time.sleep(0.05 * 4 ** attempt)  # AWS's backoff for a throttled call, not a politeness wait
                continue
            if landed is not None:
                commits.journal_skips(plan.skips + commit.skips, clock.now())
                return _after_commit(p, clock, token, commit, result)
            # The item changed under the turn (an operator's change, a purge, a lost lease): read
            # it again and settle this same answer on what is there now.
            fresh = HostView.from_record(commits.store.read_host(token.host, aux=commits.aux))
            if fresh.owner not in (None, token.owner) and fresh.lease_until > clock.now():
                raise CommitFailed(f"{token.host}: another turn holds the host", gap_end)
            again = plan_turn(p, fresh, token, clock.now())
            if again.foreign_owner:
                raise CommitFailed(f"{token.host}: another turn holds the host", gap_end)
            if not any(i.work_id == item.work_id for i in again.view.frontier):
                # The work is gone (purged, settled, blocked meanwhile): keep the gap, drop the answer.
                again.view.pacing = replace(again.view.pacing, last_end=t_end,
                                            next_allowed=max(again.view.pacing.next_allowed, gap_end))
                again.dirty, again.request = True, None
                again.wait = max(0.0, gap_end - clock.now()) if again.view.frontier else None
                try:
                    return commits.without_request(token, fresh, again, clock.now())
                except TransientError as exc:
                    raise CommitFailed(f"{token.host}: {exc}", gap_end) from exc
            plan = replace(plan, view=again.view, skips=again.skips, events=again.events, sources=again.sources,
                           tokens=again.tokens, aux=again.aux)
            version = fresh.version
        raise CommitFailed(f"{token.host}: the host item kept changing during the turn", gap_end)
    finally:
        if not journaled:
            commits.record_request(result, request.purpose, item.source_id)


def _after_commit(p: Profile, clock: Clock, token: TokenIn, commit: Commit, result: FetchResult) -> TurnResult:
    pending = Pending(token.host, commit.outbox, commit.view.drained) if commit.outbox else None
    sent = 1 if result.sent else 0
    if not commit.more or commit.rotate:
        return TurnResult("ack", requests=sent, why="fetched", pending=pending, wake=commit.wake)
    return TurnResult("defer", delay_s=max(0.0, commit.wait or 0.0), requests=sent, why="fetched",
                      pending=pending, wake=commit.wake, chain_s=remaining_s(p, commit.view, clock.now()),
                      at=commit.at)


def _worth_an_item(v: HostView) -> bool:
    """Whether a host with no item yet has anything to keep: work, caches, a stop, closed sources
    (a purged host keeps nothing but work made since)."""
    if v.purged_at and not v.frontier:
        return False
    return bool(v.frontier or v.robots or v.robots_hop or v.tdmrep or v.closed or v.quotas
                or v.pacing.stopped_until or v.pacing.next_allowed)

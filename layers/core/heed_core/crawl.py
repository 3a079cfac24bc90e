"""One host turn, executed: read the host once, plan, make at most one request, commit once.

``Crawler.host_turn(token)`` is the small imperative shell around the pure core: the snapshot
(one read, or the batch's), ``turn.plan_turn`` (pure: what to take in, skip, and the one request or
the wait), the request, the inputs the answer needs (kept texts, an extractor's answer, URL
records, global caps: each fetched once and remembered for the turn), the settlement (``settle``,
``robots_step``, ``admit``: pure), and one conditional write of the host's item that carries the
pacing of the request just made. A turn never sleeps: when the host is not ready it answers
"defer for N seconds" and the caller hides the token for that long (COMMON-05, AUBE-09). The
effects that leave the host go into its outbox; the turn that committed it holds it until its
drain is over (``DRAIN_LEASE_S``), so no copy of a token drains it twice."""
from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from heed_core import admit as admission
from heed_core import kinds, politeness
from heed_core.drain import Pending, drain
from heed_core.errors import ServiceFault, TransientError
from heed_core.extract.events import Event
from heed_core.extract.subsidy import main_text
from heed_core.hoststate import (
    DRAIN_LEASE_S,
    INLINE_AUX_BYTES,
    TOKENS_FOR_S,
    HostRecord,
    HostView,
    Outbox,
    TokenOut,
)
from heed_core.ports import Clock, FetchResult, Transport
from heed_core.profile import Profile
from heed_core.refusals import iso
from heed_core.robots_step import answer_token, settle_robots
from heed_core.settle import Settled, close_source, settle_item, stop_host
from heed_core.store import HostStore, Journal, Results, Tokens
from heed_core.tasks import Candidate, text_version
from heed_core.turn import Plan, SkipRec, TokenIn, give_up_request, plan_turn, remaining_s, tdmrep_body
from heed_core.urls import short_hash
from heed_core.work import UrlRecord, WorkItem

__all__ = ["CommitFailed", "Crawler", "TurnAction", "TurnResult", "iso"]

TurnAction = Literal["ack", "defer"]

ROTATE_AT = 40  # receives of one token before it is replaced (the queue's maxReceiveCount is far above)
HOST_ITEM_TTL_S = 30 * 86400.0
COMMIT_TRIES = 3  # a commit after a request is tried this often (AWS's backoff between) before the turn gives up
DRAIN_RECHECK_S = 1.0  # a token that finds another turn's outbox still leaving looks again this soon
SLOT_WAIT_S = 1.0  # a turn that finds every request slot held (AUBE-11) comes back this soon (SQS: whole seconds)


class CommitFailed(TransientError):
    """The commit after a request did not land (throttled, a 5xx, the item kept changing). The
    request's end is known: ``not_before`` is the end of the gap it began, and the token must not
    come back before it (COMMON-05: a failed commit never shortens the gap)."""

    def __init__(self, message: str, not_before: float) -> None:
        super().__init__(message)
        self.not_before = not_before


@dataclass
class _Inputs:
    """What a turn fetched to settle its answer, kept for the turn: settled again on a fresher
    snapshot (a commit that lost its race), the answer costs no second read or write."""

    texts: dict[str, str | None] = field(default_factory=dict)  # kept texts loaded, by key
    extracted: tuple[Event, ...] | None = None
    stored: dict[str, str] = field(default_factory=dict)  # texts kept this turn: key -> version id
    records: dict[str, UrlRecord | None] = field(default_factory=dict)  # URL records asked for
    granted: dict[str, int] = field(default_factory=dict)  # global caps taken (idempotent per taker)


@dataclass
class _Commit:
    """One settled answer, ready to write: the host view, its outbox, who holds the host after it
    and until when, the aux records to put first and the skips to journal once it landed."""

    view: HostView
    outbox: Outbox
    owner: str | None
    lease: float
    aux: list[tuple[str, dict[str, Any]]]
    skips: list[SkipRec]
    wait: float | None
    more: bool
    rotate: bool
    wake: set[str]


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
        plan = plan_turn(self.p, view, token, now)
        if plan.foreign_owner:
            return TurnResult("defer", delay_s=max(0.5, plan.wait or 0.0), why=plan.why, took_also=False)
        if plan.request is None:
            return self._commit_without_request(token, view, plan, now)
        given_up = self._give_up(plan, now)
        if given_up is not None:
            give_up_request(self.p, plan, now, *given_up)
            return self._commit_without_request(token, view, plan, now)
        # AUBE-11: a slot of the requests in flight over all hosts, before anything is written (a
        # turn that gets none has changed nothing: it comes back and plans again).
        slot = self._take_slot(token, plan, now)
        if slot is None:
            return self._wait_for_slot(token, view, plan, now)
        try:
            version = view.version
            if view.owner != token.owner or view.lease_until < now + self.lease_s / 2:
                # COMMON-05: claim the host before the request (one conditional write); a token
                # that holds it already (its lease renewed by every commit) needs no claim.
                self._put_aux(host, plan.aux)
                claimed = self._write(host, version, plan.view, token.owner, now + self.lease_s, None, now)
                if claimed is None:
                    return TurnResult("defer", delay_s=1.0, why="lease_taken", took_also=False)
                version = claimed
                # What the claim wrote is settled: its skips are journaled now, once.
                self._journal_skips(plan.skips, now)
                plan.skips, plan.aux = [], []
            result = self._fetch(plan)
        finally:
            # Right after the answer (or a turn that never asked): the next request may leave.
            self._release_slot(slot)
        return self._settle_and_commit(token, plan, version, result)

    # --- AUBE-11: requests in flight over all hosts ------------------------------------------
    def _take_slot(self, token: TokenIn, plan: Plan, now: float) -> tuple[int, str] | None:
        """(slot, holder) of the slot this request holds; (-1, "") for a bot without a cap; None
        when every slot is held. A slot is held for the request's whole deadline and the claim
        before it (``lease_s``): a holder that dies frees it then, whatever the clocks say."""
        cap = self.p.politeness.max_in_flight
        if not cap:
            return -1, ""
        assert plan.request is not None
        holder = short_hash(token.owner, plan.request.url, repr(now))
        slot = self.store.take_slot(int(cap), holder, now + self.lease_s + self.p.politeness.clock_skew_margin_s,
                                    now)
        return None if slot is None else (slot, holder)

    def _release_slot(self, slot: tuple[int, str]) -> None:
        if slot[0] < 0:
            return
        try:
            self.store.release_slot(*slot)
        except TransientError:
            # The slot frees itself at its deadline: a release lost to a busy table holds the next
            # request back a while, and must not cost this answer's commit (the gap it carries).
            pass

    def _wait_for_slot(self, token: TokenIn, view: HostView, plan: Plan, now: float) -> TurnResult:
        """Every slot is held: the turn comes back in ``SLOT_WAIT_S`` (no sleep: a Lambda never
        sleeps to be polite), having written nothing. A token that came back ``ROTATE_AT`` times
        is replaced instead (its receive count is what sends poison to the DLQ): the plan's state
        and effects are committed with a fresh token for the host, and this one is done."""
        if token.receives < ROTATE_AT:
            return TurnResult("defer", delay_s=SLOT_WAIT_S, why="in_flight_cap", took_also=False)
        fresh = TokenOut(token.host, short_hash(token.tok, "rotate", str(view.version)))
        plan = replace(plan, wait=None, why="in_flight_cap", tokens=[*plan.tokens, fresh])
        return self._commit_without_request(token, view, plan, now)

    # --- no request --------------------------------------------------------------------------
    def _commit_without_request(self, token: TokenIn, view: HostView, plan: Plan, now: float) -> TurnResult:
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
            self._put_aux(token.host, plan.aux)
            lease = now + (plan.wait or 0.0) + self.lease_s
            if self._write(token.host, view.version, v, owner, lease, outbox, now) is None:
                raise TransientError(f"{token.host}: the host item changed during the turn")
            if outbox is not None:
                pending = Pending(token.host, outbox, view.drained)
        self._journal_skips(plan.skips, now)
        wake = {t.host for t in plan.tokens if t.host != token.host}
        if idle:
            return TurnResult("ack", why=plan.why, pending=pending, wake=wake)
        return TurnResult("defer", delay_s=max(0.0, plan.wait or 0.0), why=plan.why, pending=pending, wake=wake,
                          chain_s=remaining_s(self.p, v, now))

    # --- the request ---------------------------------------------------------------------------
    def _give_up(self, plan: Plan, now: float) -> tuple[str, str] | None:
        """(reason, detail) when the plan's request must not be made again (an engine that
        keeps a durable mark of each request in flight: one whose earlier requests were cut, by a
        process killed mid-request, too often); None here: nothing is given up."""
        return None

    def _fetch(self, plan: Plan) -> FetchResult:
        request = plan.request
        assert request is not None and plan.item is not None
        source = plan.item.source_id
        if plan.role == "item" and plan.item.ctx.get("render") and self.render is not None:
            result = self.render(request.url, request.max_bytes)  # WANNADO-09: the render service asks
        else:
            result = self.transport.fetch(request)
        self._record_request(result, request.purpose, source)
        return result

    # --- after the response ----------------------------------------------------------------------
    def _settle_and_commit(self, token: TokenIn, plan: Plan, version: int, result: FetchResult) -> TurnResult:
        """Settle the answer and commit it. The commit carries the gap this request began; if it
        does not land it is tried again (AWS's backoff for a busy table; on a changed item, the
        same answer settled again on a fresh read), and if it still does not, ``CommitFailed``
        keeps the token away until that gap is over. The request is never made a second time here."""
        item = plan.item
        assert item is not None
        t_end = result.t_end or self.clock.now()
        gap_end = politeness.gap_end(self.p.politeness, t_end, plan.delay if plan.role in ("item", "tdmrep", "hop")
                                     else self.p.politeness.min_delay_s)
        inputs = _Inputs()
        for attempt in range(COMMIT_TRIES):
            commit = self._settle(token, plan, plan.view.copy(), version, result, inputs)
            try:
                self._put_aux(token.host, commit.aux)
                landed = self._write(token.host, version, commit.view, commit.owner, commit.lease,
                                     commit.outbox if commit.outbox else None, self.clock.now())
            except TransientError as exc:
                if attempt + 1 == COMMIT_TRIES:
                    raise CommitFailed(f"{token.host}: commit after the request failed: {exc}", gap_end) from exc
                time.sleep(0.05 * 4 ** attempt)  # AWS's backoff for a throttled call, not a politeness wait
                continue
            if landed is not None:
                self._journal_skips(plan.skips + commit.skips, self.clock.now())
                return self._after_commit(token, commit, result)
            # The item changed under the turn (an operator's change, a purge, a lost lease): read
            # it again and settle this same answer on what is there now.
            fresh = HostView.from_record(self.store.read_host(token.host, aux=self.aux))
            if fresh.owner not in (None, token.owner) and fresh.lease_until > self.clock.now():
                raise CommitFailed(f"{token.host}: another turn holds the host", gap_end)
            again = plan_turn(self.p, fresh, token, self.clock.now())
            if again.foreign_owner:
                raise CommitFailed(f"{token.host}: another turn holds the host", gap_end)
            if not any(i.work_id == item.work_id for i in again.view.frontier):
                # The work is gone (purged, settled, blocked meanwhile): keep the gap, drop the answer.
                again.view.pacing = replace(again.view.pacing, last_end=t_end,
                                            next_allowed=max(again.view.pacing.next_allowed, gap_end))
                again.dirty, again.request = True, None
                again.wait = max(0.0, gap_end - self.clock.now()) if again.view.frontier else None
                try:
                    return self._commit_without_request(token, fresh, again, self.clock.now())
                except TransientError as exc:
                    raise CommitFailed(f"{token.host}: {exc}", gap_end) from exc
            plan = replace(plan, view=again.view, skips=again.skips, events=again.events, sources=again.sources,
                           tokens=again.tokens, aux=again.aux)
            version = fresh.version
        raise CommitFailed(f"{token.host}: the host item kept changing during the turn", gap_end)

    def _after_commit(self, token: TokenIn, commit: _Commit, result: FetchResult) -> TurnResult:
        pending = Pending(token.host, commit.outbox, commit.view.drained) if commit.outbox else None
        sent = 1 if result.sent else 0
        if not commit.more or commit.rotate:
            return TurnResult("ack", requests=sent, why="fetched", pending=pending, wake=commit.wake)
        return TurnResult("defer", delay_s=max(0.0, commit.wait or 0.0), requests=sent, why="fetched",
                          pending=pending, wake=commit.wake,
                          chain_s=remaining_s(self.p, commit.view, self.clock.now()))

    def _settle(self, token: TokenIn, plan: Plan, v: HostView, version: int, result: FetchResult,
                inputs: _Inputs) -> _Commit:
        """The answer settled into ``v`` (a copy of the plan's view): what to write and what
        leaves. Pure but for the inputs it fetches once (``inputs``) and the texts it keeps."""
        item = plan.item
        assert item is not None
        now = self.clock.now()
        t_end = result.t_end or now
        events = list(plan.events)
        sources = list(plan.sources)
        skips: list[SkipRec] = []
        aux = list(plan.aux)
        tokens = list(plan.tokens)
        urls: list[UrlRecord] = []
        outgoing: list[WorkItem] = []
        if plan.role == "robots":
            # The gap after robots.txt; settle_robots lengthens it to a Crawl-delay now known.
            v.pacing = politeness.after_request(v.pacing, self.p.politeness, t_end, self.p.politeness.min_delay_s)
            answer = settle_robots(self.p, v, result, plan.hops, item.round_start, now)
            if answer.aux is not None:
                aux.append(("robots", answer.aux))
            if answer.stop is not None:
                until, reason = answer.stop
                stop_host(v, until, reason)
                if answer.stop_action == "close_source":
                    extra = Settled()
                    close_source(self.p, v, item.source_id, result.url, reason, answer.detail, now, extra)
                    events += extra.events
                    sources += extra.sources
        elif plan.role == "hop":
            # COMMON-06: another host's robots.txt hop, made here under this host's gap; the answer
            # goes back to that host as work of its own.
            v.frontier = [i for i in v.frontier if i.work_id != item.work_id]
            v.pacing = politeness.after_request(v.pacing, self.p.politeness, t_end, plan.delay)
            tokens.append(answer_token(item, result))
        elif plan.role == "tdmrep":
            body = result.body if result.status == 200 else b""
            ttl = self.p.robots.cache_ttl_s
            text = body.decode("utf-8", "replace")
            rec: dict[str, Any] = {"status": result.status, "body": text}
            v.tdmrep = {"exp": t_end + ttl, "stamp": t_end, "rec": rec}
            if len(text) > INLINE_AUX_BYTES:
                aux.append(("tdmrep", {"stamp": t_end, "rec": rec}))
                v.tdmrep["rec"] = None
            # PRAHA-06: the gap after this request is the host's effective delay (Crawl-delay included).
            v.pacing = politeness.after_request(v.pacing, self.p.politeness, t_end, plan.delay)
        else:
            first_records = v.nurl == 0  # no URL of this host was ever recorded before this turn
            settled = self._settle_item(v, item, result, plan, now, inputs)
            skips += [SkipRec.of(item, url, code, detail) for url, code, detail in settled.skips]
            admitted, refused = self._admit(v, item, settled.candidates, now, first_records, inputs)
            skips += [SkipRec.of(item, url, code, detail) for url, code, detail in refused]
            for follow in admitted:
                if follow.host == v.host:
                    v.frontier.append(follow)
                else:
                    outgoing.append(follow)
            for key, text in settled.texts_out:
                if key not in inputs.stored:
                    inputs.stored[key] = self.results.store_text(key, text)
            events += [(t, rid, _bind_versions(r, inputs.stored)) for t, rid, r in settled.events]
            sources += settled.sources
            if settled.url_record is not None:
                urls.append(settled.url_record)
        tokens += _group_tokens(outgoing, item)
        more = bool(v.frontier)
        rotate = more and token.receives >= ROTATE_AT
        if rotate:
            # Replace a token that came back many times (its receive count is what sends poison
            # to the DLQ): the fresh one claims the host when it arrives.
            tokens.append(TokenOut(v.host, short_hash(token.tok, "rotate", str(version))))
        outbox = Outbox(version=version + 1, events=tuple(events), tokens=tuple(tokens), urls=tuple(urls),
                        sources=tuple(sources))
        # The owner is hidden for the gap measured on this machine's clock, the one that stamped
        # t_end: a duration, which no skew shortens, so without the margin (Plan.credit).
        wait = self._next_wait(v, self.clock.now(), self.p.politeness.clock_skew_margin_s) if more else None
        owner = token.owner if more and not rotate else None
        return _Commit(view=v, outbox=outbox, owner=owner, lease=self.clock.now() + (wait or 0.0) + self.lease_s,
                       aux=aux, skips=skips, wait=wait, more=more, rotate=rotate,
                       wake={t.host for t in tokens if t.host != v.host})

    def _settle_item(self, v: HostView, item: WorkItem, result: FetchResult, plan: Plan, now: float,
                     inputs: _Inputs) -> Settled:
        if self.extractor is None:
            inputs.extracted = ()
        tdm = tdmrep_body(v)
        for _ in range(3):
            settled = settle_item(self.p, v, item, result, plan.delay, now, texts=inputs.texts, tdmrep_body=tdm,
                                  extracted=inputs.extracted, robots=plan.robots)
            if not settled.needs_texts and not settled.needs_extract:
                return settled
            for key in settled.needs_texts:
                inputs.texts[key] = self.results.load_text(key)
            if settled.needs_extract:
                inputs.extracted = tuple(self.extractor.extract(main_text(result.body), url=item.url)) \
                    if self.extractor is not None else ()
        raise RuntimeError(f"settling {item.url} kept asking for inputs")

    def _admit(self, v: HostView, item: WorkItem, candidates: list[Candidate], now: float,
               host_has_no_records: bool, inputs: _Inputs) -> tuple[list[WorkItem], list[tuple[str, str, str]]]:
        if not candidates:
            return [], []
        # The store is asked only about URLs that can have a record: a host with no record yet
        # (its first round) has none to find.
        ask = [c.item.url for c in candidates
               if c.needs_record and not (c.item.host == v.host and host_has_no_records)
               and c.item.url not in inputs.records]
        if ask:
            found = self.store.url_records(ask)
            inputs.records.update({url: found.get(url) for url in ask})
        records = {url: rec for url, rec in inputs.records.items() if rec is not None}
        pending = admission.admit(candidates, records, v, now)
        granted: dict[str, int] = {}
        for key, (cap, want) in pending.wants.items():
            if key not in inputs.granted:  # idempotent per taker: a second take would return the same
                inputs.granted[key] = self.store.take_quota(key, taker=item.work_id, want=want, limit=cap.limit,
                                                            expires_at=cap.expires_at)
            granted[key] = inputs.granted[key]
        return admission.finalize(pending, granted, v, now)

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
            self._journal_skips(skips, now)

    def _next_wait(self, v: HostView, now: float, credit_s: float = 0.0) -> float:
        soonest = min(i.not_before for i in v.frontier)
        return max(0.0, max(v.pacing.next_allowed - credit_s, soonest) - now)

    def _put_aux(self, host: str, records: list[tuple[str, dict[str, Any]]]) -> None:
        for kind, data in records:
            self.store.put_aux(host, kind, data)  # before the write that points at it (by its stamp)

    def _write(self, host: str, version: int, view: HostView, owner: str | None, lease: float,
               outbox: Outbox | None, now: float) -> int | None:
        # A commit with an outbox holds it for its drain: a token that comes meanwhile waits.
        view.drain_until = now + DRAIN_LEASE_S if outbox else 0.0
        ok = self.store.write_host(host, version, owner=owner, lease_until=lease if owner else 0.0,
                                   state=view.state_blob(now), outbox=outbox, expires_at=now + HOST_ITEM_TTL_S)
        return version + 1 if ok else None

    def _drain_now(self, pending: list[Pending]) -> None:
        if self.tokens is None:
            raise TransientError("no token queue to drain an outbox into")
        report = drain(pending, self.store, self.results, self.tokens)
        if report.fault:
            raise ServiceFault(f"outbox not drained: {report.fault}")
        if report.failed:
            raise TransientError(f"outbox not drained: {report.failed}")

    # --- journal ------------------------------------------------------------------------------
    def _record_request(self, result: FetchResult, purpose: str, source: str) -> None:
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

    def _journal_skips(self, skips: list[SkipRec], now: float) -> None:
        for s in skips:
            self.journal.skip({"bot": self.p.name, "url": s.url, "reason": s.reason, "detail": s.detail,
                               "purpose": s.purpose, "source": s.source, "round": s.round, "t": iso(now)})


def _worth_an_item(v: HostView) -> bool:
    """Whether a host with no item yet has anything to keep: work, caches, a stop, closed sources
    (a purged host keeps nothing but work made since)."""
    if v.purged_at and not v.frontier:
        return False
    return bool(v.frontier or v.robots or v.robots_hop or v.tdmrep or v.closed or v.quotas
                or v.pacing.stopped_until or v.pacing.next_allowed)


def _bind_versions(record: dict[str, Any], versions: dict[str, str]) -> dict[str, Any]:
    out = dict(record)
    for k, value in record.items():
        if isinstance(value, str) and value.startswith(text_version("")):
            out[k] = versions.get(value[len(text_version("")):], "")
    return out


def _group_tokens(items: list[WorkItem], parent: WorkItem) -> list[TokenOut]:
    """Follow-ups for other hosts, one token per host. The id names the parent's work and the
    host, so the same follow-ups sent again (a repeated drain) are taken in once."""
    by_host: dict[str, list[WorkItem]] = defaultdict(list)
    for i in items:
        by_host[i.host].append(i)
    return [TokenOut(h, short_hash(parent.work_id, "follow", h), tuple(group)) for h, group in sorted(by_host.items())]

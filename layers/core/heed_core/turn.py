"""The plan of one host turn: from a snapshot of the host and the token in hand, what happens now.

Pure: ``plan_turn(profile, view, token, now)`` takes in the token's work, settles what must not
be fetched (refusals, robots.txt says no), and ends with at most one request (robots.txt, a
redirect hop of it, tdmrep.json, or the next work item) or with how long to wait. It changes
only its own copy of the view; the executor makes the request and commits the copy."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from heed_core import kinds, politeness
from heed_core.hoststate import TOKENS_FOR_S, HostView, TokenOut
from heed_core.ports import FetchRequest, FetchResult
from heed_core.profile import Profile
from heed_core.refusals import iso, refusal
from heed_core.robots import RobotsTxt, effective_delay
from heed_core.robots_policy import RobotsFetchPolicy
from heed_core.robots_step import (
    HOP_WAIT_S,
    answer_of,
    answer_token,
    cached_outcome,
    hop_token,
    is_answer,
    is_hop,
    request_url,
    settle_robots,
)
from heed_core.settle import Settled, close_source, stop_host
from heed_core.tasks import Event_, TaskInput, handle_failure, may_bring
from heed_core.urls import authority, origin
from heed_core.work import WorkItem

# What the one request of a plan is for ("": no request).
PlanRole = Literal["", "robots", "tdmrep", "item", "hop"]

__all__ = ["MAX_STEPS", "Plan", "PlanRole", "SkipRec", "TokenIn", "give_up_request", "host_gap", "plan_turn",
           "remaining_s", "tdmrep_url"]

MAX_STEPS = 500  # items settled without a request in one turn before the token comes back


@dataclass(frozen=True)
class TokenIn:
    """The SQS message in hand: which host, the token's id (its owner name), the work it brings."""

    host: str
    tok: str
    items: tuple[WorkItem, ...] = ()
    bad: tuple[tuple[str, str], ...] = ()  # (what, why) for items that did not decode
    receives: int = 1  # ApproximateReceiveCount
    message_id: str = ""  # the SQS message: the owner of a host is a message, not a body (copies differ)
    # The later tokens of the host in the same batch: (tok, items, bad), as the fields above.
    also: tuple[tuple[str, tuple[WorkItem, ...], tuple[tuple[str, str], ...]], ...] = ()

    @property
    def owner(self) -> str:
        """Who holds the host while this token is at work: the SQS message (its copies differ
        in body, never in id), else the token's id."""
        return self.message_id or self.tok


@dataclass(frozen=True)
class SkipRec:
    """A URL not fetched or not kept, for the journal: a stable ``reason`` code, a ``detail`` a
    person can read, and the work it belonged to (purpose, source, round)."""

    url: str
    reason: str
    detail: str
    purpose: str = ""
    source: str = ""
    round: str = ""

    @classmethod
    def of(cls, item: WorkItem, url: str, reason: str, detail: str) -> SkipRec:
        """The skip of ``url`` (the item's own URL or one it led to), filed under ``item``'s work."""
        return cls(url, reason, detail, item.purpose, item.source_id, item.round_id)


@dataclass
class Plan:
    """What one turn does, decided before any request: the host's state to commit (``view``, a
    copy), the skips, events and source fields already settled, and then exactly one of: a
    ``request`` to make (``role`` says which: robots, tdmrep or item; ``gate_host`` whose pacing
    it obeys; ``delay`` the gap after it), a ``wait`` in seconds before the host can go on
    (``why`` says what it waits for), or neither (``wait`` None: no work left). ``dirty``: the
    view changed and must be written even without a request; ``foreign_owner``: another token
    holds the host, nothing may be written."""

    view: HostView
    skips: list[SkipRec] = field(default_factory=list)
    events: list[Event_] = field(default_factory=list)
    sources: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    request: FetchRequest | None = None
    role: PlanRole = ""  # robots | tdmrep | item | hop (this host's request for another's robots.txt)
    item: WorkItem | None = None  # the work item the request is for, or waits on
    hops: int = 0  # robots.txt redirect hops so far
    delay: float = 0.0  # the gap after the item's request (Crawl-delay included)
    gate_host: str = ""  # the host whose pacing the request obeys
    robots: RobotsTxt | None = None  # the robots.txt that allowed the item's request (its Content-Usage lines)
    wait: float | None = None  # no request: come back after this many seconds (None: no work left)
    why: str = ""
    dirty: bool = False  # decisions to write even without a request
    foreign_owner: bool = False  # another token holds the host
    tokens: list[TokenOut] = field(default_factory=list)  # work for other hosts, decided without a request
    aux: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # big records to put before the commit
    # The clock-skew margin this token need not wait again: it is the host's owner, back from
    # the hide its own turn set after the last request, for the gap measured on the clock that
    # stamped that request's end (a duration SQS keeps, untouched by skew between machines).
    credit: float = 0.0


def tdmrep_url(host: str) -> str:
    """The host's TDMRep well-known file (PRAHA-03)."""
    return origin(host) + "/.well-known/tdmrep.json"


def _policy(profile: Profile) -> RobotsFetchPolicy:
    return profile.robots_policy  # built once per profile, held by it (no cache keyed by id())


def _gate_wait(view: HostView, now: float, credit_s: float) -> float | None:
    decision = politeness.decide(view.pacing, now, credit_s)
    if isinstance(decision, politeness.Wait):
        return decision.until - now
    return None


def plan_turn(profile: Profile, snapshot: HostView, token: TokenIn, now: float) -> Plan:
    """The plan of one turn for ``token``'s host at ``now``, from ``snapshot`` (never changed:
    the plan works on a copy). Takes in the work the token (and ``token.also``) brings, once per
    token id; settles, without a request, every ready item that must not be fetched (operator
    block, closed source, stopped host, robots.txt says no, caps, read already) and stops at
    the first that needs a request: robots.txt first if the cached copy is gone (COMMON-02),
    tdmrep.json where the profile respects it, then the item, each only once the host's gap
    has passed (COMMON-05). Pure: no store, no clock, no network; never raises for bad data in
    the snapshot (an undecodable frontier entry becomes a ``bad_work_item`` skip). At most
    ``MAX_STEPS`` items are settled in one turn; then the plan waits 0 s (``why="yield"``)."""
    v = snapshot.copy()
    plan = Plan(view=v)
    if v.corrupt:
        # What of the stored item did not decode is left out, said once, and the item rewritten.
        plan.skips.append(SkipRec(v.host, "corrupt_state", "left out: " + "; ".join(v.corrupt)[:600]))
        v.corrupt, plan.dirty = (), True
    if v.owner and v.owner == token.owner:
        # COMMON-05 across machines: the owner token comes back only after the hide its own turn
        # set; that hide already kept the gap (in true time), so the margin (there for a token
        # read by another clock: a fresh round's, a follow-up) is not waited a second time.
        plan.credit = profile.politeness.clock_skew_margin_s
    for raw, why in v.bad_items:
        plan.skips.append(SkipRec(str(raw)[:200], "bad_work_item", why))
        plan.dirty = True  # written back without them: an undecodable item never blocks its host
    v.bad_items = []
    if v.owner and v.owner != token.owner and v.lease_until > now:
        # COMMON-05: another token is at work on this host (its request may be in flight).
        return Plan(view=snapshot.copy(), wait=v.lease_until - now, why="lease_taken", foreign_owner=True)
    for tok, items, bad in ((token.tok, token.items, token.bad), *token.also):
        if (items or bad) and tok not in v.tokens_done:
            # A token's undecodable items are said once, when its work is taken in (the host's
            # token comes back for each of its turns: not again then).
            plan.skips += [SkipRec(what, "bad_work_item", why) for what, why in bad]
            known = {i.work_id for i in v.frontier}
            v.frontier += [i for i in items if i.work_id not in known]
            v.tokens_done[tok] = now + TOKENS_FOR_S
            # The later tokens are acknowledged after this turn: what they brought must be written.
            plan.dirty = plan.dirty or tok != token.tok or bool(bad)
    for answer in [i for i in v.frontier if is_answer(i)]:
        v.frontier.remove(answer)
        _take_answer(profile, v, answer, now, plan)
    for _ in range(MAX_STEPS):
        v.frontier.sort(key=lambda i: i.order_key)
        if not v.frontier:
            plan.why = "no_work"
            return plan
        ready = [i for i in v.frontier if i.not_before <= now]
        if not ready:
            plan.wait, plan.why = min(i.not_before for i in v.frontier) - now, "not_before"
            # While the work waits (a cadence, a retry), robots.txt is read if it must be anyway:
            # the read the work needs then comes on time, not a robots.txt request late.
            soonest = min(v.frontier, key=lambda i: i.not_before)
            if not _blocked_or_stopped(profile, v, soonest, now):
                _robots_request(profile, v, soonest, now, plan)
            return plan
        item = ready[0]
        if _step(profile, v, item, now, plan):
            return plan
    plan.wait, plan.why = 0.0, "yield"
    return plan


def _blocked_or_stopped(profile: Profile, v: HostView, item: WorkItem, now: float) -> bool:
    refused = refusal(profile, v, item, now)
    return refused is not None and refused[0] in ("blocked_by_operator", "host_stopped", "source_closed",
                                                  "robots_unavailable")


def _take_answer(profile: Profile, v: HostView, item: WorkItem, now: float, plan: Plan) -> None:
    """COMMON-06: the answer another host got to a hop of this host's robots.txt, settled here as
    if this turn had made the request (a cached copy, the next hop, or the site's stop)."""
    result, hops = answer_of(item)
    answer = settle_robots(profile, v, result, hops, item.round_start, now, paced=False)
    if answer.aux is not None:
        plan.aux.append(("robots", answer.aux))
    if answer.stop is not None:
        until, reason = answer.stop
        stop_host(v, until, reason)
        if answer.stop_action == "close_source":
            out = Settled()
            close_source(profile, v, item.source_id, result.url, reason, answer.detail, now, out)
            plan.events += out.events
            plan.sources += out.sources
    plan.dirty = True


def _hand_over_hop(v: HostView, url: str, hops: int, item: WorkItem, now: float, plan: Plan) -> None:
    """COMMON-06: a robots.txt redirect to another authority is that host's request to make, under
    its own gap: handed to it as work (once, again only if no answer came in ``HOP_WAIT_S``). Its
    answer comes back as a token, which wakes this host: nothing here waits for it."""
    hop = dict(v.robots_hop or {})
    if float(hop.get("sent", 0.0)) + HOP_WAIT_S <= now:
        plan.tokens.append(hop_token(v, url, hops, item))
        hop["sent"] = now
        v.robots_hop = hop
        plan.dirty = True
    plan.why = "robots_hop"


def _robots_request(profile: Profile, v: HostView, item: WorkItem, now: float, plan: Plan) -> bool:
    """Plan the robots.txt request ``item`` needs, if the cached copy is gone; True if planned."""
    if cached_outcome(v, _policy(profile), now) is not None:
        return False
    url, hops = request_url(v, now)
    gate = authority(url)
    if gate != v.host:
        _hand_over_hop(v, url, hops, item, now, plan)
        plan.why = plan.why if plan.wait is None else "not_before"
        return False
    if _gate_wait(v, now, plan.credit) is not None:
        return False
    plan.wait, plan.why = None, ""
    plan.request = FetchRequest(url=url, purpose="robots", max_bytes=profile.robots.max_bytes)
    plan.role, plan.item, plan.hops, plan.gate_host = "robots", item, hops, gate
    return True


def give_up_request(profile: Profile, plan: Plan, now: float, reason: str, detail: str) -> None:
    """The plan's request given up, never made (its earlier requests were cut, their process
    killed mid-request, too often): settled as a request that got no answer would be, without
    one. An item is a skip with ``reason``; robots.txt is unreachable, as the bot's status policy
    reads that (cached 10 minutes), and said once as a skip; tdmrep.json answered nothing; a
    robots.txt hop goes back to its host as an answer with no status. The plan is left with no
    request: it waits 0 s when work is left (the next turn goes on), else nothing. Pure."""
    item, request, v = plan.item, plan.request, plan.view
    assert item is not None and request is not None
    none = FetchResult(url=request.url, status=None, t_start=now, t_end=now, error=reason, sent=False)
    if plan.role == "robots":
        answer = settle_robots(profile, v, none, plan.hops, item.round_start, now, paced=False)
        if answer.aux is not None:
            plan.aux.append(("robots", answer.aux))
        plan.skips.append(SkipRec.of(item, request.url, reason, detail))
    elif plan.role == "tdmrep":
        v.tdmrep = {"exp": now + profile.robots.cache_ttl_s, "stamp": now, "rec": {"status": None, "body": ""}}
        plan.skips.append(SkipRec.of(item, request.url, reason, detail))
    elif plan.role == "hop":
        v.frontier = [i for i in v.frontier if i.work_id != item.work_id]
        plan.tokens.append(answer_token(item, none))
        plan.skips.append(SkipRec.of(item, request.url, reason, detail))
    else:
        _settle_without_request(v, item, plan, reason, detail)
    plan.request, plan.role, plan.dirty, plan.why = None, "", True, reason
    plan.wait = 0.0 if v.frontier else None


def _settle_without_request(v: HostView, item: WorkItem, plan: Plan, reason: str, detail: str) -> None:
    v.frontier = [i for i in v.frontier if i.work_id != item.work_id]
    plan.skips.append(SkipRec.of(item, item.url, reason, detail))
    plan.dirty = True


def _step(profile: Profile, v: HostView, item: WorkItem, now: float, plan: Plan) -> bool:
    """True when the plan is complete (a request, or a wait); False: the item was settled."""
    unknown = kinds.unknown_work(item)
    if unknown is not None:
        # A kind or purpose no room of this process knows (a kind taken out, a bad token): never fetched.
        _settle_without_request(v, item, plan, "bad_work_item", unknown)
        return False
    if v.purged_at and item.round_start <= v.purged_at:
        # COMMON-08: work made before its domain was purged stores nothing again, asks for nothing.
        v.frontier = [i for i in v.frontier if i.work_id != item.work_id]
        plan.skips.append(SkipRec.of(item, item.url, "purged", f"its domain was purged at {iso(v.purged_at)}"))
        plan.dirty = plan.dirty or v.version > 0
        return False
    refused = refusal(profile, v, item, now)
    if refused is not None:
        if is_hop(item):
            # The host a robots.txt redirects to is closed to us: the other host hears it as unreachable.
            down = FetchResult(url=item.url, status=None, error="hop_refused", sent=False, t_start=now, t_end=now)
            plan.tokens.append(answer_token(item, down))
        _settle_without_request(v, item, plan, *refused)
        return False
    if is_hop(item):
        # COMMON-06: another host's robots.txt redirect, this host's request: its gap, no robots.txt
        # of its own asked first (a robots.txt is always fetched).
        wait = _gate_wait(v, now, plan.credit)
        if wait is not None:
            plan.wait, plan.why = wait, "gap"
            return True
        plan.request = FetchRequest(url=item.url, purpose="robots", max_bytes=profile.robots.max_bytes)
        own = cached_outcome(v, _policy(profile), now)
        crawl_delay = own.robots.crawl_delay(profile.robots_token) if own is not None and own.robots else None
        plan.role, plan.item, plan.gate_host = "hop", item, v.host
        plan.delay = max(effective_delay(profile.politeness.min_delay_s, crawl_delay,
                                         profile.politeness.crawl_delay_cap_s), v.pacing.floor_s)
        return True
    outcome = cached_outcome(v, _policy(profile), now)
    if outcome is None:
        # COMMON-02: robots.txt before anything else on the host.
        url, hops = request_url(v, now)
        gate = authority(url)
        if gate != v.host:
            _hand_over_hop(v, url, hops, item, now, plan)
            return True
        wait = _gate_wait(v, now, plan.credit)
        if wait is not None:
            plan.wait, plan.why = wait, "gap"
            return True
        plan.request = FetchRequest(url=url, purpose="robots", max_bytes=profile.robots.max_bytes)
        plan.role, plan.item, plan.hops, plan.gate_host = "robots", item, hops, gate
        return True
    if outcome.error in ("private_address", "invalid_url"):
        # Safety first: the host's address was refused before any byte left.
        _settle_without_request(v, item, plan, outcome.error,
                                "refused before connecting (use --allow-private for local runs)")
        return False
    if outcome.kind == "skip_host" or outcome.robots is None:
        # SUBSIDIE-11: a 5xx on robots.txt skips the host for this round.
        v.pacing = replace(v.pacing, skip_round=item.round_id)
        _settle_without_request(v, item, plan, "robots_unavailable",
                                f"robots.txt {outcome.status or outcome.error}: host skipped this round")
        return False
    verdict = outcome.robots.verdict(item.url, profile.robots_token)
    if not verdict.allowed:
        code = "robots_disallowed" if outcome.kind == "parsed" else "robots_unavailable"
        detail = verdict.rule or ""
        if verdict.line:
            detail = f"{detail} (line {verdict.line}, group {verdict.group})"
        if outcome.reason == "robots_unreachable":
            # A site that does not answer may be a result of its own (PRAHA-04's site check
            # records "reachable or not"): the item's kind says, as for any answer given up on.
            down = FetchResult(url=item.url, status=None, error=outcome.error or "unreachable", sent=False)
            out = handle_failure(TaskInput(profile=profile, item=item, result=down, now=now), code, detail)
            plan.events += out.events
            if out.source_fields:
                plan.sources.append((item.source_id, out.source_fields))
        _settle_without_request(v, item, plan, code, detail)
        return False
    # A site owner's slower pace for this host (the desk) is a floor under every gap: never faster.
    delay = max(effective_delay(profile.politeness.min_delay_s, verdict.crawl_delay,
                                profile.politeness.crawl_delay_cap_s), v.pacing.floor_s)
    kind = kinds.get(item.task)  # known: _step settled unknown work first
    if kind.reads_tdmrep(profile, item) and not _tdmrep_known(v, now):
        url = tdmrep_url(v.host)
        if not outcome.robots.verdict(url, profile.robots_token).allowed:
            # COMMON-02 holds for the well-known file too: not read means no reservation known.
            ttl = profile.robots.cache_ttl_s
            v.tdmrep = {"exp": now + ttl, "stamp": now, "rec": {"status": None, "body": "",
                                                                  "note": "robots.txt disallows tdmrep.json"}}
            plan.dirty = True
        else:
            wait = _gate_wait(v, now, plan.credit)
            if wait is not None:
                plan.wait, plan.why = wait, "gap"
                return True
            plan.request = FetchRequest(url=url, purpose="tdmrep", max_bytes=profile.max_bytes("tdmrep"))
            plan.role, plan.item, plan.delay, plan.gate_host = "tdmrep", item, delay, v.host
            return True
    wait = _gate_wait(v, now, plan.credit)
    if wait is not None:
        plan.wait, plan.why = wait, "gap"
        return True
    headers: dict[str, str] = {}
    if profile.conditional_requests and item.seen is not None:
        # AUBE-02 / WANNADO-07: an unchanged page costs the site a 304.
        if item.seen.etag:
            headers["If-None-Match"] = item.seen.etag
        if item.seen.last_modified:
            headers["If-Modified-Since"] = item.seen.last_modified
    plan.request = FetchRequest(url=item.url, purpose=item.purpose, max_bytes=profile.max_bytes(item.purpose),
                                headers=headers)
    plan.role, plan.item, plan.delay, plan.gate_host = "item", item, delay, v.host
    plan.robots = outcome.robots  # AIPREF attach 3.3: the preferences current when the page was fetched
    return True


def host_gap(profile: Profile, view: HostView, now: float) -> float:
    """The gap this host asks for between two requests, as far as its view knows it: the bot's
    delay, the Crawl-delay of a robots.txt still cached (up to the cap), the round spacing, and
    the host's own floor (a site owner's slower pace)."""
    p = profile.politeness
    crawl_delay = None
    outcome = cached_outcome(view, _policy(profile), now)
    if outcome is not None and outcome.robots is not None:
        crawl_delay = outcome.robots.crawl_delay(profile.robots_token)
    delay = effective_delay(p.min_delay_s, crawl_delay, p.crawl_delay_cap_s)
    if p.round_spacing_s:
        delay = max(delay, p.round_spacing_s + p.round_spacing_jitter_s)
    return max(delay, view.pacing.floor_s)


def remaining_s(profile: Profile, view: HostView, now: float) -> float:
    """How long the host's work may still take at its pace: a gap for each request its frontier
    holds or may still bring (``tasks.may_bring``: a feed its articles, as the profile caps
    them). What a queue with more hosts due than it serves at once may hand out first (the
    longest first: a round ends sooner, as a critical path is scheduled); never what decides
    when a host may be asked."""
    if not view.frontier:
        return 0.0
    requests = sum(1 + may_bring(profile, item) for item in view.frontier)
    return requests * host_gap(profile, view, now)


def _tdmrep_known(v: HostView, now: float) -> bool:
    meta = v.tdmrep
    if not meta or float(meta.get("exp", 0.0)) <= now:
        return False
    if meta.get("rec") is None:
        return float((v.aux.get("tdmrep") or {}).get("stamp", -1.0)) == float(meta.get("stamp", 0.0))
    return True


def tdmrep_body(v: HostView) -> bytes | None:
    """The host's cached tdmrep.json body (PRAHA-03), if one was read with a 200."""
    meta = v.tdmrep or {}
    rec = meta.get("rec")
    if rec is None:
        rec = (v.aux.get("tdmrep") or {}).get("rec") or {}
    body = rec.get("body") or ""
    return body.encode("utf-8") if body and rec.get("status") == 200 else None

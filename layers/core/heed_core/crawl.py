"""One host's turn: which of its pending URLs may be fetched now, fetch at most one, record why.

The fetcher handler calls ``Crawler.host_turn(host)`` for each SQS token (MessageGroupId =
host). A turn never sleeps: when the host is not ready it answers "defer for N seconds" and the
handler hides the token for that long (COMMON-05, AUBE-09; billed time is network time)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Callable

from heed_core import politeness
from heed_core.extract.challenge import is_challenge
from heed_core.ports import Clock, FetchRequest, FetchResult, Transport
from heed_core.profile import Profile
from heed_core.responses import REDIRECT_STATUSES, Outcome, classify
from heed_core.robots import effective_delay
from heed_core.robots_policy import RobotsCacheError, RobotsFetchPolicy, RobotsOutcome, robots_from_response
from heed_core.store import Journal, Results, Store
from heed_core.tasks import TaskContext, TaskOutput, handle_failure, handle_success
from heed_core.urls import BadUrl, absolute, authority, in_domain, origin
from heed_core.work import UrlRecord, WorkItem

_MAX_NO_REQUEST_STEPS = 500  # skips handled in one turn before yielding the token back
_ERROR_CACHE_S = 600.0  # a robots.txt 5xx/unreachable outcome is retried after 10 minutes
# Work spaced by the round spacing (WANNADO-05): the pages a round is about, not robots/sitemaps.
_SPACED_PURPOSES = frozenset({"agenda", "subsidy", "page", "article"})


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class TurnResult:
    action: str  # "ack": the token is done | "defer": hide it for ``delay_s``
    delay_s: float = 0.0
    more: bool = False  # ack and send a new token: the host has more work
    requests: int = 0
    wake: set[str] = field(default_factory=set)  # other hosts that got new work
    why: str = ""


class Crawler:
    def __init__(
        self,
        profile: Profile,
        store: Store,
        transport: Transport,
        journal: Journal,
        results: Results,
        clock: Clock,
        *,
        render: Callable[[str, int], FetchResult] | None = None,
        extractor: Any = None,
    ) -> None:
        self.p = profile
        self.store = store
        self.transport = transport
        self.journal = journal
        self.results = results
        self.clock = clock
        self.render = render
        self.extractor = extractor
        self.robots_policy = RobotsFetchPolicy.from_mapping(profile.get("robots"))
        self.token = profile.robots_token
        self.lease_s = float(profile.get("fetch.total_deadline_s")) + 30.0

    # --- the turn -------------------------------------------------------------------------
    def host_turn(self, host: str) -> TurnResult:
        wake: set[str] = set()
        for _ in range(_MAX_NO_REQUEST_STEPS):
            now = self.clock.now()
            items = self.store.pending_work(host)
            if not items:
                return TurnResult("ack", wake=wake, why="no_work")
            ready = [i for i in items if i.not_before <= now]
            if not ready:
                wait = min(i.not_before for i in items) - now
                return TurnResult("defer", delay_s=wait, wake=wake, why="not_before")
            item = ready[0]
            step = self._step(host, item, now, wake)
            if step is not None:
                step.wake |= wake
                return step
        return TurnResult("defer", delay_s=0.0, more=True, wake=wake, why="yield")

    def _step(self, host: str, item: WorkItem, now: float, wake: set[str]) -> TurnResult | None:
        """None: the item was settled without a request (go on with the next one)."""
        reason, state, seen = self._refusal(host, item, now)
        if reason is not None:
            self._skip_item(item, *reason)
            return None
        robots = self._robots(host, now, item.source_id, item.round_start)
        if isinstance(robots, TurnResult):
            return robots
        if robots.error in ("private_address", "invalid_url"):
            # Safety first: the host's address was refused before any byte left.
            self._skip_item(item, robots.error, "refused before connecting (use --allow-private for local runs)")
            return None
        if robots.kind == "skip_host":
            # SUBSIDIE-11: a 5xx on robots.txt skips the host for this round.
            self.store.skip_host_round(host, item.round_id)
            self._skip_item(item, "robots_unavailable", f"robots.txt {robots.status or robots.error}: host skipped this round")
            return None
        verdict = robots.robots.verdict(item.url, self.token)  # type: ignore[union-attr]
        if not verdict.allowed:
            code = "robots_disallowed" if robots.kind == "parsed" else "robots_unavailable"
            detail = verdict.rule or ""
            if verdict.line:
                detail = f"{detail} (line {verdict.line}, group {verdict.group})"
            if item.task == "site_check" and robots.reason == "robots_unreachable":
                # PRAHA-04 records "reachable or not": a site that does not answer is a result.
                ctx = TaskContext(self.p, self.store, self.results, now, self.extractor)
                down = FetchResult(url=item.url, status=None, error=robots.error or "unreachable", sent=False)
                out = handle_failure(item, down, ctx, code, detail)
                if out.source_fields:
                    self.store.update_source(item.source_id, **out.source_fields)
            self._skip_item(item, code, detail)
            return None
        delay = effective_delay(float(self.p.get("politeness.min_delay_s")), verdict.crawl_delay,
                                float(self.p.get("politeness.crawl_delay_cap_s")))
        if item.purpose == "article" and self.p.task("feed").get("article_followup", {}).get("respect_tdmrep"):
            tdm = self._tdmrep(host, now, item.source_id, robots, delay)
            if isinstance(tdm, TurnResult):
                return tdm
        return self._fetch_item(host, item, now, delay, wake, state, seen)

    def _refusal(self, host: str, item: WorkItem, now: float
                 ) -> tuple[tuple[str, str] | None, politeness.HostState | None, UrlRecord | None]:
        """Why this item is settled without a request (or None), plus the host and URL state read."""
        # COMMON-08: a stop request is honoured without any robots.txt change.
        if in_domain(host, self.p.get("operator.blocked_domains") or []):
            return ("blocked_by_operator", "listed in the profile's operator.blocked_domains"), None, None
        blocked = self.store.blocked(host)
        if blocked:
            return ("blocked_by_operator", blocked), None, None
        source = self.store.get_source(item.source_id)
        if source is not None and source.closed:
            return ("source_closed", source.closed_reason or ""), None, None  # PRAHA-07
        state = self.store.get_host(host)
        if state.stopped_until > now:
            return ("host_stopped", f"{state.stop_reason} until {iso(state.stopped_until)}"), state, None
        if state.skip_round == item.round_id:
            return ("robots_unavailable", "host skipped this round (robots.txt server error)"), state, None
        seen = self.store.get_url(item.url)
        if seen is not None and seen.last_work_id == item.work_id:
            # at-least-once delivery, exactly-once effects
            return ("duplicate_delivery", "this work item was already done"), state, seen
        if seen is not None and item.purpose == "article" and seen.last_fetched is not None and \
                (self.p.task("feed").get("article_followup") or {}).get("once_ever"):
            # AUBE-03 / PRAHA-05: queued twice (two feeds, two rounds) is still read once.
            return ("already_read", "an article page is read only once"), state, seen
        week = float(self.p.task("sitemap_fallback").get("title_refetch_after_s", 0) or 0)
        if seen is not None and item.ctx.get("title_only") and seen.title_fetched_at and \
                now - seen.title_fetched_at < week:
            return ("seen_recently", "title fetched within a week (SPRING-04)"), state, seen
        return None, state, seen

    # --- robots.txt (COMMON-02) and tdmrep.json (PRAHA-03) ---------------------------------
    def _robots(self, host: str, now: float, source: str, round_start: float) -> RobotsOutcome | TurnResult:
        cached = self.store.get_cached("robots", host, now)
        if cached is not None:
            try:
                return RobotsOutcome.from_dict(cached, self.robots_policy)
            except RobotsCacheError:
                pass
        # RFC 9309 2.3.1.2: up to five redirect hops; COMMON-06: each hop is its own request,
        # paced on the host it goes to, so a hop may have to wait for a later turn.
        hop = self.store.get_cached("robots_hop", host, now) or {"url": origin(host) + "/robots.txt", "hops": 0}
        url, hops = str(hop["url"]), int(hop["hops"])
        target = authority(url)
        gate = self._gate(target, now)
        if gate is not None:
            return gate
        min_delay = float(self.p.get("politeness.min_delay_s"))
        try:
            result = self._get(url, "robots", source=source, max_bytes=int(self.p.get("robots.max_bytes")))
        finally:
            t_end = self.clock.now()
            self.store.release_host(target, next_allowed=politeness.next_allowed_after(t_end, min_delay), t_end=t_end)
        t_end = result.t_end or t_end
        nxt = absolute(url, result.header("Location") or "") if result.status in REDIRECT_STATUSES else None
        if nxt is not None and hops < int(self.p.get("robots.max_redirects")):
            self.store.put_cached("robots_hop", host, {"url": nxt, "hops": hops + 1}, expires_at=t_end + 3600)
            wait = self.store.get_host(authority(nxt)).next_allowed - self.clock.now()
            return TurnResult("defer", delay_s=max(0.0, wait), requests=1, why="robots_redirect")
        self.store.put_cached("robots_hop", host, {}, expires_at=0.0)
        if result.status == 429 or is_challenge(result.status, result.headers, result.body):
            # SPRING-05 / PRAHA-07: "too many requests" (or a challenge) on robots.txt is the site
            # asking us to stop, not a missing file: stop the host, or close the source.
            self._stop_from(result, host, source, now)
            return TurnResult("defer", delay_s=0.0, more=True, requests=1, why="robots_refused")
        outcome = robots_from_response(result.status, result.error, result.body, self.robots_policy)
        ttl = float(self.p.get("robots.cache_ttl_s"))
        if outcome.reason in ("robots_server_error", "robots_unreachable"):
            ttl = min(ttl, _ERROR_CACHE_S)
        # SPRING-09 / AUBE-12: the copy serves at most one cycle: its age counts from the start of
        # the round that read it, so the next round of a daily (or 15-minute) schedule reads it anew.
        self.store.put_cached("robots", host, outcome.to_dict(), expires_at=min(t_end, round_start or t_end) + ttl)
        if outcome.kind == "parsed" and outcome.robots is not None:
            # The Crawl-delay now known may lengthen the gap after this very request.
            delay = effective_delay(min_delay, outcome.robots.crawl_delay(self.token),
                                    float(self.p.get("politeness.crawl_delay_cap_s")))
            self.store.release_host(target, next_allowed=t_end + delay, t_end=t_end)
        sent = 1 if result.sent else 0
        return TurnResult("defer", delay_s=max(0.0, self.store.get_host(host).next_allowed - self.clock.now()),
                          requests=sent, why="robots_fetched")

    def _stop_from(self, result: FetchResult, host: str, source: str, now: float) -> None:
        outcome = classify(result, responses=self.p.get("responses"), retries_used_today=0, now=now,
                           challenge=is_challenge(result.status, result.headers, result.body))
        self._apply_stop(outcome, host, source, result.url, now)

    def _apply_stop(self, outcome: Outcome, host: str, source: str, url: str, now: float) -> None:
        """SPRING-05 / PRAHA-07: stop the host (for the day, or Retry-After), and close the source."""
        if outcome.action not in ("stop_host", "close_source"):
            return
        self.store.stop_host(host, outcome.until or now, outcome.reason)
        if outcome.action == "close_source" and source:
            self.store.update_source(source, closed=True, closed_reason=f"{outcome.reason}: {outcome.detail}")
            self.results.emit("source.closed", {"bot": self.p.name, "kind": "source_closed", "source": source,
                                                 "url": url, "reason": outcome.reason, "detail": outcome.detail})

    def _tdmrep(self, host: str, now: float, source: str, robots: RobotsOutcome,
                delay: float) -> dict[str, Any] | TurnResult:
        cached = self.store.get_cached("tdmrep", host, now)
        if cached is not None:
            return cached
        url = origin(host) + "/.well-known/tdmrep.json"
        ttl = float(self.p.get("robots.cache_ttl_s"))
        if robots.robots is not None and not robots.robots.verdict(url, self.token).allowed:
            # COMMON-02 holds for the well-known file too: not read means no reservation known.
            data: dict[str, Any] = {"status": None, "body": "", "note": "robots.txt disallows tdmrep.json"}
            self.store.put_cached("tdmrep", host, data, expires_at=now + ttl)
            return data
        gate = self._gate(host, now)
        if gate is not None:
            return gate
        result = self._get(url, "tdmrep", source=source, max_bytes=self.p.max_bytes("tdmrep"))
        # PRAHA-06: the gap after this request is the host's effective delay (Crawl-delay included).
        self.store.release_host(host, next_allowed=result.t_end + delay, t_end=result.t_end)
        body = result.body if result.status == 200 else b""
        data = {"status": result.status, "body": body.decode("utf-8", "replace")}
        self.store.put_cached("tdmrep", host, data, expires_at=result.t_end + ttl)
        return TurnResult("defer", delay_s=delay, requests=1, why="tdmrep_fetched")

    # --- pacing -----------------------------------------------------------------------------
    def _gate(self, host: str, now: float, state: politeness.HostState | None = None) -> TurnResult | None:
        """None when a request may start now (and the host lease is ours)."""
        decision = politeness.decide(state or self.store.get_host(host), now)
        if isinstance(decision, politeness.Wait):
            return TurnResult("defer", delay_s=decision.until - now, why=decision.why)
        if isinstance(decision, politeness.Stopped):
            return TurnResult("defer", delay_s=0.0, more=True, why="stopped")
        if not self.store.acquire_host(host, now, self.lease_s):
            return TurnResult("defer", delay_s=1.0, why="lease_taken")  # COMMON-05: someone else is on it
        return None

    def _fetch_item(self, host: str, item: WorkItem, now: float, delay: float, wake: set[str],
                    state: politeness.HostState | None, seen: UrlRecord | None) -> TurnResult:
        gate = self._gate(host, now, state)
        if gate is not None:
            return gate
        headers: dict[str, str] = {}
        if self.p.get("conditional_requests") and seen is not None:
            # AUBE-02 / WANNADO-07: an unchanged page costs the site a 304.
            if seen.etag:
                headers["If-None-Match"] = seen.etag
            if seen.last_modified:
                headers["If-Modified-Since"] = seen.last_modified
        max_bytes = self.p.max_bytes(item.purpose)
        try:
            if item.ctx.get("render") and self.render is not None:
                result = self.render(item.url, max_bytes)  # WANNADO-09: the render service asks the origin
                self._record_request(result, item.purpose, item.source_id)
            else:
                result = self._get(item.url, item.purpose, source=item.source_id, max_bytes=max_bytes, headers=headers)
        finally:
            t_end = self.clock.now()
        if item.purpose in _SPACED_PURPOSES:
            delay = politeness.spaced_delay(delay, float(self.p.get("politeness.round_spacing_s")),
                                            float(self.p.get("politeness.round_spacing_jitter_s") or 0), item.work_id)
        try:
            # SPRING-02 / exactly once: the lease is held until the URL is recorded and the work
            # done, so a redelivered token cannot fetch it again in between.
            self._settle(item, result, seen, wake)
        finally:
            self.store.release_host(host, next_allowed=politeness.next_allowed_after(result.t_end or t_end, delay),
                                    t_end=result.t_end or t_end)
        more = bool(self.store.pending_work(host, limit=1))
        return TurnResult("ack", more=more, requests=1, wake=set(wake), why="fetched")

    # --- after the response -------------------------------------------------------------------
    def _settle(self, item: WorkItem, result: FetchResult, seen: UrlRecord | None, wake: set[str]) -> None:
        now = self.clock.now()
        challenge = is_challenge(result.status, result.headers, result.body)
        outcome = classify(result, responses=self.p.get("responses"), retries_used_today=item.attempts,
                           now=now, challenge=challenge)
        host = item.host
        ctx = TaskContext(profile=self.p, store=self.store, results=self.results, now=now,
                          extractor=self.extractor)
        out: TaskOutput
        if outcome.action == "ok":
            out = handle_success(item, result, ctx)
        elif outcome.action == "not_modified" and item.purpose == "sitemap":
            out = handle_success(item, result, ctx)  # the kept copy still lists the pages due
        elif outcome.action == "not_modified":
            # AUBE-08: a 304 is a read of the feed too (the cadence counts from it).
            out = TaskOutput(skips=[(item.url, "not_modified", "304: unchanged since the last read")],
                             source_fields={"last_read": now} if item.depth == 0 else {})
        elif outcome.action == "redirect":
            out = self._redirect(item, outcome.location or "")
        elif outcome.action == "retry":
            self.store.update_work(replace(item, attempts=item.attempts + 1, not_before=outcome.retry_at or now))
            self.store.put_url(self._url_record(item, result, seen, done=False))
            return
        else:
            self._apply_stop(outcome, host, item.source_id, item.url, now)
            code = {"stop_host": "host_stopped", "close_source": "source_closed"}.get(outcome.action, outcome.reason)
            out = handle_failure(item, result, ctx, code, outcome.detail or outcome.reason)
        for url, code, detail in out.skips:
            self._journal_skip(url, code, detail, item)
        for seq, follow in enumerate(out.followups):
            follow = replace(follow, seq=seq)
            try:
                if self.store.add_work(follow) and follow.host != host:
                    wake.add(follow.host)
            except BadUrl:
                self._journal_skip(follow.url, "bad_url", "not an http(s) URL", item)
        self.store.put_url(self._url_record(item, result, seen, done=True, **out.url_fields))
        if out.source_fields:
            self.store.update_source(item.source_id, **out.source_fields)
        self.store.complete_work(item)

    def _redirect(self, item: WorkItem, location: str) -> TaskOutput:
        """COMMON-06 / SPRING-07: a redirect is a new work item, robots-checked and paced."""
        target = absolute(item.url, location)
        if target is None:
            return TaskOutput(skips=[(item.url, "bad_redirect", location[:200])])
        if item.hop + 1 > int(self.p.get("redirects.max_hops")):
            return TaskOutput(skips=[(target, "too_many_redirects", f"after {item.hop} hops")])
        ctx = dict(item.ctx)
        ctx.setdefault("first_url", item.url)
        nxt = replace(item, url=target, hop=item.hop + 1, not_before=0.0, attempts=0, ctx=ctx)
        return TaskOutput(followups=[nxt])

    def _url_record(self, item: WorkItem, result: FetchResult, seen: UrlRecord | None, *, done: bool,
                    **fields: Any) -> UrlRecord:
        base = seen or UrlRecord(url=item.url)
        etag, modified = base.etag, base.last_modified
        if result.status is not None and 200 <= result.status < 300:
            etag, modified = result.header("ETag"), result.header("Last-Modified")
        return replace(base, etag=etag, last_modified=modified, last_fetched=result.t_end,
                       last_status=result.status, last_work_id=item.work_id if done else base.last_work_id,
                       **fields)

    # --- journal ------------------------------------------------------------------------------
    def _get(self, url: str, purpose: str, *, source: str, max_bytes: int,
             headers: dict[str, str] | None = None) -> FetchResult:
        result = self.transport.fetch(FetchRequest(url=url, purpose=purpose, max_bytes=max_bytes,
                                                   headers=headers or {}))
        self._record_request(result, purpose, source)
        return result

    def _record_request(self, result: FetchResult, purpose: str, source: str) -> None:
        if not result.sent:
            # Refused before any byte left (e.g. private_address): a skip, not a request.
            self.journal.skip({"bot": self.p.name, "url": result.url, "reason": result.error or "refused",
                               "detail": "refused before connecting", "purpose": purpose, "source": source,
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

    def _journal_skip(self, url: str, reason: str, detail: str, item: WorkItem) -> None:
        self.journal.skip({"bot": self.p.name, "url": url, "reason": reason, "detail": detail,
                           "purpose": item.purpose, "source": item.source_id, "round": item.round_id,
                           "t": iso(self.clock.now())})

    def _skip_item(self, item: WorkItem, reason: str, detail: str) -> None:
        self._journal_skip(item.url, reason, detail, item)
        self.store.complete_work(item)


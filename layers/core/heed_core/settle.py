"""After the response: what one answer to a work item means for the host, the source and the URL.

Pure. The answer is classified (keep, 304, redirect, retry the same day, stop the host, close
the source, give up), the task of the item's kind reads a good body, and everything that follows
is written into the turn's copy of the host view or returned as effects for the outbox."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from heed_core import kinds, politeness
from heed_core.envelope import found_at
from heed_core.extract.challenge import is_challenge
from heed_core.extract.events import Event
from heed_core.hoststate import MAX_SEEN_ITEMS, HostView, was_read
from heed_core.ports import FetchResult
from heed_core.profile import Profile
from heed_core.responses import Outcome, classify
from heed_core.robots import RobotsTxt
from heed_core.tasks import Candidate, Event_, Skip, TaskInput, TaskOutput, handle_failure, handle_success
from heed_core.urls import Refused, canonical_link, short_hash
from heed_core.work import UrlRecord, WorkItem

__all__ = ["Settled", "close_source", "settle_item", "stop_host"]


@dataclass
class Settled:
    """What one answer led to, beyond the host view: skips, follow-up candidates (for ``admit``),
    events, texts to keep (before the commit), source fields, the URL's new record and the
    outcome's ``detail``. ``needs_texts`` / ``needs_extract``: the task asked for kept texts or
    an extractor's answer; nothing else is set and the caller settles again with them."""

    skips: list[Skip] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    events: list[Event_] = field(default_factory=list)
    texts_out: list[tuple[str, str]] = field(default_factory=list)
    sources: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    url_record: UrlRecord | None = None
    detail: str | None = None
    needs_texts: list[str] = field(default_factory=list)
    needs_extract: bool = False


def stop_host(view: HostView, until: float, reason: str) -> None:
    """SPRING-05 / PRAHA-07: no request to the host before ``until`` (changes ``view`` in place;
    a stop already longer is kept)."""
    view.pacing = replace(view.pacing, stopped_until=max(view.pacing.stopped_until, until), stop_reason=reason)


def close_source(profile: Profile, view: HostView, source_id: str, url: str, reason: str, detail: str,
                 now: float, out: Settled) -> None:
    """PRAHA-07: the source is marked closed (here, for the work already queued on this host,
    and on the source itself, so later rounds leave it out) and a result says so: the source's
    fields and a ``source.closed`` event are appended to ``out``. A source closed already (or
    none) is left as it is: closing twice adds nothing."""
    if not source_id or source_id in view.closed:
        return
    view.closed[source_id] = f"{reason}: {detail}"
    out.sources.append((source_id, {"closed": True, "closed_reason": f"{reason}: {detail}", "closed_at": now}))
    rid = short_hash(profile.name, "closed", source_id, str(int(now)))
    out.events.append(("source.closed", rid, {"bot": profile.name, "id": rid, "kind": "source_closed",
                                              "source": source_id, "found_at": found_at(now), "url": url,
                                              "reason": reason, "detail": detail}))


def settle_item(profile: Profile, view: HostView, item: WorkItem, result: FetchResult, delay: float,
                now: float, *, texts: Mapping[str, str | None] | None = None, tdmrep_body: bytes | None = None,
                extracted: tuple[Event, ...] | None = None, robots: RobotsTxt | None = None) -> Settled:
    """Settle ``item`` with ``result`` into ``view`` (changed in place): the item leaves the
    frontier (or comes back for a retry the same day, SPRING-06), the host's next request waits
    ``delay`` (spaced per WANNADO-05 for the pages a round is about, as the item's kind says) from
    the end of this one,
    a 429/403/challenge stops the host or closes the source (SPRING-05, PRAHA-07), a redirect
    becomes a candidate (COMMON-06), and a good body is read by the item's task. Returns what
    leaves the view (``Settled``). When the task asks for a kept text or an extractor's answer,
    nothing is changed and ``needs_*`` says what to bring. ``robots`` is the robots.txt that
    allowed the request: its Content-Usage lines decide what may be kept. Pure; never raises
    for a bad body (it becomes a skip with a reason)."""
    challenge = is_challenge(result.status, result.headers, result.body)
    outcome = classify(result, responses=profile.responses, retries_used_today=item.attempts,
                       now=now, challenge=challenge)
    inp = TaskInput(profile=profile, item=item, result=result, now=now, texts=texts or {},
                    tdmrep_body=tdmrep_body, host_results=view.results, extracted=extracted,
                    robots=robots, host_seen=view.seen.get(item.source_id, ()))
    out = Settled()
    task: TaskOutput | None = None
    kind = kinds.find(item.task)
    kept_copy = kind is not None and item.purpose in kind.read_on_304
    if outcome.action == "ok" or (outcome.action == "not_modified" and kept_copy):
        task = handle_success(inp)  # a 304 sitemap: the kept copy still lists the pages due
        if task.needs_texts or task.needs_extract:
            return Settled(needs_texts=task.needs_texts, needs_extract=task.needs_extract)
    t_end = result.t_end or now
    view.frontier = [i for i in view.frontier if i.work_id != item.work_id]
    if kinds.is_spaced(item):
        delay = politeness.spaced_delay(delay, profile.politeness.round_spacing_s,
                                        profile.politeness.round_spacing_jitter_s, item.work_id)
    view.pacing = politeness.after_request(view.pacing, profile.politeness, t_end, delay)
    if outcome.action == "retry":
        # SPRING-06: the same item again later today; a failed answer is not a read (AUBE-03), but
        # it is an attempt: the source's cadence counts from it (AUBE-08: piled rounds wait).
        view.frontier.append(replace(item, attempts=item.attempts + 1, not_before=outcome.retry_at or now))
        view.recent[item.url] = [result.t_start or t_end, item.purpose, item.source_id, 0]
        return out
    if task is None:
        task = _without_body(profile, view, item, result, outcome, inp, now, out)
    out.skips += task.skips
    out.candidates += task.candidates
    out.events += task.events
    out.texts_out += task.texts_out
    out.detail = task.detail
    if task.source_fields:
        out.sources.append((item.source_id, task.source_fields))
        if kind is not None and kind.keeps_seen_items and task.source_fields.get("seen_items") is not None:
            # The items a feed reported, kept with the host's own commit: a round's token made
            # before that commit left (a crash, a slow drain) never reports them again.
            view.seen[item.source_id] = list(task.source_fields["seen_items"])[:MAX_SEEN_ITEMS]
    for detail_type, rid, _ in task.events:
        if detail_type == "event.found":
            view.results[rid] = now  # one event, one result across the host's pages
    out.url_record = _url_record(item, result, task.url_fields)
    if item.seen is None or item.seen.last_fetched is None:
        view.nurl += 1
    # AUBE-03: a read that failed (no answer, a 5xx, a 429) is a read not done. AUBE-08: the host
    # remembers when the read began, as the source's last_read does: a round's read, waiting for
    # last_read + the cadence, is never refused then as too soon by the length of the last request.
    view.recent[item.url] = [result.t_start or t_end, item.purpose, item.source_id, 1 if was_read(result.status) else 0]
    return out


def _without_body(profile: Profile, view: HostView, item: WorkItem, result: FetchResult, outcome: Outcome,
                  inp: TaskInput, now: float, out: Settled) -> TaskOutput:
    if outcome.action == "not_modified":
        # AUBE-08: a 304 is a read of the feed too (the cadence counts from its start). The
        # items it reported before stay remembered: the read-state is written whole.
        fields: dict[str, Any] = {}
        if item.depth == 0:
            fields["last_read"] = result.t_start or now
            kind = kinds.find(item.task)
            if kind is not None and kind.keeps_seen_items:
                fields["seen_items"] = list(dict.fromkeys(list(view.seen.get(item.source_id, ()))
                                                          + list(item.ctx.get("si") or ())))
        return TaskOutput(skips=[(item.url, "not_modified", "304: unchanged since the last read")],
                          source_fields=fields)
    if outcome.action == "redirect":
        return _redirect(profile, item, outcome.location or "")
    if outcome.action in ("stop_host", "close_source"):
        stop_host(view, outcome.until or now, outcome.reason)
        if outcome.action == "close_source":
            close_source(profile, view, item.source_id, item.url, outcome.reason, outcome.detail, now, out)
        code = "host_stopped" if outcome.action == "stop_host" else "source_closed"
        return handle_failure(inp, code, outcome.detail or outcome.reason)
    return handle_failure(inp, outcome.reason, outcome.detail or outcome.reason)


def _redirect(profile: Profile, item: WorkItem, location: str) -> TaskOutput:
    """COMMON-06 / SPRING-07: a redirect is a new work item, robots-checked and paced."""
    # The Location as a browser reads it, in the one spelling robots.txt then judges (COMMON-02).
    target = canonical_link(item.url, location, profile.strip_params)
    if isinstance(target, Refused):
        return TaskOutput(skips=[(item.url, "bad_redirect", f"{target.detail}: {location[:200]!r}")])
    if item.hop + 1 > profile.redirects.max_hops:
        return TaskOutput(skips=[(target, "too_many_redirects", f"after {item.hop} hops")])
    ctx = dict(item.ctx)
    ctx.setdefault("first_url", item.url)
    nxt = replace(item, url=target, hop=item.hop + 1, not_before=0.0, attempts=0, ctx=ctx, seen=None)
    kind = kinds.find(item.task)
    once = kind is not None and kind.read_once(profile, item)  # AUBE-03: a redirect is read once too
    return TaskOutput(candidates=[Candidate(nxt, once_ever=once, with_record=True)])


def _url_record(item: WorkItem, result: FetchResult, fields: Mapping[str, Any]) -> UrlRecord:
    base = item.seen or UrlRecord(url=item.url)
    etag, modified = base.etag, base.last_modified
    if result.status is not None and 200 <= result.status < 300:
        etag, modified = result.header("ETag"), result.header("Last-Modified")
    return replace(base, url=item.url, etag=etag, last_modified=modified, last_fetched=result.t_end,
                   last_status=result.status, **fields)

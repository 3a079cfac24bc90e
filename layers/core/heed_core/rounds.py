"""Which scheduled rounds are due, the first work items of each source in a round, and their tokens."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Protocol
from urllib.parse import urlsplit

from heed_core.hoststate import TokenOut
from heed_core.profile import Profile
from heed_core.schedule import firings
from heed_core.urls import BadUrl, authority, canonical, origin, short_hash
from heed_core.work import ENTRY_PURPOSE, Source, UrlRecord, WorkItem

__all__ = ["Round", "RoundEngine", "due_rounds", "entry_items", "play_rounds", "round_id", "round_plan", "round_tokens"]

# A tick may be late or missed; never look back further than a day.
_MAX_CATCH_UP_S = 86400.0


@dataclass(frozen=True)
class Round:
    round_id: str
    start: float
    task: str


def round_id(start: float, task: str) -> str:
    return datetime.fromtimestamp(start, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ") + f"/{task}"


def due_rounds(profile: Profile, last_tick: float, now: float) -> list[Round]:
    """The rounds to start for the firings in (last_tick, now]: the latest firing of each task.
    After missed ticks a source gets one round of each task, not one per missed firing (its
    cadence still holds: AUBE-08, PRAHA-04)."""
    since = max(last_tick, now - _MAX_CATCH_UP_S)
    latest: dict[str, float] = {}
    for s in profile.schedules:
        for t in firings(s.expression, since, now):
            latest[s.task] = max(latest.get(s.task, t), t)
    return sorted((Round(round_id(t, task), t, task) for task, t in latest.items()), key=lambda r: (r.start, r.task))


def round_plan(profile: Profile, start: float, until: float) -> dict[float, list[str]]:
    """A local run's rounds: every task at ``start``, then each schedule's firings up to ``until``,
    the tasks of one moment together (the order a run fires them in: by time)."""
    plan: dict[float, list[str]] = {start: sorted({s.task for s in profile.schedules})}
    for s in profile.schedules:
        for t in firings(s.expression, start, until):
            plan.setdefault(t, [])
            if s.task not in plan[t]:
                plan[t].append(s.task)
    return dict(sorted(plan.items()))


class RoundEngine(Protocol):
    """What a local run drives through its rounds (the handlers on moto, or the embedded engine)."""

    def advance_to(self, t: float) -> int: ...

    def fire(self, t: float, tasks: list[str]) -> None: ...

    def drain(self) -> int: ...

    def now(self) -> float: ...


def play_rounds(engine: RoundEngine, profile: Profile, start: float, until: float) -> int:
    """Every round of ``round_plan`` in order (the clock moved to it, the scheduler fired, the
    queue drained), then the clock on to ``until``; the tokens still deferred at the end."""
    left = 0
    for t, tasks in round_plan(profile, start, until).items():
        engine.advance_to(t)
        engine.fire(t, tasks)
        left = engine.drain()
    if until > engine.now():
        left = engine.advance_to(until)
    return left


def cadence_s(profile: Profile, kind: str) -> float:
    """A source's own cadence (AUBE-08's feeds, PRAHA-04's site checks), 0 for a kind without one."""
    if kind == "feed":
        return profile.feed.min_read_interval_s
    if kind == "site_check":
        return profile.site_check.min_interval_s
    return 0.0


def _on_topic(profile: Profile, kind: str, url: str) -> bool:
    """Is a source URL itself a page the round is about (not only the site's address)?"""
    path = urlsplit(url).path or "/"
    if path == "/":
        return False
    if kind == "agenda":
        pats = [p.lower() for p in profile.agenda.follow_patterns]
        return any(p in path.lower() for p in pats)
    return True


def entry_items(profile: Profile, rnd: Round, sources: list[Source], now: float,
                records: Mapping[str, UrlRecord] | None = None) -> tuple[list[WorkItem], list[tuple[Source, str, str]]]:
    """The entry work of each source of this round's kind, or why a source sits this one out.
    ``records``: what is known of the entry URLs (validators for a conditional GET)."""
    records = records or {}
    items: list[WorkItem] = []
    skips: list[tuple[Source, str, str]] = []
    cadence = cadence_s(profile, rnd.task)
    sitemaps_seen: set[str] = set()
    for seq, src in enumerate(sources):
        if src.kind != rnd.task:
            continue
        if src.closed:
            skips.append((src, "source_closed", src.closed_reason or ""))
            continue
        not_before = 0.0
        if cadence and src.last_read is not None and now - src.last_read < cadence:
            # AUBE-08 (one feed read per 15 minutes), PRAHA-04 (a site check once a week): a read
            # that would come too early waits for its time if that is within this round's reach
            # (half a cadence, at most an hour), and sits the round out otherwise.
            wait = src.last_read + cadence - now
            if wait > min(cadence / 2, 3600.0):
                skips.append((src, "seen_recently", f"read {int(now - src.last_read)} s ago; cadence {int(cadence)} s"))
                continue
            not_before = src.last_read + cadence
        try:
            url = canonical(src.url, profile.strip_params)  # what is requested: the one spelling
            root = authority(url)
        except BadUrl:
            skips.append((src, "bad_url", "not an absolute http(s) URL"))
            continue
        ctx: dict[str, object] = {"opts": dict(src.options)} if src.options else {}
        if src.kind == "feed" and src.seen_items:
            ctx["si"] = list(src.seen_items)
        entry = WorkItem(url=url, purpose=ENTRY_PURPOSE[src.kind], task=src.kind, source_id=src.id,
                         source_url=url, round_id=rnd.round_id, round_start=rnd.start, ctx=dict(ctx), seq=seq,
                         not_before=not_before, seen=records.get(url))

        if src.kind in ("subsidy", "agenda"):
            # WANNADO-06 / SUBSIDIE-01: start at the site's sitemap, never walk blindly; one read
            # of a sitemap per host per round, however many sources share the host.
            for given in list(src.options.get("sitemaps") or [origin(root) + "/sitemap.xml"]):
                try:
                    sitemap = canonical(str(given), profile.strip_params)
                except BadUrl:
                    skips.append((src, "bad_url", f"sitemap {str(given)[:200]!r} is not an absolute http(s) URL"))
                    continue
                if sitemap in sitemaps_seen:
                    continue
                sitemaps_seen.add(sitemap)
                items.append(replace(entry, url=sitemap, purpose="sitemap", ctx={**ctx, "role": src.kind, "level": 0},
                                     seen=records.get(sitemap)))
            if src.kind == "subsidy" and _on_topic(profile, src.kind, url):
                # SUBSIDIE-01/-02: the page the operator gave is itself watched, every round.
                items.append(replace(entry, purpose="subsidy", ctx=dict(ctx)))
            continue
        items.append(entry)
    return items, skips


def round_tokens(items: list[WorkItem], *, part: str = "") -> list[TokenOut]:
    """One token per host for a round's entry work. The id names the round and the host (and
    ``part``, the chunk of the sources it came from, when a pass is cut into chunks), so a tick
    that is repeated (EventBridge delivers at least once) or redone brings nothing twice."""
    by_host: dict[str, list[WorkItem]] = defaultdict(list)
    for item in items:
        by_host[item.host].append(item)
    out = []
    for host, group in sorted(by_host.items()):
        rounds = sorted({i.round_id for i in group})
        key = ("round", *rounds, host, part) if part else ("round", *rounds, host)
        out.append(TokenOut(host, short_hash(*key), tuple(replace(i) for i in group)))
    return out

"""Which scheduled rounds are due, the first work items of each source in a round, and their tokens."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Protocol

from heed_core import kinds
from heed_core.hoststate import TokenOut
from heed_core.kinds.base import Entry
from heed_core.profile import Profile
from heed_core.schedule import firings
from heed_core.urls import BadUrl, authority, canonical, short_hash
from heed_core.work import Source, UrlRecord, WorkItem

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


def entry_items(profile: Profile, rnd: Round, sources: list[Source], now: float,
                records: Mapping[str, UrlRecord] | None = None) -> tuple[list[WorkItem], list[tuple[Source, str, str]]]:
    """The entry work of each source of this round's kind, or why a source sits this one out.
    ``records``: what is known of the entry URLs (validators for a conditional GET). What a
    source's first work is, its kind says (heed_core.kinds: ``Kind.entries``)."""
    records = records or {}
    items: list[WorkItem] = []
    skips: list[tuple[Source, str, str]] = []
    kind = kinds.find(rnd.task)
    if kind is None:
        return items, skips
    cadence = kind.cadence_s(profile)
    taken: set[str] = set()  # what the round's sources entered: one read per round however many share it
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
            authority(url)
        except BadUrl:
            skips.append((src, "bad_url", "not an absolute http(s) URL"))
            continue
        ctx: dict[str, object] = {"opts": dict(src.options)} if src.options else {}
        first = WorkItem(url=url, purpose=kind.entry_purpose, task=src.kind, source_id=src.id, source_url=url,
                         round_id=rnd.round_id, round_start=rnd.start, ctx=ctx, seq=seq, not_before=not_before,
                         seen=records.get(url))
        entry = Entry(profile=profile, source=src, item=first, records=records, taken=taken)
        items += kind.entries(entry)
        skips += [(src, reason, detail) for reason, detail in entry.skips]
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

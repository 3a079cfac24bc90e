"""Which scheduled rounds are due, and the first work item of each source in a round."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from heed_core.profile import Profile
from heed_core.schedule import firings
from heed_core.urls import BadUrl, authority, origin
from heed_core.work import ENTRY_PURPOSE, Source, WorkItem

# A tick may be late or missed; never replay more than a day of firings at once.
_MAX_CATCH_UP_S = 86400.0


@dataclass(frozen=True)
class Round:
    round_id: str
    start: float
    task: str


def round_id(start: float, task: str) -> str:
    return datetime.fromtimestamp(start, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") + f"/{task}"


def due_rounds(profile: Profile, last_tick: float, now: float) -> list[Round]:
    """Every firing of the profile's schedules in (last_tick, now]."""
    since = max(last_tick, now - _MAX_CATCH_UP_S)
    out = [Round(round_id(t, s.task), t, s.task) for s in profile.schedules for t in firings(s.expression, since, now)]
    return sorted(set(out), key=lambda r: (r.start, r.task))


def _cadence_s(profile: Profile, kind: str) -> float:
    task = profile.task(kind)
    return float(task.get("min_read_interval_s") or task.get("min_interval_s") or 0.0)


def entry_items(profile: Profile, rnd: Round, sources: list[Source], now: float) -> tuple[list[WorkItem], list[tuple[Source, str, str]]]:
    """The entry work of each source of this round's kind, or why a source sits this one out."""
    items: list[WorkItem] = []
    skips: list[tuple[Source, str, str]] = []
    cadence = _cadence_s(profile, rnd.task)
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
            root = authority(src.url)
        except BadUrl:
            skips.append((src, "bad_url", "not an absolute http(s) URL"))
            continue
        purpose = ENTRY_PURPOSE[src.kind]
        urls = [src.url]
        ctx: dict[str, object] = {}
        if src.kind in ("subsidy", "agenda"):
            # WANNADO-06 / SUBSIDIE-01: start at the site's sitemap, never walk blindly.
            urls = list(src.options.get("sitemaps") or [origin(root) + "/sitemap.xml"])
            ctx = {"role": src.kind, "level": 0}
        for url in urls:
            items.append(WorkItem(url=url, purpose=purpose, task=src.kind, source_id=src.id,
                                  source_url=src.url, round_id=rnd.round_id, round_start=rnd.start, ctx=ctx,
                                  seq=seq, not_before=not_before))
    return items, skips

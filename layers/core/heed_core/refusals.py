"""Why a work item is settled without a request: the site, the operator or our own promises say no."""
from __future__ import annotations

from datetime import UTC, datetime

from heed_core.hoststate import HostView, recent_read, was_read
from heed_core.profile import Profile
from heed_core.urls import in_domain
from heed_core.work import WorkItem

__all__ = ["iso", "refusal"]


def iso(t: float) -> str:
    """Epoch seconds as ISO 8601 UTC with milliseconds (``2026-12-01T10:00:00.250Z``), as the journal writes times."""
    return datetime.fromtimestamp(t, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def refusal(profile: Profile, view: HostView, item: WorkItem, now: float) -> tuple[str, str] | None:
    """(reason code, detail) when ``item`` must not be fetched at ``now``, or None when nothing
    but robots.txt and the host's gap still stand between it and a request. The reasons, in the
    order they are asked: ``blocked_by_operator`` (COMMON-08: the profile's list or the store's),
    ``source_closed`` (PRAHA-07), ``host_stopped`` (SPRING-05), ``robots_unavailable`` (the host
    sits this round out, SUBSIDIE-11), ``already_read`` (AUBE-03, PRAHA-05), ``seen_recently``
    (SPRING-04's week for titles, AUBE-08's cadence for a source's entry). Pure."""
    # COMMON-08: a stop request is honoured without any robots.txt change.
    if in_domain(item.host, list(profile.operator.blocked_domains)):
        return "blocked_by_operator", "listed in the profile's operator.blocked_domains"
    if view.blocked is not None:
        return "blocked_by_operator", view.blocked
    if item.source_id in view.closed:
        return "source_closed", view.closed[item.source_id]  # PRAHA-07
    pace = view.pacing
    if pace.stopped_until > now:
        return "host_stopped", f"{pace.stop_reason} until {iso(pace.stopped_until)}"
    if pace.skip_round and pace.skip_round == item.round_id:
        return "robots_unavailable", "host skipped this round (robots.txt server error)"
    recent = view.recent.get(item.url)
    follow = profile.feed.article_followup
    if item.purpose == "article" and follow is not None and follow.once_ever:
        # AUBE-03 / PRAHA-05: queued twice (two feeds, two rounds) is still read once.
        # A read that failed (no answer, a 5xx, a 429) is a read not done: asked for again later.
        if recent_read(recent) or (item.seen is not None and item.seen.last_fetched is not None
                                   and was_read(item.seen.last_status)):
            return "already_read", "an article page is read only once"
    if item.ctx.get("title_only") and item.attempts == 0:
        week = profile.sitemap_fallback.title_refetch_after_s
        last = max(float(recent[0]) if recent_read(recent) and recent else 0.0,
                   (item.seen.title_fetched_at or 0.0) if item.seen else 0.0)
        if last and now - last < week:
            return "seen_recently", "title fetched within a week (SPRING-04)"
    cadence = profile.feed.min_read_interval_s if item.task == "feed" else 0.0
    if cadence and item.depth == 0 and item.hop == 0 and item.attempts == 0 and recent is not None \
            and recent[2] == item.source_id:
        # AUBE-08: one feed read per source per cadence, however many rounds queued it.
        if now - float(recent[0]) < cadence:
            return "seen_recently", f"read {int(now - float(recent[0]))} s ago; cadence {int(cadence)} s"
    return None

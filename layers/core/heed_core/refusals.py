"""Why a work item is settled without a request: the site, the operator or our own promises say no."""
from __future__ import annotations

from datetime import UTC, datetime

from heed_core import kinds
from heed_core.hoststate import HostView
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
    sits this round out, SUBSIDIE-11), then the item's kind's own (heed_core.kinds: ``already_read``,
    AUBE-03, PRAHA-05; ``seen_recently``, SPRING-04's week for titles, AUBE-08's cadence for a
    source's entry). Pure."""
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
    kind = kinds.find(item.task)
    if kind is None:
        return None
    # The kind's own promises: read once ever (AUBE-03, PRAHA-05), a title a week (SPRING-04), a
    # source's cadence (AUBE-08).
    return kind.refusal(profile, item, view.recent.get(item.url), now)

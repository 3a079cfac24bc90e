"""Which follow-up candidates become work: read once ever, titles once a week, caps in order.

Two steps, because caps over all hosts live in a counter outside the host's item: ``admit``
decides everything it can from the records and the host's own counters and says how many it
wants of each global cap; the executor takes them; ``finalize`` admits that many and charges
the host's own caps only for what was admitted (a refused candidate never uses up a cap)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from heed_core.hoststate import HostView, recent_read, was_read
from heed_core.kinds.handling import Candidate, Cap, Skip
from heed_core.work import UrlRecord, WorkItem

__all__ = ["Admission", "admit", "finalize"]


@dataclass
class Admission:
    """The first step's answer: the candidates that passed every check so far (in order), the
    refused ones as skips, and how many of each global cap the pending ones want."""

    pending: list[Candidate] = field(default_factory=list)  # passed every check and host cap so far
    skips: list[Skip] = field(default_factory=list)
    wants: dict[str, tuple[Cap, int]] = field(default_factory=dict)  # global cap key -> (cap, how many)


def admit(candidates: list[Candidate], records: Mapping[str, UrlRecord], view: HostView,
          now: float) -> Admission:
    """Decide what can be decided without the global counters. ``records``: what the store knows
    of the candidates' URLs (missing: never seen). A URL listed twice is one candidate; a
    read-once URL read before (AUBE-03, PRAHA-05) and a title fetched within a week (SPRING-04)
    are skipped; the host's own caps are counted but not yet charged (``view`` is not changed).
    Pure."""
    out = Admission()
    seen_keys: set[tuple[str, str]] = set()
    counted: dict[str, int] = {}
    for cand in candidates:
        item = cand.item
        key = (item.url, item.purpose)
        if key in seen_keys:
            continue  # the same link twice in one feed or sitemap is one candidate
        seen_keys.add(key)
        rec = records.get(item.url)
        recent = view.recent.get(item.url) if item.host == view.host else None
        read = recent_read(recent) or (rec is not None and rec.last_fetched is not None and was_read(rec.last_status))
        if cand.once_ever and read:
            out.skips.append((item.url, "already_read", "an article page is read only once (AUBE-03, PRAHA-05)"))
            continue
        if cand.title_week_s > 0:
            last = max((rec.title_fetched_at or 0.0) if rec else 0.0, float(recent[0]) if recent_read(recent) and recent
                       else 0.0)
            if last and now - last < cand.title_week_s:
                out.skips.append((item.url, "seen_recently", "title fetched within a week (SPRING-04)"))
                continue
        refused = None
        for cap in cand.caps:
            if cap.scope != "host":
                continue
            if counted.get(cap.key, 0) >= view.quota_left(cap.key, cap.limit, now):
                refused = cap
                break
        if refused is not None:
            out.skips.append((item.url, "cap_reached", refused.detail))
            continue
        for cap in cand.caps:
            if cap.scope == "host":
                counted[cap.key] = counted.get(cap.key, 0) + 1
            else:
                held = out.wants.get(cap.key)
                out.wants[cap.key] = (cap, (held[1] if held else 0) + 1)
        if cand.with_record:
            cand = replace(cand, item=replace(item, seen=rec))
        out.pending.append(cand)
    return out


def finalize(admission: Admission, granted: Mapping[str, int], view: HostView,
             now: float) -> tuple[list[WorkItem], list[Skip]]:
    """Admit the candidates the global caps granted (``granted``: key -> how many the store gave),
    in order, and charge the host's caps in ``view`` for those admitted only. Returns the work
    items to queue and every skip (the first step's and the ones refused here, ``cap_reached``)."""
    left = dict(granted)
    items: list[WorkItem] = []
    skips = list(admission.skips)
    for cand in admission.pending:
        refused = next((c for c in cand.caps if c.scope != "host" and left.get(c.key, 0) <= 0), None)
        if refused is not None:
            skips.append((cand.item.url, "cap_reached", refused.detail))
            continue
        for cap in cand.caps:
            if cap.scope == "host":
                view.take_local(cap.key, 1, cap.expires_at, now)
            else:
                left[cap.key] -= 1
        items.append(cand.item)
    return items, skips

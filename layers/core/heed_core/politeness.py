"""Per-host pacing: may a request to this host start now, and if not, when (COMMON-05); and the
longest a bot's host may be asked to wait, which the engines size their waits by (one place)."""
from __future__ import annotations

from dataclasses import dataclass, replace

from heed_core.profile_keys import Politeness


@dataclass(frozen=True)
class HostState:
    """What the store knows about one host (authority)."""

    next_allowed: float = 0.0  # earliest start of the next request (end of last + delay)
    stopped_until: float = 0.0  # SPRING-05 / PRAHA-07: no request before then
    stop_reason: str | None = None
    skip_round: str | None = None  # SUBSIDIE-11: robots 5xx -> skip this host for this round
    last_end: float = 0.0
    floor_s: float = 0.0  # a site owner's slower pace for this host (the desk): no gap below it


@dataclass(frozen=True)
class Go:
    pass


@dataclass(frozen=True)
class Wait:
    until: float
    why: str  # "gap"


@dataclass(frozen=True)
class Stopped:
    until: float
    reason: str


Decision = Go | Wait | Stopped


def decide(state: HostState, now: float, credit_s: float = 0.0) -> Decision:
    """The next request to a host starts no earlier than ``next_allowed`` (which the previous
    request set to its end plus the delay, plus the clock-skew margin). ``credit_s``: how much
    of that margin the caller may leave out, because the gap was already kept by a wait measured
    on the clock that wrote it (``Plan.credit``). Never two requests in flight to one host is
    the lease's (the host item's owner, ``crawl.Crawler``)."""
    if state.stopped_until > now:
        return Stopped(state.stopped_until, state.stop_reason or "host_stopped")
    if state.next_allowed - credit_s > now:
        return Wait(state.next_allowed - credit_s, "gap")
    return Go()


def next_allowed_after(t_end: float, delay_s: float, margin_s: float = 0.0) -> float:
    """AUBE-09: the gap is counted from the end of one request to the start of the next.

    ``t_end`` is stamped by the clock of the machine that made the request, and the result is
    read against the clock of whichever machine makes the next one (another Lambda host): a
    reader whose clock runs ahead of the writer's would start early. ``margin_s`` (the profile's
    ``politeness.clock_skew_margin_s``) is added so that a skew up to it never shortens the gap."""
    return t_end + delay_s + margin_s


def gap_end(p: Politeness, t_end: float, delay_s: float) -> float:
    """Where the gap a request began ends: from its end, the delay, and the clock-skew margin
    (``next_allowed_after``). The one place a gap's end is worked out."""
    return next_allowed_after(t_end, delay_s, p.clock_skew_margin_s)


def after_request(pacing: HostState, p: Politeness, t_end: float, delay_s: float) -> HostState:
    """The host's pacing after a request that ended at ``t_end``: its next request waits for the
    gap this one began (never sooner than a gap already written), counted from its end; never a
    gap shorter than the host's own floor (a site owner asked for a slower pace: the desk)."""
    delay = max(delay_s, pacing.floor_s)
    return replace(pacing, next_allowed=max(pacing.next_allowed, gap_end(p, t_end, delay)), last_end=t_end)


def spaced_delay(base_delay_s: float, spacing_s: float, jitter_s: float, seed: str) -> float:
    """WANNADO-05: inside a scheduled round, pages of one site are spaced by the round spacing
    (6-7 minutes); the jitter is derived from ``seed`` so a rerun is reproducible."""
    if spacing_s <= 0:
        return base_delay_s
    frac = (int.from_bytes(seed.encode("utf-8")[-4:].rjust(4, b"\0"), "big") % 1000) / 1000.0
    return max(base_delay_s, spacing_s + jitter_s * frac)


def end_of_day(now: float) -> float:
    """SPRING-05 'that day': midnight UTC after ``now``."""
    return (int(now) // 86400 + 1) * 86400.0


def longest_gap(p: Politeness) -> float:
    """The longest gap any host can ask for between two requests: the bot's delay, a Crawl-delay
    up to the cap, the round spacing with its jitter (the clock-skew margin not included)."""
    return max(p.min_delay_s, p.crawl_delay_cap_s, p.round_spacing_s + p.round_spacing_jitter_s)


def patience(p: Politeness) -> float:
    """How long a run waits, in real time, for deferred work before it ends a round (``heed serve
    --once``, ``heed local run``): every gap a round needs fits in it, a Crawl-delay counted up to
    two minutes (a longer one is a host left for the next round)."""
    return 5.0 + max(10.0, 2 * p.min_delay_s, p.round_spacing_s + p.round_spacing_jitter_s,
                     min(p.crawl_delay_cap_s, 120.0))

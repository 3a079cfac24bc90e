"""Per-host pacing: go / wait / stopped, the gap from the end of a request, round spacing,
and the robots Crawl-delay combined with each bot's own numbers (COMMON-05)."""
from __future__ import annotations

from datetime import UTC, datetime

import pytest

from heed_core.politeness import (
    Go,
    HostState,
    Stopped,
    Wait,
    decide,
    end_of_day,
    next_allowed_after,
    spaced_delay,
)
from heed_core.ports import FakeClock
from heed_core.profile import load_profile
from heed_core.robots import effective_delay, parse_robots
from heed_core.urls import short_hash

NOON = datetime(2024, 3, 4, 12, tzinfo=UTC).timestamp()
MIDNIGHT_AFTER = datetime(2024, 3, 5, tzinfo=UTC).timestamp()


# --- decide() ------------------------------------------------------------------------------------

def test_fresh_host_goes() -> None:
    assert decide(HostState(), NOON) == Go()


def test_gap_not_over_waits_until_next_allowed() -> None:
    state = HostState(next_allowed=NOON + 5)
    assert decide(state, NOON) == Wait(NOON + 5, "gap")
    assert decide(state, NOON + 4.999) == Wait(NOON + 5, "gap")
    assert decide(state, NOON + 5) == Go()


def test_stopped_host_wins_over_everything() -> None:
    state = HostState(stopped_until=MIDNIGHT_AFTER, stop_reason="http_429", next_allowed=NOON + 20)
    assert decide(state, NOON) == Stopped(MIDNIGHT_AFTER, "http_429")
    assert decide(state, MIDNIGHT_AFTER) == Go()


def test_stopped_without_reason_has_a_reason_code() -> None:
    assert decide(HostState(stopped_until=NOON + 1), NOON) == Stopped(NOON + 1, "host_stopped")


# --- AUBE-09: the gap counts from the end of the previous request ---------------------------------

def test_aube_09_gap_counted_from_end_of_request() -> None:
    # GIVEN a slow request that started at t=0 and ended at t=4 (a 4-second download)
    clock = FakeClock(NOON)
    t_start = clock.now()
    clock.advance(4.0)
    t_end = clock.now()
    delay = float(load_profile("aubebot").get("politeness.min_delay_s"))
    state = HostState(next_allowed=next_allowed_after(t_end, delay), last_end=t_end)
    # THEN 1.5 s after the start is not enough, nor is 1.499 s after the end
    assert decide(state, t_start + delay) != Go()
    assert decide(state, t_end + 1.499) == Wait(t_end + 1.5, "gap")
    assert decide(state, t_end + 1.5) == Go()


# --- WANNADO-05: round spacing -------------------------------------------------------------------

def test_wannado_05_spaced_delay_between_six_and_seven_minutes() -> None:
    p = load_profile("wannadobot")
    spacing = float(p.get("politeness.round_spacing_s"))
    jitter = float(p.get("politeness.round_spacing_jitter_s"))
    seeds = [short_hash("round", str(i)) for i in range(200)]
    delays = [spaced_delay(1.5, spacing, jitter, s) for s in seeds]
    assert all(6 * 60 <= d <= 7 * 60 for d in delays)
    assert all(spacing <= d <= spacing + jitter for d in delays)
    # the jitter actually spreads the pages (not one constant) ...
    assert len({round(d, 3) for d in delays}) > 20
    # ... and a rerun with the same seeds gives the same spacing
    assert delays == [spaced_delay(1.5, spacing, jitter, s) for s in seeds]


def test_spaced_delay_without_spacing_is_the_base_delay() -> None:
    assert spaced_delay(2.0, 0.0, 60.0, "abc") == 2.0


def test_spaced_delay_never_below_the_base_delay() -> None:
    assert spaced_delay(900.0, 360.0, 60.0, "abc") == 900.0


def test_spaced_delay_accepts_short_and_empty_seeds() -> None:
    for seed in ("", "a", "ü"):
        assert 360.0 <= spaced_delay(1.5, 360.0, 60.0, seed) <= 420.0


# --- end_of_day (SPRING-05 "that day") ------------------------------------------------------------

@pytest.mark.parametrize("now", [
    datetime(2024, 3, 4, 0, 0, 1, tzinfo=UTC).timestamp(),
    NOON,
    datetime(2024, 3, 4, 23, 59, 59, tzinfo=UTC).timestamp(),
    datetime(2024, 3, 4, 23, 59, 59, tzinfo=UTC).timestamp() + 0.9,
])
def test_end_of_day_is_the_next_utc_midnight(now: float) -> None:
    assert end_of_day(now) == MIDNIGHT_AFTER


def test_end_of_day_at_midnight_is_the_following_midnight() -> None:
    assert end_of_day(MIDNIGHT_AFTER) == MIDNIGHT_AFTER + 86400


# --- the robots Crawl-delay on top of each bot's numbers ------------------------------------------

def _delay_for(bot: str, crawl_delay_line: str | None) -> float:
    """The gap the bot keeps on a host whose robots.txt has this Crawl-delay for `*`."""
    p = load_profile(bot)
    body = "User-agent: *\n" + (f"Crawl-delay: {crawl_delay_line}\n" if crawl_delay_line else "") + "Allow: /\n"
    found = parse_robots(body.encode()).crawl_delay(p.robots_token)
    return effective_delay(float(p.get("politeness.min_delay_s")), found,
                           float(p.get("politeness.crawl_delay_cap_s")))


@pytest.mark.parametrize("crawl_delay, expected", [
    (None, 10.0), ("5", 10.0), ("30", 30.0), ("60", 60.0), ("120", 60.0), ("1e9", 60.0),
])
def test_spring_08_ten_seconds_raised_by_crawl_delay_up_to_60(crawl_delay: str | None, expected: float) -> None:
    assert _delay_for("springstudiobot", crawl_delay) == expected


@pytest.mark.parametrize("crawl_delay, expected", [
    (None, 2.0), ("1", 2.0), ("10", 10.0), ("30", 30.0), ("31", 30.0), ("1000000000", 30.0),
])
def test_subsidie_07_crawl_delay_above_30_is_30(crawl_delay: str | None, expected: float) -> None:
    assert _delay_for("subsidieupdate", crawl_delay) == expected


@pytest.mark.parametrize("crawl_delay, expected", [
    (None, 1.5), ("1", 1.5), ("5", 5.0), ("10", 10.0), ("15", 10.0),
])
def test_aube_04_crawl_delay_honoured_up_to_10(crawl_delay: str | None, expected: float) -> None:
    assert _delay_for("aubebot", crawl_delay) == expected


@pytest.mark.parametrize("crawl_delay, expected", [
    (None, 1.5), ("1", 1.5), ("4", 4.0), ("600", 600.0),
])
def test_wannado_05_longer_crawl_delay_prevails(crawl_delay: str | None, expected: float) -> None:
    assert _delay_for("wannadobot", crawl_delay) == expected


def test_praha_06_three_seconds_raised_by_crawl_delay() -> None:
    assert _delay_for("praha-x", None) == 3.0
    assert _delay_for("praha-x", "1") == 3.0
    assert _delay_for("praha-x", "20") == 20.0

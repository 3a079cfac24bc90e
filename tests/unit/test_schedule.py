"""EventBridge rate()/cron() expressions: parsing, the next firing, and counts over a real week."""
from __future__ import annotations

from datetime import UTC, datetime

import pytest

from heed_core.schedule import Cron, Rate, ScheduleError, firings, next_fire, parse_expression


def ts(*args: int) -> float:
    return datetime(*args, tzinfo=UTC).timestamp()


def utc(t: float) -> datetime:
    return datetime.fromtimestamp(t, tz=UTC)


MONDAY = ts(2024, 3, 4)  # Monday 2024-03-04 00:00 UTC
WEEK = 7 * 86400


# --- rate() ------------------------------------------------------------------------------------

@pytest.mark.parametrize("expr, period", [
    ("rate(1 minute)", 60),
    ("rate(15 minutes)", 900),
    ("rate(1 hour)", 3600),
    ("rate(6 hours)", 6 * 3600),
    ("rate(1 day)", 86400),
    ("rate(2 days)", 2 * 86400),
    (" rate( 5 minutes ) ", 300),
])
def test_rate_parses(expr: str, period: int) -> None:
    assert parse_expression(expr) == Rate(period)


def test_rate_fires_on_epoch_aligned_multiples_strictly_after() -> None:
    r = Rate(900)
    assert r.next_after(899.9) == 900
    assert r.next_after(900) == 1800  # strictly after
    assert r.next_after(900.5) == 1800
    assert next_fire("rate(15 minutes)", MONDAY + 1) == MONDAY + 900


# --- cron() fields -------------------------------------------------------------------------------

def test_cron_question_mark_and_star_mean_any() -> None:
    c = parse_expression("cron(0 6 * * ? *)")
    assert isinstance(c, Cron)
    assert c.minutes == {0} and c.hours == {6}
    assert c.days is None and c.weekdays is None and c.years is None
    assert c.months == frozenset(range(1, 13))


@pytest.mark.parametrize("field, expected", [
    ("*/15", {0, 15, 30, 45}),
    ("0/20", {0, 20, 40}),
    ("5/20", {5, 25, 45}),
    ("10-20/5", {10, 15, 20}),
    ("0,30", {0, 30}),
    ("1-3,58", {1, 2, 3, 58}),
])
def test_cron_minute_ranges_lists_and_steps(field: str, expected: set[int]) -> None:
    c = parse_expression(f"cron({field} 12 * * ? *)")
    assert isinstance(c, Cron)
    assert c.minutes == expected


@pytest.mark.parametrize("dow, expected", [
    ("MON-FRI", {2, 3, 4, 5, 6}),  # EventBridge numbering: 1=SUN .. 7=SAT
    ("SAT,SUN", {7, 1}),
    ("1", {1}),
    ("7", {7}),
    ("2-6", {2, 3, 4, 5, 6}),
    ("mon", {2}),
])
def test_cron_weekday_names_and_numbers(dow: str, expected: set[int]) -> None:
    c = parse_expression(f"cron(0 10 ? * {dow} *)")
    assert isinstance(c, Cron)
    assert c.weekdays == expected and c.days is None


@pytest.mark.parametrize("month, expected", [
    ("JAN", {1}), ("JAN-MAR", {1, 2, 3}), ("JUN,DEC", {6, 12}), ("*/6", {1, 7}), ("2", {2}),
])
def test_cron_month_names(month: str, expected: set[int]) -> None:
    c = parse_expression(f"cron(0 0 1 {month} ? *)")
    assert isinstance(c, Cron)
    assert c.months == expected and c.days == {1}


def test_weekday_1_is_sunday_and_7_is_saturday() -> None:
    # From Monday 2024-03-04: day 1 fires on Sunday the 10th, day 7 on Saturday the 9th.
    assert utc(next_fire("cron(0 12 ? * 1 *)", MONDAY)) == datetime(2024, 3, 10, 12, tzinfo=UTC)
    assert utc(next_fire("cron(0 12 ? * 7 *)", MONDAY)) == datetime(2024, 3, 9, 12, tzinfo=UTC)
    assert utc(next_fire("cron(0 12 ? * 2 *)", MONDAY)) == datetime(2024, 3, 4, 12, tzinfo=UTC)


# --- next firing ---------------------------------------------------------------------------------

def test_next_fire_later_today_and_strictly_after() -> None:
    six = ts(2024, 3, 4, 6)
    assert next_fire("cron(0 6 * * ? *)", six - 1) == six
    assert next_fire("cron(0 6 * * ? *)", six) == six + 86400
    assert next_fire("cron(0 6 * * ? *)", six + 0.5) == six + 86400


def test_next_fire_day_of_month_and_leap_day() -> None:
    assert utc(next_fire("cron(0 0 1 * ? *)", ts(2024, 3, 4))) == datetime(2024, 4, 1, tzinfo=UTC)
    assert utc(next_fire("cron(30 23 29 2 ? *)", ts(2023, 3, 1))) == \
        datetime(2024, 2, 29, 23, 30, tzinfo=UTC)


def test_next_fire_year_field() -> None:
    assert utc(next_fire("cron(0 0 1 JAN ? 2026)", MONDAY)) == datetime(2026, 1, 1, tzinfo=UTC)


def test_next_fire_crosses_year_end() -> None:
    assert utc(next_fire("cron(0 10 ? * SAT,SUN *)", ts(2025, 12, 29))) == \
        datetime(2026, 1, 3, 10, tzinfo=UTC)


def test_an_expression_that_never_fires_is_a_schedule_error() -> None:
    with pytest.raises(ScheduleError, match="never fires"):
        next_fire("cron(0 0 30 2 ? *)", MONDAY)


# --- firings() counts over a week -----------------------------------------------------------------

@pytest.mark.parametrize("expr, count", [
    ("rate(15 minutes)", 7 * 24 * 4),
    ("rate(1 hour)", 7 * 24),
    ("rate(1 day)", 7),
    ("cron(0 6 * * ? *)", 7),
    ("cron(0 7,9,11,13,15 ? * MON-FRI *)", 25),
    ("cron(0 10 ? * SAT,SUN *)", 2),
    ("cron(*/30 * * * ? *)", 7 * 48),
    ("cron(0 3 ? * MON *)", 1),
])
def test_firings_over_a_week(expr: str, count: int) -> None:
    assert len(firings(expr, MONDAY, MONDAY + WEEK)) == count


def test_firings_window_is_open_at_start_closed_at_end() -> None:
    out = firings("rate(1 hour)", MONDAY, MONDAY + 3 * 3600)
    assert out == [MONDAY + 3600, MONDAY + 7200, MONDAY + 10800]


def test_firings_respects_limit() -> None:
    assert len(firings("rate(1 minute)", MONDAY, MONDAY + WEEK, limit=10)) == 10


def test_working_day_firings_land_on_working_days_at_the_right_hours() -> None:
    out = [utc(t) for t in firings("cron(0 7,9,11,13,15 ? * MON-FRI *)", MONDAY, MONDAY + WEEK)]
    assert {d.isoweekday() for d in out} == {1, 2, 3, 4, 5}
    assert {d.hour for d in out} == {7, 9, 11, 13, 15}
    assert all(d.minute == 0 and d.second == 0 for d in out)


# --- rejected expressions ---------------------------------------------------------------------------

@pytest.mark.parametrize("expr", [
    "cron(0 6 * * ?)",  # 5 fields (Unix cron)
    "cron(0 6 * * ? * *)",  # 7 fields
    "cron(0 6 ? * ? *)",  # both '?'
    "cron(0 6 * * * *)",  # neither '?'
    "cron(0 6 L * ? *)",
    "cron(0 6 15W * ? *)",
    "cron(0 6 ? * 6L *)",
    "cron(0 6 ? * 2#1 *)",
    "cron(60 6 * * ? *)",  # minute out of range
    "cron(0 24 * * ? *)",  # hour out of range
    "cron(0 6 0 * ? *)",  # day 0
    "cron(0 6 ? * 8 *)",  # weekday 8
    "cron(0 6 ? * 0 *)",  # weekday 0 (Unix Sunday)
    "cron(0 6 1 13 ? *)",  # month 13
    "cron(0 6 ? * FRI-MON *)",  # reversed range
    "cron(0/0 6 * * ? *)",  # step 0
    "cron(0, 6 * * ? *)",  # empty list item
    "cron(/5 6 * * ? *)",  # step without a start
    "cron(MON 6 * * ? *)",  # a name where no names are allowed
    "cron(0 6 * * ? 1969)",  # year out of range
    "cron(0 6 * JANUARY ? *)",
    "cron(? 6 * * ? *)",
    "rate(0 minutes)",
    "rate(1 minutes)",
    "rate(5 minute)",
    "rate(-1 minutes)",
    "rate(1 week)",
    "rate(1.5 hours)",
    "every day",
    "",
])
def test_rejected_expressions(expr: str) -> None:
    with pytest.raises(ScheduleError):
        parse_expression(expr)


def test_schedule_error_is_a_value_error() -> None:
    # Callers (profile validation) catch one type; never the message text.
    assert issubclass(ScheduleError, ValueError)

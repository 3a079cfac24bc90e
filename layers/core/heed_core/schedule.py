"""EventBridge `rate(...)` and `cron(...)` expressions: when does a bot's schedule fire (UTC)?"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from heed_core.errors import ConfigError

_RATE = re.compile(r"^rate\(\s*(\d+)\s+(minute|minutes|hour|hours|day|days)\s*\)$")
_CRON = re.compile(r"^cron\((.*)\)$")
_UNIT_S = {"minute": 60, "hour": 3600, "day": 86400}
_DOW_NAMES = {"SUN": 1, "MON": 2, "TUE": 3, "WED": 4, "THU": 5, "FRI": 6, "SAT": 7}
# Spelled out: calendar.month_abbr follows the process locale, EventBridge does not.
_MONTH_NAMES = {m: i for i, m in enumerate(
    ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"), start=1)}
_SEARCH_DAYS = 366 * 5


class ScheduleError(ConfigError, ValueError):
    """An expression EventBridge would reject (or one we do not support)."""

    code = "bad_schedule"


@dataclass(frozen=True)
class Rate:
    period_s: int

    def next_after(self, t: float) -> float:
        # Anchored on the epoch so that every run agrees on the firing times.
        return (int(t) // self.period_s + 1) * self.period_s


@dataclass(frozen=True)
class Cron:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int] | None  # None: '?' or '*' (any)
    months: frozenset[int]
    weekdays: frozenset[int] | None  # EventBridge numbering 1=SUN .. 7=SAT; None: any
    years: frozenset[int] | None

    def _day_ok(self, d: datetime) -> bool:
        if self.months and d.month not in self.months:
            return False
        if self.years is not None and d.year not in self.years:
            return False
        if self.days is not None and d.day not in self.days:
            return False
        if self.weekdays is not None and (d.isoweekday() % 7) + 1 not in self.weekdays:
            return False
        return True

    def next_after(self, t: float) -> float:
        start = datetime.fromtimestamp(int(t) // 60 * 60 + 60, tz=UTC)
        day = start.replace(hour=0, minute=0)
        for _ in range(_SEARCH_DAYS):
            if self._day_ok(day):
                for h in sorted(self.hours):
                    for m in sorted(self.minutes):
                        cand = day.replace(hour=h, minute=m)
                        if cand >= start:
                            return cand.timestamp()
            day += timedelta(days=1)
        raise ScheduleError("the expression never fires in the next five years")


def _field(text: str, lo: int, hi: int, names: dict[str, int] | None = None) -> frozenset[int]:
    values: set[int] = set()
    for part in text.split(","):
        step = 1
        if "/" in part:
            part, step_s = part.split("/", 1)
            if not step_s.isdigit() or int(step_s) == 0:
                raise ScheduleError(f"bad step in {text!r}")
            step = int(step_s)
        if part == "*":
            a, b = lo, hi
        elif not part:
            # "0," or "/5" is a typo, not "every value".
            raise ScheduleError(f"empty value in {text!r}")
        elif "-" in part:
            a_s, b_s = part.split("-", 1)
            a, b = _value(a_s, names), _value(b_s, names)
        else:
            a = _value(part, names)
            b = hi if step > 1 else a
        if not (lo <= a <= hi and lo <= b <= hi) or a > b:
            raise ScheduleError(f"{text!r} is outside {lo}-{hi}")
        values.update(range(a, b + 1, step))
    return frozenset(values)


def _value(text: str, names: dict[str, int] | None) -> int:
    up = text.upper()
    if names and up in names:
        return names[up]
    if not (text.isascii() and text.isdigit()):
        raise ScheduleError(f"{text!r} is not a number{' or a name' if names else ''}")
    return int(text)


def parse_expression(expr: str) -> Rate | Cron:
    expr = expr.strip()
    m = _RATE.match(expr)
    if m:
        value, unit = int(m.group(1)), m.group(2).rstrip("s")
        if value < 1:
            raise ScheduleError("a rate must be at least 1")
        if (value == 1) != (not m.group(2).endswith("s")):
            raise ScheduleError("EventBridge wants 'rate(1 minute)' and 'rate(5 minutes)'")
        return Rate(value * _UNIT_S[unit])
    m = _CRON.match(expr)
    if not m:
        raise ScheduleError(f"{expr!r} is neither rate(...) nor cron(...)")
    fields = m.group(1).split()
    if len(fields) != 6:
        raise ScheduleError("cron(...) needs 6 fields: minutes hours day-of-month month day-of-week year")
    mi, hr, dom, mon, dow, yr = fields
    if (dom == "?") == (dow == "?"):
        raise ScheduleError("cron(...): exactly one of day-of-month and day-of-week must be '?'")
    if any(c in "LW#" for c in dom + dow):
        raise ScheduleError("cron(...): L, W and # are not supported by Heed")
    return Cron(
        minutes=_field(mi, 0, 59),
        hours=_field(hr, 0, 23),
        days=None if dom in ("?", "*") else _field(dom, 1, 31),
        months=_field(mon, 1, 12, _MONTH_NAMES),
        weekdays=None if dow in ("?", "*") else _field(dow, 1, 7, _DOW_NAMES),
        years=None if yr == "*" else _field(yr, 1970, 2199),
    )


def next_fire(expr: str, after: float) -> float:
    """The first firing strictly after ``after`` (epoch seconds)."""
    return parse_expression(expr).next_after(after)


def firings(expr: str, start: float, end: float, limit: int = 100_000) -> list[float]:
    """Every firing in (start, end]."""
    sched = parse_expression(expr)
    out: list[float] = []
    t = start
    while len(out) < limit:
        t = sched.next_after(t)
        if t > end:
            break
        out.append(t)
    return out

"""Numbers, durations, counts, lists and schedules in the words of one language."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from heed_core.schedule import Cron, Rate, parse_expression

_WEEK, _DAY, _HOUR, _MINUTE = 604800, 86400, 3600, 60
_ALL_HOURS = frozenset(range(24))
_WORKING_DAYS = frozenset({2, 3, 4, 5, 6})  # EventBridge numbering: 1 = Sunday
_WEEKEND = frozenset({1, 7})


@dataclass(frozen=True)
class Words:
    """What a language needs to say a number: filled in by each language module."""

    decimal: str  # "." or ","
    conj: str  # the "and" of a list
    disj: str  # the "or" of a list
    units: Mapping[str, tuple[str, str]]  # second/minute/hour/day/week: (one, many)
    units_dat: Mapping[str, tuple[str, str]]  # the same after a dative preposition (German)
    nouns: Mapping[str, tuple[str, str]]  # counted things: (one, many)
    singular_for_fractions: bool  # Dutch says "1,5 seconde"
    weekdays: Mapping[int, str]  # EventBridge 1 = Sunday .. 7 = Saturday
    every: Mapping[str, str]  # "every 15 minutes": per unit, {n} and {unit}; "<unit>_1" for n == 1
    once_every: Mapping[str, str]  # "once every 15 minutes", "once a day": the same keys
    schedule: Mapping[str, str]  # templates for schedules in words (see en.py)
    hour_list: str  # "{hours} UTC" for full hours
    time_list: str  # "{times} UTC" for hh:mm


def number(x: float, w: Words) -> str:
    text = f"{x:.3f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))
    return text.replace(".", w.decimal)


def join(parts: list[str], w: Words, conj: str | None = None) -> str:
    word = w.conj if conj is None else conj
    if len(parts) <= 1:
        return "".join(parts)
    return f"{', '.join(parts[:-1])} {word} {parts[-1]}"


def count(n: int, noun: str, w: Words) -> str:
    one, many = w.nouns[noun]
    return f"{n} {one if n == 1 else many}"


def _unit(seconds: float) -> tuple[float, str]:
    s = float(seconds)
    if s >= _WEEK and s % _WEEK == 0:
        return s / _WEEK, "week"
    if s >= 2 * _DAY and s % _DAY == 0:
        return s / _DAY, "day"
    if s >= _HOUR and s % _HOUR == 0:
        return s / _HOUR, "hour"
    if s >= 2 * _MINUTE and s % _MINUTE == 0:
        return s / _MINUTE, "minute"
    return s, "second"


def duration(seconds: float, w: Words, *, dative: bool = False) -> str:
    """1.5 -> "1.5 seconds (1500 ms)", 900 -> "15 minutes", 86400 -> "24 hours"."""
    value, unit = _unit(seconds)
    one, many = (w.units_dat if dative else w.units)[unit]
    fraction = value != int(value)
    word = one if value == 1 or (fraction and w.singular_for_fractions) else many
    text = f"{number(value, w)} {word}"
    if unit == "second" and fraction and value < 60:
        text += f" ({int(round(value * 1000))} ms)"
    return text


def every(seconds: float, w: Words, *, once: bool = False) -> str:
    """900 -> "every 15 minutes", 3600 -> "every hour"; once: "once every 15 minutes", "once an hour"."""
    table = w.once_every if once else w.every
    value, unit = _unit(seconds)
    if value == int(value) and f"{unit}_{int(value)}" in table:
        return table[f"{unit}_{int(value)}"]  # "every hour", "once a day" (nb: "hour_24")
    one, many = w.units[unit]
    return table[unit].format(n=number(value, w), unit=one if value == 1 else many)


def span(lo: float, hi: float, w: Words) -> str:
    """360, 420 -> "6–7 minutes"; in two units when they differ ("50 seconds–2 minutes")."""
    (a, unit_a), (_, unit_b) = _unit(lo), _unit(hi)
    if unit_a == unit_b:
        return f"{number(a, w)}–{duration(hi, w)}"
    return f"{duration(lo, w)}–{duration(hi, w)}"


def size(n: int, w: Words) -> str:
    for factor, name in ((1 << 20, "MiB"), (1 << 10, "KiB")):
        if n >= factor:
            return f"{number(round(n / factor, 1), w)} {name}"
    return f"{n} B"


def _times(cron: Cron, w: Words) -> str:
    hours, minutes = sorted(cron.hours), sorted(cron.minutes)
    if minutes == [0]:
        return w.hour_list.format(hours=join([f"{h:02d}" for h in hours], w))
    return w.time_list.format(times=join([f"{h:02d}:{m:02d}" for h in hours for m in minutes], w))


def schedule(expression: str, w: Words) -> str:
    """A schedule in words: "5 rounds per working day, at 07, 09, 11, 13 and 15 UTC"."""
    parsed = parse_expression(expression)
    t = w.schedule
    if isinstance(parsed, Rate):
        return every(parsed.period_s, w)
    if parsed.days is not None or len(parsed.months) != 12 or parsed.years is not None:
        return t["raw"].format(expr=expression)
    per_day = len(parsed.hours) * len(parsed.minutes)
    minutes = sorted(parsed.minutes)
    steps = {b - a for a, b in zip(minutes, minutes[1:] + [minutes[0] + 60], strict=True)}
    if parsed.hours == _ALL_HOURS and len(steps) == 1 and parsed.weekdays is None:
        return every(steps.pop() * 60, w)  # cron(0/15 * * * ? *)
    if per_day > 12:
        return t["raw"].format(expr=expression)
    rounds = count(per_day, "round", w)
    at = _times(parsed, w)
    days = parsed.weekdays
    if days is None:
        return (t["once_day"] if per_day == 1 else t["per_day"]).format(rounds=rounds, at=at)
    if days == _WORKING_DAYS:
        return t["per_working_day"].format(rounds=rounds, at=at)
    if days == _WEEKEND:
        return t["per_weekend_day"].format(rounds=rounds, at=at)
    names = join([w.weekdays[d] for d in sorted(days, key=lambda d: (d + 5) % 7)], w)
    if len(days) == 1:
        return (t["once_week"] if per_day == 1 else t["per_weekday"]).format(rounds=rounds, at=at, day=names)
    return t["per_days"].format(rounds=rounds, at=at, days=names)

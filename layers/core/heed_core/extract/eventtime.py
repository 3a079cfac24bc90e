"""Decides when an event is: ISO 8601 with its offset, a date alone stays a date, a local time read in the venue's zone.

WANNADO-10 promises "date and time". Sites write them many ways (``2026-12-04T20:15``,
``2026-12-04T20:15:00+0100``, ``2026-12-04 20:15``, ``2026-12-04``); one spelling per instant
lets the same show found in JSON-LD and in microdata be one event. A time without an offset
is the venue's wall-clock time: it is read in the time zone the caller names (WannadoBot's
venues: Europe/Amsterdam), so the offset it had that day (CET or CEST) is kept.
"""
from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, tzinfo
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["DEFAULT_TIMEZONE", "first_occurrence", "normalise"]

DEFAULT_TIMEZONE = "Europe/Amsterdam"
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_MIN_YEAR, _MAX_YEAR = 1900, 2200
_WEEKDAYS = {name: i for i, name in enumerate(
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"])}
_ICAL_DAYS = {"mo": 0, "tu": 1, "we": 2, "th": 3, "fr": 4, "sa": 5, "su": 6}
_DURATION = re.compile(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$", re.I)


@lru_cache(maxsize=64)
def _zone(name: str) -> tzinfo | None:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _parse(text: str) -> date | datetime | None:
    if _DATE.fullmatch(text):
        try:
            return date.fromisoformat(text)
        except ValueError:
            return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _format(value: date | datetime, zone: str) -> str | None:
    if not _MIN_YEAR <= value.year <= _MAX_YEAR:
        return None
    if not isinstance(value, datetime):
        return value.isoformat()  # a date without a time stays a date
    if value.tzinfo is None:
        tz = _zone(zone)
        if tz is None:  # no tz database here: keep the wall-clock time as written
            return value.isoformat(timespec="seconds")
        value = value.replace(tzinfo=tz)
    return value.isoformat(timespec="seconds")


def normalise(value: Any, *, zone: str = DEFAULT_TIMEZONE) -> str | None:
    """``2026-12-04T20:15`` -> ``2026-12-04T20:15:00+01:00`` (in ``zone``); an offset is kept as
    given (``Z`` becomes ``+00:00``); ``2026-12-04`` stays. Text that is no ISO 8601 date is
    returned as written (trimmed), so nothing a site said is lost; None for no text."""
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    if not text:
        return None
    parsed = _parse(text)
    if parsed is None:
        return text[:64]
    return _format(parsed, zone) or text[:64]


def _weekday(value: Any) -> int | None:
    if not isinstance(value, str):
        return None
    name = re.split(r"[/#:]", value.strip())[-1].lower()
    return _WEEKDAYS.get(name, _ICAL_DAYS.get(name))


def _duration(value: Any) -> timedelta | None:
    m = _DURATION.match(value.strip()) if isinstance(value, str) and value.strip() else None
    if m is None or not any(m.groups()):
        return None
    days, hours, minutes, seconds = (int(g or 0) for g in m.groups())
    return timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)


def first_occurrence(
    schedule: dict[str, Any], *, duration: Any = None, zone: str = DEFAULT_TIMEZONE
) -> tuple[str | None, str | None]:
    """(start, end) of the first show of a schema.org ``Schedule`` (``eventSchedule``): its
    ``startDate``, moved to the first listed ``byDay`` weekday, at ``startTime``, in its
    ``scheduleTimezone`` (else ``zone``). (None, None) when it names no start date."""
    first = _parse(str(schedule.get("startDate") or "").strip())
    if first is None:
        return None, None
    day = first.date() if isinstance(first, datetime) else first
    days = schedule.get("byDay")
    wanted = [w for w in map(_weekday, days if isinstance(days, list) else [days]) if w is not None]
    if wanted:
        day += timedelta(days=min((w - day.weekday()) % 7 for w in wanted))
    given = schedule.get("scheduleTimezone")
    tz_name = given if isinstance(given, str) and _zone(given) is not None else zone

    def at(raw: Any) -> datetime | None:
        try:
            return datetime.combine(day, time.fromisoformat(raw.strip())) if isinstance(raw, str) else None
        except ValueError:
            return None

    start, end = at(schedule.get("startTime")), at(schedule.get("endTime"))
    if start is None:
        return _format(day, tz_name), None
    if end is not None and end <= start:
        end += timedelta(days=1)  # a show from 22:00 to 01:00
    length = _duration(schedule.get("duration")) or _duration(duration)
    if end is None and length is not None:
        end = start + length
    return _format(start, tz_name), _format(end, tz_name) if end is not None else None

"""Turns the date strings sites publish into one form: ISO 8601 UTC ``YYYY-MM-DDTHH:MM:SSZ``."""
from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

__all__ = ["from_struct_time", "to_utc_iso"]

_YEAR_MONTH = re.compile(r"^(\d{4})(?:-(\d{2}))?$")
# Sanity window: a feed that claims year 1 or 9999 is wrong, and such values
# would only confuse "newer than" comparisons downstream.
_MIN_YEAR = 1970
_MAX_YEAR = 2200


def _format(dt: datetime) -> str | None:
    if dt.tzinfo is None:
        # No offset given (``<time datetime="2026-11-30">``): read it as UTC rather
        # than guess the site's zone; the error is at most a day.
        dt = dt.replace(tzinfo=UTC)
    try:
        dt = dt.astimezone(UTC)
    except (OverflowError, ValueError):
        return None
    if not _MIN_YEAR <= dt.year <= _MAX_YEAR:
        return None
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def to_utc_iso(value: object) -> str | None:
    """ISO 8601 / W3C datetime / RFC 822 text to ``2026-11-30T09:00:00Z``, or None."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or len(text) > 64:
        return None
    m = _YEAR_MONTH.match(text)
    if m:
        try:
            return _format(datetime(int(m.group(1)), int(m.group(2) or 1), 1))
        except ValueError:
            return None
    try:
        return _format(datetime.fromisoformat(text))
    except ValueError:
        pass
    try:
        return _format(parsedate_to_datetime(text))
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def from_struct_time(value: object) -> str | None:
    """feedparser's ``*_parsed`` (a UTC struct_time) to the same form, or None."""
    if not isinstance(value, time.struct_time):
        return None
    try:
        return _format(datetime(*value[:6], tzinfo=UTC))
    except (ValueError, OverflowError):
        return None

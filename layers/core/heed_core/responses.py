"""What a response means for the crawl: keep, follow, retry, stop the host or close the source."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC
from email.utils import parsedate_to_datetime

from heed_core.politeness import end_of_day
from heed_core.ports import FetchResult
from heed_core.profile_keys import Responses

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# Errors that mean "the address is not one we may or can ask": never retried.
REFUSALS = frozenset({"private_address", "invalid_url"})


@dataclass(frozen=True)
class Outcome:
    action: str  # ok | not_modified | redirect | stop_host | close_source | retry | give_up | refused
    reason: str  # a stable reason code for skips.jsonl and metrics
    until: float | None = None  # stop_host / close_source: no request to the host before then
    retry_at: float | None = None
    location: str | None = None
    detail: str = ""


def retry_after_s(value: str | None, now: float) -> float | None:
    """RFC 9110 10.2.3: delay-seconds or an HTTP-date."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        # "-0000" parses naive; an HTTP-date is always UTC (RFC 9110 5.6.7), never local time.
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - now)


def _stop(kind: str, reason: str, result: FetchResult, now: float, detail: str) -> Outcome:
    # Retry-After is respected when it asks for longer than the rest of the day.
    wait = retry_after_s(result.header("Retry-After"), now)
    until = end_of_day(now)
    if wait is not None:
        until = max(until, now + wait)
    action = "close_source" if kind == "close_source" else "stop_host"
    return Outcome(action, reason, until=until, detail=detail)


def classify(
    result: FetchResult,
    *,
    responses: Responses,
    retries_used_today: int,
    now: float,
    challenge: str | None = None,
) -> Outcome:
    """Decide from one response. ``responses`` is the profile's `responses` section;
    ``challenge`` is the marker found by the challenge detector, if any (PRAHA-07)."""
    status = result.status
    if result.error in REFUSALS:
        return Outcome("give_up", result.error or "refused", detail=result.error or "")
    if challenge:
        return _stop(responses.on_challenge, "challenge", result, now, challenge)
    if status == 429:
        return _stop(responses.on_429, "http_429", result, now, "429 Too Many Requests")
    if status == 403:
        return _stop(responses.on_403, "http_403", result, now, "403 Forbidden")
    if status == 304:
        return Outcome("not_modified", "not_modified")
    if status is not None and status in REDIRECT_STATUSES:
        loc = result.header("Location")
        if not loc:
            return Outcome("give_up", "redirect_without_location", detail=str(status))
        return Outcome("redirect", "redirect", location=loc, detail=str(status))
    if status is not None and 200 <= status < 300:
        if result.error == "too_large":
            return Outcome("give_up", "too_large", detail=f"body over the cap ({len(result.body)} bytes read)")
        if result.error is not None:
            # e.g. decompression_error: the body we hold is not the page; keeping it as "ok"
            # would store an empty version (SUBSIDIE-04 would then see a change).
            return Outcome("give_up", result.error, detail=f"HTTP {status} but {result.error}")
        return Outcome("ok", "ok")
    if status is not None and 400 <= status < 500:
        return Outcome("give_up", f"http_{status}", detail=f"HTTP {status}")
    # 5xx, other statuses and network errors: SPRING-06 retries at most N more times the same day.
    reason = f"http_{status}" if status is not None else (result.error or "network_error")
    limit = responses.retries_per_day
    if retries_used_today >= limit:
        return Outcome("give_up", "retries_exhausted", detail=f"{reason} after {retries_used_today} retries")
    backoff = responses.retry_backoff_s * (2 ** retries_used_today)
    wait = retry_after_s(result.header("Retry-After"), now) or 0.0
    at = now + max(backoff, wait)
    if at >= end_of_day(now):
        return Outcome("give_up", "retries_exhausted", detail=f"{reason}: no retry left today")
    return Outcome("retry", reason, retry_at=at, detail=reason)

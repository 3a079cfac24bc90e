"""What one response means: keep, follow, retry, give up, stop the host or close the source."""
from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from heed_core.politeness import end_of_day
from heed_core.ports import FetchResult
from heed_core.profile import Responses, load_profile
from heed_core.responses import REDIRECT_STATUSES, Outcome, classify, retry_after_s

NOON = datetime(2024, 3, 4, 12, tzinfo=UTC).timestamp()
MIDNIGHT = end_of_day(NOON)
URL = "https://example.org/page"

SPRING: Responses = load_profile("springstudiobot").responses
PRAHA: Responses = load_profile("praha-x").responses
AUBE: Responses = load_profile("aubebot").responses


def res(status: int | None, *headers: tuple[str, str], error: str | None = None, body: bytes = b"") -> FetchResult:
    return FetchResult(url=URL, status=status, headers=tuple(headers), body=body, error=error)


def run(result: FetchResult, responses: Responses = SPRING, *, retries: int = 0, now: float = NOON,
        challenge: str | None = None) -> Outcome:
    return classify(result, responses=responses, retries_used_today=retries, now=now, challenge=challenge)


def http_date(t: float) -> str:
    return format_datetime(datetime.fromtimestamp(t, tz=UTC), usegmt=True)


# --- success, unchanged, redirects ---------------------------------------------------------------

def test_200_is_ok() -> None:
    assert run(res(200, body=b"<html>")) == Outcome("ok", "ok")


def test_304_is_not_modified() -> None:
    # AUBE-02 / WANNADO-07: the conditional GET paid off.
    assert run(res(304)).action == "not_modified"


@pytest.mark.parametrize("status", sorted(REDIRECT_STATUSES))
def test_redirect_with_location_is_a_new_request(status: int) -> None:
    # COMMON-06 / SPRING-07: hand the target back; it is robots-checked and paced like any URL.
    out = run(res(status, ("location", "/elsewhere")))
    assert (out.action, out.location, out.retry_at) == ("redirect", "/elsewhere", None)


def test_redirect_without_location_gives_up() -> None:
    out = run(res(301))
    assert (out.action, out.reason) == ("give_up", "redirect_without_location")


# --- client errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("status", [400, 401, 404, 410, 451])
def test_4xx_gives_up_without_retry(status: int) -> None:
    out = run(res(status))
    assert (out.action, out.reason, out.retry_at) == ("give_up", f"http_{status}", None)


# --- 429: stop the host for the day (SPRING-05), Retry-After only ever lengthens it ------------------

def test_spring_05_429_stops_the_host_until_midnight() -> None:
    out = run(res(429))
    assert (out.action, out.reason, out.until) == ("stop_host", "http_429", MIDNIGHT)


def test_429_short_retry_after_does_not_shorten_the_stop() -> None:
    assert run(res(429, ("Retry-After", "60"))).until == MIDNIGHT
    assert run(res(429, ("Retry-After", http_date(NOON + 3600)))).until == MIDNIGHT


def test_429_retry_after_seconds_longer_than_the_day_wins() -> None:
    out = run(res(429, ("Retry-After", str(2 * 86400))))
    assert out.until == NOON + 2 * 86400


def test_429_retry_after_http_date_longer_than_the_day_wins() -> None:
    later = NOON + 3 * 86400
    assert run(res(429, ("retry-after", http_date(later)))).until == later


def test_429_garbage_retry_after_still_stops_for_the_day() -> None:
    assert run(res(429, ("Retry-After", "soon, maybe"))).until == MIDNIGHT


# --- 403 and challenges per profile (PRAHA-07) ----------------------------------------------------

def test_403_stops_the_host_today_for_springstudiobot() -> None:
    out = run(res(403), SPRING)
    assert (out.action, out.reason, out.until) == ("stop_host", "http_403", MIDNIGHT)


@pytest.mark.parametrize("result, challenge, reason", [
    (res(403), None, "http_403"),
    (res(429), None, "http_429"),
    (res(200, body=b"<title>Just a moment...</title>"), "cf-challenge", "challenge"),
    (res(503), "cf-challenge", "challenge"),
])
def test_praha_07_block_closes_the_source(result: FetchResult, challenge: str | None, reason: str) -> None:
    out = run(result, PRAHA, challenge=challenge)
    assert (out.action, out.reason) == ("close_source", reason)
    assert out.retry_at is None


def test_challenge_marker_stops_the_host_even_on_200() -> None:
    out = run(res(200), AUBE, challenge="captcha-form")
    assert (out.action, out.reason, out.detail) == ("stop_host", "challenge", "captcha-form")


# --- 5xx and network errors: SPRING-06 at most N more times the same day ---------------------------

def test_500_with_retries_left_retries_with_doubling_backoff() -> None:
    backoff = float(SPRING.retry_backoff_s)
    morning = datetime(2024, 3, 4, 6, tzinfo=UTC).timestamp()
    at = [run(res(500), retries=n, now=morning).retry_at for n in range(3)]
    assert at == [morning + backoff, morning + 2 * backoff, morning + 4 * backoff]
    assert run(res(500), retries=0, now=morning).reason == "http_500"


def test_spring_06_at_most_three_more_times_the_same_day() -> None:
    # GIVEN an early-morning page that fails every time
    now = datetime(2024, 3, 4, 0, 5, tzinfo=UTC).timestamp()
    retries = 0
    # WHEN each retry runs when it is due
    while True:
        out = run(res(503), SPRING, retries=retries, now=now)
        if out.action != "retry":
            break
        assert out.retry_at is not None and out.retry_at < end_of_day(now)
        retries += 1
        now = out.retry_at
    # THEN exactly three retries happened, then it gave up
    assert retries == 3 == SPRING.retries_per_day
    assert (out.action, out.reason) == ("give_up", "retries_exhausted")


def test_spring_06_a_retry_after_midnight_gives_up() -> None:
    late = MIDNIGHT - float(SPRING.retry_backoff_s) + 1  # the backoff would land at 00:00:01
    out = run(res(500), retries=0, now=late)
    assert (out.action, out.reason) == ("give_up", "retries_exhausted")


def test_5xx_retry_after_longer_than_backoff_is_respected() -> None:
    out = run(res(503, ("Retry-After", "3600")), retries=0)
    assert out.retry_at == NOON + 3600


@pytest.mark.parametrize("error", ["timeout", "connect_error", "dns_error", "tls_error", "deadline"])
def test_network_errors_are_retried(error: str) -> None:
    out = run(res(None, error=error))
    assert (out.action, out.reason) == ("retry", error)
    assert out.retry_at == NOON + float(SPRING.retry_backoff_s)


def test_network_error_without_code_is_network_error() -> None:
    assert run(res(None)).reason == "network_error"


@pytest.mark.parametrize("error", ["private_address", "invalid_url"])
def test_refused_addresses_are_never_retried(error: str) -> None:
    out = run(res(None, error=error), retries=0)
    assert (out.action, out.reason, out.retry_at) == ("give_up", error, None)


def test_too_large_on_200_gives_up() -> None:
    out = run(res(200, error="too_large", body=b"x" * 2048))
    assert (out.action, out.reason) == ("give_up", "too_large")
    assert "2048" in out.detail


def test_undecodable_200_is_not_ok() -> None:
    # The body is not the page: treating it as "ok" would store an empty version (SUBSIDIE-04).
    out = run(res(200, error="decompression_error"))
    assert (out.action, out.reason) == ("give_up", "decompression_error")


# --- Retry-After parsing (RFC 9110 10.2.3) --------------------------------------------------------

@pytest.fixture
def new_york_tz(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A process time zone far from UTC, to catch local-time readings of an HTTP-date."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("value, expected", [
    ("120", 120.0),
    (" 7 ", 7.0),
    ("0", 0.0),
    (None, None),
    ("", None),
    ("-5", None),
    ("1.5", None),
    ("²", None),  # a Unicode digit is not a delay-seconds
    ("tomorrow", None),
])
def test_retry_after_seconds(value: str | None, expected: float | None) -> None:
    assert retry_after_s(value, NOON) == expected


def test_retry_after_http_date_in_the_past_is_zero() -> None:
    assert retry_after_s(http_date(NOON - 3600), NOON) == 0.0


@pytest.mark.usefixtures("new_york_tz")
@pytest.mark.parametrize("zone", ["GMT", "+0000", "-0000"])
def test_retry_after_http_date_is_utc_whatever_the_local_zone(zone: str) -> None:
    when = datetime.fromtimestamp(NOON, tz=UTC) + timedelta(hours=2)
    value = when.strftime("%a, %d %b %Y %H:%M:%S ") + zone
    assert retry_after_s(value, NOON) == 7200.0

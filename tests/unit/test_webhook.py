"""The webhook's rules (heed_core.webhook): every POST signed as Standard Webhooks 1.0 says, checked
with its reference verifier (the `standardwebhooks` package); what each answer means; the retry
schedule; the settings that are refused in one line, the secret never repeated."""
from __future__ import annotations

import base64
import json

import pytest
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from heed_core.webhook import (
    REJECTED_TRIES,
    SCHEDULE_S,
    Answer,
    Endpoint,
    WebhookError,
    check_url,
    next_try,
    parse_secret,
    signed_headers,
    verdict,
)

SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()


def test_a_delivery_is_verified_by_the_reference_verifier_and_a_tampered_body_is_not() -> None:
    # GIVEN an envelope signed with the operator's secret
    key = parse_secret(SECRET)
    body = json.dumps({"specversion": "1.0", "id": "r1", "type": "heed.item.found"}).encode()
    headers = signed_headers(key, "r1", 1_765_000_000, body)
    wh = Webhook(SECRET)
    # THEN Standard Webhooks' own verifier accepts it (its clock: the timestamp must be recent)
    now = signed_headers(key, "r1", int(__import__("time").time()), body)
    assert wh.verify(body, now)["id"] == "r1"
    assert headers["webhook-id"] == "r1" and headers["webhook-signature"].startswith("v1,")
    # AND a body changed by one byte, or another id, fails
    with pytest.raises(WebhookVerificationError):
        wh.verify(body.replace(b"r1", b"r2"), now)
    with pytest.raises(WebhookVerificationError):
        wh.verify(body, {**now, "webhook-id": "r2"})


@pytest.mark.parametrize(("answer", "expected"), [
    (Answer(200), "delivered"), (Answer(204), "delivered"), (Answer(410), "gone"),
    (Answer(408), "retry"), (Answer(429), "retry"), (Answer(500), "retry"), (Answer(503), "retry"),
    (Answer(None, "timeout"), "retry"), (Answer(None, "connect_error"), "retry"),
    (Answer(400), "rejected"), (Answer(401), "rejected"), (Answer(404), "rejected"), (Answer(301), "rejected"),
])
def test_what_an_answer_means(answer: Answer, expected: str) -> None:
    assert verdict(answer) == expected


def test_a_failing_endpoint_is_tried_for_more_than_a_day_then_given_up() -> None:
    # GIVEN an endpoint that never answers, tried again each time the schedule says (no jitter)
    now, attempts = 0.0, 0
    while True:
        attempts += 1
        when = next_try(attempts, "retry", now, lambda: 0.5)
        if when is None:
            break
        now = when
    # THEN the tries spread over more than 24 hours, and then it is a dead letter
    assert attempts == len(SCHEDULE_S) + 1
    assert now > 24 * 3600


def test_a_rejecting_endpoint_is_not_retried_forever() -> None:
    assert next_try(REJECTED_TRIES - 1, "rejected", 0.0, lambda: 0.5) is not None
    assert next_try(REJECTED_TRIES, "rejected", 0.0, lambda: 0.5) is None


def test_the_jitter_stays_within_a_fifth_of_the_step() -> None:
    assert next_try(2, "retry", 0.0, lambda: 0.0) == pytest.approx(SCHEDULE_S[1] * 0.8)
    assert next_try(2, "retry", 0.0, lambda: 0.999999) == pytest.approx(SCHEDULE_S[1] * 1.2, rel=1e-5)


@pytest.mark.parametrize(("text", "private"), [
    ("", None), ("s3cr3tvalue", "s3cr3tvalue"), ("whsec_", None), ("whsec_!!!n0tb4se64", "n0tb4se64"),
    ("whsec_" + base64.b64encode(b"short-k!").decode(), base64.b64encode(b"short-k!").decode()),
])
def test_a_secret_that_is_not_one_is_refused_without_repeating_it(text: str, private: str | None) -> None:
    with pytest.raises(WebhookError) as exc:
        parse_secret(text)
    if private:
        assert private not in str(exc.value)


def test_an_unpadded_secret_is_read_as_the_reference_reads_it() -> None:
    padded = base64.b64encode(b"z" * 25).decode()
    assert parse_secret("whsec_" + padded.rstrip("=")) == b"z" * 25


@pytest.mark.parametrize(("url", "ok"), [
    ("https://app.example.org/hook", True), ("http://127.0.0.1:8080/hook", True), ("http://localhost/x", True),
    ("http://127.9.9.9/x", True), ("http://app.example.org/hook", False), ("ftp://example.org/", False),
    ("https:///nohost", False), ("https://user:pw@example.org/", False), ("not a url", False),
    ("http://[::1]:9/x", True), ("http://10.0.0.5/x", False),
])
def test_a_webhook_url_is_https_or_loopback(url: str, ok: bool) -> None:
    if ok:
        assert check_url(url) == url
    else:
        with pytest.raises(WebhookError):
            check_url(url)


def test_the_endpoint_never_shows_its_key() -> None:
    assert "kkkk" not in repr(Endpoint("https://x.example/", b"kkkkkkkk"))

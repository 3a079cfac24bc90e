"""Results pushed to the operator's application: one POST per result envelope, signed as Standard
Webhooks 1.0 says, retried on a schedule, the same on every engine (the embedded deliverer in
``heed_embedded.webhooks``, the AWS one in ``heed_aws.deliverer``).

Each POST carries one CloudEvents envelope (``heed_core.envelope``) as its body, with the headers
``webhook-id`` (the result's id: the same on every delivery, so a receiver de-duplicates on it),
``webhook-timestamp`` (the attempt's, in seconds) and ``webhook-signature`` (``v1,`` and the
base64 HMAC-SHA256 of ``id.timestamp.body`` under the secret's key). The secret is a Standard
Webhooks secret, ``whsec_`` and base64; it is never part of a log line, an error or an output.

What an answer means (``verdict``): a 2xx is delivered; 410 Gone stops the endpoint (the receiver
says it is gone for good); 408, 429, a 5xx or no answer at all is tried again on ``SCHEDULE_S``
(with jitter), for more than a day; any other answer (a 3xx, a 4xx) is tried ``REJECTED_TRIES``
times and then given up. What is given up goes to the dead letters, to be looked at and put back."""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import ipaddress
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

from heed_core.errors import ConfigError

__all__ = ["REJECTED_TRIES", "SCHEDULE_S", "Answer", "Endpoint", "Verdict", "WebhookError", "check_url", "next_try",
           "parse_secret", "sign", "signed_headers", "verdict"]

# Standard Webhooks' example schedule: at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h
# after each failure: 27 h 35 min of tries in all (the issue asks for at least a day).
SCHEDULE_S = (5.0, 300.0, 1800.0, 7200.0, 18000.0, 36000.0, 36000.0)
REJECTED_TRIES = 3  # an answer that says "not like this" (a 4xx): tried this often, then a dead letter
JITTER = 0.2  # each wait is drawn from within 20 % of its step, so receivers are not hit in waves
TIMEOUT_S = 15.0  # a POST that takes longer is no answer (tried again)
MAX_RESPONSE_BYTES = 64 * 1024  # what is read of a receiver's answer

Verdict = Literal["delivered", "retry", "rejected", "gone"]


class WebhookError(ConfigError):
    """A webhook setting that cannot be used (the URL, the secret): one line, exit 2."""

    code = "webhook"


def parse_secret(text: str, where: str = "webhook secret") -> bytes:
    """The key of a Standard Webhooks secret (``whsec_`` and the base64 of 24 to 64 bytes). The
    error never repeats the secret."""
    text = text.strip()
    if not text:
        raise WebhookError(f"{where}: empty (a Standard Webhooks secret is whsec_ followed by base64)")
    if not text.startswith("whsec_"):
        raise WebhookError(f"{where}: not a Standard Webhooks secret (it starts with whsec_, then base64)")
    body = text[len("whsec_"):]
    try:
        key = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)  # unpadded is common
    except (binascii.Error, ValueError) as exc:
        raise WebhookError(f"{where}: what follows whsec_ is not base64") from exc
    if not 24 <= len(key) <= 64:
        raise WebhookError(f"{where}: its key is {len(key)} bytes; a Standard Webhooks key is 24 to 64 bytes")
    return key


def check_url(url: str, where: str = "--webhook") -> str:
    """The URL a webhook may post to: http(s) with a host; https unless the host is a loopback
    address (a receiver on this machine). ``WebhookError`` otherwise."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises for a port that is not one
    except ValueError as exc:
        raise WebhookError(f"{where}: {url!r} is not a URL") from exc
    if parts.scheme not in ("http", "https") or not host:
        raise WebhookError(f"{where}: {url!r} is not an http(s) URL with a host")
    if parts.username or parts.password:
        raise WebhookError(f"{where}: the URL carries a user name or password; the secret signs the requests instead")
    if parts.scheme == "http" and not _loopback(host):
        raise WebhookError(f"{where}: {url} is plain http to another machine: use https (plain http only to a "
                           "receiver on this machine, localhost or 127.0.0.0/8)")
    return url


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Endpoint:
    """Where results are posted and the key they are signed with (never shown: ``repr`` hides it)."""

    url: str
    key: bytes = field(repr=False)


def sign(key: bytes, msg_id: str, timestamp: int, body: bytes) -> str:
    """``v1,<base64 HMAC-SHA256 of "id.timestamp.body">`` (Standard Webhooks 1.0)."""
    mac = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode("ascii")


def signed_headers(key: bytes, msg_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """The headers of one attempt."""
    return {"webhook-id": msg_id, "webhook-timestamp": str(timestamp),
            "webhook-signature": sign(key, msg_id, timestamp, body),
            "content-type": "application/cloudevents+json; charset=utf-8"}


@dataclass(frozen=True)
class Answer:
    """What one POST got: a status, or an error code where no answer came (``timeout``,
    ``connect_error``...)."""

    status: int | None
    error: str | None = None

    def __str__(self) -> str:
        return f"HTTP {self.status}" if self.status is not None else str(self.error)


def verdict(answer: Answer) -> Verdict:
    """What an answer means for the delivery (see the module's docstring)."""
    s = answer.status
    if s is None:
        return "retry"
    if 200 <= s < 300:
        return "delivered"
    if s == 410:
        return "gone"
    if s in (408, 429) or s >= 500:
        return "retry"
    return "rejected"


def next_try(attempts: int, why: Verdict, now: float, rand: Callable[[], float],
             schedule: tuple[float, ...] = SCHEDULE_S) -> float | None:
    """When to try again after ``attempts`` failed tries (this one counted), or None: give up (a
    dead letter). ``rand`` draws from [0, 1) (the jitter)."""
    if why == "rejected" and attempts >= REJECTED_TRIES:
        return None
    if attempts > len(schedule):
        return None
    step = schedule[attempts - 1]
    return now + step * (1.0 - JITTER + 2 * JITTER * rand())


Post = Callable[[str, bytes, Mapping[str, str]], Answer]  # (url, body, headers) -> the answer

"""Decides whether a response is a bot challenge or interstitial rather than the page asked for.

PRAHA-07: on a challenge page the bot stops and marks the source closed; it never tries
to solve or evade it. So this only has to recognise one, by a stable reason marker.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["CHALLENGE_MAX_BYTES", "is_challenge"]

Headers = Iterable[tuple[str, str]]

# Challenge pages are small; a body larger than this is a real page and is not scanned.
CHALLENGE_MAX_BYTES = 2**20

_BLOCK_STATUSES = frozenset({401, 403, 405, 429, 503})

_TITLE = re.compile(rb"<title[^>]*>\s*([^<]{0,200}?)\s*</title>", re.IGNORECASE)
_CHALLENGE_TITLES = (
    (re.compile(r"^just a moment\s*(\.\.\.|…)?$"), "cf-just-a-moment"),
    (re.compile(r"^attention required!?\s*\|\s*cloudflare"), "cf-attention-required"),
    (re.compile(r"^(please wait|one moment, please)\s*(\.\.\.|…)?$"), "interstitial-title"),
    (re.compile(r"checking (if the site connection is secure|your browser)"), "interstitial-title"),
    (re.compile(r"^(ddos-guard|access to this page has been denied\.?)$"), "interstitial-title"),
)

# Markers that only ever appear on challenge pages, at any status. Cloudflare also
# injects ``/cdn-cgi/challenge-platform/.../scripts/jsd/`` into ordinary 200 pages
# (passive bot detection), so that path alone is not a challenge.
_ALWAYS = (
    (re.compile(rb"/cdn-cgi/challenge-platform/(?!(?:h/[a-z]/)?scripts/jsd/)"), "cf-challenge-platform"),
    (re.compile(rb"\bcf[-_]chl[-_]"), "cf-chl"),
    (re.compile(rb"captcha-delivery\.com"), "datadome"),
    (re.compile(rb"_pxCaptcha|px-captcha|/captcha/captcha\.js\?a=c"), "perimeterx"),
    (re.compile(rb"/_sec/cp_challenge/|sec-if-cpt-container"), "akamai-challenge"),
    (re.compile(rb"_Incapsula_Resource|Incapsula incident ID"), "incapsula"),
    (re.compile(rb"sucuri_cloudproxy_js|Sucuri WebSite Firewall"), "sucuri"),
    (re.compile(rb"gokuProps"), "aws-waf"),
    (re.compile(rb"ddos-guard\.net/.{0,40}check|__ddg_"), "ddos-guard"),
)

# Markers that are normal on a 200 page (a contact form's captcha, an edge error text)
# but mean a block page when the status already refuses us.
_ON_BLOCK = (
    (re.compile(rb"errors\.edgesuite\.net|Reference&#32;&#35;|Reference #\d", re.IGNORECASE), "akamai"),
    (re.compile(rb"perimeterx|_pxAppId|window\._px", re.IGNORECASE), "perimeterx"),
    (re.compile(rb"datadome", re.IGNORECASE), "datadome"),
    (re.compile(rb"awswaf\.com|AwsWafIntegration"), "aws-waf"),
    (re.compile(rb"captcha|challenges\.cloudflare\.com/turnstile", re.IGNORECASE), "captcha"),
)


def _header_marker(headers: Headers, blocked: bool) -> str | None:
    for name, value in headers:
        n = name.strip().lower()
        v = value.strip().lower()
        if n == "cf-mitigated" and v == "challenge":
            return "cf-mitigated"
        if n == "x-amzn-waf-action" and v in ("challenge", "captcha"):
            return "aws-waf"
        # DataDome tags every response it guards; only a refusal is its challenge.
        if blocked and n in ("x-datadome", "x-dd-b"):
            return "datadome"
        if blocked and n == "x-px-block":
            return "perimeterx"
    return None


def is_challenge(
    status: int | None, headers: Headers, body: bytes, *, max_bytes: int = CHALLENGE_MAX_BYTES
) -> str | None:
    """A reason marker (``cf-mitigated``, ``cf-just-a-moment``, ``cf-chl``, ``datadome``,
    ``perimeterx``, ``akamai``, ``captcha``, ...) when this is a challenge, else None."""
    blocked = status in _BLOCK_STATUSES
    marker = _header_marker(headers, blocked)
    if marker is not None:
        return marker
    if not body or len(body) > max_bytes:
        return None
    m = _TITLE.search(body)
    if m:
        title = " ".join(m.group(1).decode("utf-8", "replace").split()).lower()
        for pattern, reason in _CHALLENGE_TITLES:
            if pattern.search(title):
                return reason
    for marker_re, reason in _ALWAYS:
        if marker_re.search(body):
            return reason
    if blocked:
        for marker_re, reason in _ON_BLOCK:
            if marker_re.search(body):
                return reason
    return None

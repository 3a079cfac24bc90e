"""PRAHA-07: a challenge or interstitial page is recognised, so the bot stops instead of evading it."""
from __future__ import annotations

from pathlib import Path

import pytest

from heed_core.extract.challenge import is_challenge

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "signals"
CF_PAGE = (FIXTURES / "cloudflare_just_a_moment.html").read_bytes()


def test_praha_07_cloudflare_mitigated_header_wins():
    assert is_challenge(403, (("Server", "cloudflare"), ("cf-mitigated", "challenge")), CF_PAGE) == "cf-mitigated"


def test_praha_07_just_a_moment_page_without_the_header():
    assert is_challenge(403, (("Server", "cloudflare"),), CF_PAGE) == "cf-just-a-moment"


def test_praha_07_just_a_moment_title_even_with_status_200():
    # Some proxies rewrite the status; the interstitial is still not the page we asked for.
    assert is_challenge(200, (), CF_PAGE) == "cf-just-a-moment"


def test_praha_07_challenge_platform_orchestration_script():
    body = (b"<html><head><title>nieuws</title></head><body>"
            b"<script src='/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1'></script></body></html>")
    assert is_challenge(503, (), body) == "cf-challenge-platform"


def test_praha_07_cf_chl_marker():
    body = b"<html><body><div id='cf-chl-widget-x1'></div></body></html>"
    assert is_challenge(403, (), body) == "cf-chl"


def test_praha_07_ordinary_page_with_cloudflare_bot_script_and_form_captcha_is_not_a_challenge():
    # GIVEN a normal 200 page: Cloudflare's passive "jsd" script and a contact-form reCAPTCHA
    body = (FIXTURES / "normal_page_with_cf_jsd.html").read_bytes()
    # THEN it is the page itself
    assert is_challenge(200, (("Server", "cloudflare"),), body) is None


@pytest.mark.parametrize(
    ("status", "headers", "body", "reason"),
    [
        (403, (), b"<html><script src='https://ct.captcha-delivery.com/c.js'></script></html>", "datadome"),
        (403, (("X-DataDome", "protected"),), b"<html>blocked</html>", "datadome"),
        (403, (), b"<html><head><title>Access to this page has been denied.</title></head></html>",
         "interstitial-title"),
        (403, (), b"<html><div id='px-captcha'></div></html>", "perimeterx"),
        (403, (), b"<HTML><HEAD><TITLE>Access Denied</TITLE></HEAD>"
                  b"<BODY>Reference #18.9f2e1b17.1763640000.2a3b4c</BODY></HTML>", "akamai"),
        (200, (), b"<html><script src='/_sec/cp_challenge/sec-cpt-if-1-3.js'></script></html>", "akamai-challenge"),
        (403, (), b"<html><iframe src='/_Incapsula_Resource?CWUDNSAI=1'></iframe></html>", "incapsula"),
        (202, (("x-amzn-waf-action", "challenge"),), b"", "aws-waf"),
        (429, (), b"<html><form><div class='h-captcha'></div></form></html>", "captcha"),
        (503, (), b"<html><body>Please complete the CAPTCHA to continue</body></html>", "captcha"),
    ],
)
def test_praha_07_vendor_markers(status, headers, body, reason):
    assert is_challenge(status, headers, body) == reason


@pytest.mark.parametrize(
    ("status", "headers", "body"),
    [
        (200, (("X-DataDome", "protected"),), b"<html><title>Agenda</title></html>"),
        (200, (), b"<html><body><p>Vul de captcha in om te reageren.</p></body></html>"),
        (403, (), b"<html><title>403 Forbidden</title><body>nginx</body></html>"),
        (None, (), b""),
        (404, (), b"\x00\xff<title>"),
    ],
)
def test_praha_07_ordinary_responses_are_not_challenges(status, headers, body):
    assert is_challenge(status, headers, body) is None


def test_praha_07_oversized_body_is_not_scanned_but_headers_are():
    big = b"<title>Just a moment...</title>" + b" " * 200
    assert is_challenge(403, (), big, max_bytes=100) is None
    assert is_challenge(403, (("cf-mitigated", "challenge"),), big, max_bytes=100) == "cf-mitigated"

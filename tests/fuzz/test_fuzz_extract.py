"""The parsers of what sites serve, fuzzed: feeds (AUBE-01, PRAHA-01), sitemaps (WANNADO-06,
SUBSIDIE-01, SPRING-03), the page signals (SUBSIDIE-09 robots directives, PRAHA-03 TDMRep, AUBE-06
paywalls, PRAHA-07 challenge pages) and agenda events (WANNADO-10). Whatever the bytes, each ends in
a result (or a stable error code) within the deadline and the memory bound, and what it returns
keeps its promises: no more items than asked, only http(s) links."""
from __future__ import annotations

from urllib.parse import urlsplit

from hypothesis import given
from hypothesis import strategies as st

from heed_core.extract.challenge import is_challenge
from heed_core.extract.events import extract_events
from heed_core.extract.feeds import parse_feed
from heed_core.extract.paywall import is_paywalled
from heed_core.extract.signals import robots_directives
from heed_core.extract.sitemaps import parse_sitemap
from heed_core.extract.tdmrep import TdmRepError, TdmRules, parse_tdmrep_json, reservation

from tests.support.fuzz import bounded
from tests.support.fuzzgen import feed_body, headers, html_body, json_value, sitemap_body, url_like, user_agent

FEED_ERRORS = {"too_large", "empty", "not_a_feed", "malformed_xml", "entity_expansion", "bad_encoding",
               "parser_failure"}
SITEMAP_ERRORS = {"too_large", "empty", "decompression_error", "malformed_xml", "entity_expansion", "not_a_sitemap",
                  "bad_encoding"}
BASE = "https://h.example/feed/"
content_types = st.sampled_from([None, "application/rss+xml", "text/xml; charset=windows-1250",
                                 "application/xml; charset=bogus", "text/html; charset=utf-16", ""])


def _http(url: str | None) -> bool:
    parts = urlsplit(url or "")
    return parts.scheme in ("http", "https") and bool(parts.netloc)


@given(feed_body, content_types, st.integers(0, 50))
def test_aube_01_any_feed_ends_in_items_or_an_error_code(body: bytes, ctype: str | None, max_items: int) -> None:
    result = bounded(lambda: parse_feed(body, base_url=BASE, content_type=ctype, max_items=max_items,
                                        max_summary_chars=600))
    assert result.error is None or result.error in FEED_ERRORS
    assert (result.items == ()) if result.error else len(result.items) <= max_items
    assert result.total_items >= len(result.items)
    for item in result.items:
        assert item.link is None or _http(item.link), item.link
        assert item.summary_length >= 0 and (item.summary is None or len(item.summary) <= 600)


@given(sitemap_body, st.integers(1, 20))
def test_wannado_06_any_sitemap_ends_in_urls_or_an_error_code(body: bytes, max_entries: int) -> None:
    result = bounded(lambda: parse_sitemap(body, url="https://h.example/sitemap.xml", max_entries=max_entries,
                                           max_decompressed=2**20))
    assert result.error is None or result.error in SITEMAP_ERRORS
    assert len(result.urls) <= max_entries and len(result.children) <= max_entries
    assert all(_http(e.loc) for e in result.urls) and all(_http(c) for c in result.children)
    assert result.skipped_total >= len(result.skipped)


@given(headers, st.one_of(st.none(), html_body), user_agent)
def test_subsidie_09_robots_directives_of_any_page(hdrs: tuple[tuple[str, str], ...], body: bytes | None,
                                                    token: str) -> None:
    found = bounded(lambda: robots_directives(hdrs, body, token))
    assert isinstance(found.noindex, bool) and isinstance(found.nofollow, bool)
    assert found.error in (None, "too_large")


@given(st.one_of(json_value.map(lambda v: __import__("json").dumps(v).encode()), st.binary(max_size=2000)),
       url_like, headers, st.one_of(st.none(), html_body))
def test_praha_03_tdmrep_of_any_file_header_and_page(file: bytes, path: str, hdrs: tuple[tuple[str, str], ...],
                                                     body: bytes | None) -> None:
    rules = bounded(lambda: parse_tdmrep_json(file))
    assert isinstance(rules, TdmRules | TdmRepError)
    if isinstance(rules, TdmRules):
        assert rules.lookup(path) in (None, 0, 1)
    decision = bounded(lambda: reservation(rules, path, hdrs, body))
    assert isinstance(decision.reserved, bool)


@given(html_body)
def test_aube_06_any_page_is_paywalled_or_not(body: bytes) -> None:
    decision = bounded(lambda: is_paywalled(body))
    assert isinstance(decision.paywalled, bool)
    assert decision.error in (None, "too_large", "unparseable", "empty")


@given(st.one_of(st.none(), st.sampled_from([200, 403, 429, 503]), st.integers(100, 599)), headers, html_body)
def test_praha_07_any_answer_is_a_challenge_or_not(status: int | None, hdrs: tuple[tuple[str, str], ...],
                                                   body: bytes) -> None:
    marker = bounded(lambda: is_challenge(status, hdrs, body))
    assert marker is None or (isinstance(marker, str) and marker)


@given(html_body, st.sampled_from(["Europe/Amsterdam", "UTC", "America/New_York", "Not/AZone", ""]))
def test_wannado_10_any_agenda_page_ends_in_events(body: bytes, zone: str) -> None:
    result = bounded(lambda: extract_events(body, base_url="https://venue.example/agenda/", timezone=zone))
    for event in result.events:
        assert event.name and _http(event.url), event
        assert event.image is None or _http(event.image)

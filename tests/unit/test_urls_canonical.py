"""One URL, one identity (issue 22): links resolved as browsers resolve them (the WHATWG URL
Standard, checked on the web-platform-tests cases), then one canonical spelling, which is what is
requested, judged by robots.txt, deduplicated and recorded."""
from __future__ import annotations

import json
from typing import Any

import pytest

from heed_core.profile import load_profile_data
from heed_core.robots import parse_robots, path_to_match
from heed_core.urls import (
    BAD_URL,
    NOT_HTTP,
    TRACKING_PARAMS,
    BadUrl,
    Refused,
    canonical,
    canonical_changes,
    canonical_link,
    resolve,
)

from tests.support.corpora import PEER_DATA

WPT = PEER_DATA / "wpt-url" / "urltestdata.json"
SITE = "http://site.example/pub/x"


def _wpt_cases() -> list[dict[str, Any]]:
    if not WPT.is_file():
        return []
    cases = [c for c in json.loads(WPT.read_text(encoding="utf-8")) if isinstance(c, dict)]
    return [c for c in cases if isinstance(c.get("base"), str) and c["base"].split(":", 1)[0] in ("http", "https")]


WPT_CASES = _wpt_cases()
needs_wpt = pytest.mark.skipif(
    not WPT_CASES, reason=f"the WPT URL cases are not here ({WPT}: ../shared is beside CI's clone only)")


# --- the crafted links of the issue ------------------------------------------------------------

@pytest.mark.parametrize("href, expected", [
    # dot segments, written or escaped: the path that is requested is the one judged
    ("http://site.example/pub/../private/via", "http://site.example/private/via"),
    ("http://site.example/pub/%2e%2e/private/enc", "http://site.example/private/enc"),
    ("/pub/.%2E/private/mixed", "http://site.example/private/mixed"),
    ("/pub/%2E./private/mixed2", "http://site.example/private/mixed2"),
    ("\\private\\back", "http://site.example/private/back"),
    ("http:\\\\site.example\\private\\x", "http://site.example/private/x"),
    ("///site.example/private/three", "http://site.example/private/three"),
    # one article, many spellings
    ("/n/uno?utm_source=rss&utm_medium=feed", "http://site.example/n/uno"),
    ("/n/due#commenti", "http://site.example/n/due"),
    ("HTTP://site.example/n/due", "http://site.example/n/due"),
    ("HTTP://SITE.example:80/n/due", "http://site.example/n/due"),
    ("/n/./tre", "http://site.example/n/tre"),
    ("/n/%74re", "http://site.example/n/tre"),
    ("/n/quattro?fbclid=IwAR0abc", "http://site.example/n/quattro"),
    ("/n/cinque?gclid=Cj0&utm_campaign=", "http://site.example/n/cinque"),
    # other parameters and their order are kept as written
    ("/s?b=2&utm_source=x&a=1", "http://site.example/s?b=2&a=1"),
    ("/s?q=%7e%2f%2b+x", "http://site.example/s?q=~%2F%2B+x"),
    # spaces, non-ASCII, full-width and ideographic-dot hosts, credentials
    ("/a b/ü", "http://site.example/a%20b/%C3%BC"),
    ("http://ＥＸＡＭＰＬＥ．com/", "http://example.com/"),
    ("http://bücher.example/", "http://xn--bcher-kva.example/"),
    ("http://user:pw@site.example/x", "http://site.example/x"),
    ("https:other.example/", "https://other.example/"),
    ("https://site.example:443/", "https://site.example/"),
    ("https://site.example:8443/", "https://site.example:8443/"),
])
def test_common_02_links_become_their_one_canonical_spelling(href: str, expected: str) -> None:
    assert canonical_link(SITE, href) == expected
    # idempotent: the canonical form is its own canonical form
    assert canonical(expected) == expected


@pytest.mark.parametrize("href, reason", [
    ("http://[google.com]/b", BAD_URL),
    ("http://a:b:c/", BAD_URL),
    ("http://exa mple.com/", BAD_URL),
    ("http://" + "a" * 5000 + ".example/", BAD_URL),
    ("mailto:info@site.example", NOT_HTTP),
    ("javascript:alert(1)", NOT_HTTP),
    ("ftp://site.example/f", NOT_HTTP),
    ("data:text/html,hi", NOT_HTTP),
])
def test_a_link_that_is_no_http_url_is_refused_with_a_reason_never_raised(href: str, reason: str) -> None:
    got = canonical_link(SITE, href)
    assert isinstance(got, Refused) and got.reason == reason
    assert len(got.text) <= 300
    with pytest.raises(BadUrl):
        canonical(href)


def test_robots_judges_the_path_that_is_requested() -> None:
    robots = parse_robots(b"User-agent: *\nDisallow: /private/\n")
    for href in ("/pub/../private/via", "/pub/%2e%2e/private/enc", "\\private\\b", "/pub/.%2e/private/",
                 "/%70rivate/p", "/pub/./../private/x"):
        url = canonical_link(SITE, href)
        assert isinstance(url, str) and not robots.verdict(url, "aubebot").allowed, href


def test_strip_params_extends_or_empties_the_tracking_list() -> None:
    base = {"extends": "aubebot"}
    assert load_profile_data(base).strip_params == TRACKING_PARAMS
    more = load_profile_data({**base, "urls": {"strip_params": ["ref", "Session*"]}}).strip_params
    assert set(TRACKING_PARAMS) < set(more) and {"ref", "session*"} <= set(more)
    assert canonical("http://s.example/a?ref=x&sessionid=1&k=v&utm_source=y", more) == "http://s.example/a?k=v"
    none = load_profile_data({**base, "urls": {"strip_params": []}}).strip_params
    assert none == ()
    assert canonical("http://s.example/a?utm_source=y", none) == "http://s.example/a?utm_source=y"


def test_strip_params_must_be_parameter_names() -> None:
    from heed_core.profile import ProfileError
    with pytest.raises(ProfileError, match=r"urls\.strip_params"):
        load_profile_data({"extends": "aubebot", "urls": {"strip_params": ["a b"]}})


def test_canonical_changes_say_why_the_url_differs() -> None:
    final, why = canonical_changes("HTTP://u:p@Site.example:80/pub/../n/%74re?utm_source=x&b=1#top")
    assert final == "http://site.example/n/tre?b=1"
    assert why == ["scheme lower-cased", "credentials dropped (never sent)", "host lower-cased",
                   "default port :80 dropped", "dot segments removed", "fragment dropped (never sent)",
                   "tracking parameters removed: utm_source"]
    assert canonical_changes("http://site.example/a") == ("http://site.example/a", [])


# --- the web-platform-tests URL cases ---------------------------------------------------------

@needs_wpt
def test_every_wpt_case_with_an_http_base_resolves_as_browsers_do() -> None:
    agree = 0
    wrong: list[str] = []
    for case in WPT_CASES:
        got = resolve(case["base"], case["input"])
        if case.get("failure"):
            ok = isinstance(got, Refused) and got.reason == BAD_URL
        elif case["protocol"] not in ("http:", "https:"):
            ok = isinstance(got, Refused) and got.reason == NOT_HTTP
        else:
            # The browser's href in Heed's spelling (fragment and credentials dropped, escapes
            # normalised): equal only if the parse itself agreed.
            expected = resolve(None, case["href"])
            ok = not isinstance(got, Refused) and got == expected
            ok = ok and path_to_match(str(got)) == path_to_match(str(expected))
        agree += ok
        if not ok:
            wrong.append(f"{case['input']!r} on {case['base']!r}: {got!r}, browsers {case.get('href')!r}")
    print(f"\nWPT URL cases with an http(s) base: {agree}/{len(WPT_CASES)} as browsers")
    assert not wrong, "\n".join(wrong)
    assert len(WPT_CASES) >= 200


@needs_wpt
def test_the_wpt_hosts_and_paths_are_the_browsers_own() -> None:
    # Component by component, before Heed's own normalisation steps: host and port exactly, the
    # path equal once both spellings are read the way robots.txt reads them.
    from urllib.parse import urlsplit
    for case in WPT_CASES:
        if case.get("failure") or case["protocol"] not in ("http:", "https:"):
            continue
        got = urlsplit(str(resolve(case["base"], case["input"])))
        assert got.hostname == case["hostname"].strip("[]").lower() or f"[{got.hostname}]" == case["hostname"], case
        assert (str(got.port) if got.port is not None else "") == case["port"], case
        assert path_to_match(got.path) == path_to_match(case["pathname"]), case


@needs_wpt
def test_canonical_is_idempotent_on_every_wpt_answer() -> None:
    for case in WPT_CASES:
        if case.get("failure") or case["protocol"] not in ("http:", "https:"):
            continue
        once = canonical(case["href"])
        assert canonical(once) == once, case["href"]


# --- no link can fail a page --------------------------------------------------------------------

_BAD = "http://[google.com]/b"


def test_a_bracketed_host_is_a_bad_url_skip_and_the_listing_goes_on() -> None:
    from heed_core.extract.pages import extract_listing
    body = (f"<html><body><article><h2><a href='{_BAD}'>Rotto</a></h2></article>"
            "<article><h2><a href='/n/ok#c'>Buono</a></h2></article></body></html>").encode()
    result = extract_listing(body, base_url="http://site.example/")
    assert result.error is None
    assert [(i.title, i.link) for i in result.items] == [("Buono", "http://site.example/n/ok")]
    assert result.bad_links == (_BAD,)


def test_a_feed_item_with_a_bad_link_is_skipped_as_bad_url_the_others_go_on() -> None:
    from heed_core.extract.feeds import parse_feed
    feed = ("<?xml version='1.0'?><rss version='2.0'><channel><title>t</title>"
            f"<item><title>a</title><link>{_BAD}</link></item>"
            "<item><title>b</title><link>/n/b?utm_source=rss</link></item></channel></rss>").encode()
    parsed = parse_feed(feed, base_url="http://site.example/feed.xml", max_items=40)
    assert [(i.link, i.bad_link) for i in parsed.items] == [
        (None, _BAD), ("http://site.example/n/b?utm_source=rss", None)]


def test_the_feed_task_records_bad_url_and_names_canonical_links() -> None:
    from heed_core.ports import FetchResult
    from heed_core.tasks import TaskInput, handle_success
    from heed_core.work import WorkItem
    profile = load_profile_data({"extends": "aubebot"})
    feed = ("<?xml version='1.0'?><rss version='2.0'><channel><title>t</title>"
            f"<item><title>a</title><link>{_BAD}</link><description>x</description></item>"
            "<item><title>b</title><link>/n/./b?utm_source=rss#x</link><description>x</description></item>"
            "</channel></rss>").encode()
    item = WorkItem(url="http://site.example/feed.xml", purpose="feed", task="feed", source_id="s",
                    source_url="http://site.example/feed.xml", round_id="r", round_start=0.0)
    result = FetchResult(url=item.url, status=200, headers=(("Content-Type", "application/rss+xml"),), body=feed,
                         t_start=1.0, t_end=2.0)
    out = handle_success(TaskInput(profile=profile, item=item, result=result, now=2.0))
    assert [(s[0], s[1]) for s in out.skips] == [(_BAD, BAD_URL)]
    assert [r["url"] for _, _, r in out.events] == ["http://site.example/n/b"]
    assert [c.item.url for c in out.candidates] == ["http://site.example/n/b"]

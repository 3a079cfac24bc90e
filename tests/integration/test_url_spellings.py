"""One URL, one identity (issue 22), judged from the sites' side: whatever a link's spelling, no
request goes into a path robots.txt closed (COMMON-02, RFC 9309: rules match the path that is
requested), and an article linked under many spellings costs its site one request (AUBE-03)."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from heed_core.adapters.http import RequestsTransport
from heed_core.ports import FetchRequest, SystemClock
from heed_core.profile import Profile, load_profile_data
from heed_core.robots import parse_robots, path_to_match
from heed_core.urls import Refused, canonical_link
from heed_core.work import Source

from heed.conformance.model import utc
from heed.conformance.sites import Sites, html_page, robots, rss
from heed.conformance.stack import Output, Stack
from heed.demo.web import Route

from tests.support.corpora import PEER_DATA

pytestmark = pytest.mark.slow

START = utc("2026-12-01T10:00")
WPT = PEER_DATA / "wpt-url" / "urltestdata.json"
CLOSED = "User-agent: *\nDisallow: /private/\n"
# Every way the issue (and more) spells a link into /private/ from a feed at /pub/feed.xml.
INTO_PRIVATE = (
    "{{base}}/pub/../private/via",
    "{{base}}/pub/%2e%2e/private/enc",
    "{{base}}/pub/.%2E/private/mixed",
    "{{base}}/pub/%2E%2e/private/upper",
    "../private/relative",
    "/pub/./../private/dots",
    "\\private\\backslash",
    "{{base}}/%70rivate/escaped-p",
    "{{base}}/pub/redirect-in",  # answers 301 to /pub/../private/target
)


@pytest.fixture
def web() -> Iterator[Sites]:
    w = Sites()
    yield w
    w.stop()


def _fast() -> Profile:
    # AubeBot's shape with short waits (its shipped numbers: tests/unit/test_profiles.py)
    return load_profile_data({"extends": "aubebot", "politeness": {"min_delay_s": 0.05, "crawl_delay_cap_s": 0.1},
                              "tasks": {"feed": {"article_followup": {"per_source_per_window": 20,
                                                                      "total_per_window": 100}}}})


def _feed(items: list[tuple[str, str]]) -> Route:
    return Route(body=rss([{"title": t, "link": link} for t, link in items]),
                 content_type="application/rss+xml; charset=utf-8")


def _round(web: Sites, sources: list[Source], out: Path) -> Output:
    """One round of AubeBot's feed task through the real handlers on moto."""
    stack = Stack(_fast(), sources, out, START - 60, resolver=web.resolver)
    stack.round(START)
    return stack.finish()


def _article(title: str) -> Route:
    return Route(body=html_page(title, f"<main><p>{title}</p></main>"))


def _is_private(path: str) -> bool:
    # However the request spelled it, which file would a server serve? (decoded, dots resolved)
    target = urlsplit("http://x" + path)
    segments: list[str] = []
    for seg in unquote(target.path).replace("\\", "/").split("/"):
        if seg == "..":
            segments = segments[:-1]
        elif seg not in (".", ""):
            segments.append(seg)
    return bool(segments) and segments[0] == "private"


def test_common_02_no_spelling_of_a_link_reaches_a_path_robots_txt_closed(web: Sites, tmp_path: Path) -> None:
    # GIVEN a site whose robots.txt closes /private/ and whose feed links into it in nine spellings,
    # one of them a redirect whose Location spells it with dot segments, and one open article
    routes = {
        "/robots.txt": robots(CLOSED),
        "/pub/feed.xml": _feed([(f"Voce {n}", link) for n, link in enumerate(INTO_PRIVATE)]
                               + [("Aperta", "{{base}}/pub/open")]),
        "/pub/redirect-in": Route(status=301, headers=(("Location", "/pub/../private/target"),), body=""),
        "/pub/open": _article("Aperta"),
    }
    routes.update({p: _article(p) for p in ("/private/via", "/private/enc", "/private/target")})
    base = web.add("closed", routes)
    # WHEN AubeBot reads the feed (every item's summary is short: each link is opened if allowed)
    out = _round(web, [Source("pub", base + "/pub/feed.xml", "feed")], tmp_path)
    # THEN the site saw no request into /private/, however it is decoded or resolved
    paths = [r.path for r in web.log("closed")]
    assert not [p for p in paths if _is_private(p)], paths
    assert sorted(paths) == sorted(["/robots.txt", "/pub/feed.xml", "/pub/redirect-in", "/pub/open"])
    # AND every refused spelling is recorded with the rule, under its canonical URL
    refused = {urlsplit(s["url"]).path for s in out.skipped("robots_disallowed")}
    assert refused == {"/private/via", "/private/enc", "/private/mixed", "/private/upper", "/private/relative",
                       "/private/dots", "/private/backslash", "/private/escaped-p", "/private/target"}
    assert all("Disallow: /private/" in s["detail"] for s in out.skipped("robots_disallowed"))


def test_aube_03_an_article_linked_under_many_spellings_costs_one_request(web: Sites, tmp_path: Path) -> None:
    # GIVEN two feeds of one site linking five articles under nine spellings, with tracking
    # parameters, fragments, an upper-case scheme, dot segments and escapes
    spellings_a = ["{{base}}/n/uno?utm_source=rss&utm_medium=feed", "{{base}}/n/due#commenti",
                   "{{base}}/n/./tre", "{{base}}/n/quattro?fbclid=IwAR0x", "{{base}}/n/cinque"]
    spellings_b = ["{{base}}/n/uno", "HTTP://{{host}}/n/due", "{{base}}/n/%74re",
                   "{{base}}/n/cinque?gclid=Cj0&utm_campaign="]
    def routes(base: str) -> dict[str, Route]:
        host = urlsplit(base).netloc
        def feed(links: list[str], tag: str) -> Route:
            return _feed([(f"{tag} {n}", link.replace("{{host}}", host)) for n, link in enumerate(links)])
        return {"/robots.txt": robots("User-agent: *\nAllow: /\n"), "/a.xml": feed(spellings_a, "A"),
                "/b.xml": feed(spellings_b, "B"),
                **{f"/n/{w}": _article(w) for w in ("uno", "due", "tre", "quattro", "cinque")}}
    base = web.add("news", routes)
    # WHEN AubeBot reads both feeds in one round
    out = _round(web, [Source("a", base + "/a.xml", "feed"), Source("b", base + "/b.xml", "feed")], tmp_path)
    # THEN each article was requested once, in its canonical spelling: no tracking parameter sent
    articles = [r.path for r in web.log("news") if r.path.startswith("/n/")]
    assert sorted(articles) == ["/n/cinque", "/n/due", "/n/quattro", "/n/tre", "/n/uno"]
    # AND the results name the canonical URLs
    assert {i["url"] for i in out.of("item.found")} == {base + f"/n/{w}"
                                                         for w in ("uno", "due", "tre", "quattro", "cinque")}
    # AND the second spellings are skipped as read already (AUBE-03), not fetched
    assert len(out.skipped("already_read")) == 4


def _wpt_http_answers() -> list[str]:
    if not WPT.is_file():
        return []
    cases = [c for c in json.loads(WPT.read_text(encoding="utf-8")) if isinstance(c, dict)]
    out = []
    for c in cases:
        if isinstance(c.get("base"), str) and c["base"].split(":", 1)[0] in ("http", "https"):
            got = canonical_link(c["base"], c["input"])
            if not isinstance(got, Refused):
                out.append(got)
    return out


def test_every_wpt_url_is_judged_on_the_path_the_site_then_sees(web: Sites) -> None:
    # GIVEN every WPT case that resolves to an http(s) URL, sent to a local site (path and query
    # as resolved, the host swapped for the site's)
    urls = _wpt_http_answers()
    if not urls:
        pytest.skip(f"the WPT URL cases are not here ({WPT}: ../shared is beside CI's clone only)")
    base = web.add("wpt", {}, fallback=Route(body="ok"))
    transport = RequestsTransport(user_agent="HeedTest/1.0 (+https://heed.example/bot)", clock=SystemClock(),
                                  allow_private=True)
    judged: list[str] = []
    for url in urls:
        parts = urlsplit(url)
        local = base + (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        result = transport.fetch(FetchRequest(url=local, purpose="page", max_bytes=4096))
        assert result.sent and result.status == 200, (url, result.error)
        judged.append(path_to_match(local))
    # THEN the site saw, request for request, the very path robots.txt matching was asked about
    seen = [path_to_match(r.path) for r in web.log("wpt")]
    assert seen == judged
    # AND a rule closing any of them closes the request the site saw
    rules = parse_robots(("User-agent: *\n" + "".join(f"Disallow: {p}\n" for p in judged[:40])).encode())
    assert all(not rules.verdict(base + r.path, "heedtest").allowed for r in web.log("wpt")[:40])

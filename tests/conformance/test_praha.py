"""PRAHA-01..09 proven from the sites' side: Praha-X's feeds, articles, TDMRep, refusals and weekly site check."""
from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from heed_core.profile import load_profile, load_profile_data
from heed_core.work import Source

from heed.demo.web import Route, challenge, redirect

from tests.support.pages import FeedEntry, html_page, rss, text
from tests.support.runs import ObservedRun, RunOutput, at, run_bot, utc
from tests.support.web import Web, gaps, overlaps

UA = "Praha-X/0.1 (+https://praha-x.cz/bot)"
DAY = 86400.0
WEEK = 7 * DAY
# Monday 2 November 2026: feed rounds at 06:00 and 10:00 (the shipped cron(0 6,10,14,18 * * ? *)).
MONDAY_6 = utc(2026, 11, 2, 6)
MONDAY_10 = utc(2026, 11, 2, 10)
DELAY = 0.2  # the derived profile's gap; the shipped 3 s is checked in test_praha_06_shipped_profile_...

LONG_SUMMARY = ("Rada městské části schválila stavbu nové lávky pro pěší a cyklisty mezi Holešovicemi a Karlínem. "
                * 8).strip()
ARTICLES = {
    # path: (title, how the page declares a TDM reservation, or None)
    "/clanky/lavka": ("Nová lávka přes Vltavu", None),
    "/clanky/most": ("Uzavírka Karlova mostu", "header"),
    "/clanky/rozpocet": ("Rozpočet na rok 2027", "meta"),
    "/vyhrazeno/zprava": ("Výroční zpráva", "tdmrep.json"),
    "/interni/pokyn": ("Interní pokyn", None),  # disallowed for Praha-X by robots.txt
}
PRESS = ("/tiskove/1", "/tiskove/2")
DATE = "Mon, 02 Nov 2026 05:00:00 GMT"  # every item's pubDate
BROWSER_HEADERS = ("cookie", "upgrade-insecure-requests", "sec-fetch-mode", "sec-fetch-site", "sec-ch-ua")


def _article(title: str, tdm: str | None) -> Route:
    head = '<meta name="tdm-reservation" content="1">' if tdm == "meta" else ""
    head += '<link rel="stylesheet" href="/styl.css"><script src="/aplikace.js"></script>'
    body = (f"<article><h1>{title}</h1><p>Text článku: {title}. Stavba začne na jaře a potrvá dva roky.</p>"
            f"<img src=\"/foto/{abs(hash(title)) % 1000}.jpg\" alt=\"\">"
            "<form action=\"/hledat\" method=\"post\"><input name=\"q\"><button>Hledat</button></form>"
            "<p><a href=\"/mapa-webu\">Mapa webu</a> <a href=\"/kontakt\">Kontakt</a></p></article>")
    headers = (("Set-Cookie", "relace=abc123; Path=/"),) + ((("tdm-reservation", "1"),) if tdm == "header" else ())
    return Route(body=html_page(title, body, head, lang="cs", main=True), headers=headers)


def _atom(base: str) -> str:
    entries = "".join(
        f"<entry><title>Tisková zpráva {p[-1]}</title><link href=\"{base}{p}\"/><id>{base}{p}</id>"
        f"<updated>2026-11-0{p[-1]}T08:00:00Z</updated><summary>Krátce.</summary></entry>" for p in PRESS)
    return (f'<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
            f"<title>Tiskové zprávy</title><id>{base}/tiskove/atom.xml</id>"
            f"<updated>2026-11-02T08:00:00Z</updated>{entries}</feed>")


def _magistrat(base: str) -> dict[str, Route]:
    items = [FeedEntry(t, base + p, date=DATE,
                       summary=LONG_SUMMARY if p == "/clanky/lavka" else f"Krátký kontext: {t}.")
             for p, (t, _) in ARTICLES.items()]
    routes = {
        "/robots.txt": text("User-agent: *\nDisallow: /admin/\n\nUser-agent: Praha-X\nDisallow: /interni/\n"),
        # Not conditional: the second round reads every item again and must still not reopen an article.
        "/aktuality/rss.xml": Route(body=rss(items, base=base, title="Zprávy"), content_type="application/rss+xml",
                                    headers=(("Set-Cookie", "sledovani=1; Path=/"),)),
        "/tiskove/atom.xml": Route(body=_atom(base), content_type="application/atom+xml", conditional=True),
        "/.well-known/tdmrep.json": Route(body=json.dumps([{"location": "/vyhrazeno/*", "tdm-reservation": 1}]),
                                          content_type="application/json"),
    }
    routes.update({p: _article(t, tdm) for p, (t, tdm) in ARTICLES.items()})
    routes.update({p: Route(body=html_page("Tisková zpráva", "<p>Text.</p>", lang="cs", main=True)) for p in PRESS})
    return routes


def _feed_site(status_route: Route) -> Callable[[str], dict[str, Route]]:
    def routes(base: str) -> dict[str, Route]:
        ok = rss([FeedEntry("Zpráva", base + "/zprava/1", date=DATE, summary="Krátce.")], base=base, title="Zprávy")
        return {"/robots.txt": text("User-agent: *\nAllow: /\n"), "/rss.xml": status_route,
                "/ok.xml": Route(body=ok, content_type="application/rss+xml")}
    return routes


def _closed_port(ip: str) -> int:
    s = socket.socket()
    s.bind((ip, 0))
    port = s.getsockname()[1]
    s.close()
    return port


_CHALLENGE_200 = Route(body="<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>"
                            "<noscript>Enable JavaScript and cookies to continue</noscript></body></html>")


@pytest.fixture(scope="module")
def feeds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Web, RunOutput]]:
    """One Praha-X run (rounds at 06:00 and 10:00) over every feed site; several tests read it."""
    web = Web()
    try:
        web.add("magistrat", "127.0.0.140", _magistrat)
        web.add("zakaz", "127.0.0.141", lambda b: {
            "/robots.txt": text("User-agent: Praha-X\nDisallow: /\n\nUser-agent: *\nAllow: /\n"),
            "/rss.xml": Route(body=rss([FeedEntry("x", b + "/x", date=DATE, summary="")], base=b, title="Zprávy"),
                              content_type="application/rss+xml")})
        web.add("odmitnuti", ["127.0.0.142", "127.0.0.143"], _feed_site(Route(body="<h1>403</h1>", status=403)),
                hostname="zavreno.praha.test")
        web.add("pretizeno", "127.0.0.144", _feed_site(Route(body="slow down", status=429,
                                                             headers=(("Retry-After", "3600"),))))
        web.add("vyzva", "127.0.0.145", _feed_site(_CHALLENGE_200))
        # The refusal may come at robots.txt already: a 429 there, or a bot-management challenge.
        for name, ip, route in (("robots429", "127.0.0.158", Route(body="slow down", status=429)),
                                ("robotsvyzva", "127.0.0.159", challenge())):
            web.add(name, ip, lambda b, r=route: {**_feed_site(r)(b), "/robots.txt": r})
        web.add("blok", "127.0.0.146", _feed_site(Route(body="", content_type="application/rss+xml")),
                hostname="zpravy.blokovano.test")
        m = web.base("magistrat")
        sources = [
            Source("aktuality", m + "/aktuality/rss.xml", "feed", options={"write_about": True}),
            Source("tiskove", m + "/tiskove/atom.xml", "feed"),
            Source("zakaz", web.base("zakaz") + "/rss.xml", "feed", options={"write_about": True}),
            Source("blok", web.base("blok") + "/rss.xml", "feed"),
            # PRAHA-04: a top-100 site that answers nothing (the first round starts every task).
            Source("top-nedostupny", f"http://127.0.0.149:{_closed_port('127.0.0.149')}/", "site_check"),
        ]
        for name in ("odmitnuti", "pretizeno", "vyzva", "robots429", "robotsvyzva"):
            # The refusing feed first: the second source on the same site shows the stop holds for it too.
            sources += [Source(name, web.base(name) + "/rss.xml", "feed"),
                        Source(name + "-ok", web.base(name) + "/ok.xml", "feed")]

        def stop_request(run: ObservedRun, t: float, tasks: list[str]) -> None:
            if t == MONDAY_6:
                # PRAHA-09: the site owner wrote to us; robots.txt stays as it is.
                run.store().block_domain("blokovano.test", "kontaktní formulář 2026-11-01: prosím nechoďte")

        profile = load_profile_data({"extends": "praha-x", "politeness": {"min_delay_s": DELAY}})
        out = run_bot(profile, sources, tmp_path_factory.mktemp("praha-feeds"), start=MONDAY_6, until=MONDAY_10,
                      web=web, on_round=stop_request)
        yield web, out
    finally:
        web.stop()


def _gets(web: Web, site: str, path: str) -> int:
    return sum(1 for r in web.log(site) if r.path == path)


# --- PRAHA-01 -----------------------------------------------------------------------------------
def test_praha_01_keeps_headline_date_link_and_short_context_from_rss_and_atom(feeds):
    web, out = feeds
    m = web.base("magistrat")
    found = {i["url"]: i for i in out.found("item.found")}
    # GIVEN an RSS feed with five items and an Atom feed with two WHEN both are read
    # THEN every item is kept with its headline, date, link and a short context
    for path, (title, _) in ARTICLES.items():
        item = found[m + path]
        assert item["title"] == title and item["source"] == "aktuality"
        assert item["published"].startswith("2026-11-02T05:00:00")
        assert item["summary"] and len(item["summary"]) <= 500
    assert LONG_SUMMARY.startswith(found[m + "/clanky/lavka"]["summary"]) and len(LONG_SUMMARY) > 500
    assert {found[m + p]["source"] for p in PRESS} == {"tiskove"}
    # AND nothing else about an item is kept
    allowed = {"detail_type", "bot", "id", "kind", "source", "source_url", "url", "title", "published", "summary"}
    assert all(set(i) <= allowed for i in out.found("item.found"))


# --- PRAHA-02 / PRAHA-05 -------------------------------------------------------------------------
def test_praha_02_opens_the_article_of_an_item_it_writes_about_once_and_keeps_its_text_unpublished(feeds):
    web, out = feeds
    m = web.base("magistrat")
    # GIVEN a feed marked "write about" and a press-release feed that is not
    # THEN the article of the plain item was opened, exactly once over two rounds
    assert _gets(web, "magistrat", "/clanky/lavka") == 1
    # AND the press releases' articles were never opened
    assert not [p for p in web.paths("magistrat") if p.startswith("/tiskove/") and not p.endswith(".xml")]
    # AND its text is kept as working material in the bucket, not in the published event
    read = [i for i in out.found("article.read") if i["url"] == m + "/clanky/lavka"]
    assert len(read) == 1 and "text" not in read[0]
    kept = out.texts[read[0]["text_key"]]
    assert len(kept) == 1 and "Stavba začne na jaře" in kept[0]


def test_praha_05_feeds_read_every_round_articles_only_once(feeds):
    web, out = feeds
    m = web.base("magistrat")
    feed_reads = [at(r["t_start"]) for r in out.requests if r["url"] == m + "/aktuality/rss.xml"]
    # GIVEN two feed rounds four hours apart THEN the feed was read in both
    assert len(out.rounds) == 2 and len(feed_reads) == 2
    assert feed_reads[0] < MONDAY_10 <= feed_reads[1]
    # AND no article page was requested twice, though the second read listed them all again
    article_paths = [p for p in web.paths("magistrat") if p.startswith(("/clanky/", "/vyhrazeno/"))]
    assert sorted(article_paths) == sorted(set(article_paths)) and article_paths
    again = {s["url"] for s in out.skipped("already_read")}
    assert {m + p for p in ("/clanky/lavka", "/clanky/most", "/clanky/rozpocet", "/vyhrazeno/zprava")} <= again
    # AND the unchanged Atom feed cost a 304 the second time
    atom = [r for r in web.log("magistrat") if r.path == "/tiskove/atom.xml"]
    assert [r.status for r in atom] == [200, 304] and atom[1].header("If-None-Match")


# --- PRAHA-03 -------------------------------------------------------------------------------------
def test_praha_03_tdm_reservation_by_header_meta_or_tdmrep_json_keeps_no_text(feeds):
    web, out = feeds
    m = web.base("magistrat")
    paths = web.paths("magistrat")
    # GIVEN three articles reserved by header, meta tag and /.well-known/tdmrep.json
    # THEN tdmrep.json was read before the first article page
    first_article = min(i for i, p in enumerate(paths) if p.startswith(("/clanky/", "/vyhrazeno/")))
    assert "/.well-known/tdmrep.json" in paths[:first_article]
    # AND each reserved article is recorded as such, by the technique that declared it
    reserved = {s["url"]: s["detail"] for s in out.skipped("tdm_reserved")}
    for path, (_, how) in ARTICLES.items():
        if how is not None:
            assert how in reserved[m + path]
    # AND no text of them is kept: the bucket holds the unreserved article only
    read = {i["url"] for i in out.found("article.read")}
    assert read == {m + "/clanky/lavka"}
    kept = " ".join(v for vs in out.texts.values() for v in vs)
    assert "Karlova mostu" not in kept and "2027" not in kept and "Výroční" not in kept


# --- PRAHA-06 / PRAHA-08 -------------------------------------------------------------------------
def test_praha_06_one_request_at_a_time_per_site_with_the_gap_and_no_site_crawl(feeds):
    web, out = feeds
    for site in ("magistrat", "odmitnuti", "pretizeno", "vyzva"):
        log = web.log(site)
        assert overlaps(log) == []
        assert min(out.gaps(log), default=DELAY) >= DELAY, (site, out.gaps(log))
    # Never the whole site: only what a feed published (links inside the articles are not followed).
    published = {"/robots.txt", "/aktuality/rss.xml", "/tiskove/atom.xml", "/.well-known/tdmrep.json", *ARTICLES}
    assert set(web.paths("magistrat")) <= published
    assert not {"/mapa-webu", "/kontakt", "/admin/"} & set(web.paths("magistrat"))


def test_praha_08_not_a_browser_and_fills_no_forms(feeds):
    web, out = feeds
    log = web.log()
    assert log
    # GIVEN sites that set cookies and article pages with a search form, scripts, styles and images
    # THEN every request is a GET with Praha-X's own identity and nothing a browser sends
    assert {r.method for r in log} == {"GET"}
    assert {r.header("User-Agent") for r in log} == {UA} and "Mozilla" not in UA
    assert not [(r.path, k) for r in log for k, _ in r.headers if k.lower() in BROWSER_HEADERS]
    # AND no form was submitted, no page resource loaded
    paths = {r.path for r in log}
    assert not {p for p in paths if p.startswith(("/hledat", "/foto/", "/styl", "/aplikace"))}


# --- PRAHA-07 -------------------------------------------------------------------------------------
@pytest.mark.parametrize("site, reason", [("odmitnuti", "http_403"), ("pretizeno", "http_429"), ("vyzva", "challenge")])
def test_praha_07_refusal_stops_and_closes_the_source(feeds, site: str, reason: str):
    web, out = feeds
    base = web.base(site)
    # GIVEN a site that refuses Praha-X's feed (403, 429 or a challenge page served as 200)
    # THEN it saw robots.txt and that one feed request, in the first round, and nothing since:
    # not the refused feed again, not the other feed on the same site, not in the second round
    assert web.paths(site) == ["/robots.txt", "/rss.xml"]
    closed = [i for i in out.found("source.closed") if i["source"] == site]
    assert len(closed) == 1 and closed[0]["reason"] == reason
    assert base + "/ok.xml" in out.skip_urls("host_stopped")
    # AND the next round left the closed source out before anything was sent
    later = [s for s in out.skipped("source_closed")
             if s["source"] == site and s["round"].startswith("2026-11-02T10:00")]
    assert len(later) == 1


@pytest.mark.parametrize("site", ["robots429", "robotsvyzva"])
def test_praha_07_refusal_at_robots_txt_stops_before_anything_else(feeds, site: str):
    web, out = feeds
    # GIVEN a site that answers robots.txt itself with a 429 or a challenge page
    # THEN it saw that one request, in two rounds, and the source is closed
    assert web.paths(site) == ["/robots.txt"]
    assert [i["source"] for i in out.found("source.closed") if i["source"].startswith(site)] == [site]


def test_praha_07_never_retries_with_other_addresses_or_identities(feeds):
    web, out = feeds
    # GIVEN the refusing site answers on two addresses
    by_address = web.log_by_address("odmitnuti")
    assert len(by_address) == 2
    # THEN after the 403 nothing went to the other address, and one identity was used throughout
    assert sorted(len(v) for v in by_address.values()) == [0, 2]
    log = web.log()
    assert len({r.client.rsplit(":", 1)[0] for r in log}) == 1
    assert {r.header("User-Agent") for r in log} == {UA}


# --- PRAHA-09 -------------------------------------------------------------------------------------
def test_praha_09_robots_disallow_all_for_praha_x_is_obeyed(feeds):
    web, out = feeds
    # GIVEN "User-agent: Praha-X / Disallow: /" (and "*" allowed) THEN only robots.txt was read
    assert web.paths("zakaz") == ["/robots.txt"]
    skipped = [s for s in out.skipped("robots_disallowed") if s["source"] == "zakaz"]
    assert len(skipped) == 2 and all("Disallow: /" in s["detail"] for s in skipped)
    # AND a path disallowed only in the Praha-X group of another site was not read either
    assert "/interni/pokyn" not in web.paths("magistrat")


def test_praha_09_source_removed_by_hand_without_robots_change(feeds):
    web, out = feeds
    # GIVEN the owner of blokovano.test asked by mail; robots.txt allows everything
    # THEN its subdomain saw no request at all, in any round, and the skip says why
    assert web.log("blok") == []
    blocked = [s for s in out.skipped("blocked_by_operator") if s["source"] == "blok"]
    assert len(blocked) == 2 and all("kontaktní formulář" in s["detail"] for s in blocked)


# --- PRAHA-04: the weekly site check --------------------------------------------------------------
SITE_CHECK_START = utc(2026, 11, 2, 3)  # a Monday, 03:00 as in the shipped cron(0 3 ? * MON *)
NAME = "Kulturní Praha"


@pytest.fixture(scope="module")
def site_check(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Web, RunOutput]]:
    """Eight daily site-check rounds (Monday to Monday): the weekly cadence must hold by itself."""
    web = Web()
    home = html_page("Kulturní Praha – úvod",
                     "<h1>Vítejte</h1><a href='/program'>Program</a><a href='/o-nas'>O nás</a><img src='/logo.png'>",
                     head=f'<meta property="og:site_name" content="{NAME}"><link rel="icon" href="/static/ikona.png">'
                          '<link rel="stylesheet" href="/styl.css"><script src="/app.js"></script>',
                     lang="cs", main=True)
    try:
        web.add("presmerovani", "127.0.0.147", lambda b: {
            "/robots.txt": text("User-agent: *\nAllow: /\n"), "/": redirect("/cs/"),
            "/cs/": Route(body=home, headers=(("Set-Cookie", "s=1"),)),
            "/static/ikona.png": Route(body=b"\x89PNG\r\n\x1a\n", content_type="image/png")})
        web.add("prosty", "127.0.0.148", lambda b: {
            "/robots.txt": text("User-agent: *\nAllow: /\n"),
            "/": Route(body=html_page("Antikvariát U Zlatého klíče", "<p>Knihy.</p>", lang="cs", main=True))})
        sources = [Source("top-presmerovani", web.base("presmerovani") + "/", "site_check"),
                   Source("top-prosty", web.base("prosty") + "/", "site_check")]
        # The shipped schedule fires weekly; a daily one shows the weekly cadence is kept by the
        # crawler itself (shipped cron: tests/unit/test_profiles.py::test_praha_04_site_check_once_a_week).
        # No gap here (pacing is proven on the feed run above): eight rounds stay fast.
        profile = load_profile_data({"extends": "praha-x", "politeness": {"min_delay_s": 0},
                                     "schedules": [{"expression": "cron(0 3 * * ? *)", "task": "site_check"}]})
        out = run_bot(profile, sources, tmp_path_factory.mktemp("praha-check"), start=SITE_CHECK_START,
                      until=SITE_CHECK_START + WEEK, web=web, patience_s=3)
        yield web, out
    finally:
        web.stop()


def test_praha_04_home_page_and_icon_once_a_week(site_check):
    web, out = site_check
    base = web.base("presmerovani")
    assert len(out.rounds) == 8
    # GIVEN a check scheduled every day for a week and a day
    # THEN the home page (and its redirect target, and the icon) were opened twice, a week apart
    homes = [at(r["t_start"]) for r in out.requests if r["url"] == base + "/"]
    icons = [at(r["t_start"]) for r in out.requests if r["url"] == base + "/static/ikona.png"]
    assert len(homes) == 2 and len(icons) == 2
    assert homes[1] - homes[0] >= WEEK and icons[1] - icons[0] >= WEEK
    assert homes[1] - homes[0] < WEEK + DAY
    # AND the six rounds in between left the site alone, saying why
    quiet = [s for s in out.skipped("seen_recently") if s["source"] == "top-presmerovani"]
    assert len(quiet) == 6


def test_praha_04_records_reachable_redirect_target_and_name(site_check):
    web, out = site_check
    checks = {}
    for i in out.found("site.checked"):
        checks.setdefault(i["source"], []).append(i)
    r = checks["top-presmerovani"][0]
    assert (r["reachable"], r["name"], r["status"]) == (True, NAME, 200)
    assert r["final_url"] == web.base("presmerovani") + "/cs/"
    assert r["icon_url"] == web.base("presmerovani") + "/static/ikona.png" and r["icon_status"] == 200
    p = checks["top-prosty"][0]
    assert (p["reachable"], p["name"]) == (True, "Antikvariát U Zlatého klíče")
    assert p["icon_url"] == web.base("prosty") + "/favicon.ico"
    assert len(checks["top-presmerovani"]) == 2 and len(checks["top-prosty"]) == 2


def test_praha_04_reads_nothing_more_and_keeps_no_home_page_content(site_check):
    web, out = site_check
    # THEN per check: robots.txt, the home page, where it led, the icon: no link, script, style or image
    assert set(web.paths("presmerovani")) == {"/robots.txt", "/", "/cs/", "/static/ikona.png"}
    assert set(web.paths("prosty")) == {"/robots.txt", "/", "/favicon.ico"}
    # AND no home page content is kept: a check record holds facts only, the bucket holds nothing
    facts = {"detail_type", "bot", "id", "kind", "source", "source_url", "url", "reachable", "final_url", "status",
             "name", "icon_url", "icon_status", "error"}
    assert all(set(i) <= facts for i in out.found("site.checked"))
    assert out.texts == {}
    assert not [r for r in web.log() if r.header("Cookie")]


def test_praha_04_unreachable_site_is_recorded_as_unreachable(feeds):
    # GIVEN a top-100 site whose address answers nothing (checked in the feed run's first round,
    # which starts every task) THEN the check says so
    web, out = feeds
    records = [i for i in out.found("site.checked") if i["source"] == "top-nedostupny"]
    assert records and all(r["reachable"] is False for r in records)


# --- the shipped numbers ---------------------------------------------------------------------------
def test_praha_06_shipped_profile_keeps_three_seconds_between_requests(tmp_path: Path):
    """The real praha-x profile (3 s, PRAHA-06), not a derived one: robots.txt, then the feed."""
    web = Web()
    try:
        web.add("pomaly", "127.0.0.150", lambda b: {
            "/robots.txt": text("User-agent: *\nAllow: /\n"),
            "/rss.xml": Route(body=rss([FeedEntry("a", b + "/a", date=DATE, summary="")], base=b, title="Zprávy"),
                              content_type="application/rss+xml")})
        run_bot(load_profile("praha-x"), [Source("a", web.base("pomaly") + "/rss.xml", "feed")], tmp_path,
                start=MONDAY_6, web=web, patience_s=5)
        log = web.log("pomaly")
        assert [r.path for r in log] == ["/robots.txt", "/rss.xml"]
        assert min(gaps(log)) >= 3.0 and overlaps(log) == []
    finally:
        web.stop()

"""SUBSIDIE-01..13 proven from the municipalities' side: sitemap-led rounds, per-host robots, change detection."""
from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from heed_core.profile import load_profile, load_profile_data
from heed_core.work import Source

from heed.demo.web import Hit, Route
from heed.local.runtime import REGION
from heed.operator.actions import purge_domain

from tests.support.pages import html_page, sitemap_xml, text
from tests.support.runs import ObservedRun, RunOutput, at, run_bot, utc
from tests.support.web import Web, gaps, overlaps

UA = "SubsidieUpdate/1.0 (+https://www.subsidieupdate.nl/bot)"
FRIDAY_7 = utc(2026, 11, 6, 7)    # a working day: rounds at 07, 09, 11, 13, 15 (shipped schedule)
FRIDAY_9 = utc(2026, 11, 6, 9)
SATURDAY = utc(2026, 11, 7, 0)
SATURDAY_10 = utc(2026, 11, 7, 10)  # the weekend day's one round
DAY = 86400.0
# The derived profile's numbers; the shipped ones (2 s, cap 30 s, 6 pages) are in
# test_subsidie_03_shipped_profile_... below and tests/unit/test_profiles.py (test_subsidie_03/07/02).
DELAY, CAP, PAGES = 0.2, 1.5, 3
TOPIC_OFF = ("/afval/ophaaldagen", "/paspoort-aanvragen", "/zoeken?q=subsidie", "/inloggen",
             "/downloads/jaarverslag-2025.pdf", "/subsidies/zoeken?q=energie")


def _unzip(blob: bytes) -> str:
    """A binary attribute (zlib-compressed JSON) as text, to search the table."""
    import zlib

    return zlib.decompress(bytes(blob)).decode("utf-8", "replace")


def _reports(out: Any) -> list[dict[str, Any]]:
    """What customers were told about pages: a new page, or a changed one (SUBSIDIE-12)."""
    return [i for i in out.items if i.get("detail_type") in ("page.new", "page.changed")]


def _subsidy_page(title: str, extra: str = "", head: str = "") -> str:
    links = "<p><a href='/afval/ophaaldagen'>Afval</a> <a href='/subsidies/elders'>Meer regelingen</a></p>"
    form = "<form method='post' action='/subsidies/aanvragen'><input name='naam'><button>Aanvragen</button></form>"
    return html_page(title, f"<h1>{title}</h1><p>{title}: aanvragen kan tot 1 maart 2027. Bedrag: EUR 500.</p>"
                     + links + form + extra, head, lang="nl", main=True)


def _page(title: str, **kw: Any) -> Route:
    return Route(body=_subsidy_page(title), **kw)


def _sitemap_route(base: str, paths: list[str]) -> Route:
    return Route(body=sitemap_xml(paths, base=base), content_type="application/xml")


def _waterveen(base: str) -> dict[str, Route]:
    robots = ("User-agent: *\nDisallow: /\n\n"
              "User-agent: SubsidieUpdate\nDisallow: /subsidies/\nAllow: /subsidies/regelingen/\n"
              "Allow: /regelingen/\nDisallow: /regelingen/archief/\nCrawl-delay: 1.2\n")
    listed = ["/subsidies/regelingen/energiebespaarlening", "/subsidies/oud/sportsubsidie-2019",
              "/regelingen/archief/monumentensubsidie", *TOPIC_OFF]
    return {"/robots.txt": text(robots), "/sitemap.xml": _sitemap_route(base, listed),
            **{p: _page(p.rsplit("/", 1)[-1]) for p in listed}}


def _subdomain(base: str) -> dict[str, Route]:
    pages = [f"/subsidies/{n}" for n in ("sport", "cultuur", "duurzaamheid", "jeugd", "zorg")]
    index = ('<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
             f"<sitemap><loc>{base}/sitemap-subsidies.xml</loc></sitemap></sitemapindex>")
    # No robots.txt here (404): no restrictions, whatever lindeveen.test's own robots.txt says.
    return {"/sitemap.xml": Route(body=index, content_type="application/xml"),
            "/sitemap-subsidies.xml": _sitemap_route(base, pages), **{p: _page(p) for p in pages}}


def _simple(robots: Route | None, pages: list[str],
            extra: dict[str, Route] | None = None) -> Callable[[str], dict[str, Route]]:
    def routes(base: str) -> dict[str, Route]:
        out = {"/sitemap.xml": _sitemap_route(base, pages), **{p: _page(p) for p in pages}, **(extra or {})}
        if robots is not None:
            out["/robots.txt"] = robots
        return out
    return routes


def _signals(base: str) -> dict[str, Route]:
    pages = ["/subsidies/meta-noindex", "/subsidies/header-noindex", "/subsidies/nofollow"]
    return {
        "/robots.txt": text("User-agent: *\nAllow: /\n"),
        "/sitemap.xml": _sitemap_route(base, pages),
        "/subsidies/meta-noindex": Route(body=_subsidy_page("Geheime regeling",
                                                            head='<meta name="robots" content="noindex">')),
        "/subsidies/header-noindex": Route(body=_subsidy_page("Verborgen regeling"),
                                           headers=(("X-Robots-Tag", "SubsidieUpdate: noindex"),)),
        "/subsidies/nofollow": Route(body=_subsidy_page("Volg niets", head='<meta name="robots" content="nofollow">')),
    }


PAYWALLED = ('<div class="paywall"><p>Word abonnee om verder te lezen.</p></div>'
             '<script type="application/ld+json">{"@context": "https://schema.org", "@type": "WebPage", '
             '"isAccessibleForFree": false}</script>')


def _paywalled(base: str) -> dict[str, Route]:
    return {"/robots.txt": text("User-agent: *\nAllow: /\n"),
            "/sitemap.xml": _sitemap_route(base, ["/subsidies/premium-overzicht"]),
            "/subsidies/premium-overzicht": Route(body=_subsidy_page("Premium overzicht", PAYWALLED))}


@pytest.fixture(scope="module")
def municipalities(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Web, RunOutput]]:
    """One subsidy round (Friday 07:00) over ten municipal hosts."""
    web = Web()
    try:
        web.add("waterveen", "127.0.0.163", _waterveen, hostname="waterveen.test")
        web.add("subdomein", "127.0.0.164", _subdomain, hostname="subsidies.lindeveen.test")
        web.add("lindeveen", "127.0.0.165", _simple(text("User-agent: *\nDisallow: /\n"), ["/subsidies/alles"]),
                hostname="lindeveen.test")
        web.add("traag", "127.0.0.166", _simple(text("User-agent: SubsidieUpdate\nCrawl-delay: 100\n"),
                                                ["/subsidies/traag"]), hostname="traag.test")
        web.add("dicht", "127.0.0.167", _simple(Route(body="Forbidden", status=403), ["/subsidies/open"]),
                hostname="dicht.test")
        web.add("storing", "127.0.0.168", _simple(Route(body="<h1>503</h1>", status=503), ["/subsidies/x"]),
                hostname="storing.test")
        web.add("signalen", "127.0.0.169", _signals, hostname="signalen.test")
        web.add("geblokkeerd", "127.0.0.170", _simple(text("User-agent: *\nAllow: /\n"), ["/subsidies/y"]),
                hostname="www.geblokkeerd.test")
        web.add("betaald", "127.0.0.175", _paywalled, hostname="betaald.test")
        sources = [Source(name, web.base(name) + "/", "subsidy") for name in web.hosts]

        def stop_request(run: ObservedRun, t: float, tasks: list[str]) -> None:
            run.store().block_domain("geblokkeerd.test", "verzoek van de gemeente per mail: niet meer bezoeken")

        profile = load_profile_data({"extends": "subsidieupdate",
                                     "politeness": {"min_delay_s": DELAY, "crawl_delay_cap_s": CAP},
                                     "tasks": {"subsidy": {"max_pages_per_host_per_round": PAGES}}})
        out = run_bot(profile, sources, tmp_path_factory.mktemp("subsidie"), start=FRIDAY_7, web=web,
                      on_round=stop_request)
        yield web, out
    finally:
        web.stop()


def _kept(out: RunOutput) -> str:
    return "\n".join(v for vs in out.texts.values() for v in vs)


# --- SUBSIDIE-01 / -05 -------------------------------------------------------------------------------
def test_subsidie_01_fetches_the_sitemap_and_the_subsidy_pages_it_lists(municipalities):
    web, out = municipalities
    # A sitemap index leads to the sitemap that lists the pages; then the pages themselves
    paths = web.paths("subdomein")
    assert paths[:3] == ["/robots.txt", "/sitemap.xml", "/sitemap-subsidies.xml"]
    assert all(p.startswith("/subsidies/") for p in paths[3:]) and len(paths) == 3 + PAGES
    changed = {i["url"] for i in _reports(out)}
    assert {web.base("subdomein") + p for p in paths[3:]} <= changed


def test_subsidie_05_no_login_forms_search_downloads_or_links_off_topic(municipalities):
    web, out = municipalities
    log = web.log()
    assert {r.method for r in log} == {"GET"} and {r.header("User-Agent") for r in log} == {UA}
    requested = {r.path for r in log}
    # GIVEN sitemaps listing waste collection, passports, a site search, a login page and a report
    # download next to the subsidies THEN none of them was asked for, each recorded as off topic
    assert not requested & set(TOPIC_OFF)
    off = {s["url"].removeprefix(web.base("waterveen")) for s in out.skipped("off_topic")}
    assert set(TOPIC_OFF) <= off
    # AND no link on a page was followed, no form was sent
    assert not requested & {"/subsidies/elders", "/subsidies/aanvragen", "/afval/ophaaldagen"}


def test_subsidie_05_paywalled_page_is_not_kept(municipalities):
    web, out = municipalities
    url = web.base("betaald") + "/subsidies/premium-overzicht"
    assert url not in {i["url"] for i in _reports(out)}
    assert "Premium overzicht" not in _kept(out)


# --- SUBSIDIE-02 / -03 / -07 ---------------------------------------------------------------------------
def test_subsidie_02_a_handful_of_pages_per_municipality_per_round(municipalities):
    web, out = municipalities
    pages = [p for p in web.paths("subdomein") if p.startswith("/subsidies/")]
    # Five listed, the round's cap (derived: 3; shipped: 6) taken, the rest left for a later round
    assert len(pages) == PAGES
    assert len([s for s in out.skipped("cap_reached") if s["source"] == "subdomein"]) == 5 - PAGES


def test_subsidie_03_gap_per_host_however_long_the_queue(municipalities):
    web, out = municipalities
    for site in web.hosts:
        log = web.log(site)
        assert overlaps(log) == []
        assert min(gaps(log), default=DELAY) >= DELAY, (site, gaps(log))


def test_subsidie_07_crawl_delay_honoured_up_to_the_cap(municipalities):
    web, out = municipalities
    # Crawl-delay 1.2 s (below the derived cap of 1.5 s) is honoured
    assert min(gaps(web.log("waterveen"))) >= 1.2
    # Crawl-delay 100 s is treated as the cap: the host was paced at 1.5 s, not left for 100 s
    log = web.log("traag")
    assert [r.path for r in log] == ["/robots.txt", "/sitemap.xml", "/subsidies/traag"]
    assert all(CAP <= g < CAP + 2.0 for g in gaps(log)), gaps(log)


def test_subsidie_03_shipped_profile_keeps_two_seconds(tmp_path: Path):
    """The real subsidieupdate profile (2 s, SUBSIDIE-03): robots.txt, then the (empty) sitemap."""
    web = Web()
    try:
        web.add("echt", "127.0.0.174", _simple(text("User-agent: *\nAllow: /\n"), []))
        run_bot(load_profile("subsidieupdate"), [Source("echt", web.base("echt") + "/", "subsidy")], tmp_path,
                start=FRIDAY_7, web=web, patience_s=5)
        log = web.log("echt")
        assert [r.path for r in log] == ["/robots.txt", "/sitemap.xml"]
        assert min(gaps(log)) >= 2.0
    finally:
        web.stop()


# --- SUBSIDIE-08 / -10 / -11 ---------------------------------------------------------------------------
def test_subsidie_08_disallow_and_allow_longest_match_wins(municipalities):
    web, out = municipalities
    paths = web.paths("waterveen")
    # Allow: /subsidies/regelingen/ is longer than Disallow: /subsidies/  -> fetched
    assert "/subsidies/regelingen/energiebespaarlening" in paths
    # Disallow: /subsidies/ alone, and Disallow: /regelingen/archief/ longer than Allow: /regelingen/ -> not
    disallowed = {s["url"].removeprefix(web.base("waterveen")): s["detail"] for s in out.skipped("robots_disallowed")
                  if s["source"] == "waterveen"}
    assert "Disallow: /subsidies/" in disallowed["/subsidies/oud/sportsubsidie-2019"]
    assert "Disallow: /regelingen/archief/" in disallowed["/regelingen/archief/monumentensubsidie"]
    assert not {"/subsidies/oud/sportsubsidie-2019", "/regelingen/archief/monumentensubsidie"} & set(paths)


def test_subsidie_10_each_subdomain_has_its_own_robots_txt(municipalities):
    web, out = municipalities
    # lindeveen.test disallows everything; subsidies.lindeveen.test has no robots.txt at all
    assert web.paths("lindeveen") == ["/robots.txt"]
    assert web.paths("subdomein")[0] == "/robots.txt"
    assert len([p for p in web.paths("subdomein") if p.startswith("/subsidies/")]) == PAGES
    assert {r.header("Host").split(":")[0] for r in web.log("subdomein")} == {"subsidies.lindeveen.test"}


def test_subsidie_11_robots_4xx_no_restrictions_5xx_skips_the_host(municipalities):
    web, out = municipalities
    # 404 (subdomain) and 403 (dicht.test): read as no restrictions
    assert web.paths("dicht") == ["/robots.txt", "/sitemap.xml", "/subsidies/open"]
    # 503: the host is skipped for this round, nothing but robots.txt asked for
    assert web.paths("storing") == ["/robots.txt"]
    assert [s for s in out.skipped("robots_unavailable") if s["source"] == "storing"]


# --- SUBSIDIE-09 -------------------------------------------------------------------------------------------
def test_subsidie_09_noindex_in_meta_or_header_page_not_stored(municipalities):
    web, out = municipalities
    base = web.base("signalen")
    noindex = out.skip_urls("noindex")
    assert {base + "/subsidies/meta-noindex", base + "/subsidies/header-noindex"} <= noindex
    changed = {i["url"] for i in _reports(out)}
    assert not {base + "/subsidies/meta-noindex", base + "/subsidies/header-noindex"} & changed
    assert "Geheime regeling" not in _kept(out) and "Verborgen regeling" not in _kept(out)
    # and none of their links were followed
    assert set(web.paths("signalen")) == {"/robots.txt", "/sitemap.xml", "/subsidies/meta-noindex",
                                          "/subsidies/header-noindex", "/subsidies/nofollow"}


def test_subsidie_09_nofollow_page_not_stored_either(municipalities):
    web, out = municipalities
    assert web.base("signalen") + "/subsidies/nofollow" not in {i["url"] for i in _reports(out)}
    assert "Volg niets" not in _kept(out)


# --- SUBSIDIE-13 (stop) ------------------------------------------------------------------------------------
def test_subsidie_13_stop_request_honoured_with_robots_unchanged(municipalities):
    web, out = municipalities
    # GIVEN the municipality asked to stop, for its whole domain; its robots.txt allows everything
    assert web.log("geblokkeerd") == []
    blocked = [s for s in out.skipped("blocked_by_operator") if s["source"] == "geblokkeerd"]
    assert blocked and "verzoek van de gemeente" in blocked[0]["detail"]


# --- a working day and a weekend day ---------------------------------------------------------------------
FIRST, CHANGED = "Bedrag: EUR 500 per aanvraag.", "Bedrag: EUR 750 per aanvraag."


def _changing(hit: Hit) -> str:
    """A municipal page whose amount changes at the third visit; its 'last visited' widget changes every time."""
    amount = FIRST if hit.n < 3 else CHANGED
    visited = time.strftime("%d-%m-%Y om %H:%M:%S", time.gmtime(hit.now))
    return html_page("Wijkdorpfonds", "<h1>Wijkdorpfonds</h1>"
                     f"<p>Het Wijkdorpfonds steunt buurtinitiatieven. {amount}</p>"
                     f"<p class='laatst-bezocht'>Laatst bezocht op {visited}</p>", lang="nl", main=True)


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Web, RunOutput, dict[str, Any]]]:
    """Friday's five rounds and Saturday's one, on the shipped schedule; before Saturday's round the
    municipality of wijkdorp.test asks us to stop and to delete what we have."""
    web = Web()
    evidence: dict[str, Any] = {}
    try:
        web.add("wijkdorp", "127.0.0.171", lambda b: {
            "/robots.txt": text("User-agent: *\nAllow: /\n"),
            "/sitemap.xml": _sitemap_route(b, ["/subsidies/wijkdorpfonds"]),
            "/subsidies/wijkdorpfonds": Route(body=_changing)}, hostname="www.wijkdorp.test")
        web.add("hoogdijk", "127.0.0.172", _simple(Route(body="<h1>503</h1>", status=503), ["/subsidies/dijk"]),
                hostname="hoogdijk.test")
        # A static sitemap (ETag, Last-Modified: 304 when asked again) listing a page that changes.
        web.add("vast", "127.0.0.176", lambda b: {
            "/robots.txt": text("User-agent: *\nAllow: /\n"),
            "/sitemap.xml": Route(body=sitemap_xml(["/subsidies/vast-fonds"], base=b), content_type="application/xml",
                                  conditional=True),
            "/subsidies/vast-fonds": Route(body=lambda hit: _subsidy_page(f"Vast fonds, ronde {min(hit.n, 2)}"))},
            hostname="vast.test")
        web.add("wissel", "127.0.0.177", lambda b: {"/robots.txt": text("User-agent: *\nAllow: /\n"),
                                                    "/sitemap.xml": _sitemap_route(b, [])}, hostname="wissel.test")
        web.add("telling", "127.0.0.173", lambda b: {"/robots.txt": text("User-agent: *\nAllow: /\n"),
                                                     "/sitemap.xml": _sitemap_route(b, [])}, hostname="telling.test")

        def operator(run: ObservedRun, t: float, tasks: list[str]) -> None:
            if t == FRIDAY_9:
                web.set_route("hoogdijk", "/robots.txt", text("User-agent: *\nAllow: /\n"))  # the outage is over
                web.set_route("wissel", "/robots.txt", text("User-agent: SubsidieUpdate\nDisallow: /\n"))
            if t == SATURDAY_10:
                evidence["kept_before"] = dict(run.texts)
                store = run.store()
                store.block_domain("wijkdorp.test", "gemeente Wijkdorp: stoppen en alles verwijderen")
                import boto3

                s3 = boto3.session.Session(region_name=REGION).client("s3")
                evidence["report"] = purge_domain(run.operator(), "wijkdorp.test", s3=s3, bucket=run.res.bucket)
                evidence["still_blocked"] = store.blocked(web.base("wijkdorp"))
                items = store.db.scan(TableName=store.table)["Items"]
                evidence["table_left"] = [i for i in items if "wijkdorp" in json.dumps(i, default=_unzip)
                                          and i["pk"]["S"] != "BLOCKS"]

        sources = [Source(name, web.base(name) + "/", "subsidy") for name in web.hosts]
        # No gap (pacing is proven on the round above): six rounds stay fast.
        profile = load_profile_data({"extends": "subsidieupdate", "politeness": {"min_delay_s": 0}})
        out = run_bot(profile, sources, tmp_path_factory.mktemp("subsidie-week"), start=FRIDAY_7, until=SATURDAY_10,
                      web=web, on_round=operator)
        yield web, out, evidence
    finally:
        web.stop()


def _times(out: RunOutput, url: str) -> list[float]:
    return [at(r["t_start"]) for r in out.requests if r["url"] == url]


def test_subsidie_02_five_rounds_on_a_working_day_one_on_a_weekend_day(week):
    web, out, _ = week
    reads = _times(out, web.base("telling") + "/sitemap.xml")
    assert len([t for t in reads if t < SATURDAY]) == 5
    assert len([t for t in reads if t >= SATURDAY]) == 1


def test_subsidie_04_unchanged_page_costs_one_get_and_stops_there(week):
    web, out, _ = week
    url = web.base("wijkdorp") + "/subsidies/wijkdorpfonds"
    # One GET of the page per Friday round, nothing more (no second request, no other page)
    assert web.paths("wijkdorp").count("/subsidies/wijkdorpfonds") == 5
    assert set(web.paths("wijkdorp")) == {"/robots.txt", "/sitemap.xml", "/subsidies/wijkdorpfonds"}
    # The visit widget changes every time; only the real change (third visit) is reported
    changes = [i for i in _reports(out) if i["url"] == url]
    assert len(changes) == 2
    assert len([s for s in out.skipped("unchanged") if s["url"] == url]) == 3


def test_subsidie_04_pages_compared_every_round_though_the_sitemap_is_unchanged(week):
    web, out, _ = week
    log = web.log("vast")
    assert [r.status for r in log if r.path == "/sitemap.xml"][1:] == [304] * 5  # the site saves on the sitemap
    friday = [t for t in _times(out, web.base("vast") + "/subsidies/vast-fonds") if t < SATURDAY]
    assert len(friday) == 5
    assert len([i for i in _reports(out) if i["source"] == "vast"]) == 2


def test_subsidie_06_robots_txt_reused_for_24_hours(week):
    web, out, _ = week
    robots = _times(out, web.base("telling") + "/robots.txt")
    # Fetched on Friday morning, reused by the four rounds after it, fetched again on Saturday (27 h later)
    assert len(robots) == 2 and robots[1] - robots[0] >= DAY
    assert web.paths("wijkdorp").count("/robots.txt") == 1


def test_subsidie_06_a_robots_txt_change_is_active_within_a_day(week):
    web, out, _ = week
    base = web.base("wissel")
    # GIVEN wissel.test closed itself to SubsidieUpdate just before Friday's 09:00 round
    changed = FRIDAY_9
    # THEN the copy read at 07:00 could serve Friday's later rounds, but no request made a day
    # after the change ignored it: Saturday's round read robots.txt again and stopped there
    reads = _times(out, base + "/sitemap.xml")
    assert reads and all(t < changed + DAY for t in reads)
    assert [t for t in _times(out, base + "/robots.txt") if t >= SATURDAY]
    saturday = [s for s in out.skipped("robots_disallowed") if s["source"] == "wissel"]
    assert saturday and all(s["round"].startswith("2026-11-07") for s in saturday)


def test_subsidie_11_5xx_host_skipped_for_that_round_only(week):
    web, out, _ = week
    # robots.txt answered 503 at 07:00 and was fixed before 09:00
    log = web.log("hoogdijk")
    assert [(r.path, r.status) for r in log[:4]] == [("/robots.txt", 503), ("/robots.txt", 200),
                                                     ("/sitemap.xml", 200), ("/subsidies/dijk", 200)]
    first = [s for s in out.skipped("robots_unavailable") if s["source"] == "hoogdijk"]
    assert first and all(s["round"].startswith("2026-11-06T07:00") for s in first)


def test_subsidie_12_keeps_the_text_and_tells_customers_in_a_short_summary_with_a_link(week):
    web, out, evidence = week
    url = web.base("wijkdorp") + "/subsidies/wijkdorpfonds"
    changes = [i for i in _reports(out) if i["url"] == url]
    # The first sight of a page is news, a later change is a change (the seed warns of both)
    assert [i["detail_type"] for i in changes] == ["page.new", "page.changed"]
    assert changes[0]["summary"] == "new page"
    assert "750" in changes[1]["summary"] and len(changes[1]["summary"]) <= 300
    assert changes[1]["previous_hash"] == changes[0]["hash"]
    # The text is kept (two versions, before the owner asked for deletion on Saturday)
    versions = [v for vs in evidence["kept_before"].values() for v in vs if "Wijkdorpfonds" in v]
    assert len(versions) == 2 and "500" in versions[0] and "750" in versions[1]


def test_subsidie_13_deletes_everything_stored_from_a_domain_and_stops(week):
    web, out, evidence = week
    # WHEN the operator purged wijkdorp.test before Saturday's round
    report = evidence["report"]
    kept = [v for vs in evidence["kept_before"].values() for v in vs if "Wijkdorpfonds" in v]
    # (objects: both page versions, plus the kept copies of its sitemap, every version)
    assert kept and report.objects >= len(kept) and report.sources == 1 and report.state_items >= 2
    # THEN no state item but the block itself names it, no kept text of it is left
    assert evidence["table_left"] == []
    assert "Wijkdorpfonds" not in _kept(out)
    # AND the stop holds: the block outlives the purge, and the site saw nothing on Saturday
    assert evidence["still_blocked"] and "stoppen" in evidence["still_blocked"]
    assert web.log("wijkdorp") and all(t < SATURDAY for t in _times(out, web.base("wijkdorp") + "/sitemap.xml"))

"""WANNADO-01..11 proven from the venues' side: WannadoBot's sitemap-led agenda rounds, robots, pacing, rendering."""
from __future__ import annotations

import html
import ipaddress
import json
import re
import urllib.request
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from heed_core.extract.events import Event
from heed_core.profile import load_profile, load_profile_data
from heed_core.work import Source

from heed.demo.web import Hit, Route

from tests.support.pages import html_page, sitemap_xml, text
from tests.support.runs import RunOutput, run_bot, utc
from tests.support.web import Web, gaps, overlaps

UA = "WannadoBot/1.0 (+https://wannado.nl/crawler)"
DAY_5 = utc(2026, 11, 3, 5)   # the shipped daily round: cron(0 5 * * ? *)
DAY_17 = utc(2026, 11, 3, 17)  # a second round the same day (derived schedule)
# The derived profile's pacing; the shipped 1.5 s and 6-7 minutes are checked by
# test_wannado_05_shipped_profile_... below and tests/unit/test_profiles.py::test_wannado_05_gap_and_round_spacing.
MIN_DELAY = 0.1
SPACING, JITTER = 1.1, 0.3  # above one second, so a spaced gap is told apart from a plain one
MUSEUM_DELAY = 1.5


def _jsonld(base: str, events: list[dict[str, Any]]) -> str:
    graph = [{"@context": "https://schema.org", "@type": "TheaterEvent", **e} for e in events]
    return f'<script type="application/ld+json">{json.dumps(graph)}</script>'


def _event(base: str, slug: str, name: str, url: str | None = None) -> dict[str, Any]:
    return {"name": name, "startDate": "2026-11-20T20:15:00+01:00", "url": url or f"/agenda/{slug}/",
            "description": f"{name}: een avond vol verhalen en muziek.", "image": f"{base}/img/{slug}.jpg",
            "location": {"@type": "Place", "name": "Schouwburg Het Veerhuis, Grote zaal"},
            "offers": {"@type": "Offer", "price": "24.50", "priceCurrency": "EUR"}}


def _theater(base: str) -> dict[str, Route]:
    agenda = html_page(
        "Agenda – Het Veerhuis",
        "<h1>Agenda</h1><a href='/nieuws/opening'>Nieuws</a><img src='/pixel.gif?t=1' width=1 height=1>"
        "<iframe src='/consent/dialog.html'></iframe>",
        head=_jsonld(base, [_event(base, "de-storm", "De Storm"),
                            # tickets sold elsewhere: the event's own URL leaves the site
                            _event(base, "gala", "Nieuwjaarsgala", url="https://tickets.example.com/gala")])
             + '<script src="/consent.js"></script>', lang="nl", main=True)
    jazz = html_page("Jazzavond", '<div itemscope itemtype="https://schema.org/MusicEvent">'
                     '<h1 itemprop="name">Jazzavond met het Lindeveen Trio</h1>'
                     '<time itemprop="startDate" datetime="2026-11-27T21:00:00+01:00">27 november</time>'
                     '<span itemprop="location" itemscope itemtype="https://schema.org/Place">'
                     '<span itemprop="name">Kleine zaal</span></span>'
                     '<span itemprop="offers" itemscope itemtype="https://schema.org/Offer">'
                     '<meta itemprop="price" content="15.00"><meta itemprop="priceCurrency" content="EUR">EUR 15</span>'
                     '<p itemprop="description">Swing en bebop in de kleine zaal.</p>'
                     '<img itemprop="image" src="/img/jazz.jpg">'
                     '<a itemprop="url" href="/programma/jazz-avond">Meer</a></div>', lang="nl", main=True)
    cookie = (("Set-Cookie", "bezoeker=42; Path=/"),)
    return {
        # The "*" group would forbid the agenda: only the WannadoBot group lets it through.
        "/robots.txt": text("User-agent: *\nDisallow: /agenda/\n\nUser-agent: WannadoBot\nDisallow: /intern/\n"),
        "/sitemap.xml": Route(body=sitemap_xml(["/", "/agenda/", "/programma/jazz-avond", "/over-ons",
                                                "/nieuws/opening", "/contact", "/intern/agenda-rooster"], base=base),
                              content_type="application/xml"),
        "/agenda/": Route(body=agenda, conditional=True, headers=cookie),
        "/programma/jazz-avond": Route(body=jazz, conditional=True, headers=cookie),
    }


def _museum(base: str) -> dict[str, Route]:
    page = html_page("Tentoonstelling", _jsonld(base, [{**_event(base, "licht", "Licht en schaduw"),
                                                       "@type": "ExhibitionEvent"}]), lang="nl", main=True)
    return {
        "/robots.txt": text(f"User-agent: *\nCrawl-delay: 0.1\nDisallow: /\n\n"
                            f"User-agent: wannadobot\nCrawl-delay: {MUSEUM_DELAY}\nAllow: /\n"),
        "/sitemap.xml": Route(body=sitemap_xml(["/tentoonstelling/licht"], base=base), content_type="application/xml"),
        "/tentoonstelling/licht": Route(body=page),
    }


def _zaal(base: str) -> dict[str, Route]:
    return {
        "/robots.txt": text("User-agent: *\nAllow: /\n"),
        "/sitemap.xml": Route(body=sitemap_xml(["/tickets/mijn-account", "/voorstelling/verhalen"], base=base),
                              content_type="application/xml"),
        "/tickets/mijn-account": Route(body=html_page("Inloggen", "<form method=post action=/login>", lang="nl",
                                                      main=True), status=401,
                                       headers=(("WWW-Authenticate", 'Basic realm="klanten"'),)),
        # No structured data: the language model reads this one.
        "/voorstelling/verhalen": Route(body=html_page("Verhalenavond", "<h1>Verhalenavond</h1><p>Vrijdag 20 november, "
                                                       "20:00, Kleine zaal. Entree 8 euro.</p>", lang="nl", main=True)),
    }


def _jsvenue(base: str) -> dict[str, Route]:
    data = [_event(base, "poppen", "Poppenkast voor groot en klein")]
    shell = html_page("Agenda", '<div id="app">Laden…</div><script src="/app.js"></script>'
                      f'<script type="application/json" id="data">{json.dumps(data)}</script>', lang="nl", main=True)
    return {
        "/robots.txt": text("User-agent: *\nAllow: /\n"),
        "/sitemap.xml": Route(body=sitemap_xml(["/agenda"], base=base), content_type="application/xml"),
        "/agenda": Route(body=shell),
        "/app.js": Route(body="render()", content_type="text/javascript"),
    }


def _render_service(hit: Hit) -> str:
    """A stand-in for the external render service: it loads the page itself, with the user agent
    it was given, and returns the DOM the page's script would build."""
    query = parse_qs(urlsplit(hit.path).query)
    url, agent = query["url"][0], query["userAgent"][0]
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(urllib.request.Request(url, headers={"User-Agent": agent}), timeout=5) as resp:
        page = resp.read().decode("utf-8")
    data = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    events = json.loads(html.unescape(data.group(1))) if data else []
    base = f"{urlsplit(url).scheme}://{urlsplit(url).netloc}"
    return html_page("Agenda", _jsonld(base, events), lang="nl", main=True)


class _FakeModel:
    """Stands in for the Bedrock extractor (WANNADO-10: a model only where structured data is missing)."""

    calls: list[tuple[str, str]] = []

    def __init__(self, model_id: str, client: Any = None) -> None:
        self.model_id = model_id

    def extract(self, page_text: str, *, url: str) -> tuple[Event, ...]:
        _FakeModel.calls.append((url, page_text))
        return (Event(name="Verhalenavond", start="2026-11-20T20:00:00+01:00", end=None, location="Kleine zaal",
                      price="EUR 8.00", description="Verhalen bij kaarslicht.", image=None, url=url,
                      source_format="llm"),)


@pytest.fixture(scope="module")
def agenda(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Web, RunOutput]]:
    """Two agenda rounds on one day (05:00 and 17:00) over five venues and a render service."""
    web = Web()
    _FakeModel.calls = []
    try:
        web.add("theater", "127.0.0.151", _theater)
        web.add("museum", "127.0.0.152", _museum)
        web.add("storing", "127.0.0.153", lambda b: {"/robots.txt": Route(body="<h1>503</h1>", status=503),
                                                     "/sitemap.xml": Route(body=sitemap_xml(["/agenda/"], base=b))})
        web.add("zaal", "127.0.0.154", _zaal)
        web.add("jsvenue", "127.0.0.155", _jsvenue)
        render = web.add("render", "127.0.0.156", lambda b: {"/render": Route(body=_render_service)})
        sources = [Source(n, web.base(n) + "/", "agenda") for n in ("theater", "museum", "storing", "zaal")]
        sources.append(Source("jsvenue", web.base("jsvenue") + "/", "agenda", options={"render": True}))
        profile = load_profile_data({
            "extends": "wannadobot",
            "politeness": {"min_delay_s": MIN_DELAY, "round_spacing_s": SPACING, "round_spacing_jitter_s": JITTER},
            "schedules": [{"expression": "cron(0 5,17 * * ? *)", "task": "agenda"}],
            "tasks": {"agenda": {"render_endpoint": render + "/render", "extractor": "bedrock",
                                 "bedrock_model_id": "eu.example.test-model"}}})
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr("heed_aws.bedrock.BedrockExtractor", _FakeModel)
            out = run_bot(profile, sources, tmp_path_factory.mktemp("wannado"), start=DAY_5, until=DAY_17, web=web)
        yield web, out
    finally:
        web.stop()


VENUES = ("theater", "museum", "storing", "zaal", "jsvenue")


def _events(out: RunOutput) -> list[dict[str, Any]]:
    return out.found("event.found")


# --- WANNADO-01 / -10 -----------------------------------------------------------------------------
def test_wannado_01_every_event_links_back_to_the_venue_page(agenda):
    web, out = agenda
    events = _events(out)
    assert {e["source"] for e in events} == {"theater", "museum", "zaal", "jsvenue"}
    for e in events:
        base = web.base(e["source"])
        assert e["page"].startswith(base + "/"), e
    # AND an event's own relative link is made absolute on the venue's site
    storm = next(e for e in events if e["name"] == "De Storm")
    assert storm["url"] == web.base("theater") + "/agenda/de-storm/"
    # AND an event sold by a ticket shop still carries the venue page it was found on
    gala = next(e for e in events if e["name"] == "Nieuwjaarsgala")
    assert gala["url"] == "https://tickets.example.com/gala" and gala["page"] == web.base("theater") + "/agenda/"


def test_wannado_10_name_date_location_price_description_image_link_structured_first(agenda):
    web, out = agenda
    by_name = {e["name"]: e for e in _events(out)}
    # GIVEN JSON-LD on one page, microdata on another THEN all seven facts come out of each
    for name, fmt in (("De Storm", "json-ld"), ("Jazzavond met het Lindeveen Trio", "microdata")):
        e = by_name[name]
        assert e["format"] == fmt
        assert all(e[k] for k in ("name", "start", "location", "price", "description", "image", "url")), e
        assert e["image"].startswith(web.base("theater") + "/img/")
    assert "24.5" in by_name["De Storm"]["price"] and "15" in by_name["Jazzavond met het Lindeveen Trio"]["price"]
    # AND the language model only saw the page without structured data, and only its text
    assert [u for u, _ in _FakeModel.calls] == [web.base("zaal") + "/voorstelling/verhalen"] * 2
    assert all("Verhalenavond" in t and "<" not in t for _, t in _FakeModel.calls)
    assert by_name["Verhalenavond"]["format"] == "llm"


# --- WANNADO-02 / -03 / -08 -----------------------------------------------------------------------
def test_wannado_02_one_fixed_user_agent_even_through_the_render_service(agenda):
    """The fixed egress IPs and their forward-confirmed reverse DNS are deployment facts: proven
    locally as far as they go (the profile's list, the stack's EgressIp output and the reverse DNS
    parameter deployed for this bot). Publishing /crawler/ips.json is outside the crawler."""
    from heed.local.resources import load_template
    from heed.samconfig import deploy_env

    web, out = agenda
    assert {r.header("User-Agent") for r in web.log()} == {UA}
    profile = load_profile("wannadobot")
    nets = [ipaddress.ip_network(n) for n in profile.get("egress.ips")]
    assert {n.version for n in nets} == {4, 6} and all(n.num_addresses == 1 for n in nets)
    assert deploy_env(profile).reverse_dns_name == profile.get("egress.reverse_dns") == "crawler.wannado.nl"
    template = load_template(Path(__file__).resolve().parents[2] / "template.yaml")
    assert template["Resources"]["EgressIp"]["Type"] == "AWS::EC2::EIP" and "EgressIp" in template["Outputs"]


def test_wannado_03_get_only_and_only_pages_open_to_everyone(agenda):
    web, out = agenda
    log = web.log()
    assert {r.method for r in log} == {"GET"}
    assert not [r for r in log if r.header("Authorization") or r.header("Cookie")]
    # GIVEN an account page answering 401 THEN it was asked once a round, without credentials,
    # no login form was posted, and nothing was taken from it
    assert web.paths("zaal").count("/tickets/mijn-account") == 2 and "/login" not in web.paths("zaal")
    assert not [e for e in _events(out) if "mijn-account" in e["page"]]


def test_wannado_08_no_cookies_no_tracking_no_consent_dialog(agenda):
    web, out = agenda
    # GIVEN pages that set cookies and carry a consent script, a consent iframe and a tracking pixel
    paths = web.paths("theater") + web.paths("jsvenue")
    assert not [p for p in paths if p.startswith(("/consent", "/pixel", "/app.js"))]
    assert not [r for r in web.log() if r.header("Cookie") or r.header("Referer") or r.header("DNT")]


# --- WANNADO-04 / -05 -----------------------------------------------------------------------------
def test_wannado_04_wannadobot_group_wins_and_5xx_robots_fetches_nothing(agenda):
    web, out = agenda
    # The "*" group disallows /agenda/ (theater) and everything (museum): the WannadoBot groups allow.
    assert "/agenda/" in web.paths("theater") and "/tentoonstelling/licht" in web.paths("museum")
    assert "/intern/agenda-rooster" not in web.paths("theater")
    assert any("/intern/agenda-rooster" in s["url"] for s in out.skipped("robots_disallowed"))
    # A robots.txt answering 503: nothing but robots.txt was asked for
    assert set(web.paths("storing")) == {"/robots.txt"}
    assert [s for s in out.skipped("robots_unavailable") if s["source"] == "storing"]


def test_wannado_05_crawl_delay_of_the_wannadobot_group_lengthens_the_gap(agenda):
    web, out = agenda
    log = web.log("museum")
    assert len(log) >= 4 and overlaps(log) == []
    # Crawl-delay 1.5 s (its group), not 0.1 s ("*"), and not the bot's own minimum
    assert min(out.gaps(log)) >= MUSEUM_DELAY, out.gaps(log)


def test_wannado_05_pages_of_a_round_are_spaced_and_every_gap_kept(agenda):
    web, out = agenda
    for site in ("theater", "zaal", "jsvenue"):
        log = web.log(site)
        assert overlaps(log) == [] and min(out.gaps(log)) >= MIN_DELAY
    # Two agenda pages of one site in one round are the round spacing apart, not the plain gap
    for site, first, second in (("theater", "/agenda/", "/programma/jazz-avond"),
                                ("zaal", "/tickets/mijn-account", "/voorstelling/verhalen")):
        log = web.log(site)
        for a, b in pairwise(log):
            if a.path == first and b.path == second:
                assert b.t_start - a.t_end >= SPACING, (site, b.t_start - a.t_end)
        assert [(a.path, b.path) for a, b in pairwise(log)].count((first, second)) == 2


def test_wannado_05_shipped_profile_gap_and_six_minutes_between_pages(tmp_path: Path):
    """The real wannadobot profile: 1.5 s between requests, and the second agenda page of the
    round not before six minutes (the run's patience is five seconds, so it is left waiting)."""
    web = Web()
    try:
        web.add("echt", "127.0.0.157", lambda b: {
            "/robots.txt": text("User-agent: *\nAllow: /\n"),
            "/sitemap.xml": Route(body=sitemap_xml(["/agenda/1", "/agenda/2"], base=b), content_type="application/xml"),
            "/agenda/1": Route(body=html_page("1", lang="nl", main=True)),
            "/agenda/2": Route(body=html_page("2", lang="nl", main=True))})
        out = run_bot(load_profile("wannadobot"), [Source("echt", web.base("echt") + "/", "agenda")], tmp_path,
                      start=DAY_5, web=web, patience_s=5)
        log = web.log("echt")
        assert [r.path for r in log] == ["/robots.txt", "/sitemap.xml", "/agenda/1"]
        assert min(gaps(log)) >= 1.5
        assert out.summary["deferred_at_end"] == 1
    finally:
        web.stop()


# --- WANNADO-06 -------------------------------------------------------------------------------------
def test_wannado_06_starts_at_the_sitemap_and_follows_only_programme_pages(agenda):
    web, out = agenda
    for site in ("theater", "museum", "zaal", "jsvenue"):
        assert web.paths(site)[:2] == ["/robots.txt", "/sitemap.xml"]
    # Pages about the venue, news and contact are in the sitemap but not about programme or tickets;
    # the agenda page's own links are not walked either
    assert set(web.paths("theater")) == {"/robots.txt", "/sitemap.xml", "/agenda/", "/programma/jazz-avond"}
    not_followed = {s["url"].removeprefix(web.base("theater")) for s in out.skipped("not_followed")
                    if s["source"] == "theater"}
    assert {"/over-ons", "/nieuws/opening", "/contact", "/"} <= not_followed


# --- WANNADO-07 -------------------------------------------------------------------------------------
def test_wannado_07_unchanged_page_costs_a_304(agenda):
    web, out = agenda
    for path in ("/agenda/", "/programma/jazz-avond"):
        visits = [r for r in web.log("theater") if r.path == path]
        assert [r.status for r in visits] == [200, 304]
        assert visits[0].header("If-None-Match") is None
        assert visits[1].header("If-None-Match") and visits[1].header("If-Modified-Since")
        assert visits[1].bytes == 0
    assert {s["url"] for s in out.skipped("not_modified")} >= {web.base("theater") + "/agenda/"}


# --- WANNADO-09 -------------------------------------------------------------------------------------
def test_wannado_09_javascript_agenda_rendered_by_a_service_with_the_same_user_agent(agenda):
    web, out = agenda
    # GIVEN a venue whose agenda is built by a script, and a render service
    # THEN the service was asked with the bot's user agent, and the venue saw that same agent
    asks = [parse_qs(urlsplit(r.path).query) for r in web.log("render")]
    assert asks and all(q["userAgent"] == [UA] and q["url"] == [web.base("jsvenue") + "/agenda"] for q in asks)
    pages = [r for r in web.log("jsvenue") if r.path == "/agenda"]
    assert len(pages) == len(asks) == 2 and {r.header("User-Agent") for r in pages} == {UA}
    # AND the rendered events were extracted
    assert [e["name"] for e in _events(out) if e["source"] == "jsvenue"] == ["Poppenkast voor groot en klein"]


# --- WANNADO-11 -------------------------------------------------------------------------------------
def test_wannado_11_robots_txt_at_most_once_a_day_per_site(agenda):
    web, out = agenda
    # GIVEN two rounds on one day THEN every readable robots.txt was fetched once, though the
    # sitemap behind it was read in both rounds
    for site in ("theater", "museum", "zaal", "jsvenue"):
        assert web.paths(site).count("/robots.txt") == 1
        assert web.paths(site).count("/sitemap.xml") == 2

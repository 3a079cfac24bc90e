"""The rules all five bots share (COMMON-01..09), proven from the sites' side for every built-in bot."""
from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from heed_core.profile import BUILTIN_BOTS, load_profile
from heed_core.work import Source

from heed.demo.web import Route
from heed.local.resources import load_template
from heed.operator.actions import purge_domain

from tests.support.pages import (
    PAGE_TRAPS,
    TRAP_PREFIXES,
    FeedEntry,
    cookie_routes,
    feed_route,
    html_page,
    listing,
    robots,
    urlset,
)
from tests.support.runs import Scenario, SteppedRun, derived
from tests.support.scenarios import RFC_ALLOWED, RFC_DISALLOWED, START
from tests.support.web import BLOCK_IP, Web, gaps, overlaps, path_of

ROOT = Path(__file__).resolve().parents[2]

# The identities the bots' public pages show (seeds/*.txt); SpringStudioBot's page gives its name
# and version "with a link to this page", which is its info URL.
PUBLISHED_UA = {
    "springstudiobot": "SpringStudioBot/1.0 (+https://springstudio.no/springstudiobot)",
    "praha-x": "Praha-X/0.1 (+https://praha-x.cz/bot)",
    "wannadobot": "WannadoBot/1.0 (+https://wannado.nl/crawler)",
    "subsidieupdate": "SubsidieUpdate/1.0 (+https://www.subsidieupdate.nl/bot)",
    "aubebot": "AubeBot/0.1 (+https://aube.news/robot; collecte RSS polie)",
}
BROWSER_WORDS = ("Mozilla", "Chrome", "Safari", "Gecko", "Firefox", "Edg/")


# Each site closes everything to `*` and opens all but /privat/ to the bot's own group, named in
# lower case (COMMON-02, COMMON-03: the token is matched case-insensitively).
def _robots_for(token: str) -> str:
    return f"User-agent: *\nDisallow: /\n\nUser-agent: {token.lower()}\nAllow: /\nDisallow: /privat/\n"


AUTHOR = "Kari Nordmann"
_EVENT = ('<script type="application/ld+json">{"@context": "https://schema.org", "@type": "TheaterEvent",'
          ' "name": "Voorstelling", "startDate": "2026-12-04T20:15:00+01:00", "url": "/programma/1",'
          ' "location": {"@type": "Place", "name": "Zaal"}}</script>')
_PAID = ('<script type="application/ld+json">{"@context": "https://schema.org", "@type": "NewsArticle",'
         ' "headline": "Betaald", "isAccessibleForFree": false}</script>')


def _page(title: str, head: str = "", body: str = "<p>Openbare tekst.</p>") -> Route:
    main = f"<main><article><h1>{title}</h1>{body}</article></main>{PAGE_TRAPS}"
    return Route(body=html_page(title, main, head=head))


def _login() -> Route:
    return Route(body=html_page("Inloggen", "<form method='post' action='/login'></form>"), status=401,
                 headers=(("WWW-Authenticate", 'Basic realm="leden"'),))


def _feed_items() -> list[FeedEntry]:
    who = f"<author>kari.nordmann@example.org ({AUTHOR})</author><dc:creator>{AUTHOR}</dc:creator>"
    return [FeedEntry("Openbaar", "{{base}}/ok/1", summary="Kort.", extra=who),
            FeedEntry("Privat", "{{base}}/privat/1", summary="Kort."),
            FeedEntry("Konto", "{{base}}/konto/1", summary="Kort."),
            FeedEntry("Betaald", "{{base}}/betalt/1", summary="Kort.")]


# What each bot is given: (routes, sources as (id, path, kind, options)). Every bot meets a public
# URL, one under /privat/, one behind a login (401), and the feed readers a paywalled article.
def _world(bot: str) -> tuple[dict[str, Route], list[tuple[str, str, str, dict[str, Any]]], list[str]]:
    if bot in ("aubebot", "praha-x"):
        routes = {"/feed.xml": feed_route(_feed_items()), "/ok/1": _page("Openbaar", body=f"<p>Door {AUTHOR}.</p>"),
                  "/privat/1": _page("Privat"), "/konto/1": _login(),
                  "/betalt/1": _page("Betaald", head=_PAID, body="<p>BETAALDE-TEKST voor abonnees.</p>")}
        return (routes, [("feed", "/feed.xml", "feed", {"write_about": True} if bot == "praha-x" else {})],
                ["/feed.xml", "/ok/1"])
    if bot == "springstudiobot":
        routes = {"/liste/": Route(body=listing([("Sak", "/sak/1")], byline=AUTHOR)),
                  "/privat/liste/": _page("Privat"), "/konto/": _login()}
        return (routes, [("liste", "/liste/", "page", {}), ("privat", "/privat/liste/", "page", {}),
                         ("konto", "/konto/", "page", {})], ["/liste/"])
    topic = {"wannadobot": "programma", "subsidieupdate": "subsidie"}[bot]
    routes = {"/sitemap.xml": urlset([f"/{topic}/1", f"/privat/{topic}/2", f"/{topic}/leden"]),
              f"/{topic}/1": _page("Openbaar", head=_EVENT), f"/privat/{topic}/2": _page("Privat"),
              f"/{topic}/leden": _login(), "/": _page("Home")}
    kind = "agenda" if bot == "wannadobot" else "subsidy"
    return routes, [("site", "/", kind, {})], ["/sitemap.xml", f"/{topic}/1"]


@pytest.fixture(scope="module", params=BUILTIN_BOTS)
def every_bot(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Each built-in bot, one round, delays set to zero (shapes only; every page sets cookies)."""
    bot = request.param
    profile = load_profile(bot)
    w = Web()
    routes, sources, public = _world(bot)
    site = w.site(bot, cookie_routes({"/robots.txt": robots(_robots_for(profile.robots_token)), **routes}))
    fast = derived(bot, politeness={"min_delay_s": 0, "round_spacing_s": 0, "round_spacing_jitter_s": 0})
    try:
        with SteppedRun(fast, [Source(sid, site.base_url + path, kind, opts) for sid, path, kind, opts in sources],
                        tmp_path_factory.mktemp(f"common_{bot}"), start=START - 60) as run:
            run.round(START, [fast.schedules[0].task])
            out = run.finish(capture=True)
        yield {"bot": bot, "profile": profile, "site": site, "log": site.log(), "out": out, "public": public}
    finally:
        w.stop()


def test_common_01_every_request_carries_the_exact_published_user_agent(every_bot: dict[str, Any]):
    log, bot = every_bot["log"], every_bot["bot"]
    ua = PUBLISHED_UA[bot]
    # THEN every request the site saw carried the published User-Agent, byte for byte
    assert len(log) >= 3 and {r.header("User-Agent") for r in log} == {ua}
    # AND it is product token/version, then (+info URL): never a browser string
    token = every_bot["profile"].robots_token
    assert re.fullmatch(rf"{re.escape(token)}/\d+(\.\d+)* \(\+https://\S+(; [^)]*)?\)", ua)
    assert not any(word in ua for word in BROWSER_WORDS)


def test_common_02_robots_first_and_nothing_disallowed_fetched(every_bot: dict[str, Any]):
    log, out = every_bot["log"], every_bot["out"]
    # THEN robots.txt was the first request on the host, and read once
    assert log[0].path == "/robots.txt" and [r.path for r in log].count("/robots.txt") == 1
    # AND nothing under /privat/ was requested, each such URL was recorded as refused
    assert not [r for r in log if r.path.startswith("/privat/")]
    refused = [s for s in out.skipped("robots_disallowed") if "/privat/" in s["url"]]
    assert len(refused) == 1, out.skips


def test_common_03_the_bots_own_group_wins_matched_case_insensitively(every_bot: dict[str, Any]):
    # GIVEN `*` disallows everything and the bot's group is named in lower case
    log = every_bot["log"]
    # THEN the bot worked under its own group: it fetched the public pages it was given
    fetched = [r.path for r in log]
    assert all(p in fetched for p in every_bot["public"]), fetched
    assert not every_bot["out"].skipped("robots_disallowed")[1:], "only the /privat/ URL may be refused"


def test_common_03_longest_match_allow_on_tie_and_wildcards(aube_round: Scenario):
    """The RFC 9309 matching rules, seen through AubeBot (conftest.RFC_ROBOTS)."""
    fetched = {r.path for r in aube_round.sites["rfc"].log()}
    assert set(RFC_ALLOWED) <= fetched  # /news/public/ beats /news/; /tie/ Allow wins the tie; $ anchors
    assert not fetched & set(RFC_DISALLOWED)


def test_common_04_get_only_no_cookies_no_forms_no_javascript(every_bot: dict[str, Any]):
    log = every_bot["log"]
    # GIVEN every response set cookies and every page had a script, a stylesheet and a login form
    # THEN the site saw GETs only, no Cookie or credentials, and no request for what the page would load
    assert {r.method for r in log} == {"GET"}
    assert not [r for r in log if r.header("Cookie") or r.header("Authorization")]
    assert not [r.path for r in log if r.path.startswith(TRAP_PREFIXES)]


def test_common_07_only_public_pages_no_personal_data(every_bot: dict[str, Any]):
    log, out, bot = every_bot["log"], every_bot["out"], every_bot["bot"]
    # GIVEN a URL behind a login (401): asked once, never with credentials, nothing kept of it
    login = [r for r in log if r.status == 401]
    assert len(login) == 1 and login[0].header("Authorization") is None
    # (a feed's own item that links there is public: the feed published it)
    assert not [i for i in out.items if login[0].path in json.dumps(i)
                and (i["detail_type"] != "item.found" or i["source"] == "konto")]
    # AND the feed readers never extract a paywalled article
    if bot in ("aubebot", "praha-x"):
        assert [path_of(s["url"]) for s in out.skipped("paywalled")] == ["/betalt/1"]
        assert "BETAALDE-TEKST" not in out.stored
        assert not [i for i in out.found("article.read") if i["url"].endswith("/betalt/1")]
    # AND what the bot keeps about an item carries no author name or address
    if bot in ("aubebot", "praha-x", "springstudiobot"):
        kept = [i for i in out.items if i["detail_type"] == "item.found"]
        assert kept and AUTHOR not in json.dumps(kept) and "kari.nordmann@" not in json.dumps(kept)
    if bot in ("aubebot", "springstudiobot"):
        assert AUTHOR not in out.stored


# --- COMMON-05: pacing and one request in flight per host ----------------------------------------------

def test_common_05_gap_per_host_raised_by_crawl_delay_up_to_the_cap(spring_pacing: Scenario):
    """conftest.spring_pacing: SpringStudioBot with 0.3 s and a cap of 1.7 s on three hosts."""
    for name, least in (("jevn", 0.3), ("rolig", 1.6), ("treg", 1.7)):
        log = spring_pacing.sites[name].log()
        assert len(log) == 2 and overlaps(log) == [] and min(gaps(log)) >= least, (name, gaps(log))
    assert max(gaps(spring_pacing.sites["treg"].log())) < 5.0  # Crawl-delay: 30 was capped


def test_common_05_concurrent_fetchers_never_put_two_requests_in_flight_to_one_host(web: Web, tmp_path: Path):
    """Three fetcher invocations at once, each holding a token for the same host (as when a token's
    visibility runs out while it is being worked on): the host lease lets one request through at a time."""
    slow_page = Route(body=lambda hit: (time.sleep(0.25), listing([("Sak", "/sak/1")]))[1])
    site = web.site("samtidig", {"/robots.txt": robots("User-agent: *\nAllow: /\n"),
                                 **{f"/l/{i}/": slow_page for i in range(3)}})
    profile = derived("springstudiobot", politeness={"min_delay_s": 0})
    with SteppedRun(profile, [Source(f"l{i}", f"{site.base_url}/l/{i}/", "page") for i in range(3)],
                    tmp_path, start=START - 60) as run:
        run.round(START)  # robots.txt is read and cached
        site.reset_log()
        run.advance_to(START + 3600)
        run.run.fire(START + 3600, ["page"])
        run.invoke_concurrently(3)
    log = site.log()
    # THEN every page was fetched, and never two requests were in flight to the host together
    assert {r.path for r in log} == {"/l/0/", "/l/1/", "/l/2/"}
    assert overlaps(log) == []


# --- COMMON-06: a redirect is a new request ---------------------------------------------------------------

def test_common_06_redirect_target_robots_checked_and_paced(spring_redirects: Scenario):
    """conftest.spring_redirects: a listing moved to another host, a redirect into that host's
    closed area, a chain longer than the bot follows."""
    gammel, ny, out = spring_redirects.sites["gammel"].log(), spring_redirects.sites["ny"].log(), spring_redirects.out
    # THEN the other host's robots.txt was read before the redirect target was fetched there
    assert [r.path for r in ny] == ["/robots.txt", "/ny/"]
    # AND the target its robots.txt closes was never requested, and recorded as refused
    assert not [r for r in ny if r.path.startswith("/stengt/")]
    assert [path_of(s["url"]) for s in out.skipped("robots_disallowed")] == ["/stengt/side/"]
    # AND every hop was paced like any request (0.4 s), and the chain stopped at the hop limit
    kjede = spring_redirects.sites["kjede"].log()
    assert min(gaps(gammel) + gaps(ny) + gaps(kjede)) >= 0.4
    assert "/kjede/2" not in [r.path for r in kjede]
    assert [path_of(s["url"]) for s in out.skipped("too_many_redirects")] == ["/kjede/2"]


# --- COMMON-08: the operator's stop list and deletion ---------------------------------------------------------

def _two_sites(w: Web) -> tuple[Any, Any]:
    page = Route(body=listing([("Sak", "/sak/1")]))
    blocked = w.site("blokkert", {"/robots.txt": robots("User-agent: *\nAllow: /\n"), "/liste/": page}, ip=BLOCK_IP)
    other = w.site("annen", {"/robots.txt": robots("User-agent: *\nAllow: /\n"), "/liste/": page})
    return blocked, other


def test_common_08_stop_request_honoured_without_robots_change(web: Web, tmp_path: Path):
    # GIVEN a site whose robots.txt allows everything, and the operator's block of its domain
    blocked, other = _two_sites(web)
    profile = derived("springstudiobot", politeness={"min_delay_s": 0})
    with SteppedRun(profile, [Source("b", blocked.base_url + "/liste/", "page"),
                              Source("o", other.base_url + "/liste/", "page")], tmp_path, start=START - 60) as run:
        run.store.block_domain(BLOCK_IP, "owner asked us to stop")
        run.round(START)
        out = run.finish()
    # THEN the blocked site saw no request at all, not even robots.txt; the other site was crawled
    assert blocked.log() == []
    assert [r.path for r in other.log()] == ["/robots.txt", "/liste/"]
    assert [s["source"] for s in out.skipped("blocked_by_operator")] == ["b"]


def test_common_08_profile_block_list_honoured(web: Web, tmp_path: Path):
    blocked, other = _two_sites(web)
    profile = derived("springstudiobot", politeness={"min_delay_s": 0}, operator={"blocked_domains": [BLOCK_IP]})
    with SteppedRun(profile, [Source("b", blocked.base_url + "/liste/", "page"),
                              Source("o", other.base_url + "/liste/", "page")], tmp_path, start=START - 60) as run:
        run.round(START)
        out = run.finish()
    assert blocked.log() == [] and [r.path for r in other.log()] == ["/robots.txt", "/liste/"]
    assert [s["source"] for s in out.skipped("blocked_by_operator")] == ["b"]


def test_common_08_everything_stored_from_a_domain_can_be_deleted(web: Web, tmp_path: Path):
    blocked, other = _two_sites(web)
    profile = derived("springstudiobot", politeness={"min_delay_s": 0})
    with SteppedRun(profile, [Source("b", blocked.base_url + "/liste/", "page"),
                              Source("o", other.base_url + "/liste/", "page")], tmp_path, start=START - 60) as run:
        run.round(START)
        assert blocked.host in run.stored_text()
        purge_domain(run.operator, BLOCK_IP)
        stored = run.stored_text()
        run.finish()
    assert blocked.host not in stored and other.host in stored


# --- COMMON-09: fixed, published egress ---------------------------------------------------------------------

def test_common_09_all_traffic_leaves_through_one_elastic_ip():
    """A deployment rule: proven on template.yaml (locally every request leaves from this machine).
    The fetcher, the one function that fetches, runs in the private subnet, whose only default
    route is the NAT (gateway or instance, by EgressMode) that holds the one Elastic IP, kept
    when the stack goes and published as the EgressIp output (see also
    tests/integration/test_template.py::test_common_09_egress_ip_is_kept_and_an_output_or_passed_in)."""
    t = load_template(ROOT / "template.yaml")
    res = t["Resources"]
    functions = [k for k, r in res.items() if r["Type"] == "AWS::Serverless::Function"]
    in_vpc = [f for f in functions if "VpcConfig" in res[f]["Properties"]]
    assert in_vpc == ["FetcherFunction"] and "VpcConfig" not in t["Globals"]["Function"]
    vpc = res["FetcherFunction"]["Properties"]["VpcConfig"]["Fn::If"][1]
    subnets = {s["Ref"] for s in vpc["SubnetIds"]}
    assert subnets == {"PrivateSubnetA"}
    tables = {res[k]["Properties"]["RouteTableId"]["Ref"] for k, r in res.items()
              if r["Type"] == "AWS::EC2::SubnetRouteTableAssociation" and r["Properties"]["SubnetId"]["Ref"] in subnets}
    routes = [r for r in res.values() if r["Type"] == "AWS::EC2::Route"
              and r["Properties"]["RouteTableId"]["Ref"] in tables]
    assert sorted((r["Condition"], sorted(r["Properties"])) for r in routes) == [
        ("UseNatGateway", ["DestinationCidrBlock", "NatGatewayId", "RouteTableId"]),
        ("UseNatInstance", ["DestinationCidrBlock", "InstanceId", "RouteTableId"])]
    allocation = {"Fn::If": ["HasEgressAllocationId", {"Ref": "EgressAllocationId"},
                             {"Fn::GetAtt": ["EgressIp", "AllocationId"]}]}
    assert res["NatGateway"]["Properties"]["AllocationId"] == allocation
    association = res["EgressIpAssociation"]["Properties"]
    assert association == {"AllocationId": allocation, "InstanceId": {"Ref": "NatInstance"}}
    assert [k for k, r in res.items() if r["Type"] == "AWS::EC2::EIP"] == ["EgressIp"]
    assert res["EgressIp"]["DeletionPolicy"] == "Retain"
    assert t["Outputs"]["EgressIp"]["Value"] == {"Ref": "EgressIp"}
    # WANNADO publishes its addresses; the profile holds them for /crawler/ips.json (WANNADO-02).
    assert load_profile("wannadobot").get("egress.ips")

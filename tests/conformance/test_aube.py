"""AubeBot's promises (AUBE-01..12), proven from the sites' side: what each site logged, and the run's files."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

import pytest

from heed_core.profile import load_profile
from heed_core.work import Source

from heed.demo.web import Route
from heed.samconfig import deploy_env

from tests.support.pages import FeedEntry, feed_route, html_page, robots, slow
from tests.support.runs import Background, Scenario, SteppedRun, at, derived, sim_times, start_cli_run
from tests.support.scenarios import LONG, RFC_ALLOWED, RFC_DISALLOWED
from tests.support.web import Web, gaps, overlaps, path_of

T10 = at("2026-12-01T10:00:00Z")
QUARTER = 900.0


def _slot(t: float) -> int:
    return int(t // QUARTER)


# --- one round over six hosts (conftest.aube_round) ------------------------------------------------

def test_aube_01_at_most_40_items_and_nothing_but_the_feed_while_it_suffices(aube_round: Scenario):
    # GIVEN a feed of 45 items whose summaries are all long enough (conftest.aube_round, host "big")
    big = aube_round.sites["big"]
    # THEN the site saw robots.txt and the feed, nothing else
    assert [r.path for r in big.log()] == ["/robots.txt", "/feed.xml"]
    # AND 40 items were kept, the five beyond the cap recorded as such
    found = [i for i in aube_round.out.found() if i["source"] == "big"]
    assert len(found) == 40
    assert sorted(int(i["url"].rsplit("/", 1)[1]) for i in found) == list(range(40))
    capped = [s for s in aube_round.out.skipped("cap_reached") if s["source"] == "big"]
    assert len(capped) == 1


def test_aube_04_robots_before_every_request_most_specific_group_allow_wildcards(aube_round: Scenario):
    # GIVEN robots.txt whose `*` group closes everything and whose (lower-case) aubebot group has
    # Allow, Disallow, a `$` wildcard and an Allow/Disallow tie (conftest.RFC_ROBOTS)
    rfc = aube_round.sites["rfc"].log()
    # THEN robots.txt came first, the feed was read under AubeBot's group, and exactly the
    # published URLs that group allows were opened
    assert rfc[0].path == "/robots.txt"
    assert sorted(r.path for r in rfc[1:]) == sorted(("/feed.xml",) + RFC_ALLOWED)
    refused = {path_of(s["url"]) for s in aube_round.out.skipped("robots_disallowed") if s["source"] == "rfc"}
    assert refused == set(RFC_DISALLOWED)


def test_aube_04_feeds_included_a_disallowed_feed_is_not_read(aube_round: Scenario):
    closed = aube_round.sites["closed"].log()
    assert [r.path for r in closed] == ["/robots.txt"]
    assert [s["reason"] for s in aube_round.out.skips if s["source"] == "closed"] == ["robots_disallowed"]


def test_aube_04_crawl_delay_honoured_up_to_the_cap(aube_round: Scenario):
    # GIVEN a host asking Crawl-delay: 30 and a derived cap of 1.2 s (shipped cap 10 s:
    # tests/unit/test_profiles.py::test_aube_04_crawl_delay_cap_10)
    log = aube_round.sites["slowpoke"].log()
    assert [r.path for r in log] == ["/robots.txt", "/feed.xml"]
    # THEN the feed waited for the cap, not for the 30 s asked
    assert 1.2 <= gaps(log)[0] < 5.0


def test_aube_05_opens_only_urls_the_feed_published(aube_round: Scenario):
    # GIVEN articles full of internal links, tags, a channel home link and images (conftest._article)
    published = {i["url"] for i in aube_round.out.found()}
    for name, server in aube_round.sites.items():
        own = {server.base_url + p for p in ("/robots.txt", "/feed.xml")}
        # THEN every request a site saw is robots.txt, the feed, or an item link of a feed
        assert {server.base_url + r.path for r in server.log()} <= own | published, name
        assert not [r for r in server.log() if r.path.startswith(("/art/altro/", "/tag/")) or r.path == "/"]


def test_aube_06_paywalled_article_never_extracted_no_cookies(aube_round: Scenario):
    # GIVEN an article that carries its whole text but is marked isAccessibleForFree: false
    paywall = aube_round.sites["paywall"].log()
    # THEN it was opened once (to learn it is paywalled) and nothing of it was extracted
    assert [r.path for r in paywall] == ["/robots.txt", "/feed.xml", "/premium/1"]
    assert [s["url"].endswith("/premium/1") for s in aube_round.out.skipped("paywalled")] == [True]
    assert not [i for i in aube_round.out.found("article.read") if i["source"] == "paywall"]
    assert "SEGRETO-PAGATO" not in aube_round.out.stored
    # AND although every response set cookies, no request ever carried one, nor credentials
    every = [r for s in aube_round.sites.values() for r in s.log()]
    assert every and not [r for r in every if r.header("Cookie") or r.header("Authorization")]
    # AND no script of any opened page was run (nothing it loads was requested)
    assert not [r for r in every if r.path.startswith(("/js/", "/css/", "/login"))]


def test_aube_07_takes_none_of_the_images(aube_round: Scenario):
    # GIVEN feeds with enclosures, media:content, a channel logo, <img> in summaries, and
    # articles with <img> and og:image
    every = [r for s in aube_round.sites.values() for r in s.log()]
    # THEN no image was requested, and none is named in what the bot kept
    assert not [r.path for r in every if r.path.startswith("/img/")]
    assert "/img/" not in repr(aube_round.out.items)
    assert "/img/" not in aube_round.out.stored


def test_aube_03_article_only_below_600_characters(aube_round: Scenario):
    # GIVEN summaries of 599, 600 and 900 characters
    short = [r.path for r in aube_round.sites["short"].log()]
    # THEN only the 599-character item's page was opened
    assert short == ["/robots.txt", "/feed.xml", "/art/599"]
    read = [i for i in aube_round.out.found("article.read") if i["source"] == "short"]
    assert [i["url"].rsplit("/", 1)[1] for i in read] == ["599"]


def test_aube_03_an_article_two_feeds_link_in_one_round_is_read_once(aube_round: Scenario):
    # GIVEN two feeds, read in the same round, that both link one short-summary article
    shared = [r.path for r in aube_round.sites["shared"].log()]
    # THEN its site saw it requested once
    assert shared.count("/art/shared") == 1, shared


# --- cycles: 10:00, an early extra firing, 10:15, 10:30, a ban, 10:45, 11:00 ---------------------------

def _feed_v1() -> list[FeedEntry]:
    return [FeedEntry("A", "{{base}}/art/a", summary="Breve A."),
            FeedEntry("B", "{{base}}/art/b", summary=LONG)]


@pytest.fixture(scope="module")
def cycles(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Two hosts through five quarter hours (no minimum gap). At 10:10 the first feed gains an
    item and the second feed starts linking the first host's already-read article; after the
    10:30 round the first host bans AubeBot."""
    w = Web()
    art = Route(body=html_page("Articolo", "<main><article><p>Testo.</p></article></main>"))
    one = w.site("uno", {"/robots.txt": robots("User-agent: *\nAllow: /\n"), "/feed.xml": feed_route(_feed_v1())},
                 fallback=art)
    two = w.site("due", {"/robots.txt": robots("User-agent: *\nAllow: /\n"),
                         "/feed.xml": feed_route([FeedEntry("D", "{{base}}/art/d", summary=LONG)])}, fallback=art)
    profile = derived("aubebot", politeness={"min_delay_s": 0})
    sources = [Source("uno", one.base_url + "/feed.xml", "feed"), Source("due", two.base_url + "/feed.xml", "feed")]
    marks: dict[str, float] = {}
    try:
        with SteppedRun(profile, sources, tmp_path_factory.mktemp("aube_cycles"), start=T10) as run:
            run.round(T10)
            run.round(at("2026-12-01T10:05:00Z"))  # an early firing: too soon for either feed
            run.advance_to(at("2026-12-01T10:10:00Z"))
            one.set_route("/feed.xml", feed_route(_feed_v1() + [FeedEntry("C", "{{base}}/art/c", summary="Breve C.")]))
            two.set_route("/feed.xml", feed_route([FeedEntry("D", "{{base}}/art/d", summary=LONG),
                                                   FeedEntry("A again", one.base_url + "/art/a", summary="Breve.")]))
            run.round(at("2026-12-01T10:15:00Z"))
            run.round(at("2026-12-01T10:30:00Z"))
            run.advance_to(at("2026-12-01T10:31:00Z"))
            marks["ban"] = run.now
            one.set_route("/robots.txt", robots("User-agent: AubeBot\nDisallow: /\n"))
            run.round(at("2026-12-01T10:45:00Z"))
            run.round(at("2026-12-01T11:00:00Z"))
            out = run.finish()
        yield {"one": one, "two": two, "out": out, **marks}
    finally:
        w.stop()


def _host(out: Any, server: Any, purpose: str | None = None) -> list[dict[str, Any]]:
    return [r for r in out.requests if r["url"].startswith(server.base_url + "/")
            and (purpose is None or r["purpose"] == purpose)]


def test_aube_02_unchanged_feed_is_a_304_without_body(cycles: dict[str, Any]):
    one, out = cycles["one"], cycles["out"]
    feeds = [r for r in one.log() if r.path == "/feed.xml"]
    # THEN every read after the first asked conditionally (both validators) ...
    assert feeds[0].header("If-None-Match") is None
    assert all(r.header("If-None-Match") and r.header("If-Modified-Since") for r in feeds[1:])
    # ... the read after the change got the new feed, and the read of the unchanged feed got a 304, no body
    assert [r.status for r in feeds[:3]] == [200, 200, 304]
    assert feeds[2].bytes == 0
    assert [r["status"] for r in _host(out, one, "feed")][:3] == [200, 200, 304]
    # AND the 304 produced no item
    assert len([i for i in out.found() if i["source"] == "uno"]) == 3  # A, B, then C


def test_aube_03_a_page_read_once_is_never_requested_again(cycles: dict[str, Any]):
    one, out = cycles["one"], cycles["out"]
    opened = Counter(r.path for r in one.log() if r.path.startswith("/art/"))
    # GIVEN /art/a stays in the first feed and appears in the second feed from 10:15
    # THEN it was opened once; the long-summary /art/b never; the new short /art/c once
    assert opened == {"/art/a": 1, "/art/c": 1}
    assert any(s["url"].endswith("/art/a") for s in out.skipped("already_read"))


def test_aube_08_a_firing_inside_the_quarter_hour_reads_nothing(cycles: dict[str, Any]):
    out = cycles["out"]
    for server in (cycles["one"], cycles["two"]):
        reads = sim_times(_host(out, server, "feed"))
        # THEN the 10:05 firing read no feed; the run's record and the site's log agree
        assert reads and not [t for t in reads if at("2026-12-01T10:05:00Z") <= t < at("2026-12-01T10:15:00Z")]
        assert len(reads) == len([r for r in server.log() if r.path == "/feed.xml"])
    assert [s for s in out.skipped("seen_recently") if s.get("round", "").startswith("2026-12-01T10:05")]


def test_aube_08_one_feed_read_per_source_every_15_minutes(cycles: dict[str, Any]):
    out = cycles["out"]
    for server in (cycles["one"], cycles["two"]):
        reads = sim_times(_host(out, server, "feed"))
        # THEN consecutive reads of one source's feed are at least 15 minutes apart, 304s included
        assert all(b - a >= QUARTER for a, b in pairwise(reads)), reads


def test_aube_12_ban_takes_effect_within_a_quarter_hour(cycles: dict[str, Any]):
    one, out = cycles["one"], cycles["out"]
    # GIVEN AubeBot was banned at 10:31
    late = [r for r in _host(out, one) if r["purpose"] != "robots" and at(r["t_start"]) >= cycles["ban"] + QUARTER]
    # THEN nothing but robots.txt was asked for from 10:46 on, and the ban was recorded
    assert late == []
    assert [s for s in out.skipped("robots_disallowed") if s["source"] == "uno"]


def test_aube_12_robots_reread_once_per_host_per_cycle(cycles: dict[str, Any]):
    out = cycles["out"]
    for server in (cycles["one"], cycles["two"]):
        requests = _host(out, server)
        by_slot: dict[int, list[str]] = {}
        for r in requests:
            by_slot.setdefault(_slot(at(r["t_start"])), []).append(r["purpose"])
        for slot, purposes in by_slot.items():
            # THEN in every quarter hour the host was visited, robots.txt was read once, first
            assert purposes[0] == "robots" and purposes.count("robots") == 1, (slot, purposes)
    # AND the ban at 10:31 stopped the 10:45 cycle already
    assert not [r for r in _host(out, cycles["one"], "feed") if at(r["t_start"]) >= cycles["ban"]]


# --- article caps (AUBE-10) ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def caps(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Three feeds of four short items each, read at 10:00 and (with four other items) at 10:15,
    under a derived cap of 2 per source and 3 in total per quarter hour (shipped 5 and
    60: tests/unit/test_profiles.py::test_aube_10_five_articles_per_source_sixty_in_total_per_quarter_hour)."""
    w = Web()
    art = Route(body=html_page("Articolo", "<main><article><p>Testo.</p></article></main>"))

    def feed(gen: int) -> Route:
        return feed_route([FeedEntry(f"{gen}-{i}", f"{{{{base}}}}/art/{gen}-{i}", summary="Breve.")
                           for i in range(4)])
    sites = [w.site(f"f{n}", {"/robots.txt": robots("User-agent: *\nAllow: /\n"), "/feed.xml": feed(0)},
                    fallback=art) for n in range(3)]
    profile = derived("aubebot", politeness={"min_delay_s": 0},
                      tasks={"feed": {"article_followup": {"per_source_per_window": 2, "total_per_window": 3}}})
    sources = [Source(f"f{n}", s.base_url + "/feed.xml", "feed") for n, s in enumerate(sites)]
    try:
        with SteppedRun(profile, sources, tmp_path_factory.mktemp("aube_caps"), start=T10) as run:
            run.round(T10)
            for s in sites:
                s.set_route("/feed.xml", feed(1))
            run.round(at("2026-12-01T10:15:30Z"))  # the feeds' quarter hour has passed: no wait
            out = run.finish()
        yield {"sites": sites, "out": out}
    finally:
        w.stop()


def test_aube_10_article_caps_per_source_and_in_total_per_quarter_hour(caps: dict[str, Any]):
    out = caps["out"]
    articles = out.requested("article")
    per_slot: Counter[int] = Counter(_slot(t) for t in sim_times(articles))
    per_source_slot = Counter((r["source"], _slot(at(r["t_start"]))) for r in articles)
    # THEN in each of the two quarter hours exactly the total cap was opened, never more than
    # two pages of one source, and the rest was recorded as capped
    assert sorted(per_slot.values()) == [3, 3], per_slot
    assert max(per_source_slot.values()) == 2
    assert len(out.skipped("cap_reached")) == 2 * (4 * 3 - 3)
    # AND the sites' logs agree
    assert sum(1 for s in caps["sites"] for r in s.log() if r.path.startswith("/art/")) == 6


# --- the shipped profile ----------------------------------------------------------------------------

def start_in_background() -> Background:
    """The untouched AubeBot profile, one round, run by `heed local run` in a subprocess that
    conftest starts at collection: a 45-item feed that takes 0.6 s to answer, with one short
    item, and a second host asking for Crawl-delay 2.5 s."""
    w = Web()
    items = [FeedEntry(f"N{i}", f"{{{{base}}}}/n/{i}", summary=LONG) for i in range(45)]
    items[0] = FeedEntry("Breve 1", "{{base}}/art/1", summary="Breve.")
    x = w.site("x", {"/robots.txt": robots("User-agent: *\nAllow: /\n"), "/feed.xml": slow(feed_route(items), 0.6),
                     "/art/1": Route(body=html_page("Articolo", "<main><article><p>Testo.</p></article></main>"))})
    y = w.site("y", {"/robots.txt": robots("User-agent: AubeBot\nCrawl-delay: 2.5\n"),
                     "/feed.xml": feed_route([FeedEntry("Y", "{{base}}/y/1", summary=LONG)])})
    sources = [{"id": s, "url": site.base_url + "/feed.xml", "kind": "feed"} for s, site in (("x", x), ("y", y))]
    return start_cli_run("aubebot", w, {"x": x, "y": y}, sources, start="2026-12-01T10:00:00Z", patience_s=8)


@pytest.fixture(scope="module")
def shipped(background: Background) -> dict[str, Any]:
    out = background.result()
    return {"x": background.sites["x"], "y": background.sites["y"], "out": out, "profile": load_profile("aubebot")}


def test_aube_01_09_shipped_profile_40_items_and_1500_ms_gaps(shipped: dict[str, Any]):
    x, y, out = shipped["x"], shipped["y"], shipped["out"]
    assert [r.path for r in x.log()] == ["/robots.txt", "/feed.xml", "/art/1"]
    assert {r.header("User-Agent") for r in x.log() + y.log()} == {
        "AubeBot/0.1 (+https://aube.news/robot; collecte RSS polie)"}
    assert len([i for i in out.found() if i["source"] == "x"]) == 40
    assert min(gaps(x.log())) >= 1.5
    # Crawl-delay 2.5 s is longer than 1.5 s and under the 10 s cap: it prevails
    assert [r.path for r in y.log()] == ["/robots.txt", "/feed.xml"] and gaps(y.log())[0] >= 2.5


def test_aube_09_gap_counted_from_end_of_request(shipped: dict[str, Any]):
    # GIVEN the feed takes 0.6 s to answer (a gap counted from its start would let the article
    # come 0.9 s after its end)
    log = shipped["x"].log()
    feed, article = log[1], log[2]
    assert feed.t_end - feed.t_start >= 0.6
    # THEN the next request started at least 1500 ms after the end of the previous one
    assert article.t_start - feed.t_end >= 1.5


def test_aube_11_one_request_at_a_time_over_all_hosts(shipped: dict[str, Any]):
    """From the sites' side: no two requests of the run were ever in flight together. The local
    runtime invokes the fetcher serially; in AWS the same holds because the profile's
    max_in_flight=1 becomes the fetcher's reserved concurrency of 1 (checked here on the deploy
    config; the template's wiring: tests/integration/test_template.py::
    test_aube_11_reserved_concurrency_only_when_asked)."""
    every = shipped["x"].log() + shipped["y"].log()
    assert len(every) == 5 and overlaps(every) == []
    assert deploy_env(shipped["profile"]).fetcher_reserved_concurrency == 1

"""SpringStudioBot's promises (SPRING-01..10), proven from the sites' side: their logs and the run's files."""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from heed_core.work import Source

from heed.demo.web import Route, fail

from tests.support.pages import html_page, listing, robots, sitemap_index, slow, urlset
from tests.support.runs import Background, Scenario, SteppedRun, at, derived, sim_times, start_cli_run
from tests.support.scenarios import START
from tests.support.web import Web, gaps, overlaps, path_of

DAY = 86400.0
OPEN = "User-agent: *\nDisallow: /privat/\n"
JS_SHELL = html_page("Innsyn", "<div id='app'></div><script src='/js/app.js'></script>")


def _day(t: float) -> int:
    return int((t - START) // DAY) + 1  # day 1 is the first run day (06:00 to 06:00 UTC)


def _titled(title: str) -> Route:
    return Route(body=html_page(title, "<main><p>Innhold.</p></main>"))


# --- three daily visits (days 1, 2, 3 at 06:00) ----------------------------------------------------------

# jsapp's sitemap index has three children; under /app/ there are seven pages in the first two.
APP_PAGES = [f"/app/sak/{i}" for i in range(7)]


@pytest.fixture(scope="module")
def daily(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """SpringStudioBot without delays, three daily visits: a listing with bylines and comments
    (nyheter), a JavaScript-only page with a sitemap index (jsapp), and a site that closes itself
    to the bot after day 1 (stengt)."""
    w = Web()
    nyheter = w.site("nyheter", {"/robots.txt": robots(OPEN),
                                 "/nyheter/": Route(body=listing([(f"Sak {i}", f"/sak/{i}") for i in range(3)]))})
    jsapp = w.site("jsapp", {"/robots.txt": robots(OPEN), "/app/": Route(body=JS_SHELL),
                             "/sitemap.xml": sitemap_index(["/sm/1.xml", "/sm/2.xml", "/sm/3.xml"]),
                             "/sm/1.xml": urlset(APP_PAGES[:4] + ["/annet/1", "/annet/2"]),
                             "/sm/2.xml": urlset(APP_PAGES[4:]),
                             "/sm/3.xml": urlset(["/app/sak/99", "/app/sak/98"])}, fallback=_titled("En side"))
    # robots.txt takes 0.3 s to answer here: day 1's copy is fetched a little after 06:00.
    stengt = w.site("stengt", {"/robots.txt": slow(robots(OPEN), 0.3),
                               "/liste/": Route(body=listing([("Stengt sak", "/sak/1")]))})
    profile = derived("springstudiobot", politeness={"min_delay_s": 0})
    sources = [Source("nyheter", nyheter.base_url + "/nyheter/", "page"),
               Source("jsapp", jsapp.base_url + "/app/", "page"),
               Source("stengt", stengt.base_url + "/liste/", "page")]
    try:
        with SteppedRun(profile, sources, tmp_path_factory.mktemp("spring_daily"), start=START - 60) as run:
            run.round(START)
            # SPRING-09: the owner closes the site to the bot after the first visit.
            stengt.set_route("/robots.txt", robots("User-agent: SpringStudioBot\nDisallow: /\n"))
            run.round(START + DAY)
            run.round(START + 2 * DAY)
            out = run.finish(capture=True)
        yield {"nyheter": nyheter, "jsapp": jsapp, "stengt": stengt, "out": out}
    finally:
        w.stop()


def _reqs(daily: dict[str, Any], site: str, day: int | None = None) -> list[dict[str, Any]]:
    base = daily[site].base_url + "/"
    return [r for r in daily["out"].requests if r["url"].startswith(base)
            and (day is None or _day(at(r["t_start"])) == day)]


def test_spring_01_only_title_link_and_time_nothing_else_fetched_or_stored(daily: dict[str, Any]):
    out = daily["out"]
    # GIVEN a listing whose items carry an author byline, a user name and post text
    items = [i for i in out.found() if i["source"] == "nyheter"]
    # THEN the items are title, link and publication time (plus bookkeeping: the result's id and
    # where it came from) and nothing else
    assert sorted(i["title"] for i in items) == ["Sak 0", "Sak 1", "Sak 2"]
    assert all(i["published"] for i in items)
    assert {k for i in items for k in i} <= {"detail_type", "bot", "id", "kind", "source", "source_url", "url",
                                             "title", "published"}
    # AND no author, user name or post text is in the output or anywhere in what the stack stored
    for needle in ("Kari Nordmann", "bruker_", "hemmelig-brodtekst", "kommentar"):
        assert needle not in repr(out.items) and needle not in out.stored, needle
    # AND the site saw no request for the items' own pages
    assert {r.path for r in daily["nyheter"].log()} == {"/robots.txt", "/nyheter/"}


def test_spring_02_once_a_day_per_page_one_page_per_source(daily: dict[str, Any]):
    # THEN the listing was fetched once on each of the three days, alone
    pages = [r for r in _reqs(daily, "nyheter") if r["purpose"] == "page"]
    assert Counter(_day(t) for t in sim_times(pages)) == {1: 1, 2: 1, 3: 1}
    assert [r.path for r in daily["nyheter"].log()].count("/nyheter/") == 3
    # AND each daily round, every source cost its site one page, except the sitemap fallback's titles (SPRING-03)
    for site in ("nyheter", "jsapp"):
        for day in (1, 2, 3):
            entry = [r for r in _reqs(daily, site, day)
                     if r["purpose"] == "page" and path_of(r["url"]) in ("/nyheter/", "/app/")]
            assert len(entry) == 1, (site, day)


def test_spring_02_a_token_redelivered_mid_request_fetches_no_page_twice(web: Web, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch):
    # GIVEN one listing that takes 0.25 s, and a store that is slow to write the host's item
    # (0.8 s: a throttled DynamoDB write) so the window around the request stays open
    site = web.site("dobbel", {"/robots.txt": robots(OPEN),
                               "/liste/": Route(body=lambda hit: (time.sleep(0.25), listing([("Sak", "/sak/1")]))[1])})
    from heed_aws.store import DynamoStore

    real_write = DynamoStore.write_host

    def slow_write(self: Any, host: str, expected_version: int, **kw: Any) -> bool:
        time.sleep(0.8)
        return real_write(self, host, expected_version, **kw)

    profile = derived("springstudiobot", politeness={"min_delay_s": 0})
    with SteppedRun(profile, [Source("liste", site.base_url + "/liste/", "page")], tmp_path, start=START - 60) as run:
        run.round(START - 30, ["page"])  # reads robots.txt (and the page once) before the day's round
        monkeypatch.setattr(DynamoStore, "write_host", slow_write)
        site.reset_log()
        run.advance_to(START)
        run.run.fire(START, ["page"])
        # WHEN a second invocation gets the host's token 0.5 s after the first (mid-settle)
        run.invoke_concurrently(2, stagger_s=0.5)
    # THEN the round still cost the site one page
    assert [r.path for r in site.log()] == ["/liste/"]


def test_spring_03_js_page_falls_back_to_sitemap_two_children_five_new_pages_under_the_path(daily: dict[str, Any]):
    day1 = [path_of(r["url"]) for r in _reqs(daily, "jsapp", 1)]
    # GIVEN a JavaScript-only page, a sitemap index of three children and seven pages under /app/
    # THEN the bot read sitemap.xml and its first two children only ...
    assert [p for p in day1 if p.endswith(".xml")] == ["/sitemap.xml", "/sm/1.xml", "/sm/2.xml"]
    # ... and fetched the titles of five pages, all under /app/, none outside it
    titles = [p for p in day1 if p.startswith(("/app/sak/", "/annet/"))]
    assert len(titles) == 5 and set(titles) <= set(APP_PAGES)
    found = {path_of(i["url"]) for i in daily["out"].found() if i["source"] == "jsapp"}
    assert set(titles) <= found
    assert not [r for r in daily["jsapp"].log() if r.path.startswith(("/js/", "/annet/"))]


def test_spring_03_at_most_two_child_sitemaps_even_when_robots_names_another(one_round: dict[str, Any]):
    # GIVEN a JavaScript-only page; sitemap.xml and robots.txt's Sitemap: are indexes of two children each
    sitemaps = [r.path for r in one_round["jsapp2"].log() if r.path.endswith(".xml")]
    # THEN the site's sitemap.xml and at most two child sitemaps, whatever robots.txt lists
    assert sitemaps[0] == "/sitemap.xml" and len(sitemaps) <= 3, sitemaps


def test_spring_04_a_title_is_not_fetched_again_within_a_week(daily: dict[str, Any]):
    titles = [(r["t_start"], path_of(r["url"])) for r in _reqs(daily, "jsapp")
              if path_of(r["url"]).startswith("/app/sak/")]
    per_page = Counter(p for _, p in titles)
    # THEN over three days each of the seven pages had its title fetched once: five new ones on
    # day 1 (SPRING-03's cap), the two left on day 2, none on day 3
    assert per_page == {p: 1 for p in APP_PAGES}
    assert Counter(_day(at(t)) for t, _ in titles) == {1: 5, 2: 2}
    assert len([s for s in daily["out"].skipped("seen_recently") if s["source"] == "jsapp"]) == 5 + 7
    assert Counter(r.path for r in daily["jsapp"].log() if r.path.startswith("/app/sak/")) == per_page


def test_spring_09_robots_change_takes_effect_at_the_next_visit(daily: dict[str, Any]):
    day2 = [path_of(r["url"]) for r in _reqs(daily, "stengt", 2)]
    # THEN day 2's visit read robots.txt again and fetched nothing it now forbids
    assert day2 == ["/robots.txt"], day2


def test_spring_09_robots_cached_at_most_a_day(daily: dict[str, Any]):
    robots_reads = [at(r["t_start"]) for r in _reqs(daily, "nyheter") if r["purpose"] == "robots"]
    pages = sim_times(r for r in _reqs(daily, "nyheter") if r["purpose"] == "page")
    # THEN every page was fetched under a robots.txt read less than 24 hours before it
    for t in pages:
        assert any(0 <= t - rt <= DAY for rt in robots_reads), (t, robots_reads)


# --- 429 (SPRING-05) and errors (SPRING-06) ----------------------------------------------------------------

@pytest.fixture(scope="module")
def refusals(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One host answers 429 to the first of its two pages; a second host is well. Rounds: day 1
    at 06:00, an extra firing at 15:00 the same day, day 2 at 06:00 (when the host is well again)."""
    w = Web()
    busy = w.site("travel", {"/robots.txt": robots(OPEN), "/a/": fail(429),
                             "/b/": Route(body=listing([("B", "/sak/b")]))})
    calm = w.site("rolig", {"/robots.txt": robots(OPEN), "/c/": Route(body=listing([("C", "/sak/c")]))})
    profile = derived("springstudiobot", politeness={"min_delay_s": 0})
    sources = [Source("a", busy.base_url + "/a/", "page"), Source("b", busy.base_url + "/b/", "page"),
               Source("c", calm.base_url + "/c/", "page")]
    try:
        with SteppedRun(profile, sources, tmp_path_factory.mktemp("spring_429"), start=START - 60) as run:
            run.round(START)
            run.round(START + 9 * 3600)
            busy.set_route("/a/", Route(body=listing([("A", "/sak/a")])))
            run.round(START + DAY)
            out = run.finish()
        yield {"busy": busy, "calm": calm, "out": out}
    finally:
        w.stop()


def test_spring_05_on_429_no_more_requests_to_that_host_that_day(refusals: dict[str, Any]):
    out = refusals["out"]
    busy = [(r["t_start"], path_of(r["url"])) for r in out.requests if r["url"].startswith(refusals["busy"].base_url)]
    day1 = [p for t, p in busy if at(t) < START + DAY - 6 * 3600]
    # THEN after the 429 on /a/, the host saw nothing more on day 1 (not /b/, not at 15:00) ...
    assert day1 == ["/robots.txt", "/a/"]
    assert [r.status for r in refusals["busy"].log()][:2] == [200, 429]
    assert {s["source"] for s in out.skipped("host_stopped")} >= {"b"}
    # ... the other host was not affected, and the next day the host was visited again
    assert [r.path for r in refusals["calm"].log()].count("/c/") == 3
    day2 = [p for t, p in busy if at(t) >= START + DAY]
    assert "/a/" in day2 and "/b/" in day2


@pytest.fixture(scope="module")
def errors(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A page that always answers 500, under the shipped retry policy (three more tries,
    600 s doubling). First seen at 23:30 on day 0, then in day 1's 06:00 round."""
    w = Web()
    broken = w.site("feil", {"/robots.txt": robots(OPEN), "/feil/": fail(500)})
    profile = derived("springstudiobot", politeness={"min_delay_s": 0})
    late = START - 6.5 * 3600  # 23:30 the evening before
    try:
        with SteppedRun(profile, [Source("feil", broken.base_url + "/feil/", "page")],
                        tmp_path_factory.mktemp("spring_500"), start=late - 60) as run:
            run.round(late)
            run.advance_to(START - 60)
            run.round(START)
            run.advance_to(START + 17 * 3600)
            out = run.finish()
        yield {"broken": broken, "out": out, "late": late}
    finally:
        w.stop()


def test_spring_06_error_retried_at_most_three_more_times_the_same_day(errors: dict[str, Any]):
    out = errors["out"]
    tries = sim_times(r for r in out.requests if r["purpose"] == "page")
    midnight = START - 6 * 3600
    evening, day = [t for t in tries if t < midnight], [t for t in tries if t >= midnight]
    # THEN the 06:00 round asked once and retried three times that day (06:10, 06:30, 07:10) ...
    assert len(day) == 4 and all(t < midnight + DAY for t in day)
    assert [round((t - day[0]) / 60) for t in day] == [0, 10, 30, 70]
    # ... and the 23:30 error was retried only as long as the day lasted (23:40), not after midnight
    assert len(evening) == 2 and round((evening[1] - evening[0]) / 60) == 10
    assert [r.path for r in errors["broken"].log()].count("/feil/") == 6
    assert len(out.skipped("retries_exhausted")) == 2


# --- redirects (SPRING-07) and pacing (SPRING-08): conftest.spring_redirects / spring_pacing -------------------

def test_spring_07_a_redirect_is_followed_as_a_separate_request(spring_redirects: Scenario):
    gammel, ny = spring_redirects.sites["gammel"].log(), spring_redirects.sites["ny"].log()
    # THEN the moved listing cost two requests, each its own GET, the second after the new host's robots.txt
    assert [r.path for r in ny] == ["/robots.txt", "/ny/"]
    old = next(r for r in gammel if r.path == "/gammel/")
    assert old.status == 301 and ny[1].t_start > old.t_end
    # AND each hop of the chain was its own request, paced like any other (0.4 s gap)
    kjede = spring_redirects.sites["kjede"].log()
    assert [r.path for r in kjede] == ["/robots.txt", "/kjede/0", "/kjede/1"]
    assert min(gaps(gammel) + gaps(kjede)) >= 0.4
    items = [i for i in spring_redirects.out.found() if i["source"] == "gammel"]
    assert [i["title"] for i in items] == ["Flyttet sak"]


def test_spring_08_gap_and_crawl_delay_up_to_the_cap(spring_pacing: Scenario):
    """Shape with 0.3 s / cap 1.7 s; the shipped 10 s / 60 s: test_spring_08_shipped_profile_waits_10_seconds
    below and tests/unit/test_profiles.py::test_spring_08_shipped_numbers."""
    expect = {"jevn": (0.3, None), "rolig": (1.6, None), "treg": (1.7, 5.0)}
    for name, (least, most) in expect.items():
        log = spring_pacing.sites[name].log()
        assert [r.path for r in log] == ["/robots.txt", "/liste/1/"], name
        assert overlaps(log) == [] and min(gaps(log)) >= least, (name, gaps(log))
        if most is not None:
            assert max(gaps(log)) < most, (name, gaps(log))


def start_in_background() -> Background:
    """The untouched SpringStudioBot profile, one round on one listing, run by `heed local run`
    in a subprocess that conftest starts at collection: its 10 s wait passes while others run."""
    w = Web()
    site = w.site("ekte", {"/robots.txt": robots(OPEN), "/liste/": Route(body=listing([("Ekte", "/sak/1")]))})
    return start_cli_run("springstudiobot", w, {"ekte": site},
                         [{"id": "ekte", "url": site.base_url + "/liste/", "kind": "page"}],
                         start="2026-12-01T06:00:00Z", patience_s=15)


def test_spring_08_shipped_profile_waits_10_seconds(background: Background):
    out = background.result()
    log = background.sites["ekte"].log()
    assert [r.path for r in log] == ["/robots.txt", "/liste/"]
    assert {r.header("User-Agent") for r in log} == {"SpringStudioBot/1.0 (+https://springstudio.no/springstudiobot)"}
    assert gaps(log)[0] >= 10.0
    assert [r["purpose"] for r in out.requests] == ["robots", "page"]
    assert [i["title"] for i in out.found()] == ["Ekte"]


# --- robots.txt that cannot be read (SPRING-10) --------------------------------------------------------------

@pytest.fixture(scope="module")
def one_round(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One round: five sites whose robots.txt answers 500, 503, 401, 403 and 404, and a
    JavaScript-only page whose robots.txt names a second sitemap index (jsapp2)."""
    w = Web()
    page = Route(body=listing([("Sak", "/sak/1")]))
    sites = {status: w.site(f"r{status}", {"/robots.txt": fail(status), "/liste/": page})
             for status in (500, 503, 401, 403, 404)}
    jsapp2 = w.site("jsapp2", {
        "/robots.txt": robots(OPEN + "Sitemap: {{base}}/news-sitemap.xml\n"), "/app/": Route(body=JS_SHELL),
        "/sitemap.xml": sitemap_index(["/sm/a.xml", "/sm/b.xml"]),
        "/news-sitemap.xml": sitemap_index(["/sm/c.xml", "/sm/d.xml"]),
        # nothing under /app/ in them: no title to fetch
        **{f"/sm/{c}.xml": urlset([f"/annet/{c}"]) for c in "abcd"}}, fallback=_titled("Annet"))
    profile = derived("springstudiobot", politeness={"min_delay_s": 0})
    sources = [Source(f"r{k}", s.base_url + "/liste/", "page") for k, s in sites.items()]
    try:
        with SteppedRun(profile, sources + [Source("jsapp2", jsapp2.base_url + "/app/", "page")],
                        tmp_path_factory.mktemp("spring_one_round"), start=START - 60) as run:
            run.round(START)
            out = run.finish()
        yield {"sites": sites, "jsapp2": jsapp2, "out": out}
    finally:
        w.stop()


def test_spring_10_robots_server_error_or_refusal_fetches_nothing(one_round: dict[str, Any]):
    sites, out = one_round["sites"], one_round["out"]
    # THEN on 5xx, 401 and 403 the host saw robots.txt and nothing else ...
    for status in (500, 503, 401, 403):
        assert [r.path for r in sites[status].log()] == ["/robots.txt"], status
        assert [s["reason"] for s in out.skips if s["source"] == f"r{status}"] in (
            ["robots_unavailable"], ["robots_disallowed"]), status
    # ... while a 404 (no robots.txt) leaves the site open
    assert [r.path for r in sites[404].log()] == ["/robots.txt", "/liste/"]

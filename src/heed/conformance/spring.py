"""SPRING-01..10: SpringStudioBot's daily page visits, sitemap fallback, refusals and robots.txt.

Scenarios: ``spring-daily`` (three daily visits, no waits: a listing with bylines, a JavaScript
page with a sitemap index, a site that closes itself after day 1, a page answering 500,
robots.txt answering 500, 503, 401, 403, 404) and ``spring-refusals`` (a host answering 429 and a calm host;
06:00 and 15:00 on day 1, 06:00 on day 2). SPRING-07 and -08 read the shared ``common`` and
``pacing`` scenarios (10 s and 60 s at 1/20 scale)."""
from __future__ import annotations

from collections import Counter

from heed_core.work import Source

from heed.conformance import common
from heed.conformance.model import Bound, Cadence, Proof, Rule, Runs, Scenario, utc
from heed.conformance.runner import Bench
from heed.conformance.sites import TRAPS, html_page, robots, sitemap_index, urlset
from heed.conformance.stack import Output, sim_time
from heed.demo.web import Route

__all__ = ["rules", "scenarios"]

START = utc("2026-12-01T06:00")  # the shipped cron(0 6 * * ? *)
DAY = 86400.0
OPEN = "User-agent: *\nDisallow: /privat/\n"
APP = [f"/app/sak/{i}" for i in range(7)]
FAILING = (500, 503, 401, 403)
SECRETS = ("Kari Nordmann", "bruker_", "hemmelig-brodtekst", "kommentar")
ITEM_KEYS = {"detail_type", "bot", "id", "kind", "source", "source_url", "url", "title", "published"}


def _listing(items: list[tuple[str, str]]) -> Route:
    arts = "".join(
        f"<article><h2><a href='{link}'>{title}</a></h2><time datetime='2026-12-01T0{i}:00:00Z'>i dag</time>"
        f"<p class='byline'>Av <span class='author'>Kari Nordmann</span></p>"
        f"<p class='teaser'>Innlegg {i}: hemmelig-brodtekst-{i}.</p>"
        f"<div class='comment'><span class='user'>bruker_{i}</span> skrev: kommentar {i}</div></article>"
        for i, (title, link) in enumerate(items))
    return Route(body=html_page("Nyheter", f"<main>{arts}</main>{TRAPS}"))


def _day(t: float) -> int:
    return int((t - START) // DAY) + 1


def _play_daily(b: Bench) -> Output:
    s, shell = b.sites, Route(body=html_page("Innsyn", "<div id='app'></div><script src='/js/app.js'></script>"))
    titled = Route(body=html_page("En side", "<main><p>Innhold.</p></main>"))
    ny = s.add("nyheter", {"/robots.txt": robots(OPEN),
                           "/nyheter/": _listing([(f"Sak {i}", f"/sak/{i}") for i in range(3)])})
    js = s.add("jsapp", {"/robots.txt": robots(OPEN), "/app/": shell,
                         "/sitemap.xml": sitemap_index(["/sm/1.xml", "/sm/2.xml", "/sm/3.xml"]),
                         "/sm/1.xml": urlset(APP[:4] + ["/annet/1", "/annet/2"]), "/sm/2.xml": urlset(APP[4:]),
                         "/sm/3.xml": urlset(["/app/sak/99", "/app/sak/98"])}, fallback=titled)
    js2 = s.add("jsapp2", {"/robots.txt": robots(OPEN + "Sitemap: {{base}}/news-sitemap.xml\n"), "/app/": shell,
                           "/sitemap.xml": sitemap_index(["/sm/a.xml", "/sm/b.xml"]),
                           "/news-sitemap.xml": sitemap_index(["/sm/c.xml", "/sm/d.xml"]),
                           **{f"/sm/{c}.xml": urlset([f"/annet/{c}"]) for c in "abcd"}}, fallback=titled)
    closing = s.add("stengt", {"/robots.txt": robots(OPEN), "/liste/": _listing([("Stengt sak", "/sak/1")])})
    broken = s.add("feil", {"/robots.txt": robots(OPEN), "/feil/": Route(body="<h1>500</h1>", status=500)})
    sources = [Source("nyheter", ny + "/nyheter/", "page"), Source("jsapp", js + "/app/", "page"),
               Source("jsapp2", js2 + "/app/", "page"), Source("stengt", closing + "/liste/", "page"),
               Source("feil", broken + "/feil/", "page")]
    for status in FAILING + (404,):
        body = Route(body=f"<h1>{status}</h1>", status=status)
        base = s.add(f"r{status}", {"/robots.txt": body, "/liste/": _listing([("Sak", "/sak/1")])})
        sources.append(Source(f"r{status}", base + "/liste/", "page"))
    stack = b.stack(b.derived(), sources, START - 60)
    stack.round(START)
    s.set_route("stengt", "/robots.txt", robots(f"User-agent: {b.profile.robots_token}\nDisallow: /\n"))  # SPRING-09
    stack.round(START + DAY)
    stack.round(START + 2 * DAY)
    stack.advance_to(START + 2 * DAY + 12 * 3600)  # the last day's retries come due
    return stack.finish()


def _play_refusals(b: Bench) -> Output:
    s = b.sites
    busy = s.add("travel", {"/robots.txt": robots(OPEN), "/a/": Route(body="<h1>429</h1>", status=429),
                            "/b/": _listing([("B", "/sak/b")])})
    calm = s.add("rolig", {"/robots.txt": robots(OPEN), "/c/": _listing([("C", "/sak/c")])})
    sources = [Source("a", busy + "/a/", "page"), Source("b", busy + "/b/", "page"), Source("c", calm + "/c/", "page")]
    stack = b.stack(b.derived(), sources, START - 60)
    stack.round(START)
    stack.round(START + 9 * 3600)  # an extra firing at 15:00: the 429 host is still left alone
    s.set_route("travel", "/a/", _listing([("A", "/sak/a")]))
    stack.round(START + DAY)
    return stack.finish()


def scenarios() -> list[Scenario]:
    return [Scenario("spring-daily", 0, "three daily visits over ten hosts", _play_daily),
            Scenario("spring-refusals", 0, "a 429 host and a calm host, over two days", _play_refusals)]


# --- the checks -----------------------------------------------------------------------------------

def _s01(r: Runs) -> Proof:
    proof, seen = Proof(), r["spring-daily"]
    items = seen.out.of("item.found", "nyheter")
    proof.that(sorted(i["title"] for i in items) == ["Sak 0", "Sak 1", "Sak 2"]
               and all(i.get("published") for i in items),
               f"{len(items)} items from a listing with bylines, user names and post text")
    extra = sorted({k for i in items for k in i} - ITEM_KEYS)
    proof.that(not extra, "each is title, link and time only" + (f" (also {extra})" if extra else ""))
    kept = repr(seen.out.items) + seen.out.stored + seen.out.kept_text()
    proof.that(not [x for x in SECRETS if x in kept], "no author, user name or post text kept anywhere")
    proof.that(set(seen.paths("nyheter")) == {"/robots.txt", "/nyheter/"}, "the items' own pages never requested")
    return proof


def _s02(r: Runs) -> Proof:
    proof, seen = Proof(), r["spring-daily"]
    days = Counter(_day(sim_time(x)) for x in seen.requests_to("nyheter", "page"))
    proof.that(days == {1: 1, 2: 1, 3: 1}, f"the listing fetched once on each of three days ({dict(days)})")
    entry = Counter(_day(sim_time(x)) for x in seen.requests_to("jsapp", "page") if x["url"].endswith("/app/"))
    proof.that(entry == {1: 1, 2: 1, 3: 1}, "one page per source each visit (the sitemap fallback's titles aside)")
    return proof


def _s03(r: Runs) -> Proof:
    proof, seen = Proof(), r["spring-daily"]
    day1 = [x["url"].split("/", 3)[-1] for x in seen.requests_to("jsapp") if _day(sim_time(x)) == 1]
    maps = [p for p in day1 if p.endswith(".xml")]
    proof.that(maps == ["sitemap.xml", "sm/1.xml", "sm/2.xml"], f"a page without items: sitemap.xml and two of "
               f"three child sitemaps ({', '.join(maps)})")
    titles = [p for p in day1 if p.startswith(("app/sak/", "annet/"))]
    proof.that(len(titles) == 5 and all(p.startswith("app/sak/") for p in titles),
               f"{len(titles)} titles fetched, all under /app/ (seven there, more elsewhere)")
    maps2 = [p for p in seen.paths("jsapp2") if p.endswith(".xml")]
    proof.that(maps2[:1] == ["/sitemap.xml"] and len(set(maps2)) <= 3,
               "robots.txt naming another sitemap index: still at most two children")
    return proof


def _s04(r: Runs) -> Proof:
    proof, seen = Proof(), r["spring-daily"]
    titles = [(sim_time(x), x["url"].split("/", 3)[-1]) for x in seen.requests_to("jsapp") if "/app/sak/" in x["url"]]
    per_page = Counter(p for _, p in titles)
    proof.that(per_page == {p.lstrip("/"): 1 for p in APP}, f"over three days each of {len(APP)} titles fetched once")
    proof.that(Counter(_day(t) for t, _ in titles) == {1: 5, 2: 2},
               "five new on day 1, the two left on day 2, none after")
    return proof


def _s05(r: Runs) -> Proof:
    proof, seen = Proof(), r["spring-refusals"]
    busy = [(sim_time(x), x["url"].split("/", 3)[-1]) for x in seen.requests_to("travel")]
    day1 = [p for t, p in busy if t < START + DAY - 6 * 3600]
    proof.that(day1 == ["robots.txt", "a/"], f"after a 429 the host saw nothing more that day, not at 15:00 ({day1})")
    proof.that(bool(seen.out.skipped("host_stopped", "b")), "its other page recorded as host_stopped")
    proof.that(seen.paths("rolig").count("/c/") == 3, "another host was not affected")
    day2 = {p for t, p in busy if t >= START + DAY}
    proof.that({"a/", "b/"} <= day2, "the next day the host was visited again")
    return proof


def _s06(r: Runs) -> Proof:
    proof, seen = Proof(), r["spring-daily"]
    tries = Counter(_day(sim_time(x)) for x in seen.requests_to("feil", "page"))
    proof.that(bool(tries) and max(tries.values()) <= 4, f"a page answering 500: asked {dict(tries)} times a day "
               "(once and at most three retries)")
    proof.that(bool(seen.out.skipped("retries_exhausted")), "then recorded as retries_exhausted")
    return proof


def _s09(r: Runs) -> Proof:
    proof, seen = Proof(), r["spring-daily"]
    day2 = [x["url"].split("/", 3)[-1] for x in seen.requests_to("stengt") if _day(sim_time(x)) == 2]
    proof.that(day2 == ["robots.txt"], "closed to the bot after day 1: day 2 read robots.txt again, fetched nothing")
    reads = [sim_time(x) for x in seen.requests_to("nyheter", "robots")]
    pages = [sim_time(x) for x in seen.requests_to("nyheter", "page")]
    proof.that(all(any(0 <= t - rt <= DAY for rt in reads) for t in pages),
               f"every page under a robots.txt read less than a day before ({len(reads)} reads, {len(pages)} pages)")
    return proof


def _s10(r: Runs) -> Proof:
    proof, seen = Proof(), r["spring-daily"]
    for status in FAILING:
        proof.that(set(seen.paths(f"r{status}")) == {"/robots.txt"}, f"robots.txt {status}: nothing else fetched")
    proof.that("/liste/" in seen.paths("r404"), "robots.txt 404 (none): the site is open")
    return proof


def rules() -> list[Rule]:
    fb, pol = "tasks.sitemap_fallback.", "politeness."
    return [
        Rule("SPRING-01", "Only the title, link and time of each item; never author, user name or body, none stored.",
             (), _s01),
        Rule("SPRING-02", "Normally once a day per page, and one page per source each time.",
             (Cadence("page", workday=(1, 1), weekend=(1, 1)),
              Bound("tasks.page.max_pages_per_source_per_round", "<=", 1)), _s02),
        Rule("SPRING-03", "A JavaScript page without items: its sitemap.xml, at most two child sitemaps, at most "
                          "five new titles under its path.", (Bound(fb + "enabled", "==", True),
                                                              Bound(fb + "max_child_sitemaps", "<=", 2),
                                                              Bound(fb + "max_new_pages", "<=", 5)), _s03),
        Rule("SPRING-04", "A title already fetched is not fetched again within a week.",
             (Bound(fb + "title_refetch_after_s", ">=", 604800),), _s04),
        Rule("SPRING-05", "On 429 it stops: no more requests to that host that day.",
             (Bound("responses.on_429", "in", ("stop_host_today", "close_source")),), _s05),
        Rule("SPRING-06", "An error response is retried at most three more times the same day.",
             (Bound("responses.retries_per_day", "<=", 3),), _s06, binds=("responses.retry_backoff_s",)),
        Rule("SPRING-07", "A redirect is followed as a separate request.", (Bound("redirects.max_hops", ">=", 1),),
             common.redirect_is_a_request),
        Rule("SPRING-08", "At most one request every 10 s to a site; a longer Crawl-delay honoured up to 60 s.",
             (Bound(pol + "min_delay_s", ">=", 10), Bound(pol + "crawl_delay_cap_s", "==", 60.0)), common.pacing),
        Rule("SPRING-09", "robots.txt changes take effect at the next visit, within a day.",
             (Bound("robots.cache_ttl_s", "<=", DAY),), _s09),
        Rule("SPRING-10", "robots.txt unreadable (5xx) or refused (401/403): nothing is fetched.",
             (Bound("robots.on_5xx", "==", "deny"), Bound("robots.on_401_403", "==", "deny")), _s10),
    ]

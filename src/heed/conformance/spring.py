"""SPRING-01..10: SpringStudioBot's daily page visits, sitemap fallback, refusals and robots.txt.

Scenarios: ``spring-daily`` (three daily visits, no waits: a listing with bylines, a JavaScript
page with a sitemap index, a redirect chain, a site that closes itself after day 1 (its
robots.txt slow to answer), a page answering 500, robots.txt answering 500, 503, 401, 403, 404),
``spring-refusals`` (a host answering 429 and a calm host; 06:00 and 15:00 on day 1, 06:00 on
day 2), ``spring-errors`` (a page answering 500, first seen at 23:30, then in the 06:00 round:
retries stay within the UTC day) and ``spring-real`` (the profile's own 10 s, unscaled: robots.txt,
then a listing). SPRING-07 and -08 also read the shared ``common`` and ``pacing`` scenarios (10 s
and 60 s at 1/20 scale)."""
from __future__ import annotations

import time
from collections import Counter
from datetime import UTC, datetime
from itertools import pairwise

from heed_core.kinds.walk import fallback
from heed_core.work import Source

from heed.conformance import common
from heed.conformance.model import Bound, Cadence, Proof, Rule, Runs, Scenario, secs, utc
from heed.conformance.runner import Bench
from heed.conformance.sites import TRAPS, html_page, robots, sitemap_index, urlset
from heed.conformance.stack import Output, sim_time
from heed.demo.web import Hit, Route

__all__ = ["rules", "scenarios"]

START = utc("2026-12-01T06:00")  # the shipped cron(0 6 * * ? *)
DAY = 86400.0
OPEN = "User-agent: *\nDisallow: /privat/\n"
APP = [f"/app/sak/{i}" for i in range(7)]
FAILING = (500, 503, 401, 403)
SECRETS = ("Kari Nordmann", "bruker_", "hemmelig-brodtekst", "kommentar")
ITEM_KEYS = {"detail_type", "bot", "id", "kind", "source", "source_url", "found_at", "url", "title", "published"}
CHILDREN = {"/sm/1.xml": APP[:4] + ["/annet/1", "/annet/2"], "/sm/2.xml": APP[4:], "/sm/3.xml": ["/app/sak/99",
                                                                                                  "/app/sak/98"]}
CHAIN = ["/kjede/0", "/kjede/1", "/kjede/2"]  # two redirects, then the listing
SLOW_ROBOTS_S = 0.3
LATE = START - 6.5 * 3600  # 23:30 the evening before day 1


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


def _slow(route: Route, seconds: float) -> Route:
    """The same answer, ``seconds`` late (the copy of robots.txt is then taken after the round began)."""
    def body(hit: Hit) -> str:
        time.sleep(seconds)
        return str(route.body)
    return Route(body=body, content_type=route.content_type)


def _hm(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%H:%M")


def _play_daily(b: Bench) -> Output:
    s, shell = b.sites, Route(body=html_page("Innsyn", "<div id='app'></div><script src='/js/app.js'></script>"))
    titled = Route(body=html_page("En side", "<main><p>Innhold.</p></main>"))
    ny = s.add("nyheter", {"/robots.txt": robots(OPEN),
                           "/nyheter/": _listing([(f"Sak {i}", f"/sak/{i}") for i in range(3)])})
    js = s.add("jsapp", {"/robots.txt": robots(OPEN), "/app/": shell,
                         "/sitemap.xml": sitemap_index(list(CHILDREN)),
                         **{c: urlset(paths) for c, paths in CHILDREN.items()}}, fallback=titled)
    js2 = s.add("jsapp2", {"/robots.txt": robots(OPEN + "Sitemap: {{base}}/news-sitemap.xml\n"), "/app/": shell,
                           "/sitemap.xml": sitemap_index(["/sm/a.xml", "/sm/b.xml"]),
                           "/news-sitemap.xml": sitemap_index(["/sm/c.xml", "/sm/d.xml"]),
                           **{f"/sm/{c}.xml": urlset([f"/annet/{c}"]) for c in "abcd"}}, fallback=titled)
    closing = s.add("stengt", {"/robots.txt": _slow(robots(OPEN), SLOW_ROBOTS_S),
                               "/liste/": _listing([("Stengt sak", "/sak/1")])})
    chain = s.add("kjede", {"/robots.txt": robots(OPEN), CHAIN[0]: Route(status=301, location=CHAIN[1]),
                            CHAIN[1]: Route(status=301, location=CHAIN[2]),
                            CHAIN[2]: _listing([("Enden", "/sak/2")])})
    broken = s.add("feil", {"/robots.txt": robots(OPEN), "/feil/": Route(body="<h1>500</h1>", status=500)})
    sources = [Source("nyheter", ny + "/nyheter/", "page"), Source("jsapp", js + "/app/", "page"),
               Source("jsapp2", js2 + "/app/", "page"), Source("stengt", closing + "/liste/", "page"),
               Source("feil", broken + "/feil/", "page"), Source("kjede", chain + CHAIN[0], "page")]
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


def _play_errors(b: Bench) -> Output:
    broken = b.sites.add("feil", {"/robots.txt": robots(OPEN), "/feil/": Route(body="<h1>500</h1>", status=500)})
    stack = b.stack(b.derived(), [Source("feil", broken + "/feil/", "page")], LATE - 60)
    stack.round(LATE)
    stack.advance_to(START - 60)
    stack.round(START)
    stack.advance_to(START + 17 * 3600)  # the day's retries come due, well before its end
    return stack.finish()


def _play_real(b: Bench) -> Output:
    # The shipped 10 s as it is; a longer gap of the user's is scaled down to 10.5 s.
    b.extra["scale"] = scale = min(1.0, 10.5 / max(b.profile.politeness.min_delay_s, 1e-9))
    base = b.sites.add("ekte", {"/robots.txt": robots(OPEN), "/liste/": _listing([("Ekte", "/sak/1")])})
    wait = b.profile.politeness.min_delay_s * scale
    stack = b.stack(b.derived(scale=scale), [Source("ekte", base + "/liste/", "page")], START - 60,
                    patience_s=wait + 3.0)
    stack.round(START)
    return stack.finish()


def scenarios() -> list[Scenario]:
    return [Scenario("spring-daily", 0, "three daily visits over eleven hosts", _play_daily),
            Scenario("spring-refusals", 0, "a 429 host and a calm host, over two days", _play_refusals),
            Scenario("spring-errors", 0, "a page answering 500, first at 23:30, then at 06:00", _play_errors),
            Scenario("spring-real", 1, "the profile's own gap: robots.txt, then a listing", _play_real)]


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
    asked = seen.paths("nyheter").count("/nyheter/")
    proof.that(asked == 3, f"the site saw the listing {asked} times, as the run recorded")
    entry = Counter(_day(sim_time(x)) for x in seen.requests_to("jsapp", "page") if x["url"].endswith("/app/"))
    proof.that(entry == {1: 1, 2: 1, 3: 1}, "one page per source each visit (the sitemap fallback's titles aside)")
    return proof


def _fallback(r: Runs) -> tuple[list[str], list[str]]:
    """The child sitemaps the profile lets the fallback read, and the pages under /app/ they list."""
    children = list(CHILDREN)[:fallback(r.profile).max_child_sitemaps]
    return children, [p for c in children for p in CHILDREN[c] if p.startswith("/app/")]


def _s03(r: Runs) -> Proof:
    proof, seen = Proof(), r["spring-daily"]
    children, under = _fallback(r)
    cap = min(fallback(r.profile).max_new_pages, len(under))
    day1 = ["/" + x["url"].split("/", 3)[-1] for x in seen.requests_to("jsapp") if _day(sim_time(x)) == 1]
    maps = [p for p in day1 if p.endswith(".xml")]
    proof.that(maps == ["/sitemap.xml", *children], f"a page without items: sitemap.xml and {len(children)} of "
               f"{len(CHILDREN)} child sitemaps ({', '.join(maps)})")
    titles = [p for p in day1 if p.startswith(("/app/sak/", "/annet/"))]
    proof.that(len(titles) == cap and set(titles) <= set(under),
               f"{len(titles)} titles fetched, all under /app/ ({len(APP)} there, more elsewhere)")
    found = {"/" + i["url"].split("/", 3)[-1] for i in seen.out.of("item.found", "jsapp")}
    proof.that(bool(titles) and set(titles) <= found, f"each recorded as an item of the page ({len(found)} items)")
    stray = sorted({p for p in seen.paths("jsapp") if p.startswith(("/js/", "/annet/"))})
    proof.that(not stray, "the site saw no script and no page outside /app/" + (f" (saw {stray})" if stray else ""))
    per_day = Counter((_day(sim_time(x)), x["url"].split("/", 3)[-1]) for x in seen.requests_to("jsapp2")
                      if x["url"].endswith(".xml"))
    days = sorted({d for d, _ in per_day})
    worst = max((sum(n for (d, _), n in per_day.items() if d == day) for day in days), default=0)
    proof.that(bool(days) and all(per_day[(d, "sitemap.xml")] == 1 for d in days)
               and worst <= 1 + len(children) and len({p for p in seen.paths("jsapp2") if p.endswith(".xml")})
               <= 1 + len(children),
               f"robots.txt naming another sitemap index: still sitemap.xml and at most {len(children)} "
               f"child sitemap{'s' if len(children) != 1 else ''} a visit ({worst} sitemaps at most)")
    return proof


def _s04(r: Runs) -> Proof:
    proof, seen = Proof(), r["spring-daily"]
    titles = [(sim_time(x), x["url"].split("/", 3)[-1]) for x in seen.requests_to("jsapp") if "/app/sak/" in x["url"]]
    per_page = Counter(p for _, p in titles)
    _, under = _fallback(r)
    n = fallback(r.profile).max_new_pages
    left, expect, quiet = len(under), {}, 0  # day -> titles fetched; skips of titles fetched before
    for day in (1, 2, 3):
        quiet += len(under) - left
        if min(n, left):
            expect[day] = min(n, left)
        left -= min(n, left)
    proof.that(bool(per_page) and set(per_page.values()) == {1} and len(per_page) == len(under) - left,
               f"over three days each of {len(per_page)} titles fetched once")
    days = dict(Counter(_day(t) for t, _ in titles))
    proof.that(days == expect, f"{n} new a visit at most, none again: titles fetched by day {days}")
    skipped = len(seen.out.skipped("seen_recently", "jsapp"))
    proof.that(skipped == quiet, f"the {skipped} titles met again within the week recorded as seen_recently")
    site = Counter(p.lstrip("/") for p in seen.paths("jsapp") if p.startswith("/app/sak/"))
    proof.that(site == per_page, "the site saw the same title requests the run recorded")
    return proof


def _s05(r: Runs) -> Proof:
    proof, seen = Proof(), r["spring-refusals"]
    busy = [(sim_time(x), x["url"].split("/", 3)[-1]) for x in seen.requests_to("travel")]
    day1 = [p for t, p in busy if t < START + DAY - 6 * 3600]
    proof.that(day1 == ["robots.txt", "a/"], f"after a 429 the host saw nothing more that day, not at 15:00 ({day1})")
    answered = [x.status for x in seen.log("travel")][:2]
    proof.that(answered == [200, 429], f"the site's log: robots.txt {answered[0] if answered else '-'}, then the 429")
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
    err = r["spring-errors"]
    retries, backoff = r.profile.responses.retries_per_day, r.profile.responses.retry_backoff_s
    times = sorted(sim_time(x) for x in err.requests_to("feil", "page"))
    midnight = START - 6 * 3600
    for first, label in ((LATE, "first seen at 23:30"), (START, "in the 06:00 round")):
        day = [t for t in times if t >= first - 1 and int(t // DAY) == int(first // DAY)]
        # When each retry falls (the backoff doubling); one that would fall on the next UTC day is not made.
        due = [first + backoff * (2 ** k - 1) for k in range(retries + 1)]
        expect = len([t for t in due if int(t // DAY) == int(first // DAY)])
        waited = all(b - a >= backoff * 2 ** k for k, (a, b) in enumerate(pairwise(day)))
        proof.that(len(day) == expect and waited, f"{label}: asked at {', '.join(map(_hm, day))} "
                   f"({len(day)} of at most 1 + {retries}, each retry after the backoff, doubled)")
    proof.that(not [t for t in times if midnight <= t < START], "none after midnight: the evening's retries ended "
               "with its day")
    asked = err.paths("feil").count("/feil/")
    proof.that(asked == len(times), f"the site saw {asked} requests for the page, as the run recorded")
    proof.that(len(err.out.skipped("retries_exhausted", "feil")) == 2, "each day's tries ended as retries_exhausted")
    return proof


def _s07(r: Runs) -> Proof:
    proof = common.redirect_is_a_request(r)
    moved = [i for i in r["common"].out.of("item.found") if i.get("title") == "Verhuisd"]
    proof.that(len(moved) == 1 and moved[0]["source_url"].endswith("/liste/moved"),
               "the moved listing's item recorded under the source that named the old address")
    seen = r["spring-daily"]
    hops = min(r.profile.redirects.max_hops, len(CHAIN) - 1)
    day1 = [x for x in seen.requests_to("kjede") if _day(sim_time(x)) == 1]
    asked = ["/" + x["url"].split("/", 3)[-1] for x in day1]
    log = seen.log("kjede")[:len(asked)]
    apart = all(b.t_start >= a.t_end for a, b in pairwise(log))
    answers = [x.status for x in log][1:]
    proof.that(asked == ["/robots.txt", *CHAIN[:hops + 1]] and [x.path for x in log] == asked and apart
               and answers == [301, 301, 200][:len(answers)],
               f"a chain of two redirects: {hops + 1} GETs, one after the other ({', '.join(asked[1:])}: "
               f"{', '.join(map(str, answers))})")
    if hops == len(CHAIN) - 1:
        proof.that([i["title"] for i in seen.out.of("item.found", "kjede")][:1] == ["Enden"],
                   "the listing at its end read")
    return proof


def _s08(r: Runs) -> Proof:
    proof, real = Proof(), r["spring-real"]
    log, least = real.log("ekte"), r.profile.politeness.min_delay_s * real.extra["scale"]
    g = real.gaps("ekte")
    proof.that([x.path for x in log] == ["/robots.txt", "/liste/"] and bool(g) and min(g) >= least
               and not real.overlaps(), f"the profile's own gap: robots.txt, then the listing "
               f"{secs(min(g, default=0))} after its end (>= {secs(least)})")
    proof.that([x.header("User-Agent") for x in log] == [r.profile.user_agent] * len(log)
               and [x.get("purpose") for x in real.out.requests] == ["robots", "page"]
               and [i["title"] for i in real.out.of("item.found")] == ["Ekte"],
               "both as the bot, the listing's item read")
    if real.extra["scale"] != 1:
        proof.note(f"waits scaled by {real.extra['scale']:.2f} (the profile's gap is long)")
    proof.extend(common.pacing(r))
    return proof


def _s09(r: Runs) -> Proof:
    proof, seen = Proof(), r["spring-daily"]
    day2 = [x["url"].split("/", 3)[-1] for x in seen.requests_to("stengt") if _day(sim_time(x)) == 2]
    proof.that(day2 == ["robots.txt"], f"closed to the bot after day 1 (whose robots.txt took {SLOW_ROBOTS_S:g} s "
               "to answer): day 2 read robots.txt again, fetched nothing")
    reads = [sim_time(x) for x in seen.requests_to("nyheter", "robots")]
    pages = [sim_time(x) for x in seen.requests_to("nyheter", "page")]
    proof.that(all(any(0 <= t - rt <= DAY for rt in reads) for t in pages),
               f"every page under a robots.txt read less than a day before ({len(reads)} reads, {len(pages)} pages)")
    return proof


def _s10(r: Runs) -> Proof:
    proof, seen = Proof(), r["spring-daily"]
    for status in FAILING:
        why = {x["reason"] for x in seen.out.skips if x.get("source") == f"r{status}"}
        proof.that(set(seen.paths(f"r{status}")) == {"/robots.txt"} and bool(why)
                   and why <= {"robots_unavailable", "robots_disallowed"},
                   f"robots.txt {status}: nothing else fetched, the page recorded as {'/'.join(sorted(why)) or '-'}")
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
             _s07),
        Rule("SPRING-08", "At most one request every 10 s to a site; a longer Crawl-delay honoured up to 60 s.",
             (Bound(pol + "min_delay_s", ">=", 10), Bound(pol + "crawl_delay_cap_s", "==", 60.0)), _s08),
        Rule("SPRING-09", "robots.txt changes take effect at the next visit, within a day.",
             (Bound("robots.cache_ttl_s", "<=", DAY),), _s09),
        Rule("SPRING-10", "robots.txt unreadable (5xx) or refused (401/403): nothing is fetched.",
             (Bound("robots.on_5xx", "==", "deny"), Bound("robots.on_401_403", "==", "deny")), _s10),
    ]

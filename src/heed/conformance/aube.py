"""AUBE-01..12: AubeBot's feeds, articles, caps and cycles, proven from the sites' side.

Scenarios: ``aube-round`` (one round over seven hosts, no waits: one of them with RFC 9309
groups, wildcards and a tie), ``aube-cycles`` (two feeds through five quarter hours, a ban at
10:31), ``aube-caps`` (fourteen feeds of six short items, read in two quarter hours: both article
caps at once, on the profile's own caps) and ``aube-real`` (the profile's own 1.5 s, unscaled: a
feed that takes 0.6 s to answer, and a host asking Crawl-delay 2.5 s)."""
from __future__ import annotations

import time
from collections import Counter
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

from heed_core.work import Source

from heed.conformance import common
from heed.conformance.deploy import request_slots
from heed.conformance.model import Bound, Cadence, Proof, Rule, Runs, Scenario, scale_words, secs, utc
from heed.conformance.reach import REACH
from heed.conformance.runner import Bench
from heed.conformance.sites import TRAPS, html_page, robots, rss
from heed.conformance.stack import Output, sim_time
from heed.demo.web import Hit, Route

__all__ = ["rules", "scenarios"]

T10 = utc("2026-12-01T10:00")
Q = 900.0
LONG = "Un sommario lungo e completo. " * 30  # 900 characters: the feed suffices (AUBE-03)
IMAGES = ("<enclosure url='{{base}}/img/e.jpg' type='image/jpeg' length='1000'/>"
          "<media:content url='{{base}}/img/m.jpg' medium='image'/>")
OPEN = "User-agent: *\nAllow: /\n"
# AUBE-04's RFC 9309 host: `*` closes everything; the bot's own group (named in lower case) opens
# all but /news/ (except /news/public/), a path ending in .pdf, and /tie/ (Allow wins a tie).
RFC_ALLOWED = ("/a/1", "/news/public/y", "/tie/z", "/files/doc.pdf?v=1")
RFC_DISALLOWED = ("/news/x", "/files/doc.pdf")
BIG = 45  # items in the big feed: more than AUBE-01's 40


def _feed(items: list[dict[str, str]], **kw: Any) -> Route:
    return Route(body=rss(items, **kw), content_type="application/rss+xml; charset=utf-8", conditional=True)


def _article(title: str) -> Route:
    nav = "".join(f"<a href='/art/altro/{i}'>altro</a><a href='/tag/{i}'>tag</a>" for i in range(3))
    return Route(body=html_page(title, f"<main><article><h1>{title}</h1><p>Testo.</p><img src='/img/a.jpg'>"
                                       f"</article><nav>{nav}</nav></main>{TRAPS}",
                                head="<meta property='og:image' content='/img/og.jpg'>"))


def _rfc_robots(token: str) -> str:
    return (f"User-agent: *\nDisallow: /\n\nUser-agent: {token.lower()}\nDisallow: /news/\nAllow: /news/public/\n"
            "Disallow: /*.pdf$\nAllow: /tie/\nDisallow: /tie/\n")


def _play_round(b: Bench) -> Output:
    s, sources = b.sites, []
    big = [{"title": f"Notizia {i}", "link": f"{{{{base}}}}/n/{i}", "summary": LONG + "<img src='{{base}}/img/d.jpg'>",
            "extra": IMAGES} for i in range(BIG)]
    feeds = {
        "big": _feed(big, extra="<image><url>{{base}}/img/logo.png</url><title>T</title>"
                                "<link>{{base}}/</link></image>"),
        "short": _feed([{"title": "Breve", "link": "{{base}}/art/599", "summary": "s" * 599, "extra": IMAGES},
                        {"title": "Giusto", "link": "{{base}}/art/600", "summary": "s" * 600},
                        {"title": "Lungo", "link": "{{base}}/art/long", "summary": LONG}]),
    }
    for name, feed in feeds.items():
        base = s.add(name, {"/robots.txt": robots(OPEN), "/feed.xml": feed}, fallback=_article(name))
        sources.append(Source(name, base + "/feed.xml", "feed"))
    base = s.add("closed", {"/robots.txt": robots(f"User-agent: {b.profile.robots_token}\nDisallow: /feed\n"),
                            "/feed.xml": _feed([{"title": "Chiuso", "link": "{{base}}/c/1"}])})
    sources.append(Source("closed", base + "/feed.xml", "feed"))
    # One feed per URL, so the article caps (AUBE-10) leave every one of them to robots.txt.
    rfc = {"/robots.txt": robots(_rfc_robots(b.profile.robots_token))}
    for i, path in enumerate(RFC_ALLOWED + RFC_DISALLOWED):
        rfc[f"/feeds/{i}.xml"] = _feed([{"title": f"RFC {path}", "link": "{{base}}" + path, "summary": "Breve."}])
    base = s.add("rfc", rfc, fallback=_article("Articolo"))
    sources += [Source(f"rfc-{i}", f"{base}/feeds/{i}.xml", "feed") for i in range(len(RFC_ALLOWED + RFC_DISALLOWED))]
    shared = s.add("shared", {"/robots.txt": robots(OPEN), "/art/shared": _article("Condiviso")})
    for twin in ("twin1", "twin2"):  # two feeds read in one round link one article on a third host
        base = s.add(twin, {"/robots.txt": robots(OPEN),
                            "/feed.xml": _feed([{"title": "Condiviso", "link": shared + "/art/shared"}])})
        sources.append(Source(twin, base + "/feed.xml", "feed"))
    b.extra["feeds"] = sorted(src.url for src in sources)
    stack = b.stack(b.derived(), sources, T10 - 60)
    stack.round(T10)
    return stack.finish()


def _play_cycles(b: Bench) -> Output:
    v1 = [{"title": "A", "link": "{{base}}/art/a", "summary": "Breve A."}, {"title": "B", "link": "{{base}}/art/b",
                                                                         "summary": LONG}]
    art = _article("Articolo")
    one = b.sites.add("uno", {"/robots.txt": robots(OPEN), "/feed.xml": _feed(v1)}, fallback=art)
    two = b.sites.add("due", {"/robots.txt": robots(OPEN), "/feed.xml": _feed(
        [{"title": "D", "link": "{{base}}/art/d", "summary": LONG}])}, fallback=art)
    stack = b.stack(b.derived(), [Source("uno", one + "/feed.xml", "feed"), Source("due", two + "/feed.xml", "feed")],
                    T10 - 60)
    stack.round(T10)
    stack.round(T10 + 300)  # an early firing: too soon for either feed
    stack.advance_to(T10 + 600)
    b.sites.set_route("uno", "/feed.xml", _feed(v1 + [{"title": "C", "link": "{{base}}/art/c", "summary": "Breve C."}]))
    b.sites.set_route("due", "/feed.xml", _feed([{"title": "D", "link": "{{base}}/art/d", "summary": LONG},
                                                 {"title": "A again", "link": one + "/art/a", "summary": "Breve."}]))
    stack.round(T10 + Q)
    stack.round(T10 + 2 * Q)
    stack.advance_to(T10 + 2 * Q + 60)
    b.extra["ban"] = stack.now
    b.sites.set_route("uno", "/robots.txt", robots(f"User-agent: {b.profile.robots_token}\nDisallow: /\n"))
    stack.round(T10 + 3 * Q)
    stack.round(T10 + 4 * Q)
    return stack.finish()


FEEDS, ITEMS = 14, 6  # 84 short items: more than 5 a source and 60 in all (AUBE-10's promise)


def _caps_feed(f: int, gen: int) -> Route:
    return _feed([{"title": f"{gen}-{f}-{i}", "link": f"{{{{base}}}}/art/{gen}/{f}-{i}", "summary": "Breve."}
                  for i in range(ITEMS)])


def _play_caps(b: Bench) -> Output:
    sources = []
    for h in range(4):
        routes = {"/robots.txt": robots(OPEN)}
        for f in range(h, FEEDS, 4):
            routes[f"/feed{f}.xml"] = _caps_feed(f, 0)
        base = b.sites.add(f"h{h}", routes, fallback=_article("Articolo"))
        sources += [Source(f"f{f}", f"{base}/feed{f}.xml", "feed") for f in range(h, FEEDS, 4)]
    stack = b.stack(b.derived(), sources, T10 - 60)
    stack.round(T10)
    for f in range(FEEDS):  # the next quarter hour: six new short items in every feed
        b.sites.set_route(f"h{f % 4}", f"/feed{f}.xml", _caps_feed(f, 1))
    stack.round(T10 + Q + 30)
    return stack.finish()


def _play_real(b: Bench) -> Output:
    pol = b.profile.politeness
    b.extra["scale"] = scale = min(1.0, 3.0 / max(pol.min_delay_s, 1e-9))
    items = [{"title": f"N{i}", "link": f"{{{{base}}}}/n/{i}", "summary": LONG} for i in range(45)]
    items[0] = {"title": "Breve 1", "link": "{{base}}/art/1", "summary": "Breve."}
    text = rss(items)

    def slow_feed(hit: Hit) -> str:  # AUBE-09: a request that takes time, so its end counts
        time.sleep(0.6)
        return text
    slow = Route(body=slow_feed, content_type="application/rss+xml; charset=utf-8")
    x = b.sites.add("x", {"/robots.txt": robots(OPEN), "/feed.xml": slow, "/art/1": _article("Articolo")})
    y = b.sites.add("y", {"/robots.txt": robots(f"User-agent: {b.profile.robots_token}\nCrawl-delay: 2.5\n"),
                          "/feed.xml": _feed([{"title": "Y", "link": "{{base}}/y/1", "summary": LONG}])})
    sources = [Source("x", x + "/feed.xml", "feed"), Source("y", y + "/feed.xml", "feed")]
    stack = b.stack(b.derived(scale=scale), sources, T10 - 60, patience_s=4.0)
    stack.round(T10)
    return stack.finish()


def scenarios() -> list[Scenario]:
    return [Scenario("aube-round", 0, "one round over seven hosts", _play_round),
            Scenario("aube-cycles", 0, "two feeds through five quarter hours, a ban at 10:31", _play_cycles),
            Scenario("aube-caps", 0, f"{FEEDS} feeds of {ITEMS} short items, in two quarter hours", _play_caps),
            Scenario("aube-real", 1, "the profile's own waits: a slow feed, a Crawl-delay of 2.5 s", _play_real)]


# --- the checks -----------------------------------------------------------------------------------

def _path(url: str) -> str:
    return "/" + url.split("/", 3)[-1]


def _a01(r: Runs) -> Proof:
    proof, seen = Proof(), r["aube-round"]
    cap = r.profile.feed.max_items
    keep = min(cap, BIG)
    proof.that(seen.paths("big") == ["/robots.txt", "/feed.xml"],
               f"a {BIG}-item feed: the site saw robots.txt and the feed only")
    kept = sorted(int(i["url"].rsplit("/", 1)[1]) for i in seen.out.of("item.found", "big"))
    proof.that(kept == list(range(keep)), f"{len(kept)} items kept, the first {keep} in the feed's order")
    capped = seen.out.skipped("cap_reached", "big")
    proof.that(len(capped) == (1 if cap < BIG else 0), f"the rest recorded as cap_reached ({len(capped)} skip)")
    real = r["aube-real"]
    found = real.out.of("item.found", "x")
    proof.that(len(found) == keep and real.paths("x") == ["/robots.txt", "/feed.xml", "/art/1"]
               and real.paths("y") == ["/robots.txt", "/feed.xml"],
               f"on the profile's own waits too: {len(found)} of {BIG} items kept, only the one short item's page "
               f"opened ({', '.join(real.paths('x'))})")
    return proof


def _a02(r: Runs) -> Proof:
    proof, seen = Proof(), r["aube-cycles"]
    reads = [x for x in seen.log("uno") if x.path == "/feed.xml"]
    proof.that(bool(reads) and reads[0].header("If-None-Match") is None
               and all(x.header("If-None-Match") and x.header("If-Modified-Since") for x in reads[1:]),
               f"{len(reads) - 1} re-reads sent If-None-Match and If-Modified-Since")
    statuses = [x.status for x in reads[:3]]
    proof.that(statuses == [200, 200, 304] and reads[2].bytes == 0,
               f"changed feed 200, unchanged feed 304 with no body ({statuses})")
    logged = [x["status"] for x in seen.requests_to("uno", "feed")][:3]
    proof.that(logged == statuses, f"the run's own log of those reads agrees ({logged})")
    proof.that(len(seen.out.of("item.found", "uno")) == 3, "the 304 produced no item")
    return proof


def _a03(r: Runs) -> Proof:
    proof, rnd, cyc = Proof(), r["aube-round"], r["aube-cycles"]
    proof.that(rnd.paths("short") == ["/robots.txt", "/feed.xml", "/art/599"],
               "summaries of 599, 600, 900 characters: only the 599's page opened")
    read = [_path(i["url"]) for i in rnd.out.of("article.read", "short")]
    proof.that(read == ["/art/599"], f"and only it read as an article ({read})")
    proof.that(rnd.paths("shared").count("/art/shared") == 1, "one article linked by two feeds in a round: opened once")
    opened = Counter(p for p in cyc.paths("uno") if p.startswith("/art/"))
    proof.that(opened == {"/art/a": 1, "/art/c": 1},
               f"over five cycles each short item's page opened once, the long one never ({dict(opened)})")
    again = [s for s in cyc.out.skipped("already_read") if s["url"] == cyc.bases["uno"] + "/art/a"]
    proof.that(bool(again), f"linked again by both feeds: recorded as already_read ({len(again)} times)")
    return proof


def _a04(r: Runs) -> Proof:
    proof, rnd = Proof(), r["aube-round"]
    why = [s["reason"] for s in rnd.out.skips if s.get("source") == "closed"]
    proof.that(rnd.paths("closed") == ["/robots.txt"] and why == ["robots_disallowed"],
               f"a feed its robots.txt disallows: not read, recorded as {', '.join(why) or 'nothing'}")
    proof.that(all(log[0].path == "/robots.txt" for log in rnd.logs.values() if log),
               f"robots.txt first on all {len(rnd.logs)} hosts")
    token = r.profile.robots_token.lower()
    rfc = rnd.paths("rfc")
    feeds = [p for p in rfc if p.startswith("/feeds/")]
    opened = sorted(p for p in rfc[1:] if not p.startswith("/feeds/"))
    proof.that(rfc[:1] == ["/robots.txt"] and len(feeds) == len(RFC_ALLOWED + RFC_DISALLOWED)
               and opened == sorted(RFC_ALLOWED),
               f"`*` closes all: feeds read under the {token} group; {len(set(opened) & set(RFC_ALLOWED))} of "
               f"{len(RFC_ALLOWED)} allowed URLs opened (a query after /*.pdf$ too), nothing else")
    refused = sorted(_path(s["url"]) for s in rnd.out.skipped("robots_disallowed")
                     if str(s.get("source", "")).startswith("rfc-"))
    proof.that(refused == sorted(RFC_DISALLOWED), f"{', '.join(refused) or 'none'} recorded as robots_disallowed")
    proof.extend(common.groups(r))
    pacing = r["pacing"]
    cap_s = min(float(r.profile.politeness.crawl_delay_cap_s), 30.0)
    cap = cap_s * pacing.scale
    g = pacing.gaps("capped")
    proof.that(bool(g) and cap <= min(g) < cap + 2,
               f"Crawl-delay 30 s waited the cap ({cap_s:g} s at {scale_words(pacing.scale)}: "
               f"{secs(min(g, default=0))})")
    real = r["aube-real"]
    g = real.gaps("y")
    proof.that(bool(g) and g[0] >= 2.5 * real.extra["scale"], f"Crawl-delay 2.5 s, longer than the gap, prevailed "
               f"({secs(g[0]) if g else '-'})")
    return proof


def _a05(r: Runs) -> Proof:
    proof, rnd = Proof(), r["aube-round"]
    published = {i["url"] for i in rnd.out.of("item.found")}
    allowed = published | set(rnd.extra["feeds"])
    stray = [f"{s}{x.path}" for s, log in rnd.logs.items() for x in log
             if x.path != "/robots.txt" and rnd.bases[s] + x.path not in allowed]
    proof.that(not stray, f"every request was robots.txt, a feed or a link the feed published "
               f"({sum(len(v) for v in rnd.logs.values())} requests)" + (f": asked {stray[:3]}" if stray else ""))
    inner = [x.path for x in rnd.every() if x.path.startswith(("/art/altro/", "/tag/")) or x.path == "/"]
    opened = len(rnd.out.of("article.read"))
    proof.that(opened > 0 and not inner, f"{opened} articles read, each linking other articles and tags, and the "
               "feeds their home page: none of those asked" + (f" (asked {inner[:3]})" if inner else ""))
    return proof


def _a06(r: Runs) -> Proof:
    proof = common.public_only(r)
    seen, paid = r["common"], f"{REACH[r.bot].prefix}/betalt"
    asked = seen.paths("open").count(paid)
    read = [i for i in seen.out.of("article.read") if i["url"].endswith(paid)]
    proof.that(asked == 1 and not read, f"the paywalled article asked {asked} time(s), to learn it is paywalled; "
               f"{len(read)} article.read of it")
    proof.extend(common.get_only(r))
    return proof


def _a07(r: Runs) -> Proof:
    proof, rnd = Proof(), r["aube-round"]
    imgs = [x.path for x in rnd.every() if x.path.startswith("/img/")]
    proof.that(not imgs, "enclosures, media:content, a channel logo, <img> and og:image: no image requested")
    proof.that("/img/" not in repr(rnd.out.items) and "/img/" not in rnd.out.stored, "none named in what it keeps")
    return proof


def _a08(r: Runs) -> Proof:
    proof, cyc = Proof(), r["aube-cycles"]
    for site in ("uno", "due"):
        reads = [sim_time(x) for x in cyc.requests_to(site, "feed")]
        early = [t for t in reads if T10 + 300 <= t < T10 + Q]
        apart = min((b - a for a, b in pairwise(reads)), default=0)
        proof.that(not early and apart >= Q and len(reads) == cyc.paths(site).count("/feed.xml"),
                   f"{site}: {len(reads)} reads, none at the 10:05 firing, at least {apart / 60:.0f} min apart")
    firing = datetime.fromtimestamp(T10 + 300, UTC).strftime("%Y-%m-%dT%H:%M")
    recent = {s["source"] for s in cyc.out.skipped("seen_recently") if str(s.get("round", "")).startswith(firing)}
    proof.that(recent == {"uno", "due"}, f"the early firing recorded as seen_recently for {len(recent)} of 2 feeds")
    return proof


def _a09(r: Runs) -> Proof:
    proof, real = Proof(), r["aube-real"]
    least = 1.5 * real.extra["scale"]
    log = real.log("x")
    g = real.gaps("x")
    proof.that(bool(g) and min(g) >= least, f"min gap {secs(min(g, default=0))} over {len(g)} gaps, end to start")
    if len(log) >= 3:
        feed, article = log[1], log[2]
        proof.that(feed.t_end - feed.t_start >= 0.6 and article.t_start - feed.t_end >= least,
                   f"after a feed that took {secs(feed.t_end - feed.t_start)}, the next request "
                   f"{secs(article.t_start - feed.t_end)} after its end")
    else:
        proof.that(False, f"the site saw robots.txt, the feed and the article ({[x.path for x in log]})")
    if real.extra["scale"] != 1:
        proof.note(f"waits scaled by {real.extra['scale']:.2f} (the profile's gap is long)")
    return proof


def _a10(r: Runs) -> Proof:
    proof, caps = Proof(), r["aube-caps"]
    follow = r.profile.feed.article_followup
    if follow is None or follow.per_source_per_window is None or follow.total_per_window is None:
        proof.that(False, "tasks.feed.article_followup: article pages opened under both caps")
        return proof
    each, most = follow.per_source_per_window, follow.total_per_window
    due = min(most, FEEDS * min(each, ITEMS))  # what the caps let through of one quarter hour's items
    asked = caps.out.requested("article")
    slots = sorted({int(sim_time(x) // Q) for x in asked})
    for n, slot in enumerate(slots):
        these = [x for x in asked if int(sim_time(x) // Q) == slot]
        per_source = Counter(x["source"] for x in these)
        proof.that(max(per_source.values()) <= min(each, 5) and len(these) <= min(most, 60),
                   f"quarter hour {n + 1}: {FEEDS} feeds of {ITEMS} short items, {len(these)} article pages, "
                   f"at most {max(per_source.values())} pages a source")
    proof.that(len(slots) == 2, f"articles read in {len(slots)} of the 2 quarter hours")
    first = [x for x in asked if slots and int(sim_time(x) // Q) == slots[0]]
    proof.that(len(first) == due, f"the profile's caps ({each} a source, {most} in all) bound exactly: "
                                  f"{len(first)} of {FEEDS * ITEMS} opened")
    capped = caps.out.skipped("cap_reached")
    proof.that(len(capped) + len(asked) == 2 * FEEDS * ITEMS, f"the other {len(capped)} recorded as cap_reached")
    if follow.window_s <= Q + 30:
        proof.that(len(asked) == 2 * due, f"the next quarter hour's caps counted afresh: {len(asked) - len(first)} "
                                          "more opened")
    total = sum(1 for x in caps.every() if x.path.startswith("/art/"))
    proof.that(total == len(asked), f"the sites saw {total} article requests, as the run logged")
    return proof


def _a11(r: Runs) -> Proof:
    proof = Proof()
    runs = [r[n] for n in ("aube-real", "aube-round", "aube-caps", "aube-cycles")]
    n = sum(len(s.every()) for s in runs)
    pairs = [p for s in runs for p in s.overlaps(list(s.logs))]
    overlapping = f"; {len(pairs)} pairs overlapped" if pairs else ""
    proof.that(not pairs, f"no two requests in flight at once over all hosts ({n} requests, "
                          f"{sum(len(s.logs) for s in runs)} hosts, 4 runs{overlapping})")
    aws = [s for s in runs if s.engine == "aws"]
    if aws:
        # The AWS engine runs fetcher invocations side by side, as the event source mapping does
        # (its MaximumConcurrency, never 1): what kept their requests apart is the request slot.
        most = max(int(s.out.summary.get("fetchers_at_once", 0)) for s in aws)
        proof.that(most >= 2, f"while up to {most} fetcher invocations ran at once (the request slot held "
                              "them apart, not a concurrency limit)")
    proof.extend(request_slots(r))
    return proof


def _a12(r: Runs) -> Proof:
    proof, cyc = Proof(), r["aube-cycles"]
    for site in ("uno", "due"):
        slots: dict[int, list[str]] = {}
        for x in cyc.requests_to(site):
            slots.setdefault(int(sim_time(x) // Q), []).append(x["purpose"])
        proof.that(all(v[0] == "robots" and v.count("robots") == 1 for v in slots.values()),
                   f"{site}: robots.txt read once, first, in each of {len(slots)} quarter hours")
    late = [x for x in cyc.requests_to("uno") if x["purpose"] != "robots" and sim_time(x) >= cyc.extra["ban"]]
    banned = [s for s in cyc.out.skipped("robots_disallowed", "uno") if sim_time(s, "t") >= cyc.extra["ban"]]
    proof.that(not late and bool(banned), f"banned at 10:31: nothing but robots.txt asked after it; "
               f"{len(banned)} feed reads recorded as robots_disallowed")
    return proof


def rules() -> list[Rule]:
    f, a = "tasks.feed.", "tasks.feed.article_followup."
    return [
        Rule("AUBE-01", "Reads the feed and nothing else while it suffices: at most 40 items a read.",
             (Bound(f + "max_items", "<=", 40),), _a01),
        Rule("AUBE-02", "Conditional requests: an unchanged feed costs a 304 without a body.",
             (Bound("conditional_requests", "==", True),), _a02),
        Rule("AUBE-03", "An article page only for a summary under 600 characters and a URL never read; "
                        "never twice.", (Bound(a + "mode", "==", "short_summary"),
                                         Bound(a + "summary_shorter_than", "<=", 600),
                                         Bound(a + "once_ever", "==", True)), _a03),
        Rule("AUBE-04", "robots.txt before every request, feeds too (RFC 9309); Crawl-delay honoured up to 10 s.",
             (Bound("politeness.crawl_delay_cap_s", "==", 10.0),), _a04, binds=("robots.cache_ttl_s",)),
        Rule("AUBE-05", "No exploring: only URLs the feed published, no internal link followed.", (), _a05),
        Rule("AUBE-06", "No JavaScript, account or cookies; a paywalled article is never extracted.", (), _a06),
        Rule("AUBE-07", "Takes none of the site's images.", (), _a07),
        Rule("AUBE-08", "One feed read per source every 15 minutes at most.",
             (Cadence("feed", min_apart_s=Q), Bound(f + "min_read_interval_s", ">=", Q)), _a08),
        Rule("AUBE-09", "At least 1500 ms from the end of one request to a host to the start of the next.",
             (Bound("politeness.min_delay_s", ">=", 1.5),), _a09),
        Rule("AUBE-10", "At most five article pages per source per quarter hour, sixty over all sources.",
             (Bound(a + "per_source_per_window", "<=", 5), Bound(a + "total_per_window", "<=", 60),
              Bound(a + "window_s", ">=", Q)), _a10),
        Rule("AUBE-11", "One request at a time: never two connections at once, to one host or all together.",
             (Bound("politeness.max_in_flight", "==", 1),), _a11),
        Rule("AUBE-12", "robots.txt re-read once per host per cycle: a ban works within a quarter hour.",
             (Bound("robots.cache_ttl_s", "<=", Q),), _a12),
    ]

"""PRAHA-01..09: Praha-X's feeds, articles, TDMRep, refusals and weekly site check.

Scenarios: ``praha-feeds`` (rounds at 06:00 and 10:00 over eight hosts, no waits: a city hall
with an RSS feed it writes about and an Atom feed it does not, three TDM reservations, sites
refusing with 403, 429 and challenge pages, one on two addresses, a ban, a block), ``praha-check``
(the site check fired on eight days running: the week is the crawler's own doing) and
``praha-real`` (the profile's own 3 s). PRAHA-06's shape reads the shared ``pacing`` scenario."""
from __future__ import annotations

import json
import socket

from heed_core.work import Source

from heed.conformance import common
from heed.conformance.model import Bound, Cadence, Proof, Rule, Runs, Scenario, secs, utc
from heed.conformance.runner import Bench
from heed.conformance.sites import atom, html_page, robots, rss
from heed.conformance.stack import Output, sim_time
from heed.demo.web import Route, challenge, redirect

__all__ = ["rules", "scenarios"]

MON6 = utc("2026-12-01T06:00")  # a Tuesday (the shipped feed rounds: 06, 10, 14, 18)
DAY, WEEK = 86400.0, 7 * 86400.0
LONG = ("Rada městské části schválila stavbu nové lávky pro pěší a cyklisty mezi Holešovicemi a Karlínem. "
        * 8).strip()
ARTICLES = {"/clanky/lavka": ("Nová lávka přes Vltavu", None), "/clanky/most": ("Uzavírka Karlova mostu", "header"),
            "/clanky/rozpocet": ("Rozpočet na rok 2027", "meta"),
            "/vyhrazeno/zprava": ("Výroční zpráva", "tdmrep.json"),
            "/interni/pokyn": ("Interní pokyn", None)}
PRESS = ("/tiskove/1", "/tiskove/2")
REFUSING = {"odmitnuti": "http_403", "pretizeno": "http_429", "vyzva": "challenge"}
RSS_DATE, ATOM_DATE = "2026-12-01T08:00:00", "2026-11-02T08:00:00"  # what sites.rss and sites.atom write
REASON = "kontaktní formulář: prosím nechoďte"  # the site owner's request, as the operator recorded it
BROWSER_HEADERS = ("cookie", "upgrade-insecure-requests", "sec-fetch-mode", "sec-fetch-site", "sec-ch-ua", "referer")
ITEM_KEYS = {"detail_type", "bot", "id", "kind", "source", "source_url", "found_at", "url", "title", "published",
             "summary"}
CHECK_KEYS = {"detail_type", "bot", "id", "kind", "source", "source_url", "found_at", "url", "reachable", "final_url",
              "status", "name", "icon_url", "icon_status", "error"}


def _article(title: str, tdm: str | None) -> Route:
    head = ('<meta name="tdm-reservation" content="1">' if tdm == "meta" else "") + \
        '<link rel="stylesheet" href="/styl.css"><script src="/aplikace.js"></script>'
    body = (f"<article><h1>{title}</h1><p>Text článku: {title}. Stavba začne na jaře.</p><img src='/foto/1.jpg'>"
            "<form action='/hledat' method='post'><input name='q'></form><a href='/mapa-webu'>Mapa</a></article>")
    headers = (("Set-Cookie", "relace=abc; Path=/"),) + ((("tdm-reservation", "1"),) if tdm == "header" else ())
    return Route(body=html_page(title, body, head), headers=headers)


def _feed_site(refusal: Route, robots_route: Route | None = None) -> dict[str, Route]:
    ok = rss([{"title": "Zpráva", "link": "{{base}}/zprava/1"}])
    return {"/robots.txt": robots_route or robots("User-agent: *\nAllow: /\n"), "/rss.xml": refusal,
            "/ok.xml": Route(body=ok, content_type="application/rss+xml")}


def _play_feeds(b: Bench) -> Output:
    s, sources = b.sites, []
    items = [{"title": t, "link": "{{base}}" + p, "summary": LONG if p == "/clanky/lavka" else f"Krátce: {t}."}
             for p, (t, _) in ARTICLES.items()]
    m = s.add("magistrat", {
        "/robots.txt": robots(f"User-agent: *\nDisallow: /admin/\n\nUser-agent: {b.profile.robots_token}\n"
                              "Disallow: /interni/\n"),
        "/aktuality/rss.xml": Route(body=rss(items), content_type="application/rss+xml",
                                    headers=(("Set-Cookie", "sledovani=1; Path=/"),)),
        "/tiskove/atom.xml": Route(body=atom([{"title": f"Tisková zpráva {p[-1]}", "link": "{{base}}" + p}
                                              for p in PRESS]), content_type="application/atom+xml", conditional=True),
        "/.well-known/tdmrep.json": Route(body=json.dumps([{"location": "/vyhrazeno/*", "tdm-reservation": 1}]),
                                          content_type="application/json"),
        **{p: _article(t, tdm) for p, (t, tdm) in ARTICLES.items()},
        **{p: Route(body=html_page("Tisková zpráva", "<p>Text.</p>")) for p in PRESS}})
    sources += [Source("aktuality", m + "/aktuality/rss.xml", "feed", {"write_about": True}),
                Source("tiskove", m + "/tiskove/atom.xml", "feed")]
    token = b.profile.robots_token
    z = s.add("zakaz", {"/robots.txt": robots(f"User-agent: {token}\nDisallow: /\n\nUser-agent: *\nAllow: /\n"),
                        "/rss.xml": Route(body=rss([{"title": "x", "link": "{{base}}/x"}]))})
    sources.append(Source("zakaz", z + "/rss.xml", "feed", {"write_about": True}))
    refusals = {"odmitnuti": Route(body="<h1>403</h1>", status=403),
                "pretizeno": Route(body="slow down", status=429, headers=(("Retry-After", "3600"),)),
                "vyzva": Route(body="<!DOCTYPE html><html><head><title>Just a moment...</title></head><body><noscript>"
                                    "Enable JavaScript and cookies to continue</noscript></body></html>")}
    for name, route in refusals.items():
        if name == "odmitnuti":  # PRAHA-07: a site on two addresses
            base = s.add(name, _feed_site(route), hostname="zavreno.praha.test", addresses=2)
        else:
            base = s.add(name, _feed_site(route))
        # The refused feed first: the second source on the site shows the stop holds for it too.
        sources += [Source(name, base + "/rss.xml", "feed"), Source(name + "-ok", base + "/ok.xml", "feed")]
    for name, route in (("robots429", Route(body="slow down", status=429)), ("robotsvyzva", challenge())):
        base = s.add(name, _feed_site(Route(body=""), route))
        sources.append(Source(name, base + "/rss.xml", "feed"))
    blok = s.add("blok", _feed_site(Route(body="", content_type="application/rss+xml")),
                 hostname="zpravy.blokovano.test")
    sources.append(Source("blok", blok + "/rss.xml", "feed"))
    stack = b.stack(b.derived(), sources, MON6 - 60)
    stack.store.block_domain("blokovano.test", REASON)  # PRAHA-09, by hand
    stack.round(MON6, ["feed"])
    stack.round(MON6 + 4 * 3600, ["feed"])
    out = stack.finish()
    b.extra["by_address"] = s.by_address("odmitnuti")
    return out


def _closed_port(ip: str) -> int:
    sock = socket.socket()
    sock.bind((ip, 0))
    port = int(sock.getsockname()[1])
    sock.close()
    return port


def _play_check(b: Bench) -> Output:
    home = html_page("Kulturní Praha – úvod", "<h1>Vítejte</h1><a href='/program'>Program</a><img src='/logo.png'>",
                     head='<meta property="og:site_name" content="Kulturní Praha"><link rel="icon" '
                          'href="/static/ikona.png"><link rel="stylesheet" href="/styl.css">'
                          '<script src="/app.js"></script>')
    s = b.sites
    r = s.add("presmerovani", {"/robots.txt": robots("User-agent: *\nAllow: /\n"), "/": redirect("/cs/"),
                               "/cs/": Route(body=home, headers=(("Set-Cookie", "s=1"),)),
                               "/static/ikona.png": Route(body=b"\x89PNG\r\n\x1a\n", content_type="image/png")})
    p = s.add("prosty", {"/robots.txt": robots("User-agent: *\nAllow: /\n"),
                         "/": Route(body=html_page("Antikvariát U Zlatého klíče", "<p>Knihy.</p>"))})
    dead = "127.0.0.249"
    sources = [Source("top-presmerovani", r + "/", "site_check"), Source("top-prosty", p + "/", "site_check"),
               Source("top-nedostupny", f"http://{dead}:{_closed_port(dead)}/", "site_check")]
    start = MON6 - 3 * 3600
    stack = b.stack(b.derived(), sources, start - 60)
    for day in range(8):
        stack.round(start + day * DAY, ["site_check"])
    return stack.finish()


def _play_real(b: Bench) -> Output:
    b.extra["scale"] = scale = min(1.0, 3.5 / max(b.profile.politeness.min_delay_s, 1e-9))
    base = b.sites.add("pomaly", {"/robots.txt": robots("User-agent: *\nAllow: /\n"),
                                  "/rss.xml": Route(body=rss([{"title": "a", "link": "{{base}}/a"}]))})
    stack = b.stack(b.derived(scale=scale), [Source("a", base + "/rss.xml", "feed")], MON6 - 60, patience_s=4.0)
    stack.round(MON6, ["feed"])
    return stack.finish()


def scenarios() -> list[Scenario]:
    return [Scenario("praha-feeds", 0, "two feed rounds over eight hosts", _play_feeds),
            Scenario("praha-check", 0, "the site check fired on eight days running", _play_check),
            Scenario("praha-real", 1, "the profile's own gap: robots.txt, then a feed", _play_real)]


# --- the checks -----------------------------------------------------------------------------------

def _p01(r: Runs) -> Proof:
    proof, seen = Proof(), r["praha-feeds"]
    found = {i["url"].split("/", 3)[-1]: i for i in seen.out.of("item.found")}
    cap = r.profile.feed.summary_max_chars
    rss_ok = all(found.get(p.lstrip("/"), {}).get("title") == t for p, (t, _) in ARTICLES.items())
    proof.that(rss_ok and all(p.lstrip("/") in found for p in PRESS),
               f"{len(found)} items from an RSS and an Atom feed")
    feeds = {p: ("aktuality", RSS_DATE) for p in ARTICLES} | {p: ("tiskove", ATOM_DATE) for p in PRESS}
    dated = all((i.get("source"), str(i.get("published", ""))[:19]) == feeds.get("/" + p, (None, ""))
                for p, i in found.items())
    proof.that(bool(found) and dated, "each under the feed it came from, dated as the feed dates it")
    proof.that(all(i.get("title") and i.get("published") and i.get("url") and i.get("summary") for i in found.values()),
               "each with headline, date, link and context")
    short = found.get("clanky/lavka", {}).get("summary") or ""
    proof.that(all(len(i["summary"]) <= cap for i in found.values() if i.get("summary"))
               and bool(short) and LONG.startswith(short),
               f"the context short (a {len(LONG)}-character summary cut to its first {len(short)}, at most {cap})")
    extra = sorted({k for i in found.values() for k in i} - ITEM_KEYS)
    proof.that(not extra, "nothing else about an item kept" + (f" (also {extra})" if extra else ""))
    return proof


def _p02(r: Runs) -> Proof:
    proof, seen = Proof(), r["praha-feeds"]
    proof.that(seen.paths("magistrat").count("/clanky/lavka") == 1, "an item of the feed it writes about: its article "
               "opened once over two rounds")
    proof.that(not [p for p in seen.paths("magistrat") if p.startswith("/tiskove/") and not p.endswith(".xml")],
               "the press feed's articles never opened")
    read = [i for i in seen.out.of("article.read") if i["url"].endswith("/clanky/lavka")]
    kept = seen.out.texts.get(read[0].get("text_key", ""), []) if read else []
    proof.that(len(read) == 1 and "text" not in read[0] and len(kept) == 1 and "Stavba začne" in kept[0],
               "its text kept once in the bucket as working material, not in the published event")
    return proof


def _p03(r: Runs) -> Proof:
    proof, seen = Proof(), r["praha-feeds"]
    paths = seen.paths("magistrat")
    first = min((i for i, p in enumerate(paths) if p.startswith(("/clanky/", "/vyhrazeno/"))), default=0)
    proof.that("/.well-known/tdmrep.json" in paths[:first], "tdmrep.json read before the first article")
    reserved = {s["url"].split("/", 3)[-1]: s.get("detail", "") for s in seen.out.skipped("tdm_reserved")}
    for p, (_, how) in ARTICLES.items():
        if how:
            proof.that(how in reserved.get(p.lstrip("/"), ""), f"reserved by {how}: recorded as tdm_reserved")
    read = sorted(i["url"].split("/", 3)[-1] for i in seen.out.of("article.read"))
    proof.that(read == ["clanky/lavka"], f"the one unreserved article read, no other ({', '.join(read)})")
    text = seen.out.kept_text()
    proof.that("Karlova" not in text and "2027" not in text and "Výroční" not in text, "no text of them kept")
    return proof


def _p04(r: Runs) -> Proof:
    proof, seen = Proof(), r["praha-check"]
    base = seen.bases["presmerovani"]
    homes = [sim_time(x) for x in seen.out.requests if x["url"] == base + "/"]
    icons = [sim_time(x) for x in seen.out.requests if x["url"].endswith("/static/ikona.png")]
    proof.that(len(homes) == 2 and len(icons) == 2 and WEEK <= homes[1] - homes[0] < WEEK + DAY
               and icons[1] - icons[0] >= WEEK,
               f"fired daily for eight days: home page and icon opened {len(homes)} times, a week apart")
    quiet = seen.out.skipped("seen_recently", "top-presmerovani")
    proof.that(len(quiet) == 6, f"the {len(quiet)} days between recorded as seen_recently")
    checks = seen.out.of("site.checked", "top-presmerovani")
    c = checks[0] if checks else {}
    proof.that(c.get("reachable") is True and c.get("status") == 200 and c.get("name") == "Kulturní Praha"
               and c.get("final_url") == base + "/cs/", "recorded: reachable, where it redirects, the site's name")
    proof.that(c.get("icon_url") == base + "/static/ikona.png" and c.get("icon_status") == 200,
               "the icon its page names, and how it answered")
    plain = seen.out.of("site.checked", "top-prosty")
    proof.that(bool(plain) and plain[0].get("name") == "Antikvariát U Zlatého klíče"
               and plain[0].get("icon_url") == seen.bases["prosty"] + "/favicon.ico",
               "a page naming neither: its title as the name, /favicon.ico as the icon")
    proof.that(len(checks) == 2 and len(plain) == 2, f"one record a week per site ({len(checks)} and {len(plain)})")
    proof.that(set(seen.paths("presmerovani")) == {"/robots.txt", "/", "/cs/", "/static/ikona.png"}
               and set(seen.paths("prosty")) == {"/robots.txt", "/", "/favicon.ico"},
               "nothing more read: no link, script, style or image")
    keys = {k for i in seen.out.of("site.checked") for k in i}
    proof.that(keys <= CHECK_KEYS and not seen.out.texts, "no home page content kept")
    proof.that(not [x for x in seen.every() if x.header("Cookie")], "the cookie the home page set never sent back")
    dead = seen.out.of("site.checked", "top-nedostupny")
    proof.that(bool(dead) and all(d["reachable"] is False for d in dead), "a site that answers nothing: unreachable")
    return proof


def _p05(r: Runs) -> Proof:
    proof, seen = Proof(), r["praha-feeds"]
    reads = [sim_time(x) for x in seen.requests_to("magistrat") if x["url"].endswith("/aktuality/rss.xml")]
    proof.that(len(reads) == 2 and reads[0] < MON6 + 4 * 3600 <= reads[1], "the feed read in both rounds")
    arts = [p for p in seen.paths("magistrat") if p.startswith(("/clanky/", "/vyhrazeno/"))]
    proof.that(bool(arts) and len(arts) == len(set(arts)), f"no article requested twice ({len(arts)} articles)")
    again = {x["url"].split("/", 3)[-1] for x in seen.out.skipped("already_read", "aktuality")}
    opened = {p.lstrip("/") for p in arts}
    proof.that(bool(opened) and opened <= again, f"the second read listed them again: {len(opened)} recorded as "
               "already_read")
    atom_reads = [x for x in seen.log("magistrat") if x.path == "/tiskove/atom.xml"]
    proof.that([x.status for x in atom_reads] == [200, 304] and bool(atom_reads[1].header("If-None-Match")),
               "an unchanged Atom feed: asked with If-None-Match the second time, a 304")
    return proof


def _p06(r: Runs) -> Proof:
    proof, real = Proof(), r["praha-real"]
    g = real.gaps("pomaly")
    least = 3 * real.extra["scale"]
    proof.that(real.paths("pomaly") == ["/robots.txt", "/rss.xml"] and bool(g) and min(g) >= least
               and not real.overlaps(), f"the profile's own gap: robots.txt, then the feed {secs(min(g, default=0))} "
               f"after its end (>= {secs(least)})")
    proof.extend(common.pacing(r))
    seen = r["praha-feeds"]
    allowed = {"/robots.txt", "/aktuality/rss.xml", "/tiskove/atom.xml", "/.well-known/tdmrep.json", *ARTICLES}
    proof.that(not seen.overlaps(), f"with no wait at all, still one request at a time on each of "
               f"{len(seen.logs)} sites")
    proof.that(set(seen.paths("magistrat")) <= allowed, "never the whole site: only what a feed published")
    return proof


def _p07(r: Runs) -> Proof:
    proof, seen = Proof(), r["praha-feeds"]
    for site, reason in REFUSING.items():
        closed = seen.out.of("source.closed", site)
        later = [x for x in seen.out.skipped("source_closed", site)
                 if str(x.get("round", "")).startswith("2026-12-01T10")]
        stopped = [x for x in seen.out.skipped("host_stopped", site + "-ok") if x["url"].endswith("/ok.xml")]
        proof.that(seen.paths(site) == ["/robots.txt", "/rss.xml"] and len(closed) == 1
                   and closed[0].get("reason") == reason and len(later) == 1 and bool(stopped),
                   f"{reason}: one request, the source closed and left out of the next round, the site's other "
                   "feed left as host_stopped")
    proof.that(all(seen.paths(n) == ["/robots.txt"] and len(seen.out.of("source.closed", n)) == 1
                   for n in ("robots429", "robotsvyzva")),
               "a 429 or a challenge at robots.txt: nothing after it, the source closed once")
    counts = sorted(seen.extra["by_address"].values())
    proof.that(counts == [0, 2], f"a refusing site on two addresses: after the 403 none to the other ({counts})")
    addresses = {x.client.rsplit(":", 1)[0] for x in seen.every()}
    proof.that(len(addresses) == 1 and {x.header("User-Agent") for x in seen.every()} == {r.profile.user_agent},
               "one client address and one User-Agent throughout")
    return proof


def _p08(r: Runs) -> Proof:
    proof, seen = Proof(), r["praha-feeds"]
    every = seen.every()
    proof.that({x.method for x in every} == {"GET"}, f"{len(every)} requests, all GET")
    ua = r.profile.user_agent
    proof.that({x.header("User-Agent") for x in every} == {ua} and not any(w in ua for w in common.BROWSER_WORDS),
               "every one as the bot, no browser's name in its User-Agent")
    sent = sorted({k.lower() for x in every for k, _ in x.headers if k.lower() in BROWSER_HEADERS})
    proof.that(not sent, "no cookie or browser header sent" + (f" (sent {sent})" if sent else ""))
    proof.that(not [x for x in every if x.path.startswith(("/hledat", "/foto/", "/styl", "/aplikace"))],
               "no form filled, no page resource loaded")
    return proof


def _p09(r: Runs) -> Proof:
    proof, seen = Proof(), r["praha-feeds"]
    refused = seen.out.skipped("robots_disallowed", "zakaz")
    proof.that(seen.paths("zakaz") == ["/robots.txt"] and len(refused) == 2
               and all("Disallow: /" in x.get("detail", "") for x in refused),
               f"User-agent: {r.profile.robots_token} / Disallow: / obeyed: the feed recorded as robots_disallowed "
               "in both rounds, naming the line")
    proof.that("/interni/pokyn" not in seen.paths("magistrat"), "a path closed only to Praha-X not read")
    blocked = seen.out.skipped("blocked_by_operator", "blok")
    proof.that(seen.log("blok") == [] and len(blocked) == 2 and all(REASON in x.get("detail", "") for x in blocked),
               "removed by hand (a block of its domain): no request in two rounds, each skip giving the owner's "
               "request")
    return proof


def rules() -> list[Rule]:
    f, a = "tasks.feed.", "tasks.feed.article_followup."
    close = ("close_source",)
    return [
        Rule("PRAHA-01", "Reads public RSS and Atom feeds; keeps headline, date, link and a short context.",
             (Bound(f + "keep_summary", "==", True), Bound(f + "summary_max_chars", "<=", 500)), _p01),
        Rule("PRAHA-02", "The article of an item it writes about is opened once; its text kept, never published.",
             (Bound(a + "mode", "==", "selected"), Bound(a + "once_ever", "==", True),
              Bound(a + "keep_text", "==", True)), _p02),
        Rule("PRAHA-03", "A TDM reservation (header, meta tag or tdmrep.json): the article text is not kept.",
             (Bound(a + "respect_tdmrep", "==", True),), _p03),
        Rule("PRAHA-04", "Weekly site check: home page and icon once a week; reachable, redirect and name only.",
             (Cadence("site_check", per_week=(1, 1)), Bound("tasks.site_check.min_interval_s", ">=", WEEK)), _p04),
        Rule("PRAHA-05", "Feeds several times a day; an article page only once.",
             (Cadence("feed", workday=(2, 24), weekend=(2, 24)), Bound(a + "once_ever", "==", True)), _p05),
        Rule("PRAHA-06", "At most one request every 3 s per site, never in parallel, never a whole site.",
             (Bound("politeness.min_delay_s", ">=", 3),), _p06),
        Rule("PRAHA-07", "On 403, 429 or a challenge it stops and closes the source; no other address or identity.",
             tuple(Bound(f"responses.{k}", "in", close) for k in ("on_403", "on_429", "on_challenge")), _p07),
        Rule("PRAHA-08", "Not a browser; fills no forms.", (), _p08),
        Rule("PRAHA-09", "`User-agent: Praha-X / Disallow: /` is obeyed; a source can be removed by hand.", (), _p09,
             binds=("operator.blocked_domains",)),
    ]

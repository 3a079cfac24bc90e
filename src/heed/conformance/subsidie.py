"""SUBSIDIE-01..13: SubsidieUpdate's sitemap-led rounds, per-host robots.txt and change detection.

Scenarios: ``subsidie-round`` (one Friday round over nine municipal hosts with host names, the
waits at 1/10: 2 s and the 30 s cap become 0.2 s and 3 s), ``subsidie-week`` (the profile's own
schedule from Friday to Saturday, no waits: a page that changes once, an outage, a robots.txt
change, a stop request with deletion) and ``subsidie-real`` (the profile's own 2 s)."""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from heed_core.kinds.subsidy import SubsidyTask
from heed_core.schedule import firings
from heed_core.work import Source

from heed.conformance.model import Bound, Cadence, Proof, Rule, Runs, Scenario, scale_words, secs, utc
from heed.conformance.runner import Bench
from heed.conformance.sites import html_page, robots, sitemap_index, urlset
from heed.conformance.stack import Output, sim_time
from heed.demo.web import Hit, Route

__all__ = ["rules", "scenarios"]

FRI7, SAT = utc("2026-12-04T07:00"), utc("2026-12-05T00:00")
DAY = 86400.0
OPEN = "User-agent: *\nAllow: /\n"
TOPIC_OFF = ("/afval/ophaaldagen", "/paspoort-aanvragen", "/zoeken?q=subsidie", "/inloggen",
             "/downloads/jaarverslag-2025.pdf", "/subsidies/zoeken?q=energie")
SUB_PAGES = [f"/subsidies/{n}" for n in ("sport", "cultuur", "duurzaamheid", "jeugd", "zorg", "wonen", "water")]


def _page(title: str, extra: str = "", head: str = "") -> str:
    return html_page(title, f"<h1>{title}</h1><p>{title}: aanvragen kan tot 1 maart 2027. Bedrag: EUR 500.</p>"
                            "<p><a href='/afval/ophaaldagen'>Afval</a> <a href='/subsidies/elders'>Meer</a></p>"
                            "<form method='post' action='/subsidies/aanvragen'><input name='naam'></form>"
                            + extra, head)


def _simple(robots_route: Route | None, paths: list[str]) -> Callable[[str], dict[str, Route]]:
    def routes(base: str) -> dict[str, Route]:
        out = {"/sitemap.xml": urlset(paths), **{p: Route(body=_page(p.rsplit("/", 1)[-1])) for p in paths}}
        if robots_route is not None:
            out["/robots.txt"] = robots_route
        return out
    return routes


def _play_round(b: Bench) -> Output:
    s = b.sites
    listed = ["/subsidies/regelingen/energiebespaarlening", "/subsidies/oud/sportsubsidie-2019",
              "/regelingen/archief/monumentensubsidie", *TOPIC_OFF]
    s.add("waterveen", {"/robots.txt": robots(
        f"User-agent: *\nDisallow: /\n\nUser-agent: {b.profile.robots_token}\nDisallow: /subsidies/\n"
        "Allow: /subsidies/regelingen/\nAllow: /regelingen/\nDisallow: /regelingen/archief/\nCrawl-delay: 1.2\n"),
        "/sitemap.xml": urlset(listed), **{p: Route(body=_page(p.rsplit("/", 1)[-1])) for p in listed}},
        hostname="waterveen.test")
    s.add("subdomein", {"/sitemap.xml": sitemap_index(["/sitemap-subsidies.xml"]),
                        "/sitemap-subsidies.xml": urlset(SUB_PAGES),
                        **{p: Route(body=_page(p)) for p in SUB_PAGES}}, hostname="subsidies.lindeveen.test")
    s.add("lindeveen", _simple(robots("User-agent: *\nDisallow: /\n"), ["/subsidies/alles"]), hostname="lindeveen.test")
    s.add("traag", _simple(robots(f"User-agent: {b.profile.robots_token}\nCrawl-delay: 100\n"), ["/subsidies/traag"]),
          hostname="traag.test")
    s.add("dicht", _simple(Route(body="Forbidden", status=403), ["/subsidies/open"]), hostname="dicht.test")
    s.add("storing", _simple(Route(body="<h1>503</h1>", status=503), ["/subsidies/x"]), hostname="storing.test")
    meta = '<meta name="robots" content="{}">'
    s.add("signalen", {"/robots.txt": robots(OPEN),
                       "/sitemap.xml": urlset(["/subsidies/meta-noindex", "/subsidies/header-noindex",
                                               "/subsidies/nofollow"]),
                       "/subsidies/meta-noindex": Route(body=_page("Geheime regeling", head=meta.format("noindex"))),
                       "/subsidies/header-noindex": Route(body=_page("Verborgen regeling"),
                                                          headers=(("X-Robots-Tag", "SubsidieUpdate: noindex"),)),
                       "/subsidies/nofollow": Route(body=_page("Volg niets", head=meta.format("nofollow")))},
          hostname="signalen.test")
    s.add("geblokkeerd", _simple(robots(OPEN), ["/subsidies/y"]), hostname="www.geblokkeerd.test")
    paywall = ('<div class="paywall"><p>Word abonnee.</p></div><script type="application/ld+json">{"@context": '
               '"https://schema.org", "@type": "WebPage", "isAccessibleForFree": false}</script>')
    s.add("betaald", {"/robots.txt": robots(OPEN), "/sitemap.xml": urlset(["/subsidies/premium-overzicht"]),
                      "/subsidies/premium-overzicht": Route(body=_page("Premium overzicht", paywall))},
          hostname="betaald.test")
    sources = [Source(name, base + "/", "subsidy") for name, base in s.bases.items()]
    stack = b.stack(b.derived(), sources, FRI7 - 60, patience_s=4.0)
    stack.store.block_domain("geblokkeerd.test", "verzoek van de gemeente per mail: niet meer bezoeken")
    stack.round(FRI7, ["subsidy"])
    return stack.finish()


FIRST, CHANGED = "Bedrag: EUR 500 per aanvraag.", "Bedrag: EUR 750 per aanvraag."


def _changing(hit: Hit) -> str:
    """A page whose amount changes at the third visit; its 'last visited' widget at every one."""
    amount = FIRST if hit.n < 3 else CHANGED
    seen = time.strftime("%d-%m-%Y om %H:%M:%S", time.gmtime(hit.now))
    return html_page("Wijkdorpfonds", f"<h1>Wijkdorpfonds</h1><p>Het fonds steunt buurtinitiatieven. {amount}</p>"
                                      f"<p class='laatst-bezocht'>Laatst bezocht op {seen}</p>")


def _play_week(b: Bench) -> Output:
    from heed.operator.actions import purge_domain

    s = b.sites
    s.add("wijkdorp", {"/robots.txt": robots(OPEN), "/sitemap.xml": urlset(["/subsidies/wijkdorpfonds"]),
                       "/subsidies/wijkdorpfonds": Route(body=_changing)}, hostname="www.wijkdorp.test")
    s.add("hoogdijk", _simple(Route(body="<h1>503</h1>", status=503), ["/subsidies/dijk"]), hostname="hoogdijk.test")
    s.add("vast", {"/robots.txt": robots(OPEN), "/sitemap.xml": urlset(["/subsidies/vast-fonds"], conditional=True),
                   "/subsidies/vast-fonds": Route(body=lambda hit: _page(f"Vast fonds, ronde {min(hit.n, 2)}"))},
          hostname="vast.test")
    for name in ("wissel", "telling"):
        s.add(name, {"/robots.txt": robots(OPEN), "/sitemap.xml": urlset([])}, hostname=f"{name}.test")
    sources = [Source(name, base + "/", "subsidy") for name, base in s.bases.items()]
    times = sorted({t for sc in b.profile.schedules if sc.task == "subsidy"
                    for t in firings(sc.expression, FRI7 - 3600, SAT + DAY - 1)})
    stack = b.stack(b.derived(), sources, FRI7 - 3600)
    for n, t in enumerate(times):
        if n == 1:  # the outage is over; another municipality closes itself to the bot
            s.set_route("hoogdijk", "/robots.txt", robots(OPEN))
            s.set_route("wissel", "/robots.txt", robots(f"User-agent: {b.profile.robots_token}\nDisallow: /\n"))
            b.extra["changed"] = t
        if t >= SAT and "report" not in b.extra:  # the municipality asks us to stop and to delete
            b.extra["kept_before"] = stack.bucket_texts()
            stack.store.block_domain("wijkdorp.test", "gemeente Wijkdorp: stoppen en alles verwijderen")
            b.extra["report"] = purge_domain(stack.operator, "wijkdorp.test", texts=stack.texts, now=stack.now)
            b.extra["still_blocked"] = stack.store.blocked(s.base("wijkdorp"))
        stack.round(t, ["subsidy"])
    b.extra["rounds"] = times
    return stack.finish()


def _play_real(b: Bench) -> Output:
    b.extra["scale"] = scale = min(1.0, 3.0 / max(b.profile.politeness.min_delay_s, 1e-9))
    base = b.sites.add("echt", {"/robots.txt": robots(OPEN), "/sitemap.xml": urlset([])})
    stack = b.stack(b.derived(scale=scale), [Source("echt", base + "/", "subsidy")], FRI7 - 60, patience_s=4.0)
    stack.round(FRI7, ["subsidy"])
    return stack.finish()


def scenarios() -> list[Scenario]:
    return [Scenario("subsidie-round", 1 / 10, "one Friday round over nine municipalities", _play_round),
            Scenario("subsidie-week", 0, "the profile's rounds from Friday to Saturday", _play_week),
            Scenario("subsidie-real", 1, "the profile's own gap: robots.txt, then the sitemap", _play_real)]


# --- the checks -----------------------------------------------------------------------------------

def _reports(out: Output, source: str | None = None) -> list[dict[str, Any]]:
    return [i for i in out.items if i.get("detail_type") in ("page.new", "page.changed")
            and (source is None or i.get("source") == source)]


def _rel(seen: Any, site: str, urls: Any) -> set[str]:
    base = seen.bases[site]
    return {u.removeprefix(base) for u in urls if u.startswith(base)}


def _u01(r: Runs) -> Proof:
    proof, seen = Proof(), r["subsidie-round"]
    paths = seen.paths("subdomein")
    proof.that(paths[:3] == ["/robots.txt", "/sitemap.xml", "/sitemap-subsidies.xml"],
               "the sitemap index, the sitemap it names, then the pages")
    reported = _rel(seen, "subdomein", {i["url"] for i in _reports(seen.out)})
    proof.that(bool(paths[3:]) and set(paths[3:]) <= reported and all(p.startswith("/subsidies/") for p in paths[3:]),
               f"{len(paths[3:])} subsidy pages fetched and reported")
    return proof


def _u02(r: Runs) -> Proof:
    proof, seen, week = Proof(), r["subsidie-round"], r["subsidie-week"]
    cap = int(r.profile.section("subsidy", SubsidyTask).max_pages_per_host_per_round)
    pages = [p for p in seen.paths("subdomein") if p.startswith("/subsidies/")]
    proof.that(len(pages) == min(cap, len(SUB_PAGES)), f"{len(SUB_PAGES)} listed, {len(pages)} fetched in the round")
    left = seen.out.skipped("cap_reached", "subdomein")
    proof.that(len(left) == max(0, len(SUB_PAGES) - cap), f"the other {len(left)} recorded as cap_reached, "
               "for a later round")
    reads = [sim_time(x) for x in week.requests_to("telling") if x["url"].endswith("/sitemap.xml")]
    fri, sat = len([t for t in reads if t < SAT]), len([t for t in reads if t >= SAT])
    proof.that((fri, sat) == (5, 1), f"the site saw {fri} rounds on Friday, {sat} on Saturday")
    return proof


def _u03(r: Runs) -> Proof:
    proof, seen, real = Proof(), r["subsidie-round"], r["subsidie-real"]
    g, least = real.gaps("echt"), 2 * real.extra["scale"]
    proof.that(bool(g) and min(g) >= least and real.paths("echt") == ["/robots.txt", "/sitemap.xml"],
               f"the profile's own gap between robots.txt and the sitemap: {secs(min(g, default=0))} "
               f"(>= {secs(least)})")
    scaled = 2 * seen.scale
    all_gaps = [x for s in seen.logs for x in seen.gaps(s)]
    proof.that(bool(all_gaps) and min(all_gaps) >= scaled, f"one round over {len(seen.logs)} hosts: min gap "
               f"{secs(min(all_gaps, default=0))} over {len(all_gaps)} gaps (2 s at 1/10: >= {secs(scaled)})")
    proof.that(not seen.overlaps(), "never two requests in flight to one host")
    return proof


def _u04(r: Runs) -> Proof:
    proof, week = Proof(), r["subsidie-week"]
    fridays = len([t for t in week.extra["rounds"] if t < SAT])
    fri = [x for x in week.requests_to("wijkdorp") if x["url"].endswith("/wijkdorpfonds") and sim_time(x) < SAT]
    asked = week.paths("wijkdorp")
    proof.that(fridays > 0 and len(fri) == fridays == asked.count("/subsidies/wijkdorpfonds")
               and set(asked) == {"/robots.txt", "/sitemap.xml", "/subsidies/wijkdorpfonds"},
               f"{fridays} Friday rounds: the site saw one GET of the page each, nothing more")
    url = week.bases["wijkdorp"] + "/subsidies/wijkdorpfonds"
    changes = [i for i in _reports(week.out) if i["url"] == url]
    same = [x for x in week.out.skipped("unchanged") if x["url"] == url]
    proof.that(len(changes) == 2 and len(same) == fridays - 2, f"a changing visit widget ignored: {len(changes)} "
               f"reports (new, changed), {len(same)} times unchanged")
    log = week.log("vast")
    maps = [x.status for x in log if x.path == "/sitemap.xml"]
    pages = [x for x in week.requests_to("vast") if x["url"].endswith("/vast-fonds") and sim_time(x) < SAT]
    told = [i["detail_type"] for i in _reports(week.out, "vast")]
    proof.that(maps[1:] == [304] * (len(maps) - 1) and len(maps) > fridays - 1 and len(pages) == fridays
               and told == ["page.new", "page.changed"],
               f"an unchanged sitemap cost {len(maps) - 1} 304s; its page still compared in each of {len(pages)} "
               f"Friday rounds, its one change told ({', '.join(told)})")
    return proof


def _u05(r: Runs) -> Proof:
    proof, seen = Proof(), r["subsidie-round"]
    every = seen.every()
    proof.that(bool(every) and {x.method for x in every} == {"GET"}, f"{len(every)} requests, all GET")
    asked = {x.path for x in every}
    proof.that(not asked & set(TOPIC_OFF), "waste, passports, site search, login, a download: none asked for")
    off = _rel(seen, "waterveen", {x["url"] for x in seen.out.skipped("off_topic")})
    proof.that(set(TOPIC_OFF) <= off, "each recorded as off_topic")
    proof.that(not asked & {"/subsidies/elders", "/subsidies/aanvragen"}, "no page link followed, no form sent")
    paid = seen.bases["betaald"] + "/subsidies/premium-overzicht"
    proof.that(paid not in {i["url"] for i in _reports(seen.out)} and "Premium overzicht" not in seen.out.kept_text(),
               "a paywalled page not kept")
    return proof


def _u06(r: Runs) -> Proof:
    proof, week = Proof(), r["subsidie-week"]
    reads = [sim_time(x) for x in week.requests_to("telling", "robots")]
    hours = (reads[1] - reads[0]) / 3600 if len(reads) > 1 else 0
    proof.that(len(reads) == 2 and reads[1] - reads[0] >= DAY, f"robots.txt read {len(reads)} times, "
               f"{hours:.0f} h apart, over {len(week.extra['rounds'])} rounds")
    once, fridays = week.paths("wijkdorp").count("/robots.txt"), len([t for t in week.extra["rounds"] if t < SAT])
    proof.that(once == 1, f"a host crawled in {fridays} rounds of one day: its robots.txt read {once} time(s)")
    changed = week.extra.get("changed", 0)
    maps = [sim_time(x) for x in week.requests_to("wissel") if x["url"].endswith("/sitemap.xml")]
    again = [sim_time(x) for x in week.requests_to("wissel", "robots") if sim_time(x) >= changed]
    refused = [sim_time(x, "t") for x in week.out.skipped("robots_disallowed", "wissel")]
    proof.that(bool(maps) and all(t < changed + DAY for t in maps) and bool(again) and bool(refused)
               and all(t >= again[0] for t in refused),
               "a robots.txt change took effect within a day: no sitemap read a day after it; robots.txt re-read "
               f"{(again[0] - changed) / 3600 if again else 0:.0f} h after it (the first round past 24 h), the host "
               "refused (robots_disallowed) from then on")
    return proof


def _u07(r: Runs) -> Proof:
    proof, seen = Proof(), r["subsidie-round"]
    g = seen.gaps("waterveen")
    proof.that(bool(g) and min(g) >= 1.2, f"Crawl-delay 1.2 s honoured: min {secs(min(g, default=0))}")
    cap_s = min(float(r.profile.politeness.crawl_delay_cap_s), 100.0)
    cap, g = cap_s * seen.scale, seen.gaps("traag")
    proof.that(bool(g) and all(cap <= x < cap + 2 for x in g)
               and seen.paths("traag") == ["/robots.txt", "/sitemap.xml", "/subsidies/traag"],
               f"Crawl-delay 100 s treated as {cap_s:g} s ({secs(cap)} at {scale_words(seen.scale)}): the sitemap and "
               f"its page fetched in the round, gaps {', '.join(secs(x) for x in g)}")
    return proof


def _u08(r: Runs) -> Proof:
    proof, seen = Proof(), r["subsidie-round"]
    paths = seen.paths("waterveen")
    proof.that("/subsidies/regelingen/energiebespaarlening" in paths,
               "Allow /subsidies/regelingen/ beat Disallow /subsidies/")
    refused = {x["url"].removeprefix(seen.bases["waterveen"]): x.get("detail", "")
               for x in seen.out.skipped("robots_disallowed", "waterveen")}
    proof.that("Disallow: /subsidies/" in refused.get("/subsidies/oud/sportsubsidie-2019", ""),
               "Disallow /subsidies/ alone closed /subsidies/oud/")
    proof.that("Disallow: /regelingen/archief/" in refused.get("/regelingen/archief/monumentensubsidie", ""),
               "Disallow /regelingen/archief/ beat the shorter Allow /regelingen/")
    closed = {"/subsidies/oud/sportsubsidie-2019", "/regelingen/archief/monumentensubsidie"}
    proof.that(not closed & set(paths), "neither of those two asked for")
    return proof


def _u09(r: Runs) -> Proof:
    proof, seen = Proof(), r["subsidie-round"]
    base = seen.bases["signalen"]
    noindex = {x["url"] for x in seen.out.skipped("noindex")}
    reported = {i["url"] for i in _reports(seen.out)}
    for path in ("/subsidies/meta-noindex", "/subsidies/header-noindex", "/subsidies/nofollow"):
        proof.that(base + path not in reported, f"{path.rsplit('/', 1)[1]}: not stored")
    proof.that({base + "/subsidies/meta-noindex", base + "/subsidies/header-noindex"} <= noindex,
               "meta tag and X-Robots-Tag both recorded as noindex")
    text = seen.out.kept_text()
    proof.that("Geheime" not in text and "Verborgen" not in text and "Volg niets" not in text, "no text of them kept")
    proof.that(set(seen.paths("signalen")) == {"/robots.txt", "/sitemap.xml", "/subsidies/meta-noindex",
                                                "/subsidies/header-noindex", "/subsidies/nofollow"},
               "their links not followed")
    return proof


def _u10(r: Runs) -> Proof:
    proof, seen = Proof(), r["subsidie-round"]
    proof.that(seen.paths("lindeveen") == ["/robots.txt"], "lindeveen.test disallows everything: nothing else there")
    sub = seen.log("subdomein")
    proof.that(bool(sub) and sub[0].path == "/robots.txt" and any(x.path.startswith("/subsidies/") for x in sub)
               and {str(x.header("Host")).split(":")[0] for x in sub} == {"subsidies.lindeveen.test"},
               "subsidies.lindeveen.test read its own robots.txt (none) and was crawled")
    return proof


def _u11(r: Runs) -> Proof:
    proof, seen, week = Proof(), r["subsidie-round"], r["subsidie-week"]
    proof.that(seen.paths("dicht") == ["/robots.txt", "/sitemap.xml", "/subsidies/open"]
               and seen.paths("subdomein")[:1] == ["/robots.txt"], "robots.txt 403 or 404: no restrictions")
    proof.that(seen.paths("storing") == ["/robots.txt"] and bool(seen.out.skipped("robots_unavailable", "storing")),
               "robots.txt 503: the host skipped")
    log = [(x.path, x.status) for x in week.log("hoogdijk")[:4]]
    first = week.extra["rounds"][0]
    skipped = [sim_time(x, "t") for x in week.out.skipped("robots_unavailable", "hoogdijk")]
    proof.that(log == [("/robots.txt", 503), ("/robots.txt", 200), ("/sitemap.xml", 200), ("/subsidies/dijk", 200)]
               and bool(skipped) and all(first <= t < week.extra["changed"] for t in skipped),
               "for that round only (recorded as robots_unavailable): fixed, the next round crawled it")
    return proof


def _u12(r: Runs) -> Proof:
    proof, week = Proof(), r["subsidie-week"]
    url = week.bases["wijkdorp"] + "/subsidies/wijkdorpfonds"
    changes = [i for i in _reports(week.out) if i["url"] == url]
    kinds = [i["detail_type"] for i in changes]
    proof.that(kinds == ["page.new", "page.changed"], f"customers told: {', '.join(kinds)}")
    cap = int(r.profile.section("subsidy", SubsidyTask).diff_summary_max_chars)
    first, last = (changes[0], changes[-1]) if changes else ({}, {})
    proof.that(first.get("summary") == "new page", f"the first sight said as {first.get('summary')!r}")
    proof.that("750" in str(last.get("summary")) and len(str(last.get("summary"))) <= cap and last.get("url") == url,
               f"the change in a short summary ({len(str(last.get('summary')))} characters) with the link")
    proof.that(len(changes) == 2 and bool(first.get("hash")) and last.get("previous_hash") == first.get("hash"),
               "the change names the version it follows (previous_hash)")
    kept = [v for vs in week.extra["kept_before"].values() for v in vs if "Wijkdorpfonds" in v]
    proof.that(len(kept) == 2 and "500" in kept[0] and "750" in kept[-1],
               f"the text kept: {len(kept)} versions, before and after the change")
    return proof


def _u13(r: Runs) -> Proof:
    proof, seen, week = Proof(), r["subsidie-round"], r["subsidie-week"]
    blocked = seen.out.skipped("blocked_by_operator", "geblokkeerd")
    proof.that(seen.log("geblokkeerd") == [] and bool(blocked)
               and all("verzoek van de gemeente" in str(x.get("detail")) for x in blocked),
               "a stop request by mail, robots.txt unchanged: no request, the request's reason recorded")
    report = week.extra["report"]
    kept = [v for vs in week.extra["kept_before"].values() for v in vs if "Wijkdorpfonds" in v]
    left = [line for line in week.out.stored.splitlines() if "wijkdorp" in line and '"BLOCKS"' not in line]
    proof.that(bool(kept) and report.objects >= len(kept) and report.sources == 1 and report.state_items >= 2
               and not left and "Wijkdorpfonds" not in week.out.kept_text(),
               f"purged: {report.state_items} state items, {report.sources} source, {report.objects} texts "
               f"(its {len(kept)} page versions among them); none left")
    sat = [x for x in week.requests_to("wijkdorp") if sim_time(x) >= SAT]
    still = str(week.extra["still_blocked"] or "")
    proof.that("stoppen" in still and bool(week.log("wijkdorp")) and not sat,
               "the stop holds after the purge, its reason kept: nothing on Saturday")
    return proof


def rules() -> list[Rule]:
    sub = "tasks.subsidy."
    return [
        Rule("SUBSIDIE-01", "Fetches municipalities' subsidy pages and the sitemap that lists them.", (), _u01),
        Rule("SUBSIDIE-02", "Five rounds per working day, one per weekend day; a handful of pages per host a round.",
             (Cadence("subsidy", workday=(5, 5), weekend=(1, 1)), Bound(sub + "max_pages_per_host_per_round", "<=", 6)),
             _u02),
        Rule("SUBSIDIE-03", "At least 2 s between two requests to a host, however long the queue.",
             (Bound("politeness.min_delay_s", ">=", 2),), _u03),
        Rule("SUBSIDIE-04", "Each page compared with its previous version; unchanged, a revisit costs one GET.", (),
             _u04, binds=("conditional_requests",)),
        Rule("SUBSIDIE-05", "No login, forms, site search, downloads or paywalls; no link off the subsidy topic.",
             (Bound(sub + "topic_patterns", "set"),), _u05),
        Rule("SUBSIDIE-06", "robots.txt fetched per host and reused for 24 hours.",
             (Bound("robots.cache_ttl_s", "==", DAY),), _u06),
        Rule("SUBSIDIE-07", "Crawl-delay honoured up to 30 s; anything above is treated as 30.",
             (Bound("politeness.crawl_delay_cap_s", "==", 30.0),), _u07),
        Rule("SUBSIDIE-08", "Disallow and Allow: the longest matching rule wins.", (), _u08),
        Rule("SUBSIDIE-09", "noindex or nofollow (meta tag or X-Robots-Tag): not stored, links not followed.", (),
             _u09),
        Rule("SUBSIDIE-10", "Everything per host: a subdomain has its own robots.txt.", (), _u10),
        Rule("SUBSIDIE-11", "No robots.txt or a 4xx: no restrictions; a 5xx: the host is skipped for the round.",
             (Bound("robots.on_4xx", "==", "allow"), Bound("robots.on_401_403", "==", "allow"),
              Bound("robots.on_5xx", "==", "skip_host")), _u11),
        Rule("SUBSIDIE-12", "Keeps a page's text to see changes; customers get a short summary with the link.",
             (Bound(sub + "diff_summary_max_chars", "<=", 300),), _u12),
        Rule("SUBSIDIE-13", "Deletes all stored from a domain on request; a stop holds with robots.txt unchanged.",
             (), _u13, binds=("operator.blocked_domains",)),
    ]


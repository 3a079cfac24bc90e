"""COMMON-01..09, the rules all five bots share, proven on each bot's own task (see reach.py).

Three scenarios: ``common`` (one round, no waits: robots.txt groups and matching, cookies, traps,
a login, a paywall, bylines, redirects to another host and a chain past the hop limit, sites
blocked by the operator and by the profile, a purge), ``pacing`` (three hosts, the profile's waits
scaled: the minimum gap, Crawl-delay up to the cap, a redirect hop paced) and ``concurrent`` (one
host's work token handed to three fetchers at once, as Lambda may; on the aws stack)."""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from typing import Any

from heed_core.profile import load_profile
from heed_core.work import Source

from heed.conformance.model import Bound, OwnIdentity, Proof, Rule, Runs, Scenario, scale_words, secs, utc
from heed.conformance.reach import REACH
from heed.conformance.runner import Bench
from heed.conformance.sites import TRAP_PATHS, robots, rss
from heed.conformance.stack import Output
from heed.demo.web import Hit, Route

__all__ = ["PACE", "PUBLISHED_UA", "Pace", "fixed_egress", "get_only", "groups", "identity", "pacing",
           "public_only", "redirect_is_a_request", "robots_first", "rules", "scenarios", "stop_and_delete"]

START = utc("2026-12-01T06:00")  # a Tuesday; every bot's task runs when fired
AUTHOR, EMAIL = "Kari Nordmann", "kari.nordmann@example.org"
PAID = "SEGRETO-PAGATO"
BROWSER_WORDS = ("Mozilla", "Chrome", "Safari", "Gecko", "Firefox", "Edg/")
BYLINE_XML = f"<author>{EMAIL} ({AUTHOR})</author><dc:creator>{AUTHOR}</dc:creator>"
PAYWALL_HEAD = ('<script type="application/ld+json">{"@context": "https://schema.org", "@type": "NewsArticle",'
                ' "headline": "Premium", "isAccessibleForFree": false}</script>')


@dataclass(frozen=True)
class Pace:
    """A bot's published pacing (COMMON-05): the minimum gap, and the Crawl-delay cap (None:
    no cap promised, a Crawl-delay is honoured up to a day); the scale its shape runs at."""

    min_gap_s: float
    cap_s: float | None
    scale: float


PACE = {
    "springstudiobot": Pace(10, 60, 1 / 20),   # SPRING-08
    "praha-x": Pace(3, None, 1 / 10),          # PRAHA-06
    "wannadobot": Pace(1.5, None, 1 / 300),    # WANNADO-05 (and its 6-7 minutes between pages)
    "subsidieupdate": Pace(2, 30, 1 / 10),     # SUBSIDIE-03, SUBSIDIE-07
    "aubebot": Pace(1.5, 10, 1 / 5),           # AUBE-09, AUBE-04
}
NO_CAP_S = 86400.0

# COMMON-01: the identity each bot's public page shows (../shared/seeds/*.txt), byte for byte;
# SpringStudioBot's page gives its name and version "with a link to this page", its info URL.
PUBLISHED_UA = {
    "springstudiobot": "SpringStudioBot/1.0 (+https://springstudio.no/springstudiobot)",
    "praha-x": "Praha-X/0.1 (+https://praha-x.cz/bot)",
    "wannadobot": "WannadoBot/1.0 (+https://wannado.nl/crawler)",
    "subsidieupdate": "SubsidieUpdate/1.0 (+https://www.subsidieupdate.nl/bot)",
    "aubebot": "AubeBot/0.1 (+https://aube.news/robot; collecte RSS polie)",
}
# The bots that keep no page text (COMMON-07: nothing of a byline stored at all); the others keep
# texts by their own rules (PRAHA-02's working material, SUBSIDIE's page versions to compare).
NO_TEXT_KEPT = ("aubebot", "springstudiobot", "wannadobot")


def _prefix(bot: str) -> str:
    return REACH[bot].prefix


def _open_paths(bot: str) -> dict[str, list[str]]:
    """The paths the bot is brought to on the main host, by what robots.txt says of them."""
    p = _prefix(bot)
    return {"allowed": [f"{p}/public/1", f"{p}/news/public/y", f"{p}/tie/z", f"{p}/files/doc.pdf.html",
                        f"{p}/files/doc.pdf?v=1"],
            "disallowed": [f"/privat{p}/1", f"{p}/news/x", f"{p}/files/doc.pdf"],
            "login": [f"{p}/konto"], "paid": [f"{p}/betalt"] if REACH[bot].by == "feed" else [],
            "redirects": [f"{p}/moved", f"{p}/around"]}


def _robots_open(token: str, p: str) -> str:
    # `*` closes everything; the bot's own group, named in lower case, opens all but /privat/,
    # P/news/ (except P/news/public/), PDFs at the end of a path, and P/tie/ (Allow wins the tie).
    return (f"User-agent: *\nDisallow: /\n\nUser-agent: {token.lower()}\nAllow: /\nDisallow: /privat/\n"
            f"Disallow: {p}/news/\nAllow: {p}/news/public/\nDisallow: /*.pdf$\nAllow: {p}/tie/\nDisallow: {p}/tie/\n")


def _play_common(b: Bench) -> Output:
    from heed.operator.actions import purge_domain

    bot, token = b.extra["bot"], b.profile.robots_token
    reach, p, paths = REACH[bot], _prefix(bot), _open_paths(bot)
    login = Route(body="<!doctype html><title>Inloggen</title><form method='post' action='/login'></form>",
                  status=401, headers=(("WWW-Authenticate", 'Basic realm="leden"'),))
    moved = b.sites.add("moved", lambda base: reach.world("moved", base, [], {
        "/robots.txt": robots(f"User-agent: *\nDisallow: {p}/closed/\n"),
        f"{p}/new": reach.page("Verhuisd"), f"{p}/closed/x": reach.page("Gesloten")})[0])
    pages: dict[str, Route] = {path: reach.page(f"Open {path}") for path in paths["allowed"] + paths["disallowed"]}
    pages[f"{p}/public/1"] = reach.page("Openbaar", f"<p class='byline'>{AUTHOR} ({EMAIL})</p>"
                                                    f"<div class='comment'>bruker_ola skrev: kommentar</div>")
    pages.update({path: login for path in paths["login"]})
    pages.update({path: reach.page("Premium", f"<p>{PAID}: il testo intero.</p>", head=PAYWALL_HEAD)
                  for path in paths["paid"]})
    pages[f"{p}/moved"] = Route(status=301, location=f"{moved}{p}/new")
    pages[f"{p}/around"] = Route(status=302, location=f"{moved}{p}/closed/x")
    pages["/robots.txt"] = robots(_robots_open(token, p))
    sources: list[Any] = []
    if reach.by == "feed":
        # A feed whose item names its author (a byline and an address): the item is public, the author is not kept.
        pages["/feeds/byline.xml"] = Route(body=rss([{"title": "Met auteur", "link": "{{base}}" + f"{p}/public/1",
                                                      "summary": "Breve.", "extra": BYLINE_XML}]),
                                           content_type="application/rss+xml; charset=utf-8")

    def open_routes(base: str) -> dict[str, Route]:
        routes, srcs = reach.world("open", base, [x for k in paths.values() for x in k], pages)
        sources.extend(srcs)
        if reach.by == "feed":
            sources.append(Source("open-byline", base + "/feeds/byline.xml", "feed",
                                  {"write_about": True} if reach.write_about else {}))
        return routes
    b.sites.add("open", open_routes)
    # A redirect chain one hop longer than the profile follows.
    hops = b.profile.redirects.max_hops
    chain = {"/robots.txt": robots("User-agent: *\nAllow: /\n"), f"{p}/c/{hops + 1}": reach.page("Einde"),
             **{f"{p}/c/{i}": Route(status=301, location=f"{p}/c/{i + 1}") for i in range(hops + 1)}}
    chained = b.sites.add("chain", lambda base: reach.world("chain", base, [f"{p}/c/0"], chain)[0])
    sources += reach.world("chain", chained, [f"{p}/c/0"], {})[1]
    # Two sites robots.txt opens to all: one the operator blocks (by a stop request), one the profile lists.
    ips: dict[str, str] = {}
    shut = {"/robots.txt": robots("User-agent: *\nAllow: /\n"), f"{p}/public/1": reach.page("Geblokkeerd")}
    for name in ("blocked", "listed"):
        def shut_routes(base: str, name: str = name) -> dict[str, Route]:
            return reach.world(name, base, [f"{p}/public/1"], shut)[0]
        base = b.sites.add(name, shut_routes)
        sources += reach.world(name, base, [f"{p}/public/1"], {})[1]
        ips[name] = base.split("//", 1)[1].rsplit(":", 1)[0]
    # Every path decided by robots.txt alone: the page caps of one round are lifted here.
    changes: dict[str, Any] = {"tasks": {k: v for k, v in {
        "subsidy": {"max_pages_per_host_per_round": 50}, "agenda": {"max_pages_per_site_per_round": 50}}.items()
        if k in b.profile.task_kinds}}
    changes["operator"] = {"blocked_domains": [*b.profile.operator.blocked_domains, ips["listed"]]}
    profile = b.derived(changes)
    stack = b.stack(profile, sources, START - 60)
    stack.store.block_domain(ips["blocked"], "the site owner asked us to stop (by mail)")
    stack.round(START, [reach.kind])
    moved_ip = moved.split("//", 1)[1].rsplit(":", 1)[0]
    before = stack.stored_text().count(moved_ip)
    b.extra["purge"] = purge_domain(stack.operator, moved_ip, texts=stack.texts, now=stack.now)
    b.extra["moved_items_before"] = before
    b.extra["moved_host"] = moved_ip
    return stack.finish()


def _play_pacing(b: Bench) -> Output:
    bot = b.extra["bot"]
    reach, p, pace = REACH[bot], _prefix(bot), PACE[bot]
    hosts = {"even": "User-agent: *\nAllow: /\n", "slow": f"User-agent: {b.profile.robots_token}\nCrawl-delay: 1.6\n"}
    if pace.cap_s is not None:
        hosts["capped"] = "User-agent: *\nCrawl-delay: 30\n"
    sources: list[Any] = []
    for name, text in hosts.items():
        paths = [f"{p}/p/1", f"{p}/p/2"] + ([f"{p}/hop"] if name == "even" else [])
        pages = {"/robots.txt": robots(text), **{x: reach.page(f"{name} {x}") for x in paths + [f"{p}/p/3"]}}
        if name == "even":
            pages[f"{p}/hop"] = Route(status=301, location=f"{p}/p/3")

        def routes(base: str, name: str = name, paths: list[str] = paths,
                   pages: dict[str, Route] = pages) -> dict[str, Route]:
            table, srcs = reach.world(name, base, paths, pages, cookies=False)
            sources.extend(srcs)
            return table
        b.sites.add(name, routes)
    stack = b.stack(b.derived(), sources, START - 60, patience_s=4.0)
    stack.round(START, [reach.kind])
    return stack.finish()


def _play_concurrent(b: Bench) -> Output:
    """One host's work token handed to three fetchers at once, every answer of the host slow."""
    bot = b.extra["bot"]
    reach, p = REACH[bot], _prefix(bot)
    paths = [f"{p}/l/{i}" for i in range(3)]

    def slow(route: Route) -> Route:
        body = route.body

        def answer(hit: Hit) -> str | bytes:
            time.sleep(0.25)  # long enough that two requests at once would overlap at the site
            return body(hit) if callable(body) else body
        return replace(route, body=answer)
    pages = {"/robots.txt": robots("User-agent: *\nAllow: /\n"), **{x: reach.page(f"Samen {x}") for x in paths}}

    def routes(base: str) -> dict[str, Route]:
        return {k: slow(v) for k, v in reach.world("together", base, paths, pages, cookies=False)[0].items()}
    base = b.sites.add("together", routes)
    sources = reach.world("together", base, paths, {})[1]
    stack = b.stack(b.derived(), sources, START - 60)
    stack.advance_to(START)
    stack.run.fire(START, [reach.kind])
    b.extra["copies"] = stack.invoke_copies(3)
    return stack.finish()


def scenarios(bot: str) -> list[Scenario]:
    def with_bot(play: Any) -> Any:
        def run(b: Bench) -> Output:
            b.extra["bot"] = bot
            out: Output = play(b)
            return out
        return run
    return [Scenario("common", 0, "robots.txt groups, cookies, traps, a login, redirects, a block, a purge",
                     with_bot(_play_common)),
            Scenario("pacing", PACE[bot].scale, "three hosts: the gap, Crawl-delay up to the cap, a redirect hop",
                     with_bot(_play_pacing)),
            # Duplicate deliveries are SQS's and Lambda's: the embedded engine holds a token once.
            Scenario("concurrent", 0, "one host's work token handed to three fetchers at once",
                     with_bot(_play_concurrent), engine="aws")]


# --- the checks -----------------------------------------------------------------------------------

def identity(r: Runs) -> Proof:
    proof, ua = Proof(), r.profile.user_agent
    every = r["common"].every() + r["pacing"].every()
    seen = {x.header("User-Agent") for x in every}
    sites = len(r["common"].logs) + len(r["pacing"].logs)
    proof.that(seen == {ua}, f"{len(every)} requests on {sites} sites, every one with exactly the profile's "
                             "User-Agent" + ("" if seen == {ua} else f" (saw {sorted(map(str, seen))})"))
    token = re.escape(r.profile.robots_token)
    proof.that(bool(re.fullmatch(rf"{token}/\d+(\.\d+)* \(\+https?://\S+?(; [^)]*)?\)", ua)),
               "it reads token/version (+info URL)")
    proof.that(not any(w in ua for w in BROWSER_WORDS), "no browser word in it")
    return proof


def robots_first(r: Runs) -> Proof:
    proof, seen = Proof(), r["common"]
    paths = _open_paths(r.bot)
    for site in ("open", "moved"):
        log = seen.paths(site)
        proof.that(bool(log) and log[0] == "/robots.txt" and log.count("/robots.txt") == 1,
                   f"{site}: robots.txt first and once ({len(log)} requests)")
    asked = set(seen.paths("open")) | set(seen.paths("moved"))
    closed = paths["disallowed"] + [f"{_prefix(r.bot)}/closed/x"]
    proof.that(not asked & set(closed), f"none of {len(closed)} disallowed URLs requested")
    refused = {s["url"].split("/", 3)[-1] for s in seen.out.skipped("robots_disallowed")}
    proof.that({c.lstrip("/") for c in closed} == refused,
               "each recorded as robots_disallowed, and no URL robots.txt allows"
               + ("" if refused <= {c.lstrip("/") for c in closed} else f" (also {sorted(refused)})"))
    return proof


def groups(r: Runs) -> Proof:
    proof, seen, p = Proof(), r["common"], _prefix(r.bot)
    asked = set(seen.paths("open"))
    proof.that(f"{p}/public/1" in asked,
               f"`*` closes all, the {r.profile.robots_token.lower()} group opened {p}/public/1")
    proof.that(f"{p}/news/public/y" in asked and f"{p}/news/x" not in asked,
               "longest match: Allow P/news/public/ beat Disallow P/news/".replace("P", p))
    proof.that(f"{p}/tie/z" in asked, "an Allow and a Disallow of one length: Allow won")
    query = f"{p}/files/doc.pdf?v=1"
    # A bot's own task may still decline it (SubsidieUpdate reads subsidy pages, not files): robots.txt did not.
    declined = sorted({x["reason"] for x in seen.out.skips if x["url"].endswith(query)})
    passed = query in asked or bool(declined) and "robots_disallowed" not in declined
    proof.that(f"{p}/files/doc.pdf.html" in asked and passed and f"{p}/files/doc.pdf" not in asked,
               "/*.pdf$ closed .pdf and not .pdf.html nor .pdf?v=1"
               + ("" if query in asked else f" (.pdf?v=1 then declined by the bot's task: {', '.join(declined)})"))
    return proof


def get_only(r: Runs) -> Proof:
    proof = Proof()
    every = r["common"].every() + r["pacing"].every()
    proof.that({x.method for x in every} == {"GET"}, f"{len(every)} requests, all GET")
    proof.that(not [x for x in every if x.header("Cookie") or x.header("Authorization")],
               "no Cookie or credentials sent, though every response set cookies")
    touched = sorted({x.path for x in every if x.path.startswith(TRAP_PATHS)})
    proof.that(not touched, "no script, stylesheet, form, image, pixel or consent dialog of a page requested"
               + (f" (asked {touched})" if touched else ""))
    return proof


def pacing(r: Runs) -> Proof:
    proof, seen, pace = Proof(), r["pacing"], PACE[r.bot]
    least = pace.min_gap_s * seen.scale
    g = seen.gaps("even")
    proof.that(bool(g) and min(g) >= least, f"min gap {secs(min(g, default=0))} over {len(g)} gaps "
               f"({pace.min_gap_s:g} s at {scale_words(seen.scale)}: >= {secs(least)})")
    g = seen.gaps("slow")
    proof.that(bool(g) and min(g) >= 1.6, f"Crawl-delay 1.6 s raised it: min {secs(min(g, default=0))}")
    if pace.cap_s is not None:
        # The delay used is the cap, not the 30 s asked (a site's Crawl-delay is not scaled): the
        # shortest gap is the cap's (a floor, and within a second of it), and none is 30 s. A gap
        # past the cap and short of that is a turn that waited for something else (AUBE-11's one
        # request over all hosts, the queue's whole seconds on AWS), never the delay asked.
        cap, crawl_delay = pace.cap_s * seen.scale, 30.0
        g = seen.gaps("capped")
        proof.that(bool(g) and cap <= min(g) < cap + 1 and max(g) < crawl_delay,
                   f"Crawl-delay 30 s capped at {pace.cap_s:g} s ({secs(cap)} here): gaps "
                   f"{secs(min(g, default=0))}-{secs(max(g, default=0))}")
    pairs = r["common"].overlaps() + seen.overlaps()
    proof.that(not pairs, "never two requests in flight to one host")
    together, p = r["concurrent"], _prefix(r.bot)
    asked = together.paths("together")
    proof.that({f"{p}/l/{i}" for i in range(3)} <= set(asked) and not together.overlaps()
               and together.extra["copies"] == 3,
               f"one host's work handed to {together.extra['copies']} fetchers at once (each answer 0.25 s slow): "
               f"{len(asked)} requests, all 3 pages, never two in flight")
    return proof


def redirect_is_a_request(r: Runs) -> Proof:
    proof, seen, p = Proof(), r["common"], _prefix(r.bot)
    moved, old = seen.log("moved"), {x.path: x for x in seen.log("open")}
    asked = [x.path for x in moved]
    # Praha-X reads the host's TDMRep file before an article it may keep (PRAHA-03).
    proof.that(asked[:1] == ["/robots.txt"] and f"{p}/new" in asked
               and set(asked) <= {"/robots.txt", "/.well-known/tdmrep.json", f"{p}/new"},
               f"the other host: robots.txt first, then the target ({', '.join(asked)})")
    hop = old.get(f"{p}/moved")
    proof.that(hop is not None and len(moved) > 1 and moved[-1].t_start > hop.t_end,
               "the target was its own GET after the redirect answered")
    proof.that(f"{p}/closed/x" not in {x.path for x in moved}, "a redirect into its closed area not followed")
    pacing = r["pacing"]
    hops = [x for x in pacing.log("even") if x.path in (f"{p}/hop", f"{p}/p/3")]
    least = PACE[r.bot].min_gap_s * pacing.scale
    gap = hops[1].t_start - hops[0].t_end if len(hops) == 2 else -1.0
    proof.that(gap >= least, f"a same-host hop paced like any request: {secs(max(gap, 0))} >= {secs(least)}")
    n = r.profile.redirects.max_hops
    chain = seen.paths("chain")
    last = f"{p}/c/{n + 1}"
    proof.that(all(f"{p}/c/{i}" in chain for i in range(n + 1)) and last not in chain
               and any(s["url"].endswith(last) for s in seen.out.skipped("too_many_redirects")),
               f"a chain of {n + 1} redirects: {n} followed (redirects.max_hops), the last target not asked, "
               "recorded as too_many_redirects")
    return proof


def public_only(r: Runs) -> Proof:
    proof, seen, paths = Proof(), r["common"], _open_paths(r.bot)
    login = [x for x in seen.log("open") if x.path in paths["login"]]
    proof.that(len(login) == 1 and not login[0].header("Authorization"), "a 401 page asked once, no credentials")
    from_login = [i for i in seen.out.items if i.get("detail_type") != "item.found"
                  and any(str(i.get(k, "")).endswith(paths["login"][0]) for k in ("url", "page"))]
    proof.that(not from_login, "nothing kept from it")
    kept = repr(seen.out.items) + seen.out.stored + seen.out.kept_text()
    if paths["paid"]:
        proof.that(any(s["url"].endswith(paths["paid"][0]) for s in seen.out.skipped("paywalled")),
                   "a paywalled article recorded as paywalled")
        proof.that(PAID not in kept and not [i for i in seen.out.of("article.read") if i["url"].endswith(
            paths["paid"][0])], "its text (in the page) kept nowhere, no article read from it")
    if r.bot in ("aubebot", "praha-x", "springstudiobot"):
        items = seen.out.of("item.found")
        found = repr(items)
        bylined = " (one from a feed item naming its author)" if REACH[r.bot].by == "feed" else ""
        proof.that(bool(items) and AUTHOR not in found and EMAIL not in found and "bruker_ola" not in found,
                   f"no author, address or user name in what it keeps of {len(items)} items{bylined}")
    if r.bot in NO_TEXT_KEPT:
        stored = seen.out.stored + seen.out.kept_text()
        proof.that(AUTHOR not in stored and EMAIL not in stored and "bruker_ola" not in stored,
                   "nor anywhere in what it stores (state and texts)")
    return proof


def stop_and_delete(r: Runs) -> Proof:
    proof, seen = Proof(), r["common"]
    proof.that(seen.log("blocked") == [], "a site blocked by a stop request saw no request at all, robots.txt "
                                          "allowing everything")
    proof.that(seen.log("listed") == [], "nor one in the profile's operator.blocked_domains")
    skipped = {str(s.get("source", "")).split("-")[0] for s in seen.out.skipped("blocked_by_operator")}
    proof.that(skipped == {"blocked", "listed"}, "both recorded as blocked_by_operator, and no other site")
    report, base = seen.extra["purge"], seen.bases["moved"]
    left = [line for line in seen.out.stored.splitlines() if f'"H#{base}' in line]
    elsewhere = [line for line in seen.out.stored.splitlines() if base in line and f'"H#{base}' not in line]
    proof.that(seen.extra["moved_items_before"] > 0 and not left and base not in seen.out.kept_text(),
               f"purge of {seen.extra['moved_host']}: {report.state_items} state items and {report.objects} "
               f"texts deleted, none of its host's items left")
    proof.that(f'"H#{seen.bases["open"]}' in seen.out.stored, "the other hosts' items kept")
    if elsewhere:
        proof.note(f"{len(elsewhere)} item(s) of other hosts still name its URLs (what they linked or redirected to)")
    return proof


def fixed_egress(r: Runs) -> Proof:
    """COMMON-09 on template.yaml (heed.conformance.deploy.egress), and that nothing else puts a
    function in the VPC and the NAT route is the default route."""
    from heed.conformance.deploy import egress, template

    proof, t = egress(r), template()
    res = t["Resources"]
    proof.that("VpcConfig" not in t.get("Globals", {}).get("Function", {}), "no VPC set for every function (Globals)")
    routes = [v["Properties"] for v in res.values() if v["Type"] == "AWS::EC2::Route"
              and ("NatGatewayId" in v["Properties"] or "InstanceId" in v["Properties"])]
    proof.that(bool(routes) and all(x.get("DestinationCidrBlock") == "0.0.0.0/0" for x in routes),
               "the NAT routes are the default route (0.0.0.0/0)")
    return proof


def rules(bot: str) -> list[Rule]:

    shipped = load_profile(bot)
    pace = PACE[bot]
    cap = Bound("politeness.crawl_delay_cap_s", "==", float(pace.cap_s)) if pace.cap_s is not None else Bound(
        "politeness.crawl_delay_cap_s", ">=", NO_CAP_S)
    upto = f"up to {pace.cap_s:g} s" if pace.cap_s is not None else "no cap"
    return [
        Rule("COMMON-01", "Every request carries the bot's own exact User-Agent: token/version (+info URL), "
                          "never a browser's.",
             (OwnIdentity(bot, PUBLISHED_UA[bot], shipped.robots_token),),
             identity),
        Rule("COMMON-02", "robots.txt comes first on a host, and nothing it disallows for the bot is fetched.",
             (), robots_first, binds=("robots_token",)),
        Rule("COMMON-03", "RFC 9309 groups: the bot's own group (any case) beats `*`; the longest path wins, "
                          "Allow on a tie; `*` and `$` work.", (), groups, binds=("robots_token",)),
        Rule("COMMON-04", "GET only: no forms, no login, no cookies sent or kept, no JavaScript run.", (), get_only),
        Rule("COMMON-05", f"One request at a time per host, at least {pace.min_gap_s:g} s apart, longer if "
                          f"Crawl-delay asks ({upto}).",
             (Bound("politeness.min_delay_s", ">=", pace.min_gap_s), cap), pacing),
        Rule("COMMON-06", "A redirect is a new request: its target is robots-checked and paced like any URL.",
             (Bound("redirects.max_hops", ">=", 1),), redirect_is_a_request),
        Rule("COMMON-07", "Only public pages: nothing behind a login or paywall, no personal data kept.", (),
             public_only),
        Rule("COMMON-08", "A stop request is honoured without a robots.txt change; all stored from a domain "
                          "can be deleted.", (), stop_and_delete, binds=("operator.blocked_domains",)),
        Rule("COMMON-09", "Requests leave from fixed, published egress addresses.", (), fixed_egress,
             binds=("egress.ips",), deployment=True),
    ]

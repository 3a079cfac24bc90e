"""COMMON-01..09, the rules all five bots share, proven on each bot's own task (see reach.py).

Three scenarios: ``common`` (one round, no waits: robots.txt groups and matching, cookies, traps,
a login, a paywall, redirects to another host, a blocked site, a purge), ``pacing`` (three hosts,
the profile's waits scaled: the minimum gap, Crawl-delay up to the cap, a redirect hop paced) and
``real`` (the profile's own waits, unscaled where they are short)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from heed_core.profile import load_profile

from heed.conformance.model import Bound, OwnIdentity, Proof, Rule, Runs, Scenario, scale_words, secs, utc
from heed.conformance.reach import REACH
from heed.conformance.runner import Bench
from heed.conformance.sites import TRAP_PATHS, robots
from heed.conformance.stack import Output
from heed.demo.web import Route

__all__ = ["PACE", "Pace", "get_only", "groups", "identity", "pacing", "public_only", "redirect_is_a_request",
           "robots_first", "rules", "scenarios", "stop_and_delete"]

START = utc("2026-12-01T06:00")  # a Tuesday; every bot's task runs when fired
AUTHOR, EMAIL = "Kari Nordmann", "kari.nordmann@example.org"
PAID = "SEGRETO-PAGATO"
BROWSER_WORDS = ("Mozilla", "Chrome", "Safari", "Gecko", "Firefox", "Edg/")
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


def _prefix(bot: str) -> str:
    return REACH[bot].prefix


def _open_paths(bot: str) -> dict[str, list[str]]:
    """The paths the bot is brought to on the main host, by what robots.txt says of them."""
    p = _prefix(bot)
    return {"allowed": [f"{p}/public/1", f"{p}/news/public/y", f"{p}/tie/z", f"{p}/files/doc.pdf.html"],
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

    def open_routes(base: str) -> dict[str, Route]:
        routes, srcs = reach.world("open", base, [x for k in paths.values() for x in k], pages)
        sources.extend(srcs)
        return routes
    b.sites.add("open", open_routes)
    blocked = b.sites.add("blocked", lambda base: reach.world(
        "blocked", base, [f"{p}/public/1"], {"/robots.txt": robots("User-agent: *\nAllow: /\n"),
                                             f"{p}/public/1": reach.page("Geblokkeerd")})[0])
    sources += reach.world("blocked", blocked, [f"{p}/public/1"], {})[1]
    # Every path decided by robots.txt alone: the page caps of one round are lifted here.
    profile = b.derived({"tasks": {k: v for k, v in {
        "subsidy": {"max_pages_per_host_per_round": 50}, "agenda": {"max_pages_per_site_per_round": 50}}.items()
        if k in b.profile.task_kinds}})
    stack = b.stack(profile, sources, START - 60)
    block_ip = blocked.split("//", 1)[1].rsplit(":", 1)[0]
    stack.store.block_domain(block_ip, "the site owner asked us to stop (by mail)")
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
                     with_bot(_play_pacing))]


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
    proof.that({c.lstrip("/") for c in closed} <= refused, "each recorded as robots_disallowed")
    return proof


def groups(r: Runs) -> Proof:
    proof, seen, p = Proof(), r["common"], _prefix(r.bot)
    asked = set(seen.paths("open"))
    proof.that(f"{p}/public/1" in asked,
               f"`*` closes all, the {r.profile.robots_token.lower()} group opened {p}/public/1")
    proof.that(f"{p}/news/public/y" in asked and f"{p}/news/x" not in asked,
               "longest match: Allow P/news/public/ beat Disallow P/news/".replace("P", p))
    proof.that(f"{p}/tie/z" in asked, "an Allow and a Disallow of one length: Allow won")
    proof.that(f"{p}/files/doc.pdf.html" in asked and f"{p}/files/doc.pdf" not in asked,
               "/*.pdf$ closed .pdf and not .pdf.html")
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
        cap = pace.cap_s * seen.scale
        g = seen.gaps("capped")
        proof.that(bool(g) and cap <= min(g) and max(g) < cap + 2,
                   f"Crawl-delay 30 s capped at {pace.cap_s:g} s ({secs(cap)} here): gaps "
                   f"{secs(min(g, default=0))}-{secs(max(g, default=0))}")
    pairs = r["common"].overlaps() + seen.overlaps()
    proof.that(not pairs, "never two requests in flight to one host")
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
        proof.that(PAID not in kept, "its text (in the page) kept nowhere")
    if r.bot in ("aubebot", "praha-x", "springstudiobot"):
        found = repr(seen.out.of("item.found"))
        proof.that(AUTHOR not in found and EMAIL not in found and "bruker_ola" not in found,
                   "no author, address or user name in what it keeps of an item")
    return proof


def stop_and_delete(r: Runs) -> Proof:
    proof, seen = Proof(), r["common"]
    proof.that(seen.log("blocked") == [], "a blocked site saw no request at all, robots.txt allowing everything")
    proof.that(bool(seen.out.skipped("blocked_by_operator")), "recorded as blocked_by_operator")
    report, base = seen.extra["purge"], seen.bases["moved"]
    left = [line for line in seen.out.stored.splitlines() if f'"H#{base}' in line]
    elsewhere = [line for line in seen.out.stored.splitlines() if base in line and f'"H#{base}' not in line]
    proof.that(seen.extra["moved_items_before"] > 0 and not left and base not in seen.out.kept_text(),
               f"purge of {seen.extra['moved_host']}: {report.state_items} state items and {report.objects} "
               f"texts deleted, none of its host's items left")
    if elsewhere:
        proof.note(f"{len(elsewhere)} item(s) of other hosts still name its URLs (what they linked or redirected to)")
    return proof


def rules(bot: str) -> list[Rule]:
    from heed.conformance.deploy import egress

    shipped = load_profile(bot)
    pace = PACE[bot]
    cap = Bound("politeness.crawl_delay_cap_s", "==", float(pace.cap_s)) if pace.cap_s is not None else Bound(
        "politeness.crawl_delay_cap_s", ">=", NO_CAP_S)
    upto = f"up to {pace.cap_s:g} s" if pace.cap_s is not None else "no cap"
    return [
        Rule("COMMON-01", "Every request carries the bot's own exact User-Agent: token/version (+info URL), "
                          "never a browser's.",
             (OwnIdentity(bot, shipped.user_agent, shipped.robots_token),),
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
        Rule("COMMON-09", "Requests leave from fixed, published egress addresses.", (), egress,
             binds=("egress.ips",), deployment=True),
    ]

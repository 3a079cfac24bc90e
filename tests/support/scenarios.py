"""The scenarios several rule files share: a run of a bot's shape on a small web, built once a
session (the fixtures in tests/conformance/conftest.py wrap these), and the pages they serve.

Each builder starts its sites on the ``Web`` it is given (the caller stops it), runs the bot and
returns the scenario."""
from __future__ import annotations

import time
from pathlib import Path
from xml.sax.saxutils import escape

from heed_core.work import Source

from heed.demo.web import Route

from tests.support.pages import (
    PAGE_TRAPS,
    FeedEntry,
    cookie_routes,
    feed_route,
    html_page,
    listing,
    robots,
)
from tests.support.runs import Scenario, SteppedRun, at, derived, run_bot
from tests.support.web import Web

__all__ = ["IMAGE_BITS", "LONG", "PAID_TEXT", "PAYWALL_HEAD", "RFC_ALLOWED", "RFC_DISALLOWED", "RFC_ROBOTS", "START",
           "aube_round", "spring_pacing", "spring_redirects"]

START = at("2026-12-01T06:00:00Z")  # a Tuesday, SpringStudioBot's daily hour


def spring_pacing(w: Web, out_dir: Path) -> Scenario:
    """SpringStudioBot's shape with small delays (0.3 s, Crawl-delay cap 1.7 s; the shipped
    10 s / 60 s are in tests/unit/test_profiles.py::test_spring_08_shipped_numbers): three hosts,
    a listing page each, one without Crawl-delay, one with 1.6 s, one asking for 30 s.
    (Deferred work comes back after whole seconds, so a gap the rule allows below 1 s shows as
    about 1 s: the Crawl-delays are above that to tell them from the minimum gap.)"""
    page = Route(body=lambda hit: (time.sleep(0.05), listing([("Sak", "/sak/1")]))[1])
    sites = {name: w.site(name, {"/robots.txt": robots(text), "/liste/1/": page})
             for name, text in (("jevn", "User-agent: *\nDisallow: /privat/\n"),
                                ("rolig", "User-agent: SpringStudioBot\nCrawl-delay: 1.6\n"),
                                ("treg", "User-agent: *\nCrawl-delay: 30\n"))}
    profile = derived("springstudiobot", politeness={"min_delay_s": 0.3, "crawl_delay_cap_s": 1.7})
    sources = [Source(n, f"{s.base_url}/liste/1/", "page") for n, s in sites.items()]
    return Scenario(sites, run_bot(profile, sources, out_dir, start=START))


def spring_redirects(w: Web, out_dir: Path) -> Scenario:
    """SpringStudioBot (0.4 s gap, one redirect hop allowed): a listing moved to another host,
    a page redirected into that host's closed area, and on a third host a redirect chain."""
    ny = w.site("ny", {"/robots.txt": robots("User-agent: *\nDisallow: /stengt/\n"),
                       "/ny/": Route(body=listing([("Flyttet sak", "/sak/9")]))})
    gammel = w.site("gammel", {
        "/robots.txt": robots("User-agent: *\nAllow: /\n"),
        "/gammel/": Route(status=301, location=f"{ny.base_url}/ny/"),
        "/rundt/": Route(status=302, location=f"{ny.base_url}/stengt/side/"),
    })
    kjede = w.site("kjede", {
        "/robots.txt": robots("User-agent: *\nAllow: /\n"),
        "/kjede/0": Route(status=301, location="/kjede/1"),
        "/kjede/1": Route(status=301, location="/kjede/2"),
        "/kjede/2": Route(body=listing([("Enden", "/sak/2")])),
    })
    profile = derived("springstudiobot", politeness={"min_delay_s": 0.4}, redirects={"max_hops": 1})
    sources = [Source("gammel", f"{gammel.base_url}/gammel/", "page"),
               Source("rundt", f"{gammel.base_url}/rundt/", "page"),
               Source("kjede", f"{kjede.base_url}/kjede/0", "page")]
    return Scenario({"ny": ny, "gammel": gammel, "kjede": kjede}, run_bot(profile, sources, out_dir, start=START))


# AubeBot's RFC 9309 host: the `*` group closes everything, AubeBot's own group (named in lower
# case) opens all but /news/ (except /news/public/), PDFs at the end of a path, and /tie/ where an
# Allow and a Disallow of the same length meet (Allow wins).
RFC_ROBOTS = """User-agent: *
Disallow: /

User-agent: aubebot
Disallow: /news/
Allow: /news/public/
Disallow: /*.pdf$
Allow: /tie/
Disallow: /tie/
"""
RFC_ALLOWED = ("/a/1", "/news/public/y", "/tie/z", "/files/doc.pdf?v=1")
RFC_DISALLOWED = ("/news/x", "/files/doc.pdf")
LONG = "Un sommario lungo e completo. " * 30  # 900 characters: the feed suffices (AUBE-03)
IMAGE_BITS = ("<enclosure url='{{base}}/img/e.jpg' type='image/jpeg' length='1000'/>"
              "<media:content url='{{base}}/img/m.jpg' medium='image'/>")


def _article(title: str, text: str, head: str = "") -> str:
    links = "".join(f"<a href='/art/altro/{i}'>altro {i}</a> <a href='/tag/{i}'>tag</a>" for i in range(3))
    return html_page(title, f"<main><article><h1>{escape(title)}</h1><p>{text}</p>"
                            f"<img src='/img/art.jpg'></article><nav>{links}</nav></main>{PAGE_TRAPS}",
                     head=f"<meta property='og:image' content='/img/og.jpg'>{head}")


PAYWALL_HEAD = ('<script type="application/ld+json">{"@context": "https://schema.org", "@type": "NewsArticle",'
                ' "headline": "Premium", "isAccessibleForFree": false}</script>')
PAID_TEXT = "SEGRETO-PAGATO: il testo intero per gli abbonati"


def aube_round(w: Web, out_dir: Path) -> Scenario:
    """One AubeBot round over nine hosts (no minimum gap, Crawl-delay cap 1.2 s, a per-source
    article cap of 20 so the RFC host's six candidates are all decided by robots.txt; the shipped
    numbers are proven in test_aube.py's shipped-profile test and tests/unit/test_profiles.py)."""
    sites = {
        "rfc": w.site("rfc", cookie_routes({
            "/robots.txt": robots(RFC_ROBOTS),
            "/feed.xml": feed_route([FeedEntry(f"RFC {p}", "{{base}}" + p) for p in RFC_ALLOWED + RFC_DISALLOWED]),
        }), fallback=Route(body=_article("Articolo", "Testo libero."))),
        "big": w.site("big", cookie_routes({
            "/robots.txt": robots("User-agent: *\nAllow: /\n"),
            "/feed.xml": feed_route(
                [FeedEntry(f"Notizia {i}", f"{{{{base}}}}/n/{i}",
                           summary=LONG + f"<img src='{{{{base}}}}/img/d{i}.jpg'>", extra=IMAGE_BITS
                           + "<author>kari.nordmann@example.org (Kari Nordmann)</author>"
                           + "<dc:creator>Kari Nordmann</dc:creator>")
                 for i in range(45)],
                channel_extra="<image><url>{{base}}/img/logo.png</url><title>T</title><link>{{base}}/</link></image>"),
        }), fallback=Route(body=_article("Non richiesto", "Mai."))),
        "short": w.site("short", cookie_routes({
            "/robots.txt": robots("User-agent: *\nAllow: /\n"),
            "/feed.xml": feed_route([FeedEntry("Breve", "{{base}}/art/599", summary="s" * 599, extra=IMAGE_BITS),
                                     FeedEntry("Giusto", "{{base}}/art/600", summary="s" * 600),
                                     FeedEntry("Lungo", "{{base}}/art/long", summary=LONG)]),
        }), fallback=Route(body=_article("Articolo breve", "Il testo dell'articolo."))),
        "paywall": w.site("paywall", cookie_routes({
            "/robots.txt": robots("User-agent: *\nAllow: /\n"),
            "/feed.xml": feed_route([FeedEntry("Premium", "{{base}}/premium/1", summary="Solo abbonati.")]),
            "/premium/1": Route(body=_article("Premium", PAID_TEXT, head=PAYWALL_HEAD).replace(
                "<article>", "<article class='paywall'>")),
        })),
        "closed": w.site("closed", cookie_routes({
            "/robots.txt": robots("User-agent: AubeBot\nDisallow: /feed\n"),
            "/feed.xml": feed_route([FeedEntry("Chiuso", "{{base}}/c/1", summary="Breve.")]),
        })),
        "slowpoke": w.site("slowpoke", cookie_routes({
            "/robots.txt": robots("User-agent: *\nCrawl-delay: 30\n"),
            "/feed.xml": feed_route([FeedEntry("Lento", "{{base}}/l/1", summary=LONG)]),
        })),
    }
    # Two feeds that link one article on a third host, read in the same round (AUBE-03).
    shared = w.site("shared", {"/robots.txt": robots("User-agent: *\nAllow: /\n"),
                               "/art/shared": Route(body=_article("Condiviso", "Testo condiviso."))})
    for twin in ("twin1", "twin2"):
        sites[twin] = w.site(twin, {"/robots.txt": robots("User-agent: *\nAllow: /\n"), "/feed.xml": feed_route(
            [FeedEntry("Condiviso", shared.base_url + "/art/shared", summary="Breve.")])})
    profile = derived("aubebot", politeness={"min_delay_s": 0, "crawl_delay_cap_s": 1.2},
                      tasks={"feed": {"article_followup": {"per_source_per_window": 20}}})
    sources = [Source(name, f"{s.base_url}/feed.xml", "feed") for name, s in sites.items()]
    t = at("2026-12-01T10:00:00Z")
    with SteppedRun(profile, sources, out_dir, start=t) as run:
        run.round(t)
        out = run.finish(capture=True)
    return Scenario({**sites, "shared": shared}, out)

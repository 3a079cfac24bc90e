"""What the recording sites serve: pages, feeds, sitemaps, robots.txt, and the traps no bot may touch.

Bodies may name ``{{base}}`` (the server fills in its own base URL per request); a site on a host
name of its own (``Web.add(..., hostname=...)``) passes its base URL instead, so the links carry
the name, not the address."""
from __future__ import annotations

import html
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from email.utils import formatdate
from typing import Any
from xml.sax.saxutils import escape

from heed.demo.web import Route

__all__ = [
    "COOKIE", "PAGE_TRAPS", "TRAP_PREFIXES", "FeedEntry", "cookie_routes", "feed_route", "html_page", "listing",
    "robots", "rss", "sitemap_index", "sitemap_xml", "slow", "text", "urlset", "with_cookie",
]

TEXT = "text/plain; charset=utf-8"
_SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def text(body: str, **kw: Any) -> Route:
    """A plain-text route (robots.txt, mostly)."""
    return Route(body=body, content_type=TEXT, **kw)


def robots(body: str) -> Route:
    """A robots.txt route."""
    return text(body)


def html_page(title: str, body: str = "", head: str = "", *, lang: str | None = None, main: bool = False) -> str:
    """A small HTML5 page; ``main`` puts the body in a ``<main>`` element (where a page's own
    text is read from), ``lang`` gives the document a language."""
    lang_attr = f' lang="{lang}"' if lang else ""
    content = f"<main>{body}</main>" if main else body
    return (f"<!doctype html><html{lang_attr}><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"{head}</head><body>{content}</body></html>")


@dataclass(frozen=True)
class FeedEntry:
    """One RSS item; ``link`` may hold ``{{base}}``. ``extra`` is raw XML added to the item;
    ``date`` an RFC 822 date as written (else ``published`` is written)."""

    title: str
    link: str
    summary: str = "Breve."
    extra: str = ""
    published: float = 1796025600.0  # 2026-12-01T08:00:00Z
    date: str | None = None


def rss(entries: Sequence[FeedEntry], *, title: str = "Tech", channel_extra: str = "", base: str = "{{base}}") -> str:
    """An RSS 2.0 feed of ``entries``; the channel links to ``base``."""
    items = "".join(
        f"<item><title>{escape(e.title)}</title><link>{escape(e.link)}</link><guid>{escape(e.link)}</guid>"
        f"<description>{escape(e.summary)}</description>"
        f"<pubDate>{e.date or formatdate(e.published, usegmt=True)}</pubDate>{e.extra}</item>" for e in entries)
    return ('<?xml version="1.0" encoding="UTF-8"?><rss version="2.0" '
            'xmlns:media="http://search.yahoo.com/mrss/" xmlns:dc="http://purl.org/dc/elements/1.1/">'
            f"<channel><title>{escape(title)}</title><link>{base}/</link>{channel_extra}{items}"
            "</channel></rss>")


def feed_route(entries: Sequence[FeedEntry], **kwargs: Any) -> Route:
    """The feed of ``entries`` as a conditional route (ETag, Last-Modified, 304)."""
    return Route(body=rss(entries, **kwargs), content_type="application/rss+xml; charset=utf-8", conditional=True)


def sitemap_xml(paths: Sequence[str], *, base: str = "{{base}}", lastmod: str | None = None) -> str:
    """A urlset listing ``paths`` under ``base``."""
    when = f"<lastmod>{lastmod}</lastmod>" if lastmod else ""
    urls = "".join(f"<url><loc>{escape(base + p)}</loc>{when}</url>" for p in paths)
    return f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{_SITEMAP_NS}">{urls}</urlset>'


def urlset(paths: Sequence[str]) -> Route:
    """A sitemap listing ``paths`` of the site it is served from."""
    return Route(body=sitemap_xml(paths, lastmod="2026-11-30"), content_type="application/xml")


def sitemap_index(children: Sequence[str]) -> Route:
    """A sitemap index naming the child sitemaps at ``children`` on the same site."""
    maps = "".join(f"<sitemap><loc>{{{{base}}}}{c}</loc></sitemap>" for c in children)
    return Route(body=f'<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="{_SITEMAP_NS}">{maps}'
                      "</sitemapindex>", content_type="application/xml")


# --- page bits the scenarios share ----------------------------------------------------------------

# What no bot may touch on any page (COMMON-04, AUBE-07): script, login form, stylesheet, images.
PAGE_TRAPS = ("<script src='/js/app.js'></script><link rel='stylesheet' href='/css/site.css'>"
              "<form method='post' action='/login'><input name='user'><input type='password' name='pw'></form>"
              "<img src='/img/hero.jpg' alt=''>")
TRAP_PREFIXES = ("/js/", "/css/", "/login")  # and /img/, which AubeBot promises apart (AUBE-07)
COOKIE: tuple[tuple[str, str], ...] = (("Set-Cookie", "sid=g1-session; Path=/"), ("Set-Cookie", "consent=no; Path=/"))


def with_cookie(route: Route) -> Route:
    """The same route, setting cookies a bot must neither keep nor send back (COMMON-04)."""
    return Route(body=route.body, status=route.status, content_type=route.content_type,
                 headers=route.headers + COOKIE, conditional=route.conditional,
                 last_modified=route.last_modified, location=route.location)


def cookie_routes(routes: Mapping[str, Route]) -> dict[str, Route]:
    return {path: with_cookie(r) for path, r in routes.items()}


def listing(items: Sequence[tuple[str, str]], *, byline: str = "Kari Nordmann") -> str:
    """A news listing: headline links with a time, an author byline, a teaser and a comment."""
    arts = "".join(
        f"<article><h2><a href='{link}'>{escape(title)}</a></h2>"
        f"<time datetime='2026-12-01T0{i % 10}:00:00Z'>i dag</time>"
        f"<p class='byline'>Av <span class='author'>{byline}</span></p>"
        f"<p class='teaser'>Innleggstekst {i}: hemmelig-brodtekst-{i}.</p>"
        f"<div class='comment'><span class='user'>bruker_{i}_ola</span> skrev: kommentar {i}</div></article>"
        for i, (title, link) in enumerate(items))
    return html_page("Nyheter", f"<main>{arts}</main>{PAGE_TRAPS}")


def slow(route: Route, seconds: float) -> Route:
    """The same route answering ``seconds`` late (a request that takes time, AUBE-09)."""
    inner = route.body

    def body(hit: Any) -> Any:
        time.sleep(seconds)
        return inner(hit) if callable(inner) else inner
    return Route(body=body, status=route.status, content_type=route.content_type, headers=route.headers,
                 conditional=route.conditional, last_modified=route.last_modified, location=route.location)

"""How each bot is brought to a given set of paths on a site, the way its own task would go there.

A feed reader (AubeBot, Praha-X) is given one feed per path whose item links there; a page bot
(SpringStudioBot) one page source per path; the sitemap-led bots (WannadoBot, SubsidieUpdate)
the site's sitemap.xml listing them. Every path serves the kind of page the bot reads (an article,
a listing, an agenda with an event, a subsidy page), so the shared rules (COMMON) are proven on
each bot's own task."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from heed_core.work import Source, TaskKind

from heed.conformance.sites import TRAPS, html_page, jsonld, rss, urlset, with_cookies
from heed.demo.web import Route

__all__ = ["REACH", "Reach"]


def _article(title: str, extra: str = "", head: str = "") -> Route:
    links = "".join(f"<a href='/tag/{i}'>tag {i}</a>" for i in range(3))
    return Route(body=html_page(title, f"<main><article><h1>{title}</h1><p>Testo: {title}.</p>{extra}</article>"
                                       f"<nav>{links}</nav></main>{TRAPS}", head=head))


def _listing(title: str, extra: str = "", head: str = "") -> Route:
    return Route(body=html_page(title, f"<main><article><h2><a href='/sak/{abs(hash(title)) % 997}'>{title}</a></h2>"
                                       f"<time datetime='2026-12-01T05:00:00Z'>i dag</time>{extra}</article></main>"
                                       f"{TRAPS}", head=head))


def _agenda(title: str, extra: str = "", head: str = "") -> Route:
    event = {"name": title, "startDate": "2026-12-04T20:15:00+01:00", "url": "/agenda/",
             "location": {"@type": "Place", "name": "Zaal"}}
    return Route(body=html_page(title, f"<main><h1>{title}</h1>{extra}</main>{TRAPS}", head=jsonld([event]) + head))


def _subsidy(title: str, extra: str = "", head: str = "") -> Route:
    return Route(body=html_page(title, f"<main><h1>{title}</h1><p>{title}: aanvragen kan tot 1 maart 2027.</p>"
                                       f"{extra}</main>{TRAPS}", head=head))


@dataclass(frozen=True)
class Reach:
    kind: TaskKind
    prefix: str                      # where the bot's own task goes on a site (its topic)
    page: Callable[..., Route]       # page(title, extra_body="", head="")
    by: str                          # "feed", "page" or "sitemap"
    write_about: bool = False

    def world(self, site: str, base: str, paths: Sequence[str], pages: Mapping[str, Route],
              cookies: bool = True) -> tuple[dict[str, Route], list[Source]]:
        """The routes of a site whose ``pages`` (path -> route) the bot is brought to along
        ``paths`` (pages may hold more, e.g. redirect targets), and the sources that do it."""
        routes: dict[str, Route] = dict(pages)
        sources: list[Source] = []
        if self.by == "feed":
            opts = {"write_about": True} if self.write_about else {}
            for i, path in enumerate(paths):
                feed = f"/feeds/{i}.xml"
                routes[feed] = Route(body=rss([{"title": f"Item {path}", "link": "{{base}}" + path,
                                                "summary": "Breve."}]),
                                     content_type="application/rss+xml; charset=utf-8")
                sources.append(Source(f"{site}-{i}", base + feed, "feed", dict(opts)))
        elif self.by == "page":
            sources += [Source(f"{site}-{i}", base + p, "page") for i, p in enumerate(paths)]
        else:
            routes["/sitemap.xml"] = urlset(list(paths))
            routes.setdefault("/", Route(body=html_page("Home", "<p>Welkom.</p>")))
            sources.append(Source(site, base + "/", self.kind))
        if cookies:
            routes = {p: with_cookies(r) for p, r in routes.items()}
        return routes, sources


REACH: dict[str, Reach] = {
    "aubebot": Reach("feed", "/art", _article, "feed"),
    "praha-x": Reach("feed", "/clanky", _article, "feed", write_about=True),
    "springstudiobot": Reach("page", "/liste", _listing, "page"),
    "wannadobot": Reach("agenda", "/agenda", _agenda, "sitemap"),
    "subsidieupdate": Reach("subsidy", "/subsidies", _subsidy, "sitemap"),
}

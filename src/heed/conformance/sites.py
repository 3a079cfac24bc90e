"""The sites a conformance run crawls: recording servers on 127.0.0.210-249 and what they serve.

Every site logs each request it receives (``heed.demo.web.RecordingServer``); the checks read
those logs, so a rule is proven from the site owner's side. A site may have a host name (the
run's resolver knows it) and more than one address (PRAHA-07: "never other addresses")."""
from __future__ import annotations

import html
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import pairwise

from heed.demo.web import RecordingServer, RequestRecord, Route, Site

__all__ = ["COOKIES", "IPS", "TRAPS", "TRAP_PATHS", "Sites", "atom", "gaps", "html_page", "jsonld", "overlaps",
           "robots", "rss", "sitemap_index", "urlset", "with_cookies"]

# Away from the demo web (127.0.0.10 upward) and the test suites' ranges (100-205).
IPS = tuple(f"127.0.0.{n}" for n in range(210, 250))
Routes = Mapping[str, Route] | Callable[[str], Mapping[str, Route]]

# What no bot may touch on any page (COMMON-04, AUBE-07, WANNADO-08): a script, a stylesheet,
# a login form, an image, a tracking pixel, a consent dialog.
TRAPS = ("<script src='/js/app.js'></script><link rel='stylesheet' href='/css/site.css'>"
         "<form method='post' action='/login'><input name='user'><input type='password' name='pw'></form>"
         "<img src='/img/hero.jpg' alt=''><img src='/pixel.gif?t=1' width='1' height='1' alt=''>"
         "<iframe src='/consent/dialog.html'></iframe>")
TRAP_PATHS = ("/js/", "/css/", "/login", "/img/", "/pixel.gif", "/consent/")
COOKIES = (("Set-Cookie", "sid=conformance; Path=/"), ("Set-Cookie", "consent=no; Path=/"))


class _SecondAddress(RecordingServer):
    """The same site on another address and the same port (a host name with two A records)."""

    def __init__(self, site: Site, ip: str, port: int) -> None:
        self._port = port
        super().__init__(site, ip)

    def server_bind(self) -> None:
        self.server_address = (self.server_address[0], self._port)
        super().server_bind()


class Sites:
    """The recording sites of one scenario, by name; ``stop()`` stops them all, the logs stay."""

    def __init__(self) -> None:
        self._free = iter(IPS)
        self.servers: dict[str, list[RecordingServer]] = {}
        self.bases: dict[str, str] = {}
        self._names: dict[str, list[str]] = {}

    def add(self, name: str, routes: Routes, *, hostname: str | None = None, fallback: Route | None = None,
            addresses: int = 1) -> str:
        """Start a site and return its base URL. ``routes`` may be a function of that base, so
        feeds and sitemaps can carry absolute links to the site itself."""
        ips = [next(self._free) for _ in range(addresses)]
        site = Site(name=name, routes={}, fallback=fallback)
        first = RecordingServer(site, ip=ips[0])
        servers = [first] + [_SecondAddress(site, ip, first.port) for ip in ips[1:]]
        base = f"http://{hostname}:{first.port}" if hostname else first.base_url
        table = routes(base) if callable(routes) else routes
        for server in servers:
            server.base_url = base  # what {{base}} in a body becomes: the name the bot knows the site by
            for path, route in table.items():
                server.set_route(path, route)
            server.start()
        if hostname:
            self._names[hostname.lower()] = ips
        self.servers[name], self.bases[name] = servers, base
        return base

    def base(self, name: str) -> str:
        return self.bases[name]

    def set_route(self, name: str, path: str, route: Route | None) -> None:
        for server in self.servers[name]:
            server.set_route(path, route)

    def resolver(self, host: str, port: int) -> list[str]:
        """The run's DNS: a name added here, or an address as it is."""
        found = self._names.get(host.lower().rstrip("."))
        if found is not None:
            return list(found)
        if host.replace(".", "").isdigit():
            return [host]
        raise OSError(f"no such host {host!r}")

    def logs(self) -> dict[str, list[RequestRecord]]:
        """Every site's requests, over all its addresses, oldest first."""
        return {name: sorted((r for s in servers for r in s.log()), key=lambda r: r.t_start)
                for name, servers in self.servers.items()}

    def log(self, name: str) -> list[RequestRecord]:
        """The requests the site ``name`` got, over all its addresses, oldest first."""
        return self.logs()[name]

    def by_address(self, name: str) -> dict[str, int]:
        return {str(s.ip): len(s.log()) for s in self.servers[name]}

    def stop(self) -> None:
        for servers in self.servers.values():
            for server in servers:
                server.stop()


# --- what the sites saw ------------------------------------------------------------------------

def gaps(log: Sequence[RequestRecord], marks: Sequence[float] = ()) -> list[float]:
    """Seconds from the end of each request to the start of the next (AUBE-09's measure), only
    between requests the run's clock did not jump between (``marks``: the wall times of jumps;
    across one, hours of simulated time pass in no real time)."""
    out = []
    for a, b in pairwise(log):
        if not any(a.t_start <= m <= b.t_start for m in marks):
            out.append(b.t_start - a.t_end)
    return out


def overlaps(log: Iterable[RequestRecord]) -> list[tuple[RequestRecord, RequestRecord]]:
    """Pairs of requests that were in flight at the same time."""
    ordered = sorted(log, key=lambda r: r.t_start)
    return [(a, b) for a, b in pairwise(ordered) if b.t_start < a.t_end]


# --- what they serve ---------------------------------------------------------------------------

def robots(text: str) -> Route:
    return Route(body=text, content_type="text/plain; charset=utf-8")


def with_cookies(route: Route) -> Route:
    """The same route, setting cookies a bot must neither keep nor send back (COMMON-04)."""
    return Route(body=route.body, status=route.status, content_type=route.content_type,
                 headers=route.headers + COOKIES, conditional=route.conditional,
                 last_modified=route.last_modified, location=route.location)


def html_page(title: str, body: str = "", head: str = "") -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>{head}"
            f"</head><body>{body}</body></html>")


def rss(items: Sequence[Mapping[str, str]], *, title: str = "Nieuws", extra: str = "") -> str:
    """RSS 2.0; each item: title, link (may name ``{{base}}``), optional summary, date, extra XML."""
    out = []
    for it in items:
        link = html.escape(it["link"])
        out.append(f"<item><title>{html.escape(it['title'])}</title><link>{link}</link><guid>{link}</guid>"
                   f"<description>{html.escape(it.get('summary', 'Kort.'))}</description>"
                   f"<pubDate>{it.get('date', 'Tue, 01 Dec 2026 08:00:00 GMT')}</pubDate>{it.get('extra', '')}</item>")
    return ('<?xml version="1.0" encoding="UTF-8"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"'
            ' xmlns:dc="http://purl.org/dc/elements/1.1/">'
            f"<channel><title>{html.escape(title)}</title><link>{{{{base}}}}/</link>{extra}{''.join(out)}"
            "</channel></rss>")


def atom(items: Sequence[Mapping[str, str]], *, title: str = "Zprávy") -> str:
    entries = "".join(
        f"<entry><title>{html.escape(it['title'])}</title><link href=\"{html.escape(it['link'])}\"/>"
        f"<id>{html.escape(it['link'])}</id><updated>2026-11-02T08:00:00Z</updated>"
        f"<summary>{html.escape(it.get('summary', 'Krátce.'))}</summary></entry>" for it in items)
    return ('<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
            f"<title>{html.escape(title)}</title><id>{{{{base}}}}/atom</id><updated>2026-11-02T08:00:00Z</updated>"
            f"{entries}</feed>")


_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def urlset(paths: Sequence[str], *, conditional: bool = False) -> Route:
    """A sitemap listing ``paths`` of the site it is served from (or absolute URLs)."""
    urls = "".join(f"<url><loc>{html.escape(p if '://' in p else '{{base}}' + p)}</loc></url>" for p in paths)
    return Route(body=f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{_NS}">{urls}</urlset>',
                 content_type="application/xml", conditional=conditional)


def sitemap_index(children: Sequence[str]) -> Route:
    maps = "".join(f"<sitemap><loc>{{{{base}}}}{c}</loc></sitemap>" for c in children)
    return Route(body=f'<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="{_NS}">{maps}</sitemapindex>',
                 content_type="application/xml")


def jsonld(events: Sequence[Mapping[str, object]]) -> str:
    """schema.org events as a JSON-LD script (WANNADO-10: structured data first)."""
    graph = [{"@context": "https://schema.org", "@type": "TheaterEvent", **e} for e in events]
    return f'<script type="application/ld+json">{json.dumps(graph)}</script>'


def free_address(sites: Sites) -> str:
    """An address of the conformance range for a server of the scenario's own that is not a
    recording site (e.g. WANNADO-10's stand-in for a model provider, which answers POSTs)."""
    return next(sites._free)

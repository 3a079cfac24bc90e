"""The demo web's site model: how each path of a site answers (``Route``), what a dynamic body is
told (``Hit``) and what a site saw (``RequestRecord``). The servers that answer are in ``web``."""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = ["Body", "Headers", "Hit", "RequestRecord", "Route", "Site", "challenge", "fail", "redirect", "render"]

Headers = tuple[tuple[str, str], ...]
_TOKEN = re.compile(r"\{\{(base|url:[A-Za-z0-9_.-]+)\}\}")


@dataclass(frozen=True)
class RequestRecord:
    """One request as the site saw it. ``t_start``: request line read; ``t_end``: the last
    write of the response began (server wall clock: the crawler cannot hold the answer before).
    ``host`` is the site's ip:port, ``client`` the peer's."""

    t_start: float
    t_end: float
    host: str
    method: str
    path: str
    headers: Headers
    status: int
    bytes: int
    client: str = ""

    def header(self, name: str) -> str | None:
        lname = name.lower()
        return next((v for k, v in self.headers if k.lower() == lname), None)


@dataclass(frozen=True)
class Hit:
    """What a dynamic body is told: the 1-based count of GETs of this route, the time."""

    n: int
    now: float
    path: str
    headers: Headers


Body = bytes | str | Callable[[Hit], str | bytes]


@dataclass(frozen=True)
class Route:
    """How one path answers. Text bodies may name ``{{base}}`` (this site's base URL) and
    ``{{url:<site>}}``; they are filled in per request, once the ports are known."""

    body: Body = b""
    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    headers: Headers = ()
    conditional: bool = False       # ETag + Last-Modified, 304 on a match (AUBE-02, WANNADO-07)
    last_modified: float | None = None
    gzip: bool = False              # Content-Encoding: gzip when the client asks for it
    precompressed: bool = False     # the body is a .gz file, whatever the client accepts
    location: str | None = None     # redirect target (may be a template)


def redirect(location: str, status: int = 301) -> Route:
    return Route(body="", status=status, location=location)


def fail(status: int, retry_after: int | None = None, body: str = "") -> Route:
    extra: Headers = (("Retry-After", str(retry_after)),) if retry_after is not None else ()
    return Route(body=body or f"<!doctype html><title>{status}</title><h1>{status}</h1>\n",
                 status=status, headers=extra)


_CHALLENGE_BODY = """<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>
<meta http-equiv="Content-Type" content="text/html; charset=UTF-8">
<meta name="robots" content="noindex,nofollow"></head>
<body><div class="main-wrapper" role="main"><div class="main-content">
<h1 class="zone-name-title h1">{{base}}</h1>
<h2 class="h2" id="challenge-running">Checking if the site connection is secure</h2>
<noscript><div class="h2">Enable JavaScript and cookies to continue</div></noscript>
</div></div><script src="/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1"></script>
</body></html>
"""


def challenge() -> Route:
    """A bot-management challenge page (PRAHA-07: counts as a refusal)."""
    return Route(body=_CHALLENGE_BODY, status=403, headers=(
        ("cf-mitigated", "challenge"), ("Server", "cloudflare"), ("Cache-Control", "no-store")))


@dataclass(frozen=True)
class Site:
    name: str
    routes: Mapping[str, Route]
    fallback: Route | None = None   # answer for unknown paths; None means 404
    description: str = ""


def render(text: str, base: str, urls: Mapping[str, str]) -> str:
    def fill(m: re.Match[str]) -> str:
        key = m.group(1)
        return base if key == "base" else urls.get(key[4:], m.group(0))
    return _TOKEN.sub(fill, text)

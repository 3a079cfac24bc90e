"""WANNADO-09: JavaScript agenda pages go through an external render service that sends our User-Agent.

Real sockets on loopback: a fake origin (127.0.0.3) serving a JavaScript-only shell and a
fake render service (127.0.0.2) that loads the origin with the User-Agent it is given and
returns the "rendered" HTML, whose JSON-LD events then extract.
"""
from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from heed_core.extract.events import extract_events
from heed_core.extract.render import RenderClient
from heed_core.ports import FakeClock, FetchRequest, FetchResult

BOT_UA = "WannadoBot/1.0 (+https://wannado.example/crawler)"

SHELL = b"""<!DOCTYPE html><html><head><title>Agenda</title></head>
<body><div id="app"></div><script src="/static/agenda.js"></script></body></html>"""

RENDERED = b"""<!DOCTYPE html><html><head><title>Agenda</title>
<script type="application/ld+json">
{"@context": "https://schema.org", "@graph": [
  {"@type": "TheaterEvent", "name": "Wintervertelling", "startDate": "2026-12-18T20:00",
   "url": "/voorstelling/wintervertelling",
   "location": {"@type": "Place", "name": "Zaal 1", "address": "Kerkstraat 3, Wilgenburg"},
   "offers": {"@type": "Offer", "price": "21.00", "priceCurrency": "EUR"}},
  {"@type": "DanceEvent", "name": "Dansavond", "startDate": "2026-12-19T21:00"}
]}
</script></head><body><div id="app"><h1>Agenda</h1></div></body></html>"""


class Recorder:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []


def serve(host: str, handler: type[BaseHTTPRequestHandler]) -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer((host, 0), handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return server, f"http://{host}:{server.server_address[1]}"


def no_proxy_opener() -> urllib.request.OpenerDirector:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    return urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirect)


@pytest.fixture()
def sites() -> Iterator[dict[str, Any]]:
    origin_log, render_log = Recorder(), Recorder()

    class Origin(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            origin_log.requests.append({"method": "GET", "path": self.path, "ua": self.headers.get("User-Agent")})
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(SHELL)))
            self.end_headers()
            self.wfile.write(SHELL)

        def log_message(self, *args: Any) -> None:
            pass

    class Render(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            query = parse_qs(urlsplit(self.path).query)
            render_log.requests.append({"method": "GET", "path": urlsplit(self.path).path, "query": query,
                                        "ua": self.headers.get("User-Agent"), "cookie": self.headers.get("Cookie")})
            target, ua = query.get("url", [None])[0], query.get("userAgent", [None])[0]
            if not target or not ua:
                self.send_error(400)
                return
            # The "browser" loads the origin with the User-Agent it was asked to use.
            req = urllib.request.Request(target, headers={"User-Agent": ua})
            with no_proxy_opener().open(req, timeout=5) as resp:
                resp.read()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(RENDERED)))
            self.end_headers()
            self.wfile.write(RENDERED)

        def do_POST(self) -> None:  # noqa: N802
            render_log.requests.append({"method": "POST"})
            self.send_error(405)

        def log_message(self, *args: Any) -> None:
            pass

    origin, origin_url = serve("127.0.0.3", Origin)
    render, render_url = serve("127.0.0.2", Render)
    try:
        yield {"origin": origin_url, "render": render_url + "/render", "origin_log": origin_log,
               "render_log": render_log}
    finally:
        for server in (origin, render):
            server.shutdown()
            server.server_close()


class UrllibTransport:
    """A minimal Transport for tests: one GET, our User-Agent, no redirects, no proxies."""

    def __init__(self, user_agent: str) -> None:
        self.user_agent = user_agent

    def fetch(self, request: FetchRequest) -> FetchResult:
        headers = {**request.headers, "User-Agent": self.user_agent}
        req = urllib.request.Request(request.url, headers=headers, method="GET")
        try:
            with no_proxy_opener().open(req, timeout=5) as resp:
                body = resp.read(request.max_bytes + 1)
                status, headers = resp.status, tuple(resp.headers.items())
        except urllib.error.HTTPError as exc:
            body, status, headers = exc.read(request.max_bytes + 1), exc.code, tuple(exc.headers.items())
        except (urllib.error.URLError, OSError):
            return FetchResult(url=request.url, status=None, error="connect_error")
        if len(body) > request.max_bytes:
            return FetchResult(url=request.url, status=status, headers=headers, error="too_large", truncated=True)
        return FetchResult(url=request.url, status=status, headers=headers, body=body)


def make_transport(kind: str) -> Any:
    if kind == "urllib":
        return UrllibTransport(BOT_UA)
    http = pytest.importorskip("heed_core.adapters.http")
    return http.RequestsTransport(user_agent=BOT_UA, clock=FakeClock(), allow_private=True)


@pytest.mark.parametrize("kind", ["urllib", "requests"])
def test_wannado_09_render_service_is_asked_with_the_bot_user_agent(sites, kind):
    # GIVEN a render client pointed at the fake service
    client = RenderClient(make_transport(kind), sites["render"], user_agent=BOT_UA)
    target = sites["origin"] + "/agenda?maand=12"
    # WHEN an agenda page is rendered
    result = client.render(target, max_bytes=1_000_000)
    # THEN the service was asked once, with GET, carrying our UA as parameter and header
    (asked,) = sites["render_log"].requests
    assert asked["method"] == "GET" and asked["path"] == "/render"
    assert asked["query"]["url"] == [target]
    assert asked["query"]["userAgent"] == [BOT_UA]
    assert asked["ua"] == BOT_UA and asked["cookie"] is None
    # AND the site itself saw our User-Agent, never a browser string
    (seen,) = sites["origin_log"].requests
    assert seen["ua"] == BOT_UA and seen["path"] == "/agenda?maand=12"
    # AND the result reads as the target page
    assert (result.status, result.error, result.url) == (200, None, target)


@pytest.mark.parametrize("kind", ["urllib", "requests"])
def test_wannado_10_rendered_html_yields_events_linking_back_to_the_site(sites, kind):
    client = RenderClient(make_transport(kind), sites["render"], user_agent=BOT_UA)
    target = sites["origin"] + "/agenda"
    result = client.render(target, max_bytes=1_000_000)
    events = extract_events(result.body, base_url=result.url).events
    # (a time without an offset is read in the venue's zone, WannadoBot's Europe/Amsterdam)
    assert [(e.name, e.start) for e in events] == [("Wintervertelling", "2026-12-18T20:00:00+01:00"),
                                                   ("Dansavond", "2026-12-19T21:00:00+01:00")]
    assert events[0].url == sites["origin"] + "/voorstelling/wintervertelling"
    assert events[0].price == "EUR 21.00"
    assert events[1].url == target  # WANNADO-01: no own page, so the agenda page


def test_wannado_09_invalid_target_is_refused_before_sending(sites):
    client = RenderClient(UrllibTransport(BOT_UA), sites["render"], user_agent=BOT_UA)
    for bad in ("file:///etc/passwd", "javascript:alert(1)", "not a url", ""):
        result = client.render(bad, max_bytes=1000)
        assert (result.error, result.sent, result.status) == ("invalid_url", False, None)
    assert sites["render_log"].requests == []


def test_wannado_09_render_request_shape_with_existing_query_and_extra_params():
    client = RenderClient(UrllibTransport(BOT_UA), "https://render.example/api/render?token=t",
                          user_agent=BOT_UA, extra_params={"waitFor": "networkidle"})
    req = client.request_for("https://theater.example/agenda", max_bytes=10)
    query = parse_qs(urlsplit(req.url).query)
    assert query == {"token": ["t"], "waitFor": ["networkidle"], "url": ["https://theater.example/agenda"],
                     "userAgent": [BOT_UA]}
    assert (req.purpose, req.max_bytes, dict(req.headers)) == ("render", 10, {})


class _Recording:
    """A transport that records what it is asked and answers 200; it has no refusal() of its own."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def fetch(self, request: FetchRequest) -> FetchResult:
        self.asked.append(request.url)
        return FetchResult(url=request.url, status=200, body=b"<html></html>")


def test_wannado_09_a_page_the_vet_refuses_never_reaches_the_render_service():
    # GIVEN a render client whose vet refuses the page (the transport's refusal(), by default)
    transport = _Recording()
    client = RenderClient(transport, "https://render.example/render", user_agent=BOT_UA,
                          vet=lambda url: "private_address" if "intranet" in url else None)
    # WHEN an inward page and a public one are rendered
    inward = client.render("http://intranet.example/agenda", max_bytes=1000)
    public = client.render("https://venue.example/agenda", max_bytes=1000)
    # THEN only the public one was sent to the service
    assert (inward.error, inward.sent, inward.url) == ("private_address", False, "http://intranet.example/agenda")
    assert public.status == 200 and len(transport.asked) == 1 and "venue.example" in transport.asked[0]


def test_wannado_09_the_guarded_transport_vets_pages_by_default():
    from heed_core.adapters.http import RequestsTransport

    transport = RequestsTransport(user_agent=BOT_UA, clock=FakeClock(), resolver=lambda host, port: ["10.0.0.7"])
    client = RenderClient(transport, "https://render.example/render", user_agent=BOT_UA)
    result = client.render("https://intranet.example/agenda", max_bytes=1000)
    assert (result.error, result.sent) == ("private_address", False)

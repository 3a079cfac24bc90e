"""SSRF: every spelling of an inward address is refused, before DNS and after every redirect.

Each test runs a *trap*: a server on 127.0.0.1 that logs every request reaching it. A test NAT
(socket.socket.connect patched for the test) delivers every connection to an address outside
127.0.0.0/8 to the trap as well, or to the server a test maps that address to: fd00::1 or
64:ff9b::a00:1 cannot be reached on this machine, but through the NAT a request the guard let
through would still land in the trap's log. ``93.184.216.34`` plays a public site this way.

The transport is always the guarded one (``allow_private=False``); what varies is the URL, the
resolver (the system's, or one that lies and calls everything public), redirects, proxies from
the environment and the render service.
"""
from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from heed_core.adapters import RequestsTransport, system_resolver
from heed_core.crawl import Crawler
from heed_core.extract.render import RenderClient
from heed_core.ports import FakeClock, FetchRequest, FetchResult
from heed_core.profile import load_profile
from heed_core.rounds import Round, entry_items, round_id, round_tokens
from heed_core.urls import absolute
from heed_core.work import Source

from tests.support.fifo import FifoSim
from tests.support.memstore import FakeTokens, ListJournal, ListResults, MemoryStore

UA = "AubeBot/0.1 (+https://aube.example/bot)"
LIE = "93.184.215.14"  # what the lying resolver answers: a public address the NAT delivers to the trap
SITE_IP = "93.184.216.34"  # a public site: the NAT delivers it to the loopback server a test maps it to
T0 = 1_709_618_400.0

_real_connect = socket.socket.connect


# --- the servers and the NAT -----------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        self.server.log.append((self.command, self.path, self.headers.get("Host")))
        status, headers, body = self.server.answer(self)
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_CONNECT = do_GET  # a proxy is asked with CONNECT for https


Answer = Callable[[_Handler], tuple[int, list[tuple[str, str]], bytes]]


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, host: str, answer: Answer) -> None:
        super().__init__((host, 0), _Handler)
        self.log: list[tuple[str, str, str | None]] = []
        self.answer = answer
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def address(self) -> tuple[str, int]:
        return str(self.server_address[0]), self.port


def _hello(h: _Handler) -> tuple[int, list[tuple[str, str]], bytes]:
    return 200, [("Content-Type", "text/plain")], b"hello"


def _v4_if_mapped(ip: str) -> str:
    """``::ffff:a.b.c.d`` is the IPv4 address a.b.c.d on the wire."""
    try:
        addr = ipaddress.ip_address(ip)
    except ValueError:
        return ip
    mapped = getattr(addr, "ipv4_mapped", None)
    return str(mapped) if mapped is not None else ip


def _loopback_v4(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip) in ipaddress.ip_network("127.0.0.0/8")
    except ValueError:
        return False


@dataclass
class Net:
    """The trap, the NAT table and every address a socket of ours connected to."""

    trap: _Server
    table: dict[str, tuple[str, int]] = field(default_factory=dict)
    connects: list[str] = field(default_factory=list)
    servers: list[_Server] = field(default_factory=list)

    def serve(self, host: str, answer: Answer = _hello) -> _Server:
        server = _Server(host, answer)
        self.servers.append(server)
        return server

    def connect(self, sock: socket.socket, address: Any) -> None:
        host = _v4_if_mapped(str(address[0]).split("%")[0])
        self.connects.append(host)
        if not _loopback_v4(host):
            host, port = self.table.get(host, self.trap.address)
            address = ("::ffff:" + host, port) if sock.family == socket.AF_INET6 else (host, port)
        _real_connect(sock, address)

    def reached_trap(self) -> list[tuple[str, str, str | None]]:
        return self.trap.log


@pytest.fixture
def net(monkeypatch: pytest.MonkeyPatch) -> Iterator[Net]:
    trap = _Server("127.0.0.1", _hello)
    n = Net(trap, servers=[trap])
    monkeypatch.setattr(socket.socket, "connect", lambda sock, address: n.connect(sock, address))
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    yield n
    for server in n.servers:
        server.shutdown()
        server.server_close()


def lying_resolver(host: str, port: int) -> list[str]:
    """Says every name is the public site: the guard must not need DNS to see an inward URL."""
    return [LIE]


def guarded(resolver: Callable[[str, int], list[str]] | None = None, clock: FakeClock | None = None
            ) -> RequestsTransport:
    return RequestsTransport(user_agent=UA, clock=clock or FakeClock(), allow_private=False, connect_timeout_s=2,
                             read_timeout_s=2, total_deadline_s=5, resolver=resolver)


def get(transport: RequestsTransport, url: str) -> FetchResult:
    return transport.fetch(FetchRequest(url=url, purpose="page", max_bytes=100_000))


# Every spelling of an inward address; {p} is the trap's port. The system resolver turns the
# loopback spellings into 127.0.0.1 itself; the lying resolver would turn each into a "public"
# address the NAT delivers to the trap, so only the guard's own reading of the URL stops them.
INWARD = [
    pytest.param("http://127.0.0.1:{p}/", id="loopback"),
    pytest.param("http://2130706433:{p}/", id="decimal"),
    pytest.param("http://0177.0.0.1:{p}/", id="octal"),
    pytest.param("http://017700000001:{p}/", id="octal-whole"),
    pytest.param("http://0x7f.1:{p}/", id="hex-short"),
    pytest.param("http://0x7f000001:{p}/", id="hex-whole"),
    pytest.param("http://0x7F.0.0.0x1:{p}/", id="hex-mixed"),
    pytest.param("http://0X7F.1:{p}/", id="hex-upper"),
    pytest.param("http://127.1:{p}/", id="short"),
    pytest.param("http://127.0.1:{p}/", id="short-3"),
    pytest.param("http://127.0.0.1.:{p}/", id="trailing-dot"),
    pytest.param("http://１２７.０.０.１:{p}/", id="fullwidth-digits"),
    pytest.param("http://127。0。0。1:{p}/", id="ideographic-dots"),
    pytest.param("http://0.0.0.0:{p}/", id="unspecified-v4"),
    pytest.param("http://0:{p}/", id="zero"),
    pytest.param("http://[::]:{p}/", id="unspecified-v6"),
    pytest.param("http://[::1]:{p}/", id="loopback-v6"),
    pytest.param("http://[::ffff:127.0.0.1]:{p}/", id="v4-mapped"),
    pytest.param("http://[::ffff:7f00:1]:{p}/", id="v4-mapped-hex"),
    pytest.param("http://[0:0:0:0:0:ffff:127.0.0.1]:{p}/", id="v4-mapped-long"),
    pytest.param("http://[::127.0.0.1]:{p}/", id="v4-compatible"),
    pytest.param("http://[::ffff:0:7f00:1]:{p}/", id="v4-translated"),
    pytest.param("http://[::ffff:169.254.169.254]:{p}/", id="v4-mapped-metadata"),
    pytest.param("http://[fd00::1]:{p}/", id="unique-local"),
    pytest.param("http://[fd12:3456:789a::1]:{p}/", id="unique-local-2"),
    pytest.param("http://[fe80::1%25lo]:{p}/", id="link-local-zone"),
    pytest.param("http://[64:ff9b::7f00:1]:{p}/", id="nat64-loopback"),
    pytest.param("http://[64:ff9b::10.0.0.1]:{p}/", id="nat64-rfc1918"),
    pytest.param("http://[64:ff9b::a9fe:a9fe]:{p}/", id="nat64-metadata"),
    pytest.param("http://[2002:7f00:1::1]:{p}/", id="6to4-loopback"),
    pytest.param("http://169.254.169.254:{p}/", id="metadata"),
    pytest.param("http://10.0.0.1:{p}/", id="rfc1918"),
    pytest.param("http://localhost:{p}/", id="localhost"),
    pytest.param("http://LocalHost.:{p}/", id="localhost-case-dot"),
    pytest.param("http://foo.localhost:{p}/", id="under-localhost"),
    pytest.param("http://a.b.localhost:{p}/", id="deep-under-localhost"),
    pytest.param("http://ⓛocalhost:{p}/", id="localhost-idna"),
    pytest.param("http://localhost\u200b:{p}/", id="localhost-zero-width"),
]

RESOLVERS = [pytest.param(system_resolver, id="system-dns"), pytest.param(lying_resolver, id="lying-dns")]


def _refused(result: FetchResult) -> bool:
    return result.error in ("private_address", "invalid_url") and not result.sent and result.status is None


# --- spellings -------------------------------------------------------------------------------


@pytest.mark.parametrize("resolver", RESOLVERS)
@pytest.mark.parametrize("spelling", INWARD)
def test_ssrf_every_spelling_of_an_inward_address_is_refused(net: Net, spelling: str, resolver: Any) -> None:
    # GIVEN the trap on 127.0.0.1 (and every unroutable address NATed to it)
    url = spelling.format(p=net.trap.port)
    # WHEN the guarded transport is asked for the URL
    result = get(guarded(resolver), url)
    # THEN it is refused as an inward address, and no socket was even opened
    assert result.error == "private_address", (url, result.error)
    assert _refused(result) and result.ip is None
    assert net.connects == [] and net.reached_trap() == []


def test_ssrf_the_guard_is_not_a_blanket_refusal(net: Net) -> None:
    # GIVEN a public site (the NAT delivers 93.184.215.14 to a loopback server)
    site = net.serve("127.0.0.201")
    net.table[SITE_IP] = site.address
    # WHEN it is fetched by name, by address and by a numeric spelling of that address
    t = guarded(lambda host, port: {"public.test": [SITE_IP]}.get(host, []))
    decimal = str(int(ipaddress.ip_address(SITE_IP)))
    for url in (f"http://public.test:{site.port}/", f"http://{SITE_IP}:{site.port}/",
                f"http://{decimal}:{site.port}/", f"http://[::ffff:{SITE_IP}]:{site.port}/"):
        result = get(t, url)
        # THEN each reaches it
        assert (result.status, result.body, _v4_if_mapped(result.ip or "")) == (200, b"hello", SITE_IP), url
    assert len(site.log) == 4 and net.reached_trap() == []


@pytest.mark.parametrize("answer", ["127.0.0.1", "10.1.2.3", "169.254.169.254", "::1", "fd00::1",
                                    "::ffff:127.0.0.1", "64:ff9b::7f00:1", "fe80::1%lo", "0.0.0.0",
                                    "127.1", "2130706433", ""])
def test_ssrf_a_name_whose_dns_answer_is_inward_is_refused(net: Net, answer: str) -> None:
    # GIVEN a name whose only (or second) DNS answer is inward, in any spelling a resolver may give
    for answers in ([answer], [SITE_IP, answer]):
        result = get(guarded(lambda host, port, given=answers: list(given)), f"http://innocent.test:{net.trap.port}/")
        # THEN it is refused before any connection
        assert _refused(result), (answers, result.error)
    assert net.connects == [] and net.reached_trap() == []


# --- redirects -------------------------------------------------------------------------------


def _redirector(h: _Handler) -> tuple[int, list[tuple[str, str]], bytes]:
    query = parse_qs(urlsplit(h.path).query)
    if "to" in query:
        return 302, [("Location", query["to"][0])], b""
    return 404, [], b""


LOCATIONS = [pytest.param("http://127.0.0.1:{p}/", id="loopback"),
             pytest.param("//127.1:{p}/", id="scheme-relative-short"),
             pytest.param("http://2130706433:{p}/", id="decimal"),
             pytest.param("http://0x7f.1:{p}/", id="hex"),
             pytest.param("http://0177.0.0.1:{p}/", id="octal"),
             pytest.param("http://[::ffff:127.0.0.1]:{p}/", id="v4-mapped"),
             pytest.param("http://[::]:{p}/", id="unspecified-v6"),
             pytest.param("http://0.0.0.0:{p}/", id="unspecified-v4"),
             pytest.param("http://[fd00::1]:{p}/", id="unique-local"),
             pytest.param("http://[64:ff9b::a00:1]:{p}/", id="nat64"),
             pytest.param("http://169.254.169.254:{p}/latest/meta-data/", id="metadata"),
             pytest.param("http://localhost:{p}/", id="localhost"),
             pytest.param("http://api.localhost:{p}/", id="under-localhost"),
             pytest.param("https://127.0.0.1:{p}/", id="https-loopback")]


@pytest.mark.parametrize("resolver_kind", ["system-dns", "lying-dns"])
@pytest.mark.parametrize("location", LOCATIONS)
def test_ssrf_common_06_a_redirect_inward_is_refused_as_the_new_request(net: Net, location: str,
                                                                        resolver_kind: str) -> None:
    # GIVEN a public site that redirects to an inward address
    site = net.serve("127.0.0.202", _redirector)
    net.table[SITE_IP] = site.address

    def resolver(host: str, port: int) -> list[str]:
        if host == "public.test":
            return [SITE_IP]
        return lying_resolver(host, port) if resolver_kind == "lying-dns" else system_resolver(host, port)

    t = guarded(resolver)
    start = f"http://public.test:{site.port}/go?to={quote(location.format(p=net.trap.port), safe='')}"
    # WHEN the transport fetches the page: the redirect comes back unfollowed
    first = get(t, start)
    assert first.status == 302 and net.reached_trap() == []
    # AND the crawler's next request (the Location joined as crawl.py joins it) goes through it
    target = absolute(start, first.header("Location") or "")
    assert target is not None
    second = get(t, target)
    # THEN that request is refused and the trap saw nothing
    assert second.error == "private_address" and not second.sent, (target, second.error)
    assert net.connects == [SITE_IP] and net.reached_trap() == []


def test_ssrf_common_06_crawler_turns_a_redirect_inward_into_a_refused_request(net: Net) -> None:
    # GIVEN AubeBot's feed on a public site, redirecting to the cloud metadata service's spelling
    inward = f"http://0x7f.1:{net.trap.port}/latest/meta-data/"

    def site(h: _Handler) -> tuple[int, list[tuple[str, str]], bytes]:
        if h.path == "/feed.xml":
            return 301, [("Location", inward)], b""
        return 404, [], b""  # robots.txt: no restrictions

    server = net.serve("127.0.0.203", site)
    net.table[SITE_IP] = server.address
    store, journal, clock = MemoryStore(), ListJournal(), FakeClock(T0)
    transport = guarded(lambda host, port: {"public.test": [SITE_IP]}.get(host) or lying_resolver(host, port),
                        clock)
    results, tokens = ListResults(), FakeTokens()
    crawler = Crawler(load_profile("aubebot"), store, transport, journal, results, clock, tokens=tokens)
    feed = f"http://public.test:{server.port}/feed.xml"
    src = Source(id="feed-1", url=feed, kind="feed")
    store.put_source(src)
    items, _ = entry_items(crawler.p, Round(round_id(T0, "feed"), T0, "feed"), [src], T0)
    queue = FifoSim(crawler, store, results, tokens, clock)
    for token in round_tokens(items):
        queue.send(token)
    # WHEN the crawler plays its host turns (as the FIFO queue hands them out) until no work is left
    queue.play(50)
    # THEN the site saw robots.txt and the feed, the redirect became a request that was refused
    assert [path for _, path, _ in server.log] == ["/robots.txt", "/feed.xml"]
    assert "private_address" in journal.reasons()
    assert net.connects == [SITE_IP, SITE_IP] and net.reached_trap() == []


# --- DNS rebinding ---------------------------------------------------------------------------


def test_ssrf_dns_rebinding_connects_only_to_the_checked_address(net: Net) -> None:
    # GIVEN a name that resolves to a public site first and to the trap on the next lookup
    site = net.serve("127.0.0.204")
    net.table[SITE_IP] = site.address
    lookups: list[str] = []
    answers = iter([[SITE_IP], ["127.0.0.1"], ["127.0.0.1"]])

    def rebinding(host: str, port: int) -> list[str]:
        lookups.append(host)
        return next(answers)

    t = guarded(rebinding)
    # WHEN it is fetched
    first = get(t, f"http://rebind.test:{site.port}/")
    # THEN one lookup, one connection, to the address that was checked
    assert (first.status, first.ip) == (200, SITE_IP)
    assert lookups == ["rebind.test"] and net.connects == [SITE_IP]
    assert site.log == [("GET", "/", f"rebind.test:{site.port}")]
    # AND the next fetch looks the name up again, sees the inward answer and is refused
    second = get(t, f"http://rebind.test:{net.trap.port}/")
    assert (second.error, second.sent) == ("private_address", False)
    assert net.connects == [SITE_IP] and net.reached_trap() == []


def test_ssrf_dns_rebinding_is_refused_when_any_answer_is_inward(net: Net) -> None:
    # GIVEN a resolver whose answer lists a public address first and the trap second
    result = get(guarded(lambda host, port: [SITE_IP, "127.0.0.1"]), f"http://rebind.test:{net.trap.port}/")
    # THEN nothing is connected (a failed first address must not fall through to the trap)
    assert (result.error, result.sent) == ("private_address", False)
    assert net.connects == [] and net.reached_trap() == []


# --- proxies from the environment -------------------------------------------------------------


@pytest.fixture
def proxy(net: Net, monkeypatch: pytest.MonkeyPatch) -> _Server:
    """A forward proxy on 127.0.0.205 named by every proxy variable: it answers anything."""
    server = net.serve("127.0.0.205", lambda h: (200, [], b"via proxy"))
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        for spelling in (name, name.lower()):
            monkeypatch.setenv(spelling, f"http://127.0.0.205:{server.port}")
    return server


def test_ssrf_a_proxy_from_the_environment_does_not_carry_an_inward_request(net: Net, proxy: _Server) -> None:
    for url in (f"http://127.0.0.1:{net.trap.port}/", f"http://localhost:{net.trap.port}/",
                f"https://127.0.0.1:{net.trap.port}/", f"http://2130706433:{net.trap.port}/"):
        result = get(guarded(lying_resolver), url)
        assert (result.error, result.sent) == ("private_address", False), url
    assert proxy.log == [] and net.reached_trap() == []


def test_ssrf_a_proxy_from_the_environment_is_never_used_for_a_public_site(net: Net, proxy: _Server) -> None:
    # GIVEN a public site and every proxy variable pointing at a proxy
    site = net.serve("127.0.0.206")
    net.table[SITE_IP] = site.address
    # WHEN the site is fetched
    result = get(guarded(lambda host, port: [SITE_IP]), f"http://public.test:{site.port}/")
    # THEN the connection went straight to the checked address, not through the proxy
    assert (result.status, result.body, result.ip) == (200, b"hello", SITE_IP)
    assert proxy.log == [] and net.connects == [SITE_IP]


def test_ssrf_an_unresolvable_name_is_not_handed_to_a_proxy(net: Net, proxy: _Server) -> None:
    # A proxy would resolve the name on its side, out of the guard's sight.
    def nxdomain(host: str, port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    result = get(guarded(nxdomain), "http://metadata.internal.test/")
    assert (result.error, result.sent) == ("dns_error", False)
    assert proxy.log == [] and net.connects == []


# --- the render service (WANNADO-09) ----------------------------------------------------------


@pytest.mark.parametrize("endpoint", ["http://127.0.0.1:{p}/render", "http://2130706433:{p}/render",
                                      "http://localhost:{p}/render", "http://[::ffff:127.0.0.1]:{p}/render",
                                      "http://[fd00::1]:{p}/render", "http://render.localhost:{p}/render"])
def test_ssrf_wannado_09_a_render_service_pointing_inward_is_refused(net: Net, endpoint: str) -> None:
    client = RenderClient(guarded(lying_resolver), endpoint.format(p=net.trap.port), user_agent=UA)
    result = client.render("https://venue.example/agenda", max_bytes=100_000)
    assert (result.error, result.sent, result.url) == ("private_address", False, "https://venue.example/agenda")
    assert net.connects == [] and net.reached_trap() == []


@pytest.mark.parametrize("target", ["http://127.0.0.1:{p}/", "http://2130706433:{p}/", "http://0x7f.1:{p}/",
                                    "http://localhost:{p}/", "http://intranet.localhost/",
                                    "http://[::ffff:127.0.0.1]:{p}/", "http://[fd00::1]/",
                                    "http://169.254.169.254/latest/meta-data/", "http://intranet.test/"])
def test_ssrf_wannado_09_the_render_service_is_not_asked_to_load_an_inward_page(net: Net, target: str) -> None:
    # GIVEN a public render service (it would load whatever page it is given, from its network)
    service = net.serve("127.0.0.207", lambda h: (200, [("Content-Type", "text/html")], b"<html></html>"))
    net.table[SITE_IP] = service.address
    names = {"intranet.test": ["10.20.30.40"]}
    client = RenderClient(guarded(lambda host, port: names.get(host, [SITE_IP])), f"http://render.test:{service.port}/render",
                          user_agent=UA)
    # WHEN it is asked to render an inward page
    result = client.render(target.format(p=net.trap.port), max_bytes=100_000)
    # THEN the service is never asked
    assert (result.error, result.sent) == ("private_address", False)
    assert service.log == [] and net.reached_trap() == []


def test_wannado_09_a_public_page_still_goes_to_the_render_service(net: Net) -> None:
    service = net.serve("127.0.0.208", lambda h: (200, [("Content-Type", "text/html")], b"<html>ok</html>"))
    net.table[SITE_IP] = service.address
    client = RenderClient(guarded(lambda host, port: [SITE_IP]), f"http://render.test:{service.port}/render",
                          user_agent=UA)
    result = client.render("https://venue.test/agenda", max_bytes=100_000)
    assert (result.status, result.body, result.url) == (200, b"<html>ok</html>", "https://venue.test/agenda")
    [(_, path, _)] = service.log
    assert parse_qs(urlsplit(path).query)["url"] == ["https://venue.test/agenda"]

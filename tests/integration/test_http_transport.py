"""RequestsTransport against real local servers (127.0.0.x) that record what reaches them."""
from __future__ import annotations

import datetime
import gzip
import socket
import ssl
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from heed_core.adapters import RequestsTransport
from heed_core.ports import FakeClock, FetchRequest, FetchResult

UA = "AubeBot/0.1 (+https://aube.example/bot)"
BOMB_BYTES = 100 * 1024 * 1024


def _make_bomb() -> bytes:
    comp = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(1 << 20)
    return b"".join(comp.compress(zeros) for _ in range(BOMB_BYTES >> 20)) + comp.flush()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Server

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        self.server.log.append({"path": self.path, "headers": list(self.headers.items())})
        route = ROUTES.get(self.path.split("?")[0], _not_found)
        try:
            route(self)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            pass  # the client hung up on purpose (cap, deadline)

    def reply(self, status: int, body: bytes = b"", headers: list[tuple[str, str]] = ()) -> None:  # type: ignore[assignment]
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _not_found(h: Handler) -> None:
    h.reply(404, b"nope")


def _ok(h: Handler) -> None:
    h.reply(200, b"hello", [("Content-Type", "text/plain")])


def _set_cookie(h: Handler) -> None:
    h.reply(200, b"have a cookie", [("Set-Cookie", "session=abc123; Path=/"), ("Set-Cookie", "consent=yes")])


def _redirect(h: Handler) -> None:
    h.reply(302, b"moved", [("Location", "/elsewhere"), ("Set-Cookie", "tracker=1; Path=/")])


def _robots_tags(h: Handler) -> None:
    headers = [("X-Robots-Tag", "noindex"), ("Link", "</a>; rel=next"), ("X-Robots-Tag", "nofollow")]
    h.reply(200, b"<html></html>", headers)


def _endless(h: Handler) -> None:
    # No Content-Length: the body runs until the connection closes, i.e. forever.
    h.send_response(200)
    h.send_header("Connection", "close")
    h.end_headers()
    piece = b"x" * 65536
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        h.wfile.write(piece)


def _bomb(h: Handler) -> None:
    h.reply(200, h.server.bomb, [("Content-Encoding", "gzip"), ("Content-Type", "text/html")])


def _corrupt_gzip(h: Handler) -> None:
    good = gzip.compress(b"<html>" + b"a" * 5000 + b"</html>")
    h.reply(200, good[:20] + b"\xff" * 40 + good[60:], [("Content-Encoding", "gzip")])


def _chunked_gzip(h: Handler) -> None:
    h.send_response(200)
    h.send_header("Content-Encoding", "gzip")
    h.send_header("Transfer-Encoding", "chunked")
    h.end_headers()
    data = gzip.compress(b"<rss>" + b"<item/>" * 2000 + b"</rss>")
    for i in range(0, len(data), 100):
        part = data[i : i + 100]
        h.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
    h.wfile.write(b"0\r\n\r\n")


def _drip_body(h: Handler) -> None:
    h.send_response(200)
    h.send_header("Content-Length", "1000")
    h.end_headers()
    for _ in range(1000):
        h.wfile.write(b"d")
        h.wfile.flush()
        time.sleep(0.1)


def _drip_headers(h: Handler) -> None:
    h.wfile.write(b"HTTP/1.1 200 OK\r\n")
    for _ in range(1000):
        h.wfile.write(b"X")
        h.wfile.flush()
        time.sleep(0.1)


def _silent(h: Handler) -> None:
    time.sleep(3)


def _conditional(h: Handler) -> None:
    if h.headers.get("If-None-Match") == '"v1"':
        h.send_response(304)
        h.send_header("ETag", '"v1"')
        h.end_headers()
    else:
        h.reply(200, b"fresh", [("ETag", '"v1"')])


ROUTES: dict[str, Callable[[Handler], None]] = {
    "/ok": _ok,
    "/set-cookie": _set_cookie,
    "/redirect": _redirect,
    "/robots-tags": _robots_tags,
    "/endless": _endless,
    "/bomb": _bomb,
    "/corrupt-gzip": _corrupt_gzip,
    "/chunked-gzip": _chunked_gzip,
    "/drip-body": _drip_body,
    "/drip-headers": _drip_headers,
    "/silent": _silent,
    "/conditional": _conditional,
}


class Server(ThreadingHTTPServer):
    daemon_threads = True
    bomb = b""

    def __init__(self, host: str, tls: ssl.SSLContext | None = None) -> None:
        super().__init__((host, 0), Handler)
        self.log: list[dict[str, Any]] = []
        self.connections: list[tuple[str, int]] = []
        self.sni: list[str | None] = []
        if tls is not None:
            tls.sni_callback = lambda sock, name, ctx: self.sni.append(name)  # type: ignore[assignment,misc]
            self.socket = tls.wrap_socket(self.socket, server_side=True, do_handshake_on_connect=False)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def verify_request(self, request: Any, client_address: Any) -> bool:
        self.connections.append(client_address)
        return True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # failed TLS handshakes are part of the tests


@pytest.fixture
def serve() -> Iterator[Callable[..., Server]]:
    started: list[Server] = []

    def start(host: str = "127.0.0.2", tls: ssl.SSLContext | None = None) -> Server:
        server = Server(host, tls)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.shutdown()
        server.server_close()


def transport(**kw: Any) -> RequestsTransport:
    options: dict[str, Any] = dict(user_agent=UA, clock=FakeClock(), allow_private=True,
                                   connect_timeout_s=2, read_timeout_s=2, total_deadline_s=5)
    options.update(kw)
    return RequestsTransport(**options)


def get(t: RequestsTransport, url: str, max_bytes: int = 1_000_000, **headers: str) -> FetchResult:
    return t.fetch(FetchRequest(url=url, purpose="page", max_bytes=max_bytes, headers=headers))


def names(headers: list[tuple[str, str]]) -> list[str]:
    return [k.lower() for k, _ in headers]


# --- identity and headers --------------------------------------------------------------------


def test_common_01_server_sees_exact_user_agent_and_only_our_headers(serve: Callable[..., Server]) -> None:
    server = serve()
    result = get(transport(), f"http://127.0.0.2:{server.port}/ok")
    assert (result.status, result.body, result.error) == (200, b"hello", None)
    assert result.ip == "127.0.0.2" and result.sent
    [seen] = server.log
    headers = dict((k.lower(), v) for k, v in seen["headers"])
    assert headers["user-agent"] == UA
    assert headers["accept-encoding"] == "gzip, deflate"
    assert names(seen["headers"]).count("user-agent") == 1
    assert set(headers) <= {"host", "user-agent", "accept-encoding", "accept"}


def test_common_01_a_request_may_bring_its_own_accept_but_it_is_sent_once(serve: Callable[..., Server]) -> None:
    server = serve()
    result = get(transport(), f"http://127.0.0.2:{server.port}/ok", accept="application/rss+xml")
    assert result.status == 200
    accepts = [v for k, v in server.log[0]["headers"] if k.lower() == "accept"]
    assert accepts == ["application/rss+xml"]


def test_common_04_wannado_08_no_cookie_is_sent_after_a_server_sets_one(serve: Callable[..., Server]) -> None:
    # GIVEN a server that sets cookies, on a redirect and on a 200
    server = serve()
    t = transport()
    base = f"http://127.0.0.2:{server.port}"
    first = get(t, base + "/set-cookie")
    assert first.header_all("Set-Cookie") == ["session=abc123; Path=/", "consent=yes"]
    get(t, base + "/redirect")
    # WHEN the same transport comes back
    get(t, base + "/ok")
    # THEN no request ever carried a Cookie header
    assert len(server.log) == 3
    assert all("cookie" not in names(entry["headers"]) for entry in server.log)


def test_common_04_a_request_cannot_smuggle_cookie_or_identity_headers(serve: Callable[..., Server]) -> None:
    server = serve()
    t = transport()
    for header in ({"Cookie": "a=b"}, {"User-Agent": "Mozilla/5.0"}, {"Authorization": "Basic eDp5"}):
        result = get(t, f"http://127.0.0.2:{server.port}/ok", **header)
        assert (result.error, result.sent, result.status) == ("invalid_request", False, None)
    assert server.connections == []


def test_wannado_07_conditional_headers_are_passed_through(serve: Callable[..., Server]) -> None:
    server = serve()
    since = "Wed, 21 Oct 2015 07:28:00 GMT"
    result = get(transport(), f"http://127.0.0.2:{server.port}/conditional",
                 **{"If-None-Match": '"v1"', "If-Modified-Since": since})
    assert (result.status, result.body, result.error) == (304, b"", None)
    headers = dict(server.log[0]["headers"])
    assert headers["If-None-Match"] == '"v1"' and headers["If-Modified-Since"] == since


def test_common_06_a_redirect_comes_back_unfollowed(serve: Callable[..., Server]) -> None:
    server = serve()
    result = get(transport(), f"http://127.0.0.2:{server.port}/redirect")
    assert result.status == 302
    assert result.header("location") == "/elsewhere"
    assert [entry["path"] for entry in server.log] == ["/redirect"]


def test_subsidie_09_repeated_x_robots_tag_headers_stay_separate_in_wire_order(serve: Callable[..., Server]) -> None:
    server = serve()
    result = get(transport(), f"http://127.0.0.2:{server.port}/robots-tags")
    assert result.header_all("x-robots-tag") == ["noindex", "nofollow"]
    order = [k for k, _ in result.headers if k.lower() in ("x-robots-tag", "link")]
    assert order == ["X-Robots-Tag", "Link", "X-Robots-Tag"]


def test_times_come_from_the_injected_clock(serve: Callable[..., Server]) -> None:
    server = serve()
    ticks = iter(range(1000, 2000))

    class TickClock:
        def now(self) -> float:
            return float(next(ticks))

    result = get(transport(clock=TickClock()), f"http://127.0.0.2:{server.port}/ok")
    assert 1000 <= result.t_start < result.t_end < 2000


# --- size caps ---------------------------------------------------------------------------------


def test_body_cap_stops_reading_an_endless_body(serve: Callable[..., Server]) -> None:
    server = serve()
    began = time.monotonic()
    result = get(transport(), f"http://127.0.0.2:{server.port}/endless", max_bytes=100_000)
    assert (result.status, result.error, result.truncated) == (200, "too_large", True)
    assert result.body == b"x" * 100_000
    assert result.header("connection") == "close"
    assert time.monotonic() - began < 2  # cut at the cap, not at the deadline


def test_gzip_bomb_is_cut_without_expanding_in_memory(serve: Callable[..., Server]) -> None:
    # GIVEN 100 MB of zeros served gzip-compressed (under 0.5 MB on the wire)
    server = serve()
    server.bomb = _make_bomb()
    assert len(server.bomb) < 1_000_000
    # WHEN fetched with a 1 MB cap
    tracemalloc.start()
    try:
        result = get(transport(), f"http://127.0.0.2:{server.port}/bomb", max_bytes=1_000_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # THEN it stops at the cap, and never held more than a few MB
    assert (result.status, result.error, result.truncated) == (200, "too_large", True)
    assert result.body == bytes(1_000_000)
    assert peak < 8 * 1024 * 1024


def test_corrupt_gzip_is_a_decompression_error(serve: Callable[..., Server]) -> None:
    server = serve()
    result = get(transport(), f"http://127.0.0.2:{server.port}/corrupt-gzip")
    assert (result.status, result.error, result.body) == (200, "decompression_error", b"")


def test_chunked_gzip_body_is_decoded(serve: Callable[..., Server]) -> None:
    server = serve()
    result = get(transport(), f"http://127.0.0.2:{server.port}/chunked-gzip")
    assert result.error is None
    assert result.body == b"<rss>" + b"<item/>" * 2000 + b"</rss>"


# --- time limits and failures ------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/drip-body", "/drip-headers"])
def test_slow_drip_server_is_cut_at_the_total_deadline(serve: Callable[..., Server], path: str) -> None:
    # GIVEN a server sending a byte every 0.1 s: no single read ever times out
    server = serve()
    t = transport(read_timeout_s=0.5, total_deadline_s=1)
    began = time.monotonic()
    result = get(t, f"http://127.0.0.2:{server.port}{path}")
    elapsed = time.monotonic() - began
    assert (result.error, result.status, result.body) == ("deadline", None, b"")
    assert result.sent
    assert 0.9 <= elapsed < 2.0


def test_a_silent_server_is_a_timeout(serve: Callable[..., Server]) -> None:
    server = serve()
    result = get(transport(read_timeout_s=0.3), f"http://127.0.0.2:{server.port}/silent")
    assert (result.error, result.status, result.sent) == ("timeout", None, True)


def test_a_closed_port_is_a_connect_error() -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.4", 0))
    port = probe.getsockname()[1]
    probe.close()
    result = get(transport(), f"http://127.0.0.4:{port}/")
    assert (result.error, result.status, result.ip) == ("connect_error", None, None)


# --- the hook before the first byte (the embedded engine's in-flight mark) ------------------------


def test_before_send_is_called_once_connected_before_the_request_and_then_forgotten(
        serve: Callable[..., Server]) -> None:
    server = serve()
    t = transport()
    seen: list[tuple[int, int]] = []  # (connections, requests) the server had when the hook ran

    def hook() -> None:
        until = time.monotonic() + 2
        while not server.connections and time.monotonic() < until:
            time.sleep(0.01)  # the server accepts in its own loop: the connection is made already
        seen.append((len(server.connections), len(server.log)))

    t.before_send(hook)
    result = get(t, f"http://127.0.0.2:{server.port}/ok")
    assert (result.status, result.body) == (200, b"hello")
    # the connection was made, the request not yet sent
    assert seen == [(1, 0)] and len(server.log) == 1
    # a later fetch on this thread calls it no more
    get(t, f"http://127.0.0.2:{server.port}/ok")
    assert seen == [(1, 0)] and len(server.log) == 2


def test_before_send_is_not_called_when_nothing_could_leave() -> None:
    calls: list[str] = []
    probe = socket.socket()
    probe.bind(("127.0.0.4", 0))
    port = probe.getsockname()[1]
    probe.close()
    t = transport()
    t.before_send(lambda: calls.append("closed port"))
    assert get(t, f"http://127.0.0.4:{port}/").error == "connect_error"
    t.before_send(lambda: calls.append("refused address"))
    assert transport(allow_private=False).refusal("http://127.0.0.1/") == "private_address"
    t2 = transport(allow_private=False)
    t2.before_send(lambda: calls.append("private"))
    assert get(t2, "http://127.0.0.1:9/").error == "private_address"
    assert calls == []


def test_a_before_send_that_fails_sends_nothing_and_leaves_the_fetch(serve: Callable[..., Server]) -> None:
    server = serve()
    t = transport()

    class Refused(Exception):
        pass

    def fail() -> None:
        raise Refused("the mark could not be written")

    t.before_send(fail)
    with pytest.raises(Refused):
        get(t, f"http://127.0.0.2:{server.port}/ok")
    time.sleep(0.2)
    assert server.log == []  # the connection was closed before any byte of the request


def test_before_send_is_this_threads_own(serve: Callable[..., Server]) -> None:
    server = serve()
    t = transport()
    calls: list[str] = []
    t.before_send(lambda: calls.append("main"))
    other = threading.Thread(target=lambda: get(t, f"http://127.0.0.2:{server.port}/ok"))
    other.start()
    other.join()
    assert calls == [] and len(server.log) == 1
    get(t, f"http://127.0.0.2:{server.port}/ok")
    assert calls == ["main"]


def test_unresolvable_host_is_a_dns_error() -> None:
    def no_such_host(host: str, port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    result = get(transport(resolver=no_such_host), "http://nowhere.test/")
    assert (result.error, result.sent) == ("dns_error", False)
    assert get(transport(resolver=lambda h, p: []), "http://nowhere.test/").error == "dns_error"


@pytest.mark.parametrize("url", ["ftp://127.0.0.2/", "http://user:pw@127.0.0.2/", "http:///x", "not a url"])
def test_invalid_urls_are_refused_without_connecting(url: str) -> None:
    result = get(transport(), url)
    assert (result.error, result.status, result.sent) == ("invalid_url", None, False)


# --- SSRF guard and address pinning ------------------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "[::ffff:127.0.0.1]", "127.1", "localhost"])
def test_ssrf_loopback_is_refused_before_any_connection(serve: Callable[..., Server], host: str) -> None:
    # GIVEN a server on 127.0.0.1, reached by literal, mapped IPv6, short form or name
    server = serve("127.0.0.1")
    # WHEN the guarded transport (real getaddrinfo) is asked for it
    result = get(transport(allow_private=False), f"http://{host}:{server.port}/ok")
    # THEN it is refused and not a single connection reached the server
    assert (result.error, result.sent, result.status, result.ip) == ("private_address", False, None, None)
    assert server.connections == [] and server.log == []


def test_ssrf_hostname_resolving_to_a_private_address_is_refused(serve: Callable[..., Server]) -> None:
    server = serve()
    lookups: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        lookups.append(host)
        return {"site.test": ["127.0.0.2"], "mixed.test": ["93.184.215.14", "127.0.0.2"],
                "meta.test": ["169.254.169.254"]}[host]

    t = transport(allow_private=False, resolver=resolver)
    for host in ("site.test", "mixed.test", "meta.test"):
        result = get(t, f"http://{host}:{server.port}/ok")
        assert (result.error, result.sent) == ("private_address", False), host
    assert lookups == ["site.test", "mixed.test", "meta.test"]
    assert server.connections == [] and server.log == []


def test_ssrf_connection_is_pinned_to_the_checked_address(serve: Callable[..., Server]) -> None:
    # GIVEN a resolver that would rebind site.test on a second lookup
    server = serve("127.0.0.2")
    answers = iter([["127.0.0.2"], ["127.0.0.3"]])
    lookups: list[tuple[str, int]] = []

    def rebinding(host: str, port: int) -> list[str]:
        lookups.append((host, port))
        return next(answers)

    # WHEN site.test is fetched
    result = get(transport(resolver=rebinding), f"http://site.test:{server.port}/ok")
    # THEN one lookup, one connection to the checked address, Host header kept
    assert (result.status, result.ip) == (200, "127.0.0.2")
    assert lookups == [("site.test", server.port)]
    assert dict(server.log[0]["headers"])["Host"] == f"site.test:{server.port}"


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key, leaf_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Heed test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(1)
          .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    leaf = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "site.test")]))
            .issuer_name(ca_name).public_key(leaf_key.public_key()).serial_number(2)
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("site.test")]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    folder = tmp_path_factory.mktemp("tls")
    pem = serialization.Encoding.PEM
    (folder / "ca.pem").write_bytes(ca.public_bytes(pem))
    (folder / "leaf.pem").write_bytes(leaf.public_bytes(pem))
    (folder / "leaf.key").write_bytes(leaf_key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return folder / "ca.pem", folder / "leaf.pem", folder / "leaf.key"


def test_ssrf_pinned_https_keeps_sni_and_certificate_check_for_the_hostname(
    serve: Callable[..., Server], tls_files: tuple[Path, Path, Path]
) -> None:
    # GIVEN an https server on 127.0.0.3 with a certificate for site.test only
    ca, cert, key = tls_files
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    server = serve("127.0.0.3", tls=context)
    t = transport(resolver=lambda host, port: ["127.0.0.3"], ca_certs=str(ca))
    # WHEN site.test is fetched through the pinned address
    ok = get(t, f"https://site.test:{server.port}/ok")
    # THEN TLS named site.test (SNI) and the certificate was checked against it
    assert (ok.status, ok.body, ok.ip) == (200, b"hello", "127.0.0.3")
    assert server.sni[0] == "site.test"
    assert dict(server.log[0]["headers"])["Host"] == f"site.test:{server.port}"
    # AND a name the certificate does not cover fails, even at the same address
    wrong = get(t, f"https://other.test:{server.port}/ok")
    assert (wrong.error, wrong.status) == ("tls_error", None)
    assert len(server.log) == 1


def test_ssrf_every_pool_hook_of_requests_returns_the_pinned_pool() -> None:
    # requests has picked the pool through get_connection (<= 2.31) and then through
    # get_connection_with_tls_context (>= 2.32.2): whichever it calls must get the pinned pool,
    # or urllib3 would resolve the name again and connect wherever it points now.
    import requests.adapters

    from heed_core.adapters import http

    pool = http._PinnedHTTPPool("site.test", port=80, heed_connector=None)
    adapter = http._OnePoolAdapter(pool)
    hooks = [name for name in ("get_connection", "get_connection_with_tls_context")
             if hasattr(requests.adapters.HTTPAdapter, name)]
    assert hooks, "requests picks its pool through a hook we do not know: pin it in _OnePoolAdapter"
    prepared = requests.Request("GET", "http://site.test/").prepare()
    for name in hooks:
        args = (prepared, True) if name == "get_connection_with_tls_context" else ("http://site.test/",)
        assert getattr(adapter, name)(*args, proxies={}) is pool, name
    adapter.close()

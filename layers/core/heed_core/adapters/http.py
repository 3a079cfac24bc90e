"""Sends one GET with requests: to a checked public address only, bounded in time and size."""
from __future__ import annotations

import heapq
import http.client
import os
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError

from heed_core.adapters.body import CappedBody, content_codings, read_capped
from heed_core.netguard import Target, is_local_name, is_public_address, parse_target
from heed_core.ports import Clock, FetchRequest, FetchResult
from heed_core.robots import path_to_match

if TYPE_CHECKING:  # issue 13 hook: the signer's type only; signing code loads only when used
    from heed_core.identity.signing import RequestSigner

__all__ = ["RequestsTransport", "Resolver", "system_resolver"]

Resolver = Callable[[str, int], list[str]]

# Headers only the transport sets: the bot's identity (COMMON-01), what it can decode, the
# framing. Credentials and cookies are never sent (COMMON-04, WANNADO-08).
_OURS = frozenset(
    "host user-agent accept-encoding cookie cookie2 authorization proxy-authorization connection"
    " keep-alive proxy-connection content-length transfer-encoding te upgrade expect".split()
)
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_BAD_VALUE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def system_resolver(host: str, port: int) -> list[str]:
    """Every address of ``host`` from getaddrinfo, in its order, without repeats."""
    found: list[str] = []
    for *_, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        ip = str(sockaddr[0])
        if ip not in found:
            found.append(ip)
    return found


class RequestsTransport:
    """The real ``Transport``: one GET per call, no redirect followed (COMMON-06), no cookie
    kept or sent (COMMON-04), never raises for network trouble."""

    def __init__(
        self,
        *,
        user_agent: str,
        clock: Clock,
        allow_private: bool = False,
        connect_timeout_s: float = 5,
        read_timeout_s: float = 15,
        total_deadline_s: float = 30,
        resolver: Resolver | None = None,
        ca_certs: str | None = None,
        signer: RequestSigner | None = None,  # issue 13 hook: Web Bot Auth signatures
    ) -> None:
        if not user_agent or not _valid_header("User-Agent", user_agent):
            raise ValueError("user_agent must be a non-empty, single-line header value")
        self._user_agent = user_agent
        self._clock = clock
        self._allow_private = allow_private
        self._timeouts = (float(connect_timeout_s), float(read_timeout_s))
        self._total = float(total_deadline_s)
        self._resolve = resolver or system_resolver
        self._verify: str | bool = ca_certs or True
        self._hooks = threading.local()  # this thread's before_send hook
        self._signer = signer  # issue 13 hook

    def before_send(self, hook: Callable[[], None] | None) -> None:
        """What this thread's next fetch calls once its connection is made, right before the first
        byte of its request is written (None: nothing), then forgets: called at most once, and
        not at all when no connection is made (nothing leaves then). A hook that raises sends
        nothing: the connection is closed and the exception leaves ``fetch``. (The embedded
        engine marks a request in flight there: a kill before it has sent nothing.)"""
        self._hooks.hook = hook

    def refusal(self, url: str) -> str | None:
        """None when this transport would open ``url`` now; else the error its fetch would
        give without sending anything (``invalid_url``, ``private_address``, ``dns_error``).
        The render client asks this about a page before handing it to the render service."""
        target = parse_target(url)
        return "invalid_url" if target is None else self._reach(target)[1]

    def fetch(self, request: FetchRequest) -> FetchResult:
        hook: Callable[[], None] | None = self._hooks.__dict__.pop("hook", None)
        target = parse_target(request.url)
        if target is None:
            return self._unsent(request, "invalid_url")
        headers = self._headers_for(request)
        if headers is None:
            return self._unsent(request, "invalid_request")
        begun = time.monotonic()
        addresses, refused = self._reach(target)
        if refused is not None:
            return self._unsent(request, refused)
        try:
            prepared = _prepared_get(request.url, headers)
        except (requests.RequestException, ValueError):
            return self._unsent(request, "invalid_url")
        if path_to_match(prepared.path_url) != path_to_match(request.url):
            # RFC 9309: robots.txt judged the URL as planned; a request whose path the HTTP
            # library would rewrite (dot segments, say) is not the one judged, so it is not sent.
            # Canonical URLs (heed_core.urls) never are.
            return self._unsent(request, "url_rewritten")
        deadline = begun + self._total
        if time.monotonic() >= deadline:
            return self._unsent(request, "deadline")
        # --- issue 13 hook (Web Bot Auth): sign what is about to leave, robots.txt included, as
        # late as possible so `created` is the send time. A request that cannot be signed is not
        # sent: unsigned, it would look exactly like an impostor's.
        if self._signer is not None:
            try:
                prepared.headers.update(self._signer.signature_headers("GET", str(prepared.url)))
            except ValueError:
                return self._unsent(request, "signing_error")
        # --- end of issue 13 hook
        connector = _Connector(addresses, deadline, hook)
        pool_cls = _PinnedHTTPSPool if target.scheme == "https" else _PinnedHTTPPool
        adapter: _OnePoolAdapter | None = None
        response: requests.Response | None = None
        t_start = self._clock.now()
        try:
            adapter = _OnePoolAdapter(pool_cls(target.host, port=target.port, heed_connector=connector))
            response = adapter.send(
                prepared, stream=True, timeout=self._timeouts, verify=self._verify, proxies={}
            )
            status, raw_headers = response.status_code, _raw_headers(response.raw)
            raw = response.raw
            body = read_capped(
                lambda n: raw.read1(n, decode_content=False), content_codings(raw_headers), request.max_bytes
            )
        except (requests.RequestException, urllib3.exceptions.HTTPError, http.client.HTTPException,
                OSError, ValueError) as exc:
            status, raw_headers, body = None, (), CappedBody(b"", _error_code(exc, connector))
        finally:
            fired = connector.finish()
            if response is not None:
                response.close()
            if adapter is not None:
                adapter.close()
        t_end = self._clock.now()
        if fired and body.error != "too_large":
            status, raw_headers, body = None, (), CappedBody(b"", "deadline")
        return FetchResult(
            url=request.url, status=status, headers=raw_headers, body=body.data,
            t_start=t_start, t_end=t_end, error=body.error, sent=connector.attempted,
            truncated=body.truncated, ip=connector.ip,
        )

    def _headers_for(self, request: FetchRequest) -> dict[str, str] | None:
        headers = {"User-Agent": self._user_agent, "Accept-Encoding": "gzip, deflate", "Accept": "*/*"}
        for name, value in request.headers.items():
            if name.lower() in _OURS or not _valid_header(name, value):
                return None  # a caller bug (or a smuggled Cookie): refuse loudly, send nothing
            for ours in [k for k in headers if k.lower() == name.lower()]:
                del headers[ours]  # e.g. an Accept of its own replaces our */*
            headers[name] = value
        return headers

    def _reach(self, target: Target) -> tuple[list[str], str | None]:
        """The checked addresses to connect to, or why there are none."""
        if not self._allow_private and not target.is_ip and is_local_name(target.host):
            return [], "private_address"  # RFC 6761 6.3: never asked of DNS
        addresses = self._addresses(target)
        if not addresses:
            return [], "dns_error"
        # SSRF: one private answer is enough to refuse; we then connect only to what was
        # checked here, so a second (rebinding) DNS answer can never be used.
        if not self._allow_private and not all(is_public_address(a) for a in addresses):
            return [], "private_address"
        return addresses, None

    def _addresses(self, target: Target) -> list[str]:
        if target.is_ip:
            return [target.host]
        try:
            return [str(a) for a in self._resolve(target.host, target.port)]
        except (OSError, UnicodeError, ValueError):
            return []

    def _unsent(self, request: FetchRequest, error: str) -> FetchResult:
        now = self._clock.now()
        return FetchResult(url=request.url, status=None, t_start=now, t_end=now, error=error, sent=False)


def _prepared_get(url: str, headers: dict[str, str]) -> requests.PreparedRequest:
    """requests' preparation of a GET: its method, URL and headers, as ``Request.prepare`` makes
    them. The rest of that preparation is for what a request of Heed's never has (a body, cookies:
    COMMON-04, credentials in the URL: refused before, ``parse_target``; hooks, which only a
    Session calls), and it took three times as long (70 us against 24, a cookie jar made and read
    each time)."""
    prepared = requests.PreparedRequest()
    prepared.prepare_method("GET")
    prepared.prepare_url(url, None)
    prepared.prepare_headers(headers)
    return prepared


def _valid_header(name: str, value: str) -> bool:
    if not isinstance(name, str) or not isinstance(value, str) or not _TOKEN.match(name):
        return False
    return not _BAD_VALUE.search(value) and value == value.strip() and _latin1(value)


def _latin1(value: str) -> bool:
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return True


def _error_code(exc: BaseException, connector: _Connector) -> str:
    if isinstance(exc, requests.exceptions.SSLError | urllib3.exceptions.SSLError | ssl.SSLError):
        return "tls_error"
    if connector.ip is None:  # no TCP connection was made
        return connector.failure or "connect_error"
    if isinstance(exc, requests.Timeout | urllib3.exceptions.TimeoutError | TimeoutError):
        return "timeout"
    return "connection_reset"


def _raw_headers(raw: Any) -> tuple[tuple[str, str], ...]:
    # http.client's message keeps wire order and repeats (two X-Robots-Tag lines stay two:
    # SUBSIDIE-09); urllib3's HTTPHeaderDict would group them by name.
    message = getattr(getattr(raw, "_original_response", None), "msg", None)
    items = message.items() if message is not None else raw.headers.items()
    return tuple((str(k), str(v)) for k, v in items)


class _Watchdog:
    """One thread for every fetch's total deadline (a timer thread per request costs more than
    the request): connectors wait in a heap by deadline; the thread fires each whose deadline
    came before it finished."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._heap: list[tuple[float, int, _Connector]] = []
        self._seq = 0
        self._thread: threading.Thread | None = None
        self._pid = 0

    def watch(self, connector: _Connector) -> None:
        with self._cond:
            if self._thread is None or self._pid != os.getpid():  # (a forked child has no thread)
                self._heap.clear()
                self._pid = os.getpid()
                self._thread = threading.Thread(target=self._run, name="heed-fetch-deadlines", daemon=True)
                self._thread.start()
            self._seq += 1
            earliest = not self._heap or connector.deadline < self._heap[0][0]
            heapq.heappush(self._heap, (connector.deadline, self._seq, connector))
            if earliest:
                self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._heap and self._heap[0][2].done:
                    heapq.heappop(self._heap)  # finished in time: forgotten
                if not self._heap:
                    self._cond.wait()
                    continue
                left = self._heap[0][0] - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                connector = heapq.heappop(self._heap)[2]
            connector.fire()


_WATCHDOG = _Watchdog()


class _Connector:
    """One fetch's sockets: opened only to the checked addresses, cut at the total deadline
    (a server dripping a byte a second never trips a per-read timeout)."""

    def __init__(self, addresses: list[str], deadline: float, before_send: Callable[[], None] | None = None) -> None:
        self._addresses = addresses
        self._deadline = self.deadline = deadline
        self._lock = threading.Lock()
        self._twins: list[socket.socket] = []
        self.done = self.fired = self.attempted = False
        self.ip: str | None = None
        self.failure: str | None = None
        self._before_send = before_send
        _WATCHDOG.watch(self)

    def open(self, conn: HTTPConnection, port: int, timeout: Any) -> socket.socket:
        for ip in self._addresses:
            remaining = self._deadline - time.monotonic()
            if self.fired or remaining <= 0:
                break
            limit = min(timeout, remaining) if isinstance(timeout, int | float) else remaining
            self.attempted = True
            sock = None
            try:
                family, kind, proto, _, sockaddr = socket.getaddrinfo(
                    ip, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST
                )[0]
                sock = socket.socket(family, kind, proto)
                sock.settimeout(limit)
                sock.connect(sockaddr)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError as exc:
                if sock is not None:
                    sock.close()
                self.failure = "timeout" if isinstance(exc, TimeoutError) else "connect_error"
                continue
            with self._lock:
                kept = not self.fired
                if kept:
                    # A duplicate descriptor outlives TLS wrapping, so the deadline can shut
                    # the connection down whatever phase it is in.
                    self._twins.append(sock.dup())
                    self.ip = ip
            if kept:
                hook, self._before_send = self._before_send, None
                if hook is not None:
                    try:
                        hook()  # (outside the lock: the deadline can still cut the connection)
                    except BaseException:
                        sock.close()
                        raise
                return sock
            sock.close()
            break
        if self.fired or self._deadline <= time.monotonic():
            self.failure = "deadline"
            raise ConnectTimeoutError(conn, "total deadline reached before connecting")
        raise NewConnectionError(conn, f"could not connect to any of {self._addresses}")

    def fire(self) -> None:
        with self._lock:
            if self.done:
                return
            self.fired = True
            for twin in self._twins:
                try:
                    twin.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def finish(self) -> bool:
        """Leave the watchdog; True when the deadline was hit first."""
        with self._lock:
            self.done = True
            for twin in self._twins:
                twin.close()
            self._twins.clear()
            return self.fired


class _PinnedHTTPConnection(HTTPConnection):
    def __init__(self, *args: Any, heed_connector: _Connector, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._heed_connector = heed_connector

    def _new_conn(self) -> socket.socket:
        return self._heed_connector.open(self, self.port, self.timeout)


class _PinnedHTTPSConnection(HTTPSConnection):
    # Host header, SNI and certificate check all use self.host, the original hostname.
    def __init__(self, *args: Any, heed_connector: _Connector, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._heed_connector = heed_connector

    def _new_conn(self) -> socket.socket:
        return self._heed_connector.open(self, self.port, self.timeout)


class _PinnedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _PinnedHTTPConnection


class _PinnedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _PinnedHTTPSConnection


class _OnePoolAdapter(HTTPAdapter):
    """requests' adapter with every request going through one pinned pool. Used without a
    Session: no cookie jar, no proxy from the environment, and no redirect bookkeeping
    (Session.send reads a 3xx body in full, past any size cap)."""

    def __init__(self, pool: HTTPConnectionPool) -> None:
        super().__init__(pool_connections=1, pool_maxsize=1)
        self._pool = pool

    # Every hook requests has used to pick a pool must return the pinned one: >= 2.32.2 calls
    # get_connection_with_tls_context, 2.31 and older get_connection. A hook missed here would
    # open a pool of urllib3's own, which resolves the name again (DNS rebinding) and connects
    # wherever that points. test_http_transport checks both; test_ssrf proves the pinning.
    def get_connection_with_tls_context(self, *args: Any, **kwargs: Any) -> HTTPConnectionPool:
        return self._pool

    def get_connection(self, *args: Any, **kwargs: Any) -> HTTPConnectionPool:
        return self._pool

    def close(self) -> None:
        super().close()
        self._pool.close()

"""Decides how the demo web answers: one recording HTTP server per site, each on its own 127.0.0.x."""
from __future__ import annotations

import gzip
import hashlib
import socket
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from email.utils import formatdate, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from heed.demo.site import Headers, Hit, RequestRecord, Route, Site, challenge, fail, redirect, render
from heed.demo.sites import demo_sites

__all__ = ["DemoWeb", "Hit", "RecordingServer", "RequestRecord", "Route", "Site",
           "challenge", "fail", "redirect", "render"]

# 2025-03-01 08:00:00 GMT: what a conditional route says when its site gives no date.
DEFAULT_LAST_MODIFIED = 1740816000.0


def _etag_matches(header: str, etag: str) -> bool:
    # RFC 9110 13.1.2: If-None-Match uses the weak comparison.
    strip = etag.removeprefix("W/")
    return any(t.strip() == "*" or t.strip().removeprefix("W/") == strip for t in header.split(","))


def _not_modified_since(header: str, last_modified: float) -> bool:
    try:
        return last_modified <= parsedate_to_datetime(header).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return False  # an unreadable date is ignored (RFC 9110 13.1.3)


def _accepts_gzip(header: str | None) -> bool:
    for part in (header or "").lower().split(","):
        coding, _, params = part.strip().partition(";")
        if coding.strip() in ("gzip", "x-gzip", "*"):
            q = params.strip().removeprefix("q=")
            return not (params and q.replace(".", "", 1).isdigit() and float(q) == 0)
    return False


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "nginx/1.24.0"
    sys_version = ""
    timeout = 15
    server: RecordingServer

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet tests
        pass

    def handle_one_request(self) -> None:
        try:
            self.raw_requestline = self.rfile.readline(65537)
        except (TimeoutError, OSError):
            self.close_connection = True
            return
        t_start = time.time()
        if not self.raw_requestline or len(self.raw_requestline) > 65536:
            self.close_connection = True
            return
        if not self.parse_request():
            return
        self.server._begin()
        try:
            self._answer(t_start)
        finally:
            self.server._end()

    def _answer(self, t_start: float) -> None:
        headers: Headers = tuple(self.headers.items())
        if self.command != "GET":
            # COMMON-04: the site can show it only ever saw GETs.
            status, out, body = 405, [("Allow", "GET"), ("Content-Type", "text/plain; charset=utf-8")], b""
            if self.command != "HEAD":
                body = b"405 Method Not Allowed\n"
            self.close_connection = True
        else:
            status, out, body = self.server.respond(self.path, headers)
        sent, t_end = self._write(status, out, body)
        # The request target as it arrived (http.server folds a leading "//" of self.path into
        # "/"): a site's log shows what the crawler sent.
        words = self.requestline.split(" ")
        target = words[1] if len(words) == 3 else self.path
        self.server._record(RequestRecord(
            t_start=t_start, t_end=t_end, host=self.server.host, method=self.command,
            path=target, headers=headers, status=status, bytes=sent,
            client=f"{self.client_address[0]}:{self.client_address[1]}"))

    def _write(self, status: int, out: list[tuple[str, str]], body: bytes) -> tuple[int, float]:
        """Send the answer; the bytes of its body and when its last write began. That moment is the
        request's end in the log: the crawler holds the whole answer only after it, so a gap it
        counts from its own end is never longer than the log's. A stamp taken after the write
        would wait for this thread's next turn at the GIL (which the crawler shares here, 5 ms and
        more under load) and shorten every gap the log shows by that wait."""
        t_end = time.time()
        try:
            self.send_response_only(status)
            names = {k.lower() for k, _ in out}
            if "server" not in names:
                self.send_header("Server", self.server_version)
            self.send_header("Date", self.date_time_string())
            for k, v in out:
                self.send_header(k, v)
            if status != 304:
                self.send_header("Content-Length", str(len(body)))
            if self.close_connection:
                self.send_header("Connection", "close")
            t_end = time.time()
            self.end_headers()
            if body:
                t_end = time.time()
                self.wfile.write(body)
            self.wfile.flush()
            return len(body), t_end
        except OSError:
            self.close_connection = True
            return 0, t_end


class RecordingServer(ThreadingHTTPServer):
    """Serves one site on ``ip`` at ``port`` (0: one the system picks, read back in ``port``), logging
    every request."""

    daemon_threads = True
    allow_reuse_address = False

    def __init__(self, site: Site, ip: str = "127.0.0.2", urls: Mapping[str, str] | None = None, *,
                 port: int = 0) -> None:
        super().__init__((ip, port), _Handler)
        self.site = site
        self.ip, self.port = str(self.server_address[0]), int(self.server_address[1])
        self.host = f"{self.ip}:{self.port}"
        self.base_url = f"http://{self.host}"
        self.urls: Mapping[str, str] = urls if urls is not None else {site.name: self.base_url}
        self._routes = dict(site.routes)
        self._hits: dict[str, int] = {}
        self._log: list[RequestRecord] = []
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._in_flight = 0
        self._conns: set[socket.socket] = set()
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------
    def start(self) -> RecordingServer:
        if self._thread is None:
            self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05},
                                            name=f"demo-{self.site.name}", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self.shutdown()
            self._thread.join(timeout=2)
            self._thread = None
        with self._lock:
            conns = list(self._conns)
        for conn in conns:  # idle keep-alive connections would otherwise outlive the server
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.server_close()

    def __enter__(self) -> RecordingServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def process_request(self, request, client_address):  # type: ignore[no-untyped-def]
        with self._lock:
            self._conns.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request):  # type: ignore[no-untyped-def]
        with self._lock:
            self._conns.discard(request)
        super().shutdown_request(request)

    # -- routing ----------------------------------------------------------------
    def set_route(self, path: str, route: Route | None) -> None:
        """Change one path while running (e.g. a robots.txt edit); None removes it."""
        with self._lock:
            if route is None:
                self._routes.pop(path, None)
            else:
                self._routes[path] = route

    def respond(self, target: str, headers: Headers) -> tuple[int, list[tuple[str, str]], bytes]:
        path = target.split("#", 1)[0]
        with self._lock:
            key = path if path in self._routes else path.split("?", 1)[0]
            route = self._routes.get(key)
            if route is None:
                key, route = "", self.site.fallback
            self._hits[key] = n = self._hits.get(key, 0) + 1
        if route is None:
            return (404, [("Content-Type", "text/html; charset=utf-8")],
                    b"<!doctype html><title>404</title><h1>Niet gevonden</h1>\n")
        req = {k.lower(): v for k, v in headers}
        body = route.body(Hit(n, time.time(), path, headers)) if callable(route.body) else route.body
        if isinstance(body, str):
            body = render(body, self.base_url, self.urls).encode("utf-8")
        out = [("Content-Type", route.content_type)]
        out += [(k, render(v, self.base_url, self.urls)) for k, v in route.headers]
        if route.location is not None:
            out.append(("Location", render(route.location, self.base_url, self.urls)))
        if route.conditional and route.status == 200:
            etag = f'"{hashlib.sha1(body).hexdigest()[:20]}"'
            lm = route.last_modified if route.last_modified is not None else DEFAULT_LAST_MODIFIED
            out += [("ETag", etag), ("Last-Modified", formatdate(lm, usegmt=True))]
            inm, ims = req.get("if-none-match"), req.get("if-modified-since")
            # RFC 9110 13.2.2: If-None-Match wins; If-Modified-Since only counts without it.
            if (inm is not None and _etag_matches(inm, etag)) or (
                    inm is None and ims is not None and _not_modified_since(ims, lm)):
                return 304, [(k, v) for k, v in out if k.lower() != "content-type"], b""
        if route.precompressed:
            body = gzip.compress(body, mtime=0)
        elif route.gzip:
            out.append(("Vary", "Accept-Encoding"))
            if _accepts_gzip(req.get("accept-encoding")):
                body = gzip.compress(body, mtime=0)
                out.append(("Content-Encoding", "gzip"))
        return route.status, out, body

    # -- the log ----------------------------------------------------------------
    def _begin(self) -> None:
        with self._lock:
            self._in_flight += 1

    def _end(self) -> None:
        with self._lock:
            self._in_flight -= 1
            self._idle.notify_all()

    def _record(self, rec: RequestRecord) -> None:
        with self._lock:
            self._log.append(rec)

    def log(self, wait_s: float = 2.0) -> list[RequestRecord]:
        """Every request so far, oldest first. Waits (briefly) for requests still being
        answered, so a client that just got its response always finds it logged."""
        with self._idle:
            self._idle.wait_for(lambda: self._in_flight == 0, timeout=wait_s)
            return sorted(self._log, key=lambda r: r.t_start)

    def reset_log(self, wait_s: float = 2.0) -> None:
        """Forget the log, after the requests still being answered have been logged."""
        with self._idle:
            self._idle.wait_for(lambda: self._in_flight == 0, timeout=wait_s)
            self._log.clear()


@dataclass
class DemoWeb:
    """A set of sites, each on its own loopback address from ``127.0.0.<first_ip>`` upward."""

    sites: Iterable[Site] | None = None
    first_ip: int = 10
    servers: dict[str, RecordingServer] = field(default_factory=dict, init=False)
    urls: dict[str, str] = field(default_factory=dict, init=False)

    def start(self) -> dict[str, str]:
        if self.servers:
            return dict(self.urls)
        if self.sites is None:
            self.sites = demo_sites()
        sites = list(self.sites)
        if self.first_ip + len(sites) > 255:
            raise ValueError("too many sites for 127.0.0.x")
        try:
            for i, site in enumerate(sites):
                server = RecordingServer(site, f"127.0.0.{self.first_ip + i}", self.urls)
                self.servers[site.name] = server
                self.urls[site.name] = server.base_url
            for server in self.servers.values():
                server.start()
        except BaseException:
            self.stop()
            raise
        return dict(self.urls)

    def stop(self) -> None:
        # In parallel: each shutdown waits up to one poll interval.
        threads = [threading.Thread(target=s.stop) for s in self.servers.values()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.servers.clear()
        self.urls.clear()

    def __enter__(self) -> DemoWeb:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def server(self, site: str) -> RecordingServer:
        return self.servers[site]

    def set_route(self, site: str, path: str, route: Route | None) -> None:
        self.servers[site].set_route(path, route)

    def log(self, site: str | None = None) -> list[RequestRecord]:
        servers = [self.servers[site]] if site is not None else list(self.servers.values())
        return sorted((r for s in servers for r in s.log()), key=lambda r: r.t_start)

    def reset_log(self) -> None:
        for s in self.servers.values():
            s.reset_log()

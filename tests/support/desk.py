"""The desk's test helpers: three feed sites on the desk's own loopback block (127.0.9.100-139),
the bot the desk tests run (AubeBot's shape, its own addresses declared, a small gap, a desk),
a log line as a site's log writes it, and a small HTTP client with its own cookies (the desk as a
browser without a script sees it)."""
from __future__ import annotations

import http.cookiejar
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from heed.demo.web import RecordingServer, RequestRecord, Route, Site

from tests.support.serve import feed_routes

__all__ = ["DESK_IP", "IPS", "Browserless", "DeskSites", "clf", "desk_profile"]

# The desk suites' loopback block (no other suite uses 127.0.9.100-139).
IPS = tuple(f"127.0.9.{n}" for n in range(101, 140))
DESK_IP = "127.0.9.100"


def desk_profile(path: Path, *, gap_s: float = 0.5, language: str | None = None, **extra: Any) -> Path:
    """AubeBot's shape with a desk: feeds read whenever a round asks (no cadence), a small gap,
    its egress declared as the loopback address the sites see, no schedule firing in a test."""
    data: dict[str, Any] = {
        "extends": "aubebot", "desk": True, "egress": {"ips": ["127.0.0.1/32"]},
        "politeness": {"min_delay_s": gap_s, "crawl_delay_cap_s": 1, "max_in_flight": None},
        "schedules": [{"expression": "cron(0 3 1 1 ? *)", "task": "feed"}],
        "tasks": {"feed": {"min_read_interval_s": 0,
                           "article_followup": {"per_source_per_window": 1000, "total_per_window": 10000}}},
        **extra}
    if language:
        data["language"] = language
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


@dataclass
class DeskSites:
    """``n`` feed sites of ``articles`` items each on the desk block, from ``first``."""

    n: int = 3
    articles: int = 2
    first: int = 0
    servers: list[RecordingServer] = field(default_factory=list)

    def start(self) -> DeskSites:
        for i in range(self.n):
            site = Site(name=f"desk{i}", routes=feed_routes(self.articles))
            self.servers.append(RecordingServer(site, ip=IPS[self.first + i]).start())
        return self

    def stop(self) -> None:
        for s in self.servers:
            s.stop()

    def sources_file(self, path: Path) -> Path:
        path.write_text(yaml.safe_dump({"sources": [{"id": f"feed{i}", "url": f"{s.base_url}/feed.xml", "kind": "feed"}
                                                    for i, s in enumerate(self.servers)]}), encoding="utf-8")
        return path

    def place(self, i: int, path: str, body: str) -> None:
        """A file the site owner puts on site ``i`` (the proof)."""
        self.servers[i].set_route(path, Route(body=body, content_type="text/plain"))

    def host(self, i: int) -> str:
        return self.servers[i].base_url.split("://", 1)[1]


def clf(r: RequestRecord, *, ip: str | None = None, ua: str | None = None, t: float | None = None) -> str:
    """A request as Apache's combined log writes it (the site's own record), or changed."""
    when = datetime.fromtimestamp(t if t is not None else r.t_start, UTC).strftime("%d/%b/%Y:%H:%M:%S +0000")
    agent = ua if ua is not None else (r.header("User-Agent") or "-")
    addr = ip if ip is not None else r.client.rsplit(":", 1)[0]
    return f'{addr} - - [{when}] "{r.method} {r.path} HTTP/1.1" {r.status} {r.bytes} "-" "{agent}"'


class Browserless:
    """The desk as a browser without script sees it: GETs, form POSTs (paths from the server's
    root: /desk/...), its cookies kept, a 303 followed when asked."""

    def __init__(self, root: str) -> None:
        self.root = root.rstrip("/")
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect())

    def get(self, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
        return self._open(urllib.request.Request(self.root + path, headers=headers or {}))

    def post(self, path: str, form: dict[str, str], headers: dict[str, str] | None = None,
             follow: bool = True) -> tuple[int, dict[str, str], str]:
        body = urllib.parse.urlencode(form).encode()
        kind = {"Content-Type": "application/x-www-form-urlencoded"}
        status, hdrs, text = self._open(urllib.request.Request(self.root + path, data=body,
                                                               headers={**kind, **(headers or {})}))
        if follow and status == 303:
            assert hdrs["Location"].startswith("/desk/"), hdrs["Location"]
            return self.get(hdrs["Location"])
        return status, hdrs, text

    def _open(self, req: urllib.request.Request) -> tuple[int, dict[str, str], str]:
        try:
            with self.opener.open(req, timeout=60) as resp:
                return resp.status, dict(resp.headers.items()), resp.read().decode("utf-8")
        except urllib.error.HTTPError as exc:
            return exc.code, dict(exc.headers.items()), exc.read().decode("utf-8", "replace")

    def csrf(self, path: str = "/desk/") -> str:
        _, _, text = self.get(path)
        m = re.search(r'name="csrf" value="([0-9a-f]+)"', text)
        assert m is not None, text[:500]
        return m.group(1)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class WsgiClient:
    """The desk's WSGI application called in-process, as one browser at one address: its cookies
    kept, every answer (status, headers, body) returned as it is."""

    def __init__(self, app: Any, client: str = "192.0.2.10") -> None:
        self.app = app
        self.client = client
        self.cookies: dict[str, str] = {}

    def call(self, method: str, path: str, form: dict[str, str] | None = None, *, raw: bytes | None = None,
             headers: dict[str, str] | None = None, length: str | None = None,
             content_type: str = "application/x-www-form-urlencoded") -> tuple[int, dict[str, str], str]:
        import io
        from wsgiref.util import setup_testing_defaults

        path, _, query = path.partition("?")
        env: dict[str, Any] = {}
        setup_testing_defaults(env)
        body = raw if raw is not None else (urllib.parse.urlencode(form).encode() if form is not None else b"")
        env.update(REQUEST_METHOD=method, PATH_INFO=path, QUERY_STRING=query, REMOTE_ADDR=self.client,
                   HTTP_COOKIE="; ".join(f"{k}={v}" for k, v in self.cookies.items()),
                   CONTENT_LENGTH=length if length is not None else (str(len(body)) if method == "POST" else ""),
                   CONTENT_TYPE=content_type if method == "POST" else "")
        env["wsgi.input"] = _Guarded(io.BytesIO(body))
        for k, v in (headers or {}).items():
            env["HTTP_" + k.upper().replace("-", "_")] = v
        out: dict[str, Any] = {}

        def start(status: str, hdrs: list[tuple[str, str]]) -> None:
            out["status"], out["headers"] = int(status.split()[0]), hdrs

        text = b"".join(self.app(env, start)).decode("utf-8")
        for k, v in out["headers"]:
            if k == "Set-Cookie":
                name, _, rest = v.partition("=")
                self.cookies[name] = rest.split(";", 1)[0]
        env["wsgi.input"].check()
        return out["status"], {k: v for k, v in out["headers"] if k != "Set-Cookie"} | {
            "Set-Cookie": "\n".join(v for k, v in out["headers"] if k == "Set-Cookie")}, text

    def csrf(self, path: str = "/desk/") -> str:
        _, _, text = self.call("GET", path)
        m = re.search(r'name="csrf" value="([0-9a-f]+)"', text)
        assert m is not None, text[:500]
        return m.group(1)


class _Guarded:
    """A request body that knows how much of it was read (a body refused by its length: none)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.read_bytes = 0

    def read(self, n: int = -1) -> bytes:
        data: bytes = self.inner.read(n)
        self.read_bytes += len(data)
        return data

    def check(self) -> None:
        return None


# --- the desk on the AWS engine: the function's handler on the local runtime's moto stack ----------

def run_reader(out_dir: Path) -> Any:
    """What the fetcher's log group holds, as the local runtime writes it (its requests.jsonl):
    moto runs no Logs Insights query, so the desk reads our requests from there in a local run."""
    import json as _json

    from heed_core.desk.scope import Scope

    def read(scope: Scope, since: float, until: float) -> list[dict[str, Any]]:
        out = []
        path = out_dir / "requests.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines() if path.is_file() else []:
            rec = _json.loads(line)
            t = datetime.fromisoformat(str(rec.get("t_start")).replace("Z", "+00:00")).timestamp()
            if scope.covers(str(rec.get("url", ""))) and since <= t <= until:
                out.append(rec)
        return out
    return read


def aws_desk_app(run: Any, *, topic_arn: str | None = None, allow_private: bool = True) -> Any:
    """The desk as the DeskFunction runs it, on ``run``'s stack (heed.local.runtime.LocalRun):
    every AWS call it makes is made as DeskFunction (the IAM check holds it to that role)."""
    from heed.desk.aws import AwsBackend
    from heed.desk.service import Desk
    from heed.desk.web import DeskApp

    s = run._session
    backend = AwsBackend(run.profile, table=run.res.table_name, dynamodb=s.client("dynamodb"), sqs=s.client("sqs"),
                         queue_url=run.res.queue_url, s3=s.client("s3"), bucket=run.res.bucket,
                         reader=run_reader(run.out.dir), sns=s.client("sns"), topic_arn=topic_arn, clock=run.now,
                         allow_private=allow_private)
    app = DeskApp(Desk(run.profile, backend.desk_store, backend), clock=run.now)

    def as_function(environ: Any, start_response: Any) -> list[bytes]:
        run._local.function = "DeskFunction"
        try:
            return list(app(environ, start_response))
        finally:
            run._local.function = None
    return as_function


class FunctionUrlServer:
    """A Lambda function URL on ``ip``: each HTTP request becomes a payload-2.0 event for
    ``heed.desk.aws.function_url_handler`` and its answer goes back as the URL would send it."""

    def __init__(self, app: Any, ip: str) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        from heed.desk.aws import function_url_handler

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def _any(self) -> None:
                path, _, query = self.path.partition("?")
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if 0 < length <= 6 * 1024 * 1024 else b""
                headers = {k.lower(): v for k, v in self.headers.items() if k.lower() != "cookie"}
                cookies = [c.strip() for c in (self.headers.get("Cookie") or "").split(";") if c.strip()]
                event = {"version": "2.0", "rawPath": path, "rawQueryString": query, "headers": headers,
                         "cookies": cookies, "body": body.decode("utf-8", "replace"), "isBase64Encoded": False,
                         "requestContext": {"http": {"method": self.command, "sourceIp": self.client_address[0],
                                                     "path": path}}}
                answer = function_url_handler(app, event)
                out = answer["body"].encode("utf-8")
                self.send_response(answer["statusCode"])
                for k, v in answer["headers"].items():
                    if k.lower() != "content-length":
                        self.send_header(k, v)
                for c in answer["cookies"]:
                    self.send_header("Set-Cookie", c)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(out)

            do_GET = do_POST = do_HEAD = _any

        self.httpd = ThreadingHTTPServer((ip, 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def root(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FunctionUrlServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class TxtServer:
    """A DNS server on ``ip`` (UDP) that answers TXT questions from ``records`` (name -> texts)
    and NXDOMAIN for every other name: the resolver a desk is configured with, in a test."""

    def __init__(self, ip: str, records: dict[str, list[str]]) -> None:
        import socket
        import threading

        self.records = records
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((ip, 0))
        self.address = self.sock.getsockname()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self._stop = False

    def start(self) -> TxtServer:
        self.thread.start()
        return self

    def _serve(self) -> None:
        import struct

        self.sock.settimeout(0.2)
        while not self._stop:
            try:
                msg, peer = self.sock.recvfrom(4096)
            except OSError:
                continue
            qid = msg[:2]
            at, labels = 12, []
            while msg[at]:
                labels.append(msg[at + 1:at + 1 + msg[at]].decode())
                at += 1 + msg[at]
            question = msg[12:at + 5]
            texts = self.records.get(".".join(labels))
            flags = 0x8180 if texts is not None else 0x8183
            answers = b""
            for text in texts or []:
                raw = text.encode()
                rdata = b"".join(bytes([len(raw[i:i + 255])]) + raw[i:i + 255] for i in range(0, len(raw), 255))
                answers += b"\xc0\x0c" + struct.pack(">HHIH", 16, 1, 60, len(rdata)) + rdata
            head = qid + struct.pack(">HHHHH", flags, 1, len(texts or []), 0, 0)
            self.sock.sendto(head + question + answers, peer)

    def stop(self) -> None:
        self._stop = True
        self.thread.join(2)
        self.sock.close()

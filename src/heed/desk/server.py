"""The desk's HTTP server on one machine: the standard library's WSGI server (``wsgiref``), a
thread a request, in a thread of its own beside the crawl (``heed serve --desk``) or alone
(``heed desk``). It speaks plain HTTP: put it behind the info host's TLS proxy at ``/desk/``."""
from __future__ import annotations

import socket
import threading
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from heed_core.errors import ConfigError

__all__ = ["DeskServer", "parse_listen"]


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the desk logs its actions itself
        pass


class _Threading(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Threading6(_Threading):
    address_family = socket.AF_INET6


def parse_listen(text: str, flag: str = "--desk") -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8080`` for IPv6) as an address to listen on; one line if it is none."""
    host, sep, port = text.strip().rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"{flag}: {text!r} is not HOST:PORT (e.g. 127.0.0.1:8080)")
    return host, int(port)


class DeskServer:
    """``app`` served at ``address`` until ``stop``."""

    def __init__(self, app: Any, address: tuple[str, int]) -> None:
        cls = _Threading6 if ":" in address[0] else _Threading
        try:
            self.httpd = make_server(address[0], address[1], app, server_class=cls, handler_class=_Quiet)
        except OSError as exc:
            raise ConfigError(f"--desk: cannot listen on {address[0]}:{address[1]} ({exc.strerror or exc})") from exc
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.2},
                                       name="heed-desk", daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        shown = f"[{name}]" if ":" in name else name
        return f"http://{shown}:{port}/desk/"

    def start(self) -> DeskServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5.0)

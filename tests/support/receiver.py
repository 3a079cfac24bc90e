"""An operator's application receiving Heed's webhook, as the README's receiver does: a real HTTP
server on loopback that verifies every delivery with Standard Webhooks' reference verifier (the
`standardwebhooks` package) and keeps what it got. ``fail_for`` makes it answer 503 to the
next ``seconds`` (an application down for a while)."""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

__all__ = ["Delivery", "Receiver"]


@dataclass(frozen=True)
class Delivery:
    id: str
    status: int
    body: bytes
    headers: dict[str, str]


@dataclass
class Receiver:
    secret: str
    ip: str = "127.0.0.1"
    deliveries: list[Delivery] = field(default_factory=list)
    bad_signatures: int = 0
    fail_until: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://{self.ip}:{self.server.server_address[1]}/hook"

    def fail_for(self, seconds: float) -> None:
        with self.lock:
            self.fail_until = time.monotonic() + seconds

    def accepted(self) -> list[str]:
        """The ids of the deliveries answered 2xx, in the order they came (repeats kept)."""
        with self.lock:
            return [d.id for d in self.deliveries if d.status == 204]

    def start(self) -> Receiver:
        verifier = Webhook(self.secret)
        me = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                try:
                    payload: Any = verifier.verify(body, headers)
                    ok = payload.get("id") == headers.get("webhook-id")
                except (WebhookVerificationError, json.JSONDecodeError):
                    ok = False
                with me.lock:
                    if not ok:
                        me.bad_signatures += 1
                        status = 400
                    elif time.monotonic() < me.fail_until:
                        status = 503
                    else:
                        status = 204
                    me.deliveries.append(Delivery(headers.get("webhook-id", ""), status, body, headers))
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer((self.ip, 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

"""The POST of a webhook delivery (``heed_core.webhook.Post``) over requests: no redirect followed
(a receiver that moved is told by its 3xx, not chased), the answer read up to a cap, every failure
to get one an ``Answer`` with an error code, never an exception."""
from __future__ import annotations

from collections.abc import Mapping

import requests

from heed_core.webhook import MAX_RESPONSE_BYTES, TIMEOUT_S, Answer

__all__ = ["WebhookPoster"]

CONNECT_TIMEOUT_S = 5.0


class WebhookPoster:
    """``__call__(url, body, headers) -> Answer`` on one kept-alive session."""

    def __init__(self, user_agent: str = "heed-webhooks/1") -> None:
        self.session = requests.Session()
        self.session.trust_env = False  # the operator's receiver, not a proxy the environment names
        self.user_agent = user_agent

    def __call__(self, url: str, body: bytes, headers: Mapping[str, str]) -> Answer:
        try:
            with self.session.post(url, data=body, headers={"user-agent": self.user_agent, **headers},
                                   timeout=(CONNECT_TIMEOUT_S, TIMEOUT_S), allow_redirects=False, stream=True) as r:
                r.raw.read(MAX_RESPONSE_BYTES, decode_content=False)
                return Answer(int(r.status_code))
        except requests.Timeout:
            return Answer(None, "timeout")
        except requests.ConnectionError:
            return Answer(None, "connect_error")
        except (requests.RequestException, OSError, ValueError):
            return Answer(None, "request_error")

    def close(self) -> None:
        self.session.close()

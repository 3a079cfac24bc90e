"""Decides how an agenda page built by JavaScript is fetched: through an external render service.

WANNADO-09: the render service loads the page in its headless browser and must present the
bot's own User-Agent to the site, so we pass it along with every render request. The
service is asked with a plain GET (COMMON-04 holds for our side; the robots.txt check of
the target URL and the per-host politeness gap are the caller's job, exactly as for a
direct fetch, because the site still sees one request from us).

SSRF: the render service is asked through the same guarded transport, so an endpoint pointing
inward is refused like any URL. The service then loads the page from *its* network, out of the
transport's sight, so the page itself is vetted first with the transport's own rules (its
``refusal(url)``): an inward page is never handed to the service.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from urllib.parse import urlencode, urlsplit

from ..ports import FetchRequest, FetchResult, Transport

__all__ = ["RenderClient"]


def _is_http_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


class RenderClient:
    """Asks ``GET {endpoint}?url=<target>&userAgent=<bot UA>`` (the query shape of the
    common headless render APIs; names configurable) and returns the rendered HTML as a
    ``FetchResult`` for the *target* URL, so the rest of the pipeline cannot tell a
    rendered page from a fetched one except by ``FetchRequest.purpose == "render"``."""

    def __init__(
        self,
        transport: Transport,
        endpoint: str,
        *,
        user_agent: str,
        url_param: str = "url",
        user_agent_param: str = "userAgent",
        extra_params: Mapping[str, str] | None = None,
        vet: Callable[[str], str | None] | None = None,
    ) -> None:
        self._transport = transport
        self._endpoint = endpoint
        self._user_agent = user_agent
        self._url_param = url_param
        self._ua_param = user_agent_param
        self._extra = dict(extra_params or {})
        # vet(url): None to go ahead, else the error to refuse with; by default the
        # transport's own rules, when it has them (RequestsTransport.refusal).
        self._vet = vet if vet is not None else getattr(transport, "refusal", None)

    def request_for(self, url: str, *, max_bytes: int) -> FetchRequest:
        """The exact GET sent to the render service (exposed so tests and logs can see it)."""
        params = {**self._extra, self._url_param: url, self._ua_param: self._user_agent}
        sep = "&" if "?" in self._endpoint else "?"
        return FetchRequest(
            url=f"{self._endpoint}{sep}{urlencode(params)}", purpose="render", max_bytes=max_bytes
        )

    def render(self, url: str, *, max_bytes: int) -> FetchResult:
        if not _is_http_url(url) or not _is_http_url(self._endpoint) or not self._user_agent:
            # Refused before anything left the machine: a render without our identity
            # would break WANNADO-09, a non-http target is not a page.
            return FetchResult(url=url, status=None, error="invalid_url", sent=False)
        refused = self._vet(url) if self._vet is not None else None
        if refused is not None:
            return FetchResult(url=url, status=None, error=refused, sent=False)
        result = self._transport.fetch(self.request_for(url, max_bytes=max_bytes))
        return replace(result, url=url)

"""URL facts the policies share: the authority a rule applies to, and safe joins."""
from __future__ import annotations

import functools
import hashlib
from urllib.parse import urljoin, urlsplit, urlunsplit

from heed_core.errors import InputError

_DEFAULT_PORT = {"http": 80, "https": 443}


class BadUrl(InputError, ValueError):
    """Not an absolute http(s) URL with a host."""

    def __init__(self, message: str) -> None:
        super().__init__(message, reason="bad_url")


@functools.lru_cache(maxsize=4096)  # a pure function, asked a dozen times per request
def authority(url: str) -> str:
    """``scheme://host:port``, lower-cased, default port spelled out.

    SUBSIDIE-10 and RFC 9309 2.3: robots.txt and politeness are per (scheme, host, port),
    so example.nl and subsidies.example.nl never share rules or pacing."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORT or not parts.hostname:
        raise BadUrl(f"not an absolute http(s) URL: {url!r}")
    try:
        port = parts.port if parts.port is not None else _DEFAULT_PORT[scheme]  # ":0" is not ":80"
    except ValueError as exc:
        raise BadUrl(f"bad port in {url!r}") from exc
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}"


def host_name(text: str) -> str:
    """The lower-case host name of a URL, an authority or a bare ``host[:port]``."""
    return (urlsplit(text if "://" in text else "//" + text).hostname or "").lower()


def in_domain(text: str, domains: list[str]) -> bool:
    """COMMON-08: is the host of ``text`` one of ``domains`` or below one of them?"""
    name = host_name(text)
    return any(name == d.lower().strip(".") or name.endswith("." + d.lower().strip(".")) for d in domains)


def origin(host_authority: str) -> str:
    """An authority as it is written in a URL: the default port left out."""
    scheme, rest = host_authority.split("://", 1)
    if rest.endswith(f":{_DEFAULT_PORT.get(scheme)}"):
        rest = rest.rsplit(":", 1)[0]
    return f"{scheme}://{rest}"


def robots_url(url: str) -> str:
    return origin(authority(url)) + "/robots.txt"


def path_of(url: str) -> str:
    """Path plus query, as robots.txt rules see it."""
    parts = urlsplit(url)
    path = parts.path or "/"
    return path + (f"?{parts.query}" if parts.query else "")


def absolute(base: str, href: str) -> str | None:
    """Resolve a link; None for anything that is not http(s)."""
    try:
        joined = urljoin(base, href.strip())
    except ValueError:
        return None
    parts = urlsplit(joined)
    if parts.scheme.lower() not in _DEFAULT_PORT or not parts.hostname:
        return None
    return urlunsplit((parts.scheme.lower(), parts.netloc, parts.path or "/", parts.query, ""))


def same_authority(a: str, b: str) -> bool:
    try:
        return authority(a) == authority(b)
    except BadUrl:
        return False


def under_path(url: str, base: str) -> bool:
    """SPRING-03: is ``url`` on the same site and under the directory of ``base``?"""
    if not same_authority(url, base):
        return False
    base_path = urlsplit(base).path or "/"
    if not base_path.endswith("/"):
        base_path = base_path.rsplit("/", 1)[0] + "/"
    return (urlsplit(url).path or "/").startswith(base_path)


def short_hash(*parts: str, n: int = 16) -> str:
    h = hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
    return h[:n]


def group_id(host_authority: str) -> str:
    """An SQS MessageGroupId for a host (<= 128 chars)."""
    return host_authority if len(host_authority) <= 128 else "h-" + short_hash(host_authority, n=40)

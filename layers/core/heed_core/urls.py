"""One URL, one identity: links resolved as browsers resolve them, one canonical spelling, and
the URL facts the policies share (the authority a rule applies to, robots.txt's path).

Every link the crawler meets (pages, feeds, sitemaps, events, redirects, sources) goes through
``resolve`` (the WHATWG URL Standard, by ada, the parser behind Node.js) and then ``canonical``:
scheme and host lower-cased, IDNA, default port dropped, dot segments removed, credentials
dropped, percent-encoding normalised (unreserved characters decoded, every other escape in
upper-case hex, anything outside RFC 3986 encoded), fragment dropped, tracking parameters
removed. The canonical URL is what is requested, judged by robots.txt, deduplicated, recorded
and named in results: a site sees one request per page whatever the link's spelling."""
from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import ada_url

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


# --- links: resolve, canonical ----------------------------------------------------------------

# Query parameters that only say where a click came from (RFC-less, but every analytics tool's):
# a page is the same page without them. ``name*`` is a prefix. A profile's ``urls.strip_params``
# extends the list (or, set to [], empties it).
TRACKING_PARAMS: tuple[str, ...] = (
    "utm_*", "fbclid", "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "msclkid", "mc_eid", "mc_cid",
    "_hsenc", "_hsmi", "__hssc", "__hstc", "__hsfp", "hsctatracking", "yclid", "igshid", "twclid", "ttclid",
    "li_fat_id", "mkt_tok", "_ga", "_gl", "oly_anon_id", "oly_enc_id", "vero_id", "vero_conv", "rb_clickid",
    "wickedid", "srsltid", "ef_id", "s_kwcid", "epik", "pk_campaign", "pk_kwd", "pk_source", "pk_medium",
    "mtm_campaign", "mtm_source", "mtm_medium", "mtm_keyword", "ncid", "cmpid",
)
MAX_URL_CHARS = 4096  # a longer link is refused as bad_url (caps everywhere: ids, keys, logs)
NOT_HTTP = "not_http"  # mailto:, javascript:, data:, tel:, ...: not ours to fetch, and not a mistake
BAD_URL = "bad_url"  # cannot be parsed as a URL at all

_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HEX = "0123456789ABCDEF"
# What RFC 3986 lets stand unescaped in a path (pchar and "/") and in a query (also "?").
_PATH_OK = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/]*")
_QUERY_OK = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/?]*")
_ESCAPE_OR_BAD = {
    "path": re.compile(r"%([0-9A-Fa-f]{2})|%|[^A-Za-z0-9\-._~!$&'()*+,;=:@/]"),
    "query": re.compile(r"%([0-9A-Fa-f]{2})|%|[^A-Za-z0-9\-._~!$&'()*+,;=:@/?]"),
}


class Link(str):
    """A resolved link that is an http(s) URL (a ``str``: the WHATWG href, fragment dropped)."""

    __slots__ = ()


@dataclass(frozen=True)
class Refused:
    """A link that is not fetched: ``reason`` is ``not_http`` (another scheme: ignored) or
    ``bad_url`` (no URL at all: recorded); ``text`` is the link as written (cut to 300)."""

    text: str
    reason: str
    detail: str


def _fix(kind: str, text: str) -> str:
    if (_PATH_OK if kind == "path" else _QUERY_OK).fullmatch(text) and "%" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        if m.group(1):
            char = chr(int(m.group(1), 16))
            return char if char in _UNRESERVED else "%" + m.group(1).upper()
        if m.group(0) == "%":
            return "%25"
        return "".join("%" + _HEX[b >> 4] + _HEX[b & 15] for b in m.group(0).encode("utf-8", "surrogatepass"))

    return _ESCAPE_OR_BAD[kind].sub(one, text)


@functools.lru_cache(maxsize=8192)
def _parse(href: str, base: str | None) -> Link | Refused:
    text = href[:300]
    if len(href) > MAX_URL_CHARS:
        return Refused(text, BAD_URL, f"longer than {MAX_URL_CHARS} characters")
    try:
        url = ada_url.URL(href, base) if base else ada_url.URL(href)
    except ValueError:
        return Refused(text, BAD_URL, "not a URL by the URL Standard")
    # The parsed URL's serialisation, read once (each getter is a call into the C library): an
    # http(s) href is scheme://[userinfo@]host[:port]/path[?query][#fragment], its delimiters
    # escaped everywhere else, so the parts split off it as the getters would give them.
    whole = _HREF.match(url.href)
    if whole is None:
        scheme = url.protocol[:-1]
        if scheme not in _DEFAULT_PORT:
            return Refused(text, NOT_HTTP, f"{scheme}: is not fetched")
        return Refused(text, BAD_URL, "no host")
    scheme, host, port, path, query = whole.groups()
    if not host:
        return Refused(text, BAD_URL, "no host")
    path = _fix("path", path or "/")
    query = _fix("query", query[1:]) if query and len(query) > 1 else ""
    return Link(f"{scheme}://{host}{port or ''}{path}" + (f"?{query}" if query else ""))


_HREF = re.compile(r"(https?)://(?:[^/@]*@)?(\[[^\]]*\]|[^/:?#]*)(:\d+)?([^?#]*)(\?[^#]*)?")


def resolve(base: str | None, href: object) -> Link | Refused:
    """``href`` as a browser resolves it against ``base`` (the WHATWG URL Standard), in the
    canonical spelling without the tracking step: scheme and host lower-cased, IDNA (full-width
    and ideographic dots included), default port dropped, dot segments removed (``%2e`` too),
    backslashes read as slashes, credentials and fragment dropped, unreserved escapes decoded,
    every other escape upper-case, spaces and non-ASCII encoded. Never raises: a link that is
    not an http(s) URL is a ``Refused`` saying why."""
    if not isinstance(href, str):
        return Refused(repr(href)[:300], BAD_URL, "not text")
    return _parse(href, base or None)


def _strip_set(strip: Iterable[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    names = tuple(s.lower() for s in strip)
    return frozenset(n for n in names if not n.endswith("*")), tuple(n[:-1] for n in names if n.endswith("*"))


@functools.lru_cache(maxsize=64)
def _stripper(strip: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    return _strip_set(strip)


def tracking_params(query: str, strip: tuple[str, ...] = TRACKING_PARAMS) -> tuple[str, list[str]]:
    """``query`` (no ``?``) without the parameters ``strip`` names, every other parameter kept as
    written and in its order; and the names removed."""
    exact, prefixes = _stripper(strip)
    kept: list[str] = []
    gone: list[str] = []
    for piece in query.split("&"):
        name = unquote(piece.split("=", 1)[0]).lower()
        if name and (name in exact or (prefixes and name.startswith(prefixes))):
            gone.append(piece.split("=", 1)[0])
        else:
            kept.append(piece)
    return "&".join(kept) if gone else query, gone


@functools.lru_cache(maxsize=8192)
def canonical(url: str, strip: tuple[str, ...] = TRACKING_PARAMS) -> str:
    """The one spelling of an absolute http(s) URL: ``resolve``'s, without the tracking
    parameters ``strip`` names. Idempotent. Raises ``BadUrl`` for what is not an http(s) URL."""
    link = _parse(url, None)
    if isinstance(link, Refused):
        raise BadUrl(f"{link.reason}: {link.detail}: {link.text!r}")
    if "?" not in link or not strip:
        return str(link)
    head, _, query = link.partition("?")
    query, gone = tracking_params(query, strip)
    return f"{head}?{query}" if query else head


def canonical_link(base: str | None, href: object, strip: tuple[str, ...] = TRACKING_PARAMS) -> str | Refused:
    """``href`` resolved against ``base`` and made canonical (``canonical``), or why not."""
    link = resolve(base, href)
    if isinstance(link, Refused):
        return link
    if "?" not in link or not strip:
        return str(link)  # resolve's spelling is canonical's already (canonical is idempotent)
    head, _, query = link.partition("?")
    query, _gone = tracking_params(query, strip)
    return f"{head}?{query}" if query else head


_WRITTEN = re.compile(r"\s*([A-Za-z][A-Za-z0-9+.-]*):[/\\]*(?:[^@/\\?#]*@)?(\[[^\]]*\]|[^:/\\?#]*)(?::(\d*))?")
_DOT_SEGMENTS = frozenset({".", "..", "%2e", "%2e%2e", ".%2e", "%2e."})


def canonical_changes(written: str, strip: tuple[str, ...] = TRACKING_PARAMS) -> tuple[str, list[str]]:
    """For ``heed explain``: the canonical form of a URL as written, and why they differ, one
    phrase per step (empty when the URL is canonical already). Raises ``BadUrl``."""
    final = canonical(written, strip)
    if final == written:
        return final, []
    why: list[str] = []
    got = urlsplit(final)
    head = _WRITTEN.match(written)
    if head:
        scheme, host, port = head.groups()
        if scheme != scheme.lower():
            why.append("scheme lower-cased")
        if "@" in written[: head.end()]:
            why.append("credentials dropped (never sent)")
        if host.lower() != (got.hostname or "") and host.lower().strip("[]") != (got.hostname or ""):
            why.append(f"host {host!r} is {got.hostname!r} (IDNA)")
        elif host != host.lower():
            why.append("host lower-cased")
        if port is not None and got.port is None:
            why.append(f"default port :{port} dropped" if port else "empty port dropped")
    if "\\" in written:
        why.append("backslashes read as slashes")
    raw_path, _, raw_rest = written.strip()[head.end() if head else 0:].partition("?")
    raw_path = raw_path.split("#", 1)[0].replace("\\", "/") or "/"
    if raw_path != got.path:
        if any(seg.lower() in _DOT_SEGMENTS for seg in raw_path.split("/")):
            why.append("dot segments removed")
        else:
            why.append(f"path spelled {got.path!r} (escapes normalised)")
    raw_query, hashed, fragment = raw_rest.partition("#")
    if "#" in raw_path or hashed or "#" in written:
        why.append("fragment dropped (never sent)")
    query, gone = tracking_params(raw_query, strip) if raw_query else ("", [])
    if gone:
        why.append("tracking parameters removed: " + ", ".join(gone))
    if query != got.query and not (gone and not got.query):
        why.append(f"query spelled {got.query!r} (escapes normalised)")
    return final, why or ["spelling normalised by the URL Standard"]


def absolute(base: str, href: str) -> str | None:
    """Resolve a link (a redirect's Location) to its canonical form, the default tracking
    parameters removed; None for anything that is not an http(s) URL."""
    link = canonical_link(base, href)
    return None if isinstance(link, Refused) else link


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

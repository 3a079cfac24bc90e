"""Decides which URLs a sitemap lists (urlset, sitemapindex, plain text; gzip or not), within hard size caps."""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from lxml import etree

from heed_core.extract.isodate import to_utc_iso
from heed_core.extract.safexml import EMPTY, TOO_LARGE, is_blank, local_name, parse_xml

__all__ = ["NOT_A_SITEMAP", "SitemapEntry", "SitemapResult", "gunzip_capped", "parse_sitemap"]

NOT_A_SITEMAP = "not_a_sitemap"
DECOMPRESSION_ERROR = "decompression_error"

_GZIP_MAGIC = b"\x1f\x8b"
# sitemaps.org: at most 50,000 URLs per file; anything beyond is not a sitemap we honour.
MAX_ENTRIES = 50_000
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class SitemapEntry:
    loc: str
    lastmod: str | None  # ISO 8601 UTC or None


@dataclass(frozen=True)
class SitemapResult:
    urls: tuple[SitemapEntry, ...]
    children: tuple[str, ...]  # child sitemaps of a sitemapindex, in document order
    error: str | None


def _failed(code: str) -> SitemapResult:
    return SitemapResult(urls=(), children=(), error=code)


def gunzip_capped(data: bytes, *, limit: int) -> bytes:
    """Inflate gzip ``data`` (several members allowed) without ever holding more than
    ``limit + 1`` output bytes: a gzip bomb stops at the cap instead of at memory's end.
    Raises ``OverflowError`` past the cap and ``ValueError`` for corrupt input."""
    out = bytearray()
    rest = data
    while rest:
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        pending = rest
        while True:
            try:
                chunk = inflater.decompress(pending, _CHUNK)
            except zlib.error as exc:
                raise ValueError("corrupt gzip") from exc
            out += chunk
            if len(out) > limit:
                raise OverflowError("decompressed size over the cap")
            if inflater.eof:
                break
            pending = inflater.unconsumed_tail
            if not pending and not chunk:
                break  # input used up, no progress: the stream was cut short
        if not inflater.eof:
            raise ValueError("truncated gzip")
        rest = inflater.unused_data.lstrip(b"\x00")
        if rest and not rest.startswith(_GZIP_MAGIC):
            break  # trailing garbage after the last member: keep what we have
    return bytes(out)


def _absolute_http(raw: str | None, base: str) -> str | None:
    if not raw or not raw.strip():
        return None
    absolute = urljoin(base, raw.strip())
    parts = urlsplit(absolute)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return absolute


def _child_text(el: etree._Element, name: str) -> str | None:
    for child in el:
        if local_name(child) == name:
            return "".join(child.itertext()).strip() or None
    return None


def _plain_text(body: bytes, url: str, max_entries: int) -> SitemapResult:
    text = body.decode("utf-8", errors="replace").lstrip("\ufeff")
    urls: list[SitemapEntry] = []
    for line in text.splitlines():
        line = line.strip()
        # sitemaps.org text format: one full URL per line, nothing else.
        if not line.lower().startswith(("http://", "https://")):
            continue
        loc = _absolute_http(line, url)
        if loc:
            urls.append(SitemapEntry(loc=loc, lastmod=None))
            if len(urls) >= max_entries:
                break
    if not urls:
        return _failed(NOT_A_SITEMAP)
    return SitemapResult(urls=tuple(urls), children=(), error=None)


def parse_sitemap(
    body: bytes,
    *,
    url: str,
    max_bytes: int = 10 * 2**20,
    max_decompressed: int = 50 * 2**20,
    max_entries: int = MAX_ENTRIES,
) -> SitemapResult:
    """URLs (with lastmod) of a ``urlset``, or child sitemaps of a ``sitemapindex``.

    Gzip is recognised by its magic bytes, not by the URL or headers, and inflated
    under ``max_decompressed`` (a bomb yields ``too_large``). Namespaced or not;
    plain-text sitemaps (one URL per line) too. Never raises for bad input: errors
    are ``too_large``, ``empty``, ``decompression_error``, ``malformed_xml``,
    ``bad_encoding``, ``entity_expansion``, ``not_a_sitemap``."""
    if len(body) > max_bytes:
        return _failed(TOO_LARGE)
    if body.startswith(_GZIP_MAGIC):
        try:
            body = gunzip_capped(body, limit=max_decompressed)
        except OverflowError:
            return _failed(TOO_LARGE)
        except ValueError:
            return _failed(DECOMPRESSION_ERROR)
    if is_blank(body):
        return _failed(EMPTY)
    head = body[:512].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith(b"<"):
        return _plain_text(body, url, max_entries)
    doc = parse_xml(body, max_bytes=max(max_bytes, max_decompressed))
    if doc.root is None:
        return _failed(doc.error or EMPTY)
    kind = local_name(doc.root)
    if kind not in ("urlset", "sitemapindex"):
        return _failed(NOT_A_SITEMAP)
    entry_tag = "url" if kind == "urlset" else "sitemap"
    urls: list[SitemapEntry] = []
    children: list[str] = []
    seen: set[str] = set()
    for el in doc.root:
        if local_name(el) != entry_tag:
            continue
        loc = _absolute_http(_child_text(el, "loc"), url)
        if loc is None or loc in seen:
            continue
        seen.add(loc)
        if kind == "urlset":
            urls.append(SitemapEntry(loc=loc, lastmod=to_utc_iso(_child_text(el, "lastmod"))))
        else:
            children.append(loc)
        if len(seen) >= max_entries:
            break
    return SitemapResult(urls=tuple(urls), children=tuple(children), error=None)

"""Decides which URLs a sitemap lists (urlset, sitemapindex, RSS/Atom, plain text; gzip or not), within size caps."""
from __future__ import annotations

import zlib
from dataclasses import dataclass

from lxml import etree

from heed_core.extract.isodate import to_utc_iso
from heed_core.extract.safexml import EMPTY, TOO_LARGE, is_blank, local_name
from heed_core.extract.xmlrecover import parse_xml_recovering, unicode_codec
from heed_core.urls import NOT_HTTP as URL_NOT_HTTP
from heed_core.urls import Refused, resolve

__all__ = ["INVALID_URL", "NOT_A_SITEMAP", "NOT_HTTP", "SitemapEntry", "SitemapResult", "gunzip_capped",
           "parse_sitemap"]

NOT_A_SITEMAP = "not_a_sitemap"
DECOMPRESSION_ERROR = "decompression_error"
INVALID_URL = "invalid_url"
NOT_HTTP = "not_http"
MAX_SKIPPED = 100

_GZIP_MAGIC = b"\x1f\x8b"
# sitemaps.org: at most 50,000 URLs per file; anything beyond is not a sitemap we honour.
MAX_ENTRIES = 50_000
_CHUNK = 64 * 1024
_ROOTS = frozenset({"urlset", "sitemapindex", "rss", "feed", "RDF"})
# What a cut sitemap keeps: the entries whose end tag arrived.
_ENTRIES = frozenset({"url", "sitemap", "item", "entry"})


@dataclass(frozen=True)
class SitemapEntry:
    loc: str
    lastmod: str | None  # ISO 8601 UTC or None


@dataclass(frozen=True)
class SitemapResult:
    urls: tuple[SitemapEntry, ...]
    children: tuple[str, ...]  # child sitemaps of a sitemapindex, in document order
    error: str | None
    # Entries passed over, as (the loc as written, reason): ``invalid_url`` (urllib cannot
    # read it, e.g. "http://[::1"), ``not_http`` (javascript:, ftp:, mailto:), ``no_loc``.
    # At most MAX_SKIPPED are listed; ``skipped_total`` counts them all.
    skipped: tuple[tuple[str, str], ...] = ()
    skipped_total: int = 0
    # What was mended to read it (xmlrecover), e.g. "truncated: kept the entries before the break".
    recovered: tuple[str, ...] = ()
    kind: str | None = None  # urlset | sitemapindex | rss | atom | text

    @property
    def detail(self) -> str | None:
        """``recovered`` and the skip count as one line for the read's record, or None."""
        parts = list(self.recovered)
        if self.skipped_total:
            parts.append(f"skipped: {self.skipped_total} entries")
        return "; ".join(parts) or None


def _failed(code: str, recovered: tuple[str, ...] = ()) -> SitemapResult:
    return SitemapResult(urls=(), children=(), error=code, recovered=recovered)


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


def _absolute_http(raw: str | None, base: str) -> tuple[str | None, str | None]:
    """(absolute http(s) URL, None) or (None, reason). Never raises: a malformed URL
    ("http://[::1", "http://a]b/", a port that is no number) is one skipped entry. The URL is
    resolved as browsers resolve it (heed_core.urls: the URL Standard)."""
    if not raw or not raw.strip():
        return None, "no_loc"
    got = resolve(base, raw)
    if isinstance(got, Refused):
        return None, (NOT_HTTP if got.reason == URL_NOT_HTTP else INVALID_URL)
    return str(got), None


def _child_text(el: etree._Element, name: str) -> str | None:
    for child in el:
        if local_name(child) == name:
            return "".join(str(t) for t in child.itertext()).strip() or None
    return None


class _Collector:
    """Entries in document order, without repeats, up to the cap; skips with reasons."""

    def __init__(self, base: str, max_entries: int) -> None:
        self.base, self.max_entries = base, max_entries
        self.urls: list[SitemapEntry] = []
        self.children: list[str] = []
        self.seen: set[str] = set()
        self.skipped: list[tuple[str, str]] = []
        self.skipped_total = 0

    @property
    def full(self) -> bool:
        return len(self.seen) >= self.max_entries

    def add(self, raw: str | None, lastmod: str | None = None, *, child: bool = False) -> None:
        loc, reason = _absolute_http(raw, self.base)
        if loc is None:
            self.skipped_total += 1
            if len(self.skipped) < MAX_SKIPPED:
                self.skipped.append(((raw or "").strip()[:300], reason or INVALID_URL))
            return
        if loc in self.seen:
            return
        self.seen.add(loc)
        if child:
            self.children.append(loc)
        else:
            self.urls.append(SitemapEntry(loc=loc, lastmod=to_utc_iso(lastmod)))

    def result(self, kind: str, recovered: tuple[str, ...] = ()) -> SitemapResult:
        return SitemapResult(urls=tuple(self.urls), children=tuple(self.children), error=None,
                             skipped=tuple(self.skipped), skipped_total=self.skipped_total,
                             recovered=recovered, kind=kind)


def _text_codec(body: bytes) -> tuple[str, int, tuple[str, ...]]:
    """(codec, BOM length, what to say) for a sitemap's bytes: UTF-8 unless a BOM or the first
    characters say UTF-16/32, which sitemaps.org does not allow but some generators write."""
    sniffed = unicode_codec(body)
    if sniffed is None or sniffed[0] == "utf-8":
        return "utf-8", sniffed[1] if sniffed else 0, ()
    codec, skip = sniffed
    return codec, skip, (f"encoding: {codec}{' (BOM)' if skip else ''}, not the UTF-8 sitemaps.org asks for",)


def _plain_text(text: str, url: str, max_entries: int, said: tuple[str, ...]) -> SitemapResult:
    text = text.lstrip("\ufeff")
    found = _Collector(url, max_entries)
    for line in text.splitlines():
        line = line.strip()
        # sitemaps.org text format: one full URL per line, nothing else.
        if not line.lower().startswith(("http://", "https://")):
            continue
        found.add(line)
        if found.full:
            break
    if not found.urls:
        return _failed(NOT_A_SITEMAP)
    return found.result("text", said)


def _atom_link(entry: etree._Element) -> str | None:
    """An Atom entry's page: its first link with rel="alternate" or no rel (RFC 4287 4.2.7.2)."""
    for child in entry:
        if local_name(child) == "link" and (child.get("rel") or "alternate") == "alternate":
            return child.get("href") or "".join(str(t) for t in child.itertext()).strip() or None
    return None


def _feed_entries(root: etree._Element, found: _Collector) -> str:
    """sitemaps.org: an RSS 2.0 or Atom feed may serve as a sitemap; each item's link is a URL
    and its date the last modification."""
    kind = "atom" if local_name(root) == "feed" else "rss"
    for el in root.iter():
        name = local_name(el)
        if kind == "atom" and name == "entry":
            lastmod = next((_child_text(el, n) for n in ("updated", "modified", "published", "issued")
                            if _child_text(el, n)), None)
            found.add(_atom_link(el), lastmod)
        elif kind == "rss" and name == "item":
            lastmod = _child_text(el, "pubDate") or _child_text(el, "date")
            found.add(_child_text(el, "link"), lastmod)
        if found.full:
            break
    return kind


def parse_sitemap(
    body: bytes,
    *,
    url: str,
    max_bytes: int = 10 * 2**20,
    max_decompressed: int = 50 * 2**20,
    max_entries: int = MAX_ENTRIES,
) -> SitemapResult:
    """URLs (with lastmod) of a ``urlset``, or child sitemaps of a ``sitemapindex``; the item
    links of an RSS or Atom feed served as a sitemap (sitemaps.org allows it).

    Gzip is recognised by its magic bytes, not by the URL or headers, and inflated
    under ``max_decompressed`` (a bomb yields ``too_large``). Namespaced or not;
    plain-text sitemaps (one URL per line) too. What small sites get wrong (blank lines
    before ``<?xml``, a bare ``&`` in a loc, a cut file: the complete entries are kept) is
    mended and said in ``recovered``; an entry whose loc is no usable URL is skipped and
    listed in ``skipped`` with its reason. Never raises for bad input: errors are
    ``too_large``, ``empty``, ``decompression_error``, ``malformed_xml``,
    ``entity_expansion``, ``not_a_sitemap``."""
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
    codec, skip, said = _text_codec(body)
    # A UTF-16/32 sitemap (with a BOM or without) is XML as much as a UTF-8 one: judged on its
    # characters, not on its first byte.
    head = body[skip:skip + 512].decode(codec, errors="replace").lstrip("\ufeff \t\r\n")
    if not head.startswith("<"):
        return _plain_text(body[skip:].decode(codec, errors="replace"), url, max_entries, said)
    doc = parse_xml_recovering(body, max_bytes=max(max_bytes, max_decompressed), roots=_ROOTS, entries=_ENTRIES)
    if doc.root is None:
        return _failed(doc.error or EMPTY, said + doc.recovered)
    kind = local_name(doc.root)
    found = _Collector(url, max_entries)
    recovered = said + doc.recovered
    if kind in ("rss", "feed", "RDF"):
        return found.result(_feed_entries(doc.root, found), recovered)
    if kind not in ("urlset", "sitemapindex"):
        return _failed(NOT_A_SITEMAP)
    entry_tag = "url" if kind == "urlset" else "sitemap"
    for el in doc.root:
        if local_name(el) != entry_tag:
            continue
        loc = _child_text(el, "loc")
        if kind == "urlset":
            found.add(loc, _child_text(el, "lastmod"))
        else:
            found.add(loc, child=True)
        if found.full:
            break
    return found.result(kind, recovered)

"""Decides what an RSS/Atom feed says: its items (title, absolute link, UTC date, plain summary), in feed order."""
from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import Any

import feedparser
from lxml import etree
from lxml import html as lxml_html

from heed_core.extract.isodate import from_struct_time
from heed_core.extract.safexml import (
    EMPTY,
    TOO_LARGE,
    is_blank,
    local_name,
    make_html_parser,
)
from heed_core.extract.xmlrecover import parse_xml_recovering
from heed_core.urls import BAD_URL, Refused, resolve

__all__ = ["NOT_A_FEED", "FeedItem", "FeedResult", "html_to_text", "parse_feed"]

NOT_A_FEED = "not_a_feed"
PARSER_FAILURE = "parser_failure"

_FEED_ROOTS = frozenset({"rss", "feed", "RDF"})
# What a cut feed keeps: the entries whose end tag arrived.
_ENTRIES = frozenset({"item", "entry"})
# An HTML page served where a feed was expected: sniffed on the raw bytes so the
# (often not well-formed) page is not even handed to the XML parser.
_HTML_START = re.compile(rb"^(?:\xef\xbb\xbf)?\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html)\b", re.I | re.S)
_BLOCKS = frozenset(
    "address article aside blockquote br dd div dl dt figcaption figure footer h1 h2 h3 h4 h5 h6 "
    "header hr li main nav ol p pre section table td th tr ul".split()
)
_WS = re.compile(r"\s+")

# feedparser asks ``xml.sax`` for the libxml2 driver first, on every parse. It is not installed
# (nor wanted), so every feed was a failed import: a walk of ``sys.path`` under the import lock,
# some 65 us alone and much more while the turns of a busy process waited for that lock (in a
# profile of ``heed serve`` at 1,000 hosts it was three quarters of feedparser's time). The
# parser it then falls back to, expat, is the one named now: what it parses with is unchanged.
feedparser.api.PREFERRED_XML_PARSERS = []


@dataclass(frozen=True)
class FeedItem:
    """One entry. ``summary`` is the richest text the feed gives for it (full
    ``content:encoded``/``atom:content`` when present, else the description), as
    plain text; ``summary_length`` counts its characters before any trimming."""

    title: str | None
    link: str | None
    published: str | None
    summary: str | None
    summary_length: int
    guid: str | None
    bad_link: str | None = None  # a link that is no URL at all (as written): the item is skipped as bad_url


@dataclass(frozen=True)
class FeedResult:
    items: tuple[FeedItem, ...]
    title: str | None
    error: str | None
    total_items: int
    version: str | None = None  # feedparser's name for the format, e.g. "rss20", "atom10"
    # What was mended to read a feed that is not well-formed XML, e.g. "html_entities: 2
    # (&nbsp;, &eacute;)", "truncated: kept the entries before the break"; () when none was.
    recovered: tuple[str, ...] = ()

    @property
    def detail(self) -> str | None:
        """``recovered`` as one line for the read's record, or None for a clean feed."""
        return "; ".join(self.recovered) or None


def _failed(code: str, recovered: tuple[str, ...] = ()) -> FeedResult:
    return FeedResult(items=(), title=None, error=code, total_items=0, recovered=recovered)


def _collapse(text: str) -> str:
    return _WS.sub(" ", text).strip()


def html_to_text(markup: str) -> str:
    """Visible text of an HTML fragment, whitespace collapsed; scripts and styles dropped."""
    if "<" not in markup and "&" not in markup:
        return _collapse(markup)
    try:
        frag = lxml_html.fragment_fromstring(
            markup.encode("utf-8", errors="replace"), create_parent="div", parser=make_html_parser()
        )
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return _collapse(markup)
    for el in list(frag.iter("script", "style", "template")):
        el.drop_tree()
    for el in frag.iter():
        if isinstance(el.tag, str) and el.tag.lower() in _BLOCKS:
            # Keep words of adjacent paragraphs apart once tags are gone.
            el.tail = " " + (el.tail or "")
            el.text = " " + (el.text or "")
    return _collapse(frag.text_content())


def _plain(detail: Any, fallback: Any = None) -> str:
    """Plain text from a feedparser text construct (``title_detail`` and the like)."""
    if isinstance(detail, dict):
        value = detail.get("value")
        kind = str(detail.get("type") or "")
    else:
        value, kind = fallback, "text/html"
    if not isinstance(value, str):
        return ""
    return _collapse(value) if kind == "text/plain" else html_to_text(value)


def _link(link: Any, base_url: str) -> tuple[str | None, str | None]:
    """(the entry's link as a browser resolves it against the feed's URL, None), or (None, the
    link as written) for one that is no URL; (None, None) for none or another scheme."""
    if not isinstance(link, str) or not link.strip():
        return None, None
    got = resolve(base_url, link)
    if isinstance(got, Refused):
        return None, (got.text if got.reason == BAD_URL else None)
    return str(got), None


def _item(entry: Any, base_url: str, max_summary_chars: int | None) -> FeedItem:
    title = _plain(entry.get("title_detail"), entry.get("title")) or None
    texts = [_plain(entry.get("summary_detail"), entry.get("summary"))]
    texts += [_plain(c) for c in entry.get("content") or ()]
    summary = max(texts, key=len) if texts else ""
    length = len(summary)
    if max_summary_chars is not None and length > max_summary_chars:
        summary = summary[:max_summary_chars].rstrip()
    guid = entry.get("id")
    link, bad = _link(entry.get("link"), base_url)
    return FeedItem(
        title=title,
        link=link,
        bad_link=bad,
        published=from_struct_time(entry.get("published_parsed") or entry.get("updated_parsed")),
        summary=summary or None,
        summary_length=length,
        guid=guid.strip() if isinstance(guid, str) and guid.strip() else None,
    )


def _keep_first_entries(root: etree._Element, limit: int) -> int:
    """Drop the entries past ``limit`` before feedparser sees them (AUBE-01 reads 40; a feed of
    60,000 items must not cost 60,000 sanitised entries). Returns how many the feed held."""
    entries = [(el, parent) for el in root.iter() if local_name(el) in _ENTRIES
               and (parent := el.getparent()) is not None and local_name(parent) in ("channel", "rss", "RDF", "feed")]
    for el, parent in entries[limit:]:
        parent.remove(el)
    return len(entries)


def parse_feed(
    body: bytes,
    *,
    base_url: str,
    content_type: str | None = None,
    max_items: int,
    max_bytes: int = 10 * 2**20,
    max_summary_chars: int | None = None,
) -> FeedResult:
    """Items of an RSS 0.9x/1.0/2.0 or Atom feed, at most ``max_items`` in feed order
    (AUBE-01: 40); ``total_items`` says how many the feed held.

    Never raises for bad input: the result carries a stable ``error`` code
    (``too_large``, ``empty``, ``not_a_feed``, ``malformed_xml``, ``entity_expansion``)
    and no items. The body is size-checked before any parsing; what small sites commonly
    get wrong (HTML entities, a bare ``&``, a wrong declared encoding, junk around the
    root, undeclared prefixes, raw HTML, a cut file) is mended by xmlrecover and said in
    ``recovered``. feedparser sees only the re-serialised, DOCTYPE-free tree as a byte
    stream, never a string it could open."""
    if len(body) > max_bytes:
        return _failed(TOO_LARGE)
    if is_blank(body):
        return _failed(EMPTY)
    if _HTML_START.match(body[:8192]):
        return _failed(NOT_A_FEED)
    doc = parse_xml_recovering(
        body, max_bytes=max_bytes, content_type=content_type, roots=_FEED_ROOTS, entries=_ENTRIES
    )
    if doc.root is None:
        return _failed(doc.error or EMPTY, doc.recovered)
    if local_name(doc.root) not in _FEED_ROOTS:
        # CDF (<CHANNEL>), a sitemap, an XHTML page: not a feed we read (feedparser's CDF
        # support is an old Microsoft format no site of ours serves).
        return _failed(NOT_A_FEED)
    total = _keep_first_entries(doc.root, max(0, max_items))
    data = etree.tostring(doc.root, encoding="utf-8", xml_declaration=True)
    try:
        parsed = feedparser.parse(
            io.BytesIO(data),
            # No content-location: feedparser would join relative links with urllib's rules;
            # they are resolved here as browsers do (heed_core.urls), against the feed's URL.
            response_headers={"content-type": "application/xml; charset=utf-8"},
            resolve_relative_uris=False,
            sanitize_html=True,
        )
    except Exception:  # noqa: BLE001 - third-party parser at the trust boundary: bad input must not crash
        return _failed(PARSER_FAILURE, doc.recovered)
    version = parsed.get("version") or None
    entries = list(parsed.get("entries") or ())
    if version is None and not entries:
        return _failed(NOT_A_FEED)
    feed = parsed.get("feed") or {}
    title = _plain(feed.get("title_detail"), feed.get("title")) or None
    limit = max(0, max_items)
    items = tuple(_item(e, base_url, max_summary_chars) for e in entries[:limit])
    return FeedResult(items=items, title=title, error=None, total_items=max(total, len(entries)), version=version,
                      recovered=doc.recovered)

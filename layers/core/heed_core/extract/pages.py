"""Decides which items a listing page shows (title, link, publication time only) and what a page is titled."""
from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from lxml import html as lxml_html

from heed_core.extract.isodate import to_utc_iso
from heed_core.extract.safexml import parse_html
from heed_core.urls import BAD_URL, Refused, resolve

__all__ = [
    "ListingItem",
    "ListingResult",
    "absolute_http",
    "extract_listing",
    "extract_title",
    "meta_content",
]

MAX_TITLE = 300
_WS = re.compile(r"\s+")
_FEED_TYPES = frozenset({"application/rss+xml", "application/atom+xml"})
_ARTICLE_TYPES = frozenset(
    {
        "article",
        "newsarticle",
        "blogposting",
        "reportagenewsarticle",
        "analysisnewsarticle",
        "opinionnewsarticle",
        "backgroundnewsarticle",
        "reviewnewsarticle",
        "techarticle",
        "report",
        "liveblogposting",
    }
)
# Where schema.org data nests the things a page lists; other keys (author,
# publisher, comment...) are never walked, so no person or body is even looked at.
_CONTAINER_KEYS = ("@graph", "mainEntity", "hasPart", "blogPost", "itemListElement")
_MAX_JSON_DEPTH = 8
_HEADLINE_LINK = (
    "(.//*[self::h1 or self::h2 or self::h3 or self::h4]//a[@href]"
    " | .//a[@href][.//*[self::h1 or self::h2 or self::h3 or self::h4]])[1]"
)
_BOOKMARK_LINK = ".//a[@href][contains(concat(' ', normalize-space(@rel), ' '), ' bookmark ')][1]"


@dataclass(frozen=True)
class ListingItem:
    """SPRING-01: title, link and publication time, and deliberately nothing else:
    there is no field an author, user name or post body could land in."""

    title: str
    link: str
    published: str | None


@dataclass(frozen=True)
class ListingResult:
    items: tuple[ListingItem, ...]
    feed_links: tuple[str, ...]
    error: str | None
    bad_links: tuple[str, ...] = ()  # links that are no URL at all, as written (each a bad_url skip)


def _clean(text: Any, *, unescape: bool = False) -> str:
    """Whitespace collapsed, cut to 300 characters. Only JSON-LD needs ``unescape``:
    the HTML parser has already decoded entities everywhere else."""
    if not isinstance(text, str):
        return ""
    if unescape:
        text = html.unescape(text)
    return _WS.sub(" ", text).strip()[:MAX_TITLE].rstrip()


_C0_OR_SPACE = "".join(map(chr, range(0x21)))


def absolute_http(href: Any, base: str, bad: list[str] | None = None) -> str | None:
    """``href`` resolved against ``base`` as a browser resolves it, if it is an http(s) URL
    (``heed_core.urls.resolve``: the URL Standard, fragment dropped); ``javascript:``,
    ``mailto:``, ``tel:``, ``data:`` and bare fragments give None. A link that is no URL at all
    (``http://[google.com]/``) gives None too, and is added, as written, to ``bad``."""
    if not isinstance(href, str):
        return None
    trimmed = href.strip(_C0_OR_SPACE)
    if not trimmed or trimmed.startswith("#"):
        return None
    got = resolve(base, href)
    if isinstance(got, Refused):
        if got.reason == BAD_URL and bad is not None and len(bad) < 100:
            bad.append(got.text)
        return None
    return str(got)


def meta_content(root: lxml_html.HtmlElement, key: str) -> str | None:
    """First ``<meta property|name=key content>`` value, key matched case-insensitively."""
    for meta in root.iter("meta"):
        name = (meta.get("property") or meta.get("name") or "").strip().lower()
        if name == key:
            value = _clean(meta.get("content"))
            if value:
                return value
    return None


def _page_base(root: lxml_html.HtmlElement, base_url: str) -> str:
    for base in root.iter("base"):
        resolved = absolute_http(base.get("href"), base_url)
        if resolved:
            return resolved
        break
    return base_url


# --- schema.org JSON-LD -------------------------------------------------------


def _types(node: dict[str, Any]) -> set[str]:
    raw = node.get("@type")
    values = raw if isinstance(raw, list) else [raw]
    return {v.rsplit("/", 1)[-1].lower() for v in values if isinstance(v, str)}


def _ref(value: Any) -> Any:
    """A URL from a schema.org reference: a string, or an object's url/@id."""
    if isinstance(value, dict):
        return value.get("url") or value.get("@id")
    return value


def _thing(node: dict[str, Any], base: str, inner: Any = None, bad: list[str] | None = None) -> ListingItem | None:
    inner = inner if isinstance(inner, dict) else {}
    title = _clean(
        node.get("headline") or node.get("name") or inner.get("headline") or inner.get("name"),
        unescape=True,
    )
    link = None
    candidates = (
        node.get("url"),
        inner.get("url"),
        node.get("mainEntityOfPage"),
        inner.get("mainEntityOfPage"),
        inner.get("@id"),
        node.get("@id"),
    )
    for candidate in candidates:
        link = absolute_http(_ref(candidate), base, bad)
        if link:
            break
    if not title or not link:
        return None
    published = to_utc_iso(node.get("datePublished") or inner.get("datePublished"))
    return ListingItem(title=title, link=link, published=published)


def _walk_jsonld(node: Any, base: str, bad: list[str], depth: int = 0) -> Iterator[ListingItem]:
    if depth > _MAX_JSON_DEPTH:
        return
    if isinstance(node, list):
        for child in node:
            yield from _walk_jsonld(child, base, bad, depth + 1)
        return
    if not isinstance(node, dict):
        return
    types = _types(node)
    if "listitem" in types:
        item = node.get("item")
        found = _thing(node, base, item, bad)
        if found is None and isinstance(item, str):
            found = _thing({**node, "url": item}, base, None, bad)
        if found:
            yield found
        if isinstance(item, dict):
            yield from _walk_jsonld(item, base, bad, depth + 1)
    elif types & _ARTICLE_TYPES:
        found = _thing(node, base, None, bad)
        if found:
            yield found
    for key in _CONTAINER_KEYS:
        if key in node:
            yield from _walk_jsonld(node[key], base, bad, depth + 1)


def _from_jsonld(root: lxml_html.HtmlElement, base: str, bad: list[str]) -> Iterator[ListingItem]:
    for script in root.iter("script"):
        if (script.get("type") or "").strip().lower() != "application/ld+json":
            continue
        text = (script.text or "").strip()
        if text.startswith("<!--"):
            text = text[4:].removesuffix("-->")
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            continue
        yield from _walk_jsonld(data, base, bad)


# --- <article> elements and OpenGraph ------------------------------------------


def _from_articles(root: lxml_html.HtmlElement, base: str, bad: list[str]) -> Iterator[ListingItem]:
    for art in root.iter("article"):
        # A nested <article> is a comment or a card inside a post: user content
        # (SPRING-01) or a duplicate; only the outermost ones are listing items.
        if any(a.tag == "article" for a in art.iterancestors()):
            continue
        found = art.xpath(_HEADLINE_LINK) or art.xpath(_BOOKMARK_LINK)
        if not found:
            continue
        anchor = found[0]
        link = absolute_http(anchor.get("href"), base, bad)
        title = _clean(anchor.text_content()) or _clean(anchor.get("title"))
        if not link or not title:
            continue
        times = art.xpath(".//time[@datetime]")
        published = to_utc_iso(times[0].get("datetime")) if times else None
        yield ListingItem(title=title, link=link, published=published)


def _from_opengraph(root: lxml_html.HtmlElement, base_url: str, bad: list[str]) -> Iterator[ListingItem]:
    published = meta_content(root, "article:published_time")
    if (meta_content(root, "og:type") or "").lower() != "article" and not published:
        return
    title = meta_content(root, "og:title")
    link = absolute_http(meta_content(root, "og:url"), base_url, bad) or absolute_http(base_url, base_url)
    if title and link:
        yield ListingItem(title=title, link=link, published=to_utc_iso(published))


def _feed_links(root: lxml_html.HtmlElement, base: str, bad: list[str]) -> tuple[str, ...]:
    links: list[str] = []
    for el in root.iter("link"):
        rel = (el.get("rel") or "").lower().split()
        kind = (el.get("type") or "").split(";")[0].strip().lower()
        if "alternate" in rel and kind in _FEED_TYPES:
            href = absolute_http(el.get("href"), base, bad)
            if href and href not in links:
                links.append(href)
    return tuple(links)


def extract_listing(
    body: bytes,
    *,
    base_url: str,
    content_type: str | None = None,
    max_bytes: int = 5 * 2**20,
    max_items: int = 500,
) -> ListingResult:
    """Items a listing page shows, from (in order) schema.org JSON-LD, ``<article>``
    elements with a headline link, and OpenGraph for a single-article page; deduped
    by link, first source wins. A page built by JavaScript yields no items, which
    tells the caller to fall back to the sitemap (SPRING-03)."""
    doc = parse_html(body, max_bytes=max_bytes, content_type=content_type)
    if doc.root is None:
        return ListingResult(items=(), feed_links=(), error=doc.error)
    root = doc.root
    base = _page_base(root, base_url)
    items: list[ListingItem] = []
    seen: set[str] = set()
    bad: list[str] = []
    sources = (_from_jsonld(root, base, bad), _from_articles(root, base, bad), _from_opengraph(root, base_url, bad))
    for source in sources:
        for item in source:
            if item.link not in seen and len(items) < max_items:
                seen.add(item.link)
                items.append(item)
    feed_links = _feed_links(root, base, bad)
    return ListingResult(items=tuple(items), feed_links=feed_links, error=None, bad_links=tuple(dict.fromkeys(bad)))


def extract_title(body: bytes, *, max_bytes: int = 5 * 2**20, content_type: str | None = None) -> str | None:
    """A page's title: ``og:title``, else ``<title>``, else the first ``<h1>``;
    whitespace collapsed, at most 300 characters; None if there is none."""
    doc = parse_html(body, max_bytes=max_bytes, content_type=content_type)
    if doc.root is None:
        return None
    root = doc.root
    title = meta_content(root, "og:title")
    if title:
        return title
    for tag in ("title", "h1"):
        for el in root.iter(tag):
            text = _clean(el.text_content())
            if text:
                return text
            break
    return None

"""Decides whether a page is behind a paywall, even when its HTML carries the full text.

AUBE-06 / COMMON-07: a paywalled article is never extracted. Publishers often ship the
whole text to every client and hide it with script, flagging it for search engines with
schema.org ``isAccessibleForFree: false``; that flag, or a common paywall marker, is enough.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import lxml.html

from .signals import DEFAULT_MAX_BYTES, Page, meta_values, parse_html

__all__ = ["PaywallDecision", "is_paywalled"]

_MAX_DEPTH = 64

# Class tokens and ids used by paywall overlays (Piano/Tinypass ``tp-*``, generic names).
# Matched as whole tokens so e.g. ``no-paywall-ad`` does not count.
_CLASS_MARKERS = frozenset(
    {
        "paywall",
        "paywalled",
        "paywall-overlay",
        "paywall-container",
        "article-paywall",
        "piano-paywall",
        "tp-modal",
        "tp-backdrop",
        "regwall",
        "subscription-wall",
        "subscriber-only",
        "subscribers-only",
        "premium-paywall",
    }
)
_DATA_ATTRS = ("data-paywall", "data-paywalled", "data-piano-paywall")
_LOCKED_TIERS = frozenset({"locked", "metered", "premium", "subscriber", "subscribers"})
_FALSE_WORDS = frozenset({"false", "no", "0", "http://schema.org/false", "https://schema.org/false", "schema:false"})


@dataclass(frozen=True)
class PaywallDecision:
    """``marker`` names the first evidence found (e.g. ``json-ld:isAccessibleForFree``,
    ``class:tp-modal``). ``error`` is set when the page could not be examined: an
    oversized page counts as paywalled (unchecked text is never extracted), an empty or
    unparseable one does not (it has no text to extract)."""

    paywalled: bool
    marker: str | None = None
    error: str | None = None


def _is_false(value: object) -> bool:
    if isinstance(value, bool):
        return value is False
    if isinstance(value, str):
        return value.strip().lower() in _FALSE_WORDS
    if isinstance(value, list):
        return any(_is_false(v) for v in value)
    if isinstance(value, dict):
        return _is_false(value.get("@value")) or _is_false(value.get("@id"))
    return False


def _jsonld_flag(node: object, depth: int = 0) -> bool:
    """True when any node (the article itself, an item of ``@graph`` or a ``hasPart``)
    says it is not accessible for free."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(node, list):
        return any(_jsonld_flag(n, depth + 1) for n in node)
    if isinstance(node, dict):
        for key, value in node.items():
            if key.rsplit("/", 1)[-1].rsplit(":", 1)[-1] == "isAccessibleForFree" and _is_false(value):
                return True
            if isinstance(value, (dict, list)) and _jsonld_flag(value, depth + 1):
                return True
    return False


def _jsonld_blocks(root: lxml.html.HtmlElement) -> list[object]:
    out: list[object] = []
    for script in root.iter("script"):
        kind = (script.get("type") or "").split(";", 1)[0].strip().lower()
        if kind != "application/ld+json":
            continue
        try:
            out.append(json.loads(script.text or "", strict=False))
        except (ValueError, RecursionError):
            continue  # a broken block proves nothing either way; the others still count
    return out


def _microdata_flag(root: lxml.html.HtmlElement) -> bool:
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        props = (el.get("itemprop") or el.get("property") or "").split()
        if not any(p.rsplit("/", 1)[-1].rsplit(":", 1)[-1] == "isAccessibleForFree" for p in props):
            continue
        value = el.get("content") or el.get("href") or el.get("value") or el.text_content()
        if _is_false(value):
            return True
    return False


def _markup_marker(root: lxml.html.HtmlElement) -> str | None:
    for tier in meta_values(root, "article:content_tier"):
        if tier.strip().lower() in _LOCKED_TIERS:
            return f"meta:article:content_tier={tier.strip().lower()}"
    for el in root.iter("meta"):
        # Open Graph tags use property= rather than name=.
        if (el.get("property") or "").strip().lower() == "article:content_tier":
            tier = (el.get("content") or "").strip().lower()
            if tier in _LOCKED_TIERS:
                return f"meta:article:content_tier={tier}"
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        for token in (el.get("class") or "").lower().split():
            if token in _CLASS_MARKERS:
                return f"class:{token}"
        ident = (el.get("id") or "").strip().lower()
        if ident in _CLASS_MARKERS:
            return f"id:{ident}"
        for attr in _DATA_ATTRS:
            value = el.get(attr)
            if value is not None and value.strip().lower() not in ("false", "0", "no"):
                return attr
    return None


def is_paywalled(body: bytes, *, max_bytes: int = DEFAULT_MAX_BYTES, page: Page | None = None) -> PaywallDecision:
    """``page``: the body's parse, shared with the turn's other readers (only read here)."""
    if len(body) > max_bytes:
        return PaywallDecision(True, None, "too_large")
    root = page.root() if page is not None else parse_html(body, max_bytes=max_bytes)
    if root is None:
        # Nothing to extract from an empty page, so nothing can leak either way.
        return PaywallDecision(False, None, "unparseable" if body.strip() else "empty")
    if any(_jsonld_flag(block) for block in _jsonld_blocks(root)):
        return PaywallDecision(True, "json-ld:isAccessibleForFree")
    if _microdata_flag(root):
        return PaywallDecision(True, "microdata:isAccessibleForFree")
    marker = _markup_marker(root)
    return PaywallDecision(marker is not None, marker)

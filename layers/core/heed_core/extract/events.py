"""Decides which events an agenda page declares in its structured data (JSON-LD, microdata, RDFa).

WANNADO-10: name, date and time, location, price, description, image and link come from
the page's schema.org ``Event`` data first. WANNADO-01: every event links back, to its
own page when it names one, else to the agenda page it was found on.
"""
from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Callable
from urllib.parse import urljoin, urlsplit

import lxml.html

from .signals import DEFAULT_MAX_BYTES, parse_html

__all__ = ["EVENT_TYPES", "Event", "EventsResult", "absolute_url", "clean_text", "event_from_node", "extract_events"]

# schema.org Event and every subtype (https://schema.org/Event, "More specific Types").
EVENT_TYPES = frozenset(
    {
        "Event", "BusinessEvent", "ChildrensEvent", "ComedyEvent", "CourseInstance", "DanceEvent",
        "DeliveryEvent", "EducationEvent", "EventSeries", "ExhibitionEvent", "Festival", "FoodEvent",
        "Hackathon", "LiteraryEvent", "MusicEvent", "PublicationEvent", "BroadcastEvent",
        "OnDemandEvent", "SaleEvent", "ScreeningEvent", "SocialEvent", "SportsEvent", "TheaterEvent",
        "VisualArtsEvent",
    }
)
MAX_EVENTS = 500
DESCRIPTION_CHARS = 500
_MAX_DEPTH = 64
_TAG = re.compile(r"<[^>]{0,2000}>")
_URL_ATTR = {"a": "href", "area": "href", "link": "href", "img": "src", "audio": "src", "video": "src",
             "source": "src", "embed": "src", "iframe": "src", "track": "src", "object": "data"}
# Properties whose value is a link. For any other property on an <a>, the visible text is
# what the author meant (``<a itemprop="name" href=...>Title</a>`` is common in the wild).
_URL_PROPS = frozenset({"url", "image", "sameAs", "logo", "contentUrl", "thumbnailUrl", "availability",
                        "eventStatus", "eventAttendanceMode", "item"})


@dataclass(frozen=True)
class Event:
    name: str
    start: str | None
    end: str | None
    location: str | None
    price: str | None
    description: str | None
    image: str | None
    url: str
    source_format: str  # json-ld | microdata | rdfa | llm


@dataclass(frozen=True)
class EventsResult:
    """``error`` is ``too_large``/``empty``/``unparseable`` when the page could not be read;
    ``skipped_blocks`` counts malformed JSON-LD blocks that were passed over."""

    events: tuple[Event, ...]
    error: str | None = None
    skipped_blocks: int = 0


def clean_text(value: str | None, limit: int | None = None) -> str | None:
    """Plain text: tags dropped, entities decoded, whitespace collapsed, cut at a word."""
    if value is None:
        return None
    text = " ".join(_TAG.sub(" ", html.unescape(value)).split())
    if limit is not None and len(text) > limit:
        cut = text[: limit - 1]
        text = (cut.rsplit(" ", 1)[0] if " " in cut[limit // 2:] else cut).rstrip(" ,;:") + "…"
    return text or None


def absolute_url(value: str | None, base: str) -> str | None:
    """``value`` resolved against ``base``; only http(s) URLs survive (no javascript:, data:)."""
    if not value or not value.strip():
        return None
    try:
        url = urljoin(base, value.strip())
        scheme = urlsplit(url).scheme
    except ValueError:
        return None
    return url if scheme in ("http", "https") else None


def _local(name: str) -> str:
    return re.split(r"[/#:]", name.strip())[-1]


def _types(node: dict[str, Any]) -> set[str]:
    raw = node.get("@type", [])
    raw = raw if isinstance(raw, list) else [raw]
    return {_local(t) for t in raw if isinstance(t, str)}


def _first(value: Any) -> Any:
    while isinstance(value, list):
        value = next((v for v in value if v not in (None, "", [], {})), None)
    return value


def _deref(value: Any, ids: dict[str, dict[str, Any]]) -> Any:
    value = _first(value)
    if isinstance(value, dict) and isinstance(value.get("@id"), str) and set(value) <= {"@id", "@type"}:
        return ids.get(value["@id"], value)
    return value


def _text(value: Any) -> str | None:
    value = _first(value)
    if isinstance(value, dict):
        value = value.get("@value", value.get("name"))
        value = _first(value)
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        return None
    return clean_text(str(value))


def _location(value: Any, ids: dict[str, dict[str, Any]]) -> str | None:
    value = _deref(value, ids)
    if not isinstance(value, dict):
        return _text(value)
    parts = [_text(value.get("name"))]
    address = _deref(value.get("address"), ids)
    if isinstance(address, dict):
        locality = " ".join(p for p in (_text(address.get("postalCode")), _text(address.get("addressLocality"))) if p)
        country = _deref(address.get("addressCountry"), ids)
        parts += [_text(address.get("streetAddress")), locality, _text(country)]
    else:
        parts.append(_text(address))
    if not any(parts):
        parts.append(_text(value.get("url")))
    seen: list[str] = []
    for p in parts:
        if p and p not in seen:
            seen.append(p)
    return clean_text(", ".join(seen), 300) if seen else None


def _decimal(raw: str) -> Decimal | None:
    s = re.sub(r"[^\d,.\-]", "", raw)
    if "," in s and "." in s:
        s = s.replace(".", "").replace(",", ".") if s.rfind(",") > s.rfind(".") else s.replace(",", "")
    elif "," in s:
        s = s.replace(",", ".") if re.fullmatch(r"-?\d+,\d{1,2}", s) else s.replace(",", "")
    elif s.count(".") > 1:
        s = s.replace(".", "")
    try:
        return Decimal(s) if s not in ("", "-") else None
    except InvalidOperation:
        return None


def _price(node: dict[str, Any], ids: dict[str, dict[str, Any]]) -> str | None:
    offers = node.get("offers")
    offers = offers if isinstance(offers, list) else [offers]
    amounts: list[tuple[Decimal, str]] = []
    verbatim: str | None = None
    for offer in offers[:50]:
        offer = _deref(offer, ids)
        if not isinstance(offer, dict):
            continue
        spec = _deref(offer.get("priceSpecification"), ids)
        sources = [offer] + ([spec] if isinstance(spec, dict) else [])
        for src in sources:
            currency = (_text(src.get("priceCurrency")) or _text(offer.get("priceCurrency")) or "").upper()
            for key in ("price", "lowPrice", "highPrice"):
                raw = _text(src.get(key))
                if raw is None:
                    continue
                amount = _decimal(raw)
                if amount is None:
                    verbatim = verbatim or clean_text(raw, 60)  # e.g. "gratis", "op aanvraag"
                else:
                    amounts.append((amount, currency))
    if amounts:
        if all(a == 0 for a, _ in amounts):
            return "free"
        low, high = min(amounts), max(amounts)
        cur = f"{low[1]} " if low[1] else ""
        if low[0] == high[0] or low[1] != high[1]:
            return f"{cur}{low[0]:.2f}"
        return f"{cur}{low[0]:.2f} - {high[0]:.2f}"
    if verbatim:
        return verbatim
    free = _text(node.get("isAccessibleForFree"))
    return "free" if free and free.lower() in ("true", "yes", "1") else None


def _image(value: Any, base: str, ids: dict[str, dict[str, Any]]) -> str | None:
    value = _deref(value, ids)
    if isinstance(value, dict):
        value = _first(value.get("url") or value.get("contentUrl"))
    return absolute_url(value, base) if isinstance(value, str) else None


def event_from_node(
    node: dict[str, Any], *, page_url: str, base: str | None = None, source_format: str,
    ids: dict[str, dict[str, Any]] | None = None,
) -> Event | None:
    """An ``Event`` from one schema.org node (JSON-LD shape; microdata and RDFa items are
    brought into that shape first), or None when it has no name."""
    ids = ids or {}
    base = base or page_url
    name = clean_text(_text(node.get("name")), 300)
    if not name:
        return None
    own = _first(node.get("url"))
    url = absolute_url(own, base) if isinstance(own, str) else None
    return Event(
        name=name,
        start=_text(node.get("startDate")),
        end=_text(node.get("endDate")),
        location=_location(node.get("location"), ids),
        price=_price(node, ids),
        description=clean_text(_text(node.get("description")), DESCRIPTION_CHARS),
        image=_image(node.get("image"), base, ids),
        url=url or page_url,
        source_format=source_format,
    )


def _walk(node: Any, visit: Callable[[dict[str, Any]], None], depth: int = 0) -> None:
    if depth > _MAX_DEPTH:
        return
    if isinstance(node, list):
        for item in node:
            _walk(item, visit, depth + 1)
    elif isinstance(node, dict):
        visit(node)
        for value in node.values():
            if isinstance(value, (dict, list)):
                _walk(value, visit, depth + 1)


def _jsonld(root: lxml.html.HtmlElement) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]], int]:
    blocks: list[Any] = []
    skipped = 0
    for script in root.iter("script"):
        if (script.get("type") or "").split(";", 1)[0].strip().lower() != "application/ld+json":
            continue
        try:
            blocks.append(json.loads((script.text or "").strip(), strict=False))
        except (ValueError, RecursionError):
            skipped += 1  # one broken block must not hide the page's other blocks
    ids: dict[str, dict[str, Any]] = {}
    found: list[dict[str, Any]] = []

    def visit(node: dict[str, Any]) -> None:
        if isinstance(node.get("@id"), str) and set(node) - {"@id", "@type"}:
            ids.setdefault(node["@id"], node)
        if _types(node) & EVENT_TYPES:
            found.append(node)

    for block in blocks:
        _walk(block, visit)
    return found, ids, skipped


def _literal(el: lxml.html.HtmlElement, fmt: str, names: list[str]) -> str:
    if el.get("content") is not None:
        return el.get("content") or ""
    tag = el.tag.lower() if isinstance(el.tag, str) else ""
    if tag == "time" and el.get("datetime"):
        return el.get("datetime") or ""
    if tag in ("data", "meter") and el.get("value") is not None:
        return el.get("value") or ""
    text = " ".join(el.text_content().split())
    attrs = ("resource", "href", "src") if fmt == "rdfa" else (_URL_ATTR.get(tag, ""),)
    link = next((el.get(a) for a in attrs if a and el.get(a)), None)
    if link and (tag not in ("a", "area") or not text or any(_local(n) in _URL_PROPS for n in names)):
        return link
    return text


def _scoped_items(root: lxml.html.HtmlElement, fmt: str) -> list[dict[str, Any]]:
    """Event items of microdata (``itemscope``/``itemtype``/``itemprop``) or RDFa
    (``typeof``/``property``), as JSON-LD-shaped dicts whose values are lists."""
    scope_attr, type_attr, prop_attr = ("itemscope", "itemtype", "itemprop") if fmt == "microdata" else ("typeof", "typeof", "property")

    def is_scope(el: Any) -> bool:
        return el.get(scope_attr) is not None

    def item(el: Any, depth: int) -> dict[str, Any]:
        node: dict[str, Any] = {"@type": (el.get(type_attr) or "").split()}

        def walk(parent: Any) -> None:
            for child in parent.iterchildren():
                if not isinstance(child.tag, str):
                    continue
                names = (child.get(prop_attr) or "").split()
                nested = is_scope(child)
                if names:
                    value = item(child, depth + 1) if nested and depth < _MAX_DEPTH else _literal(child, fmt, names)
                    for n in names:
                        node.setdefault(_local(n), []).append(value)
                if not nested:
                    walk(child)

        walk(el)
        return node

    return [item(el, 0) for el in root.iter() if isinstance(el.tag, str) and is_scope(el)
            and {_local(t) for t in (el.get(type_attr) or "").split()} & EVENT_TYPES]


def extract_events(body: bytes, *, base_url: str, max_bytes: int = DEFAULT_MAX_BYTES) -> EventsResult:
    if len(body) > max_bytes:
        return EventsResult((), "too_large")
    root = parse_html(body, max_bytes=max_bytes)
    if root is None:
        return EventsResult((), "unparseable" if body.strip() else "empty")
    base = base_url
    base_el = next(iter(root.iter("base")), None)
    if base_el is not None:
        base = absolute_url(base_el.get("href"), base_url) or base_url
    nodes, ids, skipped = _jsonld(root)
    candidates: list[tuple[dict[str, Any], str]] = [(n, "json-ld") for n in nodes]
    candidates += [(n, "microdata") for n in _scoped_items(root, "microdata")]
    candidates += [(n, "rdfa") for n in _scoped_items(root, "rdfa")]
    events: list[Event] = []
    seen: set[tuple[str, str | None]] = set()
    for node, fmt in candidates:
        event = event_from_node(node, page_url=base_url, base=base, source_format=fmt, ids=ids)
        # The same event is often declared twice (JSON-LD and microdata): keep the first.
        if event is None or (event.name, event.start) in seen:
            continue
        seen.add((event.name, event.start))
        events.append(event)
        if len(events) >= MAX_EVENTS:
            break
    return EventsResult(tuple(events), None, skipped)

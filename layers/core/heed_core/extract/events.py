"""Decides which events an agenda page declares in its structured data (JSON-LD, microdata, RDFa).

WANNADO-10: name, date and time, location, price, description, image and link come from
the page's schema.org ``Event`` data first. WANNADO-01: every event links back, to its
own page when it names one, else to the agenda page it was found on.

Here: the blocks and items found on the page and the event made of each; how each field is read
from schema.org data (whatever its syntax) is ``schemaorg``'s.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import lxml.html

from .eventtime import DEFAULT_TIMEZONE, normalise
from .schemaorg import (
    _REF_KEYS,
    EVENT_TYPES,
    _availability,
    _dates,
    _first,
    _id,
    _image,
    _is_event,
    _local,
    _locations,
    _price,
    _status,
    _text,
    _types,
    absolute_url,
    clean_text,
)
from .signals import DEFAULT_MAX_BYTES, parse_html

__all__ = ["EVENT_TYPES", "Event", "EventsResult", "absolute_url", "clean_text", "event_from_node", "extract_events"]

MAX_EVENTS = 500
_QUOTES = " \"'“”‘’«»„"
DESCRIPTION_CHARS = 500
_MAX_DEPTH = 64
# Where an RDFa property's link is written, in RDFa 1.1's order.
_RDFA_LINKS = ("resource", "href", "src")
_URL_ATTR = {"a": "href", "area": "href", "link": "href", "img": "src", "audio": "src", "video": "src",
             "source": "src", "embed": "src", "iframe": "src", "track": "src", "object": "data"}
# Properties whose value is a link. For any other property on an <a>, the visible text is
# what the author meant (``<a itemprop="name" href=...>Title</a>`` is common in the wild).
_URL_PROPS = frozenset({"url", "image", "sameAs", "logo", "contentUrl", "thumbnailUrl", "availability",
                        "eventStatus", "eventAttendanceMode", "item", "additionalType"})


@dataclass(frozen=True)
class Event:
    """One event. ``start``/``end``/``previous_start`` are ISO 8601 (a date alone stays a date;
    a local time gets the venue zone's offset, see eventtime). ``location`` is the physical
    place when the event names one, ``online`` the URL of a VirtualLocation/livestream.
    ``status`` is the schema.org EventStatusType (``EventCancelled``, ``EventPostponed``,
    ``EventRescheduled``, ``EventMovedOnline``, ``EventScheduled``) and ``availability`` the
    offers' ItemAvailability (``SoldOut``, ``InStock``, ...), as their local names."""

    name: str
    start: str | None
    end: str | None
    location: str | None
    price: str | None
    description: str | None
    image: str | None
    url: str
    source_format: str  # json-ld | microdata | rdfa | llm
    status: str | None = None
    availability: str | None = None
    previous_start: str | None = None
    online: str | None = None


@dataclass(frozen=True)
class EventsResult:
    """``error`` is ``too_large``/``empty``/``unparseable`` when the page could not be read;
    ``skipped_blocks`` counts malformed JSON-LD blocks that were passed over."""

    events: tuple[Event, ...]
    error: str | None = None
    skipped_blocks: int = 0


def event_from_node(
    node: dict[str, Any], *, page_url: str, base: str | None = None, source_format: str,
    ids: dict[str, dict[str, Any]] | None = None, timezone: str = DEFAULT_TIMEZONE,
) -> Event | None:
    """An ``Event`` from one schema.org node (JSON-LD shape; microdata and RDFa items are
    brought into that shape first), or None when it has no name. A local time without an
    offset is read in ``timezone``, the venue's zone."""
    ids = ids or {}
    base = base or page_url
    name = clean_text(_text(node.get("name")), 300)
    if not name:
        return None
    own = _first(node.get("url"))
    url = absolute_url(own, base) if isinstance(own, str) else None
    start, end = _dates(node, ids, timezone)
    location, online = _locations(node.get("location"), base, ids)
    return Event(
        name=name,
        start=start,
        end=end,
        location=location,
        price=_price(node, ids),
        description=clean_text(_text(node.get("description")), DESCRIPTION_CHARS),
        image=_image(node.get("image"), base, ids),
        url=url or page_url,
        source_format=source_format,
        status=_status(node),
        availability=_availability(node, ids),
        previous_start=normalise(_text(node.get("previousStartDate")), zone=timezone),
        online=online,
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
        if _id(node) and set(node) - _REF_KEYS:
            ids.setdefault(_id(node) or "", node)
        if _is_event(_types(node)):
            found.append(node)

    for block in blocks:
        _walk(block, visit)
    return found, ids, skipped


def _link_of(el: lxml.html.HtmlElement, attrs: tuple[str, ...]) -> str | None:
    """The first of ``attrs`` the element gives a value."""
    return next((v for a in attrs if a and (v := el.get(a))), None)


def _literal(el: lxml.html.HtmlElement, fmt: str, names: list[str]) -> str:
    if el.get("content") is not None:
        return el.get("content") or ""
    tag = el.tag.lower() if isinstance(el.tag, str) else ""
    if tag == "time" and el.get("datetime"):
        return el.get("datetime") or ""
    if tag in ("data", "meter") and el.get("value") is not None:
        return el.get("value") or ""
    text = " ".join(el.text_content().split())
    link = _link_of(el, _RDFA_LINKS if fmt == "rdfa" else (_URL_ATTR.get(tag, ""),))
    if link and (tag not in ("a", "area") or not text or any(_local(n) in _URL_PROPS for n in names)):
        return link
    return text


def _gives_type(name: str) -> bool:
    """Whether a property gives its item one more type than its itemtype/typeof names: schema.org's
    additionalType (``<link itemprop="additionalType" href="https://schema.org/Event">`` on a
    TouristAttraction), or RDF's own type in RDFa (``rel="rdf:type"``)."""
    return name == "rdf:type" or _local(name) == "additionalType"


def _scoped_items(root: lxml.html.HtmlElement, fmt: str) -> list[dict[str, Any]]:
    """Event items of microdata (``itemscope``/``itemtype``/``itemprop``) or RDFa
    (``typeof``/``property``/``rel``), as JSON-LD-shaped dicts whose values are lists. An item
    is an event by its itemtype/typeof or by an ``additionalType`` (RDFa: ``rdf:type``) it gives.
    RDFa's ``rel`` names a link property: its value is the element's resource/href/src, the item
    the element itself opens (``rel="offers" typeof="Offer"``), or, with neither, the items just
    below it (a hanging ``rel``)."""
    scope_attr, type_attr, prop_attr = (("itemscope", "itemtype", "itemprop") if fmt == "microdata"
                                        else ("typeof", "typeof", "property"))

    def is_scope(el: Any) -> bool:
        return el.get(scope_attr) is not None

    def item(el: Any, depth: int) -> dict[str, Any]:
        node: dict[str, Any] = {"@type": (el.get(type_attr) or "").split()}

        def add(names: list[str], value: Any) -> None:
            for n in names:
                node.setdefault(_local(n), []).append(value)
                if _gives_type(n) and isinstance(value, str) and value.strip():
                    node["@type"].append(value.strip())

        def walk(parent: Any, hanging: list[str]) -> None:
            for child in parent.iterchildren():
                if not isinstance(child.tag, str):
                    continue
                names = (child.get(prop_attr) or "").split()
                rels = (child.get("rel") or "").split() if fmt == "rdfa" else []
                link = _link_of(child, _RDFA_LINKS) if rels else None
                nested = is_scope(child)
                value = item(child, depth + 1) if nested and depth < _MAX_DEPTH else None
                if names:
                    add(names, value if value is not None else _literal(child, fmt, names))
                if rels and (value is not None or link):
                    add(rels, value if value is not None else link)
                if hanging and value is not None and not names and not rels:
                    add(hanging, value)
                if not nested:
                    # A hanging rel reaches the items below it, through plain wrappers.
                    walk(child, rels if rels and not link else ([] if names else hanging))

        walk(el, [])
        return node

    def declared(el: Any) -> set[str]:
        return {_local(t) for t in (el.get(type_attr) or "").split()}

    # Items that type themselves through a property: the nearest scope above each such property.
    typed_by_property: set[Any] = set()
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        given = (el.get(prop_attr) or "").split() + ((el.get("rel") or "").split() if fmt == "rdfa" else [])
        if any(_gives_type(n) for n in given):
            owner = next((a for a in el.iterancestors() if is_scope(a)), None)
            if owner is not None:
                typed_by_property.add(owner)
    found = []
    for el in root.iter():
        if not isinstance(el.tag, str) or not is_scope(el):
            continue
        if _is_event(declared(el)):
            found.append(item(el, 0))
        elif el in typed_by_property:
            node = item(el, 0)
            if _is_event(_types(node)):
                found.append(node)
    return found


def extract_events(
    body: bytes, *, base_url: str, max_bytes: int = DEFAULT_MAX_BYTES, timezone: str = DEFAULT_TIMEZONE
) -> EventsResult:
    """WANNADO-10: the schema.org events of an agenda page, JSON-LD first, then microdata and
    RDFa. ``timezone`` is the venue's (IANA name; WannadoBot's venues: Europe/Amsterdam): a
    start or end without an offset is read in it. The same show declared twice (JSON-LD and
    microdata, or twice in one graph) is one event: duplicates are found on the name and the
    normalised start, so ``20:00`` and ``20:00:00+01:00`` are the same time."""
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
        event = event_from_node(node, page_url=base_url, base=base, source_format=fmt, ids=ids, timezone=timezone)
        # The same event is often declared twice (JSON-LD and microdata): keep the first.
        key = (event.name.casefold().strip(_QUOTES), event.start) if event is not None else None
        if event is None or key in seen:
            continue
        seen.add(key)  # type: ignore[arg-type]
        events.append(event)
        if len(events) >= MAX_EVENTS:
            break
    return EventsResult(tuple(events), None, skipped)

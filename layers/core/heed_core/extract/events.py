"""Decides which events an agenda page declares in its structured data (JSON-LD, microdata, RDFa).

WANNADO-10: name, date and time, location, price, description, image and link come from
the page's schema.org ``Event`` data first. WANNADO-01: every event links back, to its
own page when it names one, else to the agenda page it was found on.
"""
from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import lxml.html

from heed_core.urls import Refused, resolve

from .eventtime import DEFAULT_TIMEZONE, first_occurrence, normalise
from .signals import DEFAULT_MAX_BYTES, parse_html

__all__ = ["EVENT_TYPES", "Event", "EventsResult", "absolute_url", "clean_text", "event_from_node", "extract_events"]

# schema.org Event and every subtype (https://schema.org/Event, "More specific Types", pending
# ones included); any other type named "...Event" is read as one too (see _is_event).
EVENT_TYPES = frozenset(
    {
        "Event", "BusinessEvent", "ChildrensEvent", "ComedyEvent", "ConferenceEvent", "CourseInstance",
        "DanceEvent", "DeliveryEvent", "EducationEvent", "EventSeries", "ExhibitionEvent", "Festival",
        "FoodEvent", "Hackathon", "LiteraryEvent", "MusicEvent", "PerformingArtsEvent", "PublicationEvent",
        "BroadcastEvent", "OnDemandEvent", "SaleEvent", "ScreeningEvent", "SocialEvent", "SportsEvent",
        "TheaterEvent", "VisualArtsEvent",
    }
)
# Named "...Event" but no event anyone attends: a log entry (a StructuredValue), a booking.
_NOT_EVENTS = frozenset({"InstantaneousEvent"})
MAX_EVENTS = 500
_QUOTES = " \"'“”‘’«»„"
DESCRIPTION_CHARS = 500
_MAX_DEPTH = 64
_TAG = re.compile(r"<[^>]{0,2000}>")
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
    got = resolve(base, value)  # as a browser resolves it (heed_core.urls: the URL Standard)
    return None if isinstance(got, Refused) else str(got)


def _local(name: str) -> str:
    return re.split(r"[/#:]", name.strip())[-1]


def _types(node: dict[str, Any]) -> set[str]:
    # JSON-LD 1.1 contexts alias "@type"/"@id" as "type"/"id" (schema.org's own examples do).
    raw = node.get("@type", node.get("type", []))
    raw = raw if isinstance(raw, list) else [raw]
    return {_local(t) for t in raw if isinstance(t, str)}


def _id(node: dict[str, Any]) -> str | None:
    value = node.get("@id", node.get("id"))
    return value if isinstance(value, str) else None


def _is_event(types: set[str]) -> bool:
    return any(t in EVENT_TYPES or (t.endswith("Event") and t not in _NOT_EVENTS and t[:1].isupper())
               for t in types)


def _first(value: Any) -> Any:
    while isinstance(value, list):
        value = next((v for v in value if v not in (None, "", [], {})), None)
    return value


_REF_KEYS = frozenset({"@id", "@type", "id", "type"})


def _deref(value: Any, ids: dict[str, dict[str, Any]]) -> Any:
    value = _first(value)
    if isinstance(value, dict) and _id(value) and set(value) <= _REF_KEYS:
        return ids.get(_id(value) or "", value)
    return value


def _text(value: Any) -> str | None:
    value = _first(value)
    if isinstance(value, dict):
        value = value.get("@value", value.get("name"))
        value = _first(value)
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        return None
    return clean_text(str(value))


def _address_parts(address: dict[str, Any], ids: dict[str, dict[str, Any]]) -> list[str | None]:
    locality = " ".join(p for p in (_text(address.get("postalCode")), _text(address.get("addressLocality"))) if p)
    country = _deref(address.get("addressCountry"), ids)
    return [_text(address.get("streetAddress")), locality, _text(country)]


def _is_address(node: dict[str, Any]) -> bool:
    return "PostalAddress" in _types(node) or any(
        k in node for k in ("streetAddress", "addressLocality", "postalCode"))


def _place(value: Any, ids: dict[str, dict[str, Any]]) -> str | None:
    """One location as text: a Place with its address, a bare PostalAddress, or plain text."""
    value = _deref(value, ids)
    if not isinstance(value, dict):
        return _text(value)
    parts = [_text(value.get("name"))]
    address = _deref(value.get("address"), ids)
    if _is_address(value) and not isinstance(address, dict):
        parts += _address_parts(value, ids)  # schema.org allows a PostalAddress as the location
    elif isinstance(address, dict):
        parts += _address_parts(address, ids)
    else:
        parts.append(_text(address))
    if not any(parts):
        parts.append(_text(value.get("url")))
    seen: list[str] = []
    for p in parts:
        if p and p not in seen:
            seen.append(p)
    return clean_text(", ".join(seen), 300) if seen else None


def _is_virtual(value: Any) -> bool:
    if isinstance(value, dict):
        return "VirtualLocation" in _types(value)
    return isinstance(value, str) and value.strip().lower().startswith(("http://", "https://"))


def _locations(value: Any, base: str, ids: dict[str, dict[str, Any]]) -> tuple[str | None, str | None]:
    """(physical location, online URL). Of several locations the physical Place is preferred
    for ``location`` (a livestream is no place to go to); the VirtualLocation is kept as ``online``."""
    values = value if isinstance(value, list) else [value]
    physical: str | None = None
    online: str | None = None
    virtual_text: str | None = None
    for raw in values[:20]:
        item = _deref(raw, ids)
        if item in (None, "", [], {}):
            continue
        if _is_virtual(item):
            link = _first(item.get("url")) if isinstance(item, dict) else item
            online = online or (absolute_url(link, base) if isinstance(link, str) else None)
            virtual_text = virtual_text or _place(item, ids)
        elif physical is None:
            physical = _place(item, ids)
    return physical or virtual_text, online


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


def _availability(node: dict[str, Any], ids: dict[str, dict[str, Any]]) -> str | None:
    """The offers' ItemAvailability local names in offer order, without repeats
    (``SoldOut``; ``SoldOut, InStock`` when a second ticket kind is still on sale)."""
    offers = node.get("offers")
    found: dict[str, None] = {}
    for offer in (offers if isinstance(offers, list) else [offers])[:50]:
        offer = _deref(offer, ids)
        raw = _text(offer.get("availability")) if isinstance(offer, dict) else None
        if raw:
            found.setdefault(_local(raw))
    return ", ".join(found) or None


def _status(node: dict[str, Any]) -> str | None:
    raw = _text(node.get("eventStatus"))
    return _local(raw) if raw else None


def _image(value: Any, base: str, ids: dict[str, dict[str, Any]]) -> str | None:
    value = _deref(value, ids)
    if isinstance(value, dict):
        value = _first(value.get("url") or value.get("contentUrl"))
    return absolute_url(value, base) if isinstance(value, str) else None


def _dates(node: dict[str, Any], ids: dict[str, dict[str, Any]], zone: str) -> tuple[str | None, str | None]:
    start = normalise(_text(node.get("startDate")), zone=zone)
    end = normalise(_text(node.get("endDate")), zone=zone)
    if start is None:
        # A repeating show (eventSchedule) without its own startDate: its first occurrence.
        schedules = node.get("eventSchedule")
        for schedule in (schedules if isinstance(schedules, list) else [schedules])[:20]:
            schedule = _deref(schedule, ids)
            if isinstance(schedule, dict):
                first, last = first_occurrence(
                    {k: _text(v) if k != "byDay" else v for k, v in schedule.items()},
                    duration=_text(node.get("duration")), zone=zone)
                if first is not None:
                    return first, end or last
    return start, end


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

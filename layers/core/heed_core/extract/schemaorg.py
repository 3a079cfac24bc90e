"""How schema.org data is read, whatever syntax a page declares it in (JSON-LD, microdata,
RDFa): which types are events, a node's types and id, its references followed, and each field an
event takes from it (place, online location, price, availability, status, image, dates), as
plain text and absolute URLs. Apart from ``events`` (which names ``EVENT_TYPES``, ``clean_text``
and ``absolute_url`` again for the code that imports them there) so that each file stays small
enough to read whole (issue 36)."""
from __future__ import annotations

import html
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from heed_core.urls import Refused, resolve

from .eventtime import first_occurrence, normalise

__all__ = ["EVENT_TYPES", "absolute_url", "clean_text"]

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
_TAG = re.compile(r"<[^>]{0,2000}>")


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

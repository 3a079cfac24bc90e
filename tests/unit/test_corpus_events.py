"""schema.org's own event examples against Heed's event extractor (WANNADO-10, WANNADO-01).

The examples are schema.org's (read from ../shared/vendored/schemaorg/, see
tests/support/corpora.py; skipped where it is absent). For every example whose JSON-LD names an
Event type, Heed must find each named event and the
fields the example gives (dates, location, price, description, image, link, status,
availability); the same examples with their microdata and RDFa on one page must not yield an
event twice. Counts are printed and checked against tests/fixtures/corpus_baseline.json.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from heed_core.extract.events import Event, extract_events

from tests.support.corpora import corpus

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PAGE = "https://agenda.example/"
# The reference reading, independent of the extractor: schema.org 30.0's Event and all its
# subtypes (from schemaorg-all-https-types.csv), less the deprecated UserInteraction family.
REFERENCE_TYPES = frozenset({
    "Event", "BroadcastEvent", "BusinessEvent", "ChildrensEvent", "ComedyEvent", "ConferenceEvent",
    "CourseInstance", "DanceEvent", "DeliveryEvent", "EducationEvent", "EventSeries", "ExhibitionEvent",
    "Festival", "FoodEvent", "Hackathon", "LiteraryEvent", "MusicEvent", "OnDemandEvent",
    "PerformingArtsEvent", "PublicationEvent", "SaleEvent", "ScreeningEvent", "SocialEvent",
    "SportsEvent", "TheaterEvent", "VisualArtsEvent",
})
# Examples whose microdata or RDFa says something else than their JSON-LD, so one more event
# on the combined page is right.
FORMATS_DISAGREE = {
    "#eg-0426": "the microdata names it 'The 2016 Missoula Marathon', the JSON-LD 'The Missoula Marathon'",
    "#eg-0436": "the RDFa gives the exhibition other dates (2016-10-01 to 2017-02-05) than JSON-LD and microdata",
}
_SECTION = re.compile(r"^(TYPES|PRE-MARKUP|MICRODATA|RDFA|JSON):[ \t]*", re.M)


def _examples() -> list[tuple[str, dict[str, str]]]:
    out = []
    examples = corpus("schemaorg") / "event-examples.txt"
    for chunk in re.split(r"(?=^TYPES:)", examples.read_text(encoding="utf-8"), flags=re.M):
        if not chunk.startswith("TYPES:"):
            continue
        marks = list(_SECTION.finditer(chunk))
        sections = {m.group(1): chunk[m.end(): marks[i + 1].start() if i + 1 < len(marks) else len(chunk)]
                    for i, m in enumerate(marks)}
        ident = sections["TYPES"].split()[0] if sections["TYPES"].split() else "?"
        out.append((ident, sections))
    return out


def _scripts(json_section: str) -> list[str]:
    if "<script" in json_section:
        return re.findall(r"<script[^>]*>(.*?)</script>", json_section, re.S)
    return [json_section]


def _local(value: Any) -> str:
    return re.split(r"[/#:]", value.strip())[-1] if isinstance(value, str) else ""


def _name(node: dict[str, Any]) -> str | None:
    value = node.get("name")
    value = value[0] if isinstance(value, list) and value else value
    value = value.get("@value") if isinstance(value, dict) else value
    return " ".join(value.split()) if isinstance(value, str) and value.strip() else None


def _reference(blocks: list[str]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            raw = node.get("@type", node.get("type"))
            types = {_local(t) for t in (raw if isinstance(raw, list) else [raw])}
            if types & REFERENCE_TYPES and _name(node):
                found.append(node)
            for value in node.values():
                walk(value)

    for block in blocks:
        try:
            walk(json.loads(block))
        except ValueError:
            pass
    return found


def _offers(node: dict[str, Any]) -> list[dict[str, Any]]:
    offers = node.get("offers")
    return [o for o in (offers if isinstance(offers, list) else [offers]) if isinstance(o, dict)]


def _expected_fields(node: dict[str, Any]) -> dict[str, bool]:
    """The Event fields the example gives, by what the source holds."""
    schedule = node.get("eventSchedule")
    schedule = schedule[0] if isinstance(schedule, list) and schedule else schedule
    priced = any(o.get(k) not in (None, "") for o in _offers(node) for k in ("price", "lowPrice", "highPrice"))
    return {
        "start": bool(node.get("startDate")) or (isinstance(schedule, dict) and bool(schedule.get("startDate"))),
        "end": bool(node.get("endDate")),
        "location": bool(node.get("location")),
        "price": priced,
        "description": bool(node.get("description")),
        "image": bool(node.get("image")),
        "url": isinstance(node.get("url"), str) and node["url"].startswith("http"),
        "status": bool(node.get("eventStatus")),
        "availability": any(o.get("availability") for o in _offers(node)),
        "previous_start": bool(node.get("previousStartDate")),
    }


def _got(event: Event, field: str) -> bool:
    value = getattr(event, field, None)
    return bool(value) and not (field == "url" and value == PAGE)


def _page(*parts: str) -> bytes:
    return f"<!DOCTYPE html><html><head><title>x</title></head><body>{''.join(parts)}</body></html>".encode()


def _measure() -> dict[str, Any]:
    events = found = fields = fields_found = 0
    missing: list[str] = []
    duplicated: list[str] = []
    for ident, sections in _examples():
        blocks = _scripts(sections.get("JSON", ""))
        ref = _reference(blocks)
        if not ref:
            continue
        scripts = "".join(f'<script type="application/ld+json">{b}</script>' for b in blocks)
        ours = extract_events(_page(scripts), base_url=PAGE).events
        for node in ref:
            events += 1
            expected = _expected_fields(node)
            fields += 1 + sum(expected.values())  # the name, then every field given
            event = next((e for e in ours if e.name == _name(node)), None)
            if event is None:
                missing.append(f"{ident}: {_name(node)}")
                continue
            found += 1
            fields_found += 1
            for field, given in expected.items():
                if given and _got(event, field):
                    fields_found += 1
                elif given:
                    missing.append(f"{ident}: {_name(node)}: {field}")
        # The same example in microdata and RDFa next to its JSON-LD is the same events.
        combined = extract_events(_page(scripts, sections.get("MICRODATA", ""), sections.get("RDFA", "")),
                                  base_url=PAGE).events
        if len(combined) > len(ours) and ident not in FORMATS_DISAGREE:
            duplicated.append(f"{ident}: {len(combined)} events on the combined page, {len(ours)} from JSON-LD")
    return {"events": events, "found": found, "fields": fields, "fields_found": fields_found,
            "missing": missing, "duplicated": duplicated}


@pytest.fixture(scope="module")
def measured() -> dict[str, Any]:
    return _measure()


def test_wannado_10_schema_org_examples_events_and_fields(measured: dict[str, Any]) -> None:
    m = measured
    print(f"\nschema.org event examples: events {m['found']}/{m['events']}, fields {m['fields_found']}/{m['fields']}")
    for line in m["missing"]:
        print("  not read:", line)
    baseline = json.loads((FIXTURES / "corpus_baseline.json").read_text(encoding="utf-8"))["events"]
    assert m["events"] >= 45, "the vendored examples went missing"
    assert m["found"] >= baseline["found"] and m["fields_found"] >= baseline["fields_found"]


def test_wannado_10_schema_org_examples_same_event_in_three_formats_is_one(measured: dict[str, Any]) -> None:
    assert measured["duplicated"] == [], "\n".join(measured["duplicated"])

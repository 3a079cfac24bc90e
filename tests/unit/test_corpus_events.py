"""schema.org's own event examples against Heed's event extractor (WANNADO-10, WANNADO-01).

The examples are schema.org's (read from ../shared/vendored/schemaorg/, see
tests/support/corpora.py; skipped where it is absent). For every example whose JSON-LD names an
Event type, Heed must find each named event and the
fields the example gives (dates, location, price, description, image, link, status,
availability); the same examples with their microdata and RDFa on one page must not yield an
event twice. Counts are printed and checked against tests/fixtures/corpus_baseline.json.

The peer corpus (../shared/peer-data/schemaorg/: every schema.org example declaring an Event, one
file each, with corpus_notes.json, hand-checked places where an example's microdata or RDFa says
something else than its JSON-LD) is read one syntax at a time: the JSON-LD alone, the microdata
alone, the RDFa alone. Each must yield every event of the reference (the JSON-LD, as corrected
for that syntax by the notes) with its name, its own link, its start date, its place, and the
other fields it gives.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from heed_core.extract.events import Event, clean_text, extract_events
from heed_core.urls import Refused, resolve

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


def _sections(example: str) -> dict[str, str]:
    """An example's sections (TYPES, PRE-MARKUP, MICRODATA, RDFA, JSON) by name."""
    marks = list(_SECTION.finditer(example))
    return {m.group(1): example[m.end(): marks[i + 1].start() if i + 1 < len(marks) else len(example)]
            for i, m in enumerate(marks)}


def _examples() -> list[tuple[str, dict[str, str]]]:
    out = []
    examples = corpus("schemaorg") / "event-examples.txt"
    for chunk in re.split(r"(?=^TYPES:)", examples.read_text(encoding="utf-8"), flags=re.M):
        if not chunk.startswith("TYPES:"):
            continue
        sections = _sections(chunk)
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


# Where a block says something else than its JSON-LD and corpus_notes.json does not say so (the
# notes correct names and add events; these are dates), as (example, syntax) -> event -> fields.
OUR_NOTES: dict[tuple[str, str], dict[str, dict[str, Any]]] = {
    ("eg-0436", "rdfa"): {"\"Peindre l'impossible\"": {"startDate": "2016-10-01", "endDate": "2017-02-05"}},
}
_SYNTAXES = (("json-ld", "JSON"), ("microdata", "MICRODATA"), ("rdfa", "RDFA"))


def _block(syntax: str, sections: dict[str, str]) -> str | None:
    """The example's markup in one syntax, as a page would carry it; None where the example has
    none ("This example is JSON only.", a comment, "TODO")."""
    if syntax == "json-ld":
        blocks = _scripts(sections.get("JSON", ""))
        return "".join(f'<script type="application/ld+json">{b}</script>' for b in blocks) if blocks else None
    text = sections.get(dict(_SYNTAXES)[syntax], "")
    return text if "<" in re.sub(r"<!--.*?-->", "", text, flags=re.S) else None


def _reference_for(ident: str, syntax: str, json_ld: list[dict[str, Any]],
                   notes: dict[str, Any]) -> list[dict[str, Any]]:
    """The events a block must yield: the JSON-LD's, with the notes for that syntax applied."""
    nodes = [dict(n) for n in json_ld]
    for note in notes.get(ident, []):
        if syntax not in note["syntaxes"]:
            continue
        if "add" in note:
            nodes.append(dict(note["add"]))
        for node in nodes:
            if "set" in note and _name(node) == note.get("event"):
                node.update(note["set"])
    for node in nodes:
        node.update(OUR_NOTES.get((ident, syntax), {}).get(_name(node) or "", {}))
    return nodes


def _place_names(location: Any) -> list[list[str]]:
    """Ways the reference names its place: each a list of words that must all be in Heed's
    location (corpus_notes writes them as such lists; a Place gives its name, text is itself)."""
    if isinstance(location, list):
        if location and all(isinstance(x, list) for x in location):
            return location
        return [way for item in location for way in _place_names(item)]
    if isinstance(location, str):
        return [[location]]
    if isinstance(location, dict):
        name = location.get("name") or (location.get("address") if isinstance(location.get("address"), str) else None)
        return [[name]] if isinstance(name, str) else []
    return []


def _differences(node: dict[str, Any], event: Event) -> list[str]:
    """What Heed's event says otherwise than the reference node (empty: it agrees)."""
    out = []
    own = node.get("url")
    resolved = resolve(PAGE, own) if isinstance(own, str) else None
    want = str(resolved) if resolved is not None and not isinstance(resolved, Refused) else PAGE
    if event.url != want:
        out.append(f"url {event.url} (want {want})")
    start = node.get("startDate")
    if isinstance(start, str) and (event.start or "")[:10] != start[:10]:
        out.append(f"start {event.start} (want {start})")
    places = _place_names(node.get("location"))
    if places and not any(all(w in (event.location or "") for w in way) for way in places):
        out.append(f"location {event.location!r} (want one of {places})")
    text = node.get("description")
    text = text[0] if isinstance(text, list) and text else text
    if isinstance(text, str) and (event.description or "")[:40] != (clean_text(text) or "")[:40]:
        out.append(f"description {(event.description or '')[:40]!r}")
    out += [f"no {field}" for field, given in _expected_fields(node).items()
            if given and field not in ("url",) and not _got(event, field)]
    return out


def _measure_peer() -> dict[str, Any]:
    where = corpus("schemaorg/events")
    notes = json.loads((where.parent / "corpus_notes.json").read_text(encoding="utf-8"))
    manifest = json.loads((where.parent / "manifest.json").read_text(encoding="utf-8"))["examples"]
    files = sorted(where.glob("*.txt"))
    assert {f"events/{f.name}" for f in files} == {k for k in manifest if k.startswith("events/")}, \
        "the peer examples differ from their manifest"
    cases: dict[str, list[int]] = {s: [0, 0] for s, _ in _SYNTAXES}
    wrong: list[str] = []
    for path in files:
        ident = path.stem
        sections = _sections(path.read_text(encoding="utf-8"))
        json_ld = _reference(_scripts(sections.get("JSON", "")))
        for syntax, _ in _SYNTAXES:
            block = _block(syntax, sections)
            if block is None:
                continue
            ours = list(extract_events(_page(block), base_url=PAGE).events)
            for node in _reference_for(ident, syntax, json_ld, notes):
                cases[syntax][1] += 1
                # the event of that name (of several, the one that starts that day)
                named = [e for e in ours if e.name == _name(node)]
                start = node.get("startDate")
                event = next((e for e in named if isinstance(start, str) and (e.start or "")[:10] == start[:10]),
                             named[0] if named else None)
                problems = ["not found"] if event is None else _differences(node, event)
                if problems:
                    wrong.append(f"{ident} {syntax} {_name(node)!r}: {'; '.join(problems)}")
                else:
                    cases[syntax][0] += 1
    return {"cases": cases, "wrong": wrong}


def test_wannado_10_peer_examples_each_syntax_alone_yields_every_event_and_its_fields() -> None:
    # GIVEN every schema.org example that declares an event, in each syntax it is written in
    m = _measure_peer()
    agree = sum(c[0] for c in m["cases"].values())
    total = sum(c[1] for c in m["cases"].values())
    per = ", ".join(f"{s} {c[0]}/{c[1]}" for s, c in m["cases"].items())
    print(f"\nschema.org peer examples: events {agree}/{total} ({per})")
    # WHEN Heed reads each block alone THEN every reference event is found, its fields right
    assert total >= 85, "the peer examples went missing"
    assert m["wrong"] == [], "\n".join(m["wrong"])
    baseline = json.loads((FIXTURES / "corpus_baseline.json").read_text(encoding="utf-8"))["peer_events"]
    assert agree >= baseline["cases"]

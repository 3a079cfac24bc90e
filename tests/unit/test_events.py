"""WANNADO-10: events come from structured data; WANNADO-01: every event links back."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from heed_core.extract.events import Event, extract_events

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "events"
AGENDA = "https://www.stadstheater-wilgenburg.nl/agenda"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def jsonld_page(*blocks: str) -> bytes:
    scripts = "".join(f'<script type="application/ld+json">{b}</script>' for b in blocks)
    return f"<!DOCTYPE html><html><head>{scripts}</head><body><h1>Agenda</h1></body></html>".encode()


def test_wannado_10_json_ld_graph_of_theater_events():
    # GIVEN a Dutch theatre agenda with an @graph of events, offers and a referenced venue
    result = extract_events(fixture("theater_agenda_graph.html"), base_url=AGENDA)
    # THEN every field the bot promises is read
    assert result.error is None
    assert [e.name for e in result.events] == [
        "De Verloren Brief",
        "Kerstconcert Wilgenburgs Byzantijns Koor",
        "Familievoorstelling: Het Slimme Konijn (6+)",
    ]
    first = result.events[0]
    assert first == Event(
        name="De Verloren Brief",
        start="2026-12-04T20:15:00+01:00",
        end="2026-12-04T22:30:00+01:00",
        location="Stadstheater Wilgenburg, Lindeplein 4, 9999 ZZ Wilgenburg, NL",
        price="EUR 25.00 - 32.50",
        description="Een tragikomedie over een brief die veertig jaar te laat wordt bezorgd. Met live muziek.",
        image="https://www.stadstheater-wilgenburg.nl/media/voorstellingen/verloren-brief-1200.jpg",
        url="https://www.stadstheater-wilgenburg.nl/voorstelling/de-verloren-brief",
        source_format="json-ld",
    )


def test_wannado_10_prices_free_and_aggregate_offer():
    concert, family = extract_events(fixture("theater_agenda_graph.html"), base_url=AGENDA).events[1:]
    assert concert.price == "free"
    assert concert.image == "https://cdn.stadstheater-wilgenburg.nl/img/kerstconcert.jpg"
    assert concert.location == "Kleine Zaal, Lindeplein 4, Wilgenburg"
    assert family.price == "EUR 12.50 - 17.50"
    assert family.start == "2027-01-03"


def test_wannado_10_malformed_json_ld_block_is_skipped_others_kept():
    # GIVEN the fixture's broken BreadcrumbList block (trailing comma)
    result = extract_events(fixture("theater_agenda_graph.html"), base_url=AGENDA)
    assert result.skipped_blocks == 1
    # AND a page whose first event block is broken
    body = jsonld_page('{"@type": "Event", "name": "Kapot", }', '[{"@type": "DanceEvent", "name": "Heel", "startDate": "2026-12-01"}]')
    result = extract_events(body, base_url=AGENDA)
    assert [e.name for e in result.events] == ["Heel"]
    assert result.skipped_blocks == 1


def test_wannado_10_microdata_events():
    base = "https://dekade.example.nl/programma/"
    result = extract_events(fixture("venue_microdata.html"), base_url=base)
    gig, jam = result.events
    assert gig.source_format == "microdata"
    assert (gig.name, gig.start, gig.end) == ("The Low Tides + support", "2026-11-28T21:00:00+01:00", "2026-11-29T00:30:00+01:00")
    assert gig.location == "De Kade, grote zaal, Havenkade 12, 9998 YY Kadestad"
    assert gig.price == "EUR 18.00"
    assert gig.image == "https://dekade.example.nl/media/low-tides.jpg"
    assert gig.url == "https://dekade.example.nl/programma/2026-11-28-the-low-tides"
    assert (jam.name, jam.location, jam.price) == ("Open podium & jamsessie", "Café De Kade", "Gratis")


def test_wannado_10_rdfa_event():
    page = "https://veerhuis.example.nl/tentoonstellingen"
    (expo,) = extract_events(fixture("museum_rdfa.html"), base_url=page).events
    assert expo == Event(
        name="Kaarten van een verdwenen kust",
        start="2026-10-01",
        end="2027-03-15",
        location="Museum Het Veerhuis, Veerstraat 1, Oudeveer",
        price="EUR 14.00",
        description="Zeventig handgetekende kaarten laten zien hoe de kustlijn in vier eeuwen verschoof.",
        image="https://veerhuis.example.nl/beeld/kust-kaart.jpg",
        url="https://veerhuis.example.nl/tentoonstellingen/kaarten-verdwenen-kust",
        source_format="rdfa",
    )


@pytest.mark.parametrize(
    ("name", "base"),
    [
        ("theater_agenda_graph.html", AGENDA),
        ("venue_microdata.html", "https://dekade.example.nl/programma/"),
        ("museum_rdfa.html", "https://veerhuis.example.nl/tentoonstellingen"),
    ],
)
def test_wannado_01_every_event_links_back_with_an_absolute_url(name, base):
    events = extract_events(fixture(name), base_url=base).events
    assert events
    for event in events:
        assert event.url.startswith(("https://", "http://"))


def test_wannado_01_event_without_own_page_links_to_the_agenda_page():
    family = extract_events(fixture("theater_agenda_graph.html"), base_url=AGENDA).events[2]
    assert family.url == AGENDA


def test_wannado_01_script_urls_are_never_links():
    body = jsonld_page(json.dumps({"@type": "Event", "name": "X", "url": "javascript:alert(1)", "image": "data:image/png;base64,AAAA"}))
    (event,) = extract_events(body, base_url=AGENDA).events
    assert (event.url, event.image) == (AGENDA, None)


def test_wannado_10_top_level_list_nested_item_list_and_subtype_with_prefix():
    block = json.dumps([
        {"@type": "ItemList", "itemListElement": [
            {"@type": "ListItem", "position": 1, "item": {"@type": "schema:ComedyEvent", "name": "Cabaret", "startDate": "2026-12-12T20:00"}},
        ]},
        {"@type": "http://schema.org/Festival", "name": "Winterfestival", "startDate": "2026-12-27",
         "location": "Park", "offers": {"price": "1.250,00", "priceCurrency": "eur"}},
    ])
    events = extract_events(jsonld_page(block), base_url=AGENDA).events
    assert [(e.name, e.start) for e in events] == [("Cabaret", "2026-12-12T20:00"), ("Winterfestival", "2026-12-27")]
    assert events[1].price == "EUR 1250.00"


def test_wannado_10_long_description_is_plain_text_trimmed_to_about_500_chars():
    description = "<p>" + " ".join(["Een avond vol muziek &amp; verhalen."] * 40) + "</p>"
    body = jsonld_page(json.dumps({"@type": "Event", "name": "Lang", "description": description}))
    (event,) = extract_events(body, base_url=AGENDA).events
    assert event.description is not None
    assert 400 < len(event.description) <= 500
    assert event.description.endswith("…")
    assert "<p>" not in event.description and "&amp;" not in event.description


def test_wannado_10_same_event_in_json_ld_and_microdata_is_listed_once():
    body = (
        b'<html><head><script type="application/ld+json">{"@type":"Event","name":"Dubbel","startDate":"2026-12-01"}</script></head>'
        b'<body><div itemscope itemtype="https://schema.org/Event"><span itemprop="name">Dubbel</span>'
        b'<meta itemprop="startDate" content="2026-12-01"></div></body></html>'
    )
    events = extract_events(body, base_url=AGENDA).events
    assert [(e.name, e.source_format) for e in events] == [("Dubbel", "json-ld")]


def test_wannado_10_non_events_and_nameless_events_are_ignored():
    body = jsonld_page(json.dumps({"@graph": [{"@type": "Organization", "name": "Theater"}, {"@type": "Event", "startDate": "2026-12-01"}]}))
    assert extract_events(body, base_url=AGENDA).events == ()


def test_wannado_10_oversized_page_is_refused():
    result = extract_events(fixture("theater_agenda_graph.html"), base_url=AGENDA, max_bytes=1000)
    assert (result.events, result.error) == ((), "too_large")


@pytest.mark.parametrize("body", [b"", b"\x00\x01\x02", b"<html><body>" + b"<div>" * 5000 + b"</body></html>"])
def test_wannado_10_bad_input_never_raises(body):
    result = extract_events(body, base_url=AGENDA)
    assert result.events == ()


def test_wannado_10_deeply_nested_json_ld_does_not_crash():
    body = jsonld_page("[" * 20_000 + "]" * 20_000, json.dumps({"@type": "Event", "name": "Ok"}))
    assert [e.name for e in extract_events(body, base_url=AGENDA).events] == ["Ok"]

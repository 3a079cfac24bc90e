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
        status="EventScheduled",
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
    body = jsonld_page('{"@type": "Event", "name": "Kapot", }',
                       '[{"@type": "DanceEvent", "name": "Heel", "startDate": "2026-12-01"}]')
    result = extract_events(body, base_url=AGENDA)
    assert [e.name for e in result.events] == ["Heel"]
    assert result.skipped_blocks == 1


def test_wannado_10_microdata_events():
    base = "https://dekade.example.nl/programma/"
    result = extract_events(fixture("venue_microdata.html"), base_url=base)
    gig, jam = result.events
    assert gig.source_format == "microdata"
    assert (gig.name, gig.start, gig.end) == ("The Low Tides + support", "2026-11-28T21:00:00+01:00",
                                              "2026-11-29T00:30:00+01:00")
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
    body = jsonld_page(json.dumps({"@type": "Event", "name": "X", "url": "javascript:alert(1)",
                                   "image": "data:image/png;base64,AAAA"}))
    (event,) = extract_events(body, base_url=AGENDA).events
    assert (event.url, event.image) == (AGENDA, None)


def test_wannado_10_top_level_list_nested_item_list_and_subtype_with_prefix():
    block = json.dumps([
        {"@type": "ItemList", "itemListElement": [
            {"@type": "ListItem", "position": 1,
             "item": {"@type": "schema:ComedyEvent", "name": "Cabaret", "startDate": "2026-12-12T20:00"}},
        ]},
        {"@type": "http://schema.org/Festival", "name": "Winterfestival", "startDate": "2026-12-27",
         "location": "Park", "offers": {"price": "1.250,00", "priceCurrency": "eur"}},
    ])
    events = extract_events(jsonld_page(block), base_url=AGENDA).events
    # a local time without an offset is read in the venue's zone (Europe/Amsterdam: CET in December)
    assert [(e.name, e.start) for e in events] == [("Cabaret", "2026-12-12T20:00:00+01:00"),
                                                   ("Winterfestival", "2026-12-27")]
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
        b'<html><head><script type="application/ld+json">'
        b'{"@type":"Event","name":"Dubbel","startDate":"2026-12-01"}</script></head>'
        b'<body><div itemscope itemtype="https://schema.org/Event"><span itemprop="name">Dubbel</span>'
        b'<meta itemprop="startDate" content="2026-12-01"></div></body></html>'
    )
    events = extract_events(body, base_url=AGENDA).events
    assert [(e.name, e.source_format) for e in events] == [("Dubbel", "json-ld")]


def test_wannado_10_non_events_and_nameless_events_are_ignored():
    body = jsonld_page(json.dumps({"@graph": [{"@type": "Organization", "name": "Theater"},
                                              {"@type": "Event", "startDate": "2026-12-01"}]}))
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


# --- the shapes schema.org's own examples use (issue 9) ---------------------------------


def _one(node: dict, **kwargs) -> Event:
    page = jsonld_page(json.dumps({"@context": "https://schema.org", **node}))
    (event,) = extract_events(page, base_url=AGENDA, **kwargs).events
    return event


@pytest.mark.parametrize("kind", ["PerformingArtsEvent", "ConferenceEvent", "TheaterEvent", "CourseInstance",
                                  "Hackathon", "KermisEvent"])
def test_wannado_10_any_event_type_is_an_event(kind: str) -> None:
    assert _one({"@type": kind, "name": "X", "startDate": "2026-12-01"}).name == "X"


def test_wannado_10_non_events_named_like_events_are_not_events() -> None:
    body = jsonld_page(json.dumps([{"@type": "InstantaneousEvent", "name": "log entry"},
                                   {"@type": "EventReservation", "name": "booking"},
                                   {"@type": "EventVenue", "name": "zaal"}]))
    assert extract_events(body, base_url=AGENDA).events == ()


def test_wannado_10_type_and_id_aliases() -> None:
    # GIVEN a JSON-LD 1.1 node using "type"/"id" (as schema.org's PerformingArtsEvent example does)
    block = json.dumps({"@context": "http://schema.org", "@graph": [
        {"type": "PerformingArtsEvent", "id": "#show", "name": "Tienduizend uur", "location": {"id": "#zaal"}},
        {"type": "Place", "id": "#zaal", "name": "Salle Desjardins"},
    ]})
    (event,) = extract_events(jsonld_page(block), base_url=AGENDA).events
    assert (event.name, event.location) == ("Tienduizend uur", "Salle Desjardins")


def test_wannado_10_location_given_as_a_bare_postal_address() -> None:
    event = _one({"@type": "Event", "name": "Buurtfeest", "location": {
        "@type": "PostalAddress", "streetAddress": "Dorpsstraat 1", "postalCode": "1234 AB",
        "addressLocality": "Ergens"}})
    assert event.location == "Dorpsstraat 1, 1234 AB Ergens"


def test_wannado_10_physical_place_preferred_over_livestream_both_kept() -> None:
    event = _one({"@type": "Event", "name": "Hybride", "location": [
        {"@type": "VirtualLocation", "url": "https://stream.example/live"},
        {"@type": "Place", "name": "Grote Zaal",
         "address": {"@type": "PostalAddress", "addressLocality": "Kadestad"}}]})
    assert (event.location, event.online) == ("Grote Zaal, Kadestad", "https://stream.example/live")


def test_wannado_10_online_only_event_keeps_its_link() -> None:
    event = _one({"@type": "Event", "name": "Online", "location": {"@type": "VirtualLocation", "url": "https://s.example/x"}})
    assert (event.location, event.online) == ("https://s.example/x", "https://s.example/x")


@pytest.mark.parametrize("status", ["EventCancelled", "EventPostponed", "EventMovedOnline", "EventScheduled"])
def test_wannado_10_event_status_is_kept(status: str) -> None:
    assert _one({"@type": "Event", "name": "X", "eventStatus": f"https://schema.org/{status}"}).status == status


def test_wannado_10_rescheduled_event_keeps_its_previous_start() -> None:
    event = _one({"@type": "MusicEvent", "name": "B.B. King", "startDate": "2014-04-12T19:30",
                  "eventStatus": "EventRescheduled", "previousStartDate": "2013-09-30T19:30"})
    assert (event.status, event.start, event.previous_start) == (
        "EventRescheduled", "2014-04-12T19:30:00+02:00", "2013-09-30T19:30:00+02:00")


def test_wannado_10_offer_availability_is_kept() -> None:
    event = _one({"@type": "Event", "name": "Uitverkocht", "offers": [
        {"@type": "Offer", "price": "25", "priceCurrency": "EUR", "availability": "https://schema.org/SoldOut"},
        {"@type": "Offer", "price": "60", "priceCurrency": "EUR", "availability": "https://schema.org/InStock"}]})
    assert (event.price, event.availability) == ("EUR 25.00 - 60.00", "SoldOut, InStock")


@pytest.mark.parametrize(("raw", "expected"), [
    ("2026-12-04", "2026-12-04"),                                  # a date stays a date
    ("2026-12-04T20:15", "2026-12-04T20:15:00+01:00"),             # local: CET in winter
    ("2026-07-04T20:15", "2026-07-04T20:15:00+02:00"),             # local: CEST in summer
    ("2026-12-04 20:15:00", "2026-12-04T20:15:00+01:00"),
    ("2026-12-04T20:15:00-05:00", "2026-12-04T20:15:00-05:00"),    # an offset is kept
    ("2026-12-04T20:15:00+0100", "2026-12-04T20:15:00+01:00"),
    ("2026-12-04T19:15:00Z", "2026-12-04T19:15:00+00:00"),
    ("in december", "in december"),                                # not a date: kept as written
])
def test_wannado_10_dates_normalised(raw: str, expected: str) -> None:
    assert _one({"@type": "Event", "name": "X", "startDate": raw}).start == expected


def test_wannado_10_venue_time_zone_comes_from_the_caller() -> None:
    event = _one({"@type": "Event", "name": "X", "startDate": "2026-12-04T20:15"}, timezone="America/New_York")
    assert event.start == "2026-12-04T20:15:00-05:00"


def test_wannado_10_same_show_in_json_ld_and_microdata_with_different_spellings_is_one_event() -> None:
    body = (
        b'<html><head><script type="application/ld+json">'
        b'{"@type":"TheaterEvent","name":"Dubbel","startDate":"2026-12-01T20:00"}</script></head>'
        b'<body><div itemscope itemtype="https://schema.org/TheaterEvent"><span itemprop="name">Dubbel</span>'
        b'<meta itemprop="startDate" content="2026-12-01T20:00:00+01:00"></div>'
        b'<div itemscope itemtype="https://schema.org/TheaterEvent"><span itemprop="name">Dubbel</span>'
        b'<meta itemprop="startDate" content="2026-12-02T20:00:00+01:00"></div></body></html>'
    )
    events = extract_events(body, base_url=AGENDA).events
    assert [(e.start, e.source_format) for e in events] == [
        ("2026-12-01T20:00:00+01:00", "json-ld"), ("2026-12-02T20:00:00+01:00", "microdata")]


def test_wannado_10_event_schedule_yields_the_first_occurrence() -> None:
    # GIVEN schema.org's weekly Tai chi example: from Sunday 2017-01-01, Wednesdays 19:00-20:00, London
    event = _one({"@type": "Event", "name": "Tai chi Class", "duration": "PT60M", "eventSchedule": {
        "@type": "Schedule", "startDate": "2017-01-01", "endDate": "2017-12-31", "repeatFrequency": "P1W",
        "byDay": "https://schema.org/Wednesday", "startTime": "19:00:00", "endTime": "20:00:00",
        "scheduleTimezone": "Europe/London"}})
    # THEN the first show is Wednesday 4 January at 19:00 London time
    assert (event.start, event.end) == ("2017-01-04T19:00:00+00:00", "2017-01-04T20:00:00+00:00")


def test_wannado_10_event_schedule_without_a_start_date_gives_no_start() -> None:
    event = _one({"@type": "Event", "name": "Maandelijks", "eventSchedule": {
        "@type": "Schedule", "repeatFrequency": "P1M", "byDay": "2MO", "startTime": "18:00:00"}})
    assert event.start is None


def _markup_page(markup: str) -> bytes:
    return f"<!DOCTYPE html><html><head><title>Agenda</title></head><body>{markup}</body></html>".encode()


def test_wannado_10_microdata_item_typed_an_event_only_through_additional_type() -> None:
    # GIVEN a microdata item of another type that says it is an Event too (additionalType), with
    # two names, a PostalAddress for a place and a date
    page = _markup_page(
        '<div itemscope itemtype="https://schema.org/TouristAttraction">'
        '<link itemprop="additionalType" href="https://schema.org/Event">'
        '<meta itemprop="name" content="Kermis 2027"><meta itemprop="name" content="Fair 2027">'
        '<meta itemprop="startDate" content="2027-08-20T10:00">'
        '<div itemprop="location" itemscope itemtype="https://schema.org/PostalAddress">'
        '<meta itemprop="addressLocality" content="Oudeveer"><meta itemprop="addressCountry" content="NL"></div>'
        '</div>'
        '<div itemscope itemtype="https://schema.org/TouristAttraction">'
        '<link itemprop="additionalType" href="https://schema.org/Winery"><meta itemprop="name" content="Wijngaard">'
        '</div>')
    # WHEN its events are read THEN the Event is one (its first name), the Winery is none
    (event,) = extract_events(page, base_url="https://veerhuis.example.nl/agenda").events
    assert (event.name, event.start[:16], event.location, event.source_format) == (
        "Kermis 2027", "2027-08-20T10:00", "Oudeveer, NL", "microdata")


def test_wannado_10_rdfa_type_given_by_rdf_type() -> None:
    page = _markup_page('<div vocab="https://schema.org/" typeof="Place"><div property="name" content="Braderie"></div>'
                        '<div rel="rdf:type" resource="https://schema.org/Event"></div>'
                        '<div property="startDate" content="2027-05-01"></div></div>')
    (event,) = extract_events(page, base_url="https://h.example/agenda").events
    assert (event.name, event.start) == ("Braderie", "2027-05-01")


def test_wannado_01_rdfa_rel_gives_the_event_its_own_link_not_its_container_s() -> None:
    # GIVEN an RDFa place whose rel="url" is its own site, holding an event (rel="event") whose
    # rel="url" is the event's page, its offer opened by rel="offers" typeof="Offer"
    page = _markup_page(
        '<div vocab="https://schema.org/" typeof="TouristDestination">'
        '<div property="name" content="Wijnroute"></div><div rel="url" resource="https://route.example/"></div>'
        '<div rel="event"><div typeof="Event"><div property="name" content="Wijnweek"></div>'
        '<div property="startDate" content="2027-11-06"></div>'
        '<div rel="url" resource="/agenda/wijnweek"></div>'
        '<div rel="offers" typeof="Offer"><span property="price">12</span>'
        '<meta property="priceCurrency" content="EUR"></div></div></div></div>')
    # WHEN its events are read THEN the event links to its own page and keeps its price
    (event,) = extract_events(page, base_url="https://route.example/nl/").events
    assert (event.name, event.url, event.price) == ("Wijnweek", "https://route.example/agenda/wijnweek", "EUR 12.00")


def test_wannado_10_rdfa_hanging_rel_reaches_the_place_below_it() -> None:
    page = _markup_page('<div vocab="https://schema.org/" typeof="Event"><span property="name">Lezing</span>'
                        '<div rel="location"><div><div typeof="Place"><span property="name">Bibliotheek</span>'
                        '</div></div></div></div>')
    (event,) = extract_events(page, base_url="https://h.example/agenda").events
    assert (event.name, event.location) == ("Lezing", "Bibliotheek")

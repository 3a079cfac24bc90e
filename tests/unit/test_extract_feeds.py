"""Feed parsing: AUBE-01 (at most 40 items), AUBE-03 (summary length), PRAHA-01 (official feeds), hostile input."""
from __future__ import annotations

import re
import socket
import sys
import time
from dataclasses import fields
from pathlib import Path

import feedparser
import pytest

from heed_core.extract import feeds
from heed_core.extract.feeds import FeedItem, html_to_text, parse_feed

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "feeds"
ISO_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
AUBE_MAX_ITEMS = 40


def load(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a socket fails the test."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a parser tried to use the network")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(feedparser.http, "get", refuse)


def rss_with_items(n: int) -> bytes:
    items = "".join(
        f"<item><title>Voce {i}</title><link>https://aube.example/n/{i}</link>"
        f"<pubDate>Mon, 30 Nov 2026 09:{i % 60:02d}:00 +0000</pubDate></item>"
        for i in range(n)
    )
    return f'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>{items}</channel></rss>'.encode()


# --- the real shapes -----------------------------------------------------------


def test_aube_01_wordpress_rss2_items_in_feed_order_with_absolute_links(no_network: None) -> None:
    # GIVEN a WordPress feed, one item with a site-relative link
    # WHEN it is parsed
    result = parse_feed(load("wordpress_rss2.xml"), base_url="https://bitesilicio.example/feed/",
                        max_items=AUBE_MAX_ITEMS)
    # THEN every item comes back in feed order, links absolute, dates in UTC
    assert result.error is None
    assert result.title == "Bit & Silicio"
    assert result.total_items == 3
    assert [i.title for i in result.items] == [
        "Il nuovo compilatore arriva in beta",
        "Breve: aggiornamento di sicurezza per i router domestici",
        "Tre libri per capire le reti",
    ]
    assert [i.link for i in result.items] == [
        "https://bitesilicio.example/2026/11/30/compilatore-beta/",
        "https://bitesilicio.example/2026/11/29/breve-router/",
        "https://bitesilicio.example/2026/11/28/libri-reti/",
    ]
    assert result.items[0].published == "2026-11-30T09:00:00Z"  # +0100 in the feed
    assert result.items[0].guid == "https://bitesilicio.example/?p=4211"


def test_aube_01_at_most_max_items_and_total_counts_all() -> None:
    # GIVEN a feed with 55 items
    body = rss_with_items(55)
    # WHEN read with AubeBot's cap
    result = parse_feed(body, base_url="https://aube.example/feed", max_items=AUBE_MAX_ITEMS)
    # THEN only the first 40 are returned, in feed order, and the total is reported
    assert len(result.items) == AUBE_MAX_ITEMS
    assert result.total_items == 55
    assert [i.link for i in result.items] == [f"https://aube.example/n/{i}" for i in range(40)]


def test_aube_01_max_items_zero_returns_no_items_but_counts() -> None:
    result = parse_feed(rss_with_items(3), base_url="https://aube.example/feed", max_items=0)
    assert result.items == () and result.total_items == 3 and result.error is None


def test_aube_03_summary_is_plain_text_of_content_encoded_and_length_counts_characters() -> None:
    # GIVEN an item with a short description but a long content:encoded, another with only a short one
    result = parse_feed(load("wordpress_rss2.xml"), base_url="https://bitesilicio.example/feed/", max_items=40)
    long_item, short_item = result.items[0], result.items[1]
    # THEN the long one's summary is the full text, stripped of tags and scripts, over 600 chars
    assert long_item.summary is not None
    assert "<" not in long_item.summary and "tracking" not in long_item.summary
    assert "cache incrementale" in long_item.summary
    assert long_item.summary_length == len(long_item.summary)
    assert long_item.summary_length >= 600
    # AND the short one is under 600 (so AUBE-03 may open its page)
    assert short_item.summary == "Un produttore ha rilasciato una patch urgente. Aggiornate subito."
    assert short_item.summary_length == len(short_item.summary) < 600


def test_aube_03_max_summary_chars_trims_text_but_not_the_length() -> None:
    full = parse_feed(load("wordpress_rss2.xml"), base_url="https://b.example/", max_items=1)
    trimmed = parse_feed(load("wordpress_rss2.xml"), base_url="https://b.example/", max_items=1, max_summary_chars=100)
    assert trimmed.items[0].summary is not None and len(trimmed.items[0].summary) <= 100
    assert full.items[0].summary is not None and full.items[0].summary.startswith(trimmed.items[0].summary)
    assert trimmed.items[0].summary_length == full.items[0].summary_length


def test_praha_01_atom_xhtml_content_with_xml_base() -> None:
    # GIVEN an Atom feed with xml:base, type="xhtml" content and an HTML-typed title
    result = parse_feed(load("atom_xhtml.xml"), base_url="https://kodeblogg.example/blogg/atom.xml", max_items=40)
    first = result.items[0]
    # THEN the title loses its markup, the relative link resolves, the content is plain text
    assert result.error is None and result.title == "Kodebloggen"
    assert first.title == "Hvorfor enkle verktøy vinner"
    assert first.link == "https://kodeblogg.example/blogg/2026/11/enkle-verktoy.html"
    assert first.published == "2026-11-30T09:00:00Z"
    assert first.guid == "tag:kodeblogg.example,2026:enkle-verktoy"
    assert first.summary is not None
    assert "enkle verktøyene holder lenger" in first.summary and "<" not in first.summary
    # words of adjacent block elements stay apart
    assert "Færre avhengigheter Raskere oppstart" in first.summary
    # an entry with only <updated> still gets a date
    assert result.items[1].published == "2026-11-27T15:45:00Z"


def test_praha_01_rss10_rdf_with_dc_date() -> None:
    result = parse_feed(load("rss10_rdf.xml"), base_url="https://mestska-cast.example/rss", max_items=40)
    assert result.error is None
    assert result.title == "Městská část: úřední deska"
    assert [(i.title, i.published) for i in result.items] == [
        ("Částečná uzavírka ulice Na Výsluní", "2026-11-30T07:15:00Z"),
        ("Pozvánka na zasedání zastupitelstva", "2026-11-27T00:00:00Z"),
    ]
    assert result.items[0].link == "https://mestska-cast.example/deska/2026/1130-uzavirka"


def test_praha_01_windows_1250_declared_in_prolog_is_decoded() -> None:
    # GIVEN a Czech municipal feed in windows-1250, served with a bare content type
    body = load("praha_windows1250.xml")
    assert "Úprava".encode("cp1250") in body  # the fixture really is windows-1250
    result = parse_feed(body, base_url="https://www.praha99.example/rss", content_type="application/rss+xml",
                        max_items=40)
    # THEN the Czech letters survive
    assert result.error is None
    assert result.title == "Městská část Praha 99 – Aktuality"
    assert result.items[0].title == "Úprava otevírací doby podatelny během svátků"
    assert result.items[1].summary == "Velkoobjemové kontejnery budou přistaveny v ulicích Šťastná, Řeznická a Žitná."
    assert result.items[1].published == "2026-11-27T13:30:00Z"


def test_rss091_with_external_doctype_parses_without_fetching_it(no_network: None) -> None:
    # GIVEN an RSS 0.91 feed whose DOCTYPE points at netscape.com (no internal subset)
    result = parse_feed(load("rss091.xml"), base_url="http://retro.example/rss.xml", max_items=40)
    # THEN it parses and nothing was fetched (the fixture would fail on any socket)
    assert result.error is None
    assert [i.link for i in result.items] == [
        "http://retro.example/notes/keyboard.html",
        "http://retro.example/notes/floppy.html",
    ]
    assert result.items[0].published is None


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.xml")))
def test_every_fixture_dates_are_iso_utc_or_none(name: str) -> None:
    result = parse_feed(load(name), base_url="https://x.example/feed", max_items=40)
    assert result.error is None and result.items
    for item in result.items:
        assert item.published is None or ISO_UTC.match(item.published)
        assert item.link is None or item.link.startswith(("http://", "https://"))


def test_spring_01_feed_item_has_no_author_field() -> None:
    # dc:creator is in the WordPress fixture; there is nowhere for it to go
    names = {f.name for f in fields(FeedItem)}
    assert names == {"title", "link", "published", "summary", "summary_length", "guid", "bad_link"}
    result = parse_feed(load("wordpress_rss2.xml"), base_url="https://b.example/", max_items=40)
    assert "Giulia Redazione" not in repr(result)


def test_javascript_links_in_a_feed_are_dropped() -> None:
    body = b'<rss version="2.0"><channel><item><title>x</title><link>javascript:alert(1)</link></item></channel></rss>'
    result = parse_feed(body, base_url="https://x.example/feed", max_items=40)
    assert result.error is None and result.items[0].link is None


def test_feedparser_only_ever_sees_a_byte_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    # feedparser fetches str URLs and opens bytes as file names: it must get neither.
    seen: list[object] = []
    real_parse = feedparser.parse

    def spy(source: object, *args: object, **kwargs: object) -> object:
        seen.append(source)
        return real_parse(source, *args, **kwargs)

    monkeypatch.setattr(feeds.feedparser, "parse", spy)
    parse_feed(load("atom_xhtml.xml"), base_url="https://kodeblogg.example/atom.xml", max_items=40)
    assert len(seen) == 1 and hasattr(seen[0], "read") and not isinstance(seen[0], (str, bytes))


def test_html_to_text_drops_scripts_and_separates_blocks() -> None:
    assert html_to_text("<p>a</p><p>b<br>c</p><script>x()</script><style>p{}</style>") == "a b c"
    assert html_to_text("plain   text\n") == "plain text"


# --- hostile input -----------------------------------------------------------


def test_truncated_feed_keeps_the_complete_items_before_the_break() -> None:
    # GIVEN the WordPress feed cut inside its third item
    body = load("wordpress_rss2.xml")[:3500]
    # WHEN it is parsed
    result = parse_feed(body, base_url="https://b.example/", max_items=40)
    # THEN the two complete items are kept, the cut one is not, and the cut is recorded
    assert result.error is None
    assert [i.title for i in result.items] == [
        "Il nuovo compilatore arriva in beta",
        "Breve: aggiornamento di sicurezza per i router domestici",
    ]
    assert result.recovered == ("truncated: kept the entries before the break",)
    assert result.detail == "truncated: kept the entries before the break"


def test_feed_cut_inside_its_first_item_has_no_items_and_says_why() -> None:
    result = parse_feed(load("wordpress_rss2.xml")[:1500], base_url="https://b.example/", max_items=40)
    assert (result.error, result.items) == (None, ())
    assert result.recovered == ("truncated: no complete entry before the break",)


def test_aube_01_a_cdata_section_never_closed_is_closed_before_its_element_ends() -> None:
    # GIVEN a feed whose authors forgot "]]>" twice (in the middle and at the end), one CDATA closed
    body = _rss("T", "<item><title>Uno</title><link>https://b.example/1</link><description>ok</description></item>"
                "<item><title>Due</title><link>https://b.example/2</link>"
                "<description><![CDATA[<p>mai chiuso</p></description></item>"
                "<item><title>Tre</title><link>https://b.example/3</link>"
                "<description><![CDATA[chiuso <b>bene</b>]]></description></item>"
                "<item><title>Quattro</title><link>https://b.example/4</link>"
                "<description><![CDATA[di nuovo</description></item>")
    # WHEN it is parsed THEN every item is kept with its own summary, and the mending is said
    result = parse_feed(body, base_url="https://b.example/", max_items=40)
    assert [(i.title, i.summary) for i in result.items] == [
        ("Uno", "ok"), ("Due", "mai chiuso"), ("Tre", "chiuso bene"), ("Quattro", "di nuovo")]
    assert result.recovered == ("unclosed_cdata: 2 section(s) closed before their element's end tag",)


def test_a_cdata_section_holding_its_element_s_end_tag_as_text_is_left_alone() -> None:
    body = _rss("T", "<item><title>X</title><link>https://b.example/x</link>"
                "<description><![CDATA[scrivi </description> nel codice]]></description></item>")
    result = parse_feed(body, base_url="https://b.example/", max_items=40)
    assert ([i.link for i in result.items], result.recovered) == (["https://b.example/x"], ())


def test_aube_03_a_feed_cut_inside_a_cdata_section_drops_the_cut_item() -> None:
    # The section never closes and no end tag follows: the transfer was cut there, and the
    # summary that would decide whether the article page is needed (AUBE-03) is not all here.
    body = _rss("T", "<item><title>Uno</title><link>https://b.example/1</link></item>"
                "<item><title>Due</title><link>https://b.example/2</link><description><![CDATA[<p>tagl")
    result = parse_feed(body[:body.index(b"tagl") + 4], base_url="https://b.example/", max_items=40)
    assert [i.link for i in result.items] == ["https://b.example/1"]
    assert result.recovered == ("truncated: kept the entries before the break",)


def test_billion_laughs_is_refused_quickly() -> None:
    decls = "".join(f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10))
    body = (f'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY lol0 "lol">{decls}]>'
            "<rss><channel><title>&lol9;</title></channel></rss>")
    t0 = time.perf_counter()
    result = parse_feed(body.encode(), base_url="https://b.example/", max_items=40)
    assert result.error == "entity_expansion"
    assert time.perf_counter() - t0 < 1.0


def test_billion_laughs_in_utf16_is_refused_too() -> None:
    decls = "".join(f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10))
    body = (f'<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE rss [<!ENTITY lol0 "lol">{decls}]>'
            "<rss><channel><title>&lol9;</title></channel></rss>")
    result = parse_feed(body.encode("utf-16"), base_url="https://b.example/", max_items=40)
    assert result.error == "entity_expansion"


def test_external_entity_is_refused_and_nothing_is_read(no_network: None) -> None:
    body = b'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><rss><channel><title>&xxe;</title></channel></rss>'
    result = parse_feed(body, base_url="https://b.example/", max_items=40)
    assert result.error == "entity_expansion" and result.title is None


def test_entity_text_inside_cdata_is_not_mistaken_for_a_declaration() -> None:
    body = (
        b'<rss version="2.0"><channel><title>XML tips</title><item><title>DTDs</title>'
        b"<description><![CDATA[Never accept <!DOCTYPE x [ <!ENTITY a 'b'> ]> from strangers]]></description>"
        b"</item></channel></rss>"
    )
    result = parse_feed(body, base_url="https://b.example/", max_items=40)
    assert result.error is None and result.items[0].title == "DTDs"


def test_fifty_megabyte_feed_is_refused_by_size_before_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a 50 MB feed (well-formed at the start) and a parser that must not be reached
    def must_not_parse(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed an oversized body")

    monkeypatch.setattr(feeds.feedparser, "parse", must_not_parse)
    monkeypatch.setattr(feeds, "parse_xml_recovering", must_not_parse)
    body = rss_with_items(1)[:-17] + b"<item><title>x</title></item>" * (50 * 2**20 // 29)
    assert len(body) > 10 * 2**20 * 4
    # WHEN parsed with the default cap
    t0 = time.perf_counter()
    result = parse_feed(body, base_url="https://b.example/", max_items=40)
    # THEN it is refused, fast
    assert result.error == "too_large" and result.items == ()
    assert time.perf_counter() - t0 < 0.5


def test_bytes_that_do_not_follow_the_declared_utf8_are_read_as_windows_1252() -> None:
    # GIVEN a feed that declares utf-8 but was written in windows-1252
    body = ('<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Café “Oost”</title>'
            "<item><title>Crème brûlée</title><link>https://b.example/1</link></item></channel></rss>").encode("cp1252")
    result = parse_feed(body, base_url="https://b.example/", max_items=40)
    # THEN it is read, and the reading is recorded
    assert (result.title, result.items[0].title) == ("Café “Oost”", "Crème brûlée")
    assert result.recovered == ("encoding: declared utf-8, read as cp1252",)


def test_http_charset_wins_over_the_declared_encoding() -> None:
    # GIVEN utf-8 declared in the prolog, windows-1252 sent and said so by HTTP
    body = ('<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Résumé</title>'
            "</channel></rss>").encode("cp1252")
    result = parse_feed(body, base_url="https://b.example/", content_type="application/rss+xml; charset=windows-1252",
                        max_items=40)
    # THEN the HTTP charset is used (as feedparser and browsers do): nothing needed mending
    assert (result.error, result.title, result.recovered) == (None, "Résumé", ())
    # AND it wins even where the declared encoding would also have decoded the bytes
    latin = '<?xml version="1.0" encoding="iso-8859-2"?><rss version="2.0"><channel><title>Ł</title></channel></rss>'
    result = parse_feed(latin.encode("cp1250"), base_url="https://b.example/",
                        content_type="text/xml; charset=windows-1250", max_items=40)
    assert result.title == "Ł"


def test_unknown_declared_encoding_is_read_as_utf8_and_recorded() -> None:
    body = b'<?xml version="1.0" encoding="x-klingon-9"?><rss version="2.0"><channel><title>ok</title></channel></rss>'
    result = parse_feed(body, base_url="https://b.example/", max_items=40)
    assert (result.error, result.title) == (None, "ok")
    assert result.recovered == ("encoding: unknown 'x-klingon-9' declared, read as utf-8",)


# --- what small sites get wrong, recovered the way feed readers do ------------


def _rss(channel_title: str, items: str, prolog: str = '<?xml version="1.0" encoding="utf-8"?>',
         after: str = "") -> bytes:
    return f'{prolog}<rss version="2.0"><channel><title>{channel_title}</title>{items}</channel></rss>{after}'.encode()


CLEAN_ITEMS = ("<item><title>Een</title><link>https://b.example/1</link></item>"
               "<item><title>Twee</title><link>https://b.example/2</link></item>")


def test_html_entity_only_in_the_channel_title_no_longer_loses_clean_items() -> None:
    # GIVEN &nbsp; in the channel title and two clean items
    result = parse_feed(_rss("Nieuws&nbsp;&amp; meer", CLEAN_ITEMS), base_url="https://b.example/", max_items=40)
    # THEN both items come back and the title reads as meant
    assert [i.link for i in result.items] == ["https://b.example/1", "https://b.example/2"]
    assert result.title == "Nieuws & meer"  # the no-break space is whitespace to html_to_text
    assert result.recovered == ("html_entities: 1 (&nbsp;)",)


def test_html_entities_in_items_are_decoded() -> None:
    items = "<item><title>Caf&eacute; &hellip; &Omega;</title><link>https://b.example/1</link></item>"
    result = parse_feed(_rss("T", items), base_url="https://b.example/", max_items=40)
    assert result.items[0].title == "Café … Ω"
    assert result.recovered == ("html_entities: 3 (&eacute;, &hellip;, &Omega;)",)


@pytest.mark.parametrize("prolog", ["\n\n<?xml version=\"1.0\"?>",
                                    "<!-- generated by hand -->\n<?xml version=\"1.0\"?>",
                                    "  \r\n<!-- a --><!-- b -->\n<?xml version='1.0' encoding='utf-8'?>"])
def test_blank_lines_or_comment_before_the_xml_declaration(prolog: str) -> None:
    result = parse_feed(_rss("T", CLEAN_ITEMS, prolog=prolog), base_url="https://b.example/", max_items=40)
    assert len(result.items) == 2
    assert result.recovered == ("leading_junk: removed before the XML declaration",)


def test_php_warning_after_the_root_is_dropped() -> None:
    warning = "\n<br />\n<b>Warning</b>:  Undefined variable $x in <b>/var/www/feed.php</b> on line <b>12</b><br />\n"
    result = parse_feed(_rss("T", CLEAN_ITEMS, after=warning), base_url="https://b.example/", max_items=40)
    assert len(result.items) == 2
    assert result.recovered == ("trailing_junk: removed after the root element",)


def test_php_warning_before_the_root_is_dropped() -> None:
    warning = "<br />\n<b>Deprecated</b>:  strftime() in <b>/var/www/feed.php</b><br />\n"
    result = parse_feed(_rss("T", CLEAN_ITEMS, prolog=warning), base_url="https://b.example/", max_items=40)
    assert len(result.items) == 2
    assert result.recovered == ("leading_junk: removed before the root element",)


def test_bare_ampersand_in_title_and_link() -> None:
    items = "<item><title>Tom & Jerry</title><link>https://b.example/?a=1&b=2</link></item>"
    result = parse_feed(_rss("T", items), base_url="https://b.example/", max_items=40)
    assert (result.items[0].title, result.items[0].link) == ("Tom & Jerry", "https://b.example/?a=1&b=2")
    assert result.recovered == ("bare_ampersands: 2",)


def test_ampersand_inside_cdata_is_left_alone() -> None:
    items = "<item><title><![CDATA[A &nbsp; & B]]></title><link><![CDATA[https://b.example/?a=1&b=2]]></link></item>"
    result = parse_feed(_rss("T", items), base_url="https://b.example/", max_items=40)
    assert result.items[0].link == "https://b.example/?a=1&b=2"
    assert result.recovered == ()


def test_undeclared_namespace_prefixes_are_declared() -> None:
    items = ('<item><title>Foto</title><link>https://b.example/1</link><dc:creator>Anna</dc:creator>'
             '<media:content url="https://b.example/1.jpg" medium="image"/>'
             '<dc:date>2026-11-30T10:00:00Z</dc:date></item>')
    result = parse_feed(_rss("T", items), base_url="https://b.example/", max_items=40)
    assert [i.link for i in result.items] == ["https://b.example/1"]
    # dc:date is read as the Dublin Core date it is, so the prefix got its real namespace
    assert result.items[0].published == "2026-11-30T10:00:00Z"
    assert result.recovered == ("undeclared_prefixes: dc, media",)


def test_raw_html_in_a_description_is_read_as_text() -> None:
    items = ("<item><title>Een</title><description>Regel een<br>regel twee<p>alinea <img src=x.jpg> "
             "a < b</description><link>https://b.example/1</link></item>"
             "<item><title>Twee</title><link>https://b.example/2</link></item>")
    result = parse_feed(_rss("T", items), base_url="https://b.example/", max_items=40)
    assert [i.link for i in result.items] == ["https://b.example/1", "https://b.example/2"]
    assert result.items[0].summary == "Regel een regel twee alinea a < b"
    assert result.recovered == ("raw_html: 1 element(s) read as text",)


def test_well_formed_xhtml_content_is_not_touched() -> None:
    result = parse_feed(load("atom_xhtml.xml"), base_url="https://kodeblogg.example/atom.xml", max_items=40)
    assert result.recovered == ()


def test_control_characters_are_removed() -> None:
    items = "<item><title>Be\x0bep\x1b</title><link>https://b.example/1</link><description>a&#1;b</description></item>"
    result = parse_feed(_rss("T", items), base_url="https://b.example/", max_items=40)
    assert (result.items[0].title, result.items[0].summary) == ("Beep", "ab")
    assert result.recovered == ("control_characters: 3 removed",)


def test_several_faults_at_once_are_each_recorded() -> None:
    body = ("\n<?xml version='1.0' encoding='utf-8'?><rss version='2.0'><channel><title>Caf\xe9&nbsp;Noord</title>"
            "<item><title>A & B</title><link>https://b.example/1</link><media:thumbnail url='t.jpg'/></item>"
            "<item><title>cut</title><link>https://b.exa").encode("cp1252")
    result = parse_feed(body, base_url="https://b.example/", max_items=40)
    assert [i.link for i in result.items] == ["https://b.example/1"]
    assert result.recovered == (
        "encoding: declared utf-8, read as cp1252",
        "leading_junk: removed before the XML declaration",
        "truncated: kept the entries before the break",
        "html_entities: 1 (&nbsp;)",
        "bare_ampersands: 1",
        "undeclared_prefixes: media",
    )


def test_doctype_entity_declarations_are_still_refused_with_their_reason() -> None:
    body = (b'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY copy "(c)">]>'
            b'<rss version="2.0"><channel><title>&copy;</title></channel></rss>')
    assert parse_feed(body, base_url="https://b.example/", max_items=40).error == "entity_expansion"


def test_cdf_is_not_a_feed() -> None:
    body = b'<?xml version="1.0"?><CHANNEL HREF="http://b.example/"><TITLE>x</TITLE><ITEM HREF="http://b.example/1"/></CHANNEL>'
    assert parse_feed(body, base_url="https://b.example/", max_items=40).error == "not_a_feed"


def test_mended_text_is_capped_too() -> None:
    # Every bare "&" grows to "&amp;": a body of ampersands under the input cap would be five
    # times larger mended; the output cap (twice the input cap) refuses it.
    body = _rss("&" * 60_000, "")
    assert parse_feed(body, base_url="https://b.example/", max_items=40, max_bytes=70_000).error == "too_large"


@pytest.mark.parametrize(
    "body",
    [
        b"<!DOCTYPE html>\n<html><head><title>Not found</title></head><body><p>Sorry<br></body></html>",
        b"\n  <!-- cms -->\n<HTML><body>moved</body></HTML>",
        b'<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head><body/></html>',
    ],
)
def test_html_served_as_a_feed_is_not_a_feed(body: bytes) -> None:
    result = parse_feed(body, base_url="https://b.example/feed", content_type="text/html", max_items=40)
    assert result.error == "not_a_feed" and result.items == ()


def test_other_xml_is_not_a_feed() -> None:
    body = b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>'
    assert parse_feed(body, base_url="https://b.example/", max_items=40).error == "not_a_feed"


@pytest.mark.parametrize("body", [b"", b"   \r\n\t", b"\xef\xbb\xbf"])
def test_empty_body_is_empty(body: bytes) -> None:
    result = parse_feed(body, base_url="https://b.example/", max_items=40)
    assert result.error == "empty" and result.items == () and result.total_items == 0


@pytest.mark.parametrize("body", [b"https://evil.example/feed.xml", b"/etc/hostname", b'{"items": []}'])
def test_strings_feedparser_would_open_are_never_opened(no_network: None, body: bytes) -> None:
    result = parse_feed(body, base_url="https://b.example/", max_items=40)
    assert result.error == "malformed_xml" and result.items == ()


def test_aube_01_a_huge_feed_is_cut_to_max_items_before_feedparser_reads_it() -> None:
    # GIVEN 20,000 items, each with raw HTML and an HTML entity to mend
    items = "".join(f"<item><title>T{i}&nbsp;</title><link>https://b.example/{i}?a=1&b=2</link>"
                    f"<description>x<br>y</description></item>" for i in range(20_000))
    t0 = time.perf_counter()
    result = parse_feed(_rss("T", items), base_url="https://b.example/", max_items=AUBE_MAX_ITEMS)
    # THEN 40 items come back, all 20,000 are counted, and it stays fast
    assert (len(result.items), result.total_items) == (40, 20_000)
    assert time.perf_counter() - t0 < 5.0


@pytest.mark.parametrize("body", [
    b"<rss><channel>" + b"<description>" * 50_000,
    b"<rss><channel>" + b"<title>" * 50_000 + b"</title></channel></rss>",
    b"<rss><channel><item><description>" + b"<b>" * 100_000 + b"</description></item></channel></rss>",
])
def test_pathological_markup_is_mended_in_linear_time(body: bytes) -> None:
    t0 = time.perf_counter()
    parse_feed(body, base_url="https://b.example/", max_items=40)
    assert time.perf_counter() - t0 < 3.0


def test_a_feed_is_parsed_without_an_import_that_fails_each_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a feed parsed once (what it imports is imported), then a record of every module the
    # import system is asked to find
    assert parse_feed(rss_with_items(1), base_url="https://aube.example/feed", max_items=1).error is None
    asked: list[str] = []

    class Recorder:
        @staticmethod
        def find_spec(name: str, *args: object) -> None:
            asked.append(name)
            return None
    monkeypatch.setattr(sys, "meta_path", [Recorder(), *sys.meta_path])
    # WHEN a feed is parsed twice
    for _ in range(2):
        result = parse_feed(rss_with_items(3), base_url="https://aube.example/feed", max_items=AUBE_MAX_ITEMS)
        assert result.error is None and len(result.items) == 3
    # THEN nothing was looked for (feedparser's libxml2 driver, never installed, was looked for
    # on every parse), and its parser is expat
    assert asked == []
    assert feedparser.api.PREFERRED_XML_PARSERS == []

"""Sitemap parsing: SPRING-03 / WANNADO-06 / SUBSIDIE-01 start from sitemaps; gzip and size caps."""
from __future__ import annotations

import gzip
import time
import zlib
from pathlib import Path

import pytest

from heed_core.extract.sitemaps import SitemapEntry, gunzip_capped, parse_sitemap

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sitemaps"
INDEX_URL = "https://teater-aurora.example/sitemap_index.xml"


def load(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def zero_bomb(size: int) -> bytes:
    """A gzip stream that inflates to ``size`` zero bytes, built without holding them."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"\0" * 2**20
    parts = [comp.compress(block) for _ in range(size // len(block))]
    return b"".join(parts) + comp.flush()


def test_spring_03_sitemap_index_then_two_gzip_children() -> None:
    # GIVEN a sitemap index naming two gzipped child sitemaps
    index = parse_sitemap(load("sitemap_index.xml"), url=INDEX_URL)
    assert index.error is None and index.urls == ()
    assert index.children == (
        "https://teater-aurora.example/post-sitemap.xml.gz",
        "https://teater-aurora.example/voorstelling-sitemap.xml.gz",
    )
    # WHEN the children arrive gzipped (as served, no Content-Encoding)
    bodies = {
        index.children[0]: gz(load("post_sitemap.xml")),
        index.children[1]: gz(load("voorstelling_sitemap.xml")),
    }
    results = [parse_sitemap(bodies[child], url=child) for child in index.children]
    # THEN each is recognised by its magic bytes and its URLs come out in order
    assert [r.error for r in results] == [None, None]
    assert [e.loc for e in results[0].urls] == [
        "https://teater-aurora.example/nieuws/seizoen-2027-bekend/",
        "https://teater-aurora.example/nieuws/nieuwe-stoelen/",
    ]
    assert results[1].urls == (
        SitemapEntry("https://teater-aurora.example/agenda/de-storm/", "2026-11-29T17:03:10Z"),
        SitemapEntry("https://teater-aurora.example/agenda/kerstconcert/", "2026-11-28T00:00:00Z"),
        SitemapEntry("https://teater-aurora.example/agenda/jeugdvoorstelling-wolk/", None),
    )


def test_gzipped_index_is_read_too() -> None:
    result = parse_sitemap(gz(load("sitemap_index.xml")), url=INDEX_URL + ".gz")
    assert result.error is None and len(result.children) == 2


def test_subsidie_01_urlset_lastmod_in_utc_duplicates_and_bad_locs_dropped() -> None:
    result = parse_sitemap(load("urlset_lastmod.xml"), url="https://www.gemeente-veldhoven.example/sitemap.xml")
    assert result.error is None and result.children == ()
    assert result.urls == (
        SitemapEntry("https://www.gemeente-veldhoven.example/subsidies/", "2026-11-30T09:00:00Z"),
        SitemapEntry("https://www.gemeente-veldhoven.example/subsidies/sport-en-bewegen", "2026-11-30T09:00:00Z"),
        SitemapEntry("https://www.gemeente-veldhoven.example/subsidies/cultuur", "2026-11-01T00:00:00Z"),
        SitemapEntry("https://www.gemeente-veldhoven.example/subsidies/duurzaam-wonen", None),  # "binnenkort"
        SitemapEntry("https://www.gemeente-veldhoven.example/regelingen/verordening-2026", None),
    )
    assert result.skipped == (("javascript:alert(1)", "not_http"),)


def test_urlset_without_namespace_and_relative_loc() -> None:
    result = parse_sitemap(load("urlset_no_namespace.xml"), url="https://agenda.museum-example.nl/sitemap.xml")
    assert [e.loc for e in result.urls] == [
        "https://agenda.museum-example.nl/tentoonstellingen/",
        "https://agenda.museum-example.nl/tickets/",
    ]


def test_plain_text_sitemap_one_url_per_line() -> None:
    result = parse_sitemap(load("sitemap.txt"), url="https://bydel.example/sitemap.txt")
    assert result.error is None
    assert [e.loc for e in result.urls] == [
        "https://bydel.example/nyheter/",
        "https://bydel.example/nyheter/juletrekonsert",
        "https://bydel.example/nyheter/nytt-bibliotek",
    ]


def test_max_entries_caps_a_huge_sitemap() -> None:
    body = b"<urlset>" + b"".join(b"<url><loc>https://h.example/p%d</loc></url>" % i for i in range(300)) + b"</urlset>"
    result = parse_sitemap(body, url="https://h.example/sitemap.xml", max_entries=100)
    assert len(result.urls) == 100 and result.urls[-1].loc == "https://h.example/p99"


# --- hostile input -----------------------------------------------------------


def test_gzip_bomb_is_too_large_at_the_default_cap() -> None:
    # GIVEN ~60 KB of gzip that inflates to 51 MiB (cap: 50 MiB)
    bomb = zero_bomb(51 * 2**20)
    assert len(bomb) < 200_000
    t0 = time.perf_counter()
    result = parse_sitemap(bomb, url="https://h.example/sitemap.xml.gz")
    assert result.error == "too_large"
    assert time.perf_counter() - t0 < 2.0


def test_gzip_cap_never_holds_much_more_than_the_limit() -> None:
    with pytest.raises(OverflowError):
        gunzip_capped(zero_bomb(4 * 2**20), limit=2**20)
    assert gunzip_capped(gz(b"abc") + gz(b"def"), limit=10) == b"abcdef"  # multi-member


def test_truncated_gzip_is_a_decompression_error() -> None:
    body = gz(load("post_sitemap.xml"))
    assert parse_sitemap(body[: len(body) // 2], url="https://h.example/s.xml.gz").error == "decompression_error"
    assert parse_sitemap(b"\x1f\x8bnot gzip at all", url="https://h.example/s.xml.gz").error == "decompression_error"


def test_compressed_body_over_max_bytes_is_too_large() -> None:
    body = load("urlset_lastmod.xml")
    assert parse_sitemap(body, url="https://h.example/s.xml", max_bytes=len(body) - 1).error == "too_large"


@pytest.mark.parametrize("body", [b"", b"\n\n  ", gzip.compress(b"", mtime=0)])
def test_empty_sitemap_is_empty(body: bytes) -> None:
    assert parse_sitemap(body, url="https://h.example/sitemap.xml").error == "empty"


def test_billion_laughs_sitemap_is_refused() -> None:
    decls = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    body = (f'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY l0 "lol">{decls}]>'
            "<urlset><url><loc>&l9;</loc></url></urlset>")
    assert parse_sitemap(body.encode(), url="https://h.example/sitemap.xml").error == "entity_expansion"


def test_sitemap_cut_before_its_first_entry_ends_has_no_urls_and_says_why() -> None:
    body = load("urlset_lastmod.xml")[:400]
    result = parse_sitemap(body, url="https://h.example/sitemap.xml")
    assert (result.error, result.urls) == (None, ())
    assert result.recovered == ("truncated: no complete entry before the break",)


def test_html_page_served_as_sitemap_yields_no_urls() -> None:
    xhtml = b'<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><body><a href="/x">x</a></body></html>'
    assert parse_sitemap(xhtml, url="https://h.example/sitemap.xml").error == "not_a_sitemap"
    soup = b"<!DOCTYPE html><html><body><p>Pagina niet gevonden<br></body></html>"
    result = parse_sitemap(soup, url="https://h.example/sitemap.xml")
    assert result.error == "not_a_sitemap" and result.urls == ()


# --- what small sites get wrong ------------------------------------------------


def _urlset(*locs: str, prolog: str = '<?xml version="1.0" encoding="UTF-8"?>', close: bool = True) -> bytes:
    urls = "".join(f"<url><loc>{loc}</loc></url>" for loc in locs)
    end = "</urlset>" if close else ""
    return f'{prolog}<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}{end}'.encode()


@pytest.mark.parametrize("bad", ["http://[::1", "http://a]b/", "http://h.example:port/x"])
def test_malformed_loc_is_skipped_with_its_reason_and_the_rest_kept(bad: str) -> None:
    # GIVEN a sitemap with one loc urllib cannot read among good ones
    body = _urlset("https://h.example/a", bad, "https://h.example/b")
    # WHEN it is parsed THEN it does not raise, the good entries are kept, the bad one listed
    result = parse_sitemap(body, url="https://h.example/sitemap.xml")
    assert [e.loc for e in result.urls] == ["https://h.example/a", "https://h.example/b"]
    assert result.skipped == ((bad, "invalid_url"),)
    assert result.skipped_total == 1 and result.detail == "skipped: 1 entries"


def test_malformed_child_sitemap_is_skipped_too() -> None:
    body = (b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>http://[x</loc></sitemap>'
            b"<sitemap><loc>https://h.example/s2.xml</loc></sitemap></sitemapindex>")
    result = parse_sitemap(body, url="https://h.example/sitemap.xml")
    assert result.children == ("https://h.example/s2.xml",)
    assert result.skipped == (("http://[x", "invalid_url"),)


def test_blank_lines_before_the_xml_declaration() -> None:
    result = parse_sitemap(_urlset("https://h.example/a", prolog='\n\n<?xml version="1.0"?>'), url="https://h.example/s.xml")
    assert [e.loc for e in result.urls] == ["https://h.example/a"]
    assert result.recovered == ("leading_junk: removed before the XML declaration",)


def test_truncated_sitemap_keeps_the_complete_entries() -> None:
    body = _urlset("https://h.example/a", "https://h.example/b", close=False) + b"<url><loc>https://h.example/c-cut"
    result = parse_sitemap(body, url="https://h.example/s.xml")
    assert [e.loc for e in result.urls] == ["https://h.example/a", "https://h.example/b"]
    assert result.recovered == ("truncated: kept the entries before the break",)


def test_bare_ampersand_in_loc_is_recovered() -> None:
    result = parse_sitemap(_urlset("https://h.example/p?a=1&b=2", "https://h.example/q?x=1&amp;y=2"), url="https://h.example/s.xml")
    assert [e.loc for e in result.urls] == ["https://h.example/p?a=1&b=2", "https://h.example/q?x=1&y=2"]
    assert result.recovered == ("bare_ampersands: 1",)


def test_rss_feed_as_sitemap() -> None:
    body = (b'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><link>https://h.example/</link>'
            b"<item><title>A</title><link>https://h.example/a</link>"
            b"<pubDate>Mon, 30 Nov 2026 09:00:00 +0100</pubDate></item>"
            b"<item><title>B</title><link>/b</link></item></channel></rss>")
    result = parse_sitemap(body, url="https://h.example/feed.xml")
    assert (result.error, result.kind) == (None, "rss")
    assert result.urls == (SitemapEntry("https://h.example/a", "2026-11-30T08:00:00Z"),
                           SitemapEntry("https://h.example/b", None))


def test_atom_feed_as_sitemap_takes_the_alternate_link() -> None:
    body = (b'<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><link rel="self" href="https://h.example/atom"/>'
            b'<entry><title>A</title><link rel="edit" href="https://h.example/a?edit"/><link href="https://h.example/a"/>'
            b"<updated>2026-11-30T10:00:00+01:00</updated></entry></feed>")
    result = parse_sitemap(body, url="https://h.example/atom")
    assert (result.kind, result.urls) == ("atom", (SitemapEntry("https://h.example/a", "2026-11-30T09:00:00Z"),))


def test_text_without_urls_is_not_a_sitemap() -> None:
    assert parse_sitemap(b"User-agent: *\nDisallow: /\n", url="https://h.example/sitemap.txt").error == "not_a_sitemap"


@pytest.mark.parametrize("codec, bom", [("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"), ("utf-16-le", b""),
                                        ("utf-16-be", b""), ("utf-32-le", b"\xff\xfe\x00\x00")])
def test_wannado_06_a_utf16_sitemap_is_read_and_said(codec: str, bom: bytes) -> None:
    # GIVEN a sitemap written in UTF-16 (or 32), with a BOM or without, as some generators do
    prolog = '<?xml version="1.0" encoding="UTF-16"?>'
    text = _urlset("https://h.example/å", "https://h.example/b", prolog=prolog).decode()
    # WHEN it is read THEN its URLs are the UTF-8 sitemap's, and the encoding is said
    result = parse_sitemap(bom + text.encode(codec), url="https://h.example/s.xml")
    assert (result.error, result.kind) == (None, "urlset")
    assert [e.loc for e in result.urls] == ["https://h.example/%C3%A5", "https://h.example/b"]
    assert result.recovered == (f"encoding: {codec}{' (BOM)' if bom else ''}, not the UTF-8 sitemaps.org asks for",)


def test_a_utf16_plain_text_sitemap_with_a_bom_is_read() -> None:
    body = "\ufeffhttps://h.example/a\nhttps://h.example/b\n".encode("utf-16-le")
    result = parse_sitemap(body, url="https://h.example/sitemap.txt")
    assert (result.kind, [e.loc for e in result.urls]) == ("text", ["https://h.example/a", "https://h.example/b"])

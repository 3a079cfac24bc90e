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


@pytest.mark.parametrize("body", [b"", b"\n\n  ", gzip.compress(b"")])
def test_empty_sitemap_is_empty(body: bytes) -> None:
    assert parse_sitemap(body, url="https://h.example/sitemap.xml").error == "empty"


def test_billion_laughs_sitemap_is_refused() -> None:
    decls = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    body = f'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY l0 "lol">{decls}]><urlset><url><loc>&l9;</loc></url></urlset>'
    assert parse_sitemap(body.encode(), url="https://h.example/sitemap.xml").error == "entity_expansion"


def test_truncated_xml_sitemap_is_malformed() -> None:
    body = load("urlset_lastmod.xml")[:400]
    assert parse_sitemap(body, url="https://h.example/sitemap.xml").error == "malformed_xml"


def test_html_page_served_as_sitemap_yields_no_urls() -> None:
    xhtml = b'<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><body><a href="/x">x</a></body></html>'
    assert parse_sitemap(xhtml, url="https://h.example/sitemap.xml").error == "not_a_sitemap"
    soup = b"<!DOCTYPE html><html><body><p>Pagina niet gevonden<br></body></html>"
    result = parse_sitemap(soup, url="https://h.example/sitemap.xml")
    assert result.error == "malformed_xml" and result.urls == ()


def test_text_without_urls_is_not_a_sitemap() -> None:
    assert parse_sitemap(b"User-agent: *\nDisallow: /\n", url="https://h.example/sitemap.txt").error == "not_a_sitemap"

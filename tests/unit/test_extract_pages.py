"""Listing pages and titles: SPRING-01 (title, link, time only), SPRING-03 (JS pages yield nothing)."""
from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from heed_core.extract.pages import ListingItem, extract_listing, extract_title

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pages"
NEWS_URL = "https://bydelsavisa.example/nyheter/"


def load(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def test_spring_01_listing_item_has_only_title_link_and_time() -> None:
    assert [f.name for f in fields(ListingItem)] == ["title", "link", "published"]


def test_spring_01_article_listing_gives_title_link_time_and_no_people() -> None:
    # GIVEN a news listing with <article> teasers, bylines and a nested comment
    result = extract_listing(load("news_listing.html"), base_url=NEWS_URL)
    # THEN each teaser gives one item, links absolute, fragments gone, in page order
    assert result.error is None
    assert result.items == (
        ListingItem(
            "Nytt bibliotek åpner i januar",
            "https://bydelsavisa.example/nyheter/2026/11/30/nytt-bibliotek",
            "2026-11-30T09:00:00Z",
        ),
        ListingItem(
            "Juletrekonsert på torget",
            "https://bydelsavisa.example/nyheter/nyheter/2026/11/29/juletrekonsert?utm_source=forside",
            "2026-11-29T00:00:00Z",
        ),
        ListingItem(
            "Slik blir brøytingen i vinter",
            "https://bydelsavisa.example/nyheter/2026/11/28/br%C3%B8yting",  # non-ASCII encoded, as sent
            None,  # <time> without datetime: no guessing
        ),
        ListingItem(
            "Ny sykkelvei langs elva",
            "https://bydelsavisa.example/nyheter/2026/11/27/sykkelvei",
            "2026-11-27T07:30:00Z",
        ),
    )
    # AND neither the byline author nor the commenter appears anywhere
    text = repr(result)
    assert "Ola Nordmann" not in text and "kari82" not in text and "Gleder" not in text


def test_javascript_and_mailto_links_are_skipped() -> None:
    result = extract_listing(load("news_listing.html"), base_url=NEWS_URL)
    assert all(i.link.startswith("https://") for i in result.items)
    assert not any(i.title in ("Abonner på nyhetsbrevet", "Tips oss!") for i in result.items)


def test_duplicate_links_are_listed_once() -> None:
    result = extract_listing(load("news_listing.html"), base_url=NEWS_URL)
    links = [i.link for i in result.items]
    assert len(links) == len(set(links))


def test_feed_links_are_absolute_and_deduplicated() -> None:
    result = extract_listing(load("news_listing.html"), base_url=NEWS_URL)
    assert result.feed_links == (
        "https://bydelsavisa.example/nyheter/rss.xml",
        "https://bydelsavisa.example/nyheter/atom.xml",
    )


def test_spring_01_jsonld_itemlist_first_then_articles_without_bodies_or_authors() -> None:
    # GIVEN an ItemList in JSON-LD (with author and articleBody) and <article> teasers, one overlapping
    result = extract_listing(load("itemlist_jsonld.html"), base_url="https://cronache-digitali.example/notizie/")
    # THEN the JSON-LD items come first (its headline wins for the shared link), then the rest
    assert result.error is None
    assert result.items == (
        ListingItem(
            "Data center, nuove regole sull'efficienza energetica",
            "https://cronache-digitali.example/notizie/data-center-regole",
            "2026-11-30T06:45:00Z",
        ),
        ListingItem(
            "Smartphone ricondizionati: cosa sapere",
            "https://cronache-digitali.example/notizie/smartphone-ricondizionati",
            None,
        ),
        ListingItem(
            "Diario di un sistemista",
            "https://cronache-digitali.example/blog/diario-sistemista",
            "2026-11-28T00:00:00Z",
        ),
        ListingItem(
            "Una startup quantistica a Torino",
            "https://cronache-digitali.example/notizie/quantum-startup",
            "2026-11-29T15:00:00Z",
        ),
    )
    assert "Lucia Autrice" not in repr(result) and "Testo completo" not in repr(result)


def test_spring_03_javascript_built_page_yields_no_items() -> None:
    # GIVEN an app shell: an empty <div id="root"> and module scripts
    result = extract_listing(load("js_only.html"), base_url="https://kulturhuset.example/aktuelt")
    # THEN no items and no error: the caller falls back to the sitemap
    assert result.error is None
    assert result.items == ()


def test_single_article_page_via_opengraph() -> None:
    result = extract_listing(load("single_article_og.html"), base_url="https://stadtblatt.example/verkehr/neue-linie?ref=x")
    assert result.items == (
        ListingItem("Neue Straßenbahnlinie eröffnet", "https://stadtblatt.example/verkehr/neue-linie",
                    "2026-11-30T05:00:00Z"),
    )
    assert "Max" not in repr(result)


def test_website_opengraph_is_not_an_item() -> None:
    body = (b'<html><head><meta property="og:type" content="website">'
            b'<meta property="og:title" content="Home"></head></html>')
    assert extract_listing(body, base_url="https://h.example/").items == ()


def test_base_href_is_honoured_for_links() -> None:
    body = (b'<html><head><base href="https://cdn.h.example/blog/"></head>'
            b'<body><article><h2><a href="post-1">Post</a></h2></article></body></html>')
    assert extract_listing(body, base_url="https://h.example/").items[0].link == "https://cdn.h.example/blog/post-1"


def test_http_charset_is_used_when_the_page_declares_none() -> None:
    body = "<article><h2><a href='/a'>Žádost o příspěvek</a></h2></article>".encode("cp1250")
    result = extract_listing(body, base_url="https://obec.example/", content_type="text/html; charset=windows-1250")
    assert result.items[0].title == "Žádost o příspěvek"


def test_broken_and_hostile_jsonld_does_not_crash() -> None:
    deep = "[" * 50_000 + "]" * 50_000
    body = (
        f'<html><head><script type="application/ld+json">{deep}</script>'
        '<script type="application/ld+json">{"@type": "NewsArticle", "headline": 7, "url": ["x"]}</script>'
        '<script type="application/ld+json">'
        '{"@type": "NewsArticle", "headline": "Ok", "url": "javascript:x()"}</script>'
        "</head><body></body></html>"
    ).encode()
    result = extract_listing(body, base_url="https://h.example/")
    assert result.error is None and result.items == ()


def test_listing_too_large_and_empty_are_error_values() -> None:
    body = load("news_listing.html")
    assert extract_listing(body, base_url=NEWS_URL, max_bytes=len(body) - 1).error == "too_large"
    assert extract_listing(b"", base_url=NEWS_URL).error == "empty"
    assert extract_listing(b" \n ", base_url=NEWS_URL).items == ()


# --- extract_title -------------------------------------------------------------


def test_title_prefers_og_title() -> None:
    assert extract_title(load("news_listing.html")) == "Nyheter fra bydelen"


def test_title_falls_back_to_title_element_then_h1() -> None:
    assert extract_title(load("js_only.html")) == "Aktuelt – Kulturhuset"
    assert extract_title(b"<html><head><title>  </title></head><body><h1>\n  Om   oss </h1></body></html>") == "Om oss"


def test_title_whitespace_collapsed_and_trimmed_to_300() -> None:
    body = ("<title>" + "ord  \n " * 200 + "</title>").encode()
    title = extract_title(body)
    assert title is not None and len(title) <= 300 and "  " not in title and title.startswith("ord ord")


@pytest.mark.parametrize("body", [b"", b"<html><body><p>no title here</p></body></html>"])
def test_title_none_when_absent(body: bytes) -> None:
    assert extract_title(body) is None


def test_title_of_oversized_page_is_none() -> None:
    assert extract_title(b"<title>x</title>" + b" " * 100, max_bytes=50) is None

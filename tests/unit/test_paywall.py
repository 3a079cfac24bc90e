"""AUBE-06 / COMMON-07: a paywalled article is never extracted, even when the page carries its text."""
from __future__ import annotations

from pathlib import Path

import pytest

from heed_core.extract.paywall import is_paywalled

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "signals"


def html(head: str = "", body: str = "<p>Testo</p>") -> bytes:
    return f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>".encode()


def test_aube_06_paywalled_article_with_its_text_in_the_page():
    # GIVEN a NewsArticle whose full text is in the HTML, flagged not free in hasPart
    body = (FIXTURES / "paywalled_news_article.html").read_bytes()
    assert b"diciotto ore di autonomia" in body
    # WHEN checked
    d = is_paywalled(body)
    # THEN it is paywalled, on the strength of the schema.org flag
    assert d.paywalled is True
    assert d.marker == "json-ld:isAccessibleForFree"


def test_aube_06_free_article_is_not_paywalled():
    d = is_paywalled((FIXTURES / "free_news_article.html").read_bytes())
    assert (d.paywalled, d.marker) == (False, None)


@pytest.mark.parametrize("value", ["false", "False", "FALSE", "https://schema.org/False"])
def test_aube_06_string_false_values_count(value):
    head = f'<script type="application/ld+json">{{"@type":"NewsArticle","isAccessibleForFree":"{value}"}}</script>'
    assert is_paywalled(html(head)).paywalled is True


def test_aube_06_flag_only_inside_has_part_in_a_graph():
    head = ('<script type="application/ld+json">{"@graph":[{"@type":"WebSite"},{"@type":"NewsArticle",'
            '"hasPart":[{"@type":"WebPageElement","isAccessibleForFree":false,"cssSelector":".x"}]}]}</script>')
    assert is_paywalled(html(head)).paywalled is True


def test_aube_06_broken_json_ld_block_does_not_hide_another_blocks_flag():
    head = ('<script type="application/ld+json">{"@type": "BreadcrumbList",,}</script>'
            '<script type="application/ld+json">{"@type":"Article","isAccessibleForFree":false}</script>')
    assert is_paywalled(html(head)).paywalled is True


def test_aube_06_microdata_flag():
    body = ('<article itemscope itemtype="https://schema.org/NewsArticle">'
            '<meta itemprop="isAccessibleForFree" content="false"><p>Testo</p></article>')
    d = is_paywalled(html(body=body))
    assert (d.paywalled, d.marker) == (True, "microdata:isAccessibleForFree")


@pytest.mark.parametrize(
    ("head", "body", "marker"),
    [
        ('<meta name="article:content_tier" content="locked">', "", "meta:article:content_tier=locked"),
        ('<meta property="article:content_tier" content="Metered">', "", "meta:article:content_tier=metered"),
        ("", '<div class="tp-modal tp-active"></div>', "class:tp-modal"),
        ("", '<section class="article paywall"><p>Abbonati</p></section>', "class:paywall"),
        ("", '<div data-paywall="hard"></div>', "data-paywall"),
        ("", '<div id="paywall"></div>', "id:paywall"),
    ],
)
def test_common_07_common_paywall_markers(head, body, marker):
    d = is_paywalled(html(head, body))
    assert (d.paywalled, d.marker) == (True, marker)


@pytest.mark.parametrize(
    "body",
    [
        '<div class="no-paywall-promo">x</div>',
        '<div data-paywall="false">x</div>',
        '<p>Un articolo sul paywall dei giornali.</p>',
    ],
)
def test_common_07_look_alikes_are_not_paywalls(body):
    assert is_paywalled(html(body=body)).paywalled is False


def test_common_07_free_content_tier_is_not_a_paywall():
    assert is_paywalled(html('<meta name="article:content_tier" content="free">')).paywalled is False


def test_aube_06_oversized_page_is_treated_as_paywalled():
    d = is_paywalled(html() + b" " * 200, max_bytes=100)
    assert (d.paywalled, d.error) == (True, "too_large")


def test_aube_06_bad_input_never_raises():
    assert is_paywalled(b"").error == "empty"
    assert is_paywalled(b"\xff\xfe\x00<<<>>>").paywalled is False
    deep = '<script type="application/ld+json">' + "[" * 50_000 + "</script>"
    assert is_paywalled(html(deep)).paywalled is False

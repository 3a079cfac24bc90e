"""Weekly site check: PRAHA-04 keeps only the site's name and its icon URL from a home page."""
from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from heed_core.extract.site_check import SiteInfo, default_icon_url, site_info

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pages"


def load(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def test_praha_04_site_info_holds_nothing_of_the_page_but_name_and_icon() -> None:
    assert {f.name for f in fields(SiteInfo)} == {"name", "icon_url", "error"}


def test_praha_04_name_from_og_site_name_and_icon_prefers_rel_icon() -> None:
    # GIVEN a windows-1250 home page with og:site_name, an apple-touch-icon listed first, then rel=icon
    info = site_info(load("home_og.html"), base_url="https://www.horni-lhota.example/")
    # THEN the og name (whitespace collapsed) and the rel=icon link win
    assert info.name == "Obecní zpravodaj Horní Lhota"
    assert info.icon_url == "https://www.horni-lhota.example/static/favicon-32x32.png"
    assert info.error is None
    assert "Úřední hodiny" not in repr(info)


def test_praha_04_name_falls_back_to_title_and_icon_to_apple_touch_icon() -> None:
    # GIVEN a page with only a <title>, a data: icon (unfetchable) and a touch icon under <base>
    info = site_info(load("home_minimal.html"), base_url="https://knihovna.example/")
    assert info.name == "Technická knihovna"
    assert info.icon_url == "https://cdn.knihovna.example/static/touch.png"


def test_praha_04_shortcut_icon_counts_as_icon() -> None:
    body = (b'<html><head><link rel="apple-touch-icon" href="/t.png">'
            b'<link rel="Shortcut Icon" href="/s.ico"></head></html>')
    assert site_info(body, base_url="https://h.example/").icon_url == "https://h.example/s.ico"


def test_praha_04_default_icon_is_favicon_on_the_origin() -> None:
    # GIVEN a page with no icon link, fetched from a deep URL on a non-default port
    info = site_info(load("js_only.html"), base_url="http://kulturhuset.example:8080/aktuelt/idag?x=1")
    assert info.icon_url == "http://kulturhuset.example:8080/favicon.ico"
    assert info.name == "Aktuelt – Kulturhuset"


def test_default_icon_url_keeps_scheme_and_host() -> None:
    assert default_icon_url("https://praha.example/a/b.html#top") == "https://praha.example/favicon.ico"


@pytest.mark.parametrize("body,error", [(b"", "empty"), (b"<title>x</title>" + b" " * 200, "too_large")])
def test_unreadable_home_page_still_gives_default_icon(body: bytes, error: str) -> None:
    info = site_info(body, base_url="https://h.example/start", max_bytes=100)
    assert info == SiteInfo(name=None, icon_url="https://h.example/favicon.ico", error=error)


def test_page_without_name_has_none() -> None:
    info = site_info(b"<html><body><div id='app'></div></body></html>", base_url="https://h.example/")
    assert info.name is None and info.icon_url == "https://h.example/favicon.ico"

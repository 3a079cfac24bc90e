"""URL facts (authority, paths, safe joins) and work items (round trip, stable ids, frontier order)."""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from heed_core.urls import BadUrl, absolute, authority, group_id, path_of, robots_url, same_authority, under_path
from heed_core.work import Source, WorkItem

# --- authority() -----------------------------------------------------------------------------------


@pytest.mark.parametrize("url, expected", [
    ("https://example.nl/a/b?c=d#e", "https://example.nl:443"),
    ("http://example.nl", "http://example.nl:80"),
    ("HTTPS://Example.NL/Path", "https://example.nl:443"),
    ("https://example.nl:443/", "https://example.nl:443"),
    ("https://example.nl:8443/x", "https://example.nl:8443"),
    ("http://example.nl:443/", "http://example.nl:443"),
    ("http://user:pw@example.nl:8080/", "http://example.nl:8080"),
    ("http://[2001:DB8::1]/x", "http://[2001:db8::1]:80"),
    ("https://[::1]:8443/", "https://[::1]:8443"),
    ("http://127.0.0.2:5000/robots.txt", "http://127.0.0.2:5000"),
])
def test_authority_is_scheme_host_port(url: str, expected: str) -> None:
    assert authority(url) == expected


@pytest.mark.parametrize("url", [
    "ftp://example.nl/file",
    "/relative/path",
    "example.nl/page",
    "http://",
    "https://example.nl:99999/",
    "https://example.nl:port/",
    "mailto:someone@example.nl",
    "",
])
def test_authority_refuses_what_is_not_an_http_url(url: str) -> None:
    with pytest.raises(BadUrl):
        authority(url)


def test_port_zero_is_not_the_default_port() -> None:
    assert authority("http://example.nl:0/") != authority("http://example.nl/")


def test_subsidie_10_each_subdomain_is_its_own_host() -> None:
    assert authority("https://example.nl/subsidies") != authority("https://subsidies.example.nl/")
    assert robots_url("https://subsidies.example.nl/regeling") == "https://subsidies.example.nl/robots.txt"
    assert robots_url("https://example.nl/regeling") == "https://example.nl/robots.txt"
    assert not same_authority("https://example.nl/", "https://subsidies.example.nl/")
    assert not same_authority("http://example.nl/", "https://example.nl/")
    assert same_authority("https://EXAMPLE.nl/a", "https://example.nl:443/b")


def test_same_authority_with_a_bad_url_is_false() -> None:
    assert not same_authority("javascript:alert(1)", "https://example.nl/")


def test_group_id_fits_sqs() -> None:
    long = "https://" + "a" * 200 + ".example:443"
    assert group_id("https://example.nl:443") == "https://example.nl:443"
    assert len(group_id(long)) <= 128
    assert group_id(long) == group_id(long)


# --- paths -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("url, expected", [
    ("https://example.nl", "/"),
    ("https://example.nl/a/b", "/a/b"),
    ("https://example.nl/a?b=1&c", "/a?b=1&c"),
    ("https://example.nl/a#frag", "/a"),
])
def test_path_of(url: str, expected: str) -> None:
    assert path_of(url) == expected


@pytest.mark.parametrize("url, base, expected", [
    ("https://site.no/blogg/post-1", "https://site.no/blogg/", True),
    ("https://site.no/blogg/2024/post", "https://site.no/blogg/", True),
    ("https://site.no/blogg/post-1", "https://site.no/blogg/index.html", True),  # the directory of a file
    ("https://site.no/blogg/post-1", "https://site.no/blogg", True),  # "/blogg" lives in "/"
    ("https://site.no/annet/side", "https://site.no/blogg/", False),
    ("https://site.no/bloggen/side", "https://site.no/blogg/", False),
    ("https://other.no/blogg/post-1", "https://site.no/blogg/", False),
    ("http://site.no/blogg/post-1", "https://site.no/blogg/", False),
    ("https://site.no/", "https://site.no/", True),
])
def test_spring_03_under_path(url: str, base: str, expected: bool) -> None:
    assert under_path(url, base) is expected


# --- absolute() ------------------------------------------------------------------------------------

@pytest.mark.parametrize("base, href, expected", [
    ("https://example.nl/a/b", "c", "https://example.nl/a/c"),
    ("https://example.nl/a/b", "/c?d=1#top", "https://example.nl/c?d=1"),
    ("https://example.nl/a/b", "#only-a-fragment", "https://example.nl/a/b"),
    ("https://example.nl/a/b", "//cdn.example.nl/x", "https://cdn.example.nl/x"),
    ("https://example.nl/a/b", "  https://other.nl  ", "https://other.nl/"),
    ("https://example.nl/a/b", "HTTP://Other.nl/X", "http://other.nl/X"),  # scheme and host lower-cased
    ("https://example.nl/a/b", "javascript:alert(1)", None),
    ("https://example.nl/a/b", "mailto:info@example.nl", None),
    ("https://example.nl/a/b", "tel:+31201234567", None),
    ("https://example.nl/a/b", "data:text/html,hi", None),
    ("https://example.nl/a/b", "ftp://example.nl/file", None),
    ("https://example.nl/a/b", "http://[::1", None),
])
def test_absolute(base: str, href: str, expected: str | None) -> None:
    assert absolute(base, href) == expected


# --- WorkItem ------------------------------------------------------------------------------------------

def _item(**changes: Any) -> WorkItem:
    base = WorkItem(url="https://news.example/feed", purpose="feed", task="feed", source_id="feed-abc",
                    source_url="https://news.example/feed", round_id="2024-03-04T12:15:00Z/feed",
                    round_start=1709554500.0)
    return replace(base, **changes)


def test_work_item_round_trip_through_dict_and_json() -> None:
    item = _item(depth=2, hop=1, seq=7, not_before=1709554600.5, attempts=2, failures=1,
                 ctx={"role": "agenda", "level": 1, "titles": ["a", "b"]})
    back = WorkItem.from_dict(json.loads(json.dumps(item.to_dict())))
    assert back == item
    assert back.work_id == item.work_id


def test_work_item_from_a_minimal_dict_takes_defaults() -> None:
    item = _item()
    minimal = {k: v for k, v in item.to_dict().items() if k in (
        "url", "purpose", "task", "source_id", "source_url", "round_id", "round_start")}
    assert WorkItem.from_dict(minimal) == item


def test_work_item_host_is_its_authority() -> None:
    assert _item(url="https://News.Example/x").host == "https://news.example:443"


def test_work_id_is_stable_and_depends_on_what_the_work_is() -> None:
    item = _item()
    assert item.work_id == _item().work_id
    assert item.work_id == _item(seq=5, depth=3, attempts=2, not_before=99.0).work_id  # bookkeeping only
    others = [_item(url="https://news.example/other"), _item(hop=1), _item(purpose="page"),
              _item(round_id="2024-03-04T12:30:00Z/feed"), _item(source_id="feed-def")]
    assert len({item.work_id} | {o.work_id for o in others}) == 1 + len(others)


def test_order_key_sorts_by_round_then_depth_then_seq() -> None:
    items = [
        _item(round_start=2000.0, depth=0, seq=0, url="https://h.example/5"),
        _item(round_start=1000.0, depth=1, seq=0, url="https://h.example/3"),
        _item(round_start=1000.0, depth=0, seq=12, url="https://h.example/2"),
        _item(round_start=1000.0, depth=0, seq=2, url="https://h.example/1"),
        _item(round_start=1000.0, depth=10, seq=0, url="https://h.example/4"),
    ]
    ordered = sorted(items, key=lambda i: i.order_key)
    assert [i.url for i in ordered] == [f"https://h.example/{n}" for n in range(1, 6)]


def test_follow_is_one_level_deeper_with_fresh_bookkeeping() -> None:
    parent = _item(hop=2, attempts=3, failures=1, not_before=5.0, ctx={"role": "agenda"})
    child = parent.follow("https://news.example/article", "article", seq=4, ctx={"level": 1})
    assert (child.url, child.purpose, child.depth, child.seq) == ("https://news.example/article", "article", 1, 4)
    assert (child.hop, child.attempts, child.failures, child.not_before) == (0, 0, 0, 0.0)
    assert dict(child.ctx) == {"role": "agenda", "level": 1}
    assert dict(parent.ctx) == {"role": "agenda"}  # the parent's context is not touched
    assert (child.source_id, child.round_id) == (parent.source_id, parent.round_id)


def test_source_id_is_stable_per_url_and_kind() -> None:
    assert Source.make_id("https://x.example/feed", "feed") == Source.make_id("https://x.example/feed", "feed")
    assert Source.make_id("https://x.example/feed", "feed") != Source.make_id("https://x.example/feed", "page")
    assert Source.make_id("https://x.example/feed", "feed").startswith("feed-")

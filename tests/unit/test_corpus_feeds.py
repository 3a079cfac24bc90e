"""feedparser's own test feeds against Heed's feed parser (AUBE-01, PRAHA-01).

The feeds are feedparser's (read from ../shared, see tests/support/corpora.py; skipped where it
is absent). Wherever the installed feedparser reads entries from a corpus file, Heed yields the
same items (count and links), except the deliberate refusals in
tests/fixtures/feeds-corpus-refusals.md; no file makes the parser raise. Counts are printed and
checked against a baseline that must not drop (tests/fixtures/corpus_baseline.json).
"""
from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import feedparser
import pytest

from heed_core.extract.feeds import FeedResult, parse_feed
from heed_core.urls import Refused, resolve

from tests.support.corpora import corpus

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REFUSALS = FIXTURES / "feeds-corpus-refusals.md"
BASELINE = FIXTURES / "corpus_baseline.json"
_HEADER = re.compile(rb"^Header:\s+([^:]+):(.*)$", re.M)
_ROW = re.compile(r"^\|\s*([\w./-]+\.xml)\s*\|", re.M)
_CUT_ROW = re.compile(r"^\|\s*cut-inside-an-item\s*\|", re.M)
# The last entry of a feed, by its start tag (RSS item, Atom entry, with a prefix or not).
_ENTRY_START = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?(item|entry)[\s>]")


def _http(link: object) -> str | None:
    """feedparser's link in the one spelling Heed requests (heed_core.urls: the URL Standard)."""
    if not isinstance(link, str):
        return None
    parts = urlsplit(link)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    got = resolve(None, link)
    return None if isinstance(got, Refused) else str(got)


def _content_type(data: bytes) -> str | None:
    headers = {k.strip().lower(): v.strip() for k, v in _HEADER.findall(data)}
    value = headers.get(b"content-type")
    return value.decode("latin-1") if value else None


def _feeds() -> Path:
    """feedparser's test feeds: ../shared/vendored/feedparser (peer-data/feeds/feedparser is the same set)."""
    return corpus("feedparser", "feeds/feedparser")


def _both(name: str, data: bytes, header_from: bytes | None = None) -> tuple[Any, FeedResult]:
    """feedparser's and Heed's reading of ``data``, served as the corpus file ``name`` with the
    Content-Type its ``Header:`` comment gives (read from ``header_from`` when ``data`` is a piece)."""
    ctype = _content_type(data if header_from is None else header_from)
    url = f"http://127.0.0.1:8097/tests/{name}"
    theirs = feedparser.parse(io.BytesIO(data), response_headers={
        "content-type": ctype or "text/xml", "content-location": url})
    return theirs, parse_feed(data, base_url=url, content_type=ctype, max_items=10_000)


def _read_all(where: Path) -> list[tuple[str, int, list[str | None], list[str | None], str | None]]:
    """(file, feedparser's entry count, its links, Heed's links, Heed's error) per corpus file."""
    rows = []
    for path in sorted(where.rglob("*.xml")):
        name = path.relative_to(where).as_posix()
        theirs, ours = _both(name, path.read_bytes())
        rows.append((name, len(theirs.entries), [_http(e.get("link")) for e in theirs.entries],
                     [i.link for i in ours.items], ours.error))
    return rows


@pytest.fixture(scope="module")
def readings() -> list[tuple[str, int, list[str | None], list[str | None], str | None]]:
    where = _feeds()
    rows = _read_all(where)
    assert len(rows) > 2000, f"feedparser's corpus is incomplete under {where}: {len(rows)} feeds"
    return rows


def _refusals() -> set[str]:
    return set(_ROW.findall(REFUSALS.read_text(encoding="utf-8")))


def test_aube_01_every_feed_feedparser_reads_yields_the_same_items(readings) -> None:
    # GIVEN every corpus feed in which feedparser finds entries
    with_entries = [r for r in readings if r[1]]
    refusals = _refusals()
    # WHEN Heed reads the same bytes THEN it yields the same items, count and links
    differ = {name: (theirs, ours, error) for name, _n, theirs, ours, error in with_entries if theirs != ours}
    unlisted = {k: v for k, v in differ.items() if k not in refusals}
    listing = "\n".join(f"{k}: {v}" for k, v in unlisted.items())
    assert not unlisted, "differences not in feeds-corpus-refusals.md:\n" + listing
    # AND every listed refusal is still one (else the list must shrink)
    assert refusals <= set(differ), f"listed but no longer different: {sorted(refusals - set(differ))}"
    yielding = sum(1 for r in with_entries if r[3])
    entries = sum(r[1] for r in with_entries)
    kept = sum(min(r[1], len(r[3])) for r in with_entries)
    same = sum(1 for r in readings if r[2] == r[3])
    print(f"\nfeedparser corpus: {same}/{len(readings)} feeds read alike; {len(with_entries)} feeds with entries, "
          f"{yielding} yield items in Heed; entries {kept}/{entries}; {len(refusals)} deliberate refusals")
    baseline = json.loads(BASELINE.read_text(encoding="utf-8"))["feeds"]
    assert yielding >= baseline["feeds_yielding"] and kept >= baseline["entries"]


def test_no_corpus_file_makes_the_parser_raise(readings) -> None:
    # _read_all already ran parse_feed on every file; here also without the HTTP header and
    # cut in half, the shapes a transport may hand over.
    for path in sorted(_feeds().rglob("*.xml")):
        data = path.read_bytes()
        parse_feed(data, base_url="https://x.example/feed", max_items=40)
        parse_feed(data[: len(data) // 2], base_url="https://x.example/feed", max_items=40)


def _cut_inside_last_entry(data: bytes) -> bytes | None:
    """The bytes cut half-way through the feed's last entry, or None (no entry found in the bytes
    as written: UTF-16 and UTF-32 files)."""
    starts = list(_ENTRY_START.finditer(data))
    if not starts:
        return None
    last = starts[-1]
    end = re.compile(rb"</(?:[A-Za-z_][\w.-]*:)?" + last.group(1) + rb"\s*>").search(data, last.end())
    return data[: (last.start() + end.end()) // 2] if end is not None else None


def test_aube_03_a_feed_cut_inside_an_item_keeps_the_items_before_it(readings) -> None:
    # GIVEN every corpus feed in which Heed yields items, cut half-way through its last item
    deliberate = bool(_CUT_ROW.search(REFUSALS.read_text(encoding="utf-8")))
    where = _feeds()
    cut = fewer = 0
    wrong = []
    for name, _n, _theirs, ours, _error in readings:
        if not ours:
            continue
        data = (where / name).read_bytes()
        body = _cut_inside_last_entry(data)
        if body is None:
            continue
        # WHEN both parsers read the cut bytes
        theirs, got = _both(name, body, header_from=data)
        cut += 1
        fewer += len(got.items) < len(theirs.entries)
        # THEN Heed keeps the complete items before the cut one and says it was cut (the listed
        # refusal), or, were it not listed, what feedparser keeps
        want = ours[:-1] if deliberate else [_http(e.get("link")) for e in theirs.entries]
        said = any(r.startswith("truncated") for r in got.recovered)
        if [i.link for i in got.items] != want or not said:
            wrong.append(f"{name}: {[i.link for i in got.items]} {got.recovered}, want {want}")
    print(f"\nfeeds cut inside their last item: {cut}; Heed keeps the items before the cut in {cut - len(wrong)}, "
          f"one item fewer than feedparser in {fewer}")
    assert cut > 1000, "the cut copies went missing"
    assert not wrong, "\n".join(wrong[:20])

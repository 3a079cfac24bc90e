"""The same promises as test_fuzz_extract.py, on real files damaged at random: the feeds, sitemaps,
pages and agenda pages of tests/fixtures with slices cut, doubled, moved and markup put in, the
way a cut transfer or a broken generator leaves them. Where ../shared is beside the clone, the
other projects' corpora (tests/support/corpora.py) are seeds too; the robots.txt seeds are only
theirs, so that test skips without them."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given

from heed_core.extract.challenge import is_challenge
from heed_core.extract.events import extract_events
from heed_core.extract.feeds import parse_feed
from heed_core.extract.paywall import is_paywalled
from heed_core.extract.signals import robots_directives
from heed_core.extract.sitemaps import parse_sitemap
from heed_core.robots import parse_robots

from tests.fuzz.test_fuzz_extract import FEED_ERRORS, SITEMAP_ERRORS, _http
from tests.support.corpora import absent, find_corpus
from tests.support.fuzz import bounded
from tests.support.fuzzgen import mutated

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MAX_SEED = 64 * 1024


def _seeds(own: tuple[str, ...], theirs: dict[str, str]) -> tuple[bytes, ...]:
    """Files of tests/fixtures matching ``own``, and of each corpus ``name: glob`` in ``theirs``
    that ../shared holds, up to MAX_SEED bytes each; LICENSE and README files are no seeds."""
    found = {p for g in own for p in FIXTURES.glob(g)}
    for name, pattern in theirs.items():
        where = find_corpus(name)
        found |= set(where.glob(pattern)) if where is not None else set()
    files = sorted(p for p in found if p.is_file() and p.stat().st_size <= MAX_SEED
                   and not p.name.upper().startswith(("LICENSE", "README", "NOTICE")))
    return tuple(p.read_bytes() for p in files)


FEEDS = _seeds(("feeds/*.xml",), {"feedparser": "**/*.xml"})
SITEMAPS = _seeds(("sitemaps/*",), {"sitemap-cases": "**/*.xml"})
PAGES = _seeds(("pages/*.html", "signals/*.html", "events/*.html", "subsidy/*"), {})
ROBOTS = _seeds((), {"crawler-commons-robots": "*.txt"})
assert FEEDS and SITEMAPS and PAGES, "the project's own fixtures went missing from tests/fixtures"


@given(mutated(FEEDS))
def test_aube_01_a_damaged_real_feed_ends_in_items_or_an_error_code(body: bytes) -> None:
    result = bounded(lambda: parse_feed(body, base_url="https://h.example/feed/", max_items=40))
    assert result.error is None or result.error in FEED_ERRORS
    assert len(result.items) <= 40 and all(i.link is None or _http(i.link) for i in result.items)


@given(mutated(SITEMAPS))
def test_wannado_06_a_damaged_real_sitemap_ends_in_urls_or_an_error_code(body: bytes) -> None:
    result = bounded(lambda: parse_sitemap(body, url="https://h.example/sitemap.xml", max_decompressed=2**22))
    assert result.error is None or result.error in SITEMAP_ERRORS
    assert all(_http(e.loc) for e in result.urls) and all(_http(c) for c in result.children)


@given(mutated(PAGES))
def test_a_damaged_real_page_gives_every_signal_and_its_events(body: bytes) -> None:
    bounded(lambda: robots_directives((), body, "SubsidieUpdate"))
    bounded(lambda: is_paywalled(body))
    bounded(lambda: is_challenge(403, (), body))
    for event in bounded(lambda: extract_events(body, base_url="https://venue.example/agenda/")).events:
        assert event.name and _http(event.url)


@pytest.mark.skipif(not ROBOTS, reason=absent("crawler-commons-robots"))
@given(mutated(ROBOTS))
def test_common_02_a_damaged_real_robots_txt_parses(body: bytes) -> None:
    robots = bounded(lambda: parse_robots(body))
    assert isinstance(robots.verdict("/a/b?c", "AubeBot").allowed, bool)

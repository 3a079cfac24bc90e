"""crawler-commons' robots.txt test files against heed_core.robots (COMMON-02/03, AUBE-04).

The files are crawler-commons' own (read from ../shared/vendored/crawler-commons-robots/, see
tests/support/corpora.py; skipped where it is absent); the assertions crawler-commons makes on
them are written down as data in tests/fixtures/crawler-commons-robots/expectations.json (ours,
its README says from where). Every assertion must
hold, except the few listed in KNOWN_DIFFERENCES with why; those are asserted to still
differ, so a change that closes one shows up here.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from heed_core.robots import parse_robots

from tests.support.corpora import corpus

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "crawler-commons-robots"
EXPECT = json.loads((FIXTURES / "expectations.json").read_text(encoding="utf-8"))

# (file, agent, url) -> why Heed answers otherwise than crawler-commons.
KNOWN_DIFFERENCES = {
    ("directive-typos-robots.txt", "bot1", "http://domain.com/desallow/"):
        "'Desallow' is not read as Disallow: only the misspellings in robots._DIRECTIVES are",
    ("directive-typos-robots.txt", "bot3", "http://domain.com/useg-agent/"):
        "'useg-agent' is not read as User-agent: a guessed group line could bind the wrong bot",
    ("precedence-of-rules.txt", "wget", "http://domain.com/"):
        "'Disallow: /*' (2 octets) beats 'Allow: /' (1 octet) by RFC 9309 2.2.2's most-octets rule, "
        "as in Google's reference parser; crawler-commons drops a trailing '*' first",
}
# file -> why the sitemap count differs.
KNOWN_SITEMAP_DIFFERENCES = {
    "sitemap-robots.txt": "a bare URL line without 'Sitemap:' is no record (RFC 9309 2.2.4); we read 2 of 3",
}


def _robots(name: str):
    return parse_robots((corpus("crawler-commons-robots") / name).read_bytes())


@pytest.mark.parametrize("case", EXPECT["verdicts"], ids=lambda c: f"{c['test']}-{c['file']}-{c['agent']}-{c['url']}")
def test_common_03_crawler_commons_verdicts(case: dict) -> None:
    # GIVEN a crawler-commons test file WHEN our parser answers for the agent and URL
    got = _robots(case["file"]).verdict(case["url"], case["agent"]).allowed
    # THEN it gives crawler-commons' answer, unless the difference is listed with why
    key = (case["file"], case["agent"], case["url"])
    if key in KNOWN_DIFFERENCES:
        assert got != case["allowed"], f"no longer differs, drop it from KNOWN_DIFFERENCES: {key}"
    else:
        assert got == case["allowed"], case


@pytest.mark.parametrize("case", EXPECT["crawl_delays"], ids=lambda c: f"{c['file']}-{c['agent']}")
def test_common_05_crawler_commons_crawl_delays(case: dict) -> None:
    # RFC 9309 2.2.4: a Crawl-delay line binds the user-agent lines above it and ends no group
    assert _robots(case["file"]).crawl_delay(case["agent"]) == case["seconds"]


@pytest.mark.parametrize("case", EXPECT["sitemap_counts"], ids=lambda c: c["file"])
def test_crawler_commons_sitemaps(case: dict) -> None:
    count = len(_robots(case["file"]).sitemaps)
    if case["file"] in KNOWN_SITEMAP_DIFFERENCES:
        assert count != case["count"]
    else:
        assert count == case["count"]


def test_every_vendored_file_parses() -> None:
    files = sorted(corpus("crawler-commons-robots").glob("*.txt"))
    named = {c["file"] for key in ("verdicts", "crawl_delays", "sitemap_counts") for c in EXPECT[key]}
    assert named <= {p.name for p in files}, "a file the expectations name is missing from the corpus"
    for path in files:
        robots = parse_robots(path.read_bytes())
        robots.verdict("https://example.org/", "anybot")

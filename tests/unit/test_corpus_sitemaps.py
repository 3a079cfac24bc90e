"""Scrapy's and ultimate-sitemap-parser's sitemap cases against Heed (SPRING-03, WANNADO-06, SUBSIDIE-01).

Each body (read from ../shared/vendored/sitemap-cases/, see tests/support/corpora.py; skipped
where it is absent) yields the URLs its project's test expects (our table:
tests/fixtures/sitemap-cases/expectations.json), except the deliberate differences marked there
with why. Counts are printed and checked against tests/fixtures/corpus_baseline.json.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from heed_core.extract.sitemaps import parse_sitemap

from tests.support.corpora import corpus

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
EXPECT = json.loads((FIXTURES / "sitemap-cases" / "expectations.json").read_text(encoding="utf-8"))["cases"]


def _read(name: str):
    base = "http://www.example.com/sitemap.xml" if name.startswith("scrapy/") else "http://test_ultimate-sitemap-parser.com/sitemap.xml"
    return parse_sitemap((corpus("sitemap-cases") / name).read_bytes(), url=base)


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_sitemap_case_yields_the_expected_urls(name: str) -> None:
    # GIVEN a body from another project's sitemap tests WHEN Heed reads it
    case = EXPECT[name]
    result = _read(name)
    # THEN it yields the URLs that project expects, or the listed deliberate difference
    if "heed" in case:
        assert result.error == case["heed"]["error"], case["heed"]["why"]
        return
    assert [e.loc for e in result.urls] == case.get("urls", [])
    assert list(result.children) == case.get("children", [])


def test_every_vendored_body_is_covered_and_counts_do_not_drop() -> None:
    cases = corpus("sitemap-cases")
    files = {p.relative_to(cases).as_posix() for p in cases.rglob("*.xml")}
    assert files == set(EXPECT), "a vendored sitemap body without an expectation, or the reverse"
    wanted = sum(len(c.get("urls", [])) + len(c.get("children", [])) for c in EXPECT.values() if "heed" not in c)
    got = 0
    for name, case in EXPECT.items():
        if "heed" in case:
            continue
        result = _read(name)
        got += sum(1 for e in result.urls if e.loc in case.get("urls", []))
        got += sum(1 for c in result.children if c in case.get("children", []))
    refused = sum(1 for c in EXPECT.values() if "heed" in c)
    print(f"\nsitemap cases: {len(EXPECT)} bodies, URLs {got}/{wanted}, {refused} deliberate refusal(s)")
    baseline = json.loads((FIXTURES / "corpus_baseline.json").read_text(encoding="utf-8"))["sitemaps"]
    assert got >= baseline["urls"]

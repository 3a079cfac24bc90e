"""Scrapy's and ultimate-sitemap-parser's sitemap cases against Heed (SPRING-03, WANNADO-06, SUBSIDIE-01).

Each body (read from ../shared/vendored/sitemap-cases/, see tests/support/corpora.py; skipped
where it is absent) yields the URLs its project's test expects (our table:
tests/fixtures/sitemap-cases/expectations.json), except the deliberate differences marked there
with why. Counts are printed and checked against tests/fixtures/corpus_baseline.json.

The richer peer corpora (../shared/peer-data/sitemaps/{go-sitemap-parser,scrapy,usp}, each with
its project's expected.json) are measured too: every case yields its project's kind, URLs and
child sitemaps (as Heed spells a URL: heed_core.urls), or is a refusal listed with why in
tests/fixtures/sitemaps-corpus-refusals.md. Each of their XML and text bodies, re-encoded as
UTF-16 or UTF-32 with a BOM, reads as the UTF-8 original does. Alternates (hreflang links, which
Scrapy's expected.json also lists) are not read: no bot's promise uses them.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from heed_core.extract.sitemaps import SitemapResult, parse_sitemap
from heed_core.urls import Refused, resolve

from tests.support.corpora import corpus

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
EXPECT = json.loads((FIXTURES / "sitemap-cases" / "expectations.json").read_text(encoding="utf-8"))["cases"]
PEERS = ("go-sitemap-parser", "scrapy", "usp")
PEER_REFUSALS = FIXTURES / "sitemaps-corpus-refusals.md"
# expected.json's kinds in Heed's words ("invalid": nothing to read, whatever the reason).
_KINDS = {"urlset": "urlset", "index": "sitemapindex", "rss": "rss", "atom": "atom", "text": "text"}
_ROW = re.compile(r"^\|\s*([\w.-]+/[\w./-]+)\s*\|", re.M)
_DECLARED = re.compile(r"(<\?xml[^>]*encoding=[\"'])[^\"']*([\"'])", re.I)


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


def _spelled(url: str) -> str:
    """A URL of expected.json as Heed spells it (the URL Standard's form, host lower-cased)."""
    got = resolve(None, url)
    return url if isinstance(got, Refused) else str(got)


def _peer_cases() -> list[tuple[str, dict[str, Any], bytes]]:
    """(peer/file, its expected.json entry, its bytes) for every case of the three peer corpora."""
    out = []
    for peer in PEERS:
        where = corpus(f"sitemaps/{peer}")
        for case in json.loads((where / "expected.json").read_text(encoding="utf-8")):
            out.append((f"{peer}/{case['file']}", case, (where / case["file"]).read_bytes()))
    return out


def _agrees(case: dict[str, Any], got: SitemapResult) -> bool:
    if case["kind"] == "invalid" or not (case["urls"] or case["children"]):
        return not got.urls and not got.children  # nothing to read: what Heed calls it is its own word
    return (got.kind == _KINDS[case["kind"]] and [e.loc for e in got.urls] == [_spelled(u) for u in case["urls"]]
            and list(got.children) == [_spelled(c) for c in case["children"]])


@pytest.fixture(scope="module")
def peer_readings() -> list[tuple[str, dict[str, Any], bytes, SitemapResult]]:
    cases = _peer_cases()
    assert len(cases) >= 80, f"the peer sitemap corpora are incomplete: {len(cases)} cases"
    return [(name, case, body, parse_sitemap(body, url=case["url"])) for name, case, body in cases]


def test_wannado_06_peer_sitemap_corpora_yield_their_expected_urls(peer_readings) -> None:
    # GIVEN every case of go-sitemap-parser's, Scrapy's and ultimate-sitemap-parser's corpora
    refusals = set(_ROW.findall(PEER_REFUSALS.read_text(encoding="utf-8")))
    differ = {name: (case["kind"], got.kind, got.error, got.recovered) for name, case, _b, got in peer_readings
              if not _agrees(case, got)}
    # WHEN Heed reads each THEN it yields that project's kind, URLs and children, or a listed refusal
    unlisted = {k: v for k, v in differ.items() if k not in refusals}
    listing = "\n".join(f"{k}: {v}" for k, v in unlisted.items())
    assert not unlisted, "differences not in sitemaps-corpus-refusals.md:\n" + listing
    assert refusals <= set(differ), f"listed but no longer different: {sorted(refusals - set(differ))}"
    lines = []
    for peer in PEERS:
        mine = [(name, case, got) for name, case, _b, got in peer_readings if name.startswith(peer + "/")]
        lines.append(f"{peer} {sum(1 for n, _c, _g in mine if n not in differ)}/{len(mine)}")
    agree = len(peer_readings) - len(differ)
    print(f"\npeer sitemap corpora: cases {agree}/{len(peer_readings)} ({', '.join(lines)}); "
          f"{len(refusals)} deliberate refusal(s)")
    baseline = json.loads((FIXTURES / "corpus_baseline.json").read_text(encoding="utf-8"))["peer_sitemaps"]
    assert agree >= baseline["cases"]


def test_wannado_06_every_peer_sitemap_in_utf16_or_utf32_with_a_bom_reads_as_in_utf8(peer_readings) -> None:
    # GIVEN every XML or text body of the peer corpora that is UTF-8, written again as UTF-16
    # (little- and big-endian) and UTF-32 with a BOM, its declaration saying so
    tried = 0
    for name, case, body, original in peer_readings:
        try:
            text = body.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
        except UnicodeDecodeError:
            continue  # gzip and other bytes: no characters to re-encode
        for codec, bom in (("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"), ("utf-32-le", b"\xff\xfe\x00\x00")):
            wide = bom + _DECLARED.sub(rf"\g<1>{codec[:6].upper()}\g<2>", text).encode(codec)
            # WHEN Heed reads it THEN it finds what it found in the UTF-8 bytes, and says the encoding
            got = parse_sitemap(wide, url=case["url"])
            assert (got.kind, got.urls, got.children, got.error) == (
                original.kind, original.urls, original.children, original.error), (name, codec)
            said = f"encoding: {codec} (BOM), not the UTF-8 sitemaps.org asks for"
            assert original.kind is None or said in got.recovered, (name, codec, got.recovered)
            tried += 1
    print(f"\npeer sitemaps re-encoded with a BOM: {tried // 3} bodies, each in 3 encodings, read as in UTF-8")
    assert tried >= 150

"""`heed conformance` on profiles of one's own that extend SpringStudioBot or Praha-X: the checks
read the user's numbers (smaller caps still keep the promise), and a profile that breaks a
promise (or changes what a check reads on the sites) fails, naming what the sites saw."""
from __future__ import annotations

from pathlib import Path

import pytest

from heed.cli import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["conformance", *argv])
    out, _ = capsys.readouterr()
    return code, out


@pytest.mark.slow
def test_spring_03_04_07_smaller_caps_of_ones_own_still_keep_the_promises(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN SpringStudioBot with one child sitemap, three new titles a visit and one redirect hop
    # (all within SPRING-03's "at most two" and "at most five", and SPRING-07's one hop)
    profile = tmp_path / "spring-small.yaml"
    profile.write_text("extends: springstudiobot\nredirects:\n  max_hops: 1\ntasks:\n  sitemap_fallback:\n"
                       "    max_child_sitemaps: 1\n    max_new_pages: 3\n", encoding="utf-8")
    # WHEN the rules are checked
    code, out = _run(capsys, "--bot", str(profile), "--rule", "SPRING-03", "--rule", "SPRING-04",
                     "--rule", "SPRING-07")
    # THEN they hold, judged on that profile's own numbers
    assert code == 0, out
    flat = " ".join(out.split())
    assert "sitemap.xml and 1 of 3 child sitemaps (/sitemap.xml, /sm/1.xml)" in flat
    assert "3 titles fetched, all under /app/" in flat
    assert "titles fetched by day {1: 3, 2: 1}" in flat
    assert "a chain of two redirects: 2 GETs, one after the other (/kjede/0, /kjede/1: 301, 301)" in flat


@pytest.mark.slow
def test_praha_05_without_conditional_requests_the_unchanged_feed_is_sent_again(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN Praha-X with conditional requests off
    profile = tmp_path / "praha-nc.yaml"
    profile.write_text("extends: praha-x\nconditional_requests: false\n", encoding="utf-8")
    # WHEN PRAHA-05 is checked THEN it fails on what the site saw: the unchanged Atom feed sent whole again
    code, out = _run(capsys, "--bot", str(profile), "--rule", "PRAHA-05")
    assert code == 1, out
    flat = " ".join(out.split())
    assert "NOT an unchanged Atom feed: asked with If-None-Match the second time, a 304" in flat
    assert out.rstrip().endswith("exit 1: PRAHA-05 did not hold")

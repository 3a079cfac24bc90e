"""`heed conformance` judges AubeBot's and SubsidieUpdate's sites on the user's own numbers: a
profile that `extends:` the bot and is stricter passes with its own figures in the evidence; one
that breaks a promise fails on the profile AND on what the sites saw."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from heed.cli import main


def _rules(capsys: pytest.CaptureFixture[str], tmp_path: Path, yaml: str, *rules: str) -> tuple[int, dict[str, Any]]:
    profile = tmp_path / "own.yaml"
    profile.write_text(yaml, encoding="utf-8")
    code = main(["conformance", "--bot", str(profile), *[a for r in rules for a in ("--rule", r)], "--json"])
    out, _ = capsys.readouterr()
    doc = json.loads(out)
    return code, {r["id"]: r for r in doc["rules"]}


@pytest.mark.slow
def test_aube_01_10_a_stricter_profile_passes_on_its_own_caps(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN AubeBot keeping 10 items a read and opening 3 articles a source a quarter hour (under 40 and 5)
    code, rules = _rules(capsys, tmp_path, "extends: aubebot\ntasks:\n  feed:\n    max_items: 10\n"
                                           "    article_followup:\n      per_source_per_window: 3\n",
                         "AUBE-01", "AUBE-10")
    # THEN both rules hold, and the sites show the profile's numbers, not the shipped ones
    assert code == 0, rules
    assert "10 items kept, the first 10 in the feed's order" in rules["AUBE-01"]["evidence"]
    assert "the profile's caps (3 a source, 60 in all) bound exactly: 42 of 84 opened" in rules["AUBE-10"]["evidence"]


@pytest.mark.slow
def test_aube_10_eight_articles_a_source_fails_at_the_sites(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN AubeBot allowed 8 article pages a source a quarter hour (AUBE-10 promises five)
    code, rules = _rules(capsys, tmp_path, "extends: aubebot\ntasks:\n  feed:\n    article_followup:\n"
                                           "      per_source_per_window: 8\n", "AUBE-10")
    # THEN the rule fails on the number and on the pages the sites saw opened
    evidence = rules["AUBE-10"]["evidence"]
    assert code == 1 and rules["AUBE-10"]["result"] == "fail"
    assert "NOT profile: tasks.feed.article_followup.per_source_per_window = 8 <= 5" in evidence
    assert "NOT quarter hour 1: 14 feeds of 6 short items, 60 article pages, at most 6 pages a source" in evidence


@pytest.mark.slow
def test_subsidie_06_robots_txt_kept_an_hour_fails_at_the_sites(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN SubsidieUpdate re-reading robots.txt after an hour (SUBSIDIE-06 promises reuse for 24 hours)
    code, rules = _rules(capsys, tmp_path, "extends: subsidieupdate\nrobots:\n  cache_ttl_s: 3600\n", "SUBSIDIE-06")
    # THEN the municipality's site saw robots.txt at every round of the day
    evidence = rules["SUBSIDIE-06"]["evidence"]
    assert code == 1 and rules["SUBSIDIE-06"]["result"] == "fail"
    assert "NOT profile: robots.cache_ttl_s = 3600 == 86400" in evidence
    assert "NOT a host crawled in 5 rounds of one day: its robots.txt read 5 time(s)" in evidence

"""`heed conformance` fails a profile that breaks a COMMON or WANNADO promise, naming what the
sites saw: the checks ported from the old conformance tests can fail."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from heed.cli import main


def _rule(capsys: pytest.CaptureFixture[str], profile: Path, rule: str) -> tuple[int, dict[str, str]]:
    code = main(["conformance", "--bot", str(profile), "--rule", rule, "--json"])
    out, _ = capsys.readouterr()
    [verdict] = json.loads(out)["rules"]
    return code, verdict


@pytest.mark.slow
def test_common_01_a_bot_that_keeps_the_name_but_changes_its_user_agent_fails(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN AubeBot's profile (its name inherited) sending another User-Agent than its page publishes
    profile = tmp_path / "aube-ua.yaml"
    profile.write_text('extends: aubebot\nuser_agent: "AubeBot/0.2 (+https://aube.news/robot)"\n', encoding="utf-8")
    code, verdict = _rule(capsys, profile, "COMMON-01")
    # THEN the rule fails on the published identity, though every site saw that one agent
    assert code == 1 and verdict["result"] == "fail"
    assert "NOT profile: user_agent = 'AubeBot/0.2 (+https://aube.news/robot)', promised " \
           "'AubeBot/0.1 (+https://aube.news/robot; collecte RSS polie)'" in verdict["evidence"]
    assert "every one with exactly the profile's User-Agent" in verdict["evidence"].replace("NOT profile", "")


@pytest.mark.slow
def test_wannado_07_without_conditional_requests_the_venue_pays_twice(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN WannadoBot told not to send If-None-Match / If-Modified-Since
    profile = tmp_path / "wannado-plain.yaml"
    profile.write_text("extends: wannadobot\nconditional_requests: false\n", encoding="utf-8")
    code, verdict = _rule(capsys, profile, "WANNADO-07")
    # THEN the venue's second visit is a full 200, and the check says so from the venue's side
    assert code == 1 and verdict["result"] == "fail"
    assert "NOT /agenda/: first asked plainly, then with If-None-Match" in verdict["evidence"]
    assert "NOT the 304 recorded as not_modified" in verdict["evidence"]

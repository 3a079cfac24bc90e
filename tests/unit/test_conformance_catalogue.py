"""The conformance catalogue: every rule of PROMISES.md for every bot, each bound to real profile
keys; the profile numbers judged as the promise says (pure: no site, no stack)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from heed_core.profile import BUILTIN_BOTS, load_profile, load_profile_data

from heed.conformance.catalogue import catalogue
from heed.conformance.command import select
from heed.conformance.model import Bound, Cadence, Proof

# The rules, vendored (a fresh clone has no shared folder beside it); where that folder is here, the copy must equal it.
PROMISES = Path(__file__).resolve().parents[1] / "fixtures" / "PROMISES.md"
SHARED_PROMISES = Path(__file__).resolve().parents[2].parent.joinpath("shared", "PROMISES.md")
PREFIX = {"springstudiobot": "SPRING", "praha-x": "PRAHA", "wannadobot": "WANNADO", "subsidieupdate": "SUBSIDIE",
          "aubebot": "AUBE"}
_MISSING = object()


@pytest.mark.parametrize("bot", BUILTIN_BOTS)
def test_every_rule_of_the_promises_is_in_the_bots_catalogue_in_order(bot: str) -> None:
    text = PROMISES.read_text(encoding="utf-8")
    promised = re.findall(rf"^- ((?:COMMON|{PREFIX[bot]})-\d\d) ", text, re.M)
    rules, _ = catalogue(bot)
    assert [r.id for r in rules] == promised


def test_the_vendored_promises_are_the_shared_ones() -> None:
    if not SHARED_PROMISES.is_file():
        pytest.skip("no shared folder beside this checkout (a fresh clone): the vendored copy is the reference")
    assert PROMISES.read_text(encoding="utf-8") == SHARED_PROMISES.read_text(encoding="utf-8")


@pytest.mark.parametrize("bot", BUILTIN_BOTS)
def test_each_rule_says_its_sentence_and_binds_keys_the_profile_has(bot: str) -> None:
    rules, scenarios = catalogue(bot)
    profile = load_profile(bot)
    assert scenarios and len({r.id for r in rules}) == len(rules)
    for rule in rules:
        assert rule.sentence.endswith(".") and len(rule.sentence) < 160, rule.id
        assert rule.check is not None or rule.numbers, rule.id
        for key in rule.keys:
            assert key == "schedules" or profile.get(key, _MISSING) is not _MISSING, (rule.id, key)


def test_a_bound_says_the_key_its_value_and_the_promise() -> None:
    proof = Proof()
    Bound("politeness.min_delay_s", ">=", 1.5).judge(load_profile_data({"extends": "aubebot",
                                                                       "politeness": {"min_delay_s": 0.5}}), proof)
    assert not proof.ok and proof.text() == "NOT profile: politeness.min_delay_s = 0.5 >= 1.5"


def test_a_sum_of_keys_bounds_the_round_spacing_with_its_jitter() -> None:
    proof = Proof()
    key = ("politeness.round_spacing_s", "politeness.round_spacing_jitter_s")
    Bound(key, "<=", 420).judge(load_profile("wannadobot"), proof)
    Bound(key, "<=", 420).judge(load_profile_data({"extends": "wannadobot",
                                                  "politeness": {"round_spacing_jitter_s": 120}}), proof)
    assert [ok for ok, _ in proof.lines] == [True, False]


def test_subsidie_02_cadence_five_rounds_a_working_day_one_a_weekend_day() -> None:
    cadence = Cadence("subsidy", workday=(5, 5), weekend=(1, 1))
    good, bad = Proof(), Proof()
    cadence.judge(load_profile("subsidieupdate"), good)
    cadence.judge(load_profile_data({"extends": "subsidieupdate", "schedules": [
        {"expression": "cron(0 7,9,11,13,15,17 ? * MON-FRI *)", "task": "subsidy"}]}), bad)
    assert good.ok and "Mon 5" in good.text() and "Sat 1" in good.text()
    assert not bad.ok and "Mon 6" in bad.text() and "Sat 0" in bad.text()


def test_praha_04_a_weekly_check_and_aube_08_fifteen_minutes_apart() -> None:
    weekly, quarter = Proof(), Proof()
    Cadence("site_check", per_week=(1, 1)).judge(load_profile("praha-x"), weekly)
    Cadence("feed", min_apart_s=900).judge(load_profile_data({"extends": "aubebot", "schedules": [
        {"expression": "rate(5 minutes)", "task": "feed"}]}), quarter)
    assert weekly.ok and "1/1/1/1 a week" in weekly.text()
    assert not quarter.ok and "0:05:00 apart" in quarter.text()


def test_rules_are_chosen_by_id_or_by_family_in_catalogue_order() -> None:
    rules, _ = catalogue("aubebot")
    assert [r.id for r in select(rules, ["aube-09", "COMMON-02"])] == ["COMMON-02", "AUBE-09"]
    assert [r.id for r in select(rules, ["common"])] == [f"COMMON-0{i}" for i in range(1, 10)]
    assert len(select(rules, None)) == 21


def test_the_table_gives_each_rule_its_result_sentence_and_evidence_and_names_what_failed() -> None:
    from heed.conformance.model import Rule
    from heed.conformance.report import as_json, as_table
    from heed.conformance.runner import Report, Verdict

    ok = Rule("AUBE-09", "At least 1500 ms between two requests to one host.")
    bad = Rule("AUBE-10", "At most five article pages per source per quarter hour.")
    broken = Rule("AUBE-11", "One request at a time.")
    report = Report("aubebot", "mine.yaml", [
        Verdict(ok, "pass", "min gap 1.52 s over 14 gaps", 0.1),
        Verdict(bad, "fail", "NOT at most 6 pages a source", 0.1),
        Verdict(broken, "error", "scenario aube-real failed: OSError: no port", 0.1)], 1.0, [])
    table = as_table(report, width=100)
    lines = table.splitlines()
    assert lines[0] == ("heed conformance: aubebot (profile mine.yaml, extends aubebot): 3 rules, 1 pass, 1 fail, "
                        "1 error, in 1.0 s (engine aws)")
    assert [line.split()[:2] for line in lines if line.startswith("AUBE-")] == [
        ["AUBE-09", "pass"], ["AUBE-10", "FAIL"], ["AUBE-11", "ERROR"]]
    assert "min gap 1.52 s over 14 gaps" in table and all(len(line) <= 100 for line in lines[1:-2])
    assert lines[-1] == "exit 1: AUBE-10, AUBE-11 did not hold"
    doc = json.loads(as_json(report))
    assert doc["passed"] is False and [r["result"] for r in doc["rules"]] == ["pass", "fail", "error"]

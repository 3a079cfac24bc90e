"""`heed conformance` on profiles of one's own that `extends:` a bot: the checks read the user's
numbers (a stricter profile passes, its own figures in the evidence), and a profile that breaks a
promise fails on the profile AND on what the sites saw, naming the line. One row a profile."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from heed.cli import main


@dataclass(frozen=True)
class Case:
    name: str
    profile: str              # the YAML of the profile
    holds: dict[str, list[str]]  # rule -> evidence lines that hold
    broken: dict[str, list[str]]  # rule -> evidence lines that do not ("NOT ...")

    @property
    def rules(self) -> list[str]:
        return list(dict.fromkeys([*self.holds, *self.broken]))


CASES = [
    Case("aube: 10 items and 3 articles a source, stricter than promised",
         "extends: aubebot\ntasks:\n  feed:\n    max_items: 10\n"
         "    article_followup:\n      per_source_per_window: 3\n",
         {"AUBE-01": ["10 items kept, the first 10 in the feed's order"],
          "AUBE-10": ["the profile's caps (3 a source, 60 in all) bound exactly: 42 of 84 opened"]}, {}),
    Case("aube: 8 articles a source (AUBE-10 promises five)",
         "extends: aubebot\ntasks:\n  feed:\n    article_followup:\n      per_source_per_window: 8\n", {},
         {"AUBE-10": ["profile: tasks.feed.article_followup.per_source_per_window = 8 <= 5",
                      "quarter hour 1: 14 feeds of 6 short items, 60 article pages, at most 6 pages a source"]}),
    Case("aube: its name kept, another User-Agent than its page publishes",
         'extends: aubebot\nuser_agent: "AubeBot/0.2 (+https://aube.news/robot)"\n',
         {"COMMON-01": ["every one with exactly the profile's User-Agent"]},
         {"COMMON-01": ["profile: user_agent = 'AubeBot/0.2 (+https://aube.news/robot)', promised "
                        "'AubeBot/0.1 (+https://aube.news/robot; collecte RSS polie)'"]}),
    Case("subsidie: robots.txt kept an hour (SUBSIDIE-06 promises a day)",
         "extends: subsidieupdate\nrobots:\n  cache_ttl_s: 3600\n", {},
         {"SUBSIDIE-06": ["profile: robots.cache_ttl_s = 3600 == 86400",
                          "a host crawled in 5 rounds of one day: its robots.txt read 5 time(s)"]}),
    Case("spring: one child sitemap, three new titles, one redirect hop, within the promises",
         "extends: springstudiobot\nredirects:\n  max_hops: 1\ntasks:\n  sitemap_fallback:\n"
         "    max_child_sitemaps: 1\n    max_new_pages: 3\n",
         {"SPRING-03": ["sitemap.xml and 1 of 3 child sitemaps (/sitemap.xml, /sm/1.xml)",
                        "3 titles fetched, all under /app/"],
          "SPRING-04": ["titles fetched by day {1: 3, 2: 1}"],
          "SPRING-07": ["a chain of two redirects: 2 GETs, one after the other (/kjede/0, /kjede/1: 301, 301)"]}, {}),
    Case("praha: no conditional requests (the unchanged feed sent whole again)",
         "extends: praha-x\nconditional_requests: false\n", {},
         {"PRAHA-05": ["an unchanged Atom feed: asked with If-None-Match the second time, a 304"]}),
    Case("wannado: no conditional requests (the venue pays twice)",
         "extends: wannadobot\nconditional_requests: false\n", {},
         {"WANNADO-07": ["/agenda/: first asked plainly, then with If-None-Match",
                         "the 304 recorded as not_modified"]}),
]


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.name.split(":")[0] + "-" + str(i) for i, c in enumerate(CASES)])
def test_a_profile_of_ones_own_is_judged_on_its_numbers_and_what_the_sites_saw(
        case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a profile that extends a bot
    profile = tmp_path / "own.yaml"
    profile.write_text(case.profile, encoding="utf-8")
    # WHEN its rules are checked
    code = main(["conformance", "--bot", str(profile), *[a for r in case.rules for a in ("--rule", r)], "--json"])
    doc = json.loads(capsys.readouterr().out)
    verdicts = {r["id"]: r for r in doc["rules"]}
    # THEN the exit code says whether every rule held, each rule's result agrees, and its evidence
    # has each line expected, holding or not
    assert code == (1 if case.broken else 0), verdicts
    for rule in case.rules:
        evidence = verdicts[rule]["evidence"]
        assert verdicts[rule]["result"] == ("fail" if rule in case.broken else "pass"), verdicts[rule]
        for text in case.holds.get(rule, []):  # (in a rule that passes, every line held)
            assert text in evidence and f"NOT {text}" not in evidence, (rule, text, evidence)
        for text in case.broken.get(rule, []):  # each the start of a line
            assert f"NOT {text}" in evidence, (rule, text, evidence)

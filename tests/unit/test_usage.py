"""Issue 13, AIPREF: Content-Usage in robots.txt (draft-ietf-aipref-attach) and in the response
header (draft-ietf-aipref-vocab) is parsed, decided against the bot's declared uses, and explained."""
from __future__ import annotations

import itertools

import pytest

from heed_core.robots import RobotsTxt, parse_robots
from heed_core.robots_policy import RobotsFetchPolicy, RobotsOutcome, robots_from_response
from heed_core.usage import REFUSED, decide, explain, parse_preferences, statements

ATTACH_EXAMPLE = b"""User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: / train-ai=n
Content-Usage: /ai-ok/ train-ai=y

User-Agent: ExampleBot
Allow: /
Content-Usage: / train-ai=y
"""


def keep(uses, robots=None, url="https://site.example/x", token="HeedBot", headers=()):
    return decide(uses, robots=robots, url=url, token=token, headers=headers)


# --- the vocabulary ---------------------------------------------------------------------------


@pytest.mark.parametrize("value, expected", [
    ("train-ai=y, search=n", {"train-ai": True, "search": False}),
    ("ai-use=n", {"ai-use": False}),
    ("search=y;reason=\"why\", train-ai=n;x", {"search": True, "train-ai": False}),  # parameters ignored
    ("foo=n, train-genai=n, search=y", {"search": True}),  # unknown keys ignored
    ('search="n", train-ai=maybe, ai-use', {}),  # not the tokens y / n: unknown
    ("train-ai=y, train-ai, search=n, search=\"n\"", {}),  # the vocab's duplicate-key example
    ("Train-AI=n", {}),  # case sensitive: the dictionary does not parse, nothing is stated
    ("train-ai=n,,", {}),
    ("", {}),
])
def test_header_vocabulary(value, expected):
    assert parse_preferences(value) == expected


# --- robots.txt -------------------------------------------------------------------------------


def test_attach_example_table():
    robots = parse_robots(ATTACH_EXAMPLE)
    # GIVEN the draft's example file, WHEN another crawler reads it, THEN its table holds
    assert robots.verdict("/test", "OtherBot").allowed
    assert not robots.verdict("/never/test", "OtherBot").allowed
    assert [s.preferences for s in statements(robots, "/test", "OtherBot", ())] == [{"train-ai": False}]
    assert [s.preferences for s in statements(robots, "/ai-ok/test", "OtherBot", ())] == [{"train-ai": True}]
    # AND ExampleBot uses its own group
    assert [s.preferences for s in statements(robots, "/test", "ExampleBot", ())] == [{"train-ai": True}]


def test_the_longest_path_wins_over_a_shorter_one_even_for_other_uses():
    robots = parse_robots(b"User-agent: *\nContent-Usage: / search=n\nContent-Usage: /blog/ train-ai=n\n")
    assert keep(["search"], robots, "https://s.example/blog/post").keep  # /blog/ says nothing of search
    assert not keep(["search"], robots, "https://s.example/about").keep


def test_lines_tied_on_length_combine_most_restrictively():
    robots = parse_robots(b"User-agent: *\nContent-Usage: /a search=y\nContent-Usage: /a search=n\n"
                          b"Content-Usage: /b* search=n\nContent-Usage: /bc search=y\n")
    decision = keep(["search"], robots, "https://s.example/a/1")
    assert (decision.keep, decision.reason, decision.statement.line) == (False, REFUSED, 3)
    assert not keep(["search"], robots, "https://s.example/bc").keep  # "/b*" and "/bc": three bytes each


def test_a_line_without_a_path_applies_to_the_whole_site():
    robots = parse_robots(b"User-agent: *\nContent-Usage: train-ai=n\nContent-Usage:   /ok/\tsearch=y # c\n")
    lines = robots.usage_lines("https://s.example/deep/page", "x")
    assert [(u.path, u.preference, u.line) for u in lines] == [("/", "train-ai=n", 2)]
    assert [(u.path, u.preference) for u in robots.usage_lines("/ok/1", "x")][0] == ("/ok/", "search=y")


def test_content_usage_changes_no_allow_disallow_or_crawl_delay():
    # GIVEN files whose Content-Usage lines sit between user-agent lines and rules
    files = [
        b"User-agent: a\nContent-Usage: / train-ai=n\nUser-agent: b\nDisallow: /x\nCrawl-delay: 4\n",
        b"User-agent: *\nContent-Usage: /p search=n\nAllow: /p/q\nDisallow: /p\n\nUser-agent: c\n"
        b"Crawl-delay: 2\nContent-Usage: / ai-use=n\nUser-agent: d\nDisallow: /\n",
        ATTACH_EXAMPLE,
    ]
    for body in files:
        # (commented out rather than deleted, so line numbers stay comparable)
        without = b"\n".join(b"#" + line if line.startswith(b"Content-Usage") else line for line in body.split(b"\n"))
        with_usage, plain = parse_robots(body), parse_robots(without)
        # THEN every verdict and delay is what it is without those lines
        for url, token in itertools.product(["/", "/x", "/p", "/p/q", "/never/a", "/test"],
                                            ["a", "b", "c", "d", "ExampleBot", "other"]):
            assert with_usage.verdict(url, token) == plain.verdict(url, token), (body, url, token)
            assert with_usage.crawl_delay(token) == plain.crawl_delay(token)


def test_a_fixed_answer_or_no_group_states_nothing():
    assert statements(RobotsTxt.allow_all(), "/x", "a", ()) == []
    assert statements(parse_robots(b"User-agent: other\nContent-Usage: / search=n\n"), "/x", "a", ()) == []


def test_preferences_survive_the_robots_cache():
    policy = RobotsFetchPolicy.from_mapping({})
    outcome = robots_from_response(200, None, ATTACH_EXAMPLE, policy)
    rebuilt = RobotsOutcome.from_dict(outcome.to_dict(), policy)
    assert rebuilt.robots.usage_lines("/test", "x") == outcome.robots.usage_lines("/test", "x")
    assert rebuilt.robots.usage_lines("/test", "x")[0].line == 4


# --- the decision -----------------------------------------------------------------------------


def test_usage_refused_names_the_rule_and_line():
    robots = parse_robots(ATTACH_EXAMPLE)
    decision = keep(["search", "train-ai"], robots, "https://s.example/test")
    assert (decision.keep, decision.reason, decision.use) == (False, "usage_refused", "train-ai")
    assert decision.detail == 'train-ai=n by robots.txt line 4 "Content-Usage: / train-ai=n" (group *)'


def test_a_profile_without_a_matching_use_is_unaffected():
    robots = parse_robots(ATTACH_EXAMPLE)
    assert keep(["search"], robots, "https://s.example/test", headers=[("Content-Usage", "train-ai=n")]).keep
    assert keep([], robots, "https://s.example/test").keep


def test_the_header_refuses_what_robots_txt_allows():
    robots = parse_robots(b"User-agent: *\nContent-Usage: / search=y\n")
    decision = keep(["search"], robots, headers=[("content-usage", "search=n, train-ai=n")])
    assert (decision.keep, decision.detail) == (False, 'search=n by Content-Usage header "search=n, train-ai=n"')
    # two header lines are one field: the later key wins (RFC 9651 dictionary)
    assert keep(["search"], headers=[("Content-Usage", "search=n"), ("Content-Usage", "search=y")]).keep


def test_an_unknown_declared_use_is_a_caller_bug():
    with pytest.raises(ValueError, match="unknown declared use"):
        keep(["train-genai"])


def test_explain_shows_each_use_with_its_rule_and_line():
    robots = parse_robots(ATTACH_EXAMPLE)
    out = explain(["train-ai", "search"], robots=robots, url="https://s.example/ai-ok/1", token="x",
                  headers=[("Content-Usage", "train-ai=n")])
    assert out["keep"] is False and out["reason"] == "usage_refused"
    assert out["uses"]["train-ai"] == {
        "preference": "n",
        "by": ['y from robots.txt line 5 "Content-Usage: /ai-ok/ train-ai=y" (group *)',
               'n from Content-Usage header "train-ai=n"'],
    }
    assert out["uses"]["search"] == {"preference": "unknown", "by": []}
    assert out["statements"][0] == {"source": "robots.txt", "text": "Content-Usage: /ai-ok/ train-ai=y", "line": 5,
                                    "group": "*", "preferences": {"train-ai": "y"}}

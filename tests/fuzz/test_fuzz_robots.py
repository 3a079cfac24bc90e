"""robots.txt fuzzed (COMMON-02/03): any bytes parse without an exception, the same bytes always
give the same answers, and ``explain`` (what ``heed robots check`` and ``heed explain`` show) always
says what the fetch decision (``RobotsTxt.verdict``) does, with the line it names holding the rule."""
from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from heed_core.robots import effective_delay, explain, parse_robots

from tests.support.fuzz import bounded
from tests.support.fuzzgen import robots_body, robots_utf8, url_like, user_agent

_LINES = re.compile(r"\r\n|\r|\n")
queries = st.lists(st.tuples(url_like, user_agent), min_size=1, max_size=6)


@given(robots_body, queries)
def test_common_02_any_bytes_parse_and_answer_without_an_exception(body: bytes, asked: list[tuple[str, str]]) -> None:
    robots = bounded(lambda: parse_robots(body))
    for url, agent in asked:
        verdict = bounded(lambda u=url, a=agent: robots.verdict(u, a))
        assert isinstance(verdict.allowed, bool)
        assert verdict.crawl_delay is None or verdict.crawl_delay >= 0
        robots.usage_lines(url, agent)
        robots.crawl_delay(agent)


@given(robots_body, queries)
def test_common_03_the_same_bytes_always_give_the_same_answers(body: bytes, asked: list[tuple[str, str]]) -> None:
    first, second = parse_robots(body), parse_robots(body)
    assert (first.sitemaps, first.truncated, first.not_text) == (second.sitemaps, second.truncated, second.not_text)
    for url, agent in asked:
        assert first.verdict(url, agent) == second.verdict(url, agent)
        assert first.usage_lines(url, agent) == second.usage_lines(url, agent)
        assert first.crawl_delay(agent) == second.crawl_delay(agent)


@given(robots_body, queries, st.floats(0, 100), st.floats(0, 100))
def test_common_03_explain_and_the_fetch_decision_always_agree(body: bytes, asked: list[tuple[str, str]],
                                                                min_delay: float, cap: float) -> None:
    robots = parse_robots(body)
    for url, agent in asked:
        verdict = robots.verdict(url, agent)
        shown = explain(robots, url, agent, min_delay_s=min_delay, cap_s=cap)
        assert (shown["allowed"], shown["group"], shown["rule"], shown["line"], shown["crawl_delay"]) == (
            verdict.allowed, verdict.group, verdict.rule, verdict.line, verdict.crawl_delay)
        assert shown["effective_delay"] == effective_delay(min_delay, verdict.crawl_delay, cap) >= min_delay


@given(robots_utf8, queries)
def test_common_03_the_line_explain_names_holds_the_rule(body: bytes, asked: list[tuple[str, str]]) -> None:
    text = body.decode("utf-8", "replace")
    lines = _LINES.split(text)
    robots = parse_robots(body)
    for url, agent in asked:
        verdict = robots.verdict(url, agent)
        if verdict.line is None:
            continue
        kind, _, pattern = (verdict.rule or "").partition(": ")
        assert kind in ("Allow", "Disallow") and verdict.allowed == (kind == "Allow")
        assert pattern in lines[verdict.line - 1], (verdict, lines[verdict.line - 1])

"""The conformance suite as tests: one bot's catalogue (``heed.conformance``, what `heed conformance`
runs), one test per rule, each scenario played once for the bot's module, on the AWS engine (the
real handlers on moto). A failing rule shows the evidence the command would print. The command
itself, on both engines, is tests/integration/test_conformance_command.py."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from heed_core.profile import load_profile

from heed.conformance.catalogue import catalogue
from heed.conformance.runner import Session

__all__ = ["rule_tests"]


def rule_tests(bot: str) -> tuple[Callable[..., Iterator[Session]], Callable[..., None], Callable[..., None]]:
    """The module-scoped ``session`` fixture, the parametrized ``test_rule`` for ``bot``, and the
    test that every result its scenarios emitted has the shape its shipped schema says."""
    rules, scenarios = catalogue(bot)

    @pytest.fixture(scope="module")
    def session() -> Iterator[Session]:
        s = Session(bot, load_profile(bot), scenarios)
        yield s
        s.close()

    @pytest.mark.parametrize("rule", rules, ids=[r.id for r in rules])
    def test_rule(session: Session, rule: Any) -> None:
        # GIVEN the shipped profile WHEN the rule's numbers are judged on it and its check reads
        # what the sites of its scenarios logged THEN it holds
        v = session.verdict(rule)
        assert v.result == "pass", (f"{rule.id} {v.result}: {rule.sentence}\n  evidence: {v.evidence}\n"
                                    f"  again: heed conformance --bot {bot} --rule {rule.id} --json")

    def test_every_result_it_emitted_validates_against_its_shipped_schema(session: Session) -> None:
        # GIVEN every scenario the rules played (each rule above played what it needed)
        from jsonschema import Draft202012Validator, FormatChecker

        from heed_core.envelope import envelope, schema

        checked = 0
        for seen in session.played:
            for item in seen.out.items:
                # WHEN a result is put in its envelope, as the bus, the webhook and heed events carry it
                record = {k: v for k, v in item.items() if k != "detail_type"}
                env = envelope(str(item["detail_type"]), str(record["id"]), record)
                # THEN it validates against its type's schema, and its id is its record's
                Draft202012Validator(schema(str(item["detail_type"])), format_checker=FormatChecker()).validate(env)
                checked += 1
        assert checked > 0, "the scenarios emitted no result to check"

    return session, test_rule, test_every_result_it_emitted_validates_against_its_shipped_schema

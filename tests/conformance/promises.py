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


def rule_tests(bot: str) -> tuple[Callable[..., Iterator[Session]], Callable[..., None]]:
    """The module-scoped ``session`` fixture and the parametrized ``test_rule`` for ``bot``."""
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

    return session, test_rule

"""A host's token comes out of its hide a little before its host is due (``heed serve``'s
``LEAD_S``): only the hides that wait for the host's pace or its work's time are shortened, never
one after a failure, and never below nothing. That the request then leaves when the host is due,
not before, is ``tests/integration/test_serve_concurrency.py``'s (real sites, real gaps)."""
from __future__ import annotations

from typing import Any, cast

from heed_core.service import Hide

from heed_embedded.queue import Message, WorkQueue
from heed_embedded.service import _Hides

SLACK = 0.02
LEAD = 0.1


class _Queue:
    def __init__(self) -> None:
        self.hidden: list[tuple[str, float, Any]] = []

    def hide(self, hides: list[tuple[str, float, Any]]) -> None:
        self.hidden += hides


def _msg(receipt: str) -> Message:
    return Message(1, "http://a.test", "{}", 1, receipt, 0.0)


def _hidden(*hides: Hide[Message], lead: float = LEAD) -> dict[str, float]:
    queue = _Queue()
    _Hides(cast(WorkQueue, queue), SLACK, lead).hide_many(list(hides))
    return {receipt: round(seconds, 6) for receipt, seconds, _ in queue.hidden}


def test_a_hide_for_the_hosts_pace_or_its_works_time_comes_out_early_by_the_lead() -> None:
    got = _hidden(Hide(_msg("gap"), 2.0, 5.0, "gap"), Hide(_msg("fetched"), 4.0, 1.0, "fetched"),
                  Hide(_msg("not_before"), 60.0, None, "not_before"))
    assert got == {"gap": 1.92, "fetched": 3.92, "not_before": 59.92}


def test_no_other_hide_is_shortened_and_none_below_nothing() -> None:
    got = _hidden(Hide(_msg("failed"), 5.0), Hide(_msg("lease"), 1.0, None, "lease_taken"),
                  Hide(_msg("short"), 0.05, None, "gap"), Hide(_msg("now"), 0.0, None, "gap"))
    assert got == {"failed": 5.02, "lease": 1.02, "short": 0.07, "now": 0.0}


def test_without_a_lead_every_hide_is_as_long_as_asked_and_the_slack() -> None:
    assert _hidden(Hide(_msg("gap"), 2.0, None, "gap"), lead=0.0) == {"gap": 2.02}

"""heed_core.batch: what becomes of each token of a batch after its host's turn, and when each is
hidden, the one rule set both batch services (SQS's and the embedded engine's) follow."""
from __future__ import annotations

from heed_core.batch import REDRAIN_S, Outcome, after_drain, all_back, before_drain, turn_outcomes
from heed_core.crawl import TurnResult
from heed_core.drain import Pending
from heed_core.hoststate import DrainMark, Outbox
from heed_core.turn import TokenIn

A, B = "http://a.example", "http://b.example"


def _pending(host: str) -> Pending:
    return Pending(host, Outbox(version=2), DrainMark())


def test_an_acknowledged_turn_acknowledges_the_later_tokens_whose_work_it_took() -> None:
    turn = TurnResult("ack", pending=_pending(A))
    out = turn_outcomes("m1", [("m2", TokenIn(A, "t2")), ("m3", TokenIn(A, "t3"))], A, turn)
    assert [(o.msg, o.failed, o.hide) for o in out] == [("m1", False, None), ("m2", False, None), ("m3", False, None)]
    assert out[0].pending is turn.pending and out[1].pending is None


def test_a_deferring_turn_that_took_nothing_hides_every_token_of_the_host_for_what_is_left_of_its_wait() -> None:
    # GIVEN a turn at t=100 deferring its host 10 s, which did not take the later tokens' work
    turn = TurnResult("defer", delay_s=10.0, at=100.0, took_also=False)
    out = turn_outcomes("m1", [("m2", TokenIn(A, "t2")), ("x", TokenIn(B, "tb"))], A, turn)
    # THEN none is acknowledged, and at t=104 the host's two are hidden 6 s, another host's 10 s
    assert [o.failed for o in out] == [True, True, True]
    assert before_drain(out, 104.0) == [("m1", 6.0), ("m2", 6.0), ("x", 10.0)]


def test_a_token_with_an_outbox_is_hidden_only_after_the_drain_and_comes_back_soon_if_it_did_not_leave() -> None:
    # GIVEN three tokens: one deferred with an outbox, one done with an outbox that leaves, one
    # done with an outbox that does not
    deferred = Outcome("d", failed=True, hide=TurnResult("defer", delay_s=3.0, at=50.0), pending=_pending(A))
    drained, stuck = Outcome("ok", pending=_pending(B)), Outcome("s", pending=_pending("http://c.example"))
    batch = [deferred, drained, stuck, *all_back(["r"], 2.0)]
    # THEN before the drain only the one without an outbox is hidden
    assert before_drain(batch, 51.0) == [("r", 2.0)]
    # AND after it the deferred one for what is left, the stuck one for REDRAIN_S, unacknowledged
    assert after_drain(batch, {"http://c.example": "throttled"}, 51.0) == [("d", 2.0), ("s", REDRAIN_S)]
    assert stuck.failed and not drained.failed

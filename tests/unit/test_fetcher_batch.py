"""The fetcher's FIFO partial-batch handling: deferral hides, never sleeps, never DLQs; failures by kind."""
from __future__ import annotations

import json
import time
from typing import Any

from heed_core.crawl import Crawler, TurnResult
from heed_core.drain import Pending
from heed_core.errors import TransientError
from heed_core.hoststate import DrainMark, Outbox
from heed_core.ports import FakeClock, FetchRequest, FetchResult
from heed_core.profile import load_profile
from heed_core.work import WorkItem

from heed_aws.service import MAX_REAL_FAILURES, process_batch

from tests.support.memstore import FakeQueue, FakeTransport, ListJournal, ListResults, MemoryStore

T0 = 1_709_618_400.0


class FakeCrawler:
    def __init__(self, turns: dict[str, object]) -> None:
        self.turns = turns
        self.calls: list[str] = []
        self.charged: list[str] = []
        self.clock = FakeClock(T0)

    aux = ("robots",)

    def host_turn(self, token: Any, snapshot: Any = None) -> TurnResult:
        self.calls.append(token.host)
        turn = self.turns[token.host]
        if isinstance(turn, Exception):
            raise turn
        return turn  # type: ignore[return-value]

    def charge_failure(self, token: Any, limit: int, detail: str) -> None:
        self.charged.append(token.host)


def _rec(msg_id: str, host: str, items: list[WorkItem] | None = None, receives: int = 1) -> dict[str, Any]:
    body = {"v": 2, "host": host, "tok": f"t-{msg_id}", "items": [i.to_compact() for i in items or []]}
    return {"messageId": msg_id, "receiptHandle": f"rh-{msg_id}", "body": json.dumps(body),
            "attributes": {"MessageGroupId": host, "ApproximateReceiveCount": str(receives)}}


def _batch(records: list[dict[str, Any]], crawler: Any, queue: FakeQueue | None = None,
           store: MemoryStore | None = None, results: ListResults | None = None,
           journal: ListJournal | None = None) -> dict[str, Any]:
    return process_batch(records, crawler, queue or FakeQueue(), store or MemoryStore(), results or ListResults(),
                         journal or ListJournal())


def test_common_05_deferred_host_hides_its_first_token_takes_in_the_later_ones_and_other_hosts_go_on() -> None:
    # GIVEN a batch with two tokens of host A (not ready for 7.2 s) and one of host B (done)
    queue = FakeQueue()
    crawler = FakeCrawler({"http://a:80": TurnResult("defer", delay_s=7.2),
                           "http://b:80": TurnResult("ack", requests=1)})
    records = [_rec("1", "http://a:80"), _rec("2", "http://a:80"), _rec("3", "http://b:80")]
    t0 = time.monotonic()
    # WHEN the fetcher processes it
    resp = _batch(records, crawler, queue)
    # THEN it did not sleep; A had one turn, which took the second token's work in with its own
    # (so a host never has two tokens in flight) and is hidden for the wait; the second token
    # and B's are acknowledged
    assert time.monotonic() - t0 < 0.5
    assert resp == {"batchItemFailures": [{"itemIdentifier": "1"}]}
    assert queue.hidden == [("rh-1", 7.2)]
    assert crawler.calls == ["http://a:80", "http://b:80"]


def test_the_later_tokens_of_a_host_are_taken_in_by_its_turn_and_written_before_their_ack() -> None:
    clock = FakeClock(T0)
    store, queue = MemoryStore(), FakeQueue()
    crawler = Crawler(load_profile("springstudiobot"), store, FakeTransport(clock), ListJournal(), ListResults(), clock,
                      tokens=queue)
    later = WorkItem(url="http://a:80/later", purpose="page", task="page", source_id="s", source_url="http://a:80/later",
                     round_id="r1", round_start=T0, not_before=T0 + 3600)
    first = WorkItem(url="http://a:80/first", purpose="page", task="page", source_id="s", source_url="http://a:80/first",
                     round_id="r1", round_start=T0, not_before=T0 + 600)
    resp = _batch([_rec("1", "http://a:80", [first]), _rec("2", "http://a:80", [later])], crawler, queue, store)
    # THEN the first token waits for its work; the second is acknowledged, its work is in the frontier
    assert resp == {"batchItemFailures": [{"itemIdentifier": "1"}]}
    assert sorted(i.url for i in store.pending_work("http://a:80")) == ["http://a:80/first", "http://a:80/later"]


def test_every_record_deferred_is_a_normal_answer_not_an_error() -> None:
    # Powertools' FIFO processor raises BatchProcessingError when all records fail; a batch of
    # deferrals is normal here, so the handler answers with every record as a batch item failure.
    crawler = FakeCrawler({"http://a:80": TurnResult("defer", delay_s=1.0),
                           "http://b:80": TurnResult("defer", delay_s=2.0)})
    resp = _batch([_rec("1", "http://a:80"), _rec("2", "http://b:80")], crawler)
    assert [f["itemIdentifier"] for f in resp["batchItemFailures"]] == ["1", "2"]


def test_a_transient_error_hides_the_token_and_charges_nothing() -> None:
    # GIVEN a turn that meets DynamoDB throttling
    queue = FakeQueue()
    crawler = FakeCrawler({"http://a:80": TransientError("ProvisionedThroughputExceededException")})
    resp = _batch([_rec("1", "http://a:80", receives=3)], crawler, queue)
    # THEN the token comes back after a backoff, and the work item is not charged
    assert resp == {"batchItemFailures": [{"itemIdentifier": "1"}]}
    assert queue.hidden == [("rh-1", 2.0)] and crawler.charged == []


class Boom:
    """A transport that fails as a bug would (not a network error: those are answers)."""

    def fetch(self, request: FetchRequest) -> FetchResult:
        raise RuntimeError("boom")


def test_real_failures_are_counted_per_work_item_and_end_as_a_skip() -> None:
    # GIVEN a host whose turn keeps failing (a bug in the turn, or a broken dependency)
    clock = FakeClock(T0)
    store, journal, queue = MemoryStore(), ListJournal(), FakeQueue()
    crawler = Crawler(load_profile("springstudiobot"), store, Boom(), journal, ListResults(), clock, tokens=queue)  # type: ignore[arg-type]
    item = WorkItem(url="http://a:80/x", purpose="page", task="page", source_id="s", source_url="http://a:80/x",
                    round_id="r1", round_start=T0)
    # WHEN SQS delivers it again and again
    for n in range(MAX_REAL_FAILURES):
        resp = _batch([_rec(str(n), "http://a:80", [item], receives=n + 1)], crawler, queue, store, journal=journal)
        assert resp["batchItemFailures"] == [{"itemIdentifier": str(n)}]
        clock.advance(60)
    # THEN after MAX_REAL_FAILURES the item is settled as a skip, long before SQS's maxReceiveCount,
    # and the host is free again
    assert [s["reason"] for s in journal.skips] == ["processing_failed"]
    assert store.pending_work("http://a:80") == []
    assert all(seconds >= 2 for _, seconds in queue.hidden)  # back soon, not after the visibility timeout


def test_malformed_token_is_acknowledged_not_looped() -> None:
    journal = ListJournal()
    bad = {"messageId": "9", "receiptHandle": "rh", "body": "not json", "attributes": {"MessageGroupId": "g"}}
    nohost = {"messageId": "8", "receiptHandle": "rh8", "body": json.dumps({"host": "not a url"}),
              "attributes": {"MessageGroupId": "g2"}}
    resp = _batch([bad, nohost], FakeCrawler({}), journal=journal)
    assert resp == {"batchItemFailures": []}
    assert [s["reason"] for s in journal.skips] == ["bad_token", "bad_token"]


def test_an_undecodable_work_item_is_skipped_and_the_rest_of_the_token_done() -> None:
    clock = FakeClock(T0)
    store, journal, queue = MemoryStore(), ListJournal(), FakeQueue()
    good = WorkItem(url="http://a:80/x", purpose="page", task="page", source_id="s", source_url="http://a:80/x",
                    round_id="r1", round_start=T0)
    body = {"v": 2, "host": "http://a:80", "tok": "t1", "items": [{"u": "http://a:80/y"}, good.to_compact()]}
    crawler = FakeCrawler({"http://a:80": TurnResult("ack")})
    rec = {"messageId": "1", "receiptHandle": "rh", "body": json.dumps(body), "attributes": {"MessageGroupId": "g"}}
    _batch([rec], crawler, queue, store, journal=journal)
    assert crawler.calls == ["http://a:80"]  # the host's turn ran with the good item
    del clock


def test_outboxes_of_a_batch_leave_together_and_an_undrained_host_comes_back_soon() -> None:
    # GIVEN two hosts whose turns each committed an event; the bus refuses the first call
    def pending(host: str, rid: str) -> Pending:
        return Pending(host, Outbox(version=2, events=(("item.found", rid, {"url": host + "/1"}),)), DrainMark(1))

    crawler = FakeCrawler({"http://a:80": TurnResult("ack", pending=pending("http://a:80", "ra")),
                           "http://b:80": TurnResult("ack", pending=pending("http://b:80", "rb"))})
    queue, store, results = FakeQueue(), MemoryStore(), ListResults(fail_next=1)
    resp = _batch([_rec("1", "http://a:80"), _rec("2", "http://b:80")], crawler, queue, store, results)
    # THEN neither token is acknowledged: each comes back soon and its turn drains its outbox first
    assert resp == {"batchItemFailures": [{"itemIdentifier": "1"}, {"itemIdentifier": "2"}]}
    assert [h for h, _ in queue.hidden] == ["rh-1", "rh-2"] and results.events == []
    assert store.read_host("http://a:80").drained == DrainMark(1)
    # WHEN the bus is back THEN both events leave in one call and the marks say so
    resp = _batch([_rec("3", "http://a:80"), _rec("4", "http://b:80")], crawler, queue, store, results)
    assert resp == {"batchItemFailures": []}
    assert sorted(r["url"] for _, r in results.events) == ["http://a:80/1", "http://b:80/1"]
    assert store.read_host("http://b:80").drained == DrainMark(2)


def test_a_token_with_an_outbox_is_hidden_only_after_it_drained_one_without_before() -> None:
    # GIVEN two hosts deferred for 0 s (a wait already over): a's turn committed an event, b's nothing
    order: list[str] = []

    class OrderedQueue(FakeQueue):
        def hide(self, handles: list[tuple[str, float]]) -> None:
            order.extend(f"hide {h}" for h, _ in handles)
            super().hide(handles)

    class OrderedResults(ListResults):
        def emit_many(self, events: Any) -> list[str]:
            order.append("events")
            return super().emit_many(events)

    outbox = Outbox(version=2, events=(("item.found", "ra", {"url": "http://a:80/1"}),))
    crawler = FakeCrawler({"http://a:80": TurnResult("defer", delay_s=0.0, pending=Pending("http://a:80", outbox,
                                                                                          DrainMark(1))),
                           "http://b:80": TurnResult("defer", delay_s=0.0)})
    results = OrderedResults()
    # WHEN the batch is done
    resp = _batch([_rec("1", "http://a:80"), _rec("2", "http://b:80")], crawler, OrderedQueue(), results=results)
    # THEN b's token is hidden at once; a's only once its event has left: hidden early, it could come
    # back to another invocation while its outbox is leaving and be drained (its events sent) twice
    assert order == ["hide rh-2", "events", "hide rh-1"]
    assert resp == {"batchItemFailures": [{"itemIdentifier": "1"}, {"itemIdentifier": "2"}]}
    assert [r["url"] for _, r in results.events] == ["http://a:80/1"]

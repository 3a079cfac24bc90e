"""The fetcher's FIFO partial-batch handling, with fakes: deferral hides, never sleeps, never DLQs."""
from __future__ import annotations

import json
import time

from heed_aws.service import MAX_REAL_FAILURES, process_batch
from heed_core.crawl import TurnResult
from heed_core.work import WorkItem


class FakeQueue:
    def __init__(self) -> None:
        self.hidden: list[tuple[str, float]] = []
        self.sent: list[tuple[str, str, str]] = []

    def hide(self, receipt: str, seconds: float) -> None:
        self.hidden.append((receipt, seconds))

    def send_tokens(self, tokens):  # type: ignore[no-untyped-def]
        self.sent += tokens


class FakeCrawler:
    def __init__(self, turns: dict[str, object]) -> None:
        self.turns = turns
        self.calls: list[str] = []

    def host_turn(self, host: str) -> TurnResult:
        self.calls.append(host)
        turn = self.turns[host]
        if isinstance(turn, Exception):
            raise turn
        return turn  # type: ignore[return-value]


class FakeStore:
    def __init__(self, item: WorkItem | None = None) -> None:
        self.item = item
        self.completed: list[WorkItem] = []

    def pending_work(self, host, limit=25):  # type: ignore[no-untyped-def]
        return [self.item] if self.item else []

    def update_work(self, item):  # type: ignore[no-untyped-def]
        self.item = item

    def complete_work(self, item):  # type: ignore[no-untyped-def]
        self.completed.append(item)
        self.item = None


class FakeJournal:
    def __init__(self) -> None:
        self.skips: list[dict] = []

    def request(self, record):  # type: ignore[no-untyped-def]
        pass

    def skip(self, record):  # type: ignore[no-untyped-def]
        self.skips.append(record)


def _rec(msg_id: str, host: str) -> dict:
    return {"messageId": msg_id, "receiptHandle": f"rh-{msg_id}", "body": json.dumps({"host": host, "round_id": "r1"}),
            "attributes": {"MessageGroupId": host, "ApproximateReceiveCount": "1"}}


def test_common_05_deferred_host_hides_its_later_records_and_other_hosts_go_on():
    # GIVEN a batch with two tokens of host A (not ready for 7.2 s) and one of host B (ready)
    queue, journal = FakeQueue(), FakeJournal()
    crawler = FakeCrawler({"http://a:80": TurnResult("defer", delay_s=7.2),
                           "http://b:80": TurnResult("ack", more=True, requests=1)})
    records = [_rec("1", "http://a:80"), _rec("2", "http://a:80"), _rec("3", "http://b:80")]
    t0 = time.monotonic()
    # WHEN the fetcher processes it
    resp = process_batch(records, crawler, queue, FakeStore(), journal)  # type: ignore[arg-type]
    # THEN it did not sleep, A's two tokens are hidden for the wait and reported failed
    # (FIFO order within a host holds), B was processed and got a follow-up token
    assert time.monotonic() - t0 < 0.5
    assert resp == {"batchItemFailures": [{"itemIdentifier": "1"}, {"itemIdentifier": "2"}]}
    assert queue.hidden == [("rh-1", 7.2), ("rh-2", 7.2)]
    assert crawler.calls == ["http://a:80", "http://b:80"]
    assert queue.sent == [("http://b:80", "r1", "after:3")]


def test_every_record_deferred_is_a_normal_answer_not_an_error():
    # Powertools' FIFO processor raises BatchProcessingError when all records fail; a batch of
    # deferrals is normal here, so the handler answers with every record as a batch item failure.
    queue = FakeQueue()
    crawler = FakeCrawler({"http://a:80": TurnResult("defer", delay_s=1.0), "http://b:80": TurnResult("defer", delay_s=2.0)})
    resp = process_batch([_rec("1", "http://a:80"), _rec("2", "http://b:80")], crawler, queue, FakeStore(), FakeJournal())  # type: ignore[arg-type]
    assert [f["itemIdentifier"] for f in resp["batchItemFailures"]] == ["1", "2"]


def test_real_failures_are_counted_per_work_item_and_end_as_a_skip():
    # GIVEN a host whose turn keeps failing (e.g. a bug or a state outage)
    item = WorkItem(url="http://a:80/x", purpose="page", task="page", source_id="s", source_url="http://a:80/x",
                    round_id="r1", round_start=0.0)
    store, journal, queue = FakeStore(item), FakeJournal(), FakeQueue()
    crawler = FakeCrawler({"http://a:80": RuntimeError("boom")})
    # WHEN SQS delivers it again and again
    for n in range(MAX_REAL_FAILURES):
        resp = process_batch([_rec(str(n), "http://a:80")], crawler, queue, store, journal)  # type: ignore[arg-type]
        assert resp["batchItemFailures"] == [{"itemIdentifier": str(n)}]
    # THEN after MAX_REAL_FAILURES the item is settled as a skip, long before SQS's maxReceiveCount
    assert store.completed == [item.__class__(**{**item.__dict__, "failures": MAX_REAL_FAILURES - 1})]
    assert journal.skips and journal.skips[0]["reason"] == "processing_failed"
    assert queue.hidden == []  # a real failure keeps the queue's visibility timeout


def test_malformed_token_is_acknowledged_not_looped():
    queue = FakeQueue()
    bad = {"messageId": "9", "receiptHandle": "rh", "body": "not json", "attributes": {"MessageGroupId": "g"}}
    resp = process_batch([bad], FakeCrawler({}), queue, FakeStore(), FakeJournal())  # type: ignore[arg-type]
    assert resp == {"batchItemFailures": []}

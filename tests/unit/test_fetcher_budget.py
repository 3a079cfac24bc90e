"""The fetcher's time budget: a turn starts only if it can end before the timeout; the records it
could not start go back at once as batch item failures (not lost, not late)."""
from __future__ import annotations

import json
from typing import Any

from heed_core.crawl import Crawler
from heed_core.ports import FakeClock
from heed_core.profile import load_profile
from heed_core.work import WorkItem

from heed_aws.service import DRAIN_RESERVE_S, TURN_OVERHEAD_S, Budget, batch_size, process_batch

from tests.support.memstore import FakeQueue, FakeTransport, ListJournal, ListResults, MemoryStore, Reply

T0 = 1_709_618_400.0
TIMEOUT_S = 60.0


class Context:
    """Lambda's context, its remaining time read from the fake clock (no wall-clock waiting)."""

    def __init__(self, clock: FakeClock, timeout_s: float) -> None:
        self.clock, self.deadline = clock, clock.now() + timeout_s

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.deadline - self.clock.now()) * 1000))


def _record(n: int, host: str, item: WorkItem) -> dict[str, Any]:
    body = {"v": 2, "host": host, "tok": f"round-{n}", "items": [item.to_compact()]}
    return {"messageId": f"m{n}", "receiptHandle": f"rh-{n}", "body": json.dumps(body),
            "attributes": {"MessageGroupId": host, "ApproximateReceiveCount": "1"}}


def test_aube_batch_of_ten_on_a_slow_site_returns_what_it_could_not_start_and_ends_in_time() -> None:
    # GIVEN AubeBot (one request at a time), 10 records of 10 hosts, each site taking 25 s an answer
    profile = load_profile("aubebot")
    clock = FakeClock(T0)
    transport = FakeTransport(clock, default=Reply(200, body=b"<rss/>", duration=25.0))
    store, queue, journal = MemoryStore(), FakeQueue(), ListJournal()
    crawler = Crawler(profile, store, transport, journal, ListResults(), clock, tokens=queue)
    hosts = [f"http://slow{n}.example:80" for n in range(10)]
    records = [_record(n, h, WorkItem(url=f"{h}/feed.xml", purpose="feed", task="feed", source_id=f"s{n}",
                                      source_url=f"{h}/feed.xml", round_id="r1", round_start=T0))
               for n, h in enumerate(hosts)]
    context = Context(clock, TIMEOUT_S)
    turn_s = float(profile.get("fetch.total_deadline_s")) + TURN_OVERHEAD_S
    budget = Budget(remaining_s=lambda: context.get_remaining_time_in_millis() / 1000.0, turn_s=turn_s)
    # WHEN the fetcher works the batch under Lambda's 60 s
    resp = process_batch(records, crawler, queue, store, ListResults(), journal, parallel=1, budget=budget)
    # THEN it started only the turns that could end in time (one request each), and ended inside the budget
    # (a turn needs 30 s + 3 s and 5 s are kept for the drain: the first starts with 60 s left and
    # ends at 25 s; with 35 s left a second could run past the timeout)
    started = len(transport.requests)
    assert started == 1
    assert clock.now() - T0 <= TIMEOUT_S - DRAIN_RESERVE_S
    failed = [f["itemIdentifier"] for f in resp["batchItemFailures"]]
    not_started = [f"m{n}" for n in range(started, len(records))]
    # AND every record it did not start is a batch item failure, visible again at once (not left
    # for the 900 s visibility timeout), its host untouched
    assert set(not_started) <= set(failed)
    assert {(h, s) for h, s in queue.hidden if h in {f"rh-{n}" for n in range(started, 10)}} == {
        (f"rh-{n}", 0.0) for n in range(started, 10)}
    for h in hosts[started:]:
        assert store.read_host(h).version == 0
    # AND the records it started are the first ones, in order, one request each
    assert [r.url for r in transport.requests] == [f"{h.removesuffix(':80')}/robots.txt" for h in hosts[:started]]


def test_without_a_budget_or_with_time_enough_every_record_gets_its_turn() -> None:
    profile = load_profile("aubebot")
    clock = FakeClock(T0)
    transport = FakeTransport(clock, default=Reply(200, body=b"<rss/>", duration=0.2))
    store, queue, journal = MemoryStore(), FakeQueue(), ListJournal()
    crawler = Crawler(profile, store, transport, journal, ListResults(), clock, tokens=queue)
    hosts = [f"http://fast{n}.example:80" for n in range(3)]
    records = [_record(n, h, WorkItem(url=f"{h}/feed.xml", purpose="feed", task="feed", source_id=f"s{n}",
                                      source_url=f"{h}/feed.xml", round_id="r1", round_start=T0))
               for n, h in enumerate(hosts)]
    context = Context(clock, TIMEOUT_S)
    budget = Budget(remaining_s=lambda: context.get_remaining_time_in_millis() / 1000.0, turn_s=33.0)
    process_batch(records, crawler, queue, store, ListResults(), journal, parallel=1, budget=budget)
    assert len(transport.requests) == 3 and all(r[1] > 0 for r in queue.hidden)


def test_batch_size_is_what_the_turns_can_surely_finish_in_one_invocation() -> None:
    # AubeBot: one request at a time, up to 30 s each, in a 60 s function: one record a batch
    aube = load_profile("aubebot")
    assert batch_size(float(aube.get("fetch.total_deadline_s")), 1, 60.0) == 1
    # bots whose hosts run side by side (10 at once) fill SQS's batch of 10
    assert batch_size(30.0, 10, 60.0) == 10
    assert batch_size(5.0, 1, 60.0) == 6  # (60 - 5) // (5 + 3) requests, one after another
    assert batch_size(120.0, 1, 60.0) == 1  # never below one

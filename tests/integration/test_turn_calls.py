"""What a host turn costs in DynamoDB calls, on the real store (DynamoStore on moto, the table built
from template.yaml), counted with botocore's hooks: a turn that only learns "not yet" makes one
call (the snapshot's BatchGetItem); a turn that fetches reads once and commits once; the turns of
one fetcher batch share one read."""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from heed_core.crawl import Crawler
from heed_core.ports import FakeClock
from heed_core.profile import Profile, load_profile, load_profile_data
from heed_core.turn import TokenIn
from heed_core.work import Source, WorkItem

from heed_aws.service import process_batch
from heed_aws.store import DynamoStore

from tests.support.memstore import FakeQueue, FakeTokens, FakeTransport, ListJournal, ListResults, Reply
from tests.support.stack import moto_stack

T0 = 1_796_112_000.0  # 2026-12-02T08:00:00Z
SITE = "https://news.example"
HOST = "https://news.example:443"


@pytest.fixture
def dynamo() -> Iterator[tuple[Any, str, Counter[str]]]:
    with moto_stack("calls") as (session, stack):
        client = session.client("dynamodb")
        calls: Counter[str] = Counter()
        client.meta.events.register("before-call.dynamodb.*", lambda model, **_: calls.update([model.name]))
        yield client, stack.table_name, calls


def _crawler(client: Any, table: str, clock: FakeClock, profile: Profile | None = None) -> tuple[Crawler, DynamoStore]:
    transport = FakeTransport(clock)
    transport.script(SITE + "/robots.txt", Reply(200, {"Content-Type": "text/plain"}, b"User-agent: *\nAllow: /\n"))
    transport.script(SITE + "/a", Reply(200, {"Content-Type": "text/html"}, b"<html><title>A</title></html>"))
    store = DynamoStore(table, client)
    return Crawler(profile or load_profile("aubebot"), store, transport, ListJournal(), ListResults(), clock,
                   tokens=FakeTokens()), store


def test_common_05_a_turn_that_only_waits_makes_one_dynamodb_call(dynamo: tuple[Any, str, Counter[str]]) -> None:
    client, table, calls = dynamo
    clock = FakeClock(T0)
    crawler, store = _crawler(client, table, clock)
    src = Source(id="a", url=SITE + "/a", kind="feed")
    store.put_source(src)
    item = WorkItem(url=SITE + "/a", purpose="article", task="feed", source_id="a", source_url=SITE + "/a",
                    round_id="r1", round_start=T0)
    token = TokenIn(HOST, "tok-1", (item,), message_id="m-1")
    # GIVEN the host's robots.txt read by this token's first turn (a claim, the request, a commit)
    first = crawler.host_turn(token)
    assert first.action == "defer" and first.requests == 1
    # WHEN the same token comes back before the gap has passed
    calls.clear()
    clock.advance(0.2)
    again = crawler.host_turn(token)
    # THEN it defers for what is left of the gap, at the cost of the snapshot alone
    assert again.action == "defer" and again.requests == 0 and again.delay_s > 0
    assert calls == Counter({"BatchGetItem": 1})
    # and another token of the host, while this one holds it, pays the same
    calls.clear()
    other = crawler.host_turn(TokenIn(HOST, "tok-2", (), message_id="m-2"))
    assert other.action == "defer" and other.why == "lease_taken"
    assert calls == Counter({"BatchGetItem": 1})


# AubeBot's turn also takes and frees AUBE-11's request slot (a conditional put of one small item
# each, right before and right after the request); a bot without politeness.max_in_flight takes none.
@pytest.mark.parametrize(("max_in_flight", "puts"), [(None, 1), (1, 3)])
def test_a_turn_that_fetches_reads_once_and_commits_once(dynamo: tuple[Any, str, Counter[str]],
                                                          max_in_flight: int | None, puts: int) -> None:
    client, table, calls = dynamo
    clock = FakeClock(T0)
    profile = load_profile_data({"extends": "aubebot", "politeness": {"max_in_flight": max_in_flight}})
    crawler, store = _crawler(client, table, clock, profile)
    store.put_source(Source(id="a", url=SITE + "/a", kind="feed"))
    item = WorkItem(url=SITE + "/a", purpose="article", task="feed", source_id="a", source_url=SITE + "/a",
                    round_id="r1", round_start=T0)
    token = TokenIn(HOST, "tok-1", (item,), message_id="m-1")
    assert crawler.host_turn(token).requests == 1  # robots.txt, claiming the host
    clock.advance(10.0)
    calls.clear()
    # WHEN the owner token comes back after the gap and fetches the page
    turn = crawler.host_turn(token)
    # THEN one read and one conditional write (no claim: the token holds the host already)
    assert turn.requests == 1
    assert calls == Counter({"BatchGetItem": 1, "PutItem": puts}), calls


def test_common_05_the_hosts_of_one_batch_are_read_in_one_call(dynamo: tuple[Any, str, Counter[str]]) -> None:
    client, table, calls = dynamo
    clock = FakeClock(T0)
    transport = FakeTransport(clock)
    hosts = [f"https://n{i}.example:443" for i in range(3)]
    for i in range(3):
        transport.script(f"https://n{i}.example/robots.txt",
                         Reply(200, {"Content-Type": "text/plain"}, b"User-agent: *\n"))
    store = DynamoStore(table, client)
    crawler = Crawler(load_profile("aubebot"), store, transport, ListJournal(), ListResults(), clock,
                      tokens=FakeTokens())
    records = []
    for i, host in enumerate(hosts):
        item = WorkItem(url=f"https://n{i}.example/a", purpose="article", task="feed", source_id="a",
                        source_url=f"https://n{i}.example/a", round_id="r1", round_start=T0)
        assert crawler.host_turn(TokenIn(host, f"tok-{i}", (item,), message_id=f"m-{i}")).requests == 1  # robots.txt
        records.append({"messageId": f"m-{i}", "receiptHandle": f"rh-{i}",
                        "body": json.dumps({"v": 2, "host": host, "tok": f"tok-{i}", "items": [item.to_compact()]}),
                        "attributes": {"MessageGroupId": host, "ApproximateReceiveCount": "2"}})
    # WHEN the three tokens come back together, before their gaps have passed
    clock.advance(0.2)
    calls.clear()
    queue = FakeQueue()
    resp = process_batch(records, crawler, queue, store, ListResults(), ListJournal(), parallel=3)
    # THEN all three wait, at the cost of one read for the batch
    assert len(resp["batchItemFailures"]) == 3 and len(queue.hidden) == 3
    assert calls == Counter({"BatchGetItem": 1}), calls

"""Each fault, alone, on the real stack: nothing lost, nothing doubled, no gap broken.

The documented, bounded refetch: a turn that dies after its request and before its commit made
a request that left no trace; the work is done again once (the lease and the visibility timeout
keep the gap). Every other fault costs the sites nothing."""
from __future__ import annotations

import json
import threading
import time
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest

from heed_core.crawl import ROTATE_AT

from heed.local.runtime import LocalRun

from tests.faults.conftest import Faults, FaultWeb, check, crawl, host_commit, profile


def test_baseline_without_faults(web: FaultWeb, tmp_path: Path) -> None:
    c = crawl(profile(), web, tmp_path)
    check(web, c)
    assert all(n == 1 for n in Counter(f"{r.host}{r.path}" for r in web.log()).values())


# --- delivery ------------------------------------------------------------------------------------
def test_every_record_delivered_twice_and_out_of_order(web: FaultWeb, tmp_path: Path) -> None:
    """Every token of a round delivered again, last first, as new messages (past SQS's
    five-minute dedup window): the hosts remember the tokens they took in for days."""
    faults = Faults()
    faults.record("sqs.SendMessageBatch")

    def again(run: LocalRun) -> None:
        run.fire(run.clock.now(), ["feed"])
        run.drain()
        before = (len(web.log()), run.out.n["items"])
        sent = [e for params in faults.recorded for e in params["Entries"]]
        assert sent
        for n, e in enumerate(reversed(sent)):
            run.sqs.send_message(QueueUrl=run.res.queue_url, MessageBody=e["MessageBody"],
                                 MessageGroupId=e["MessageGroupId"], MessageDeduplicationId=f"again-{n}")
        run.watch.sent(len(sent))
        run.drain()
        assert (len(web.log()), run.out.n["items"]) == before

    c = crawl(profile(), web, tmp_path, faults, before=again, rounds=0)
    check(web, c)


# --- crashes ---------------------------------------------------------------------------------------
def test_a_crash_before_the_commit_refetches_that_page_once(web: FaultWeb, tmp_path: Path) -> None:
    # GIVEN the invocation dies right before the commit that follows the feed's request (v3:
    # claim v1, robots.txt v2, the feed v3) on one host
    faults = Faults()
    ip = web.servers[0].host.split(":")[0]
    faults.add("dynamodb.PutItem", "crash", when=host_commit(ip, 3))
    c = crawl(profile(), web, tmp_path, faults)
    assert faults.rules[0].fired == 1
    # THEN that feed was read twice (the documented refetch), everything else once, and every
    # result reported once: the first read's effects never left the host
    check(web, c, refetched=1)
    feed_reads = [r for r in web.servers[0].log() if r.path == "/feed.xml"]
    clock = c.run.clock  # (the sites log wall time; the runtime's clock waited out the timeout)
    assert len(feed_reads) == 2 and clock.at(feed_reads[1].t_start) - clock.at(feed_reads[0].t_end) >= 600


def test_a_crash_after_the_commit_and_before_the_ack_refetches_nothing(web: FaultWeb, tmp_path: Path) -> None:
    # GIVEN the first invocations die when the runtime acknowledges (deletes) their tokens
    faults = Faults()
    faults.add("sqs.DeleteMessageBatch", "crash", times=2)
    c = crawl(profile(), web, tmp_path, faults)
    assert faults.rules[0].fired == 2
    check(web, c)


def test_a_crash_between_the_commit_and_the_drain_loses_no_result(web: FaultWeb, tmp_path: Path) -> None:
    # GIVEN invocations that die when their outboxes start to leave (events first)
    faults = Faults()
    faults.add("events.PutEvents", "crash", times=2)
    c = crawl(profile(), web, tmp_path, faults)
    assert faults.rules[0].fired == 2
    # THEN the next turn of each host drains its outbox before deciding: nothing lost or doubled
    check(web, c)


# --- AWS errors ---------------------------------------------------------------------------------------
def test_dynamodb_throttling_on_a_share_of_calls_costs_the_sites_nothing(web: FaultWeb, tmp_path: Path) -> None:
    faults = Faults()
    # (a batch's hosts are read in one call and drained in one: those calls are few, so more often)
    for op, every in (("dynamodb.BatchGetItem", 3), ("dynamodb.PutItem", 9), ("dynamodb.BatchWriteItem", 3)):
        faults.add(op, "throttle", times=-1, every=every)
    c = crawl(profile(), web, tmp_path, faults)
    assert sum(r.fired for r in faults.rules) >= 3
    # THEN a throttled turn is tried again later and not charged: no work item given up
    assert not [s for s in c.skips() if s["reason"] == "processing_failed"]
    check(web, c, refetched=len(web.servers) * 4)


@pytest.mark.slow
def test_a_partial_putevents_failure_puts_the_refused_event_later_once(web: FaultWeb, tmp_path: Path) -> None:
    faults = Faults()
    faults.add("events.PutEvents", "partial", times=2)
    c = crawl(profile(), web, tmp_path, faults)
    assert faults.rules[0].fired == 2
    check(web, c)


@pytest.mark.slow
def test_a_failing_putevents_call_puts_its_events_later_once(web: FaultWeb, tmp_path: Path) -> None:
    faults = Faults()
    faults.add("events.PutEvents", "error", times=3)
    c = crawl(profile(), web, tmp_path, faults)
    assert faults.rules[0].fired == 3
    check(web, c)


def test_an_s3_failure_keeps_nothing_half_written(web: FaultWeb, tmp_path: Path) -> None:
    # GIVEN a bot that keeps article texts (Praha-X's shape), and S3 failing twice
    faults = Faults()
    faults.add("s3.PutObject", "error", times=2)
    p = profile(tasks={"feed": {"article_followup": {"mode": "short_summary", "summary_shorter_than": 600,
                                                     "once_ever": True, "keep_text": True,
                                                     "per_source_per_window": 10, "total_per_window": 100,
                                                     "window_s": 900}}})
    c = crawl(p, web, tmp_path, faults)
    assert faults.rules[0].fired == 2
    # THEN the articles whose text could not be kept were read again (bounded), each result once
    check(web, c, refetched=2)
    assert all("text_key" in i for i in c.items() if i["detail_type"] == "article.read")


# --- races, poison --------------------------------------------------------------------------------------
def test_two_turns_racing_on_one_host_never_overlap(web: FaultWeb, tmp_path: Path) -> None:
    """A token handed to two invocations at once (as when its visibility runs out while it is
    worked on): copies in other message groups, invoked side by side."""
    def race(run: LocalRun) -> None:
        run.fire(run.clock.now(), ["feed"])
        msgs = run.receive()
        copies = []
        for n, m in enumerate(msgs[:1] * 3):
            run.sqs.send_message(QueueUrl=run.res.queue_url, MessageBody=m["Body"], MessageGroupId=f"copy-{n}",
                                 MessageDeduplicationId=f"copy-{n}-{time.time()}")
        copies = run.receive()
        threads = [threading.Thread(target=run.invoke, args=([m],)) for m in msgs[:1] + copies]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if msgs[1:]:
            run.invoke(msgs[1:])

    c = crawl(profile(), web, tmp_path, before=race)
    check(web, c)
    for s in web.servers:
        log = s.log()
        assert all(b.t_start >= a.t_end for a, b in pairwise(log)), "two requests in flight to one host"


def test_poison_and_undecodable_messages_are_set_aside_with_a_reason(web: FaultWeb, tmp_path: Path) -> None:
    host = f"http://{web.servers[0].host}"

    def poison(run: LocalRun) -> None:
        for n, body in enumerate(["not json", json.dumps({"host": "nowhere"}),
                                  json.dumps({"v": 2, "host": host, "tok": "bad", "items": [{"u": host + "/x"}]})]):
            run.sqs.send_message(QueueUrl=run.res.queue_url, MessageBody=body, MessageGroupId=f"p{n}",
                                 MessageDeduplicationId=f"p{n}")
        run.watch.sent(3)

    c = crawl(profile(), web, tmp_path, before=poison)
    reasons = Counter(s["reason"] for s in c.skips())
    assert reasons["bad_token"] == 2 and reasons["bad_work_item"] == 1
    check(web, c)
    assert c.run.max_receive_count <= ROTATE_AT


# --- the scheduler -------------------------------------------------------------------------------------
def _tick(run: LocalRun, t: float) -> dict[str, object]:
    from heed_core.refusals import iso

    from heed.local.runtime import LambdaContext

    return run.scheduler({"detail-type": "Scheduled Event", "source": "aws.events",
                          "time": iso(t).replace(".000Z", "Z"), "detail": {}}, LambdaContext("SchedulerFunction"))


def test_a_tick_failing_half_way_is_done_again_and_starts_each_host_once(tmp_path: Path) -> None:
    # GIVEN more hosts than one SendMessageBatch carries, and the second batch failing
    web = FaultWeb().start(hosts=12, articles=1)
    try:
        faults = Faults()
        faults.add("sqs.SendMessageBatch", "error", when=lambda p: any('"items"' in e["MessageBody"] and
                                                                          '"feed"' in e["MessageBody"]
                                                                          for e in p["Entries"]), times=1)
        p = profile()

        def ticks(run: LocalRun) -> None:
            t = (int(run.clock.now()) // 900 + 1) * 900  # the next quarter hour: AubeBot's firing
            run.clock.jump_to(t - 60)
            assert _tick(run, t - 60)["items"] == 0  # the tick before: nothing due yet
            run.clock.jump_to(t + 1)
            first = None
            try:
                first = _tick(run, t + 1)
            except Exception:  # noqa: BLE001 - the failing tick: EventBridge fires the next one
                pass
            assert first is None and faults.calls["sqs.SendMessageBatch"] >= 1
            run.clock.jump_to(t + 61)
            again = _tick(run, t + 61)
            assert again["items"] == 12, again
            run.watch.sent(12)
            run.drain()

        c = crawl(p, web, tmp_path, faults, before=ticks, rounds=0)
        # THEN every host got its feed read once: the first batch's tokens and the redone tick's
        # were the same tokens (their ids), taken in once
        reads = Counter(r.host for r in web.log() if r.path == "/feed.xml")
        assert len(reads) == 12 and set(reads.values()) == {1}, reads
        del c
    finally:
        web.stop()


def test_ticks_missed_for_a_day_start_one_round_not_ninety_six(web: FaultWeb, tmp_path: Path) -> None:
    def day_off(run: LocalRun) -> None:
        t = (int(run.clock.now()) // 900 + 1) * 900
        run.clock.jump_to(t)
        _tick(run, t)
        run.watch.sent(3)
        run.drain()
        # the scheduler is off for a day, then ticks again
        run.clock.jump_to(t + 86400 + 30)
        run.release_hidden(86400)
        _tick(run, t + 86400 + 30)
        run.watch.sent(3)
        run.drain()

    crawl(profile(), web, tmp_path, before=day_off, rounds=0)
    reads = Counter(r.host for r in web.log() if r.path == "/feed.xml")
    assert set(reads.values()) == {2}, reads  # the first round and one round after the gap (AUBE-08)


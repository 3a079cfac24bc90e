"""SpringStudioBot's stack under at-least-once delivery: what no promise names, but SPRING-02's
"one page per source each time" rests on. A work token handed to a second invocation while the
first is still settling (its visibility ran out during a slow write) costs the site no second
request: the first turn's lease holds the host."""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from heed_core.profile import load_profile
from heed_core.work import Source

from heed.conformance.model import utc
from heed.conformance.sites import Sites, html_page, robots
from heed.conformance.stack import Stack, derive
from heed.demo.web import Hit, Route

START = utc("2026-12-01T06:00")  # the shipped cron(0 6 * * ? *)


def _slow_listing(hit: Hit) -> str:
    time.sleep(0.25)  # the request is in flight long enough for a copy of its token to arrive
    return html_page("Liste", "<main><article><h2><a href='/sak/1'>Sak</a></h2>"
                              "<time datetime='2026-12-01T05:00:00Z'>i dag</time></article></main>")


def _hand_to_two(stack: Stack, stagger_s: float) -> None:
    """The next token, and a copy of it in another message group (as SQS redelivers a token whose
    visibility ran out), each to its own fetcher invocation, ``stagger_s`` apart; then the rest."""
    run = stack.run
    first = run.sqs.receive_message(QueueUrl=run.res.queue_url, MaxNumberOfMessages=1,
                                    AttributeNames=["All"])["Messages"]
    run.watch.received(first)
    run.sqs.send_message(QueueUrl=run.res.queue_url, MessageBody=first[0]["Body"], MessageGroupId="copy-1",
                         MessageDeduplicationId=f"copy-1-{time.time()}")
    copy = run.sqs.receive_message(QueueUrl=run.res.queue_url, MaxNumberOfMessages=10,
                                   AttributeNames=["All"]).get("Messages", [])
    run.watch.received(copy)
    assert copy, "the copy of the token was not handed out"
    threads = [threading.Thread(target=run.invoke, args=([m],)) for m in first + copy]
    threads[0].start()
    time.sleep(stagger_s)
    threads[1].start()
    for t in threads:
        t.join()
    run.drain()


def test_spring_02_a_token_redelivered_mid_request_fetches_no_page_twice(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN one listing that takes 0.25 s to answer, and a store slow to write the host's item
    # (0.8 s: a throttled DynamoDB write), so the window around the request stays open
    from heed_aws.store import DynamoStore

    sites = Sites()
    try:
        base = sites.add("dobbel", {"/robots.txt": robots("User-agent: *\nDisallow: /privat/\n"),
                                    "/liste/": Route(body=_slow_listing)})
        profile = derive(load_profile("springstudiobot"), 0)
        stack = Stack(profile, [Source("liste", base + "/liste/", "page")], tmp_path, START - 60,
                      resolver=sites.resolver)
        try:
            stack.round(START - 30, ["page"])  # robots.txt (and the listing once) before the day's round
            before = len(sites.log("dobbel"))
            real_write = DynamoStore.write_host

            def slow_write(self: Any, host: str, expected_version: int, **kw: Any) -> bool:
                time.sleep(0.8)
                return bool(real_write(self, host, expected_version, **kw))

            monkeypatch.setattr(DynamoStore, "write_host", slow_write)
            stack.advance_to(START)
            stack.run.fire(START, ["page"])
            # WHEN a second invocation gets the host's token 0.5 s after the first (mid-settle)
            _hand_to_two(stack, stagger_s=0.5)
            out = stack.finish()
        finally:
            stack.close()
        # THEN the round still cost the site one page, and the run recorded just that one (and the earlier round's)
        log = sites.log("dobbel")[before:]
        assert [r.path for r in log] == ["/liste/"]
        assert [r["url"] for r in out.requests if r.get("purpose") == "page"].count(base + "/liste/") == 2
    finally:
        sites.stop()

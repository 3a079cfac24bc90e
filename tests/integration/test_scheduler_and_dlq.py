"""The scheduler tick (due-ness from the profile, idempotent) and deferrals that never reach the DLQ."""
from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from heed_core.crawl import ROTATE_AT
from heed_core.profile import load_profile_data
from heed_core.work import Source

from heed.demo.web import RecordingServer, Route, Site
from heed.local.runtime import LambdaContext, LocalRun


def _ts(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def _feed_site(ip: str, n_items: int, crawl_delay: float | None = None) -> RecordingServer:
    robots = "User-agent: *\nAllow: /\n" + (f"Crawl-delay: {crawl_delay}\n" if crawl_delay else "")
    items = "".join(f"<item><title>T{i}</title><link>{{{{base}}}}/a/{i}</link><description>s</description></item>"
                    for i in range(n_items))
    routes = {"/robots.txt": Route(body=robots, content_type="text/plain"),
              "/feed.xml": Route(body=f'<?xml version="1.0"?><rss version="2.0"><channel><title>x</title>{items}'
                                      "</channel></rss>", content_type="application/rss+xml")}
    routes.update({f"/a/{i}": Route(body=f"<html><title>A{i}</title><main><p>text {i}</p></main></html>")
                   for i in range(n_items)})
    return RecordingServer(Site(name="feeds", routes=routes), ip=ip).start()


def test_repeated_schedule_firing_enqueues_nothing_twice(tmp_path: Path):
    # GIVEN AubeBot (rate(15 minutes)) with two feeds on one host, and the 10:15 tick
    server = _feed_site("127.0.0.51", 1)
    profile = load_profile_data({"extends": "aubebot", "politeness": {"min_delay_s": 0.1}})
    sources = [Source(id=f"f{i}", url=f"{server.base_url}/feed.xml?{i}", kind="feed") for i in range(2)]
    run = LocalRun(profile, sources, start=_ts("2026-11-30T10:14:00"), until=_ts("2026-11-30T10:14:00"),
                   out_dir=tmp_path, allow_private=True, patience_s=3)
    try:
        run.setup()
        event = {"detail-type": "Scheduled Event", "source": "aws.events", "time": "2026-11-30T10:15:00Z", "detail": {}}
        from heed_aws import runtime

        # WHEN EventBridge delivers the same tick twice, then the next minute's tick
        first = run.scheduler(event, LambdaContext("SchedulerFunction"))
        again = run.scheduler(event, LambdaContext("SchedulerFunction"))
        later = run.scheduler({**event, "time": "2026-11-30T10:16:00Z"}, LambdaContext("SchedulerFunction"))
        # THEN exactly one round started (the 10:15 firing), with one work item per feed and one token
        assert first["rounds"] == ["2026-11-30T10:15:00Z/feed"] and first["items"] == 2
        assert again["items"] == 0 and later["items"] == 0 and later["rounds"] == []
        attrs = run.sqs.get_queue_attributes(QueueUrl=run.res.queue_url, AttributeNames=["ApproximateNumberOfMessages"])
        assert attrs["Attributes"]["ApproximateNumberOfMessages"] == "1"
        # the one token of the host carries the work of both feeds
        (msg,) = run.sqs.receive_message(QueueUrl=run.res.queue_url)["Messages"]
        body = json.loads(msg["Body"])
        assert body["host"] == f"http://{server.host}" and len(body["items"]) == 2
        del runtime
    finally:
        run.close()
        server.stop()


@pytest.mark.slow
def test_deferrals_never_push_a_token_into_the_dlq(tmp_path: Path):
    # GIVEN one host with a feed and 12 articles to read one by one (every turn after a fetch is
    # deferred by the host's Crawl-delay)
    server = _feed_site("127.0.0.52", 12, crawl_delay=0.3)
    profile = load_profile_data({"extends": "praha-x", "politeness": {"min_delay_s": 0.1}})
    feed = Source(id="f", url=f"{server.base_url}/feed.xml", kind="feed", options={"write_about": True})
    run = LocalRun(profile, [feed], start=time.time(), until=time.time(), out_dir=tmp_path, allow_private=True,
                   patience_s=5)
    summary = run.run()
    try:
        # THEN every article was read, and no token came near SQS's maxReceiveCount: a host's token
        # is hidden between its requests and replaced after ROTATE_AT receives; the DLQ is empty
        assert sum(1 for r in server.log() if r.path.startswith("/a/")) == 12
        assert 1 <= summary["max_receive_count"] <= ROTATE_AT < run.res.max_receive_count
        assert summary["deferred_at_end"] == 0
        reqs = [json.loads(x) for x in (tmp_path / "requests.jsonl").read_text().splitlines()]
        # robots.txt, tdmrep.json (PRAHA-03), the feed, 12 articles
        assert [r["purpose"] for r in reqs[:3]] == ["robots", "feed", "tdmrep"] and len(reqs) == 15
    finally:
        server.stop()

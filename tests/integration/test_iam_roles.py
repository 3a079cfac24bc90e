"""The functions' roles allow what they do and nothing of what they must not: every AWS call a
local run's handlers make is checked against the roles in the translated template (tests/conftest.py
does it for every test; this one shows the check sees the calls and refuses what it should)."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from heed_core.profile import load_profile_data
from heed_core.work import Source

from heed.demo.web import RecordingServer, Route, Site
from heed.local.runtime import LocalRun

from tests.support.iam import CallRecorder, Names, Roles, stack_parameters


def test_a_local_run_makes_only_calls_its_roles_allow_and_forbidden_ones_would_be_caught(tmp_path: Path) -> None:
    # GIVEN AubeBot's shape on one feed, the calls of its run recorded by function
    items = "".join(f"<item><title>T{i}</title><link>{{{{base}}}}/a/{i}</link></item>" for i in range(2))
    site = RecordingServer(Site(name="feeds", routes={
        "/robots.txt": Route(body="User-agent: *\nAllow: /\n", content_type="text/plain"),
        "/feed.xml": Route(body=f'<?xml version="1.0"?><rss version="2.0"><channel><title>x</title>{items}'
                                "</channel></rss>", content_type="application/rss+xml"),
        **{f"/a/{i}": Route(body=f"<html><title>A{i}</title><main><p>t {i}</p></main></html>") for i in range(2)}},
    ), ip="127.0.0.61").start()
    profile = load_profile_data({"extends": "aubebot", "politeness": {"min_delay_s": 0.1}})
    recorders: list[CallRecorder] = []
    run: Any = None

    def hook(session: Any) -> None:
        recorder = CallRecorder(lambda: run.acting_function)
        recorder.attach(session)
        recorders.append(recorder)

    try:
        now = time.time()
        run = LocalRun(profile, [Source("f1", f"{site.base_url}/feed.xml", "feed")], start=now, until=now,
                       out_dir=tmp_path, allow_private=True, patience_s=3, session_hook=hook)
        run.setup()
        run.fire(time.time(), ["feed"])
        run.drain()
        res = run.res
    finally:
        if run is not None:
            run.close()
        site.stop()
    (recorder,) = recorders
    names = Names(res.table_name, res.queue_url, res.dlq_url, res.bus_name, res.bucket)
    roles = Roles.of(stack_parameters(profile), names)
    seen = {(f, s, op) for f, s, op, _ in recorder.calls}
    # THEN both functions' calls were seen (the poller's under the fetcher's role), all allowed
    assert {f for f, _, _ in seen} == {"SchedulerFunction", "FetcherFunction"}
    assert {("SchedulerFunction", "sqs", "SendMessageBatch"), ("SchedulerFunction", "dynamodb", "Query"),
            ("FetcherFunction", "sqs", "ReceiveMessage"), ("FetcherFunction", "dynamodb", "PutItem"),
            ("FetcherFunction", "events", "PutEvents")} <= seen, seen
    assert recorder.denied(roles, names) == []
    # AND what the roles must not allow is refused: no Scan or delete for the scheduler, no
    # lifecycle change for the fetcher (COMMON-08's version expiry), nothing on another table
    table = {"TableName": res.table_name}
    recorder.calls += [("SchedulerFunction", "dynamodb", "Scan", table),
                       ("SchedulerFunction", "dynamodb", "DeleteItem", table),
                       ("FetcherFunction", "s3", "PutBucketLifecycleConfiguration", {"Bucket": res.bucket}),
                       ("FetcherFunction", "dynamodb", "GetItem", {"TableName": "someone-elses"}),
                       ("SchedulerFunction", "events", "PutEvents", {"Entries": [{"EventBusName": res.bus_name}]})]
    denied = recorder.denied(roles, names)
    assert len(denied) == 5 and any("dynamodb:Scan" in d for d in denied)
    assert any("s3:PutBucketLifecycleConfiguration" in d for d in denied)

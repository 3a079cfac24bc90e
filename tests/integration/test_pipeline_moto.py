"""The pipeline on moto: real handlers, FIFO tokens per host, DynamoDB state, real HTTP on loopback."""
from __future__ import annotations

import json
import threading
import time
from itertools import pairwise
from pathlib import Path

import pytest

from heed_core.profile import load_profile_data
from heed_core.work import Source

from heed.demo.web import RecordingServer, Route, Site
from heed.local.runtime import LocalRun

NETWORK_S = 0.05  # each page takes this long to answer: the network time a fetcher is billed for


def _page(title: str) -> Route:
    def body(hit: object) -> str:
        time.sleep(NETWORK_S)
        return (f"<!doctype html><html><head><title>{title}</title></head><body><main><article>"
                f"<h2><a href='/artikler/{title}'>{title}</a></h2><time datetime='2026-11-30T08:00:00Z'>i dag</time>"
                f"</article></main></body></html>")
    return Route(body=body)


def _site(name: str, ip: str, crawl_delay: float | None) -> RecordingServer:
    robots = "User-agent: *\nDisallow: /privat/\n" + (f"Crawl-delay: {crawl_delay}\n" if crawl_delay else "")
    routes = {"/robots.txt": Route(body=robots, content_type="text/plain; charset=utf-8")}
    routes.update({f"/liste/{i}/": _page(f"{name}-{i}") for i in range(5)})
    return RecordingServer(Site(name=name, routes=routes), ip=ip).start()


@pytest.fixture
def two_hosts():
    a = _site("a", "127.0.0.21", None)  # gap = the profile's 0.3 s
    b = _site("b", "127.0.0.22", 0.5)  # gap = its Crawl-delay, 0.5 s
    yield a, b
    a.stop()
    b.stop()


def _profile():
    # SpringStudioBot's shape with small delays, so the rule's shape is proven in seconds.
    return load_profile_data({"extends": "springstudiobot",
                              "politeness": {"min_delay_s": 0.3, "crawl_delay_cap_s": 1}})


def _sources(*servers: RecordingServer) -> list[Source]:
    return [Source(id=f"{s.site.name}{i}", url=f"{s.base_url}/liste/{i}/", kind="page")
            for s in servers for i in range(5)]


def _gaps(log):
    return [b.t_start - a.t_end for a, b in pairwise(log)]


def test_common_05_two_hosts_paced_per_host_and_billed_for_network_time(two_hosts, tmp_path: Path, monkeypatch):
    # GIVEN two hosts that need 0.3 s and 0.5 s between requests, five pages each
    a, b = two_hosts
    run = LocalRun(_profile(), _sources(a, b), start=time.time(), until=time.time(), out_dir=tmp_path,
                   allow_private=True, patience_s=5)
    slept_in_handler: list[float] = []
    real_sleep = time.sleep
    main = threading.get_ident()

    def watched_sleep(seconds: float) -> None:
        if run.in_handler and threading.get_ident() == main:
            slept_in_handler.append(seconds)
        real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", watched_sleep)
    # WHEN one round runs through the real scheduler and fetcher handlers on moto
    summary = run.run()
    # THEN each host saw robots.txt first, then its pages in order, never closer than its gap
    for server, gap in ((a, 0.3), (b, 0.5)):
        log = server.log()
        assert [r.path for r in log] == ["/robots.txt"] + [f"/liste/{i}/" for i in range(5)]
        assert all(r.method == "GET" for r in log)
        assert min(_gaps(log)) >= gap, _gaps(log)
    # AND the fetcher was billed for network time, not for the waits between requests
    requests = [json.loads(x) for x in (tmp_path / "requests.jsonl").read_text().splitlines()]
    assert len(requests) == 12
    waits = 5 * 0.3 + 5 * 0.5
    billed = summary["fetcher_billed_s"]
    # (state calls on in-process moto cost a few ms each on a quiet machine, more on a busy one:
    # that overhead is allowed; a handler that slept would be billed at least the waits)
    assert slept_in_handler == []
    assert billed < waits, summary
    items = [json.loads(x) for x in (tmp_path / "items.jsonl").read_text().splitlines()]
    assert sorted(i["title"] for i in items) == sorted(f"{n}-{i}" for n in "ab" for i in range(5))


def test_redelivered_token_makes_no_second_request(tmp_path: Path, monkeypatch):
    # GIVEN one host with one page, and a fetcher invocation whose turn committed and whose outbox
    # left, but whose token was never deleted (the invocation died before the ack), so SQS
    # delivers it again
    server = _site("c", "127.0.0.23", None)
    try:
        run = LocalRun(_profile(), _sources(server)[:1], start=time.time(), until=time.time(),
                       out_dir=tmp_path, allow_private=True, patience_s=2)
        run.setup()
        real_delete = run.sqs.delete_message_batch
        crashed: list[int] = []

        def dying_delete(**kwargs):
            if len(server.log()) == 2 and not crashed:  # robots.txt and the page are done
                crashed.append(1)
                raise RuntimeError("simulated crash after the commit, before the ack")
            return real_delete(**kwargs)

        run.sqs.delete_message_batch = dying_delete
        run.fire(time.time(), ["page"])
        run.drain()
        assert crashed
        # WHEN the token comes back (after its visibility timeout, which the test shortens
        # instead of waiting fifteen minutes)
        for handle in list(run.watch.handle_of.values()):
            run.sqs.change_message_visibility(QueueUrl=run.res.queue_url, ReceiptHandle=handle, VisibilityTimeout=0)
        run.watch.sent(1)
        run.drain()
        # THEN the page was requested once, and its result reported once
        pages = [r for r in server.log() if r.path.startswith("/liste/")]
        assert len(pages) == 1
        items = [json.loads(x) for x in (tmp_path / "items.jsonl").read_text().splitlines()]
        assert [i["title"] for i in items] == ["c-0"]
        # AND a copy of the token delivered again after it was acknowledged fetches nothing more
        before = len(server.log())
        msgs = run.sqs.get_queue_attributes(QueueUrl=run.res.queue_url, AttributeNames=["All"])["Attributes"]
        assert msgs["ApproximateNumberOfMessages"] == "0"
        host = f"http://{server.host}"
        run.sqs.send_message(QueueUrl=run.res.queue_url, MessageBody=json.dumps({"host": host, "round_id": "x"}),
                             MessageGroupId="again", MessageDeduplicationId="again")
        run.watch.sent(1)
        run.drain()
        assert len(server.log()) == before
    finally:
        run.close()
        server.stop()

"""The desk on the AWS engine (issue 37): the DeskFunction's code on the local runtime's moto stack
(the real fetcher and scheduler handlers crawling recording sites), every AWS call it makes held
to DeskFunction's role in the template (tests/conftest.py): its records in the state table, the
proof file's read queued on the work queue and made by the fetcher in its turn, a stop on the
block list, a slower pace in the host's state, a purge of the table and the bucket, the operator
told on the alarm topic. And the function URL's translation: cookies apart, a body too big
refused by its Content-Length, the client's address CloudFront's only with the stack's secret."""
from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from heed_core.hoststate import HostView
from heed_core.profile import load_profile
from heed_core.work import Source

from heed.desk.aws import client_of, function_url_handler
from heed.local.runtime import LocalRun, operator_store

from tests.support.desk import DeskSites, WsgiClient, aws_desk_app, clf, desk_profile


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[dict[str, Any]]:
    sites = DeskSites(n=3, first=30).start()
    profile = load_profile(str(desk_profile(tmp_path / "bot.yaml", gap_s=0.3)))
    sources = [Source(id=f"feed{i}", url=f"{s.base_url}/feed.xml", kind="feed") for i, s in enumerate(sites.servers)]
    now = time.time()
    run = LocalRun(profile, sources, start=now, until=now, out_dir=tmp_path / "out", allow_private=True,
                   patience_s=2.0)
    run.setup()
    try:
        session = run._session
        topic = session.client("sns").create_topic(Name="heed-test-alarms")["TopicArn"]
        run.alarm_topic = topic  # type: ignore[attr-defined]  # the IAM check's: the stack's alarm topic
        sqs = session.client("sqs")
        inbox = sqs.create_queue(QueueName="operator-inbox")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=inbox, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        session.client("sns").subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn)
        run.fire(run.now(), ["feed"])
        run.drain()
        yield {"run": run, "sites": sites, "app": aws_desk_app(run, topic_arn=topic), "inbox": inbox, "sqs": sqs,
               "profile": profile}
    finally:
        run.close()
        sites.stop()


def test_the_desk_on_the_stack_answers_proves_and_stops_within_its_role(stack: dict[str, Any]) -> None:
    run, sites = stack["run"], stack["sites"]
    a = sites.servers[0]
    feed = next(r for r in a.log() if r.path == "/feed.xml")
    c = WsgiClient(stack["app"])
    # was this you? three lines, three verdicts
    lines = "\n".join([clf(feed), clf(feed, ip="198.51.100.7", ua="Mozilla/5.0 (compatible; AubeBot/0.1)"),
                       clf(feed, t=feed.t_start - 3 * 86400)])
    _, _, page = c.call("POST", "/desk/lines", {"csrf": c.csrf(), "host": sites.host(0), "lines": lines})
    assert re.findall(r'data-verdict="([a-z-]+)"', page) == ["ours", "not-ours", "not-ours"]
    # a proof: the token placed, its read queued on the work queue, made by the fetcher in its turn
    csrf = c.csrf()
    _, _, page = c.call("POST", "/desk/token", {"csrf": csrf, "host": "http://" + sites.host(0), "method": "http"})
    token = re.search(r'id="token">([^<]+)<', page)
    assert token is not None
    sites.place(0, "/.well-known/heed-desk-aubebot.txt", token.group(1))
    status, _, page = c.call("POST", "/desk/check", {"csrf": csrf, "token": token.group(1)})
    assert status == 200 and 'http-equiv="refresh"' in page
    run.drain()
    status, headers, _ = c.call("GET", f"/desk/check?token={token.group(1)}")
    assert (status, headers.get("Location")) == (303, "/desk/site?proven=1")
    # its audit, from the fetcher's log; what is kept of it; the explain of its URLs, not of B's
    _, _, page = c.call("GET", "/desk/site")
    assert sorted(re.findall(r'<td class="path">([^<]*)</td>', page)) == sorted(r.path for r in a.log())
    assert re.search(r'id="kept">4 ', page)  # the feed, its two articles, the proof (robots.txt has none)
    _, _, page = c.call("POST", "/desk/explain", {"csrf": csrf, "url": f"http://{sites.host(0)}/a/0"})
    assert 'id="explained"' in page and "/a/0" in page
    _, _, page = c.call("POST", "/desk/explain", {"csrf": csrf, "url": f"http://{sites.host(1)}/a/0"})
    assert 'id="explained"' not in page
    # slow down, stop, remove: through the operator's store, each told on the alarm topic
    host = f"http://{sites.host(0)}"
    assert c.call("POST", "/desk/slow", {"csrf": csrf, "gap": "60"})[0] == 200
    ops = operator_store()
    assert HostView.from_record(ops.read_hosts([host])[host]).pacing.floor_s == 60.0
    assert c.call("POST", "/desk/stop", {"csrf": csrf})[0] == 200
    name = sites.host(0).split(":")[0]
    assert [(d, r.split(":")[0]) for d, r, _ in ops.block_list()] == [(name, "site owner")]
    assert c.call("POST", "/desk/remove", {"csrf": csrf})[0] == 200
    assert not [sk for sk, _ in ops.host_items(host) if sk.startswith("U#")]
    told = []
    for _ in range(5):
        for m in stack["sqs"].receive_message(QueueUrl=stack["inbox"], MaxNumberOfMessages=10).get("Messages", []):
            told.append(json.loads(json.loads(m["Body"])["Message"])["desk_action"])
        if len(told) == 3:
            break
    assert told == ["slow", "stop", "remove"]
    # the next round: the stopped host gets nothing, the others go on
    before = len(a.log())
    run.fire(run.now(), ["feed"])
    run.drain()
    assert len(a.log()) == before
    assert [r.path for r in sites.servers[1].log()][-1] == "/feed.xml"
    assert [r.path for r in sites.servers[2].log()][-1] == "/feed.xml"


def _app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    """A stand-in desk: what arrived, as JSON, and two cookies."""
    seen = {k: v for k, v in environ.items() if k.isupper()}
    seen["body"] = environ["wsgi.input"].read().decode()
    start_response("200 OK", [("Content-Type", "application/json"), ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2")])
    return [json.dumps(seen).encode()]


def test_a_function_url_event_is_a_wsgi_call_and_back() -> None:
    event = {"version": "2.0", "rawPath": "/desk/lines", "rawQueryString": "x=1", "cookies": ["heed_desk=ab", "s=c"],
             "headers": {"content-type": "application/x-www-form-urlencoded", "host": "d.lambda-url.eu-west-1.on.aws",
                         "x-forwarded-for": "198.51.100.9"},
             "body": "aG9zdD14", "isBase64Encoded": True,
             "requestContext": {"http": {"method": "POST", "sourceIp": "198.51.100.9"}}}
    answer = function_url_handler(_app, event)
    seen = json.loads(answer["body"])
    assert (seen["REQUEST_METHOD"], seen["PATH_INFO"], seen["QUERY_STRING"], seen["body"]) == \
        ("POST", "/desk/lines", "x=1", "host=x")
    assert seen["HTTP_COOKIE"] == "heed_desk=ab; s=c" and seen["REMOTE_ADDR"] == "198.51.100.9"
    assert answer["cookies"] == ["a=1", "b=2"] and "Set-Cookie" not in answer["headers"]


def test_the_client_is_cloudfronts_viewer_only_with_the_stacks_secret() -> None:
    who = client_of("s3cr3t")
    via = {"REMOTE_ADDR": "130.176.0.1", "HTTP_CLOUDFRONT_VIEWER_ADDRESS": "203.0.113.7:51234"}
    assert who({**via, "HTTP_X_HEED_DESK_ORIGIN": "s3cr3t"}) == "203.0.113.7"
    assert who({**via, "HTTP_X_HEED_DESK_ORIGIN": "guess"}) == "130.176.0.1"  # forged: the caller's own address
    assert who(via) == "130.176.0.1"
    assert client_of(None)({**via, "HTTP_X_HEED_DESK_ORIGIN": ""}) == "130.176.0.1"


def test_a_100_mb_body_is_refused_by_its_content_length(stack: dict[str, Any]) -> None:
    event = {"version": "2.0", "rawPath": "/desk/lines", "rawQueryString": "", "cookies": [],
             "headers": {"content-type": "application/x-www-form-urlencoded", "content-length": str(100 * 2 ** 20)},
             "body": "", "requestContext": {"http": {"method": "POST", "sourceIp": "198.51.100.9"}}}
    answer = function_url_handler(stack["app"], event)
    assert answer["statusCode"] == 413 and answer["body"].count('class="note problem"') == 1


def test_the_functions_handler_wires_the_desk_from_its_environment(stack: dict[str, Any],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from heed.local.runtime import LambdaContext, load_handler

    run = stack["run"]
    for name, value in (("HEED_TABLE", run.res.table_name), ("HEED_QUEUE_URL", run.res.queue_url),
                        ("HEED_BUCKET", run.res.bucket), ("HEED_FETCHER_LOG_GROUP", "/heed/heed-test/fetcher"),
                        ("HEED_ALARM_TOPIC", run.alarm_topic), ("HEED_DESK_ORIGIN_SECRET", "s3cr3t")):
        monkeypatch.setenv(name, value)
    handler = load_handler("desk")
    monkeypatch.setattr(sys.modules["heed_function_desk"], "_app", None)  # built from this environment
    event = {"version": "2.0", "rawPath": "/desk/", "rawQueryString": "", "cookies": [], "headers": {"host": "x"},
             "requestContext": {"http": {"method": "GET", "sourceIp": "198.51.100.9"}}}
    run._local.function = "DeskFunction"  # its calls held to its role
    try:
        answer = handler(event, LambdaContext("DeskFunction"))
    finally:
        run._local.function = None
    assert answer["statusCode"] == 200 and "lo sportello" in answer["body"]
    assert [c.split("=")[0] for c in answer["cookies"]] == ["heed_desk"] and "Secure" in answer["cookies"][0]

"""`heed audit --host`: every request the bot made to one host, from a local run or a deployed stack.

The local path reads a requests.jsonl written the way `heed local run` writes it (the runtime's
own Output, fed through the Lambda journal). The deployed path runs against botocore's Stubber:
moto implements no Logs Insights query, so the stub plays CloudFormation and CloudWatch Logs,
and the test checks what was asked of them as much as what was printed.
"""
from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber

from heed_aws.journal import LogJournal

from heed.awsstack import Aws
from heed.local.runtime import Output
from heed.operator import audit

from tests.support.stack import without_aws

STACK = "heed-aubebot"
LOG_GROUP = "/heed/heed-aubebot/fetcher"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC).timestamp()


def _request(t: str, url: str, *, status: int | None = 200, error: str | None = None, purpose: str = "feed",
             source: str = "feed-1", size: int = 512) -> dict[str, Any]:
    rec: dict[str, Any] = {"bot": "aubebot", "t_start": f"2026-11-30T{t}.000Z", "t_end": f"2026-11-30T{t}.250Z",
                           "method": "GET", "url": url, "purpose": purpose, "bytes": size, "source": source}
    if status is not None:
        rec["status"] = status
    if error is not None:
        rec["error"] = error
    return rec


REQUESTS = [
    _request("10:00:00", "https://news.example/robots.txt", purpose="robots", source="feed-1"),
    _request("10:00:02", "https://news.example/feed.xml?lang=it"),
    _request("10:00:03", "https://other.example/feed.xml", source="feed-2"),
    _request("10:00:05", "https://news.example/2026/articolo.html", purpose="article", size=20480),
    _request("10:00:07", "https://NEWS.example:8443/feed.xml", status=None, error="timeout", size=0),
    _request("10:00:09", "http://news.example/old", status=301, purpose="article", size=0),
    _request("11:30:00", "https://news.example/feed.xml?lang=it", status=304, size=0),
]


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A run's output folder: the requests go through the journal into the local runtime's writer."""
    out = Output(tmp_path / "run")
    journal = LogJournal(out.journal, emit_metrics=False)
    for rec in REQUESTS[:-1]:
        journal.request(rec)
    out.close({"rounds": 1})
    # AND one line from a run before requests carried their host (the audit reads the URL)
    with (tmp_path / "run" / "requests.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps(REQUESTS[-1]) + "\n")
    return tmp_path / "run"


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="heed")
    audit.register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["audit", *argv])


def run(capsys: pytest.CaptureFixture[str], *argv: str, **kwargs: Any) -> tuple[int, str, str]:
    args = parse(*argv)
    code = args.func(args, **kwargs)
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# --- locally: a run's requests.jsonl ------------------------------------------------------------

def test_every_request_to_the_host_with_time_method_path_status_purpose_bytes_source(
        run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a run that asked news.example (on three ports and two schemes) and other.example
    # WHEN its owner asks what the bot did on news.example
    code, out, err = run(capsys, "--host", "news.example", "--out", str(run_dir))
    # THEN one table line per request to that host, in time order, and nothing about the other host
    assert code == 0 and err == ""
    header, *rows = out.splitlines()
    assert header.split() == ["TIME", "METHOD", "STATUS", "PURPOSE", "BYTES", "SOURCE", "URL"]
    assert [r.split() for r in rows] == [
        ["2026-11-30T10:00:00.000Z", "GET", "200", "robots", "512", "feed-1", "https://news.example/robots.txt"],
        ["2026-11-30T10:00:02.000Z", "GET", "200", "feed", "512", "feed-1", "https://news.example/feed.xml?lang=it"],
        ["2026-11-30T10:00:05.000Z", "GET", "200", "article", "20480", "feed-1",
         "https://news.example/2026/articolo.html"],
        ["2026-11-30T10:00:07.000Z", "GET", "timeout", "feed", "0", "feed-1", "https://NEWS.example:8443/feed.xml"],
        ["2026-11-30T10:00:09.000Z", "GET", "301", "article", "0", "feed-1", "http://news.example/old"],
        ["2026-11-30T11:30:00.000Z", "GET", "304", "feed", "0", "feed-1", "https://news.example/feed.xml?lang=it"]]


def test_one_port_shows_paths(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a URL as the host WHEN it names its port THEN only that port, and the table shows paths
    code, out, _ = run(capsys, "--host", "https://news.example:443/any/page", "--out", str(run_dir))
    assert code == 0
    header, *rows = out.splitlines()
    assert header.split()[-1] == "PATH"
    assert [r.split()[-1] for r in rows] == ["/robots.txt", "/feed.xml?lang=it", "/2026/articolo.html",
                                             "/feed.xml?lang=it"]


def test_json_is_one_object_per_request(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--host", "NEWS.EXAMPLE.", "--out", str(run_dir), "--json",
                       "--since", "2026-11-30T10:00:04Z", "--until", "2026-11-30T10:00:08")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows == [
        {"t_start": "2026-11-30T10:00:05.000Z", "t_end": "2026-11-30T10:00:05.250Z", "method": "GET",
         "host": "https://news.example:443", "path": "/2026/articolo.html",
         "url": "https://news.example/2026/articolo.html", "status": 200, "purpose": "article", "bytes": 20480,
         "source": "feed-1"},
        {"t_start": "2026-11-30T10:00:07.000Z", "t_end": "2026-11-30T10:00:07.250Z", "method": "GET",
         "host": "https://news.example:8443", "path": "/feed.xml", "url": "https://NEWS.example:8443/feed.xml",
         "status": None, "purpose": "feed", "bytes": 0, "source": "feed-1", "error": "timeout"}]


def test_a_host_never_asked_is_an_answer_on_stderr(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--host", "quiet.example", "--out", str(run_dir))
    assert (code, out) == (1, "")
    assert one_line(err) == f"heed audit: no request to quiet.example in {run_dir}"


# --- deployed: the fetcher's log group through Logs Insights ------------------------------------

def _cell_rows(records: list[dict[str, Any]]) -> list[list[dict[str, str]]]:
    """Records as Logs Insights returns them: every value a string, @ptr added."""
    rows = []
    for n, rec in enumerate(records):
        row = [{"field": "@timestamp", "value": rec["t_end"].replace("T", " ").rstrip("Z")}]
        row += [{"field": k, "value": str(v)} for k, v in rec.items()]
        rows.append(row + [{"field": "@ptr", "value": f"ptr{n}"}])
    return rows


@pytest.fixture
def stubs() -> Iterator[tuple[Aws, Stubber, Stubber]]:
    keys = {"region_name": "eu-west-1", "aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
    cfn, logs = boto3.client("cloudformation", **keys), boto3.client("logs", **keys)
    with Stubber(cfn) as cfn_stub, Stubber(logs) as logs_stub:
        yield Aws(region="eu-west-1", clients={"cloudformation": cfn, "logs": logs}), cfn_stub, logs_stub
        cfn_stub.assert_no_pending_responses()
        logs_stub.assert_no_pending_responses()


def _stack(stub: Stubber, outputs: dict[str, str] | None = None) -> None:
    outputs = {"FetcherLogGroup": LOG_GROUP, "WorkQueueUrl": "https://sqs/q"} if outputs is None else outputs
    stub.add_response("describe_stacks", {"Stacks": [{
        "StackName": STACK, "CreationTime": datetime(2026, 11, 1, tzinfo=UTC), "StackStatus": "UPDATE_COMPLETE",
        "Outputs": [{"OutputKey": k, "OutputValue": v} for k, v in outputs.items()]}]}, {"StackName": STACK})


def test_deployed_the_fetchers_log_group_is_queried_for_that_host(
        stubs: tuple[Aws, Stubber, Stubber], capsys: pytest.CaptureFixture[str]) -> None:
    aws, cfn, logs = stubs
    since, until = NOW - 3 * 3600, NOW
    # GIVEN the stack's FetcherLogGroup output and a query that runs a moment, then answers
    _stack(cfn)
    logs.add_response("start_query", {"queryId": "q-1"}, {
        "logGroupName": LOG_GROUP, "startTime": int(since), "endTime": int(until) + audit.LOG_SLACK_S + 1,
        "queryString": ANY, "limit": audit.RESULT_LIMIT})
    logs.add_response("get_query_results", {"status": "Running", "results": []}, {"queryId": "q-1"})
    found = [dict(r, host="https://news.example:443") for r in REQUESTS[:2]]
    logs.add_response("get_query_results", {"status": "Complete", "results": _cell_rows(found)}, {"queryId": "q-1"})
    slept: list[float] = []
    # WHEN the owner of news.example asks about the last three hours
    code, out, err = run(capsys, "--host", "news.example", "--stack", STACK, "--since", "2026-11-30T09:00:00Z",
                         "--json", aws=aws, now=lambda: NOW, sleep=slept.append)
    # THEN both requests, with numbers as numbers, after one poll of a second
    assert (code, err) == (0, "")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["path"], r["status"], r["bytes"], r["purpose"]) for r in rows] == [
        ("/robots.txt", 200, 512, "robots"), ("/feed.xml?lang=it", 200, 512, "feed")]
    assert slept == [1.0]


def test_the_insights_query_filters_on_the_host_field() -> None:
    query = audit.insights_query(audit.parse_host("news.example"))
    assert 'filter heed = "request" and host like /^https?:\\/\\/news\\.example:\\d+$/' in query
    assert query.splitlines()[0].startswith("fields @timestamp, t_start, t_end, method, url, host, status, error,")
    assert audit.parse_host("[2001:db8::1]:8080").insights_pattern() == r"/^https?:\/\/\[2001:db8::1\]:8080$/"


def test_deployed_default_window_is_the_last_day(stubs: tuple[Aws, Stubber, Stubber],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    aws, cfn, logs = stubs
    _stack(cfn)
    logs.add_response("start_query", {"queryId": "q-2"}, {
        "logGroupName": LOG_GROUP, "startTime": int(NOW - 86400), "endTime": int(NOW) + audit.LOG_SLACK_S + 1,
        "queryString": ANY, "limit": audit.RESULT_LIMIT})
    logs.add_response("get_query_results", {"status": "Complete", "results": []}, {"queryId": "q-2"})
    code, out, err = run(capsys, "--host", "news.example", "--stack", STACK, aws=aws, now=lambda: NOW,
                         sleep=lambda s: None)
    assert (code, out) == (1, "")
    assert one_line(err) == (f"heed audit: no request to news.example in {LOG_GROUP} "
                             "(2026-11-29T12:00:00Z .. 2026-11-30T12:00:00Z)")


def test_a_query_that_does_not_finish_is_stopped_and_told(stubs: tuple[Aws, Stubber, Stubber],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    aws, cfn, logs = stubs
    _stack(cfn)
    logs.add_response("start_query", {"queryId": "q-3"}, None)
    for _ in range(3):
        logs.add_response("get_query_results", {"status": "Running", "results": []}, {"queryId": "q-3"})
    logs.add_response("stop_query", {"success": True}, {"queryId": "q-3"})
    ticks = iter([0.0, 1.0, 2.0, 3.5])
    code, out, err = run(capsys, "--host", "news.example", "--stack", STACK, "--timeout", "3", aws=aws,
                         now=lambda: NOW, sleep=lambda s: None, clock=lambda: next(ticks))
    assert (code, out) == (2, "")
    assert one_line(err) == ("heed audit: the Logs Insights query did not finish in 3 s "
                             "(a shorter --since/--until scans less, or give --timeout)")


def test_a_failed_query_is_one_line(stubs: tuple[Aws, Stubber, Stubber], capsys: pytest.CaptureFixture[str]) -> None:
    aws, cfn, logs = stubs
    _stack(cfn)
    logs.add_response("start_query", {"queryId": "q-4"}, None)
    logs.add_response("get_query_results", {"status": "Failed", "results": []}, {"queryId": "q-4"})
    code, _, err = run(capsys, "--host", "news.example", "--stack", STACK, aws=aws, now=lambda: NOW,
                       sleep=lambda s: None)
    assert code == 2
    assert one_line(err) == f"heed audit: the Logs Insights query ended Failed (log group {LOG_GROUP})"


def test_an_unknown_stack_is_one_line(stubs: tuple[Aws, Stubber, Stubber], capsys: pytest.CaptureFixture[str]) -> None:
    aws, cfn, _ = stubs
    cfn.add_client_error("describe_stacks", "ValidationError", "Stack with id nope does not exist",
                         expected_params={"StackName": "nope"})
    code, _, err = run(capsys, "--host", "news.example", "--stack", "nope", aws=aws, now=lambda: NOW)
    assert code == 2
    assert one_line(err) == ("heed audit: no stack named 'nope' in eu-west-1 "
                             "(deployed with sam deploy --config-env <bot>?)")


def test_a_stack_from_before_the_log_group_output_is_one_line(stubs: tuple[Aws, Stubber, Stubber],
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    aws, cfn, _ = stubs
    _stack(cfn, {"WorkQueueUrl": "https://sqs/q"})
    code, _, err = run(capsys, "--host", "news.example", "--stack", STACK, aws=aws, now=lambda: NOW)
    assert code == 2
    assert one_line(err) == (f"heed audit: stack {STACK!r} has no output FetcherLogGroup "
                             "(deployed from an older template? redeploy it)")


def test_access_denied_is_one_line(stubs: tuple[Aws, Stubber, Stubber], capsys: pytest.CaptureFixture[str]) -> None:
    aws, cfn, logs = stubs
    _stack(cfn)
    logs.add_client_error("start_query", "AccessDeniedException", "not authorized to perform: logs:StartQuery")
    code, _, err = run(capsys, "--host", "news.example", "--stack", STACK, aws=aws, now=lambda: NOW)
    assert code == 2
    assert one_line(err) == ("heed audit: AWS refused: AccessDeniedException: "
                             "not authorized to perform: logs:StartQuery")


# --- user mistakes: one line, exit 2, no traceback -----------------------------------------------

@pytest.fixture
def no_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No region, no credentials, no config: what a fresh machine has."""
    without_aws(monkeypatch, tmp_path)


@pytest.mark.parametrize(("argv", "line"), [
    (["--host", "news.example", "--stack", STACK],
     "heed audit: no AWS region: give --region or set AWS_REGION"),
    (["--host", "news.example", "--stack", STACK, "--region", "eu-west-1"],
     "heed audit: no AWS credentials (configure them as for the AWS CLI, or give --profile)"),
    (["--host", "news.example", "--stack", STACK, "--profile", "ops"],
     "heed audit: no AWS profile named 'ops' (see ~/.aws/config)"),
])
def test_no_region_no_credentials_no_profile(no_aws: None, capsys: pytest.CaptureFixture[str], argv: list[str],
                                             line: str) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert one_line(err) == line


@pytest.mark.parametrize(("argv", "line"), [
    (["--host", "news example", "--out", "{run}"],
     "heed audit: --host: 'news example' is not a host name (e.g. example.org, example.org:8080 or a URL)"),
    (["--host", "https://user:secret@news.example/", "--out", "{run}"],
     "heed audit: --host: 'https://user:secret@news.example/' is not a host name "
     "(e.g. example.org, example.org:8080 or a URL)"),
    (["--host", "news.example", "--out", "{run}", "--since", "yesterday"],
     "heed audit: --since: 'yesterday' is not an ISO 8601 time (e.g. 2026-11-30T06:00:00Z)"),
    (["--host", "news.example", "--out", "{run}", "--until", "2026-13-01T00:00:00Z"],
     "heed audit: --until: '2026-13-01T00:00:00Z' is not an ISO 8601 time (e.g. 2026-11-30T06:00:00Z)"),
    (["--host", "news.example", "--out", "{run}", "--since", "2026-11-30T11:00:00Z", "--until", "2026-11-30T10:00:00Z"],
     "heed audit: --since is after --until"),
    (["--host", "news.example", "--out", "{run}", "--region", "eu-west-1"],
     "heed audit: --region and --profile go with --stack, not --out"),
    (["--host", "news.example", "--out", "{tmp}"],
     "heed audit: {tmp}: no requests.jsonl here (a `heed local run --out {tmp}` folder)"),
    (["--host", "news.example", "--stack", STACK, "--since", "2026-12-01T00:00:00Z"],
     "heed audit: --since is after now (give --until too)"),
    (["--host", "news.example", "--stack", STACK, "--timeout", "0"],
     "heed audit: --timeout must be a number of seconds above 0"),
])
def test_user_mistakes_are_one_line(run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    argv: list[str], line: str) -> None:
    fill = {"run": str(run_dir), "tmp": str(tmp_path)}
    code, out, err = run(capsys, *[a.format(**fill) for a in argv], now=lambda: NOW, aws=Aws(region="eu-west-1"))
    assert (code, out) == (2, "")
    assert one_line(err) == line.format(**fill)


def test_a_line_that_is_not_json_is_named(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with (run_dir / "requests.jsonl").open("a", encoding="utf-8") as f:
        f.write("{not json\n")
    code, _, err = run(capsys, "--host", "news.example", "--out", str(run_dir))
    assert code == 2
    assert one_line(err) == (f"heed audit: {run_dir / 'requests.jsonl'}:8: not a JSON record "
                             "(is this a heed run's output?)")


def test_wired_into_the_heed_command(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from heed import cli

    parser = cli.build_parser()
    try:
        parser.parse_args(["audit", "--host", "x.example", "--out", "x"])
    except SystemExit:
        capsys.readouterr()
        pytest.skip("heed audit is not wired into src/heed/cli.py yet (cli.py: audit.register(sub))")
    # WHEN it is: a usage mistake is cli's one line, a run is the module's
    assert cli.main(["audit", "--host", "news.example", "--out", str(run_dir), "--json"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 6
    assert cli.main(["audit", "--host", "news.example", "--out", str(run_dir), "--stack", STACK]) == 2
    assert "not allowed with argument" in one_line(capsys.readouterr().err)

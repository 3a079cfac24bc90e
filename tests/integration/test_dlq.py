"""`heed dlq list|redrive`: the dead-letter queue of a stack built from template.yaml, on moto.

A token gets into the DLQ the way it does in AWS: received maxReceiveCount times without being
deleted. SQS's own move (StartMessageMoveTask) is not in moto; that path runs on botocore's
Stubber and checks what was asked of SQS.
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
from botocore.stub import Stubber
from moto import mock_aws

from heed.awsstack import Aws
from heed.local.resources import StackResources, create_stack_resources
from heed.operator import dlq

from tests.support.stack import without_aws

ROOT = Path(__file__).resolve().parents[2]
REGION = "eu-west-1"
STACK = "heed-aubebot"
HOSTS = ("https://news.example:443", "http://feeds.example:8080")


@pytest.fixture
def stack(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[boto3.session.Session, StackResources]]:
    for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                       "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": REGION}.items():
        monkeypatch.setenv(key, value)
    with mock_aws():
        session = boto3.session.Session(region_name=REGION)
        yield session, create_stack_resources(template_path=ROOT / "template.yaml", bot="aubebot",
                                              prefix="heed-dlqtest", session=session)


def _fail_into_dlq(sqs: Any, res: StackResources, host: str, n: int) -> None:
    """A token whose host turn fails every time: received maxReceiveCount times, never deleted."""
    body = json.dumps({"host": host, "round_id": "2026-11-30T10:15:00Z/feed"})
    sqs.send_message(QueueUrl=res.queue_url, MessageBody=body, MessageGroupId=f"g-{n}",
                     MessageDeduplicationId=f"round:{n}")
    for _ in range(res.max_receive_count + 1):  # the receive after the last one moves it
        sqs.receive_message(QueueUrl=res.queue_url, VisibilityTimeout=0, MaxNumberOfMessages=10)


@pytest.fixture
def dead(stack: tuple[boto3.session.Session, StackResources]) -> tuple[boto3.session.Session, StackResources]:
    session, res = stack
    sqs = session.client("sqs")
    for n, host in enumerate(HOSTS):
        _fail_into_dlq(sqs, res, host, n)
    assert _count(sqs, res.dlq_url) == 2 and _count(sqs, res.queue_url) == 0
    return session, res


def _count(sqs: Any, url: str) -> int:
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages",
                                                                    "ApproximateNumberOfMessagesNotVisible"])
    return sum(int(v) for v in attrs["Attributes"].values())


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="heed")
    dlq.register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["dlq", *argv])


def run(capsys: pytest.CaptureFixture[str], *argv: str, aws: Aws | None = None) -> tuple[int, str, str]:
    args = parse(*argv)
    code = args.func(args, aws=aws, wait_s=0) if aws is not None else args.func(args)
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _cfn_with_outputs(res: StackResources) -> tuple[Any, Stubber]:
    cfn = boto3.client("cloudformation", region_name=REGION)
    stub = Stubber(cfn)
    stub.add_response("describe_stacks", {"Stacks": [{
        "StackName": STACK, "CreationTime": datetime(2026, 11, 1, tzinfo=UTC), "StackStatus": "CREATE_COMPLETE",
        "Outputs": [{"OutputKey": "WorkQueueUrl", "OutputValue": res.queue_url},
                    {"OutputKey": "DeadLetterQueueUrl", "OutputValue": res.dlq_url}]}]}, {"StackName": STACK})
    stub.activate()
    return cfn, stub


# --- list -----------------------------------------------------------------------------------------

def test_list_shows_host_token_and_receive_count_and_leaves_them_there(
        dead: tuple[boto3.session.Session, StackResources], capsys: pytest.CaptureFixture[str]) -> None:
    session, res = dead
    # WHEN the operator lists the DLQ by its URL, as JSON
    code, out, err = run(capsys, "list", "--queue-url", res.dlq_url, "--json", aws=Aws(session=session))
    # THEN one object per token: its host and round, id, receive count (this look included), group, body
    assert (code, err) == (0, "")
    rows = sorted((json.loads(line) for line in out.splitlines()), key=lambda r: r["group"])
    assert [(r["host"], r["round_id"], r["group"]) for r in rows] == [
        (HOSTS[0], "2026-11-30T10:15:00Z/feed", "g-0"), (HOSTS[1], "2026-11-30T10:15:00Z/feed", "g-1")]
    assert all(r["receives"] > res.max_receive_count for r in rows)
    assert all(r["token_id"] and r["sent"].endswith("Z") and json.loads(r["body"])["host"] == r["host"] for r in rows)
    # AND nothing left the DLQ, and every token is visible again at once
    sqs = session.client("sqs")
    assert _count(sqs, res.dlq_url) == 2
    assert len(sqs.receive_message(QueueUrl=res.dlq_url, MaxNumberOfMessages=10).get("Messages", [])) == 2


def test_list_by_the_work_queue_url_or_the_stack_shows_the_same_table(
        dead: tuple[boto3.session.Session, StackResources], capsys: pytest.CaptureFixture[str]) -> None:
    session, res = dead
    # GIVEN the work queue's URL (its RedrivePolicy names the DLQ) WHEN listing THEN a table of both tokens
    code, out, _ = run(capsys, "list", "--queue-url", res.queue_url, aws=Aws(session=session))
    assert code == 0
    header, *rows = out.splitlines()
    assert header.split() == ["HOST", "ROUND", "RECEIVES", "SENT", "TOKEN", "ID", "BODY"]
    assert sorted(r.split()[0] for r in rows) == sorted(HOSTS)
    # AND by the stack's outputs
    cfn, stub = _cfn_with_outputs(res)
    code, out, _ = run(capsys, "list", "--stack", STACK, aws=Aws(session=session, clients={"cloudformation": cfn}))
    assert code == 0 and sorted(r.split()[0] for r in out.splitlines()[1:]) == sorted(HOSTS)
    stub.assert_no_pending_responses()


def test_list_limit_and_an_empty_dlq(dead: tuple[boto3.session.Session, StackResources],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    session, res = dead
    code, out, _ = run(capsys, "list", "--queue-url", res.dlq_url, "--limit", "1", "--json", aws=Aws(session=session))
    assert code == 0 and len(out.splitlines()) == 1
    sqs = session.client("sqs")
    sqs.purge_queue(QueueUrl=res.dlq_url)
    code, out, err = run(capsys, "list", "--queue-url", res.dlq_url, aws=Aws(session=session))
    assert (code, out) == (0, "")
    assert one_line(err) == f"heed dlq: the dead-letter queue {res.dlq_url} is empty"


# --- redrive --------------------------------------------------------------------------------------

def test_redrive_by_hand_puts_each_token_back_in_its_hosts_group(dead: tuple[boto3.session.Session, StackResources],
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    session, res = dead
    sqs = session.client("sqs")
    before = {json.loads(m["Body"])["host"]: m["MessageId"] for m in
              sqs.receive_message(QueueUrl=res.dlq_url, MaxNumberOfMessages=10, VisibilityTimeout=0)["Messages"]}
    # WHEN the operator moves them back one by one
    code, out, err = run(capsys, "redrive", "--queue-url", res.dlq_url, "--by-hand", "--json", aws=Aws(session=session))
    # THEN both tokens are on the work queue, with their body and MessageGroupId (the host's group)
    # and a new deduplication id, and the DLQ is empty
    assert code == 0
    assert one_line(err) == f"heed dlq redrive: moved 2 token(s) back to {res.queue_url}"
    moved = {r["host"]: r for r in map(json.loads, out.splitlines())}
    assert set(moved) == set(HOSTS) and all(r["new_token_id"] for r in moved.values())
    assert _count(sqs, res.dlq_url) == 0
    back = sqs.receive_message(QueueUrl=res.queue_url, MaxNumberOfMessages=10, MessageSystemAttributeNames=["All"])
    tokens = {json.loads(m["Body"])["host"]: m for m in back["Messages"]}
    assert set(tokens) == set(HOSTS)
    for n, host in enumerate(HOSTS):
        attrs = tokens[host]["Attributes"]
        assert attrs["MessageGroupId"] == f"g-{n}"
        assert attrs["MessageDeduplicationId"] == f"redrive-{before[host]}"
        assert json.loads(tokens[host]["Body"]) == {"host": host, "round_id": "2026-11-30T10:15:00Z/feed"}
        assert tokens[host]["MessageId"] == moved[host]["new_token_id"]


def test_redrive_by_hand_with_a_limit_and_then_nothing_left(dead: tuple[boto3.session.Session, StackResources],
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    session, res = dead
    sqs = session.client("sqs")
    code, out, _ = run(capsys, "redrive", "--queue-url", res.queue_url, "--by-hand", "--limit", "1",
                       aws=Aws(session=session))
    assert code == 0
    header, row = out.splitlines()
    assert header.split()[-3:] == ["NEW", "TOKEN", "ID"] and row.split()[0] in HOSTS
    assert _count(sqs, res.dlq_url) == 1 and _count(sqs, res.queue_url) == 1
    run(capsys, "redrive", "--queue-url", res.queue_url, "--by-hand", aws=Aws(session=session))
    code, out, err = run(capsys, "redrive", "--queue-url", res.queue_url, "--by-hand", aws=Aws(session=session))
    assert (code, out) == (0, "")
    assert one_line(err) == f"heed dlq: the dead-letter queue {res.dlq_url} is empty"
    assert _count(sqs, res.queue_url) == 2


def _sqs_stub() -> tuple[Any, Stubber]:
    sqs = boto3.client("sqs", region_name=REGION, aws_access_key_id="testing", aws_secret_access_key="testing")
    return sqs, Stubber(sqs)


WORK_URL = f"https://sqs.{REGION}.amazonaws.com/123456789012/heed-aubebot-work.fifo"
DLQ_URL = f"https://sqs.{REGION}.amazonaws.com/123456789012/heed-aubebot-dlq.fifo"
WORK_ARN = f"arn:aws:sqs:{REGION}:123456789012:heed-aubebot-work.fifo"
DLQ_ARN = f"arn:aws:sqs:{REGION}:123456789012:heed-aubebot-dlq.fifo"


def _paired(stub: Stubber, *, waiting: str = "3") -> None:
    redrive = json.dumps({"deadLetterTargetArn": DLQ_ARN, "maxReceiveCount": 50})
    stub.add_response("get_queue_attributes",
                      {"Attributes": {"QueueArn": WORK_ARN, "FifoQueue": "true", "RedrivePolicy": redrive}},
                      {"QueueUrl": WORK_URL, "AttributeNames": ["All"]})
    stub.add_response("get_queue_url", {"QueueUrl": DLQ_URL},
                      {"QueueName": "heed-aubebot-dlq.fifo", "QueueOwnerAWSAccountId": "123456789012"})
    stub.add_response("get_queue_attributes", {"Attributes": {"QueueArn": DLQ_ARN, "FifoQueue": "true"}},
                      {"QueueUrl": DLQ_URL, "AttributeNames": ["All"]})
    redrive = json.dumps({"deadLetterTargetArn": DLQ_ARN, "maxReceiveCount": 50})
    stub.add_response("get_queue_attributes",
                      {"Attributes": {"QueueArn": WORK_ARN, "FifoQueue": "true", "RedrivePolicy": redrive}},
                      {"QueueUrl": WORK_URL, "AttributeNames": ["All"]})
    stub.add_response("get_queue_attributes", {"Attributes": {"QueueArn": DLQ_ARN,
                                                              "ApproximateNumberOfMessages": waiting,
                                                              "ApproximateNumberOfMessagesNotVisible": "0"}},
                      {"QueueUrl": DLQ_URL, "AttributeNames": ["All"]})


def test_redrive_asks_sqs_to_move_when_it_knows_the_pair(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a work queue whose RedrivePolicy names the DLQ (SQS knows where its tokens came from)
    sqs, stub = _sqs_stub()
    _paired(stub)
    stub.add_response("start_message_move_task", {"TaskHandle": "task-1"},
                      {"SourceArn": DLQ_ARN, "DestinationArn": WORK_ARN})
    # WHEN the operator redrives
    with stub:
        code, out, err = run(capsys, "redrive", "--queue-url", WORK_URL, "--json", aws=Aws(clients={"sqs": sqs}))
        stub.assert_no_pending_responses()
    # THEN one StartMessageMoveTask from the DLQ to the work queue, and what SQS said
    assert (code, err) == (0, "")
    assert json.loads(out) == {"task": "task-1", "from": DLQ_URL, "to": WORK_URL, "tokens": 3}


def test_redrive_moves_by_hand_where_sqs_cannot(capsys: pytest.CaptureFixture[str]) -> None:
    sqs, stub = _sqs_stub()
    _paired(stub, waiting="1")
    stub.add_client_error("start_message_move_task", "UnsupportedOperation", "not here")
    message = {"MessageId": "m-1", "ReceiptHandle": "rh-1", "Body": json.dumps({"host": HOSTS[0], "round_id": "r"}),
               "Attributes": {"MessageGroupId": "g-0", "ApproximateReceiveCount": "51",
                              "SentTimestamp": "1796000000000"}}
    stub.add_response("receive_message", {"Messages": [message]})
    stub.add_response("send_message", {"MessageId": "new-1", "MD5OfMessageBody": "x"},
                      {"QueueUrl": WORK_URL, "MessageBody": message["Body"], "MessageGroupId": "g-0",
                       "MessageDeduplicationId": "redrive-m-1"})
    stub.add_response("delete_message", {}, {"QueueUrl": DLQ_URL, "ReceiptHandle": "rh-1"})
    stub.add_response("receive_message", {"Messages": []})
    stub.add_response("receive_message", {"Messages": []})
    with stub:
        code, out, err = run(capsys, "redrive", "--queue-url", WORK_URL, "--json", aws=Aws(clients={"sqs": sqs}))
        stub.assert_no_pending_responses()
    assert code == 0
    assert err.splitlines() == ["heed dlq redrive: SQS cannot move these tokens itself here; moving them one by one",
                                f"heed dlq redrive: moved 1 token(s) back to {WORK_URL}"]
    assert json.loads(out)["new_token_id"] == "new-1"


def test_redrive_of_an_empty_dlq_starts_no_task(capsys: pytest.CaptureFixture[str]) -> None:
    sqs, stub = _sqs_stub()
    _paired(stub, waiting="0")
    with stub:
        code, out, err = run(capsys, "redrive", "--queue-url", WORK_URL, aws=Aws(clients={"sqs": sqs}))
        stub.assert_no_pending_responses()
    assert (code, out) == (0, "")
    assert one_line(err) == f"heed dlq: the dead-letter queue {DLQ_URL} is empty"


# --- mistakes: one line, exit 2, no traceback -----------------------------------------------------

def test_a_dlq_nobody_sends_to_cannot_be_redriven(stack: tuple[boto3.session.Session, StackResources],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    session, _ = stack
    sqs = session.client("sqs")
    lonely = sqs.create_queue(QueueName="lonely.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    code, _, err = run(capsys, "redrive", "--queue-url", lonely, aws=Aws(session=session))
    assert code == 2
    assert one_line(err) == (f"heed dlq redrive: which work queue do the tokens of {lonely} go back to? "
                             "Give --stack, or the work queue's URL as --queue-url")


def test_an_unknown_queue_is_one_line(stack: tuple[boto3.session.Session, StackResources],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    session, res = stack
    url = res.queue_url.replace("heed-dlqtest-work", "nope")
    code, _, err = run(capsys, "list", "--queue-url", url, aws=Aws(session=session))
    assert code == 2
    assert one_line(err) == f"heed dlq list: no queue at {url}"


def test_an_unknown_stack_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    cfn = boto3.client("cloudformation", region_name=REGION, aws_access_key_id="t", aws_secret_access_key="t")
    with Stubber(cfn) as stub:
        stub.add_client_error("describe_stacks", "ValidationError", "Stack with id nope does not exist")
        code, _, err = run(capsys, "list", "--stack", "nope", aws=Aws(region=REGION, clients={"cloudformation": cfn}))
    assert code == 2
    assert one_line(err) == ("heed dlq list: no stack named 'nope' in eu-west-1 "
                             "(deployed with sam deploy --config-env <bot>?)")


def test_limit_without_by_hand_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "redrive", "--queue-url", WORK_URL, "--limit", "5", aws=Aws())
    assert code == 2
    assert one_line(err) == "heed dlq redrive: --limit goes with --by-hand (SQS's own move takes every token)"


@pytest.fixture
def no_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    without_aws(monkeypatch, tmp_path)


@pytest.mark.parametrize(("argv", "line"), [
    (["list", "--stack", STACK], "heed dlq list: no AWS region: give --region or set AWS_REGION"),
    (["redrive", "--queue-url", WORK_URL, "--region", REGION],
     "heed dlq redrive: no AWS credentials (configure them as for the AWS CLI, or give --profile)"),
    (["list", "--stack", STACK, "--profile", "ops"],
     "heed dlq list: no AWS profile named 'ops' (see ~/.aws/config)"),
])
def test_no_region_no_credentials_no_profile(no_aws: None, capsys: pytest.CaptureFixture[str], argv: list[str],
                                             line: str) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert one_line(err) == line


def test_wired_into_the_heed_command(capsys: pytest.CaptureFixture[str]) -> None:
    from heed import cli

    try:
        cli.build_parser().parse_args(["dlq", "list", "--queue-url", WORK_URL])
    except SystemExit:
        capsys.readouterr()
        pytest.skip("heed dlq is not wired into src/heed/cli.py yet (cli.py: dlq.register(sub))")
    assert cli.main(["dlq", "list", "--queue-url", WORK_URL, "--stack", STACK]) == 2
    assert "not allowed with argument" in one_line(capsys.readouterr().err)
    assert cli.main(["dlq", "list", "--queue-url", WORK_URL, "--limit", "0"]) == 2
    assert "is not a whole number above 0" in one_line(capsys.readouterr().err)

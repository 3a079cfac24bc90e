"""`heed events --stack` and `heed events dead --stack` (issue 33): the results of a stack built from
template.yaml on moto, put on its bus as the fetcher puts them (heed_aws.results), read back from
the results log group the template's rule fills; and the webhook's dead letters, shown and put back."""
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

from heed_aws.deliverer import GROUP, STOP_KEY
from heed_aws.results import AwsResults
from heed_aws.store import DynamoStore

from heed import events_cli
from heed.awsstack import Aws
from heed.local.resources import (
    StackResources,
    WebhookResources,
    create_results_store,
    create_stack_resources,
    create_webhook_resources,
)

ROOT = Path(__file__).resolve().parents[2]
REGION, STACK = "eu-west-1", "heed-aubebot"


@pytest.fixture
def stack(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[boto3.session.Session, StackResources, str,
                                                               WebhookResources]]:
    for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                       "AWS_DEFAULT_REGION": REGION}.items():
        monkeypatch.setenv(key, value)
    with mock_aws():
        session = boto3.session.Session(region_name=REGION)
        kw: dict[str, Any] = {"template_path": ROOT / "template.yaml", "bot": "aubebot", "prefix": STACK,
                              "session": session}
        res = create_stack_resources(**kw)
        group = create_results_store(res, **kw)
        hooks = create_webhook_resources(res, **kw)
        yield session, res, group, hooks


def _record(rid: str, kind: str = "feed_item", n: int = 0) -> dict[str, Any]:
    return {"bot": "aubebot", "id": rid, "source": "s1", "source_url": "https://x.example/feed",
            "found_at": f"2026-12-06T10:00:0{n}.000Z", "kind": kind, "url": f"https://x.example/{rid}",
            "title": rid, "published": None}


def _cfn(outputs: dict[str, str]) -> Any:
    cfn = boto3.client("cloudformation", region_name=REGION)
    stub = Stubber(cfn)
    for _ in range(3):
        stub.add_response("describe_stacks", {"Stacks": [{
            "StackName": STACK, "CreationTime": datetime(2026, 11, 1, tzinfo=UTC), "StackStatus": "CREATE_COMPLETE",
            "Outputs": [{"OutputKey": k, "OutputValue": v} for k, v in outputs.items()]}]}, {"StackName": STACK})
    stub.activate()
    return cfn


def _run(capsys: pytest.CaptureFixture[str], session: Any, outputs: dict[str, str], *argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="heed")
    events_cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["events", *argv])
    args.aws = Aws(session=session, clients={"cloudformation": _cfn(outputs)})
    code = args.func(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_the_stack_s_results_are_read_back_as_envelopes_in_the_order_they_were_put(
        stack: tuple[boto3.session.Session, StackResources, str, WebhookResources],
        capsys: pytest.CaptureFixture[str]) -> None:
    session, res, group, _ = stack
    # GIVEN three results put on the stack's bus by the fetcher's own adapter
    results = AwsResults(bot="aubebot", bus_name=res.bus_name, bucket=res.bucket,
                         events_client=session.client("events"), s3_client=session.client("s3"))
    assert results.emit_many([("item.found", "r1", _record("r1", n=1)), ("article.read", "r2", {
        **_record("r2", "article", 2), "chars": 10}), ("item.found", "r3", _record("r3", n=3))]) == []
    outputs = {"ResultsLogGroupName": group}
    # WHEN they are read back from the stack
    code, out, err = _run(capsys, session, outputs, "--stack", STACK, "--json")
    # THEN each is its CloudEvents envelope, in order
    assert (code, err) == (0, "")
    envs = [json.loads(line) for line in out.splitlines()]
    assert [(e["id"], e["type"]) for e in envs] == [("r1", "heed.item.found"), ("r2", "heed.article.read"),
                                                     ("r3", "heed.item.found")]
    # AND --type and --since narrow them
    assert [json.loads(x)["id"] for x in _run(capsys, session, outputs, "--stack", STACK, "--json", "--type",
                                               "item.found", "--since", "r1")[1].splitlines()] == ["r3"]
    # AND a consumer, or an id never seen, is one line
    code, _, err = _run(capsys, session, outputs, "--stack", STACK, "--since", "nope")
    assert code == 2 and err.strip().splitlines() == [f"heed events: --since: no event with id 'nope' in {group}"]


def test_the_webhook_s_dead_letters_are_shown_and_put_back_and_a_410_stop_lifted(
        stack: tuple[boto3.session.Session, StackResources, str, WebhookResources],
        capsys: pytest.CaptureFixture[str]) -> None:
    session, res, _, hooks = stack
    sqs = session.client("sqs")
    env = {"specversion": "1.0", "id": "r9", "type": "heed.item.found", "subject": "https://x.example/r9"}
    sqs.send_message(QueueUrl=hooks.dlq_url, MessageBody=json.dumps({"detail": env}), MessageGroupId=GROUP,
                     MessageDeduplicationId="r9.8",
                     MessageAttributes={"why": {"DataType": "String", "StringValue": "HTTP 503 after 8 tries"}})
    store = DynamoStore(res.table_name, session.client("dynamodb"))
    store.put_meta(STOP_KEY, {"url": "https://app.example/hook", "at": 1.0, "answer": "HTTP 410"})
    outputs = {"DeliveryDeadLetterQueueUrl": hooks.dlq_url, "DeliveryQueueUrl": hooks.queue_url,
               "StateTableName": res.table_name}
    code, out, err = _run(capsys, session, outputs, "dead", "--stack", STACK)
    assert (code, err) == (0, "") and out.startswith("r9  heed.item.found") and "HTTP 503 after 8 tries" in out
    code, out, err = _run(capsys, session, outputs, "dead", "--stack", STACK, "--redrive", "--json")
    assert (code, err) == (0, "") and json.loads(out) == {"redriven": 1, "stop_lifted": True}
    (back,) = sqs.receive_message(QueueUrl=hooks.queue_url)["Messages"]
    assert json.loads(back["Body"])["detail"]["id"] == "r9"
    assert (store.get_meta(STOP_KEY) or {}).get("url") is None

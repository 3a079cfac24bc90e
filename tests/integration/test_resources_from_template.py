"""Resources built in moto from template.yaml carry the template's own settings (no drift)."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from heed.local.resources import StackResources, TemplateError, create_stack_resources, load_template

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"
REGION = "eu-west-1"


@pytest.fixture()
def session(monkeypatch: pytest.MonkeyPatch) -> Iterator[boto3.session.Session]:
    for var in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    with mock_aws():
        yield boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing",
                                    region_name=REGION)


@pytest.fixture()
def stack(session: boto3.session.Session) -> StackResources:
    return create_stack_resources(template_path=TEMPLATE, bot="aubebot", prefix="heed-aubebot",
                                  session=session, region=REGION)


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load_template(TEMPLATE)


def test_names_come_from_the_prefix(stack: StackResources) -> None:
    assert stack.table_name == "heed-aubebot-state"
    assert stack.queue_url.endswith("/heed-aubebot-work.fifo")
    assert stack.bus_name == "heed-aubebot-results"
    assert stack.bucket == "heed-aubebot-results"


def test_table_has_the_template_keys_and_ttl(stack: StackResources, session: boto3.session.Session,
                                             template: dict[str, Any]) -> None:
    # GIVEN the template's table WHEN it is created locally THEN keys, billing and TTL are the template's
    want = template["Resources"]["StateTable"]["Properties"]
    ddb = session.client("dynamodb")
    table = ddb.describe_table(TableName=stack.table_name)["Table"]
    assert table["KeySchema"] == want["KeySchema"]
    assert sorted(table["AttributeDefinitions"], key=lambda a: a["AttributeName"]) == \
        sorted(want["AttributeDefinitions"], key=lambda a: a["AttributeName"])
    assert table["BillingModeSummary"]["BillingMode"] == want["BillingMode"]
    assert table["SSEDescription"]["Status"] == "ENABLED"
    ttl = ddb.describe_time_to_live(TableName=stack.table_name)["TimeToLiveDescription"]
    assert (ttl["AttributeName"], ttl["TimeToLiveStatus"]) == (want["TimeToLiveSpecification"]["AttributeName"],
                                                               "ENABLED")


def test_queue_is_fifo_with_the_template_visibility_and_redrive(stack: StackResources, session: boto3.session.Session,
                                                                template: dict[str, Any]) -> None:
    want = template["Resources"]["WorkQueue"]["Properties"]
    sqs = session.client("sqs")
    attrs = sqs.get_queue_attributes(QueueUrl=stack.queue_url, AttributeNames=["All"])["Attributes"]
    assert attrs["FifoQueue"] == "true"
    assert attrs["ContentBasedDeduplication"] == "false"
    assert attrs["DeduplicationScope"] == want["DeduplicationScope"]
    assert attrs["FifoThroughputLimit"] == want["FifoThroughputLimit"]
    assert int(attrs["VisibilityTimeout"]) == want["VisibilityTimeout"] == stack.visibility_timeout_s
    assert int(attrs["MessageRetentionPeriod"]) == want["MessageRetentionPeriod"]
    redrive = json.loads(attrs["RedrivePolicy"])
    dlq_attrs = sqs.get_queue_attributes(QueueUrl=stack.dlq_url, AttributeNames=["All"])["Attributes"]
    assert redrive["deadLetterTargetArn"] == dlq_attrs["QueueArn"]
    assert int(redrive["maxReceiveCount"]) == want["RedrivePolicy"]["maxReceiveCount"] == stack.max_receive_count
    assert dlq_attrs["FifoQueue"] == "true"
    assert attrs["QueueArn"] == stack.queue_arn


def test_fetcher_numbers_come_from_the_template(stack: StackResources) -> None:
    # AWS advice for SQS event sources: visibility timeout >= 6x the function timeout; and a
    # token whose invocation died must not come back before the longest promised gap
    # (WANNADO-05: up to 7 minutes) could be shortened by a request it may have made.
    assert stack.visibility_timeout_s >= 6 * stack.fetcher_timeout_s
    assert stack.visibility_timeout_s >= 7 * 60
    assert stack.batch_size == 10


def test_common_05_a_message_group_is_locked_while_in_flight(stack: StackResources,
                                                             session: boto3.session.Session) -> None:
    # GIVEN two tokens for host A and one for host B (one message group per host)
    sqs = session.client("sqs")
    for n, group in enumerate(["https://a.example", "https://a.example", "https://b.example"]):
        sqs.send_message(QueueUrl=stack.queue_url, MessageBody=json.dumps({"host": group, "n": n}),
                         MessageGroupId=group, MessageDeduplicationId=f"token-{n}")
    # WHEN a first receive takes A's first token
    first = sqs.receive_message(QueueUrl=stack.queue_url, MaxNumberOfMessages=1)["Messages"]
    assert json.loads(first[0]["Body"]) == {"host": "https://a.example", "n": 0}
    # THEN a second receive gets B's token, never A's second while A's first is in flight
    second = sqs.receive_message(QueueUrl=stack.queue_url, MaxNumberOfMessages=10)["Messages"]
    assert [json.loads(m["Body"]) for m in second] == [{"host": "https://b.example", "n": 2}]
    assert sqs.receive_message(QueueUrl=stack.queue_url, MaxNumberOfMessages=10).get("Messages", []) == []
    # AND once A's first is done, A's second comes
    sqs.delete_message(QueueUrl=stack.queue_url, ReceiptHandle=first[0]["ReceiptHandle"])
    third = sqs.receive_message(QueueUrl=stack.queue_url, MaxNumberOfMessages=10)["Messages"]
    assert [json.loads(m["Body"]) for m in third] == [{"host": "https://a.example", "n": 1}]


def test_bucket_is_versioned_encrypted_and_private(stack: StackResources, session: boto3.session.Session) -> None:
    s3 = session.client("s3")
    assert s3.get_bucket_versioning(Bucket=stack.bucket)["Status"] == "Enabled"
    rules = s3.get_bucket_encryption(Bucket=stack.bucket)["ServerSideEncryptionConfiguration"]["Rules"]
    assert rules[0]["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"
    block = s3.get_public_access_block(Bucket=stack.bucket)["PublicAccessBlockConfiguration"]
    assert block == {"BlockPublicAcls": True, "IgnorePublicAcls": True, "BlockPublicPolicy": True,
                     "RestrictPublicBuckets": True}


def test_bus_exists(stack: StackResources, session: boto3.session.Session) -> None:
    bus = session.client("events").describe_event_bus(Name=stack.bus_name)
    assert bus["Name"] == stack.bus_name


def test_a_template_without_the_work_event_is_a_clear_error(tmp_path: Path, session: boto3.session.Session) -> None:
    broken = tmp_path / "template.yaml"
    broken.write_text("Globals:\n  Function:\n    Environment:\n      Variables:\n        HEED_QUEUE_URL: !Ref Q\n"
                      "Resources:\n  T:\n    Type: AWS::DynamoDB::Table\n    Properties:\n"
                      "      TableName: !Sub '${AWS::StackName}-t'\n", encoding="utf-8")
    with pytest.raises(TemplateError, match="SQS event source"):
        create_stack_resources(template_path=broken, bot="aubebot", prefix="p", session=session, region=REGION)


def test_missing_template_is_a_clear_error(tmp_path: Path, session: boto3.session.Session) -> None:
    with pytest.raises(TemplateError):
        create_stack_resources(template_path=tmp_path / "nope.yaml", bot="aubebot", prefix="p",
                               session=session, region=REGION)


def test_short_tags_load_as_their_long_form(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("Resources:\n  X:\n    A: !GetAtt Q.Arn\n    B: !Ref P\n"
                    "    C: !If [c, !Sub '${P}', !Ref AWS::NoValue]\n", encoding="utf-8")
    x = load_template(path)["Resources"]["X"]
    assert x == {"A": {"Fn::GetAtt": ["Q", "Arn"]}, "B": {"Ref": "P"},
                 "C": {"Fn::If": ["c", {"Fn::Sub": "${P}"}, {"Ref": "AWS::NoValue"}]}}

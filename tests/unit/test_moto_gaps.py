"""The moto behaviours the AWS emulator accommodates (tests/support/moto_gaps.py) are still moto's:
each test shows one gap on moto as installed, so an upgrade that closes it (or changes it) fails
here, naming the accommodation that can go or must change (STYLE 8). moto as it ships, in-process:
the emulator's own changes to moto (moto_gaps.apply) are made in its process only."""
from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from tests.support import moto_gaps
from tests.support.moto_providers import PROVIDED

REGION = "eu-west-1"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[boto3.session.Session]:
    for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    with mock_aws():
        yield boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name=REGION)


def _stack(aws: boto3.session.Session, resources: dict[str, Any], outputs: dict[str, Any] | None = None) -> Any:
    body = json.dumps({"Resources": resources, **({"Outputs": outputs} if outputs else {})})
    return aws.client("cloudformation").create_stack(StackName="gap", TemplateBody=body)


def test_a_create_change_set_leaves_the_stack_without_outputs(aws: boto3.session.Session) -> None:
    # GIVEN a template with an output, sent as a CREATE change set (as sam deploy sends every stack)
    cfn = aws.client("cloudformation")
    body = json.dumps({"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
                       "Outputs": {"TopicArn": {"Value": {"Ref": "Topic"}}}})
    cfn.create_change_set(StackName="gap", ChangeSetName="one", ChangeSetType="CREATE", TemplateBody=body)
    # WHEN it is executed
    cfn.execute_change_set(ChangeSetName="one", StackName="gap")
    # THEN moto's stack has no outputs (CloudFormation has them): moto_gaps.after_execute computes them
    stack = cfn.describe_stacks(StackName="gap")["Stacks"][0]
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    assert "Outputs" not in stack, "moto computes a change set's outputs now: after_execute's re-parse can go"


def test_a_fifo_queue_without_a_name_is_named_without_fifo(aws: boto3.session.Session) -> None:
    # WHEN a stack makes a FIFO queue and names it not (CloudFormation appends .fifo to its name)
    with pytest.raises(Exception, match=r"Queue name must end in \.fifo") as raised:
        _stack(aws, {"Queue": {"Type": "AWS::SQS::Queue", "Properties": {"FifoQueue": True}}})
    # THEN moto refuses the name it made itself: moto_gaps.accommodate names the queue
    assert raised.value is not None


def test_a_kms_key_reads_its_tags_as_kms_api_spells_them(aws: boto3.session.Session) -> None:
    # WHEN a stack makes a KMS key with CloudFormation's Key/Value tags
    policy = {"Version": "2012-10-17", "Statement": []}
    with pytest.raises(KeyError, match="TagKey"):
        _stack(aws, {"Key": {"Type": "AWS::KMS::Key", "Properties": {
            "KeyPolicy": policy, "Tags": [{"Key": "Bot", "Value": "aubebot"}]}}})
    # THEN moto looks for TagKey: moto_gaps.accommodate spells them so


def test_a_list_item_of_no_value_stays_a_none(aws: boto3.session.Session) -> None:
    # WHEN a role lists an optional policy that resolves to AWS::NoValue (SAM's way, and the template's)
    role = {"AssumeRolePolicyDocument": {"Version": "2012-10-17", "Statement": []},
            "Policies": [{"Fn::If": ["Never", {"PolicyName": "p", "PolicyDocument": {}}, {"Ref": "AWS::NoValue"}]}]}
    body = json.dumps({"Conditions": {"Never": {"Fn::Equals": ["a", "b"]}},
                       "Resources": {"Role": {"Type": "AWS::IAM::Role", "Properties": role}}})
    # THEN moto keeps it as None and fails on it (CloudFormation drops it): moto_gaps.apply's clean_json
    with pytest.raises(TypeError, match="NoneType"):
        aws.client("cloudformation").create_stack(StackName="gap", TemplateBody=body)


def test_the_ref_of_an_event_bus_is_not_its_name(aws: boto3.session.Session) -> None:
    # WHEN a stack outputs the Ref of its event bus (CloudFormation: the bus's name)
    _stack(aws, {"Bus": {"Type": "AWS::Events::EventBus", "Properties": {"Name": "results"}}},
           {"BusName": {"Value": {"Ref": "Bus"}}})
    outputs = aws.client("cloudformation").describe_stacks(StackName="gap")["Stacks"][0]["Outputs"]
    # THEN moto gives the model object: moto_gaps.apply gives EventBus a physical id, its name
    assert outputs[0]["OutputValue"] != "results"
    assert "EventBus object" in outputs[0]["OutputValue"]


def test_a_conditional_deny_in_a_bucket_policy_denies_everything(aws: boto3.session.Session) -> None:
    # GIVEN a bucket whose policy denies only requests without TLS (the template's DenyInsecureTransport)
    s3 = aws.client("s3")
    s3.create_bucket(Bucket="texts", CreateBucketConfiguration={"LocationConstraint": REGION})
    s3.put_bucket_policy(Bucket="texts", Policy=json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": ["arn:aws:s3:::texts/*"],
        "Condition": {"Bool": {"aws:SecureTransport": "false"}}}]}))
    # WHEN an object is put (botocore's request: on AWS, over TLS, so allowed)
    # THEN moto denies it: the emulator leaves AWS::S3::BucketPolicy out and says so
    with pytest.raises(ClientError, match="Forbidden|AccessDenied"):
        s3.put_object(Bucket="texts", Key="a", Body=b"x")


def test_a_bucket_from_a_stack_has_its_encryption_but_not_its_versioning(aws: boto3.session.Session) -> None:
    # WHEN a stack makes a bucket with versioning, a public access block and encryption
    props = {"VersioningConfiguration": {"Status": "Enabled"},
             "PublicAccessBlockConfiguration": {"BlockPublicAcls": True},
             "BucketEncryption": {"ServerSideEncryptionConfiguration": [
                 {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]}}
    _stack(aws, {"Bucket": {"Type": "AWS::S3::Bucket", "Properties": props}}, {"Name": {"Value": {"Ref": "Bucket"}}})
    name = aws.client("cloudformation").describe_stacks(StackName="gap")["Stacks"][0]["Outputs"][0]["OutputValue"]
    s3 = aws.client("s3")
    # THEN moto applied the encryption only: moto_gaps.apply's _complete_buckets applies the rest
    assert s3.get_bucket_encryption(Bucket=name)["ServerSideEncryptionConfiguration"]["Rules"]
    assert "Status" not in s3.get_bucket_versioning(Bucket=name)
    with pytest.raises(ClientError, match="NoSuchPublicAccessBlockConfiguration"):
        s3.get_public_access_block(Bucket=name)


def test_lambda_has_no_account_settings(aws: boto3.session.Session) -> None:
    # WHEN the preflight's first call is made (Lambda GetAccountSettings)
    # THEN moto has no such route: the emulator answers it (moto_gaps.lambda_account_settings)
    with pytest.raises(Exception) as raised:  # noqa: B017 - whatever moto answers for an unknown route
        aws.client("lambda").get_account_settings()
    assert raised.value is not None


def test_the_types_the_emulator_provides_or_leaves_out_are_still_not_moto_s() -> None:
    from moto.cloudformation.parsing import get_model_map

    # THEN moto still has no CloudFormation model for them (a new one: a provider can go, or a
    # resource is created after all and NOT_CREATED, the README's list, must shrink)
    models = set(get_model_map())
    assert not models & set(PROVIDED), models & set(PROVIDED)
    assert not models & (set(moto_gaps.NOT_CREATED) - {"Custom::ReverseDns"}), models & set(moto_gaps.NOT_CREATED)
    assert moto_gaps.NO_MODEL

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


def test_a_create_change_set_neither_exports_nor_imports(aws: boto3.session.Session) -> None:
    # GIVEN a CREATE change set whose template exports a value (as sam deploy sends every stack)
    cfn = aws.client("cloudformation")
    topic = {"T": {"Type": "AWS::SNS::Topic"}}
    body = {"Resources": topic, "Outputs": {"A": {"Value": {"Ref": "T"}, "Export": {"Name": "x-topic"}}}}
    cfn.create_change_set(StackName="x", ChangeSetName="one", ChangeSetType="CREATE", TemplateBody=json.dumps(body))
    cfn.execute_change_set(ChangeSetName="one", StackName="x")
    # THEN moto lists no export of it: moto_gaps.after_execute exports what the stack's outputs export
    assert cfn.list_exports()["Exports"] == [], "moto exports a change set's outputs now: after_execute's can go"
    # AND a CREATE change set that imports a value another stack exports finds none
    body["Outputs"]["A"]["Export"]["Name"] = "y-topic"
    cfn.create_stack(StackName="y", TemplateBody=json.dumps(body))
    queue = {"Type": "AWS::SQS::Queue", "Properties": {"Tags": [{"Key": "t", "Value": {"Fn::ImportValue": "y-topic"}}]}}
    cfn.create_change_set(StackName="z", ChangeSetName="two", ChangeSetType="CREATE",
                          TemplateBody=json.dumps({"Resources": {"Q": queue}}))
    # (moto_gaps.after_create_change_set gives the stack the region's exports)
    with pytest.raises(ClientError, match="No export named y-topic found"):
        cfn.execute_change_set(ChangeSetName="two", StackName="z")


def test_an_exported_output_whose_condition_is_false_fails_describe_stacks(aws: boto3.session.Session) -> None:
    # GIVEN a stack whose exported output reads a resource it makes only under a condition that is false
    body = {"Conditions": {"Never": {"Fn::Equals": ["a", "b"]}},
            "Resources": {"T": {"Type": "AWS::SNS::Topic"},
                          "Q": {"Type": "AWS::SQS::Queue", "Condition": "Never"}},
            "Outputs": {"Q": {"Condition": "Never", "Value": {"Fn::GetAtt": ["Q", "Arn"]}, "Export": {"Name": "q"}}}}
    # WHEN it is created THEN moto reads the export all the same and fails (CloudFormation has no such
    # output, so no export): moto_gaps.apply's _conditional_exports
    with pytest.raises(ClientError, match="undefined resource Q"):
        aws.client("cloudformation").create_stack(StackName="gap", TemplateBody=json.dumps(body))


def test_an_update_resolves_a_changed_resource_the_stack_does_not_make(aws: boto3.session.Session) -> None:
    # GIVEN a stack with a queue and a topic it does not make (a condition that is false), the topic
    # reading the queue's ARN
    def body(tag: str) -> str:
        return json.dumps({"Conditions": {"Never": {"Fn::Equals": ["a", "b"]}}, "Resources": {
            "Q": {"Type": "AWS::SQS::Queue", "Condition": "Never"},
            "T": {"Type": "AWS::SNS::Topic", "Condition": "Never", "Properties": {
                "Tags": [{"Key": tag, "Value": {"Fn::GetAtt": ["Q", "Arn"]}}]}},
            "Kept": {"Type": "AWS::SNS::Topic"}}})
    cfn = aws.client("cloudformation")
    cfn.create_stack(StackName="gap", TemplateBody=body("one"))
    # WHEN the stack is updated with the topic's text changed (as a new build changes it)
    # THEN moto resolves it all the same and fails: moto_gaps.apply's _conditional_updates
    with pytest.raises(ClientError, match="undefined resource Q"):
        cfn.update_stack(StackName="gap", TemplateBody=body("two"))


def test_an_update_drops_a_resource_whose_type_moto_cannot_update(aws: boto3.session.Session) -> None:
    # GIVEN a stack with a log group whose retention is a parameter
    body = json.dumps({"Parameters": {"Days": {"Type": "Number", "Default": 30}},
                       "Resources": {"Logs": {"Type": "AWS::Logs::LogGroup",
                                              "Properties": {"RetentionInDays": {"Ref": "Days"}}}}})
    cfn = aws.client("cloudformation")
    cfn.create_stack(StackName="gap", TemplateBody=body)
    # WHEN the stack is updated with another retention
    cfn.update_stack(StackName="gap", TemplateBody=body, Parameters=[{"ParameterKey": "Days", "ParameterValue": "7"}])
    # THEN moto has no log group in the stack any more (no update for the type): moto_gaps keeps it
    described = cfn.describe_stack_resources(StackName="gap")["StackResources"]
    assert "Logs" not in {r.get("LogicalResourceId") for r in described}, "moto updates a log group now"


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


def test_an_archive_s_event_pattern_must_be_a_string(aws: boto3.session.Session) -> None:
    # WHEN a stack archives its bus's events with an EventPattern object (CloudFormation's JSON type)
    bus = {"Type": "AWS::Events::EventBus", "Properties": {"Name": "results"}}
    archive = {"Type": "AWS::Events::Archive", "Properties": {
        "SourceArn": {"Fn::GetAtt": ["Bus", "Arn"]}, "EventPattern": {"source": ["heed.aubebot"]}}}
    # THEN moto reads it as the API's string and fails: moto_gaps.accommodate writes it as JSON text
    with pytest.raises(TypeError, match="must be str"):
        _stack(aws, {"Bus": bus, "Archive": archive})


def test_an_archive_of_a_stack_with_a_long_name_gets_a_name_too_long(aws: boto3.session.Session) -> None:
    # WHEN a stack of a 28-character name archives its bus's events, naming no archive
    bus = {"Type": "AWS::Events::EventBus", "Properties": {"Name": "results"}}
    archive = {"Type": "AWS::Events::Archive", "Properties": {"SourceArn": {"Fn::GetAtt": ["Bus", "Arn"]}}}
    body = json.dumps({"Resources": {"Bus": bus, "ResultsArchive": archive}})
    # THEN moto makes a name past EventBridge's 48 characters and refuses it (in a JSON body that
    # CloudFormation's XML client cannot even read): moto_gaps.accommodate names it
    with pytest.raises(Exception, match="length less than or equal to 48"):
        aws.client("cloudformation").create_stack(StackName="springstudiobot-nat-instance", TemplateBody=body)


def test_the_ref_of_a_layer_version_is_not_its_arn(aws: boto3.session.Session) -> None:
    s3 = aws.client("s3")
    s3.create_bucket(Bucket="code", CreateBucketConfiguration={"LocationConstraint": REGION})
    s3.put_object(Bucket="code", Key="layer.zip", Body=b"PK\x05\x06" + b"\0" * 18)
    layer = {"Type": "AWS::Lambda::LayerVersion", "Properties": {
        "LayerName": "core", "Content": {"S3Bucket": "code", "S3Key": "layer.zip"}}}
    _stack(aws, {"Core": layer}, {"Core": {"Value": {"Ref": "Core"}}})
    outputs = aws.client("cloudformation").describe_stacks(StackName="gap")["Stacks"][0]["Outputs"]
    # THEN moto gives the model object (a function's Layers then fail on update): moto_gaps gives it its ARN
    assert "LayerVersion object" in outputs[0]["OutputValue"]


def test_the_ref_of_an_archive_is_not_its_name(aws: boto3.session.Session) -> None:
    bus = {"Type": "AWS::Events::EventBus", "Properties": {"Name": "results"}}
    archive = {"Type": "AWS::Events::Archive", "Properties": {"ArchiveName": "kept",
                                                              "SourceArn": {"Fn::GetAtt": ["Bus", "Arn"]}}}
    _stack(aws, {"Bus": bus, "Archive": archive}, {"Name": {"Value": {"Ref": "Archive"}}})
    outputs = aws.client("cloudformation").describe_stacks(StackName="gap")["Stacks"][0]["Outputs"]
    # THEN moto gives the model object: moto_gaps.apply gives Archive a physical id, its name
    assert "Archive object" in outputs[0]["OutputValue"]


def test_a_network_interface_from_a_stack_has_not_its_groups_source_dest_check_or_tags(
        aws: boto3.session.Session) -> None:
    # WHEN a stack makes an interface in a group of its own, forwarding (the NAT's egress interface)
    ec2 = aws.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.9.0.0/24")["Subnet"]["SubnetId"]
    group = ec2.create_security_group(GroupName="nat", Description="nat", VpcId=vpc)["GroupId"]
    _stack(aws, {"Eni": {"Type": "AWS::EC2::NetworkInterface", "Properties": {
        "SubnetId": subnet, "GroupSet": [group], "SourceDestCheck": False, "Tags": [{"Key": "Bot", "Value": "b"}]}}},
           {"Id": {"Value": {"Ref": "Eni"}}})
    eni_id = aws.client("cloudformation").describe_stacks(StackName="gap")["Stacks"][0]["Outputs"][0]["OutputValue"]
    eni = ec2.describe_network_interfaces(NetworkInterfaceIds=[eni_id])["NetworkInterfaces"][0]
    # THEN moto left out all three: moto_gaps.apply's _complete_interfaces applies them
    assert group not in [g["GroupId"] for g in eni["Groups"]]
    assert eni["SourceDestCheck"] is True and "Bot" not in {t["Key"] for t in eni.get("TagSet", [])}


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

"""template.yaml: lint-clean, least privilege, the promised shapes, and samconfig in step with the profiles."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path
from typing import Any, Iterator

import pytest

from heed.local.resources import function_properties, load_template
from heed_core.profile import BUILTIN_BOTS, load_profile

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"

# SAM policy templates whose expansion names every action exactly (checked against
# samtranslator's policy_templates.json). SQSSendMessagePolicy is absent on purpose: it
# grants "sqs:SendMessage*".
POLICY_TEMPLATES_WITHOUT_WILDCARDS = {
    "DynamoDBCrudPolicy", "DynamoDBReadPolicy", "SQSPollerPolicy", "EventBridgePutEventsPolicy",
    "S3CrudPolicy", "S3ReadPolicy",
}


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load_template(TEMPLATE)


def _functions(template: dict[str, Any]) -> list[str]:
    return [k for k, r in template["Resources"].items() if r["Type"] == "AWS::Serverless::Function"]


def _policies(props: dict[str, Any]) -> list[Any]:
    """A function's policies, with a conditional one (Fn::If) counted by its true branch."""
    out = []
    for p in props.get("Policies", []):
        if isinstance(p, dict) and "Fn::If" in p:
            p = p["Fn::If"][1]
        out.append(p)
    return out


def _allow_statements(template: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for logical_id, resource in template["Resources"].items():
        props = resource.get("Properties", {})
        props = {**props, "Policies": _policies(props)}
        documents = [p for p in props.get("Policies", []) if isinstance(p, dict) and "Statement" in p]
        documents += [p["PolicyDocument"] for p in props.get("Policies", []) if isinstance(p, dict)
                      and "PolicyDocument" in p]
        if "PolicyDocument" in props:
            documents.append(props["PolicyDocument"])
        for doc in documents:
            for statement in doc["Statement"]:
                if statement.get("Effect") == "Allow":
                    yield logical_id, statement


def test_cfn_lint_reports_nothing() -> None:
    # GIVEN the template WHEN cfn-lint runs as the CLI does THEN no error and no warning
    code = "import sys; from cfnlint.runner import main; sys.argv = ['cfn-lint', 'template.yaml']; sys.exit(main())"
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert (run.returncode, run.stdout.strip(), run.stderr.strip()) == (0, "", "")


def test_every_function_uses_both_layers(template: dict[str, Any]) -> None:
    for name in _functions(template):
        layers = function_properties(template, name)["Layers"]
        assert {"Ref": "CoreLayer"} in layers and {"Ref": "AwsLayer"} in layers, name


def test_layers_hold_the_packages_and_build_for_the_runtime(template: dict[str, Any]) -> None:
    runtime = template["Globals"]["Function"]["Runtime"]
    # sam build without a container runs this interpreter: it must be the runtime's Python.
    assert runtime == f"python{sys.version_info.major}.{sys.version_info.minor}"
    for layer, package in (("CoreLayer", "heed_core"), ("AwsLayer", "heed_aws")):
        resource = template["Resources"][layer]
        content = ROOT / resource["Properties"]["ContentUri"]
        assert (content / package / "__init__.py").is_file()
        assert (content / "requirements.txt").is_file()
        assert resource["Metadata"]["BuildMethod"] == runtime
        assert resource["Properties"]["CompatibleRuntimes"] == [runtime]


def test_layer_pins_are_the_tested_versions() -> None:
    # What the suite ran against is what is deployed: every pin equals the venv's version.
    pins = 0
    for req in ("layers/core/requirements.txt", "layers/aws/requirements.txt"):
        for line in (ROOT / req).read_text(encoding="utf-8").splitlines():
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            match = re.fullmatch(r"([A-Za-z0-9_.-]+)(\[[^\]]*\])?==([^\s;]+)", line)
            assert match, f"{req}: {line!r} is not pinned with =="
            assert version(match.group(1)) == match.group(3), line
            pins += 1
    assert pins >= 7


def test_fetcher_reports_batch_item_failures(template: dict[str, Any]) -> None:
    events = template["Resources"]["FetcherFunction"]["Properties"]["Events"]
    sqs = [e["Properties"] for e in events.values() if e["Type"] == "SQS"]
    assert len(sqs) == 1
    assert sqs[0]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert sqs[0]["Queue"] == {"Fn::GetAtt": ["WorkQueue", "Arn"]}
    assert sqs[0]["BatchSize"] == 10


def test_common_05_work_queue_is_fifo_per_host_with_a_fifo_dlq(template: dict[str, Any]) -> None:
    queue = template["Resources"]["WorkQueue"]["Properties"]
    assert queue["FifoQueue"] is True
    assert queue["ContentBasedDeduplication"] is False
    assert queue["DeduplicationScope"] == "messageGroup"
    assert queue["FifoThroughputLimit"] == "perMessageGroupId"
    assert queue["SqsManagedSseEnabled"] is True
    dlq_id = queue["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0]
    assert template["Resources"][dlq_id]["Properties"]["FifoQueue"] is True
    assert queue["RedrivePolicy"]["maxReceiveCount"] >= 10  # deferrals count as receives


def test_visibility_timeout_is_six_times_the_fetcher_timeout(template: dict[str, Any]) -> None:
    fetcher = function_properties(template, "FetcherFunction")
    assert template["Resources"]["WorkQueue"]["Properties"]["VisibilityTimeout"] == 6 * fetcher["Timeout"]


def test_state_table_has_ttl_sse_and_recovery(template: dict[str, Any]) -> None:
    table = template["Resources"]["StateTable"]["Properties"]
    assert table["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"},
                                  {"AttributeName": "sk", "KeyType": "RANGE"}]
    assert table["TimeToLiveSpecification"] == {"AttributeName": "ttl", "Enabled": True}
    assert table["SSESpecification"]["SSEEnabled"] is True
    assert table["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert table["BillingMode"] == "PAY_PER_REQUEST"


def test_results_bucket_is_private_encrypted_and_tls_only(template: dict[str, Any]) -> None:
    bucket = template["Resources"]["ResultsBucket"]["Properties"]
    assert bucket["VersioningConfiguration"]["Status"] == "Enabled"
    assert bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]["ServerSideEncryptionByDefault"]
    assert all(bucket["PublicAccessBlockConfiguration"].values())
    assert len(bucket["PublicAccessBlockConfiguration"]) == 4
    denies = template["Resources"]["ResultsBucketPolicy"]["Properties"]["PolicyDocument"]["Statement"]
    assert any(s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
               for s in denies)


def test_no_allow_statement_has_a_wildcard_action(template: dict[str, Any]) -> None:
    statements = list(_allow_statements(template))
    assert statements  # the check looks at something
    for logical_id, statement in statements:
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        assert not [a for a in actions if "*" in a], logical_id
        assert "NotAction" not in statement, logical_id
    for name in _functions(template):
        for policy in _policies(template["Resources"][name]["Properties"]):
            if isinstance(policy, dict) and "Statement" not in policy:
                assert set(policy) <= POLICY_TEMPLATES_WITHOUT_WILDCARDS, (name, policy)
            assert not isinstance(policy, str), f"{name}: managed policy {policy} is not least privilege"


def test_wannado_10_bedrock_only_on_the_configured_model_and_only_when_switched_on(template: dict[str, Any]) -> None:
    policy = [p for p in template["Resources"]["FetcherFunction"]["Properties"]["Policies"]
              if isinstance(p, dict) and "Fn::If" in p]
    assert len(policy) == 1 and policy[0]["Fn::If"][0] == "HasBedrockModel"
    statement = policy[0]["Fn::If"][1]["Statement"][0]
    assert statement["Action"] == "bedrock:InvokeModel"
    assert statement["Resource"]["Fn::Sub"].endswith("foundation-model/${BedrockModelId}")


def test_reverse_dns_may_touch_only_the_egress_ip(template: dict[str, Any]) -> None:
    statements = [s for lid, s in _allow_statements(template) if lid == "ReverseDnsFunction"]
    assert len(statements) == 1
    assert sorted(statements[0]["Action"]) == ["ec2:ModifyAddressAttribute", "ec2:ResetAddressAttribute"]
    assert statements[0]["Resource"]["Fn::Sub"].endswith(":elastic-ip/${EgressIp.AllocationId}")
    custom = template["Resources"]["ReverseDns"]
    assert custom["Properties"]["AllocationId"] == {"Fn::GetAtt": ["EgressIp", "AllocationId"]}
    # Only with a name and a VPC (the EIP exists only there).
    assert template["Conditions"][custom["Condition"]] == {
        "Fn::And": [{"Condition": "UseVpc"}, {"Condition": "HasReverseDnsName"}]}


def test_common_09_egress_ip_is_an_output_of_the_vpc_stack(template: dict[str, Any]) -> None:
    output = template["Outputs"]["EgressIp"]
    assert output["Value"] == {"Ref": "EgressIp"}
    assert output["Condition"] == "UseVpc"
    assert template["Resources"]["EgressIp"]["Type"] == "AWS::EC2::EIP"
    nat = template["Resources"]["NatGateway"]["Properties"]
    assert nat["AllocationId"] == {"Fn::GetAtt": ["EgressIp", "AllocationId"]}
    for name in ("WorkQueueUrl", "StateTableName", "ResultsBusName", "ResultsBucketName", "FetcherFunctionName"):
        assert name in template["Outputs"]


def test_network_exists_only_with_enable_vpc(template: dict[str, Any]) -> None:
    network = [k for k, r in template["Resources"].items() if r["Type"].startswith("AWS::EC2::")]
    assert len(network) >= 10
    for logical_id in network:
        assert template["Resources"][logical_id].get("Condition") == "UseVpc", logical_id
    assert template["Globals"]["Function"]["VpcConfig"]["Fn::If"][0] == "UseVpc"
    assert template["Globals"]["Function"]["VpcConfig"]["Fn::If"][2] == {"Ref": "AWS::NoValue"}


def test_aube_11_reserved_concurrency_only_when_asked(template: dict[str, Any]) -> None:
    value = template["Resources"]["FetcherFunction"]["Properties"]["ReservedConcurrentExecutions"]
    condition, then, otherwise = value["Fn::If"]
    assert then == {"Ref": "FetcherReservedConcurrency"}
    assert otherwise == {"Ref": "AWS::NoValue"}
    assert template["Conditions"][condition] == {
        "Fn::Not": [{"Fn::Equals": [{"Ref": "FetcherReservedConcurrency"}, "0"]}]}
    assert template["Parameters"]["FetcherReservedConcurrency"]["Default"] == 0


def test_bot_names_are_the_built_in_profiles(template: dict[str, Any]) -> None:
    assert sorted(template["Parameters"]["BotName"]["AllowedValues"]) == sorted(BUILTIN_BOTS)


def _overrides(text: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in text.split())


def test_samconfig_overrides_match_the_profiles(template: dict[str, Any]) -> None:
    config = tomllib.loads((ROOT / "samconfig.toml").read_text(encoding="utf-8"))
    stacks = set()
    for bot in BUILTIN_BOTS:
        profile = load_profile(bot)
        deploy = config[bot]["deploy"]["parameters"]
        overrides = _overrides(deploy["parameter_overrides"])
        assert set(overrides) <= set(template["Parameters"]), bot
        assert overrides["BotName"] == bot
        in_flight = profile.get("politeness.max_in_flight")
        assert overrides["FetcherReservedConcurrency"] == str(in_flight or 0), bot
        assert overrides.get("ReverseDnsName") == profile.get("egress.reverse_dns"), bot
        assert deploy["capabilities"] == "CAPABILITY_IAM"
        stacks.add(deploy["stack_name"])
    assert len(stacks) == len(BUILTIN_BOTS)
    assert config["default"]["validate"]["parameters"]["lint"] is True


def test_sample_events_fit_the_functions(template: dict[str, Any]) -> None:
    tick = json.loads((ROOT / "events/schedule_tick.json").read_text(encoding="utf-8"))
    assert (tick["source"], tick["detail-type"]) == ("aws.events", "Scheduled Event")
    batch = json.loads((ROOT / "events/sqs_fetch_batch.json").read_text(encoding="utf-8"))["Records"]
    assert 2 <= len(batch) <= template["Resources"]["FetcherFunction"]["Properties"]["Events"]["Work"][
        "Properties"]["BatchSize"]
    assert len({r["attributes"]["MessageGroupId"] for r in batch}) == 2
    for record in batch:
        assert record["eventSourceARN"].endswith(".fifo")
        assert {"MessageGroupId", "MessageDeduplicationId", "SequenceNumber", "ApproximateReceiveCount"} \
            <= set(record["attributes"])
        body = json.loads(record["body"])
        assert set(body) == {"host", "round_id"}
    create = json.loads((ROOT / "events/reverse_dns_create.json").read_text(encoding="utf-8"))
    assert create["RequestType"] == "Create"
    assert set(template["Resources"]["ReverseDns"]["Properties"]) - {"ServiceToken", "ServiceTimeout"} \
        <= set(create["ResourceProperties"])

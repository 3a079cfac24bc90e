"""template.yaml: lint-clean, least privilege, the promised shapes, and samconfig in step with the profiles."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from heed_core.profile import BUILTIN_BOTS, load_profile

from heed.local.resources import function_properties, load_template

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
        # A policy written as JSON text (a log group's resource policy, !Sub): its statements too.
        documents = [json.loads(d["Fn::Sub"]) if isinstance(d, dict) and isinstance(d.get("Fn::Sub"), str) else d
                     for d in documents]
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
    assert template["Globals"]["Function"]["Architectures"] == ["arm64"]
    for layer, package in (("CoreLayer", "heed_core"), ("AwsLayer", "heed_aws")):
        resource = template["Resources"][layer]
        content = ROOT / resource["Properties"]["ContentUri"]
        assert (content / package / "__init__.py").is_file()
        assert (content / "requirements.txt").is_file() and (content / "requirements.lock").is_file()
        assert resource["Properties"]["CompatibleRuntimes"] == [runtime]
        assert resource["Properties"]["CompatibleArchitectures"] == ["arm64"]
        # THEN the layer's own Makefile builds it: aarch64 wheels for CPython 3.13, bytecode precompiled
        assert resource["Metadata"] == {"BuildMethod": "makefile", "BuildArchitecture": "arm64"}
        makefile = (content / "Makefile").read_text(encoding="utf-8")
        assert f"build-{layer}:" in makefile
        assert "ARCH      ?= aarch64" in makefile and "--only-binary=:all:" in makefile
        assert "PLATFORMS := manylinux_2_28_$(ARCH) manylinux2014_$(ARCH)" in makefile
        assert f"--python-version {runtime[len('python'):]}" in makefile.replace("$(PY_VER)", runtime[6:])
        assert "--require-hashes --no-deps" in makefile and "--no-compile" in makefile
        assert "-r \"$(HERE)requirements.lock\"" in makefile
        assert "-m compileall" in makefile and "--invalidation-mode unchecked-hash" in makefile


def test_layer_pins_are_the_tested_versions() -> None:
    # What the suite ran against is what is deployed: every package a layer's lock installs (the
    # ones it pulls in too) is at the venv's version. tests/unit/test_locks.py checks the locks.
    pins = 0
    for lock in ("layers/core/requirements.lock", "layers/aws/requirements.lock"):
        for line in (ROOT / lock).read_text(encoding="utf-8").splitlines():
            match = re.match(r"([A-Za-z0-9_.-]+)==([^\s;\\]+)", line)
            if match:
                assert version(match.group(1)) == match.group(2), f"{lock}: {line}"
                pins += 1
    assert pins >= 25


def test_fetcher_reports_batch_item_failures(template: dict[str, Any]) -> None:
    events = template["Resources"]["FetcherFunction"]["Properties"]["Events"]
    sqs = [e["Properties"] for e in events.values() if e["Type"] == "SQS"]
    assert len(sqs) == 1
    assert sqs[0]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert sqs[0]["Queue"] == {"Fn::GetAtt": ["WorkQueue", "Arn"]}
    # THEN the batch is the bot's, from its profile (samconfig.toml), 1 to SQS's 10
    assert sqs[0]["BatchSize"] == {"Ref": "FetcherBatchSize"}
    param = template["Parameters"]["FetcherBatchSize"]
    assert (param["Type"], param["Default"], param["MinValue"], param["MaxValue"]) == ("Number", 10, 1, 10)


def test_the_fetcher_timeout_is_the_one_its_batch_size_is_worked_out_for(template: dict[str, Any]) -> None:
    from heed.samconfig import FETCHER_TIMEOUT_S, fetcher_batch_size

    assert template["Resources"]["FetcherFunction"]["Properties"]["Timeout"] == FETCHER_TIMEOUT_S
    # AubeBot's one request at a time (AUBE-11) of up to 30 s: one record a batch; the others ten
    assert {bot: fetcher_batch_size(load_profile(bot)) for bot in BUILTIN_BOTS} == {
        bot: 1 if bot == "aubebot" else 10 for bot in BUILTIN_BOTS}


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


def test_visibility_timeout_is_six_times_the_fetcher_timeout_and_longer_than_any_gap(template: dict[str, Any]) -> None:
    fetcher = function_properties(template, "FetcherFunction")
    visibility = template["Resources"]["WorkQueue"]["Properties"]["VisibilityTimeout"]
    assert visibility >= 6 * fetcher["Timeout"]
    assert visibility >= 7 * 60  # WANNADO-05's round spacing, the longest gap a bot promises


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
    policies = template["Resources"]["FetcherFunction"]["Properties"]["Policies"]
    policy = [p for p in policies if isinstance(p, dict) and "Fn::If" in p and p["Fn::If"][0] == "HasBedrockModel"]
    assert len(policy) == 1
    assert "bedrock" not in json.dumps([p for p in policies if p not in policy])  # no other way to a model
    statement = policy[0]["Fn::If"][1]["Statement"][0]
    assert statement["Action"] == "bedrock:InvokeModel"
    assert statement["Resource"]["Fn::Sub"].endswith("foundation-model/${BedrockModelId}")


ALLOCATION = {"Fn::If": ["HasEgressAllocationId", {"Ref": "EgressAllocationId"},
                         {"Fn::GetAtt": ["EgressIp", "AllocationId"]}]}


def test_reverse_dns_may_touch_only_the_egress_ip(template: dict[str, Any]) -> None:
    statements = [s for lid, s in _allow_statements(template) if lid == "ReverseDnsFunction"]
    assert len(statements) == 1
    assert sorted(statements[0]["Action"]) == ["ec2:ModifyAddressAttribute", "ec2:ResetAddressAttribute"]
    text, variables = statements[0]["Resource"]["Fn::Sub"]
    assert text.endswith(":elastic-ip/${Allocation}") and variables == {"Allocation": ALLOCATION}
    custom = template["Resources"]["ReverseDns"]
    assert custom["Properties"]["AllocationId"] == ALLOCATION
    # Only with a name and an egress of its own (the EIP is the stack's there); outside the VPC (it
    # fetches no site)
    assert template["Conditions"][custom["Condition"]] == {
        "Fn::And": [{"Condition": "OwnsEgress"}, {"Condition": "HasReverseDnsName"}]}
    assert "VpcConfig" not in template["Resources"]["ReverseDnsFunction"]["Properties"]
    assert "DependsOn" not in custom


def test_common_09_egress_ip_is_kept_and_an_output_or_passed_in(template: dict[str, Any]) -> None:
    eip = template["Resources"]["EgressIp"]
    # THEN the address the info page, ips.json and the PTR record promise outlives the stack
    assert eip["Type"] == "AWS::EC2::EIP" and eip["Condition"] == "CreateEgressIp"
    assert (eip["DeletionPolicy"], eip["UpdateReplacePolicy"]) == ("Retain", "Retain")
    assert template["Conditions"]["CreateEgressIp"] == {
        "Fn::And": [{"Condition": "OwnsEgress"}, {"Fn::Not": [{"Condition": "HasEgressAllocationId"}]}]}
    param = template["Parameters"]["EgressAllocationId"]
    assert param["Default"] == "" and re.fullmatch(param["AllowedPattern"], "eipalloc-0123456789abcdef0")
    assert template["Outputs"]["EgressIp"] == {**template["Outputs"]["EgressIp"], "Condition": "CreateEgressIp",
                                               "Value": {"Ref": "EgressIp"}}
    assert template["Outputs"]["EgressAllocationId"]["Value"] == ALLOCATION
    # AND whichever NAT carries the traffic holds that one address
    assert template["Resources"]["NatGateway"]["Properties"]["AllocationId"] == ALLOCATION
    association = template["Resources"]["EgressIpAssociation"]["Properties"]
    assert association == {"AllocationId": ALLOCATION, "NetworkInterfaceId": {"Ref": "NatInterface"}}
    for name in ("WorkQueueUrl", "StateTableName", "ResultsBusName", "ResultsBucketName", "FetcherFunctionName"):
        assert name in template["Outputs"]


def test_egress_mode_picks_the_nat_and_none_makes_no_network(template: dict[str, Any]) -> None:
    mode = template["Parameters"]["EgressMode"]
    assert mode["AllowedValues"] == ["nat-instance", "nat-gateway", "none"] and mode["Default"] == "nat-instance"
    res = template["Resources"]
    network = [k for k, r in res.items() if r["Type"].startswith("AWS::EC2::")]
    assert len(network) >= 14
    by_mode = {"OwnsEgress", "CreateEgressIp", "UseNatGateway", "UseNatInstance"}
    for logical_id in network:
        assert res[logical_id].get("Condition") in by_mode, logical_id
    assert res["NatGateway"]["Condition"] == "UseNatGateway"
    assert res["PrivateRouteViaNatGateway"]["Properties"]["NatGatewayId"] == {"Ref": "NatGateway"}
    assert res["PrivateRouteViaNatGateway"]["Condition"] == "UseNatGateway"
    assert res["PrivateRouteViaNatInstance"]["Properties"]["NetworkInterfaceId"] == {"Ref": "NatInterface"}
    assert res["PrivateRouteViaNatInstance"]["Condition"] == "UseNatInstance"


def test_the_nat_instance_is_a_small_graviton_in_a_group_of_one_that_heals_and_stays_put(
        template: dict[str, Any]) -> None:
    res = template["Resources"]
    assert template["Parameters"]["NatInstanceType"]["Default"] == "t4g.nano"
    # the image is pinned: a plain AMI id the stack is given (heed deploy records it), never "latest"
    image = template["Parameters"]["NatImageId"]
    assert image["Type"] == "String" and image["Default"] == "" and re.fullmatch(image["AllowedPattern"],
                                                                                 "ami-0123456789abcdef0")
    rule = template["Rules"]["NatInstanceNeedsImage"]
    assert rule["Assertions"][0]["Assert"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "NatImageId"}, ""]}]}
    data = res["NatLaunchTemplate"]["Properties"]["LaunchTemplateData"]
    assert data["ImageId"] == {"Ref": "NatImageId"} and data["InstanceType"] == {"Ref": "NatInstanceType"}
    assert data["CreditSpecification"] == {"CpuCredits": "standard"}
    assert data["MetadataOptions"]["HttpTokens"] == "required"
    # an Auto Scaling group of one replaces a dead or impaired instance; a new image replaces it too,
    # the old one first (the egress interface is one)
    group = res["NatGroup"]
    props = group["Properties"]
    assert (props["MinSize"], props["MaxSize"], props["DesiredCapacity"]) == ("1", "1", "1")
    assert props["HealthCheckType"] == "EC2" and props["VPCZoneIdentifier"] == [{"Ref": "PublicSubnet"}]
    assert props["LaunchTemplate"]["Version"] == {"Fn::GetAtt": ["NatLaunchTemplate", "LatestVersionNumber"]}
    assert group["UpdatePolicy"]["AutoScalingRollingUpdate"]["MinInstancesInService"] == 0
    # what outlives an instance is the stack's: the egress interface holds the Elastic IP, forwards
    # (no source/destination check) and is the private route's target
    eni = res["NatInterface"]["Properties"]
    assert eni["SourceDestCheck"] is False and eni["SubnetId"] == {"Ref": "PublicSubnet"}
    assert eni["GroupSet"] == [{"Ref": "NatSecurityGroup"}]
    assert res["EgressIpAssociation"]["Properties"]["NetworkInterfaceId"] == {"Ref": "NatInterface"}
    # each instance, at boot, attaches it, routes and masquerades through it, then lets go of the
    # public address it booted with
    script = data["UserData"]["Fn::Base64"]["Fn::Sub"]
    assert script.startswith("#!/bin/bash\nset -euo pipefail\neni=${NatInterface}\n")
    assert "aws ec2 attach-network-interface" in script and "--device-index 1" in script
    assert "ip_forward = 1" in script and "MASQUERADE" in script and "iptables-services" in script
    assert "--no-associate-public-ip-address" in script
    # only the fetcher's HTTP(S) comes in
    ingress = res["NatSecurityGroup"]["Properties"]["SecurityGroupIngress"]
    assert {(r["FromPort"], r["SourceSecurityGroupId"]["Ref"]) for r in ingress} == {
        (80, "FunctionSecurityGroup"), (443, "FunctionSecurityGroup")}
    # the instance may attach that interface and change its own boot address, nothing else
    role = res["NatRole"]["Properties"]
    statements = [st for policy in role["Policies"] for st in policy["PolicyDocument"]["Statement"]]
    assert {a for st in statements for a in ([st["Action"]] if isinstance(st["Action"], str) else st["Action"])} == {
        "ec2:AttachNetworkInterface", "ec2:ModifyNetworkInterfaceAttribute"}
    the_eni = next(st for st in statements if st["Sid"] == "TheEgressInterface")
    assert the_eni["Resource"]["Fn::Sub"].endswith(":network-interface/${NatInterface}")
    assert all(st.get("Condition") == {"StringEquals": {"aws:ResourceTag/heed:nat": {"Ref": "AWS::StackName"}}}
               for st in statements if st is not the_eni)
    assert data["IamInstanceProfile"] == {"Arn": {"Fn::GetAtt": ["NatInstanceProfile", "Arn"]}}
    assert res["NatInstanceProfile"]["Properties"]["Roles"] == [{"Ref": "NatRole"}]
    # no alarm reboots or recovers it any more (the group replaces it); one says when it cannot
    assert not {"NatInstance", "NatRecoveryAlarm", "NatRebootAlarm"} & set(res)
    down = res["NatDownAlarm"]["Properties"]
    assert (down["Namespace"], down["MetricName"], down["ComparisonOperator"], down["Threshold"]) == (
        "AWS/AutoScaling", "GroupInServiceInstances", "LessThanThreshold", 1)
    assert {"Granularity": "1Minute", "Metrics": ["GroupInServiceInstances"]} in props["MetricsCollection"]


def test_several_stacks_share_one_egress_through_egress_stack(template: dict[str, Any]) -> None:
    # GIVEN EgressStack: a stack's egress is its own, or another's of the same template
    param = template["Parameters"]["EgressStack"]
    assert param["Default"] == "" and re.fullmatch(param["AllowedPattern"], "heed-wannadobot")
    conditions = template["Conditions"]
    assert conditions["SharesEgress"] == {"Fn::And": [{"Condition": "UseEgress"},
                                                      {"Fn::Not": [{"Fn::Equals": [{"Ref": "EgressStack"}, ""]}]}]}
    assert conditions["OwnsEgress"] == {"Fn::And": [{"Condition": "UseEgress"},
                                                    {"Fn::Not": [{"Condition": "SharesEgress"}]}]}
    # THEN every network resource is made by the stack that owns the egress only
    res = template["Resources"]
    owned = {"OwnsEgress", "CreateEgressIp", "UseNatGateway", "UseNatInstance", "CreateReverseDns"}
    for lid, r in res.items():
        if r["Type"].startswith(("AWS::EC2::", "AWS::AutoScaling::")) or lid in ("NatRole", "NatInstanceProfile"):
            assert r.get("Condition") in owned, lid
    for name in ("UseNatGateway", "UseNatInstance", "CreateEgressIp", "CreateReverseDns"):
        assert {"Condition": "OwnsEgress"} in conditions[name]["Fn::And"], name
    # AND the owner exports what a sharing stack's fetcher takes: subnet, security group, address
    exported = {o["Export"]["Name"]["Fn::Sub"]: o for o in template["Outputs"].values() if "Export" in o}
    assert set(exported) == {"${AWS::StackName}-EgressSubnetId", "${AWS::StackName}-EgressSecurityGroupId",
                             "${AWS::StackName}-EgressAllocationId"}
    assert all(o["Condition"] == "OwnsEgress" for o in exported.values())
    assert template["Outputs"]["EgressStack"] == {**template["Outputs"]["EgressStack"], "Condition": "SharesEgress",
                                                  "Value": {"Ref": "EgressStack"}}


def test_only_the_fetcher_is_in_the_vpc_in_one_subnet_in_the_nats_zone(template: dict[str, Any]) -> None:
    res = template["Resources"]
    assert "VpcConfig" not in template["Globals"]["Function"]
    in_vpc = [k for k in _functions(template) if "VpcConfig" in res[k]["Properties"]]
    assert in_vpc == ["FetcherFunction"]
    vpc = res["FetcherFunction"]["Properties"]["VpcConfig"]["Fn::If"]
    assert vpc[0] == "UseEgress" and vpc[2] == {"Ref": "AWS::NoValue"}
    # its stack's private subnet, or (EgressStack) the one the stack it shares exports
    assert vpc[1]["SubnetIds"] == [{"Fn::If": ["SharesEgress", {"Fn::ImportValue": {
        "Fn::Sub": "${EgressStack}-EgressSubnetId"}}, {"Ref": "PrivateSubnetA"}]}]
    assert vpc[1]["SecurityGroupIds"] == [{"Fn::If": ["SharesEgress", {"Fn::ImportValue": {
        "Fn::Sub": "${EgressStack}-EgressSecurityGroupId"}}, {"Ref": "FunctionSecurityGroup"}]}]
    subnets = [k for k, r in res.items() if r["Type"] == "AWS::EC2::Subnet"]
    zones = {json.dumps(res[k]["Properties"]["AvailabilityZone"]) for k in subnets}
    assert sorted(subnets) == ["PrivateSubnetA", "PublicSubnet"] and len(zones) == 1
    # AND state and page texts bypass the NAT through gateway endpoints on the private route table
    endpoints = {r["Properties"]["ServiceName"]["Fn::Sub"].rsplit(".", 1)[1]: r["Properties"]
                 for r in res.values() if r["Type"] == "AWS::EC2::VPCEndpoint"}
    assert set(endpoints) == {"dynamodb", "s3"}
    assert all(e["VpcEndpointType"] == "Gateway" and e["RouteTableIds"] == [{"Ref": "PrivateRouteTable"}]
               for e in endpoints.values())


def test_no_function_reserves_concurrency_so_a_new_accounts_quota_holds_the_stack(template: dict[str, Any]) -> None:
    # Lambda keeps 100 of an account's concurrency unreserved: a reservation needs a quota above
    # 100, and a new account's is often 10. AUBE-11 is the state table's request slots instead.
    for name in _functions(template):
        value = function_properties(template, name).get("ReservedConcurrentExecutions")
        assert value is None or name == "FetcherFunction", name
    # the fetcher's is an older samconfig's parameter, 0 (none) unless given
    value = template["Resources"]["FetcherFunction"]["Properties"]["ReservedConcurrentExecutions"]
    condition, then, otherwise = value["Fn::If"]
    assert then == {"Ref": "FetcherReservedConcurrency"}
    assert otherwise == {"Ref": "AWS::NoValue"}
    assert template["Conditions"][condition] == {
        "Fn::Not": [{"Fn::Equals": [{"Ref": "FetcherReservedConcurrency"}, "0"]}]}
    assert template["Parameters"]["FetcherReservedConcurrency"]["Default"] == 0


def test_the_template_runs_any_bot_by_its_profile_name(template: dict[str, Any]) -> None:
    # The built-in bots and any bot of its own (issue 19): a profile's name, and nothing else.
    pattern = re.compile(template["Parameters"]["BotName"]["AllowedPattern"])
    assert all(pattern.fullmatch(bot) for bot in BUILTIN_BOTS) and pattern.fullmatch("my-bot2")
    assert not [n for n in ("MyBot", "my_bot", "../x", "", "a" * 42) if pattern.fullmatch(n)]
    assert "AllowedValues" not in template["Parameters"]["BotName"]


def test_every_function_reads_the_profile_the_stack_names_and_the_output_says_which(
        template: dict[str, Any]) -> None:
    from heed_core.bundle import content_hash

    from heed_aws import runtime

    # GIVEN the profile layer in front of every function, where HEED_PROFILE_DIR says
    for name in _functions(template):
        assert {"Ref": "ProfileLayer"} in function_properties(template, name)["Layers"], name
    layer = template["Resources"]["ProfileLayer"]
    env = template["Globals"]["Function"]["Environment"]["Variables"]
    inside = Path(env[runtime.PROFILE_DIR_ENV]).relative_to("/opt")
    assert (ROOT / layer["Properties"]["ContentUri"] / inside).is_dir()  # heed deploy writes <name>.json here
    assert layer["Metadata"] == {"BuildMethod": "makefile"} and "CompatibleArchitectures" not in layer["Properties"]
    # AND the hash they check is a parameter the stack must be given, and its output
    assert env[runtime.PROFILE_SHA256_ENV] == {"Ref": "ProfileSha256"}
    sha = template["Parameters"]["ProfileSha256"]
    assert "Default" not in sha and re.fullmatch(sha["AllowedPattern"], content_hash(load_profile("aubebot")))
    assert template["Outputs"]["ProfileSha256"]["Value"] == {"Ref": "ProfileSha256"}


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
        assert "FetcherReservedConcurrency" not in overrides, bot
        assert overrides["FetcherMaximumConcurrency"] == ("2" if in_flight == 1 else "5"), bot
        assert overrides.get("ReverseDnsName") == profile.get("egress.reverse_dns"), bot
        assert deploy["capabilities"] == "CAPABILITY_IAM"
        stacks.add(deploy["stack_name"])
    assert len(stacks) == len(BUILTIN_BOTS)
    assert config["default"]["validate"]["parameters"]["lint"] is True


def test_sample_events_fit_the_functions(template: dict[str, Any]) -> None:
    from heed_aws.queue import decode_token

    from heed.local.samlocal import main as samlocal

    # THEN events/ is what the real encoders make (python -m heed.local.samlocal events --write)
    assert samlocal(["events", "--check"]) == 0
    tick = json.loads((ROOT / "events/schedule_tick.json").read_text(encoding="utf-8"))
    assert (tick["source"], tick["detail-type"]) == ("aws.events", "Scheduled Event")
    batch = json.loads((ROOT / "events/sqs_fetch_batch.json").read_text(encoding="utf-8"))["Records"]
    assert 2 <= len(batch) <= template["Parameters"]["FetcherBatchSize"]["MaxValue"]
    assert len({r["attributes"]["MessageGroupId"] for r in batch}) == 2
    for record in batch:
        assert record["eventSourceARN"].endswith(".fifo")
        assert {"MessageGroupId", "MessageDeduplicationId", "SequenceNumber", "ApproximateReceiveCount"} \
            <= set(record["attributes"])
        # AND each body is a token the fetcher takes: its group is its host, its work that host's
        token = decode_token(record["body"], 1, record["messageId"])
        assert token.host == record["attributes"]["MessageGroupId"] and token.items and not token.bad
        assert token.tok == record["attributes"]["MessageDeduplicationId"]
    create = json.loads((ROOT / "events/reverse_dns_create.json").read_text(encoding="utf-8"))
    assert create["RequestType"] == "Create"
    assert set(template["Resources"]["ReverseDns"]["Properties"]) - {"ServiceToken", "ServiceTimeout"} \
        <= set(create["ResourceProperties"])


def test_env_json_points_sam_local_at_the_resources_samlocal_creates() -> None:
    import boto3
    from moto import mock_aws

    from heed.local.resources import create_stack_resources
    from heed.local.samlocal import PREFIX

    env = json.loads((ROOT / "env.json").read_text(encoding="utf-8"))["Parameters"]
    with mock_aws():
        session = boto3.session.Session(aws_access_key_id="t", aws_secret_access_key="t", region_name="eu-west-1")
        res = create_stack_resources(template_path=TEMPLATE, bot="aubebot", prefix=PREFIX, session=session)
    assert (env["HEED_TABLE"], env["HEED_BUS_NAME"], env["HEED_BUCKET"]) == (res.table_name, res.bus_name,
                                                                             res.bucket)
    assert env["HEED_QUEUE_URL"].rsplit("/", 2)[1:] == res.queue_url.rsplit("/", 2)[1:]
    assert env["AWS_ENDPOINT_URL"].endswith(":5000") and env["HEED_BOT"] in BUILTIN_BOTS


# --- monitoring: logs, metrics, alarms, dashboard, saved queries (issue 11) --------------------

JOURNAL_FIELDS = {
    "request": {"bot", "t_start", "t_end", "method", "url", "host", "status", "error", "purpose", "bytes", "source"},
    "skip": {"bot", "url", "host", "reason", "detail", "purpose", "source", "round", "t"},
}
# The alarms of every stack (the dashboard lists them), then the NAT's own, by EgressMode.
ALARMS = ("HeartbeatAlarm", "SchedulerErrorsAlarm", "DeadLetterAlarm", "FetcherErrorsAlarm", "FetcherThrottlesAlarm",
          "DynamoDbThrottlesAlarm", "ImpoliteAnswersAlarm", "OldestTokenAlarm", "InFlightAlarm", "RecursiveLoopAlarm",
          "RobotsLoopAlarm", "ServiceFaultAlarm")
NAT_ALARMS = {"NatPortAllocationAlarm": "UseNatGateway", "NatDownAlarm": "UseNatInstance",
              "DeliveryDeadLetterAlarm": "HasResultsWebhook"}


@pytest.fixture(scope="module")
def emitted() -> set[tuple[str, tuple[str, ...]]]:
    """(metric, dimension names) of every metric heed_aws.journal emits, read from its EMF."""
    import contextlib
    import io
    import os

    from heed_aws import journal

    saved = {k: os.environ.get(k) for k in ("POWERTOOLS_METRICS_DISABLED", "POWERTOOLS_DEV")}
    os.environ["POWERTOOLS_METRICS_DISABLED"] = "false"
    os.environ.pop("POWERTOOLS_DEV", None)
    out = io.StringIO()

    def work(event: Any, context: Any) -> dict[str, Any]:
        j = journal.LogJournal()
        j.request({"url": "https://a.example/", "status": 429, "purpose": "robots"})
        j.request({"url": "https://a.example/", "error": "timeout", "purpose": "page"})
        j.skip({"url": "https://a.example/x", "reason": "robots_disallowed"})
        for metric in journal.METRICS:
            journal.count(metric)
        return {}

    try:
        with contextlib.redirect_stdout(out):
            journal.metrics.log_metrics(journal.per_invocation(work))({}, None)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    found = set()
    for line in out.getvalue().splitlines():
        doc = json.loads(line) if line.startswith('{"_aws"') else None
        if doc:
            for directive in doc["_aws"]["CloudWatchMetrics"]:
                for dims in directive["Dimensions"]:
                    found |= {(m["Name"], tuple(dims)) for m in directive["Metrics"]}
    assert ("Requests", ("service",)) in found  # the capture saw the journal's output
    return found


def _resources_of(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {k: r for k, r in template["Resources"].items() if r["Type"] == kind}


def _heed_metrics(alarm: dict[str, Any]) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
    """(metric name, ((dimension, value), ...)) of each Heed/<bot> metric an alarm reads."""
    props = alarm["Properties"]
    stats = [m["MetricStat"]["Metric"] for m in props.get("Metrics", []) if "MetricStat" in m]
    if "MetricName" in props:
        stats.append({"Namespace": props["Namespace"], "MetricName": props["MetricName"],
                      "Dimensions": props.get("Dimensions", [])})
    return [(s["MetricName"], tuple((d["Name"], d["Value"]) for d in s.get("Dimensions", [])))
            for s in stats if s["Namespace"] == {"Fn::Sub": "Heed/${BotName}"}]


def test_cfn_lint_informational_checks_are_clean_too() -> None:
    # I3011 (stateful resources without DeletionPolicy/UpdateReplacePolicy) among them
    code = ("import sys; from cfnlint.runner import main; "
            "sys.argv = ['cfn-lint', '-c', 'I', '--', 'template.yaml']; sys.exit(main())")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert (run.returncode, run.stdout.strip(), run.stderr.strip()) == (0, "", "")


def test_table_and_bucket_outlive_the_stack(template: dict[str, Any]) -> None:
    for name in ("StateTable", "ResultsBucket"):
        resource = template["Resources"][name]
        assert (resource["DeletionPolicy"], resource["UpdateReplacePolicy"]) == ("Retain", "Retain"), name


def test_metrics_are_one_namespace_per_bot(template: dict[str, Any]) -> None:
    env = template["Globals"]["Function"]["Environment"]["Variables"]
    assert env["POWERTOOLS_METRICS_NAMESPACE"] == {"Fn::Sub": "Heed/${BotName}"}


def test_every_function_logs_to_its_own_group_with_the_retention_parameter(template: dict[str, Any]) -> None:
    assert template["Parameters"]["LogRetentionDays"]["Default"] == 30
    groups = set()
    for name in _functions(template):
        function = template["Resources"][name]
        group_id = function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        group = template["Resources"][group_id]
        assert group["Type"] == "AWS::Logs::LogGroup", name
        assert group["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}, name
        assert group.get("Condition") == function.get("Condition"), name  # no group without its function
        groups.add(group_id)
    assert len(groups) == len(_functions(template))  # one group each
    # and the results' own group (every envelope, heed events --stack), kept for ResultsRetentionDays
    assert set(_resources_of(template, "AWS::Logs::LogGroup")) == groups | {"ResultsLogGroup"}
    assert template["Resources"]["ResultsLogGroup"]["Properties"]["RetentionInDays"] == {"Ref": "ResultsRetentionDays"}
    assert template["Resources"]["FetcherFunction"]["Properties"]["LoggingConfig"]["LogGroup"] == \
        template["Outputs"]["FetcherLogGroup"]["Value"]


def test_alarms_go_to_the_topic_and_the_topic_to_the_alarm_email(template: dict[str, Any]) -> None:
    alarms = _resources_of(template, "AWS::CloudWatch::Alarm")
    assert set(alarms) == set(ALARMS) | set(NAT_ALARMS)
    for name, alarm in alarms.items():
        props = alarm["Properties"]
        assert {"Ref": "AlarmTopic"} in props["AlarmActions"] and props["OKActions"] == [{"Ref": "AlarmTopic"}], name
        assert props["AlarmName"]["Fn::Sub"].startswith("${AWS::StackName}-"), name
        # a quiet bot is no alarm, except for the heartbeat: silence is what it watches for
        assert props["TreatMissingData"] == ("breaching" if name == "HeartbeatAlarm" else "notBreaching"), name
        assert alarm.get("Condition") == NAT_ALARMS.get(name), name
    assert template["Resources"]["AlarmTopic"]["Type"] == "AWS::SNS::Topic"
    subscription = template["Resources"]["AlarmEmailSubscription"]
    assert subscription["Condition"] == "HasAlarmEmail"
    assert subscription["Properties"] == {"TopicArn": {"Ref": "AlarmTopic"}, "Protocol": "email",
                                          "Endpoint": {"Ref": "AlarmEmail"}}
    assert template["Conditions"]["HasAlarmEmail"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "AlarmEmail"}, ""]}]}
    email = template["Parameters"]["AlarmEmail"]
    assert email["Default"] == "" and email["Type"] == "String"  # a plain parameter (heed deploy --guided asks it)
    pattern = re.compile(email["AllowedPattern"])
    assert pattern.fullmatch("") and pattern.fullmatch("ops@example.org")
    assert not pattern.fullmatch("ops at example.org") and not pattern.fullmatch("a@b@c.org")


def test_the_alarm_topic_is_encrypted_with_a_key_the_alarms_may_use(template: dict[str, Any]) -> None:
    topic = template["Resources"]["AlarmTopic"]["Properties"]
    assert topic["KmsMasterKeyId"] == {"Ref": "AlarmTopicKey"}
    key = template["Resources"]["AlarmTopicKey"]
    assert key["Type"] == "AWS::KMS::Key" and key["Properties"]["EnableKeyRotation"] is True
    (alarms,) = [st for st in key["Properties"]["KeyPolicy"]["Statement"]
                 if st.get("Principal", {}).get("Service") == "cloudwatch.amazonaws.com"]
    assert sorted(alarms["Action"]) == ["kms:Decrypt", "kms:GenerateDataKey*"]
    assert alarms["Condition"] == {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}}


def test_samconfig_sets_who_the_alarms_reach_and_the_heartbeat_of_each_bot() -> None:
    from heed.samconfig import alarm_email, heartbeat_hours

    config = tomllib.loads((ROOT / "samconfig.toml").read_text(encoding="utf-8"))
    for bot in BUILTIN_BOTS:
        overrides = _overrides(config[bot]["deploy"]["parameters"]["parameter_overrides"])
        assert overrides.get("AlarmEmail") == alarm_email(load_profile(bot)), bot
        assert overrides.get("HeartbeatHours", "3") == str(heartbeat_hours(load_profile(bot)) or 3), bot
    assert _overrides(config["aubebot"]["deploy"]["parameters"]["parameter_overrides"])["AlarmEmail"] == \
        "robot@aube.news"


def test_the_heartbeat_breaches_on_silence_while_sources_exist(template: dict[str, Any]) -> None:
    props = template["Resources"]["HeartbeatAlarm"]["Properties"]
    assert set(_heed_metrics(template["Resources"]["HeartbeatAlarm"])) == {
        ("Requests", (("service", "heed"),)), ("Sources", (("service", "heed"),))}
    assert props["EvaluationPeriods"] == props["DatapointsToAlarm"] == {"Ref": "HeartbeatHours"}
    assert all(m["MetricStat"]["Period"] == 3600 for m in props["Metrics"] if "MetricStat" in m)
    expression = props["Metrics"][-1]["Expression"]
    # an hour with requests, or with no sources, is fine; no requests and sources (or no word): breach

    def value(requests: float | None, sources: float | None) -> int:
        fill = {"requests": 0.0 if requests is None else requests, "sources": 1.0 if sources is None else sources}
        assert expression == "IF(FILL(requests, 0) > 0 OR FILL(sources, 1) == 0, 0, 1)"
        return 0 if fill["requests"] > 0 or fill["sources"] == 0 else 1

    assert [value(5, 100), value(0, 0), value(None, 100), value(None, None)] == [0, 0, 1, 1]
    hours = template["Parameters"]["HeartbeatHours"]
    assert (hours["Default"], hours["MaxValue"]) == (3, 168)


def test_scheduler_errors_fetcher_throttles_dynamodb_in_flight_recursion_and_nat_ports_are_watched(
        template: dict[str, Any]) -> None:
    res = template["Resources"]

    def watched(name: str) -> tuple[str, str, str]:
        p = res[name]["Properties"]
        return p["Namespace"], p["MetricName"], json.dumps(p["Dimensions"][0]["Value"])

    assert watched("SchedulerErrorsAlarm") == ("AWS/Lambda", "Errors", '{"Ref": "SchedulerFunction"}')
    assert watched("FetcherThrottlesAlarm") == ("AWS/Lambda", "Throttles", '{"Ref": "FetcherFunction"}')
    assert watched("RecursiveLoopAlarm") == ("AWS/Lambda", "RecursiveInvocationsDropped", '{"Ref": "FetcherFunction"}')
    assert watched("InFlightAlarm") == ("AWS/SQS", "ApproximateNumberOfMessagesNotVisible",
                                        '{"Fn::GetAtt": ["WorkQueue", "QueueName"]}')
    assert res["InFlightAlarm"]["Properties"]["Threshold"] == 100000
    assert watched("NatPortAllocationAlarm") == ("AWS/NATGateway", "ErrorPortAllocation", '{"Ref": "NatGateway"}')
    ddb = {m["MetricStat"]["Metric"]["MetricName"]: m["MetricStat"]["Metric"]["Dimensions"]
           for m in res["DynamoDbThrottlesAlarm"]["Properties"]["Metrics"] if "MetricStat" in m}
    assert ddb == {"ReadThrottleEvents": [{"Name": "TableName", "Value": {"Ref": "StateTable"}}],
                   "WriteThrottleEvents": [{"Name": "TableName", "Value": {"Ref": "StateTable"}}]}


def test_the_dlq_and_fetcher_error_alarms_watch_the_right_resources(template: dict[str, Any]) -> None:
    dlq = template["Resources"]["DeadLetterAlarm"]["Properties"]
    target = template["Resources"]["WorkQueue"]["Properties"]["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0]
    assert (dlq["Namespace"], dlq["MetricName"]) == ("AWS/SQS", "ApproximateNumberOfMessagesVisible")
    assert dlq["Dimensions"] == [{"Name": "QueueName", "Value": {"Fn::GetAtt": [target, "QueueName"]}}]
    assert (dlq["ComparisonOperator"], dlq["Threshold"]) == ("GreaterThanOrEqualToThreshold", 1)  # one is enough
    errors = template["Resources"]["FetcherErrorsAlarm"]["Properties"]
    assert (errors["Namespace"], errors["MetricName"]) == ("AWS/Lambda", "Errors")
    assert errors["Dimensions"] == [{"Name": "FunctionName", "Value": {"Ref": "FetcherFunction"}}]
    age = template["Resources"]["OldestTokenAlarm"]["Properties"]
    assert (age["Namespace"], age["MetricName"]) == ("AWS/SQS", "ApproximateAgeOfOldestMessage")
    assert age["Dimensions"] == [{"Name": "QueueName", "Value": {"Fn::GetAtt": ["WorkQueue", "QueueName"]}}]
    assert age["Threshold"] == {"Ref": "OldestMessageAlarmSeconds"}


def test_the_politeness_alarms_are_metric_math_on_the_journals_metrics(
        template: dict[str, Any], emitted: set[tuple[str, tuple[str, ...]]]) -> None:
    impolite = template["Resources"]["ImpoliteAnswersAlarm"]
    assert set(_heed_metrics(impolite)) == {("Impolite", (("service", "heed"),)), ("Requests", (("service", "heed"),))}
    assert impolite["Properties"]["Threshold"] == {"Ref": "ImpoliteShareThreshold"}
    robots = template["Resources"]["RobotsLoopAlarm"]
    assert set(_heed_metrics(robots)) == {("RobotsRequests", (("service", "heed"),)),
                                          ("Requests", (("service", "heed"),))}
    assert robots["Properties"]["Threshold"] == {"Ref": "RobotsPerPageThreshold"}
    for name in (*ALARMS, *NAT_ALARMS):
        props = template["Resources"][name]["Properties"]
        for metric, dims in _heed_metrics(template["Resources"][name]):
            # THEN every metric an alarm reads is one the journal writes, with exactly these dimensions
            assert (metric, tuple(k for k, _ in dims)) in emitted, (name, metric, dims)
        queries = props.get("Metrics", [])
        if not queries:
            continue
        ids = {m["Id"] for m in queries}
        assert [m for m in queries if m.get("ReturnData")] == [queries[-1]], name  # one answer, the last
        for m in queries:
            if "Expression" in m:
                used = set(re.findall(r"\b([a-z][A-Za-z0-9_]*)\b(?!\s*\()", m["Expression"]))
                assert used <= ids, (name, used - ids)


def test_at_most_twelve_custom_metrics_a_bot(emitted: set[tuple[str, tuple[str, ...]]]) -> None:
    assert len(emitted) <= 12 and {dims for _, dims in emitted} == {("service",)}


def _dashboard(template: dict[str, Any]) -> dict[str, Any]:
    """The dashboard body as JSON: numbers for the thresholds, <Name> for the other substitutions."""
    body = template["Resources"]["Dashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    names = set(re.findall(r"\$\{([^}]+)\}", body))
    for name in names:
        root = name.split(".", 1)[0]
        assert root in template["Parameters"] or root in template["Resources"] or root.startswith("AWS::"), name
        parameter = template["Parameters"].get(name, {})
        value = str(parameter["Default"]) if parameter.get("Type") == "Number" else f"<{name}>"
        body = body.replace("${" + name + "}", value)
    return json.loads(body)


def _widget(dashboard: dict[str, Any], title_start: str) -> dict[str, Any]:
    (widget,) = [w for w in dashboard["widgets"] if w["properties"]["title"].startswith(title_start)]
    return widget


def _lines(widget: dict[str, Any]) -> list[list[Any]]:
    """A metric widget's metric rows without their options, and its expressions as text."""
    rows = []
    for row in widget["properties"]["metrics"]:
        rows.append([x["expression"] for x in row if isinstance(x, dict) and "expression" in x] or
                    [x for x in row if not isinstance(x, dict)])
    return rows


def test_dashboard_shows_what_the_design_card_asks(template: dict[str, Any],
                                                   emitted: set[tuple[str, tuple[str, ...]]]) -> None:
    board = _dashboard(template)
    heed = "Heed/<BotName>"
    requests = _lines(_widget(board, "Requests and impolite"))
    assert requests == [[heed, m, "service", "heed"] for m in ("Requests", "Impolite")]
    impolite = _lines(_widget(board, "Impolite answers"))
    assert [heed, "Impolite", "service", "heed"] in impolite and [heed, "Requests", "service", "heed"] in impolite
    assert [heed, "RobotsRequests", "service", "heed"] in _lines(_widget(board, "robots.txt requests per"))
    politeness = _lines(_widget(board, "Politeness: turns deferred"))
    # (a turn that made no request waited for the host's slot: Turns less Requests)
    assert [heed, "Requests", "service", "heed"] in politeness and [heed, "Turns", "service", "heed"] in politeness
    # the why (status, skip reason) from the log records, by Logs Insights
    for title, kind in (("Requests by status", "request"), ("Skips by reason", "skip")):
        widget = _widget(board, title)
        assert widget["type"] == "log" and f'filter heed = "{kind}"' in widget["properties"]["query"]
    scheduler = _lines(_widget(board, "Scheduler"))
    assert scheduler == [[heed, "Sources", "service", "heed"], ["AWS/Lambda", "Duration", "FunctionName",
                                                                 "<SchedulerFunction>"]]
    fetcher = "<FetcherFunction>"
    assert {tuple(r) for r in _lines(_widget(board, "Fetcher duration"))} == {
        ("AWS/Lambda", "Duration", "FunctionName", fetcher)}
    errors = _lines(_widget(board, "Errors and throttles"))
    assert ["AWS/Lambda", "Errors", "FunctionName", fetcher] in errors
    assert ["AWS/Lambda", "Throttles", "FunctionName", fetcher] in errors
    queue = _lines(_widget(board, "Work queue"))
    assert ["AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", "<WorkQueue.QueueName>"] in queue
    assert ["AWS/SQS", "ApproximateAgeOfOldestMessage", "QueueName", "<WorkQueue.QueueName>"] in queue
    assert _lines(_widget(board, "Dead-letter queue")) == [
        ["AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", "<WorkDeadLetterQueue.QueueName>"]]
    assert _widget(board, "Alarms")["properties"]["alarms"] == [f"<{name}.Arn>" for name in ALARMS]
    shown = set()
    for widget in board["widgets"]:
        for row in _lines(widget) if widget["type"] == "metric" else []:
            if row[0] == heed:  # every Heed metric on the board is one the journal writes
                assert (row[1], tuple(row[2::2])) in emitted, (widget["properties"]["title"], row)
                shown.add(row[1])
    assert shown == {m for m, _ in emitted}  # and every one of them is on it


def test_dashboard_widgets_fit_the_grid_without_overlapping(template: dict[str, Any]) -> None:
    cells: set[tuple[int, int]] = set()
    for widget in _dashboard(template)["widgets"]:
        assert 0 <= widget["x"] and widget["x"] + widget["width"] <= 24
        mine = {(x, y) for x in range(widget["x"], widget["x"] + widget["width"])
                for y in range(widget["y"], widget["y"] + widget["height"])}
        assert not cells & mine, widget["properties"]["title"]
        cells |= mine


def test_saved_queries_read_the_journals_records(template: dict[str, Any]) -> None:
    queries = {r["Properties"]["Name"]["Fn::Sub"]: r["Properties"]
               for r in _resources_of(template, "AWS::Logs::QueryDefinition").values()}
    assert set(queries) == {"${AWS::StackName}/audit one host", "${AWS::StackName}/why was a URL skipped",
                            "${AWS::StackName}/top skip reasons"}
    audit = queries["${AWS::StackName}/audit one host"]
    assert audit["LogGroupNames"] == [{"Ref": "FetcherLogGroup"}]  # the fetcher makes every request
    assert 'filter heed = "request" and host like' in audit["QueryString"]
    for name in ("why was a URL skipped", "top skip reasons"):
        query = queries["${AWS::StackName}/" + name]
        # the scheduler skips too (a closed source, a refused URL)
        assert query["LogGroupNames"] == [{"Ref": "FetcherLogGroup"}, {"Ref": "SchedulerLogGroup"}]
        assert 'filter heed = "skip"' in query["QueryString"]
    for props in queries.values():
        kind = "request" if '"request"' in props["QueryString"] else "skip"
        for line in props["QueryString"].splitlines():
            if line.startswith("fields "):
                fields = {f.strip() for f in line[len("fields "):].split(",")} - {"@timestamp"}
                assert fields <= JOURNAL_FIELDS[kind], fields - JOURNAL_FIELDS[kind]
        assert "by reason" in props["QueryString"] or "fields " in props["QueryString"]


def test_every_resource_that_takes_tags_has_them(template: dict[str, Any]) -> None:
    from cfnlint.schema import PROVIDER_SCHEMA_MANAGER

    ours = [{"Key": "Application", "Value": "heed"}, {"Key": "Bot", "Value": {"Ref": "BotName"}}]
    function_globals = template["Globals"]["Function"]
    assert function_globals["Tags"] == {"Application": "heed", "Bot": {"Ref": "BotName"}}
    assert function_globals["PropagateTags"] is True  # roles and event sources too
    checked = 0
    for logical_id, resource in template["Resources"].items():
        kind = resource["Type"]
        if kind.startswith("AWS::Serverless::") or kind.startswith("Custom::"):
            continue
        schema = PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", kind).schema
        if "Tags" in schema.get("properties", {}):
            tags = resource["Properties"]["Tags"]
            # (Name, and heed:nat: the NAT's own, which its instance's rights are scoped to; an Auto
            # Scaling group's tags say whether they go to its instances: the launch template tags those)
            assert [{k: v for k, v in t.items() if k != "PropagateAtLaunch"} for t in tags
                    if t["Key"] not in ("Name", "heed:nat")] == ours, logical_id
            checked += 1
    assert checked >= 20


def test_serverless_repo_metadata_names_this_version() -> None:
    import tomllib

    meta = load_template(TEMPLATE)["Metadata"]["AWS::ServerlessRepo::Application"]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert meta["SemanticVersion"] == project["version"]
    assert meta["Name"] == project["name"] and meta["Author"] and 0 < len(meta["Description"]) <= 256
    assert (ROOT / meta["ReadmeUrl"]).is_file()
    assert all(re.fullmatch(r"[a-zA-Z0-9+\-_:/@]{1,127}", label) for label in meta["Labels"])
    assert len(meta["Labels"]) <= 10


def test_the_commands_find_their_resources_in_the_outputs(template: dict[str, Any]) -> None:
    outputs = template["Outputs"]
    assert outputs["FetcherLogGroup"]["Value"] == {"Ref": "FetcherLogGroup"}  # heed audit --stack
    assert outputs["DeadLetterQueueUrl"]["Value"] == {"Ref": "WorkDeadLetterQueue"}  # heed dlq --stack
    assert outputs["WorkQueueUrl"]["Value"] == {"Ref": "WorkQueue"}
    assert outputs["AlarmTopicArn"]["Value"] == {"Ref": "AlarmTopic"}


# --- publishing the info page (PublishInfoPage: none | cloudfront | function-url) ----------------

PUBLISH = ("InfoPageBucket", "InfoPageBucketPolicy", "InfoPageOriginAccessControl", "InfoPageEdgeFunction",
           "InfoPageHeaders", "InfoPageDistribution", "InfoPageFunction", "InfoPageLogGroup")


def _publish_condition(template: dict[str, Any], logical_id: str) -> str:
    return template["Resources"][logical_id]["Condition"]


def test_publishing_is_a_parameter_and_nothing_of_it_exists_without_it(template: dict[str, Any]) -> None:
    param = template["Parameters"]["PublishInfoPage"]
    assert param["AllowedValues"] == ["none", "cloudfront", "function-url"] and param["Default"] == "none"
    conditions = template["Conditions"]
    assert conditions["PublishViaCloudFront"] == {"Fn::Equals": [{"Ref": "PublishInfoPage"}, "cloudfront"]}
    assert conditions["PublishViaFunctionUrl"] == {"Fn::Equals": [{"Ref": "PublishInfoPage"}, "function-url"]}
    assert conditions["PublishInfo"] == {"Fn::Or": [{"Condition": "PublishViaCloudFront"},
                                                    {"Condition": "PublishViaFunctionUrl"}]}
    found = [k for k in template["Resources"] if k.startswith("InfoPage")]
    assert sorted(found) == sorted(PUBLISH)
    for logical_id in PUBLISH:
        assert _publish_condition(template, logical_id) in ("PublishInfo", "PublishViaCloudFront",
                                                            "PublishViaFunctionUrl"), logical_id
    assert {_publish_condition(template, k) for k in ("InfoPageBucket", "InfoPageBucketPolicy")} == {"PublishInfo"}
    assert {_publish_condition(template, k) for k in ("InfoPageFunction", "InfoPageLogGroup")} == {
        "PublishViaFunctionUrl"}


def test_the_info_page_bucket_is_private_with_no_acl_and_tls_only(template: dict[str, Any]) -> None:
    bucket = template["Resources"]["InfoPageBucket"]["Properties"]
    assert bucket["PublicAccessBlockConfiguration"] == {"BlockPublicAcls": True, "BlockPublicPolicy": True,
                                                        "IgnorePublicAcls": True, "RestrictPublicBuckets": True}
    # BucketOwnerEnforced switches ACLs off altogether; no canned ACL, no website endpoint
    assert bucket["OwnershipControls"] == {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}
    assert "AccessControl" not in bucket and "WebsiteConfiguration" not in bucket
    assert bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]["ServerSideEncryptionByDefault"]
    statements = template["Resources"]["InfoPageBucketPolicy"]["Properties"]["PolicyDocument"]["Statement"]
    deny = statements[0]
    assert deny["Effect"] == "Deny" and deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_the_bucket_policy_lets_only_this_distribution_or_the_function_read(template: dict[str, Any]) -> None:
    statements = template["Resources"]["InfoPageBucketPolicy"]["Properties"]["PolicyDocument"]["Statement"]
    allows = {}
    for s in statements[1:]:
        condition, then, otherwise = s["Fn::If"]
        assert otherwise == {"Ref": "AWS::NoValue"}
        allows[condition] = then
    assert set(allows) == {"PublishViaCloudFront", "PublishViaFunctionUrl"}
    for allow in allows.values():
        assert allow["Effect"] == "Allow" and allow["Action"] == "s3:GetObject"
        assert allow["Resource"] == {"Fn::Sub": "${InfoPageBucket.Arn}/*"}
        assert allow["Principal"] != "*" and "*" not in json.dumps(allow["Principal"])
    cloudfront = allows["PublishViaCloudFront"]
    assert cloudfront["Principal"] == {"Service": "cloudfront.amazonaws.com"}
    assert cloudfront["Condition"]["StringEquals"]["AWS:SourceArn"]["Fn::Sub"].endswith(
        ":distribution/${InfoPageDistribution}")
    assert allows["PublishViaFunctionUrl"]["Principal"] == {"AWS": {"Fn::GetAtt": ["InfoPageFunctionRole", "Arn"]}}
    # nothing else in the stack may reach the bucket: no function but this one names it
    for name in _functions(template):
        if name != "InfoPageFunction":
            assert "InfoPageBucket" not in json.dumps(template["Resources"][name]), name


def test_cloudfront_reads_the_bucket_through_its_origin_access_control_over_https(template: dict[str, Any]) -> None:
    config = template["Resources"]["InfoPageDistribution"]["Properties"]["DistributionConfig"]
    origin, *desk = config["Origins"]  # (the site owners' desk's function URL, with a desk: test_desk_template.py)
    assert [d["Fn::If"][0] for d in desk] == ["DeskBehindCloudFront"]
    assert origin["DomainName"] == {"Fn::GetAtt": ["InfoPageBucket", "RegionalDomainName"]}
    assert origin["OriginAccessControlId"] == {"Fn::GetAtt": ["InfoPageOriginAccessControl", "Id"]}
    assert origin["S3OriginConfig"] == {"OriginAccessIdentity": ""}  # no legacy identity
    oac = template["Resources"]["InfoPageOriginAccessControl"]["Properties"]["OriginAccessControlConfig"]
    assert (oac["OriginAccessControlOriginType"], oac["SigningBehavior"]) == ("s3", "always")
    behaviour = config["DefaultCacheBehavior"]
    assert behaviour["ViewerProtocolPolicy"] == "redirect-to-https"
    assert behaviour["AllowedMethods"] == ["GET", "HEAD"]
    edge = {"Fn::GetAtt": ["InfoPageEdgeFunction", "FunctionMetadata.FunctionARN"]}
    assert behaviour["FunctionAssociations"] == [{"EventType": "viewer-request", "FunctionARN": edge},
                                                 {"EventType": "viewer-response", "FunctionARN": edge}]


def test_a_name_of_its_own_only_with_its_certificate(template: dict[str, Any]) -> None:
    config = template["Resources"]["InfoPageDistribution"]["Properties"]["DistributionConfig"]
    assert config["Aliases"] == {"Fn::If": ["HasInfoPageDomain", [{"Ref": "InfoPageDomain"}], {"Ref": "AWS::NoValue"}]}
    condition, cert, otherwise = config["ViewerCertificate"]["Fn::If"]
    assert condition == "HasInfoPageDomain" and otherwise == {"Ref": "AWS::NoValue"}
    assert cert == {"AcmCertificateArn": {"Ref": "InfoPageCertificateArn"}, "SslSupportMethod": "sni-only",
                    "MinimumProtocolVersion": "TLSv1.2_2021"}
    needs = template["Conditions"]["HasInfoPageDomain"]["Fn::And"]
    assert {"Condition": "PublishViaCloudFront"} in needs and len(needs) == 3
    pattern = re.compile(template["Parameters"]["InfoPageCertificateArn"]["AllowedPattern"])
    assert pattern.fullmatch("") and pattern.fullmatch("arn:aws:acm:us-east-1:123456789012:certificate/ab-12")
    assert not pattern.fullmatch("arn:aws:acm:eu-west-1:123456789012:certificate/ab-12")  # CloudFront: us-east-1


def test_the_edge_serves_the_key_directory_with_its_media_type_and_signature_headers(template: dict[str, Any]) -> None:
    from heed_core.identity.directory import DIRECTORY_PATH, MEDIA_TYPE

    from heed.infopage import SIGNED_HEADERS

    function = template["Resources"]["InfoPageEdgeFunction"]["Properties"]
    assert function["FunctionConfig"]["Runtime"] == "cloudfront-js-2.0" and function["AutoPublish"] is True
    code = function["FunctionCode"]
    assert f"'{DIRECTORY_PATH}'" in code and f"'{MEDIA_TYPE}'" in code
    for header in SIGNED_HEADERS:
        assert f"'{header.lower()}'" in code
    assert "'x-amz-meta-' + name" in code and "index.html" in code


def test_the_publishing_outputs_name_the_bucket_the_url_and_the_distribution(template: dict[str, Any]) -> None:
    outputs = template["Outputs"]
    assert outputs["InfoPageBucketName"] == {"Condition": "PublishInfo", "Description": outputs[
        "InfoPageBucketName"]["Description"], "Value": {"Ref": "InfoPageBucket"}}
    assert outputs["InfoPageUrl"]["Condition"] == "PublishInfo"
    assert outputs["InfoPageUrl"]["Value"] == {"Fn::If": [
        "HasInfoPageDomain", {"Fn::Sub": "https://${InfoPageDomain}/"},
        {"Fn::If": ["PublishViaCloudFront", {"Fn::Sub": "https://${InfoPageDistribution.DomainName}/"},
                    {"Fn::GetAtt": ["InfoPageFunctionUrl", "FunctionUrl"]}]}]}
    assert outputs["InfoPageDistributionDomain"]["Value"] == {"Fn::GetAtt": ["InfoPageDistribution", "DomainName"]}
    assert outputs["InfoPageDistributionId"] == {"Condition": "PublishViaCloudFront", "Description": outputs[
        "InfoPageDistributionId"]["Description"], "Value": {"Ref": "InfoPageDistribution"}}


def test_samconfig_publishes_for_the_bots_that_must_serve_files_of_their_own() -> None:
    from heed_core.profile import load_profile_data

    from heed.samconfig import deploy_env, publish_info_page

    config = tomllib.loads((ROOT / "samconfig.toml").read_text(encoding="utf-8"))
    for bot in BUILTIN_BOTS:
        overrides = _overrides(config[bot]["deploy"]["parameters"]["parameter_overrides"])
        # WANNADO-02: /crawler/ips.json is the bot's own to serve
        assert overrides.get("PublishInfoPage", "none") == ("cloudfront" if bot == "wannadobot" else "none"), bot
    signing = load_profile_data({"extends": "aubebot", "identity": {"web_bot_auth": {
        "enabled": True, "key_secret": "secretsmanager:heed/aube", "signature_agent": "https://aube.news"}}})
    assert publish_info_page(signing) == "cloudfront"
    assert deploy_env(signing).parameter_overrides().endswith(" PublishInfoPage=cloudfront")


def test_the_function_url_serves_the_pages_and_a_directory_that_verifies(template: dict[str, Any], tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The inline handler itself, on moto's S3, after the README's upload of `heed info-page`'s output."""
    import base64

    import boto3
    from moto import mock_aws

    from heed_core.identity.directory import DIRECTORY_PATH, MEDIA_TYPE
    from heed_core.identity.keys import write_new_key_file
    from heed_core.identity.verify import verify_directory
    from heed_core.profile import load_profile_data

    from heed.infopage import METADATA_SUFFIX, write_info_page

    function = template["Resources"]["InfoPageFunction"]["Properties"]
    assert function["FunctionUrlConfig"] == {"AuthType": "NONE"} and function["Handler"] == "index.handler"
    assert function["Policies"] == [{"S3ReadPolicy": {"BucketName": {"Ref": "InfoPageBucket"}}}]
    key = tmp_path / "key.pem"
    write_new_key_file(key)
    profile = load_profile_data({"extends": "aubebot", "identity": {"web_bot_auth": {
        "enabled": True, "key_file": str(key), "signature_agent": "https://aube.news"}}})
    out = tmp_path / "site"
    write_info_page(profile, out)
    site = out / "aube.news"
    for k, v in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "eu-west-1",
                 "HEED_INFO_BUCKET": "info-page"}.items():
        monkeypatch.setenv(k, v)
    with mock_aws():
        s3 = boto3.client("s3")
        s3.create_bucket(Bucket="info-page", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
        directory = DIRECTORY_PATH.lstrip("/")
        for path in site.rglob("*"):
            rel = path.relative_to(site).as_posix()
            if path.is_dir() or rel.startswith(directory):
                continue  # aws s3 sync ... --exclude '.well-known/http-message-signatures-directory*'
            ctype = "text/html" if rel.endswith(".html") else "application/json"
            s3.put_object(Bucket="info-page", Key=rel, Body=path.read_bytes(), ContentType=ctype)
        # aws s3 cp ... --content-type MEDIA_TYPE --cache-control max-age=86400 --metadata file://<sidecar>
        meta = json.loads((site / (directory + METADATA_SUFFIX)).read_text(encoding="utf-8"))
        s3.put_object(Bucket="info-page", Key=directory, Body=(site / directory).read_bytes(), ContentType=MEDIA_TYPE,
                      CacheControl="max-age=86400", Metadata=meta)
        namespace: dict[str, Any] = {}
        exec(compile(function["InlineCode"], "InfoPageFunction", "exec"), namespace)  # noqa: S102 - our template

        def get(path: str, method: str = "GET") -> dict[str, Any]:
            return namespace["handler"]({"rawPath": path, "requestContext": {"http": {"method": method}}}, None)

        page = get("/robot")
        assert page["statusCode"] == 200 and page["headers"]["Content-Type"] == "text/html"
        assert base64.b64decode(page["body"]).startswith(b"<!doctype html") and get("/robot/")["body"] == page["body"]
        english = get("/robot/index.en.html")
        assert english["statusCode"] == 200 and b'lang="en"' in base64.b64decode(english["body"])
        served = get(DIRECTORY_PATH)
        assert served["headers"]["Content-Type"] == MEDIA_TYPE and served["headers"]["Cache-Control"] == "max-age=86400"
        body = base64.b64decode(served["body"])
        check = verify_directory(url="https://aube.news" + DIRECTORY_PATH, headers=served["headers"], body=body,
                                 now=time.time())
        assert check.valid, check.detail
        assert get("/nothing-here")["statusCode"] == 404 and get("/robot/../secret")["statusCode"] == 404
        assert get("/robot", "POST")["statusCode"] == 405 and get("/robot", "HEAD")["body"] == ""


# --- issue 20: the stack in production ---------------------------------------------------------

def test_the_scheduler_reserves_nothing_and_is_never_retried(template: dict[str, Any]) -> None:
    # two ticks at once are kept apart by the tick record's conditional put
    # (tests/integration/test_scheduler_ticks.py), not by a reserved concurrency of 1
    props = template["Resources"]["SchedulerFunction"]["Properties"]
    assert "ReservedConcurrentExecutions" not in props
    # a failed or timed-out tick leaves its pass's cursor in the table: the next minute's goes on
    assert props["EventInvokeConfig"] == {"MaximumRetryAttempts": 0, "MaximumEventAgeInSeconds": 60}


def test_the_fetcher_may_feed_its_own_queue_and_an_alarm_says_if_lambda_drops_it(template: dict[str, Any]) -> None:
    assert template["Resources"]["FetcherFunction"]["Properties"]["RecursiveLoop"] == "Allow"
    assert "RecursiveLoopAlarm" in template["Resources"]


def _actions(template: dict[str, Any], function: str) -> set[str]:
    out: set[str] = set()
    for lid, st in _allow_statements(template):
        if lid == function:
            out |= set([st["Action"]] if isinstance(st["Action"], str) else st["Action"])
    for p in _policies(template["Resources"][function]["Properties"]):
        if isinstance(p, dict) and not ("Statement" in p or "PolicyDocument" in p):
            out |= {f"template:{name}" for name in p}
    return out


def test_iam_is_narrowed_no_scan_or_delete_for_the_scheduler_no_lifecycle_for_the_fetcher(
        template: dict[str, Any]) -> None:
    scheduler, fetcher = _actions(template, "SchedulerFunction"), _actions(template, "FetcherFunction")
    assert scheduler == {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:BatchGetItem",
                         "sqs:SendMessage"}
    assert {a for a in fetcher if a.startswith("s3:")} == {"s3:GetObject", "s3:PutObject", "s3:ListBucket"}
    assert not {a for a in scheduler | fetcher if a.startswith("dynamodb:") and ("Scan" in a or "Delete" in a)}
    assert "template:S3CrudPolicy" not in fetcher and "template:DynamoDBCrudPolicy" not in fetcher | scheduler


def test_the_info_page_function_url_reserves_nothing(template: dict[str, Any]) -> None:
    props = template["Resources"]["InfoPageFunction"]["Properties"]
    assert props["FunctionUrlConfig"]["AuthType"] == "NONE" and "ReservedConcurrentExecutions" not in props


def test_aube_11_the_fetchers_mapping_runs_side_by_side_without_a_throttle(template: dict[str, Any]) -> None:
    # The event source mapping's MaximumConcurrency (at least 2: it cannot be 1, so it cannot be
    # AUBE-11's one at a time): it never invokes past it, so a normal round throttles nothing.
    work = template["Resources"]["FetcherFunction"]["Properties"]["Events"]["Work"]["Properties"]
    assert work["ScalingConfig"] == {"MaximumConcurrency": {"Ref": "FetcherMaximumConcurrency"}}
    spec = template["Parameters"]["FetcherMaximumConcurrency"]
    assert (spec["Default"], spec["MinValue"], spec["MaxValue"]) == (5, 2, 1000)
    alarm = template["Resources"]["FetcherThrottlesAlarm"]["Properties"]
    assert alarm["MetricName"] == "Throttles" and "FetcherMaximumConcurrency" in alarm["AlarmDescription"]


def test_xray_sampling_is_a_parameter_with_a_low_default(template: dict[str, Any]) -> None:
    rate = template["Parameters"]["XRaySamplingRate"]
    assert (rate["Default"], rate["MinValue"], rate["MaxValue"]) == (0.01, 0, 1)
    glob = template["Globals"]["Function"]
    assert glob["Tracing"] == {"Fn::If": ["TracingOn", "Active", "PassThrough"]}
    assert glob["Environment"]["Variables"]["POWERTOOLS_TRACE_DISABLED"] == {"Fn::If": ["TracingOn", "false", "true"]}
    rule = template["Resources"]["TracingSamplingRule"]
    assert rule["Condition"] == "TracingOn"
    assert rule["Properties"]["SamplingRule"]["FixedRate"] == {"Ref": "XRaySamplingRate"}
    assert rule["Properties"]["SamplingRule"]["ServiceName"] == {"Fn::Sub": "${AWS::StackName}-*"}


def test_nothing_put_on_the_results_bus_is_dropped_webhook_or_not(template: dict[str, Any]) -> None:
    # GIVEN a stack without a webhook (ResultsWebhookUrl empty, its default)
    res = template["Resources"]
    assert template["Parameters"]["ResultsWebhookUrl"]["Default"] == ""
    # THEN the bus has an archive, kept for ResultsRetentionDays, of every result of the bot, on no condition
    archive = res["ResultsArchive"]
    assert archive["Type"] == "AWS::Events::Archive" and "Condition" not in archive
    assert archive["Properties"]["SourceArn"] == {"Fn::GetAtt": ["ResultsBus", "Arn"]}
    assert archive["Properties"]["RetentionDays"] == {"Ref": "ResultsRetentionDays"}
    assert archive["Properties"]["EventPattern"] == {"source": [{"Fn::Sub": "heed.${BotName}"}]}
    # AND a rule keeps every envelope in the results log group (heed events --stack), which the
    # group's resource policy lets EventBridge write
    rule = res["ResultsToLogsRule"]
    assert "Condition" not in rule and rule["Properties"]["EventBusName"] == {"Ref": "ResultsBus"}
    assert rule["Properties"]["Targets"][0]["Arn"] == {"Fn::GetAtt": ["ResultsLogGroup", "Arn"]}
    assert "events.amazonaws.com" in res["ResultsLogGroupPolicy"]["Properties"]["PolicyDocument"]["Fn::Sub"]
    assert template["Outputs"]["ResultsLogGroupName"]["Value"] == {"Ref": "ResultsLogGroup"}
    # AND with a webhook, its rule, FIFO queue (one group), deliverer and dead letters come on that condition
    for lid in ("DeliveryQueue", "DeliveryDeadLetterQueue", "DeliveryQueuePolicy", "ResultsToWebhookRule",
                "DelivererFunction", "DeliveryDeadLetterAlarm"):
        assert res[lid]["Condition"] == "HasResultsWebhook", lid
    target = res["ResultsToWebhookRule"]["Properties"]["Targets"][0]
    assert target["SqsParameters"] == {"MessageGroupId": "results"}
    assert res["DeliveryQueue"]["Properties"]["ContentBasedDeduplication"] is True
    assert template["Rules"]["WebhookNeedsSecret"]["Assertions"][0]["Assert"] == {
        "Fn::Not": [{"Fn::Equals": [{"Ref": "ResultsWebhookSecretArn"}, ""]}]}

"""The desk in the stack (issue 37): a `Desk` parameter that samconfig sets from the profile, and
with it one arm64 function (the Globals' runtime and layers) at a capped function URL, behind the
info page's CloudFront at /desk* (nothing cached, the viewer's address passed on, an origin header
only CloudFront adds), its own log group, and a role of exactly what it does: its records and the
operator's changes in the table by key, a proof file's read on the work queue, the bucket's
versions of a host's texts, Logs Insights on the fetcher's log group, the alarm topic and its key."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from heed_core.profile import BUILTIN_BOTS, load_profile

from heed.local.resources import load_template
from heed.samconfig import deploy_env

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load_template(ROOT / "template.yaml")


def test_the_desk_is_a_parameter_and_nothing_of_it_exists_without_it(template: dict[str, Any]) -> None:
    assert template["Parameters"]["Desk"]["AllowedValues"] == ["true", "false"]
    assert template["Parameters"]["Desk"]["Default"] == "false"
    conditions = template["Conditions"]
    assert conditions["DeskOn"] == {"Fn::Equals": [{"Ref": "Desk"}, "true"]}
    assert conditions["DeskBehindCloudFront"] == {"Fn::And": [{"Condition": "DeskOn"},
                                                              {"Condition": "PublishViaCloudFront"}]}
    for lid in ("DeskFunction", "DeskLogGroup"):
        assert template["Resources"][lid]["Condition"] == "DeskOn", lid
    assert template["Outputs"]["DeskUrl"]["Condition"] == "DeskOn"


def test_one_arm64_function_built_from_the_heed_package_reserving_no_concurrency(template: dict[str, Any]) -> None:
    fn = template["Resources"]["DeskFunction"]
    props = fn["Properties"]
    assert props["CodeUri"] == "functions/desk/" and props["Handler"] == "app.handler"
    assert "Runtime" not in props and "Architectures" not in props  # the Globals': python3.13, arm64
    # no reservation (a new account's quota: Lambda keeps 100 unreserved); a flood meets the desk's
    # rate limits per client and per host (heed_core.desk.limits)
    assert "ReservedConcurrentExecutions" not in props and props["FunctionUrlConfig"] == {"AuthType": "NONE"}
    assert props["LoggingConfig"] == {"LogGroup": {"Ref": "DeskLogGroup"}}
    assert fn["Metadata"] == {"BuildMethod": "makefile", "BuildProperties": {"BuildInSource": True}}
    makefile = (ROOT / "functions/desk/Makefile").read_text(encoding="utf-8")
    assert "build-DeskFunction:" in makefile and "--invalidation-mode unchecked-hash" in makefile


def _statements(template: dict[str, Any]) -> list[dict[str, Any]]:
    return [st for policy in template["Resources"]["DeskFunction"]["Properties"]["Policies"]
            for st in policy["Statement"]]


def test_its_role_is_what_it_does_and_no_more(template: dict[str, Any]) -> None:
    granted = {}
    for st in _statements(template):
        assert st["Effect"] == "Allow"
        actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
        for action in actions:
            granted[action] = st["Resource"]
    assert set(granted) == {
        "dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem",
        "dynamodb:BatchWriteItem", "dynamodb:Query", "sqs:SendMessage", "s3:ListBucketVersions",
        "s3:DeleteObjectVersion", "logs:StartQuery", "logs:GetQueryResults", "logs:StopQuery", "sns:Publish",
        "kms:GenerateDataKey", "kms:Decrypt"}
    assert "dynamodb:Scan" not in granted and not any(a.startswith("s3:Put") for a in granted)
    assert granted["dynamodb:Query"] == {"Fn::GetAtt": ["StateTable", "Arn"]}
    assert granted["sqs:SendMessage"] == {"Fn::GetAtt": ["WorkQueue", "Arn"]}
    assert granted["sns:Publish"] == {"Ref": "AlarmTopic"}
    assert granted["kms:Decrypt"] == {"Fn::GetAtt": ["AlarmTopicKey", "Arn"]}
    assert "FetcherLogGroup" in str(granted["logs:StartQuery"])
    # the two Logs Insights calls that name no resource, and nothing else on "*"
    assert sorted(a for a, r in granted.items() if r == "*") == ["logs:GetQueryResults", "logs:StopQuery"]


def test_cloudfront_sends_desk_to_the_function_uncached_with_the_viewers_address(template: dict[str, Any]) -> None:
    config = template["Resources"]["InfoPageDistribution"]["Properties"]["DistributionConfig"]
    condition, origin, _ = config["Origins"][1]["Fn::If"]
    assert condition == "DeskBehindCloudFront"
    assert origin["Id"] == "desk" and origin["CustomOriginConfig"]["OriginProtocolPolicy"] == "https-only"
    [header] = origin["OriginCustomHeaders"]
    secret = template["Resources"]["DeskFunction"]["Properties"]["Environment"]["Variables"]["HEED_DESK_ORIGIN_SECRET"]
    assert header["HeaderName"] == "X-Heed-Desk-Origin" and header["HeaderValue"] == secret
    condition, [behaviour], _ = config["CacheBehaviors"]["Fn::If"]
    assert condition == "DeskBehindCloudFront"
    assert (behaviour["PathPattern"], behaviour["TargetOriginId"]) == ("/desk*", "desk")
    assert "POST" in behaviour["AllowedMethods"] and behaviour["ViewerProtocolPolicy"] == "redirect-to-https"
    assert behaviour["CachePolicyId"] == "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"  # CachingDisabled
    assert behaviour["OriginRequestPolicyId"] == "b689b0a8-53d0-40ab-baf2-68738e2966ac"  # AllViewerExceptHostHeader
    assert "FunctionAssociations" not in behaviour  # the page's index rewrite is not the desk's


def test_samconfig_sets_the_desk_from_the_profile_and_serves_it_with_the_page(tmp_path: Path) -> None:
    for bot in BUILTIN_BOTS:
        assert "Desk=" not in deploy_env(load_profile(bot)).parameter_overrides(), bot
    path = tmp_path / "withdesk.yaml"
    path.write_text(yaml.safe_dump({"extends": "aubebot", "desk": True}), encoding="utf-8")
    overrides = deploy_env(load_profile(str(path))).parameter_overrides()
    assert "Desk=true" in overrides.split() and "PublishInfoPage=cloudfront" in overrides.split()

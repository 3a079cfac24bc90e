"""template.yaml's Web Bot Auth block: the fetcher may read exactly the one signing key the stack
names (GetSecretValue or GetParameter on that secret or parameter), and learns where it is from
one variable; a bot that does not sign gets neither."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from heed.local.resources import function_properties, load_template

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load_template(ROOT / "template.yaml")


def _conditional(template: dict[str, Any], condition: str) -> list[dict[str, Any]]:
    return [p["Fn::If"][1] for p in template["Resources"]["FetcherFunction"]["Properties"]["Policies"]
            if isinstance(p, dict) and "Fn::If" in p and p["Fn::If"][0] == condition]


def test_the_parameters_default_to_a_bot_that_does_not_sign(template: dict[str, Any]) -> None:
    params = template["Parameters"]
    assert params["WebBotAuthKeyService"]["Default"] == "" and params["WebBotAuthKeyName"]["Default"] == ""
    assert sorted(params["WebBotAuthKeyService"]["AllowedValues"]) == ["", "secretsmanager", "ssm"]


def test_conditions_need_both_the_service_and_the_name(template: dict[str, Any]) -> None:
    c = template["Conditions"]
    assert c["HasWebBotAuthKeyName"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "WebBotAuthKeyName"}, ""]}]}
    for name, service in (("SignsWithSecretsManager", "secretsmanager"), ("SignsWithSsm", "ssm")):
        assert c[name] == {"Fn::And": [{"Fn::Equals": [{"Ref": "WebBotAuthKeyService"}, service]},
                                       {"Condition": "HasWebBotAuthKeyName"}]}
    assert c["SignsRequests"] == {"Fn::Or": [{"Condition": "SignsWithSecretsManager"}, {"Condition": "SignsWithSsm"}]}


@pytest.mark.parametrize(("condition", "action", "resource"), [
    ("SignsWithSecretsManager", "secretsmanager:GetSecretValue",
     "arn:${AWS::Partition}:secretsmanager:${AWS::Region}:${AWS::AccountId}:secret:${WebBotAuthKeyName}-??????"),
    ("SignsWithSsm", "ssm:GetParameter",
     "arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter${WebBotAuthKeyName}"),
])
def test_the_fetcher_reads_only_the_named_key(template: dict[str, Any], condition: str, action: str,
                                              resource: str) -> None:
    (policy,) = _conditional(template, condition)
    assert policy == {"Statement": [{"Effect": "Allow", "Action": action, "Resource": {"Fn::Sub": resource}}]}


def test_no_other_function_or_statement_touches_secrets(template: dict[str, Any]) -> None:
    guarded = _conditional(template, "SignsWithSecretsManager") + _conditional(template, "SignsWithSsm")
    # The webhook's deliverer reads its one signing secret, the ARN the stack names, and nothing else.
    (deliverer,) = [st for p in template["Resources"]["DelivererFunction"]["Properties"]["Policies"]
                    for st in p["Statement"] if "secretsmanager:GetSecretValue" in json.dumps(st)]
    assert deliverer == {"Effect": "Allow", "Action": "secretsmanager:GetSecretValue",
                         "Resource": {"Ref": "ResultsWebhookSecretArn"}}
    assert template["Resources"]["DelivererFunction"]["Condition"] == "HasResultsWebhook"
    for logical_id, resource in template["Resources"].items():
        if logical_id == "DelivererFunction":
            continue
        policies = resource.get("Properties", {}).get("Policies", [])
        rest = [p for p in policies if not (isinstance(p, dict) and "Fn::If" in p and p["Fn::If"][1] in guarded)]
        text = json.dumps(rest)
        assert "secretsmanager:" not in text and "ssm:" not in text, logical_id


def test_the_fetcher_is_told_where_the_key_is_only_when_it_signs(template: dict[str, Any]) -> None:
    env = function_properties(template, "FetcherFunction")["Environment"]["Variables"]
    assert env["HEED_WEB_BOT_AUTH_KEY"] == {"Fn::If": [
        "SignsRequests", {"Fn::Sub": "${WebBotAuthKeyService}:${WebBotAuthKeyName}"}, {"Ref": "AWS::NoValue"}]}
    # and the stack's other variables are still there (SAM merges the function's with Globals)
    assert {"HEED_BOT", "HEED_TABLE", "HEED_QUEUE_URL", "HEED_BUS_NAME", "HEED_BUCKET"} <= set(env)
    scheduler = function_properties(template, "SchedulerFunction")["Environment"]["Variables"]
    assert "HEED_WEB_BOT_AUTH_KEY" not in scheduler  # the scheduler sends no request


def test_the_runtime_reads_the_variable_the_template_sets() -> None:
    from heed_aws import runtime

    assert runtime.KEY_ENV == "HEED_WEB_BOT_AUTH_KEY"

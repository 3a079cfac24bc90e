"""Is every AWS call a function makes allowed by its role? The roles as CloudFormation gets them
(samtranslator expands SAM's policy templates and the event sources' policies), resolved against
a LocalRun's moto resources, and the calls as botocore makes them (its event hooks).

The evaluation is IAM's for identity policies without conditions: an action is allowed when an
Allow statement names it (wildcards as IAM reads them) on a resource pattern that matches the
call's resource ARN, and no Deny does. Condition blocks are read as met (the template has none on
the functions' roles), and managed policies (AWSLambdaBasicExecutionRole and the like) as logs
and X-Ray only."""
from __future__ import annotations

import copy
import fnmatch
import functools
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from heed.local.resources import load_template

ROOT = Path(__file__).resolve().parents[2]
REGION = "eu-west-1"
ACCOUNT = "123456789012"

# The managed policies SAM attaches, by name, with what they grant (logs, traces, the VPC's ENIs).
_MANAGED = {
    "AWSLambdaBasicExecutionRole": ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
    "AWSXrayWriteOnlyAccess": ["xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules",
                               "xray:GetSamplingTargets", "xray:GetSamplingStatisticSummaries"],
    "AWSLambdaVPCAccessExecutionRole": ["ec2:CreateNetworkInterface", "ec2:DescribeNetworkInterfaces",
                                        "ec2:DeleteNetworkInterface", "logs:CreateLogGroup",
                                        "logs:CreateLogStream", "logs:PutLogEvents"],
    "AWSLambdaSQSQueueExecutionRole": ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes",
                                       "logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
}

# An API operation whose IAM action has another name.
_ACTION = {
    ("sqs", "SendMessageBatch"): "sqs:SendMessage", ("sqs", "DeleteMessageBatch"): "sqs:DeleteMessage",
    ("sqs", "ChangeMessageVisibilityBatch"): "sqs:ChangeMessageVisibility",
    ("s3", "HeadObject"): "s3:GetObject", ("s3", "ListObjectsV2"): "s3:ListBucket",
    ("s3", "ListObjects"): "s3:ListBucket", ("s3", "ListObjectVersions"): "s3:ListBucketVersions",
    ("bedrock-runtime", "Converse"): "bedrock:InvokeModel",
}
_PREFIX = {"bedrock-runtime": "bedrock"}


class _ManagedPolicies:
    """samtranslator's managed policy map, offline (no IAM call)."""

    def load(self) -> dict[str, str]:
        return {name: f"arn:aws:iam::aws:policy/service-role/{name}" for name in _MANAGED}


@functools.lru_cache(maxsize=16)
def translated(parameters: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """template.yaml as CloudFormation receives it, for these parameter values."""
    import boto3
    from samtranslator.parser.parser import Parser
    from samtranslator.translator.translator import Translator

    template = load_template(ROOT / "template.yaml")
    for res in template["Resources"].values():  # as `sam package` leaves them: code in S3
        for key in ("CodeUri", "ContentUri"):
            if isinstance(res.get("Properties", {}).get(key), str):
                res["Properties"][key] = f"s3://heed-artifacts/{res['Properties'][key].strip('/')}.zip"
    translator = Translator(None, Parser(), boto_session=boto3.session.Session(region_name=REGION))
    return translator.translate(copy.deepcopy(template), dict(parameters),  # type: ignore[no-any-return]
                                get_managed_policy_map=_ManagedPolicies().load)


@dataclass(frozen=True)
class Names:
    """The stack's resources as a LocalRun made them (moto)."""

    table: str
    queue_url: str
    dlq_url: str
    bus: str
    bucket: str
    delivery_url: str = ""  # the webhook's queues, where the stack has ResultsWebhookUrl
    delivery_dlq_url: str = ""
    alarm_topic: str = ""  # the alarm topic, where a test made one (the desk tells the operator there)

    @staticmethod
    def queue_arn(url: str) -> str:
        return f"arn:aws:sqs:{REGION}:{ACCOUNT}:{urlsplit(url).path.rsplit('/', 1)[1]}"

    def attributes(self) -> dict[str, dict[str, str]]:
        q, d = self.queue_arn(self.queue_url), self.queue_arn(self.dlq_url)
        return {
            "StateTable": {"Ref": self.table, "Arn": f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{self.table}"},
            "WorkQueue": {"Ref": self.queue_url, "Arn": q, "QueueName": q.rsplit(":", 1)[1]},
            "WorkDeadLetterQueue": {"Ref": self.dlq_url, "Arn": d, "QueueName": d.rsplit(":", 1)[1]},
            "ResultsBus": {"Ref": self.bus, "Arn": f"arn:aws:events:{REGION}:{ACCOUNT}:event-bus/{self.bus}",
                           "Name": self.bus},
            "ResultsBucket": {"Ref": self.bucket, "Arn": f"arn:aws:s3:::{self.bucket}"},
            **{lid: {"Ref": url, "Arn": self.queue_arn(url), "QueueName": self.queue_arn(url).rsplit(":", 1)[1]}
               for lid, url in (("DeliveryQueue", self.delivery_url),
                                ("DeliveryDeadLetterQueue", self.delivery_dlq_url)) if url},
            **({"AlarmTopic": {"Ref": self.alarm_topic}} if self.alarm_topic else {}),
            "FetcherLogGroup": {"Ref": "/heed/heed-test/fetcher"},
        }


class _Resolver:
    """The few intrinsics a role's policy uses, resolved to strings (unknown ones to a wildcard-free marker)."""

    def __init__(self, template: Mapping[str, Any], params: Mapping[str, str], names: Names) -> None:
        self.template, self.params = template, dict(params)
        self.attrs = names.attributes()
        self.pseudo = {"AWS::Region": REGION, "AWS::AccountId": ACCOUNT, "AWS::Partition": "aws",
                       "AWS::StackName": "heed-test", "AWS::URLSuffix": "amazonaws.com"}

    def condition(self, name: str) -> bool:
        return bool(self.value(self.template["Conditions"][name]))

    def value(self, v: Any) -> Any:
        if isinstance(v, list):
            return [x for x in (self.value(i) for i in v) if x is not _NO]
        if not isinstance(v, dict):
            return v
        if len(v) == 1:
            (k, a), = v.items()
            if k == "Ref":
                if a == "AWS::NoValue":
                    return _NO
                for known in (self.pseudo, self.params):
                    if a in known:
                        return known[a]
                return self.attrs.get(a, {}).get("Ref", f"<{a}>")
            if k == "Fn::GetAtt":
                lid, attr = a if isinstance(a, list) else a.split(".", 1)
                return self.attrs.get(lid, {}).get(attr, f"<{lid}.{attr}>")
            if k == "Fn::Sub":
                text, variables = (a, {}) if isinstance(a, str) else (a[0], self.value(a[1]))
                import re

                def one(m: re.Match[str]) -> str:
                    name = m.group(1)
                    if name in variables:
                        return str(variables[name])
                    if "." in name and not name.startswith("AWS::"):
                        return str(self.value({"Fn::GetAtt": name.split(".", 1)}))
                    return str(self.value({"Ref": name}))

                return re.sub(r"\$\{([^}!][^}]*)\}", one, text)
            if k == "Fn::If":
                return self.value(a[1] if self.condition(a[0]) else a[2])
            if k == "Fn::Join":
                return a[0].join(str(x) for x in self.value(a[1]))
            if k == "Fn::Equals":
                return str(self.value(a[0])) == str(self.value(a[1]))
            if k == "Fn::Not":
                return not self.value(a[0])
            if k == "Fn::And":
                return all(self.value(x) for x in a)
            if k == "Fn::Or":
                return any(self.value(x) for x in a)
            if k == "Condition":
                return self.condition(a)
        return {k: x for k, x in ((k, self.value(x)) for k, x in v.items()) if x is not _NO}


_NO = object()


@dataclass
class Roles:
    """Each function's role, its statements resolved: (effect, actions, resources)."""

    statements: dict[str, list[tuple[str, list[str], list[str]]]] = field(default_factory=dict)

    @classmethod
    def of(cls, parameters: Mapping[str, str], names: Names) -> Roles:
        cfn = translated(tuple(sorted(parameters.items())))
        resolver = _Resolver(cfn, parameters, names)
        out = cls()
        for lid, res in cfn["Resources"].items():
            if res["Type"] != "AWS::Lambda::Function":
                continue
            if "Condition" in res and not resolver.condition(res["Condition"]):
                continue
            role_id = res["Properties"]["Role"]["Fn::GetAtt"][0]
            role = resolver.value(cfn["Resources"][role_id]["Properties"])
            stmts: list[tuple[str, list[str], list[str]]] = []
            for policy in role.get("Policies", []):
                for st in policy["PolicyDocument"]["Statement"]:
                    actions = st.get("Action", [])
                    resources = st.get("Resource", ["*"])
                    stmts.append((st["Effect"], [actions] if isinstance(actions, str) else list(actions),
                                  [resources] if isinstance(resources, str) else [str(r) for r in resources]))
            for arn in role.get("ManagedPolicyArns", []):
                stmts.append(("Allow", list(_MANAGED.get(str(arn).rsplit("/", 1)[-1], [])), ["*"]))
            out.statements[lid] = stmts
        return out

    def allows(self, function: str, action: str, resource: str) -> bool:
        def hit(patterns: list[str], value: str, *, fold: bool) -> bool:
            v = value.lower() if fold else value
            return any(fnmatch.fnmatchcase(v, p.lower() if fold else p) for p in patterns)

        stmts = self.statements.get(function, [])
        matching = [e for e, acts, ress in stmts if hit(acts, action, fold=True) and hit(ress, resource, fold=False)]
        return "Allow" in matching and "Deny" not in matching


def call_resources(service: str, op: str, params: Mapping[str, Any], names: Names) -> list[str]:
    """The ARNs one API call acts on."""
    table_arn = names.attributes()["StateTable"]["Arn"]
    if service == "dynamodb":
        tables = list(params.get("RequestItems", {})) or [params.get("TableName", "")]
        return [table_arn.rsplit("/", 1)[0] + "/" + t for t in tables]
    if service == "sqs":
        return [Names.queue_arn(params["QueueUrl"])] if params.get("QueueUrl") else ["*"]
    if service == "events":
        buses = {e.get("EventBusName", "default") for e in params.get("Entries", [])} or {"default"}
        return [b if b.startswith("arn:") else f"arn:aws:events:{REGION}:{ACCOUNT}:event-bus/{b}" for b in buses]
    if service == "s3":
        bucket = params.get("Bucket", "")
        return [f"arn:aws:s3:::{bucket}/{params['Key']}"] if "Key" in params else [f"arn:aws:s3:::{bucket}"]
    if service == "secretsmanager":
        sid = str(params.get("SecretId", ""))
        return [sid if sid.startswith("arn:") else f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:{sid}-AbCdEf"]
    if service == "ssm":
        return [f"arn:aws:ssm:{REGION}:{ACCOUNT}:parameter{params.get('Name', '')}"]
    if service == "bedrock-runtime":
        return [f"arn:aws:bedrock:{REGION}::foundation-model/{params.get('modelId', '')}"]
    if service == "sns":
        return [str(params.get("TopicArn", "*"))]
    if service == "logs" and params.get("logGroupName"):
        return [f"arn:aws:logs:{REGION}:{ACCOUNT}:log-group:{params['logGroupName']}:*"]
    return ["*"]


class CallRecorder:
    """botocore hooks on a session: every call, the function it was made for (``acting()``)."""

    def __init__(self, acting: Callable[[], str | None]) -> None:
        self.acting = acting
        self.calls: list[tuple[str, str, str, dict[str, Any]]] = []  # (function, service, op, params)
        self._lock = threading.Lock()

    def attach(self, session: Any) -> None:
        session.events.register("provide-client-params", self._record)

    def _record(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        function = self.acting()
        if function is not None:
            with self._lock:
                self.calls.append((function, model.service_model.service_name, model.name, dict(params)))

    def denied(self, roles: Roles, names: Names) -> list[str]:
        """Every recorded call the function's role does not allow, as one line each."""
        out = []
        for function, service, op, params in self.calls:
            action = _ACTION.get((service, op)) or f"{_PREFIX.get(service, service)}:{op}"
            if service == "s3" and op in ("DeleteObject", "GetObject") and params.get("VersionId"):
                action += "Version"  # IAM's action for one version of an object
            for resource in call_resources(service, op, params, names):
                if not roles.allows(function, action, resource):
                    out.append(f"{function}: {action} on {resource}")
        return sorted(set(out))


def stack_parameters(profile: Any) -> dict[str, str]:
    """The parameter values samconfig.toml deploys this profile's stack with (the defaults where
    the profile cannot be deployed as it is, e.g. a local key file instead of a secret)."""
    from heed_core.profile import ProfileError

    from heed.samconfig import deploy_env

    template = load_template(ROOT / "template.yaml")
    params = {k: str(v["Default"]) for k, v in template["Parameters"].items() if "Default" in v}
    params["BotName"] = "aubebot"
    try:
        overrides = deploy_env(profile).parameter_overrides()
    except ProfileError:
        return params
    for part in overrides.split():
        key, _, value = part.partition("=")
        params[key] = value
    if params["BotName"] not in template["Parameters"]["BotName"].get("AllowedValues", [params["BotName"]]):
        params["BotName"] = "aubebot"  # a profile of its own: its stack is any bot's (the roles are the same)
    return params


def dumps(lines: list[str]) -> str:
    return json.dumps(lines, indent=1)

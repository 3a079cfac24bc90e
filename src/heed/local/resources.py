"""Local resources are built from template.yaml's own properties, so moto tests cannot drift from the stack."""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import yaml
from botocore.exceptions import BotoCoreError, ClientError

from heed_core.errors import ConfigError, HeedError


class TemplateError(ConfigError, ValueError):
    """template.yaml lacks something the local stack needs, or uses an intrinsic we cannot resolve."""

    code = "template"


class StackResourceError(HeedError, RuntimeError):
    """A resource could not be created; the message names the logical id."""

    code = "stack_resource"


@dataclass(frozen=True)
class StackResources:
    table_name: str
    queue_url: str
    queue_arn: str
    dlq_url: str
    bus_name: str
    bucket: str
    fetcher_timeout_s: int
    visibility_timeout_s: int
    max_receive_count: int
    batch_size: int


# --- loading: CloudFormation short tags become their long JSON form ------------------------

class _CfnLoader(yaml.SafeLoader):
    pass


def _construct_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    if suffix in ("Ref", "Condition"):
        return {suffix: value}
    if suffix == "GetAtt" and isinstance(value, str):
        value = value.split(".", 1)
    return {f"Fn::{suffix}": value}


_CfnLoader.add_multi_constructor("!", _construct_tag)


def load_template(path: Path) -> dict[str, Any]:
    """template.yaml as plain data; `!Ref X` reads as {"Ref": "X"}, `!Sub s` as {"Fn::Sub": s}."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise TemplateError(f"{path}: cannot load ({type(exc).__name__})") from exc
    return parse_template(text, str(path))


def parse_template(text: str, where: str = "template") -> dict[str, Any]:
    """A template's text (YAML with CloudFormation's short tags, or JSON) as plain data, as
    ``load_template`` reads a file."""
    try:
        data = yaml.load(text, Loader=_CfnLoader)  # noqa: S506 - safe subclass
    except yaml.YAMLError as exc:
        raise TemplateError(f"{where}: cannot load ({type(exc).__name__})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("Resources"), dict):
        raise TemplateError(f"{where}: no Resources mapping")
    return data


def _is_intrinsic(value: Any) -> bool:
    if not (isinstance(value, dict) and len(value) == 1):
        return False
    key = str(next(iter(value)))
    return key in ("Ref", "Condition") or key.startswith("Fn::")


def _merge_global(glob: Any, local: Any) -> Any:
    # SAM's rules: lists concatenate, mappings merge key by key, anything else (intrinsics too): local wins.
    if isinstance(glob, list) and isinstance(local, list):
        return glob + local
    if isinstance(glob, dict) and isinstance(local, dict) and not (_is_intrinsic(glob) or _is_intrinsic(local)):
        return {**glob, **{k: _merge_global(glob[k], v) if k in glob else v for k, v in local.items()}}
    return local


def function_properties(template: Mapping[str, Any], logical_id: str) -> dict[str, Any]:
    """A function's properties with Globals.Function merged in as SAM does it."""
    merged = _merge_global(dict(template.get("Globals", {}).get("Function", {})),
                           dict(template["Resources"][logical_id].get("Properties", {})))
    return dict(merged)


# --- resolving the few intrinsics the resources use ------------------------------------------

_NO_VALUE = object()
_SUB_VAR = re.compile(r"\$\{([^}!][^}]*)\}")


class _Stack:
    def __init__(self, template: Mapping[str, Any], params: Mapping[str, str], prefix: str,
                 region: str, account: str, session: boto3.session.Session) -> None:
        self.template = template
        self.params = dict(params)
        self.pseudo = {"AWS::StackName": prefix, "AWS::Region": region, "AWS::AccountId": account,
                       "AWS::Partition": "aws", "AWS::URLSuffix": "amazonaws.com"}
        self.prefix = prefix
        self.region = region
        self.account = account
        self.session = session
        self.created: dict[str, dict[str, str]] = {}  # logical id -> {"Ref": ..., "Arn": ...}
        self._creating: set[str] = set()

    def client(self, service: str) -> Any:
        return self.session.client(service, region_name=self.region)

    # -- intrinsics
    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            return [v for v in (self.resolve(x) for x in value) if v is not _NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            (key, arg), = value.items()
            if key == "Ref":
                return self._ref(arg)
            if key == "Fn::GetAtt":
                return self.attr(*arg)
            if key == "Fn::Sub":
                return self._sub(arg)
            if key.startswith("Fn::"):  # the created resources need no more than these three
                raise TemplateError(f"{key} is not resolved locally")
        out = {}
        for key, item in value.items():
            resolved = self.resolve(item)
            if resolved is not _NO_VALUE:
                out[key] = resolved
        return out

    def _ref(self, name: str) -> Any:
        if name == "AWS::NoValue":
            return _NO_VALUE
        if name in self.pseudo:
            return self.pseudo[name]
        if name in self.params:
            return self.params[name]
        return self.attr(name, "Ref")

    def attr(self, logical_id: str, attribute: str) -> str:
        """An attribute of a resource ("Ref", "Arn", ...), creating the resource on first use."""
        if logical_id not in self.created:
            self.create(logical_id)
        attrs = self.created[logical_id]
        if attribute not in attrs:
            raise TemplateError(f"{logical_id}.{attribute} is not known locally")
        return attrs[attribute]

    def _sub(self, arg: Any) -> str:
        text, variables = (arg, {}) if isinstance(arg, str) else (arg[0], self.resolve(arg[1]))

        def one(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in variables:
                return str(variables[name])
            if "." in name and name.split(".", 1)[0] not in self.pseudo:
                return str(self.attr(*name.split(".", 1)))
            return str(self._ref(name))

        return _SUB_VAR.sub(one, text)

    # -- resources
    def default_name(self, logical_id: str) -> str:
        # StateTable -> heed-aubebot-state, WorkQueue -> heed-aubebot-work
        stem = re.sub(r"(Table|Queue|Bus|Bucket)$", "", logical_id) or logical_id
        return f"{self.prefix}-" + re.sub(r"(?<!^)(?=[A-Z])", "-", stem).lower()

    def create(self, logical_id: str) -> None:
        if logical_id in self._creating:
            raise TemplateError(f"{logical_id}: circular reference")
        resource = self.template["Resources"].get(logical_id)
        if resource is None:
            raise TemplateError(f"{logical_id}: no such resource or parameter")
        kind = resource.get("Type")
        makers = {"AWS::DynamoDB::Table": _make_table, "AWS::SQS::Queue": _make_queue,
                  "AWS::Events::EventBus": _make_bus, "AWS::S3::Bucket": _make_bucket,
                  "AWS::Events::Rule": _make_rule, "AWS::Logs::LogGroup": _make_log_group}
        if kind not in makers:
            raise TemplateError(f"{logical_id}: {kind} is not created locally")
        self._creating.add(logical_id)
        try:
            props = self.resolve(resource.get("Properties", {}))
            self.created[logical_id] = makers[kind](self, logical_id, props)
        except (ClientError, BotoCoreError) as exc:
            raise StackResourceError(f"{logical_id} ({kind}): {type(exc).__name__}: {exc}") from exc
        finally:
            self._creating.discard(logical_id)


def _make_table(stack: _Stack, logical_id: str, p: Mapping[str, Any]) -> dict[str, str]:
    ddb = stack.client("dynamodb")
    name = p.get("TableName") or stack.default_name(logical_id)
    kwargs: dict[str, Any] = {"TableName": name, "KeySchema": p["KeySchema"],
                              "AttributeDefinitions": p["AttributeDefinitions"],
                              "BillingMode": p.get("BillingMode", "PROVISIONED")}
    if "ProvisionedThroughput" in p:
        kwargs["ProvisionedThroughput"] = p["ProvisionedThroughput"]
    sse = p.get("SSESpecification")
    if sse:
        kwargs["SSESpecification"] = {"Enabled": bool(sse.get("SSEEnabled"))}
    arn = ddb.create_table(**kwargs)["TableDescription"]["TableArn"]
    ttl = p.get("TimeToLiveSpecification")
    if ttl and ttl.get("Enabled"):
        ddb.update_time_to_live(TableName=name, TimeToLiveSpecification={
            "AttributeName": ttl["AttributeName"], "Enabled": True})
    pitr = p.get("PointInTimeRecoverySpecification") or {}
    if pitr.get("PointInTimeRecoveryEnabled"):
        ddb.update_continuous_backups(TableName=name, PointInTimeRecoverySpecification={
            "PointInTimeRecoveryEnabled": True})
    return {"Ref": name, "Arn": arn}


# CloudFormation property -> SQS attribute; the names are the same, the values become strings.
_QUEUE_ATTRIBUTES = ("FifoQueue", "ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit",
                     "VisibilityTimeout", "MessageRetentionPeriod", "DelaySeconds", "MaximumMessageSize",
                     "ReceiveMessageWaitTimeSeconds", "SqsManagedSseEnabled", "KmsMasterKeyId",
                     "KmsDataKeyReusePeriodSeconds", "RedrivePolicy")


def _attr_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def _make_queue(stack: _Stack, logical_id: str, p: Mapping[str, Any]) -> dict[str, str]:
    sqs = stack.client("sqs")
    fifo = bool(p.get("FifoQueue"))
    name = p.get("QueueName") or stack.default_name(logical_id) + (".fifo" if fifo else "")
    attributes = {key: _attr_text(p[key]) for key in _QUEUE_ATTRIBUTES if key in p}
    url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return {"Ref": url, "Arn": arn, "QueueName": name, "QueueUrl": url}


def _make_bus(stack: _Stack, logical_id: str, p: Mapping[str, Any]) -> dict[str, str]:
    name = p.get("Name") or stack.default_name(logical_id)
    arn = stack.client("events").create_event_bus(Name=name)["EventBusArn"]
    return {"Ref": name, "Arn": arn, "Name": name}


def _make_bucket(stack: _Stack, logical_id: str, p: Mapping[str, Any]) -> dict[str, str]:
    s3 = stack.client("s3")
    name = p.get("BucketName") or stack.default_name(logical_id)
    kwargs: dict[str, Any] = {"Bucket": name}
    if stack.region != "us-east-1":
        kwargs["CreateBucketConfiguration"] = {"LocationConstraint": stack.region}
    s3.create_bucket(**kwargs)
    if "VersioningConfiguration" in p:
        versioning = {"Status": p["VersioningConfiguration"]["Status"]}
        s3.put_bucket_versioning(Bucket=name, VersioningConfiguration=versioning)
    if "BucketEncryption" in p:
        # CloudFormation says ServerSideEncryptionByDefault where the API says Apply...
        rules = [{("ApplyServerSideEncryptionByDefault" if k == "ServerSideEncryptionByDefault" else k): v
                  for k, v in rule.items()} for rule in p["BucketEncryption"]["ServerSideEncryptionConfiguration"]]
        s3.put_bucket_encryption(Bucket=name, ServerSideEncryptionConfiguration={"Rules": rules})
    if "PublicAccessBlockConfiguration" in p:
        s3.put_public_access_block(Bucket=name, PublicAccessBlockConfiguration=p["PublicAccessBlockConfiguration"])
    return {"Ref": name, "Arn": f"arn:aws:s3:::{name}", "BucketName": name}


def _make_log_group(stack: _Stack, logical_id: str, p: Mapping[str, Any]) -> dict[str, str]:
    logs = stack.client("logs")
    name = p.get("LogGroupName") or f"/{stack.prefix}/{logical_id}"
    logs.create_log_group(logGroupName=name)
    if p.get("RetentionInDays"):
        logs.put_retention_policy(logGroupName=name, retentionInDays=int(p["RetentionInDays"]))
    return {"Ref": name, "Arn": f"arn:aws:logs:{stack.region}:{stack.account}:log-group:{name}"}


def _make_rule(stack: _Stack, logical_id: str, p: Mapping[str, Any]) -> dict[str, str]:
    events = stack.client("events")
    name = p.get("Name") or stack.default_name(logical_id)
    bus = p.get("EventBusName", "default")
    arn = events.put_rule(Name=name, EventBusName=bus, EventPattern=json.dumps(p["EventPattern"]),
                          State=p.get("State", "ENABLED"))["RuleArn"]
    targets = [{k: v for k, v in t.items() if k in ("Id", "Arn", "SqsParameters", "InputPath", "Input")}
               for t in p.get("Targets", [])]
    if targets:
        events.put_targets(Rule=name, EventBusName=bus, Targets=targets)
    return {"Ref": name, "Arn": arn}


# --- the stack the functions see ---------------------------------------------------------------

def _env_target(template: Mapping[str, Any], variable: str) -> str:
    """The logical id a global environment variable refers to (HEED_TABLE: !Ref StateTable)."""
    env = template.get("Globals", {}).get("Function", {}).get("Environment", {}).get("Variables", {})
    value = env.get(variable)
    if not (isinstance(value, dict) and isinstance(value.get("Ref"), str)):
        raise TemplateError(f"Globals.Function.Environment.Variables.{variable} must be a !Ref")
    return str(value["Ref"])


def _work_event(template: Mapping[str, Any]) -> tuple[str, str, Mapping[str, Any]]:
    """(function id, queue id, event properties) of the one SQS event source on the work queue
    (HEED_QUEUE_URL's): the fetcher's. (The webhook's deliverer has one of its own, on another queue.)"""
    work = _env_target(template, "HEED_QUEUE_URL")
    found = []
    for logical_id, resource in template["Resources"].items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        for event in (resource.get("Properties", {}).get("Events") or {}).values():
            if event.get("Type") == "SQS":
                queue = event["Properties"]["Queue"]
                queue_id = queue.get("Fn::GetAtt", [None])[0] if isinstance(queue, dict) else None
                if not isinstance(queue_id, str):
                    raise TemplateError(f"{logical_id}: SQS event Queue must be !GetAtt <queue>.Arn")
                if queue_id == work:
                    found.append((logical_id, queue_id, event["Properties"]))
    if len(found) != 1:
        raise TemplateError(f"expected exactly one SQS event source on {work}, found {len(found)}")
    return found[0]


def create_stack_resources(*, template_path: Path, bot: str, prefix: str,
                           session: boto3.session.Session | None = None,
                           region: str = "eu-west-1", parameters: Mapping[str, str] | None = None) -> StackResources:
    """Create the table, FIFO queue (+DLQ), bus and bucket of template.yaml, named from `prefix`
    (``parameters``: the stack's parameter overrides, as samconfig.toml sets them for the bot)."""
    template = load_template(template_path)
    session = session or boto3.session.Session()
    params = {name: str(spec["Default"]) for name, spec in template.get("Parameters", {}).items()
              if "Default" in spec}
    params.update(parameters or {})
    params.update(BotName=bot, EgressMode="none")  # no VPC locally: nothing network-side is created
    try:
        account = session.client("sts", region_name=region).get_caller_identity()["Account"]
    except (ClientError, BotoCoreError) as exc:
        raise StackResourceError(f"cannot tell the account ({type(exc).__name__})") from exc
    stack = _Stack(template, params, prefix, region, account, session)

    fetcher_id, queue_id, event = _work_event(template)
    if _env_target(template, "HEED_QUEUE_URL") != queue_id:
        raise TemplateError("HEED_QUEUE_URL and the fetcher's SQS event name different queues")
    queue_props = stack.resolve(template["Resources"][queue_id].get("Properties", {}))
    redrive = queue_props.get("RedrivePolicy") or {}
    dlq_target = template["Resources"][queue_id]["Properties"].get("RedrivePolicy", {}).get("deadLetterTargetArn")
    if not (isinstance(dlq_target, dict) and "Fn::GetAtt" in dlq_target):
        raise TemplateError(f"{queue_id}: RedrivePolicy.deadLetterTargetArn must be !GetAtt <dlq>.Arn")
    fetcher = function_properties(template, fetcher_id)
    return StackResources(
        table_name=stack.attr(_env_target(template, "HEED_TABLE"), "Ref"),
        queue_url=stack.attr(queue_id, "Ref"),
        queue_arn=stack.attr(queue_id, "Arn"),
        dlq_url=stack.attr(dlq_target["Fn::GetAtt"][0], "Ref"),
        bus_name=stack.attr(_env_target(template, "HEED_BUS_NAME"), "Ref"),
        bucket=stack.attr(_env_target(template, "HEED_BUCKET"), "Ref"),
        fetcher_timeout_s=int(stack.resolve(fetcher.get("Timeout", 3))),
        visibility_timeout_s=int(queue_props.get("VisibilityTimeout", 30)),
        max_receive_count=int(redrive.get("maxReceiveCount", 0)),
        batch_size=int(stack.resolve(event.get("BatchSize", 10))),
    )


@dataclass(frozen=True)
class WebhookResources:
    queue_url: str
    dlq_url: str
    rule: str


def create_results_store(res: StackResources, *, template_path: Path, bot: str, prefix: str,
                         session: boto3.session.Session, region: str = "eu-west-1") -> str:
    """The results bus's rule into the results log group (template.yaml's ResultsToLogsRule and
    ResultsLogGroup, which every stack has): the group's name."""
    stack = _results_stack(res, template_path, bot, prefix, session, region)
    stack.attr("ResultsToLogsRule", "Ref")
    return stack.attr("ResultsLogGroup", "Ref")


def _results_stack(res: StackResources, template_path: Path, bot: str, prefix: str,
                   session: boto3.session.Session, region: str) -> _Stack:
    template = load_template(template_path)
    params = {name: str(spec["Default"]) for name, spec in template.get("Parameters", {}).items()
              if "Default" in spec}
    params.update(BotName=bot, EgressMode="none")
    account = session.client("sts", region_name=region).get_caller_identity()["Account"]
    stack = _Stack(template, params, prefix, region, account, session)
    bus_arn = f"arn:aws:events:{region}:{account}:event-bus/{res.bus_name}"
    stack.created["ResultsBus"] = {"Ref": res.bus_name, "Arn": bus_arn, "Name": res.bus_name}
    return stack


def create_webhook_resources(res: StackResources, *, template_path: Path, bot: str, prefix: str,
                             session: boto3.session.Session, region: str = "eu-west-1") -> WebhookResources:
    """The webhook's rule on the results bus of ``res``, its FIFO delivery queue and dead-letter
    queue, from template.yaml's own properties (ResultsToWebhookRule, DeliveryQueue,
    DeliveryDeadLetterQueue), as a stack with ResultsWebhookUrl set has them."""
    stack = _results_stack(res, template_path, bot, prefix, session, region)
    return WebhookResources(queue_url=stack.attr("DeliveryQueue", "Ref"),
                            dlq_url=stack.attr("DeliveryDeadLetterQueue", "Ref"),
                            rule=stack.attr("ResultsToWebhookRule", "Ref"))

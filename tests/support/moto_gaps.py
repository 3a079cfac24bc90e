"""Where moto's CloudFormation differs from AWS's, and what the AWS emulator
(tests/support/aws_emulator.py) does about each: the one place that reaches into moto's models.

Each accommodation names the moto behaviour it answers; tests/unit/test_moto_gaps.py holds one
test per gap that fails when a moto upgrade changes it (then the accommodation can go, or must
change). What the emulator cannot create at all is left out of the template and said
(``accommodate``'s second value): the deploy rehearsal reports it, the README names it."""
from __future__ import annotations

import copy
import hashlib
import json
import os
import re
from collections.abc import Mapping
from typing import Any

ACCOUNT = "123456789012"  # moto's default account

# AWS's default concurrency quota for Lambda in a region, and the share it keeps unreserved.
LAMBDA_DEFAULT_CONCURRENCY, LAMBDA_UNRESERVED_MINIMUM = 1000, 100

NO_MODEL = "moto's CloudFormation has no model for it, nor the emulator a provider"
# Types moto's backends could take, and why the emulator still leaves them out.
_NO_MODEL = {
    "AWS::S3::BucketPolicy": (
        "moto has no model for it, and its S3 reads a Deny statement whose condition does not hold as a "
        "Deny (the template's DenyInsecureTransport would refuse every object call, over TLS too)"),
}

# What the emulator cannot create, by type: the deploy rehearsal's list (README, Deploying to AWS).
# A stack's not-created resources are of these types only (tests/integration/test_deploy_rehearsal.py).
NOT_CREATED = {
    "Custom::ReverseDns": "the egress address's PTR record (WannadoBot): a custom resource's Lambda, run in Docker",
    "AWS::S3::BucketPolicy": "the buckets' DenyInsecureTransport policies",
    "AWS::Logs::QueryDefinition": "the saved Logs Insights queries",
    "AWS::XRay::SamplingRule": "the X-Ray sampling rule",
    "AWS::CloudFront::Distribution": "the info page's distribution (PublishInfoPage=cloudfront)",
    "AWS::CloudFront::Function": "its edge function",
    "AWS::CloudFront::OriginAccessControl": "its origin access control",
    "AWS::CloudFront::ResponseHeadersPolicy": "its response headers policy",
}

__all__ = ["NOT_CREATED", "NO_MODEL", "accommodate", "after_create_change_set", "after_execute", "apply",
           "condition_holds", "lambda_account_settings"]


def apply() -> None:
    """The accommodations that change moto's own code, for the emulator's process alone: the
    providers of tests/support/moto_providers.py, and lists cleaned as CloudFormation does."""
    from moto.cloudformation import parsing

    from tests.support.moto_providers import register

    register()
    original = parsing.clean_json
    if getattr(original, "heed_accommodation", False):
        return

    def clean_json(resource_json: Any, resources_map: Any) -> Any:
        # CloudFormation drops a list item that resolves to AWS::NoValue (`!If [C, X, !Ref
        # AWS::NoValue]` among a role's Policies, SAM's way of an optional statement); moto keeps
        # it as None, and its IAM role then fails on it (TypeError: 'NoneType' object is not
        # subscriptable). moto resolves nested values through this module-level name, so the
        # items of every list are cleaned here.
        if isinstance(resource_json, list):
            cleaned = [(item, clean_json(item, resources_map)) for item in resource_json]
            return [value for item, value in cleaned if not (value is None and _intrinsic(item))]
        return original(resource_json, resources_map)

    clean_json.heed_accommodation = True  # type: ignore[attr-defined]
    parsing.clean_json = clean_json

    _complete_buckets()

    from moto.events.models import Archive, EventBus

    for model in (EventBus, Archive):
        if not hasattr(model, "physical_resource_id"):
            # CloudFormation's Ref of an AWS::Events::EventBus (an Archive) is its name; moto's model
            # has no physical id, so its Ref is the Python object (the ResultsBusName output read
            # "<moto.events.models.EventBus object at ...>", and so did the functions' HEED_BUS_NAME;
            # ResultsArchiveName likewise).
            model.physical_resource_id = property(lambda made: made.name)  # type: ignore[attr-defined]

    from moto.awslambda.models import LayerVersion

    if not hasattr(LayerVersion, "physical_resource_id"):
        # CloudFormation's Ref of an AWS::Lambda::LayerVersion is its ARN; moto's is the Python
        # object, which moto's own update of a function's Layers then fails on
        # (AttributeError: 'LayerVersion' object has no attribute 'replace'): a second deploy failed.
        LayerVersion.physical_resource_id = property(lambda layer: layer.arn)  # type: ignore[attr-defined]

    _complete_interfaces()
    _conditional_exports()
    _conditional_updates()


def _complete_buckets() -> None:
    """moto's AWS::S3::Bucket applies BucketEncryption and Tags only; CloudFormation applies every
    property. The ones the template sets are applied here through moto's S3 backend, as
    CloudFormation calls the API for them (versioning: the results bucket's page texts, COMMON-08)."""
    from moto.s3.models import FakeBucket, s3_backends

    original = FakeBucket.create_from_cloudformation_json.__func__  # type: ignore[attr-defined]
    if getattr(original, "heed_accommodation", False):
        return

    def create(cls: Any, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str,
               **kwargs: Any) -> Any:
        bucket = original(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs)
        backend, p = s3_backends[account_id]["aws"], cloudformation_json.get("Properties", {})
        if "VersioningConfiguration" in p:
            backend.put_bucket_versioning(bucket.name, p["VersioningConfiguration"]["Status"])
        if "PublicAccessBlockConfiguration" in p:
            backend.put_public_access_block(bucket.name, p["PublicAccessBlockConfiguration"])
        if "OwnershipControls" in p:
            backend.put_bucket_ownership_controls(bucket.name, p["OwnershipControls"])
        if "LifecycleConfiguration" in p:  # CloudFormation's Id is the API's ID; no filter: every key
            backend.put_bucket_lifecycle(bucket.name, [{**{k: v for k, v in rule.items() if k != "Id"},
                                                        "ID": rule.get("Id"), "Prefix": rule.get("Prefix", "")}
                                                       for rule in p["LifecycleConfiguration"]["Rules"]])
        return bucket

    create.heed_accommodation = True  # type: ignore[attr-defined]
    FakeBucket.create_from_cloudformation_json = classmethod(create)  # type: ignore[method-assign,assignment]


def _conditional_updates() -> None:
    """Two ways moto's update of a stack differs from CloudFormation's, both where a second `heed
    deploy` updates a stack (WannadoBot's, once its PTR record can be set):

    - it updates every resource whose text or parameters changed, its condition held or not,
      resolving its properties: a resource the stack does not make (InfoPageFunction, under
      PublishViaFunctionUrl) whose text changed with a new build (the layers' logical ids) failed
      the update ("Fn::GetAtt references undefined resource InfoPageFunctionRole");
    - a resource of a type whose model has no update (a log group, the emulator's alarms) is
      dropped from the stack, and one its condition now makes (ReverseDnsLogGroup) is never made.

    CloudFormation leaves the first alone and updates the second: here, a resource the stack does
    not make stays unmade, and one of a type moto cannot update is kept as it was, or made if the
    stack had none (its properties as the update has them). moto's update calls the module-level
    name."""
    from moto.cloudformation import parsing

    original = parsing.parse_and_update_resource
    if getattr(original, "heed_accommodation", False):
        return

    def parse_and_update_resource(logical_id: str, resource_json: dict[str, Any], resources_map: Any,
                                  account_id: str, region_name: str) -> Any:
        condition = resource_json.get("Condition")
        if condition and not resources_map.lazy_condition_map[condition]:
            return None
        model = parsing.resource_class_from_type(resource_json.get("Type", ""))
        if model is not None and hasattr(model.update_from_cloudformation_json, "__isabstractmethod__"):
            kept = resources_map._parsed_resources.get(logical_id)
            if kept is not None:
                return kept
            return parsing.parse_and_create_resource(logical_id, resource_json, resources_map,
                                                     account_id=account_id, region_name=region_name)
        return original(logical_id, resource_json, resources_map, account_id, region_name)

    parse_and_update_resource.heed_accommodation = True  # type: ignore[attr-defined]
    parsing.parse_and_update_resource = parse_and_update_resource


def _conditional_exports() -> None:
    """moto lists a stack's exports from every output with an Export, its condition held or not,
    and resolves each (DescribeStacks does, to name an output's export): an exported output whose
    condition is false and whose value reads a resource the stack does not make fails the call
    ("Fn::GetAtt references undefined resource"). CloudFormation has no such output, so no export."""
    from moto.cloudformation.parsing import Export, OutputMap, clean_json

    if getattr(OutputMap.exports, "heed_accommodation", False):
        return

    def exports(self: Any) -> list[Any]:
        conditions = self._resource_map.lazy_condition_map
        made = []
        for output in (self._output_json_map or {}).values():
            if output.get("Export") and (not output.get("Condition") or conditions[output["Condition"]]):
                name = clean_json(output["Export"].get("Name"), self._resource_map)
                made.append(Export(self._stack_id, name, clean_json(output.get("Value"), self._resource_map)))
        return made

    accommodated = property(exports)
    accommodated.fget.heed_accommodation = True  # type: ignore[attr-defined]
    OutputMap.exports = accommodated  # type: ignore[method-assign,assignment]


def _complete_interfaces() -> None:
    """moto's AWS::EC2::NetworkInterface reads its security groups from SecurityGroups (the
    property is GroupSet) and leaves out SourceDestCheck and Tags: the NAT's egress interface came
    out in the default group, checking source and destination. They are applied as CloudFormation
    applies them."""
    from moto.ec2.models.elastic_network_interfaces import NetworkInterface

    original = NetworkInterface.create_from_cloudformation_json.__func__  # type: ignore[attr-defined]
    if getattr(original, "heed_accommodation", False):
        return

    def create(cls: Any, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str,
               **kwargs: Any) -> Any:
        p = cloudformation_json.get("Properties", {})
        given = {**cloudformation_json, "Properties": {**p, "SecurityGroups": p.get("GroupSet", [])}}
        eni = original(cls, resource_name, given, account_id, region_name, **kwargs)
        if "SourceDestCheck" in p:
            eni.source_dest_check = str(p["SourceDestCheck"]).lower() == "true"
        eni.add_tags({t["Key"]: t["Value"] for t in p.get("Tags", [])})
        return eni

    create.heed_accommodation = True  # type: ignore[attr-defined]
    NetworkInterface.create_from_cloudformation_json = classmethod(create)  # type: ignore[method-assign,assignment]


def _intrinsic(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in ("Ref", "Fn::If")


def accommodate(template: Mapping[str, Any], stack: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The translated ``template`` as moto can create it, and {logical id: why} of each resource
    left out because the emulator cannot create it."""
    out = copy.deepcopy(dict(template))
    resources: dict[str, Any] = out.get("Resources", {})
    left_out: dict[str, str] = {}
    from moto.cloudformation.parsing import get_model_map

    models = get_model_map()
    for lid, res in list(resources.items()):
        kind, props = res.get("Type", ""), res.setdefault("Properties", {})
        if kind not in models and not kind.startswith("Custom::"):
            # moto skips a type it has no model for (a warning, nothing made) and still calls the
            # stack CREATE_COMPLETE: kept in the template (a Ref to it resolves to nothing, as
            # moto does), and said.
            left_out[lid] = f"{kind}: {_NO_MODEL.get(kind, NO_MODEL)}"
        elif kind.startswith("Custom::") or kind == "AWS::CloudFormation::CustomResource":
            # moto answers a custom resource by invoking its Lambda function in Docker (there is none
            # here) on a thread, and marks the stack CREATE_COMPLETE without waiting for the reply:
            # kept, it would pass for created. Left out and said instead.
            left_out[lid] = (f"{kind}: a custom resource runs its Lambda function, which moto invokes in Docker; "
                             "the emulator has none, so it is not created")
            del resources[lid]
        elif kind == "AWS::SQS::Queue" and props.get("FifoQueue") and "QueueName" not in props:
            # CloudFormation names a FIFO queue without QueueName <stack>-<LogicalId>-<random>.fifo;
            # moto leaves out the .fifo and then refuses its own name ("Queue name must end in .fifo").
            props["QueueName"] = _generated_name(stack, lid, 80 - len(".fifo")) + ".fifo"
        elif kind == "AWS::Events::Archive":
            if isinstance(props.get("EventPattern"), dict):
                # CloudFormation takes an archive's EventPattern as a JSON object; moto's model reads
                # it as the API's string and fails (TypeError: the JSON object must be str ... not dict).
                props["EventPattern"] = json.dumps(props["EventPattern"])
            if "ArchiveName" not in props:
                # CloudFormation names an archive within EventBridge's 48 characters; moto's name
                # (<stack>-<LogicalId>-<random>) outgrows it for a stack name of 20 or more, and
                # moto refuses it ("failed to satisfy constraint: ... length less than or equal to 48").
                props["ArchiveName"] = _generated_name(stack, lid, 48)
        elif kind == "AWS::KMS::Key" and props.get("Tags"):
            # CloudFormation's AWS::KMS::Key Tags are Key/Value; moto's model reads them as KMS's
            # API spells them (TagKey/TagValue) and fails with KeyError: 'TagKey'.
            props["Tags"] = [{"TagKey": t["Key"], "TagValue": t["Value"]} for t in props["Tags"]]
    for key, output in list(out.get("Outputs", {}).items()):
        # moto fails DescribeStacks on an output that reads an attribute of a resource it skipped.
        if _names(output.get("Value")) & set(left_out):
            left_out[f"Outputs.{key}"] = "an output of a resource not created"
            del out["Outputs"][key]
    for res in resources.values():  # nothing waits on what is left out
        depends = res.get("DependsOn")
        if isinstance(depends, list):
            res["DependsOn"] = [d for d in depends if d not in left_out]
        elif isinstance(depends, str) and depends in left_out:
            del res["DependsOn"]
    return out, left_out


def _names(value: Any) -> set[str]:
    """The logical ids a value refers to (Ref, Fn::GetAtt, ${X} and ${X.Attr} in Fn::Sub)."""
    if isinstance(value, list):
        return set().union(*(_names(v) for v in value)) if value else set()
    if not isinstance(value, dict):
        return set()
    found: set[str] = set()
    for key, arg in value.items():
        if key == "Ref" and isinstance(arg, str):
            found.add(arg)
        elif key == "Fn::GetAtt":
            found.add(arg[0] if isinstance(arg, list) else str(arg).split(".", 1)[0])
        elif key == "Fn::Sub":
            text = arg if isinstance(arg, str) else arg[0]
            found |= {m.split(".", 1)[0] for m in re.findall(r"\$\{([^}!][^}]*)\}", text)}
            found |= _names(arg[1] if isinstance(arg, list) else None)
        else:
            found |= _names(arg)
    return found


def _generated_name(stack: str, logical_id: str, limit: int) -> str:
    suffix = hashlib.sha256(f"{stack}/{logical_id}".encode()).hexdigest()[:12].upper()
    head = f"{stack}-{logical_id}"[: limit - len(suffix) - 1]
    return f"{head}-{suffix}"


def _stack(region: str, name_or_id: str) -> Any:
    from moto.cloudformation.models import cloudformation_backends

    backend = cloudformation_backends[ACCOUNT][region]
    for stack in backend.stacks.values():
        if name_or_id in (stack.name, stack.stack_id):
            return stack
    return None


def after_create_change_set(form: Mapping[str, str], region: str) -> None:
    """Once moto has made a CREATE change set: its stack sees the region's exports. moto makes the
    stack of a CREATE change set without them, so its Fn::ImportValue fails ("No export named ...
    found") where CloudFormation imports (a stack that shares another's egress, EgressStack)."""
    from moto.cloudformation.models import cloudformation_backends

    stack = _stack(region, form.get("StackName", ""))
    if stack is not None and form.get("ChangeSetType", "UPDATE") == "CREATE":
        exports = cloudformation_backends[ACCOUNT][region].exports
        stack.cross_stack_resources = exports
        stack.resource_map.cross_stack_resources = exports


def after_execute(form: Mapping[str, str], region: str) -> str | None:
    """Once moto has run CreateStack, UpdateStack or ExecuteChangeSet: the stack's name (None if
    moto has no such stack), its outputs computed as CloudFormation would have, and its exports
    in the region's list."""
    from moto.cloudformation.models import cloudformation_backends

    backend = cloudformation_backends[ACCOUNT][region]
    name = form.get("StackName", "")
    if form.get("Action") == "ExecuteChangeSet" and not name:
        change_set = backend.change_sets.get(form.get("ChangeSetName", ""))
        name = change_set.stack_name if change_set is not None else ""
    stack = _stack(region, name)
    if stack is None:
        return None
    if form.get("Action") == "ExecuteChangeSet" and isinstance(stack.template, str):
        # moto runs a CREATE change set on a stack it made with an empty template and never parses
        # the new one into the stack: its Outputs stay empty (CloudFormation has them), and SAM then
        # refuses its own managed stack ("missing Tags and/or Outputs"). Nor are its exports listed
        # (a stack that imports them finds none): they are.
        stack._parse_template()
        stack.output_map = stack._create_output_map()
        _export(stack, backend)
    return str(stack.name)


def _export(stack: Any, backend: Any) -> None:
    for export in stack.exports:  # (those whose condition holds: _conditional_exports)
        backend.exports[export.name] = export


def condition_holds(region: str, stack_name: str, condition: str | None) -> bool:
    """Whether a resource under ``condition`` is part of the stack, as moto evaluated the
    stack's conditions (True without one)."""
    if not condition:
        return True
    stack = _stack(region, stack_name)
    return bool(stack is not None and stack.resource_map.lazy_condition_map[condition])


def lambda_account_settings(region: str) -> dict[str, Any]:
    """Lambda's GetAccountSettings answer, which moto lacks: the account's concurrency quota is moto's
    own knob, MOTO_LAMBDA_CONCURRENCY_QUOTA (the one its PutFunctionConcurrency holds to the 100
    unreserved minimum; AWS's default 1000 without it), less what moto's functions reserve."""
    from moto.awslambda.models import lambda_backends

    quota = int(os.environ.get("MOTO_LAMBDA_CONCURRENCY_QUOTA") or LAMBDA_DEFAULT_CONCURRENCY)
    functions = list(lambda_backends[ACCOUNT][region].list_functions())
    reserved = sum(int(f.reserved_concurrency or 0) for f in functions)
    return {"AccountLimit": {"TotalCodeSize": 80530636800, "CodeSizeUnzipped": 262144000,
                             "CodeSizeZipped": 52428800, "ConcurrentExecutions": quota,
                             "UnreservedConcurrentExecutions": quota - reserved},
            "AccountUsage": {"TotalCodeSize": 0, "FunctionCount": len(functions)}}

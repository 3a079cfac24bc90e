"""`heed deploy`'s preflight: before anything is created, the account's quotas and usage are read
and every shortfall is one line naming the quota and the Service Quotas request that lifts it.

What the stack would take is read from template.yaml under the parameters samconfig.toml deploys
it with (``needs``): the reserved concurrency of its functions and what they run at once, its VPCs,
internet gateways and Elastic IPs (none for a stack that shares another's egress), a CloudFront
distribution. Each check (``CHECKS``) is a small function of an
``Account`` (the boto3 session, the stack's resources already there) and those needs; it says what
it found and, when short, what to ask for. A quota is read from Service Quotas where it answers,
else AWS's documented default is used and the line says so. A check that cannot read what it
needs (access denied, a service that does not answer) says so and refuses nothing."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CHECKS", "Account", "Finding", "Needs", "needs", "run"]

LAMBDA_UNRESERVED_MINIMUM = 100  # Lambda keeps this much of the account's concurrency unreserved


@dataclass(frozen=True)
class Needs:
    """What a deploy of the stack would take of the account (resources it already has left out)."""

    reserved_concurrency: dict[str, int] = field(default_factory=dict)  # function logical id -> reserved
    # function logical id -> invocations it may run at once: its event source mapping's
    # MaximumConcurrency, else 1 (a scheduled tick, a queue of one message group, a function URL at rest)
    at_once: dict[str, int] = field(default_factory=dict)
    vpcs: int = 0
    internet_gateways: int = 0
    elastic_ips: int = 0
    cloudfront_distributions: int = 0
    egress_stack: str = ""  # the stack whose egress this one shares (EgressStack), if any


@dataclass(frozen=True)
class Finding:
    """One check's word: ``short`` with a refusal line, else a line saying what was found."""

    line: str
    short: bool = False


@dataclass
class Account:
    """The AWS account a stack goes to, as the checks read it."""

    session: Any  # a boto3 Session (AWS_ENDPOINT_URL is honoured, as by every boto3 client)
    stack: str
    existing: dict[str, str] = field(default_factory=dict)  # the stack's logical id -> physical id, if it exists

    def client(self, service: str) -> Any:
        return self.session.client(service)

    def quota(self, service: str, code: str, default: float) -> tuple[float, str]:
        """(value, where it came from): Service Quotas' applied value, else its AWS default, else
        ``default`` (AWS's documented default)."""
        from botocore.exceptions import BotoCoreError, ClientError

        quotas = self.client("service-quotas")
        for read, source in ((quotas.get_service_quota, "Service Quotas"),
                             (quotas.get_aws_default_service_quota, "Service Quotas' AWS default")):
            try:
                return float(read(ServiceCode=service, QuotaCode=code)["Quota"]["Value"]), source
            except (ClientError, BotoCoreError):
                continue
        return default, "AWS's default; Service Quotas did not answer"


# --- what the stack takes: template.yaml under its parameters ---------------------------------

def _holds(template: Mapping[str, Any], params: Mapping[str, str], condition: Any) -> bool:
    """A CloudFormation condition (Fn::Equals/Not/And/Or, Condition, Ref of a parameter)."""
    def value(v: Any) -> Any:
        if isinstance(v, dict) and len(v) == 1:
            (key, arg), = v.items()
            if key == "Ref":
                return params.get(arg, "")
            if key == "Condition":
                return _holds(template, params, template["Conditions"][arg])
            if key == "Fn::Equals":
                return str(value(arg[0])) == str(value(arg[1]))
            if key == "Fn::Not":
                return not value(arg[0])
            if key == "Fn::And":
                return all(value(a) for a in arg)
            if key == "Fn::Or":
                return any(value(a) for a in arg)
        return v

    if isinstance(condition, str):
        return bool(value({"Condition": condition}))
    return bool(value(condition))


def _resolve(template: Mapping[str, Any], params: Mapping[str, str], v: Any) -> Any:
    """A property's value: a Ref of a parameter, an Fn::If, AWS::NoValue (None), or as it is."""
    if isinstance(v, dict) and len(v) == 1:
        (key, arg), = v.items()
        if key == "Ref":
            return None if arg == "AWS::NoValue" else params.get(arg)
        if key == "Fn::If":
            return _resolve(template, params, arg[1] if _holds(template, params, arg[0]) else arg[2])
    return v


def needs(template: Mapping[str, Any], parameters: Mapping[str, str],
          existing: Mapping[str, str] | None = None) -> Needs:
    """What the stack would create, from ``template`` (as heed.local.resources loads it) under
    ``parameters`` (its defaults, then samconfig's overrides); resources in ``existing`` (already
    in the stack) are not created again."""
    params = {k: str(spec["Default"]) for k, spec in template.get("Parameters", {}).items() if "Default" in spec}
    params.update(parameters)
    reserved: dict[str, int] = {}
    at_once: dict[str, int] = {}
    count: dict[str, int] = {}
    for lid, res in template["Resources"].items():
        if "Condition" in res and not _holds(template, params, res["Condition"]):
            continue
        kind = res.get("Type", "")
        if kind in ("AWS::Serverless::Function", "AWS::Lambda::Function"):
            props = res.get("Properties", {})
            value = _resolve(template, params, props.get("ReservedConcurrentExecutions"))
            if value not in (None, "", "0", 0):
                reserved[lid] = int(value)
            runs = _at_once(template, params, props)
            if runs:
                at_once[lid] = runs
        elif lid not in (existing or {}):
            count[kind] = count.get(kind, 0) + 1
    shares = "SharesEgress" in template.get("Conditions", {}) and _holds(template, params, "SharesEgress")
    return Needs(reserved_concurrency=reserved, at_once=at_once, vpcs=count.get("AWS::EC2::VPC", 0),
                 egress_stack=params.get("EgressStack", "") if shares else "",
                 internet_gateways=count.get("AWS::EC2::InternetGateway", 0),
                 elastic_ips=count.get("AWS::EC2::EIP", 0),
                 cloudfront_distributions=count.get("AWS::CloudFront::Distribution", 0))


def _at_once(template: Mapping[str, Any], params: Mapping[str, str], props: Mapping[str, Any]) -> int:
    """How many invocations a function may run at once: each SQS event's MaximumConcurrency (1
    without one), 1 for any other trigger (a schedule, a function URL), 0 for none (a custom
    resource's function runs during a deploy only)."""
    runs = 0
    for event in (props.get("Events") or {}).values():
        scaling = (event.get("Properties") or {}).get("ScalingConfig") or {}
        runs += int(_resolve(template, params, scaling.get("MaximumConcurrency")) or 1)
    return runs or (1 if props.get("FunctionUrlConfig") else 0)


# --- the checks ---------------------------------------------------------------------------------

def _request(service: str, code: str, desired: float) -> str:
    return (f"aws service-quotas request-service-quota-increase --service-code {service} --quota-code {code} "
            f"--desired-value {desired:g}")


def lambda_concurrency(account: Account, need: Needs) -> Finding:
    """The functions' reserved concurrency against the account's limit, 100 kept unreserved, and
    what the stack may run at once (its fetchers' MaximumConcurrency, a tick) within the limit."""
    settings = account.client("lambda").get_account_settings()["AccountLimit"]
    limit, unreserved = int(settings["ConcurrentExecutions"]), int(settings["UnreservedConcurrentExecutions"])
    already = 0  # what the stack's own functions reserve now: counted in `unreserved` already
    for lid in need.reserved_concurrency:
        if lid in account.existing:
            answer = account.client("lambda").get_function_concurrency(FunctionName=account.existing[lid])
            already += int(answer.get("ReservedConcurrentExecutions") or 0)
    wanted = sum(need.reserved_concurrency.values()) - already
    parts = ", ".join(f"{lid} {n}" for lid, n in need.reserved_concurrency.items())
    reserves = f"reserves {sum(need.reserved_concurrency.values())} ({parts})" if parts else "reserves none"
    peak = sum(need.at_once.values())
    runs = ", ".join(f"{lid} {n}" for lid, n in need.at_once.items())
    found = (f"Lambda concurrent executions: limit {limit}, {unreserved} unreserved (GetAccountSettings); "
             f"the stack {reserves} and runs up to {peak} at once ({runs})")
    if wanted and unreserved - wanted < LAMBDA_UNRESERVED_MINIMUM:
        desired = limit + LAMBDA_UNRESERVED_MINIMUM - (unreserved - wanted)
        return Finding(f"{found}; its reservation would leave {unreserved - wanted} unreserved where Lambda keeps "
                       f"{LAMBDA_UNRESERVED_MINIMUM}: {_request('lambda', 'L-B99A9384', desired)}", short=True)
    if peak > limit:
        # More than the account runs at once: a normal round would be throttled (and its batches
        # wait out the queue's visibility timeout). Lower FetcherMaximumConcurrency, or lift the limit.
        return Finding(f"{found}, more than the limit (lower FetcherMaximumConcurrency, or): "
                       f"{_request('lambda', 'L-B99A9384', peak)}", short=True)
    return Finding(found)


def _against_quota(account: Account, name: str, quota_of: tuple[str, str, float], wanted: int,
                   in_use: Callable[[], int]) -> Finding:
    """``wanted`` more of something counted by ``in_use``, against its quota (service, code, AWS's
    default)."""
    if not wanted:
        return Finding(f"{name}: the stack creates none")
    service, code, default = quota_of
    quota, source = account.quota(service, code, default)
    used = in_use()
    found = f"{name}: {used} of {quota:g} in use ({source}); the stack creates {wanted}"
    if used + wanted <= quota:
        return Finding(found)
    return Finding(f"{found}: {_request(service, code, used + wanted)}", short=True)


def vpcs(account: Account, need: Needs) -> Finding:
    """VPCs per Region (the default VPC counts)."""
    return _against_quota(account, "VPCs per Region", ("vpc", "L-F678F1CE", 5), need.vpcs,
                          lambda: len(account.client("ec2").describe_vpcs()["Vpcs"]))


def internet_gateways(account: Account, need: Needs) -> Finding:
    """Internet gateways per Region (the default VPC's counts)."""
    return _against_quota(account, "Internet gateways per Region", ("vpc", "L-A4707A72", 5), need.internet_gateways,
                          lambda: len(account.client("ec2").describe_internet_gateways()["InternetGateways"]))


def elastic_ips(account: Account, need: Needs) -> Finding:
    """EC2-VPC Elastic IPs per Region (an address kept by a deleted stack still counts)."""
    return _against_quota(account, "EC2-VPC Elastic IPs", ("ec2", "L-0263D0A3", 5), need.elastic_ips,
                          lambda: len(account.client("ec2").describe_addresses()["Addresses"]))


def cloudfront(account: Account, need: Needs) -> Finding:
    """Distributions per account, where CloudFront answers. A new account may have to be verified
    before its first distribution; no API tells, so the line says so where it cannot be read."""
    if not need.cloudfront_distributions:
        return Finding("CloudFront: the stack creates no distribution")
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        listed = account.client("cloudfront").list_distributions()["DistributionList"]
    except (ClientError, BotoCoreError) as exc:
        return Finding(f"CloudFront: could not be checked ({type(exc).__name__}); a new account may have to be "
                       "verified before its first distribution (AWS Support)")
    return _against_quota(account, "CloudFront distributions per account", ("cloudfront", "L-24B04930", 200),
                          need.cloudfront_distributions, lambda: int(listed.get("Quantity", 0)))


# What a stack with egress of its own exports for the stacks that share it (template.yaml's outputs).
SHARED_EGRESS_EXPORTS = ("EgressSubnetId", "EgressSecurityGroupId", "EgressAllocationId")


def shared_egress(account: Account, need: Needs) -> Finding:
    """A stack that shares another's egress (EgressStack) creates no VPC, gateway or address; the
    stack it names must be there and export its subnet, security group and address."""
    if not need.egress_stack:
        return Finding("Shared egress: none (the stack has its own, or none)")
    wanted = {f"{need.egress_stack}-{name}" for name in SHARED_EGRESS_EXPORTS}
    found: set[str] = set()
    for page in account.client("cloudformation").get_paginator("list_exports").paginate():
        found |= {e["Name"] for e in page.get("Exports", []) if e["Name"] in wanted}
    missing = sorted(wanted - found)
    if not missing:
        return Finding(f"Shared egress: {need.egress_stack} exports its subnet, security group and address; "
                       "the stack creates no VPC, gateway, NAT or address")
    return Finding(f"Shared egress: EgressStack {need.egress_stack} exports no {', '.join(missing)} (deploy it first, "
                   "with an egress of its own: EgressMode nat-instance or nat-gateway, no EgressStack)", short=True)


@dataclass(frozen=True)
class Check:
    name: str
    run: Callable[[Account, Needs], Finding]


# The checks, in the order their lines are printed. A new one is one line here.
CHECKS: tuple[Check, ...] = (
    Check("lambda", lambda_concurrency),
    Check("vpcs", vpcs),
    Check("internet-gateways", internet_gateways),
    Check("elastic-ips", elastic_ips),
    Check("cloudfront", cloudfront),
    Check("shared-egress", shared_egress),
)


def existing_resources(session: Any, stack: str) -> dict[str, str]:
    """The stack's resources (logical id -> physical id) if it exists, else none."""
    from botocore.exceptions import ClientError

    found: dict[str, str] = {}
    try:
        for page in session.client("cloudformation").get_paginator("list_stack_resources").paginate(StackName=stack):
            found.update({r["LogicalResourceId"]: r.get("PhysicalResourceId", "")
                          for r in page["StackResourceSummaries"]})
    except ClientError as exc:
        # CloudFormation answers ValidationError for a stack that does not exist (a name the
        # command line has already checked): nothing of it exists yet.
        if exc.response.get("Error", {}).get("Code") != "ValidationError":
            raise
    return found


def run(session: Any, stack: str, template: Mapping[str, Any], parameters: Mapping[str, str]) -> list[Finding]:
    """Every check's finding for ``stack`` (the template under ``parameters``): read, not changed."""
    from botocore.exceptions import BotoCoreError, ClientError

    account = Account(session, stack)
    try:
        account.existing = existing_resources(session, stack)
    except (ClientError, BotoCoreError) as exc:
        return [Finding(f"preflight: could not read the stack {stack} ({type(exc).__name__}); nothing checked")]
    need = needs(template, parameters, account.existing)
    findings = []
    for check in CHECKS:
        try:
            findings.append(check.run(account, need))
        except (ClientError, BotoCoreError) as exc:
            findings.append(Finding(f"{check.name}: could not be checked ({type(exc).__name__}: {exc})"))
    return findings

"""Deployment facts (COMMON-09, WANNADO-02, AUBE-11's wiring): proven on template.yaml, the
profile and the deploy configuration samconfig.toml is generated from, since a local run leaves
from this machine's own address and no site here can see the stack's egress."""
from __future__ import annotations

import ipaddress
import json
from typing import Any

from heed.conformance.model import Proof, Runs

__all__ = ["egress", "request_slots", "reverse_dns", "template"]


def template() -> dict[str, Any]:
    from heed.local.resources import load_template
    from heed.local.root import ROOT

    return load_template(ROOT / "template.yaml")


_ALLOCATION = {"Fn::If": ["HasEgressAllocationId", {"Ref": "EgressAllocationId"},
                          {"Fn::GetAtt": ["EgressIp", "AllocationId"]}]}


def _own(value: Any) -> Any:
    """The stack's own branch of a value that a stack sharing another's egress imports instead."""
    if isinstance(value, dict) and value.get("Fn::If", [None])[0] == "SharesEgress":
        return value["Fn::If"][2]
    return value


def egress(r: Runs) -> Proof:
    """The function that fetches (the only one in the VPC) sits in the private subnet, whose one
    default route is the NAT (a gateway, or an instance's egress interface, by EgressMode) holding
    the one Elastic IP, kept when the stack goes and published as the EgressIp output (and, where
    the bot lists its addresses, in the profile for ips.json). A stack given EgressStack takes that
    stack's subnet, security group and so its NAT and address, exported by the same template."""
    proof, t = Proof(), template()
    res = t["Resources"]
    proof.note("deployment fact, checked on template.yaml")
    functions = [k for k, v in res.items() if v["Type"] == "AWS::Serverless::Function"]
    in_vpc = {k: res[k]["Properties"]["VpcConfig"].get("Fn::If", [None, {}])[1] for k in functions
              if "VpcConfig" in res[k]["Properties"]}
    subnets = {_own(s).get("Ref") for v in in_vpc.values() for s in v.get("SubnetIds", [])}
    proof.that(list(in_vpc) == ["FetcherFunction"] and bool(subnets),
               f"the fetcher, the one function that fetches, in the private subnet {sorted(map(str, subnets))}")
    tables = {v["Properties"]["RouteTableId"]["Ref"] for v in res.values()
              if v["Type"] == "AWS::EC2::SubnetRouteTableAssociation" and v["Properties"]["SubnetId"]["Ref"] in subnets}
    routes = {k: v for k, v in res.items() if v["Type"] == "AWS::EC2::Route"
              and v["Properties"]["RouteTableId"]["Ref"] in tables}
    kinds = ("NatGatewayId", "InstanceId", "GatewayId", "NetworkInterfaceId")
    targets = {(v.get("Condition"), json.dumps({k: x for k, x in v["Properties"].items() if k in kinds}))
               for v in routes.values()}
    proof.that(targets == {("UseNatGateway", '{"NatGatewayId": {"Ref": "NatGateway"}}'),
                           ("UseNatInstance", '{"NetworkInterfaceId": {"Ref": "NatInterface"}}')},
               "their only default route is the NAT, a gateway or an instance's egress interface by EgressMode")
    eips = [k for k, v in res.items() if v["Type"] == "AWS::EC2::EIP"]
    association = res.get("EgressIpAssociation", {}).get("Properties", {})
    proof.that(eips == ["EgressIp"] and res["NatGateway"]["Properties"]["AllocationId"] == _ALLOCATION
               and association == {"AllocationId": _ALLOCATION, "NetworkInterfaceId": {"Ref": "NatInterface"}},
               "which holds the one Elastic IP (the stack's, or the one passed as EgressAllocationId)")
    proof.that(res["EgressIp"].get("DeletionPolicy") == "Retain", "kept when the stack goes (DeletionPolicy Retain)")
    proof.that(t["Outputs"].get("EgressIp", {}).get("Value") == {"Ref": "EgressIp"}, "published as the EgressIp output")
    shared = {o["Export"]["Name"]["Fn::Sub"].rsplit("-", 1)[1] for o in t["Outputs"].values() if "Export" in o}
    proof.that({"EgressSubnetId", "EgressSecurityGroupId", "EgressAllocationId"} <= shared,
               "or, with EgressStack, another stack's subnet, NAT and address, which that stack exports")
    if r.profile.egress.ips:
        proof.that(all(ipaddress.ip_network(n).num_addresses == 1 for n in r.profile.egress.ips),
                   f"the profile lists {len(r.profile.egress.ips)} single addresses for ips.json")
    return proof


def reverse_dns(r: Runs) -> Proof:
    """WANNADO-02: the published reverse DNS name reaches the stack, which sets the EIP's PTR."""
    from heed.infopage import ips_json
    from heed.samconfig import deploy_env

    proof, t, p = Proof(), template(), r.profile
    proof.note("deployment fact, checked on the profile, samconfig and template.yaml")
    name = p.egress.reverse_dns
    proof.that(bool(name) and deploy_env(p).reverse_dns_name == name,
               f"reverse DNS {name!r} deployed as ReverseDnsName")
    custom = t["Resources"].get("ReverseDns", {})
    proof.that(custom.get("Properties", {}).get("AllocationId") == _ALLOCATION,
               "a custom resource sets the egress address's PTR record")
    nets = [ipaddress.ip_network(n) for n in p.egress.ips]
    proof.that(bool(nets) and all(n.num_addresses == 1 for n in nets), f"{len(nets)} fixed addresses in the profile")
    doc = json.loads(ips_json(p))
    listed = {v for e in doc.get("prefixes", []) for v in e.values()}
    proof.that({str(n) for n in nets} <= listed and bool(p.egress.ips_json_path),
               f"the same list in {p.egress.ips_json_path} (heed info-page writes it)")
    return proof


def request_slots(r: Runs) -> Proof:
    """AUBE-11 in AWS: politeness.max_in_flight is the number of request slots in the state table
    (heed_core.crawl takes one right before each request, frees it right after its answer); the
    fetcher reserves no concurrency (a reservation throttles a FIFO event source mapping and needs
    an account quota above 100), and its mapping's MaximumConcurrency (at least 2) lets fetchers
    run side by side without a throttle."""
    from heed.samconfig import deploy_env

    proof, t = Proof(), template()
    proof.note("deployment fact, checked on the profile, samconfig and template.yaml")
    env = deploy_env(r.profile)
    fetcher = t["Resources"]["FetcherFunction"]["Properties"]
    proof.that(r.profile.politeness.max_in_flight == 1, "one request slot over all hosts (politeness.max_in_flight 1)")
    reserved = fetcher.get("ReservedConcurrentExecutions", {}).get("Fn::If", [None, {}])[1]
    proof.that(reserved == {"Ref": "FetcherReservedConcurrency"}
               and t["Parameters"]["FetcherReservedConcurrency"]["Default"] == 0
               and "FetcherReservedConcurrency" not in env.parameter_overrides(),
               "the fetcher reserves no concurrency (FetcherReservedConcurrency 0, not set by samconfig)")
    scaling = fetcher["Events"]["Work"]["Properties"].get("ScalingConfig", {})
    proof.that(scaling.get("MaximumConcurrency") == {"Ref": "FetcherMaximumConcurrency"}
               and env.fetcher_max_concurrency >= 2,
               f"its event source mapping runs up to {env.fetcher_max_concurrency} fetchers at once "
               "(FetcherMaximumConcurrency), none throttled")
    return proof

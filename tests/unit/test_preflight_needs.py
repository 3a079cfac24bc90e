"""heed.preflight without an account: what a stack would take, read from template.yaml under its
parameters, and a check that cannot read what it needs says so and refuses nothing."""
from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from heed.local.resources import load_template
from heed.preflight import Account, Needs, cloudfront, needs

from tests.support.project import ROOT

TEMPLATE = load_template(ROOT / "template.yaml")


# What a stack runs at once: the fetcher's event source mapping's MaximumConcurrency, the tick.
RUNS = {"SchedulerFunction": 1, "FetcherFunction": 5}


@pytest.mark.parametrize(("parameters", "expected"), [
    # AubeBot as samconfig deploys it: nothing reserved; two fetchers at once (AUBE-11 is the slot)
    ({"FetcherMaximumConcurrency": "2"},
     Needs({}, {"SchedulerFunction": 1, "FetcherFunction": 2}, vpcs=1, internet_gateways=1, elastic_ips=1)),
    # an older samconfig.toml's reservation is still counted
    ({"FetcherReservedConcurrency": "1", "EgressMode": "nat-gateway"},
     Needs({"FetcherFunction": 1}, RUNS, vpcs=1, internet_gateways=1, elastic_ips=1)),
    ({"EgressMode": "none"}, Needs({}, RUNS)),
    # an address of one's own: the stack allocates none
    ({"EgressAllocationId": "eipalloc-0123456789abcdef0"}, Needs({}, RUNS, vpcs=1, internet_gateways=1)),
    ({"EgressMode": "none", "PublishInfoPage": "function-url"}, Needs({}, {**RUNS, "InfoPageFunction": 1})),
    ({"EgressMode": "none", "PublishInfoPage": "cloudfront"}, Needs({}, RUNS, cloudfront_distributions=1)),
    # a stack that shares another's egress creates nothing network-side, in either NAT mode
    ({"EgressStack": "heed-wannadobot"}, Needs({}, RUNS, egress_stack="heed-wannadobot")),
    ({"EgressStack": "heed-wannadobot", "EgressMode": "nat-gateway"}, Needs({}, RUNS, egress_stack="heed-wannadobot")),
    # and a dev stack without egress shares none
    ({"EgressStack": "heed-wannadobot", "EgressMode": "none"}, Needs({}, RUNS)),
    ({"EgressMode": "none", "ResultsWebhookUrl": "https://example.org/hook",
      "ResultsWebhookSecretArn": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:hook"},
     Needs({}, {**RUNS, "DelivererFunction": 1})),
])
def test_what_the_stack_takes_is_read_from_the_template_under_its_parameters(
        parameters: dict[str, str], expected: Needs) -> None:
    # WHEN the needs are read for these parameters (the template's defaults for the rest)
    # THEN they are the template's own, not numbers of the preflight's
    assert needs(TEMPLATE, parameters) == expected


def test_a_stack_that_exists_creates_again_none_of_what_it_has() -> None:
    # GIVEN a stack that has its VPC and gateway already
    existing = {"Vpc": "vpc-1", "InternetGateway": "igw-1"}
    # THEN only its Elastic IP is new (its functions' reservations are read from Lambda)
    assert needs(TEMPLATE, {}, existing) == Needs({}, RUNS, elastic_ips=1)


class _Denied:
    def client(self, service: str, **_: Any) -> Any:
        return self

    def list_distributions(self) -> Any:
        raise ClientError({"Error": {"Code": "AccessDenied", "Message": "no"}}, "ListDistributions")


def test_cloudfront_that_cannot_be_read_is_said_and_refuses_nothing() -> None:
    # GIVEN an account whose CloudFront calls are denied, and a stack that makes a distribution
    finding = cloudfront(Account(_Denied(), "s"), Needs(cloudfront_distributions=1))
    # THEN the line says it could not be checked, and nothing is short
    assert not finding.short
    assert finding.line.startswith("CloudFront: could not be checked (ClientError)")

"""What `heed deploy` settles about a stack's egress before `sam deploy` (heed.deploy's egress steps,
heed.egress), on moto: the NAT's image pinned once and kept, WannadoBot's address allocated first
(or found by its tag) and its PTR record asked for only once the A record resolves, and `heed
nat-image`, which says when a newer image than the pinned one exists."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from heed_core.profile import load_profile

from heed import egress as nat
from heed.cli import main
from heed.deploy import DeployError, Egress, nat_image, reverse_dns, reverse_dns_address
from heed.samconfig import EnvChoices, env_choices, write_env

REGION = "eu-west-1"
PTR = "crawler.wannado.nl"


@pytest.fixture
def session(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    with mock_aws():
        yield boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name=REGION)


def _egress(session: Any, parameters: dict[str, str],
            stack: str = "heed-wannadobot") -> tuple[Egress, list[dict[str, str]]]:
    recorded: list[dict[str, str]] = []
    return Egress(session, stack, "wannadobot", dict(parameters), recorded.append), recorded


def _dns(monkeypatch: pytest.MonkeyPatch, records: dict[str, list[str]]) -> None:
    monkeypatch.setattr(nat, "resolve_a", lambda name: records.get(name, []))


# --- the NAT's image: pinned once, kept, changed when asked ----------------------------------------
def test_the_first_deploy_pins_the_newest_image_and_later_ones_keep_it(session: Any,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a stack with a NAT instance of its own and no image pinned yet
    egress, recorded = _egress(session, {"EgressMode": "nat-instance"})
    newest = nat.newest_image(session)  # AWS's public parameter (moto ships it)
    assert newest.id.startswith("ami-")
    # WHEN heed deploy settles the egress THEN the newest is pinned in samconfig and said
    nat_image(egress, region_changed=False)
    assert recorded == [{"NatImageId": newest.id}] and egress.parameters["NatImageId"] == newest.id
    assert f"NAT image: {newest.id}" in capsys.readouterr().out
    # AND the next deploy keeps it, whatever the parameter says now
    again, recorded = _egress(session, {"EgressMode": "nat-instance", "NatImageId": "ami-0123456789abcdef0"})
    nat_image(again, region_changed=False)
    assert recorded == [] and again.parameters["NatImageId"] == "ami-0123456789abcdef0"
    assert "NAT image: ami-0123456789abcdef0, pinned" in capsys.readouterr().out
    # AND a deploy to another region pins that region's
    moved, recorded = _egress(session, {"EgressMode": "nat-instance", "NatImageId": "ami-0123456789abcdef0"})
    nat_image(moved, region_changed=True)
    assert recorded == [{"NatImageId": newest.id}]


@pytest.mark.parametrize("parameters", [{"EgressMode": "nat-gateway"}, {"EgressMode": "none"},
                                        {"EgressMode": "nat-instance", "EgressStack": "heed-wannadobot"}])
def test_a_stack_without_a_nat_instance_of_its_own_pins_no_image(session: Any, parameters: dict[str, str]) -> None:
    egress, recorded = _egress(session, parameters, "heed-aubebot")
    nat_image(egress, region_changed=False)
    assert recorded == [] and "NatImageId" not in egress.parameters


def test_heed_nat_image_says_when_a_newer_image_exists_and_update_records_it(
        session: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "samconfig.toml"
    write_env(config, "aubebot", EnvChoices(region=REGION, parameters=(("NatImageId", "ami-0000000000000000a"),)))
    newest = nat.Image("ami-0000000000000000b", "al2023-ami-2023.9.20261201.0-kernel-6.1-arm64", "2026-12-01T00:00:00Z")
    monkeypatch.setattr(nat, "newest_image", lambda session: newest)
    monkeypatch.setattr(nat, "image", lambda session, image_id: nat.Image(image_id, "al2023-ami-2023.8", "2026-10-01"))
    argv = ["nat-image", "--bot", "aubebot", "--path", str(config)]
    # WHEN AWS has a newer image than the one pinned THEN it says which, and how to move (exit 1)
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "NatImageId ami-0000000000000000a (al2023-ami-2023.8, 2026-10-01) pinned for [aubebot] in eu-west-1" in out
    assert "a newer image exists: ami-0000000000000000b" in out and "heed nat-image --bot aubebot --update" in out
    # WHEN --update THEN it is recorded (the next heed deploy replaces the instance) and all is current
    assert main([*argv, "--update"]) == 0
    assert dict(env_choices(config, "aubebot").parameters)["NatImageId"] == newest.id
    capsys.readouterr()
    assert main(argv) == 0
    assert "is the newest" in capsys.readouterr().out


# --- WANNADO-02: the address first, the PTR record once its A record resolves ----------------------
def test_wannado_02_the_address_is_allocated_first_and_the_ptr_waits_for_the_a_record(
        session: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    profile = load_profile("wannadobot")
    # GIVEN WannadoBot's first deploy: no address yet, the name not published
    egress, recorded = _egress(session, {"EgressMode": "nat-instance", "ReverseDnsName": PTR})
    _dns(monkeypatch, {})
    assert reverse_dns_address(egress, PTR, dry_run=True) is None  # (found, not made: before the preflight)
    # WHEN the egress is settled
    address = reverse_dns_address(egress, PTR, dry_run=False)
    reverse_dns(egress, profile, PTR, address)
    out = capsys.readouterr().out
    # THEN an address was allocated for the stack, tagged, recorded, and the A record to publish said
    assert address is not None and address.stack == "heed-wannadobot"
    assert recorded == [{"EgressAllocationId": address.allocation_id}]
    assert f"publish: {PTR} A {address.ip}" in out
    # AND the stack goes without its PTR record for now, and says to deploy again once published
    assert egress.parameters["ReverseDnsName"] == "" and "run heed deploy again" in out
    # WHEN the record resolves and heed deploy runs again THEN the same address, the PTR asked for
    again, recorded = _egress(session, {"EgressMode": "nat-instance", "ReverseDnsName": PTR,
                                        "EgressAllocationId": address.allocation_id})
    _dns(monkeypatch, {PTR: [address.ip]})
    same = reverse_dns_address(again, PTR, dry_run=False)
    reverse_dns(again, profile, PTR, same)
    assert same == address and recorded == []
    assert again.parameters["ReverseDnsName"] == PTR
    assert f"reverse DNS: {PTR} resolves to {address.ip}: the stack sets its PTR record" in capsys.readouterr().out


def test_wannado_02_an_a_record_for_another_address_is_no_ptr(session: Any, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    egress, _ = _egress(session, {"EgressMode": "nat-gateway", "ReverseDnsName": PTR})
    address = reverse_dns_address(egress, PTR, dry_run=False)
    _dns(monkeypatch, {PTR: ["198.51.100.7"]})
    reverse_dns(egress, load_profile("wannadobot"), PTR, address)
    assert egress.parameters["ReverseDnsName"] == ""
    assert f"reverse DNS: {PTR} resolves to 198.51.100.7 yet" in capsys.readouterr().out


def test_an_address_found_by_its_tag_is_reused_and_another_stacks_is_not(session: Any,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN an address heed deploy allocated for this stack before (its samconfig written anew)
    mine = nat.allocate_address(session, "heed-wannadobot", "wannadobot")
    egress, recorded = _egress(session, {"EgressMode": "nat-instance", "ReverseDnsName": PTR})
    # THEN it is found by its tag, even in the dry run's look before the preflight
    assert reverse_dns_address(egress, PTR, dry_run=True) == mine
    assert recorded == [{"EgressAllocationId": mine.allocation_id}]
    # AND an address recorded for another stack of the bot is left to it
    other, recorded = _egress(session, {"EgressMode": "nat-instance", "ReverseDnsName": PTR,
                                        "EgressAllocationId": mine.allocation_id}, "wannado-test")
    theirs = reverse_dns_address(other, PTR, dry_run=False)
    assert theirs is not None and theirs != mine and theirs.stack == "wannado-test"
    assert "is heed-wannadobot's; wannado-test takes its own" in capsys.readouterr().out
    # AND an address of the operator's own (no tag) is theirs to give
    own = session.client("ec2").allocate_address(Domain="vpc")["AllocationId"]
    given, recorded = _egress(session, {"EgressMode": "nat-instance", "ReverseDnsName": PTR,
                                        "EgressAllocationId": own}, "wannado-test")
    assert reverse_dns_address(given, PTR, dry_run=False).allocation_id == own and recorded == []  # type: ignore[union-attr]


def test_a_dry_run_allocates_nothing_and_holds_the_ptr_back(session: Any, capsys: pytest.CaptureFixture[str]) -> None:
    egress, recorded = _egress(session, {"EgressMode": "nat-instance", "ReverseDnsName": PTR})
    address = reverse_dns_address(egress, PTR, dry_run=True)
    reverse_dns(egress, load_profile("wannadobot"), PTR, address)
    assert address is None and recorded == [] and session.client("ec2").describe_addresses()["Addresses"] == []
    assert egress.parameters["ReverseDnsName"] == ""


def test_wannado_02_a_bot_with_a_ptr_record_does_not_share_anothers_egress(session: Any) -> None:
    egress, _ = _egress(session, {"EgressMode": "nat-instance", "EgressStack": "heed-aubebot", "ReverseDnsName": PTR})
    with pytest.raises(DeployError, match="deploy it with its own egress"):
        reverse_dns(egress, load_profile("wannadobot"), PTR, reverse_dns_address(egress, PTR, dry_run=False))


def test_a_bot_without_a_reverse_dns_name_leaves_its_address_to_its_stack(session: Any) -> None:
    egress, recorded = _egress(session, {"EgressMode": "nat-instance"}, "heed-aubebot")
    assert reverse_dns_address(egress, None, dry_run=False) is None
    reverse_dns(egress, load_profile("aubebot"), None, None)
    assert recorded == [] and session.client("ec2").describe_addresses()["Addresses"] == []


def test_a_dry_run_that_cannot_read_the_account_says_so_and_goes_on(
        session: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def unreachable(session: Any) -> nat.Image:
        raise nat.EgressError("the newest NAT image: EndpointConnectionError")

    monkeypatch.setattr(nat, "newest_image", unreachable)
    egress, recorded = _egress(session, {"EgressMode": "nat-instance"}, "heed-aubebot")
    egress.dry_run = True
    nat_image(egress, region_changed=False)
    assert recorded == [] and "heed deploy: the NAT image: not read" in capsys.readouterr().err
    # (a deploy stops there instead: the stack could not boot its NAT)
    egress.dry_run = False
    with pytest.raises(nat.EgressError):
        nat_image(egress, region_changed=False)

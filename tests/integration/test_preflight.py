"""`heed deploy`'s preflight (issue 35) against the AWS emulator (tests/support/aws_emulator.py),
its quotas set low: each shortfall stops the deploy before anything is created, one `heed deploy:`
line naming the quota and the Service Quotas request that lifts it, exit 2; a healthy account
passes. The usage is made as in a real account (moto lets VPCs, internet gateways and Elastic IPs
be created); Lambda's concurrency limit is moto's own knob, MOTO_LAMBDA_CONCURRENCY_QUOTA, which
the emulator's GetAccountSettings reads (moto has none). The conformance gate is patched to say
yes (proven in test_conformance_command.py); the refusal comes before `sam build`."""
from __future__ import annotations

import os
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

from heed_core.profile import load_profile

from heed.cli import main
from heed.local.resources import load_template
from heed.preflight import run as preflight
from heed.samconfig import deploy_env

from tests.support.aws_emulator import Emulator, running_emulator
from tests.support.project import project_copy, sam
from tests.support.stack import without_aws

REGION = "eu-west-1"


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with running_emulator(tmp_path_factory.mktemp("emulator") / "emulator.log") as running:
        yield running


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not sam().is_file():
        pytest.skip("no SAM CLI in .venv-tools (make tools)")
    return project_copy(tmp_path_factory.mktemp("project"))


def _as_the_account(monkeypatch: pytest.MonkeyPatch, emulator: Emulator, project: Path) -> None:
    """heed deploy in the project, its AWS calls to ``emulator`` (a new account: reset), the gate yes."""
    import heed.deploy

    with urllib.request.urlopen(urllib.request.Request(f"{emulator.url}/moto-api/reset", method="POST"), timeout=30):
        pass
    emulator.like_a_new_account(REGION)
    for name in [k for k in os.environ if k.startswith("AWS_")]:
        monkeypatch.delenv(name)
    for name, value in emulator.env(REGION).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("SAM", str(sam()))
    monkeypatch.chdir(project)
    monkeypatch.setattr(heed.deploy, "conformance_gate", lambda ref, profile, force: "passed")


def _deploy(capfd: pytest.CaptureFixture[str], bot: str = "aubebot") -> tuple[int, str, str]:
    code = main(["deploy", "--bot", bot, "--stack", f"{bot}-preflight", "--region", REGION, "--yes"])
    out, err = capfd.readouterr()
    return code, out, err


def _refused_once(code: int, out: str, err: str) -> str:
    """The one refusal line (exit 2, before the build)."""
    assert code == 2, out + err
    lines = [line for line in err.splitlines() if line.startswith("heed deploy: ")]
    assert len(lines) == 1, err
    assert "$ " not in out, "nothing may be built or deployed after a refusal"
    return lines[0]


@pytest.mark.slow
def test_a_new_account_s_lambda_concurrency_limit_of_10_holds_aubebot_s_stack(
        tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a new account whose Lambda concurrency limit is 10 (as new accounts often start)
    with running_emulator(tmp_path / "emulator.log", {"MOTO_LAMBDA_CONCURRENCY_QUOTA": "10"}) as low:
        _as_the_account(monkeypatch, low, project)
        parameters = dict(p.split("=", 1) for p in deploy_env(load_profile("aubebot")).parameter_overrides().split())
        # WHEN the preflight reads it for AubeBot's stack
        findings = preflight(boto3.session.Session(region_name=REGION), "aubebot-preflight",
                             load_template(project / "template.yaml"), parameters)
    # THEN nothing is reserved (AUBE-11 is the request slot) and what it runs at once fits
    assert [f.line for f in findings if f.short] == []
    assert ("Lambda concurrent executions: limit 10, 10 unreserved (GetAccountSettings); the stack reserves none "
            "and runs up to 3 at once (SchedulerFunction 1, FetcherFunction 2)") in [f.line for f in findings]


@pytest.mark.slow
def test_preflight_refuses_a_lambda_concurrency_limit_below_what_the_stack_runs_at_once(
        tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    # GIVEN an account whose Lambda concurrency limit is 4
    with running_emulator(tmp_path / "emulator.log", {"MOTO_LAMBDA_CONCURRENCY_QUOTA": "4"}) as low:
        _as_the_account(monkeypatch, low, project)
        # WHEN SpringStudioBot is deployed (five fetchers at once, and the tick)
        line = _refused_once(*_deploy(capfd, "springstudiobot"))
    # THEN one line: the limit, what the stack runs at once, and the request for 6
    assert line == ("heed deploy: preflight: Lambda concurrent executions: limit 4, 4 unreserved (GetAccountSettings); "
                    "the stack reserves none and runs up to 6 at once (SchedulerFunction 1, FetcherFunction 5), more "
                    "than the limit (lower FetcherMaximumConcurrency, or): aws service-quotas "
                    "request-service-quota-increase --service-code lambda --quota-code L-B99A9384 --desired-value 6")


@pytest.mark.slow
def test_preflight_refuses_an_older_samconfig_s_reservation_that_cannot_keep_100_unreserved(
        tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    # GIVEN a limit of 50, and AubeBot's environment with the reservation an older samconfig wrote
    # (FetcherReservedConcurrency=1, set by hand again: heed samconfig drops it)
    with running_emulator(tmp_path / "emulator.log", {"MOTO_LAMBDA_CONCURRENCY_QUOTA": "50"}) as low:
        _as_the_account(monkeypatch, low, project)
        config = project / "samconfig.toml"
        saved = config.read_text(encoding="utf-8")
        monkeypatch.setattr("heed.deploy._overrides", lambda path, env: _with_reservation(path, env))
        try:
            line = _refused_once(*_deploy(capfd))
        finally:
            config.write_text(saved, encoding="utf-8")
    # THEN one line: what it reserves, and the request for 101 (100 unreserved + 1)
    assert line.startswith("heed deploy: preflight: Lambda concurrent executions: limit 50, 50 unreserved "
                           "(GetAccountSettings); the stack reserves 1 (FetcherFunction 1) and runs up to 3 at once")
    assert line.endswith("its reservation would leave 49 unreserved where Lambda keeps 100: aws service-quotas "
                         "request-service-quota-increase --service-code lambda --quota-code L-B99A9384 "
                         "--desired-value 101")


def _with_reservation(config: Path, env: str) -> str:
    import tomllib

    data = tomllib.loads(config.read_text(encoding="utf-8"))
    return str(data[env]["deploy"]["parameters"]["parameter_overrides"]) + " FetcherReservedConcurrency=1"


@pytest.mark.slow
def test_preflight_refuses_when_the_region_s_vpcs_are_used_up(
        emulator: Emulator, project: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    # GIVEN an account with the default VPC and four more: 5 of the default quota of 5
    _as_the_account(monkeypatch, emulator, project)
    ec2 = emulator.session(REGION).client("ec2")
    for n in range(4):
        ec2.create_vpc(CidrBlock=f"10.{n}.0.0/16")
    # WHEN AubeBot is deployed with EgressMode nat-instance (the default: one VPC)
    line = _refused_once(*_deploy(capfd))
    # THEN one line: the quota as Service Quotas gives it, and the request for 6
    assert line == ("heed deploy: preflight: VPCs per Region: 5 of 5 in use (Service Quotas); the stack creates 1: "
                    "aws service-quotas request-service-quota-increase --service-code vpc --quota-code L-F678F1CE "
                    "--desired-value 6")


@pytest.mark.slow
def test_preflight_refuses_when_the_region_s_internet_gateways_are_used_up(
        emulator: Emulator, project: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    # GIVEN the default VPC's gateway and four more
    _as_the_account(monkeypatch, emulator, project)
    ec2 = emulator.session(REGION).client("ec2")
    for _ in range(4):
        ec2.create_internet_gateway()
    # WHEN AubeBot is deployed
    line = _refused_once(*_deploy(capfd))
    # THEN one line naming the internet gateway quota
    assert line == ("heed deploy: preflight: Internet gateways per Region: 5 of 5 in use (Service Quotas); the stack "
                    "creates 1: aws service-quotas request-service-quota-increase --service-code vpc --quota-code "
                    "L-A4707A72 --desired-value 6")


@pytest.mark.slow
def test_preflight_refuses_when_the_region_s_elastic_ips_are_used_up(
        emulator: Emulator, project: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    # GIVEN five Elastic IPs kept (as failed tries of a stack keep theirs)
    _as_the_account(monkeypatch, emulator, project)
    ec2 = emulator.session(REGION).client("ec2")
    for _ in range(5):
        ec2.allocate_address(Domain="vpc")
    # WHEN AubeBot is deployed
    line = _refused_once(*_deploy(capfd))
    # THEN one line; moto's Service Quotas knows no EC2 quota, so AWS's default is used, and said
    assert line == ("heed deploy: preflight: EC2-VPC Elastic IPs: 5 of 5 in use (AWS's default; Service Quotas did "
                    "not answer); the stack creates 1: aws service-quotas request-service-quota-increase "
                    "--service-code ec2 --quota-code L-0263D0A3 --desired-value 6")


@pytest.mark.slow
def test_preflight_says_every_shortfall_at_once_one_line_each(
        emulator: Emulator, project: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    # GIVEN VPCs, gateways and addresses all used up
    _as_the_account(monkeypatch, emulator, project)
    ec2 = emulator.session(REGION).client("ec2")
    for n in range(4):
        ec2.create_vpc(CidrBlock=f"10.{n}.0.0/16")
        ec2.create_internet_gateway()
    for _ in range(5):
        ec2.allocate_address(Domain="vpc")
    # WHEN AubeBot is deployed
    code, out, err = _deploy(capfd)
    # THEN three lines, exit 2
    assert code == 2
    lines = [line.split(":", 3)[2].strip() for line in err.splitlines() if line.startswith("heed deploy: preflight:")]
    assert lines == ["VPCs per Region", "Internet gateways per Region", "EC2-VPC Elastic IPs"], err


@pytest.mark.slow
@pytest.mark.parametrize("bot", ["aubebot", "wannadobot"])
def test_a_healthy_account_passes_the_preflight(
        emulator: Emulator, project: Path, monkeypatch: pytest.MonkeyPatch, bot: str) -> None:
    # GIVEN a new account (the default VPC and its gateway, AWS's default quotas)
    _as_the_account(monkeypatch, emulator, project)
    parameters = dict(p.split("=", 1) for p in deploy_env(load_profile(bot)).parameter_overrides().split())
    # WHEN the preflight reads it for the bot's stack
    findings = preflight(boto3.session.Session(region_name=REGION), f"{bot}-preflight",
                         load_template(project / "template.yaml"), parameters)
    # THEN nothing is short, and every check said what it found
    assert [f.line for f in findings if f.short] == []
    lines = "\n".join(f.line for f in findings)
    assert "Lambda concurrent executions: limit 1000, 1000 unreserved" in lines
    assert "VPCs per Region: 1 of 5 in use (Service Quotas); the stack creates 1" in lines
    assert "Internet gateways per Region: 1 of 5 in use" in lines
    assert "EC2-VPC Elastic IPs: 0 of 5 in use (AWS's default; Service Quotas did not answer)" in lines
    if bot == "wannadobot":  # PublishInfoPage=cloudfront: one distribution
        assert "CloudFront distributions per account: 0 of 200 in use" in lines
    else:
        assert "CloudFront: the stack creates no distribution" in lines


def test_without_credentials_the_preflight_is_skipped_in_one_line(
        project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import heed.deploy

    # GIVEN a machine without AWS set up (a dry run needs no credentials)
    without_aws(monkeypatch, tmp_path)
    # WHEN the preflight is asked for
    heed.deploy.preflight(REGION, None, "aubebot-preflight", load_template(project / "template.yaml"), {})
    # THEN it says in one line on stderr that it was skipped, and refuses nothing
    out, err = capsys.readouterr()
    assert (out, err) == ("", "heed deploy: preflight skipped: no AWS credentials to read the account's quotas "
                              "with\n")

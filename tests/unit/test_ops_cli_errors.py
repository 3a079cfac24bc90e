"""The operator commands on a stack (sources, block, purge, explain): AWS's "no" and the user's
mistakes in one line, a non-zero exit, never a traceback."""
from __future__ import annotations

from pathlib import Path

import pytest

from heed.cli import main

from tests.support.stack import without_aws


@pytest.fixture
def no_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    return without_aws(monkeypatch, tmp_path)


COMMANDS = [["blocks"], ["block", "example.com"], ["unblock", "example.com"], ["purge", "example.com"],
            ["sources", "list"], ["sources", "show", "x"], ["sources", "reopen", "x"], ["sources", "remove", "x"],
            ["explain", "https://example.com/"]]


def _name(command: list[str]) -> str:
    return " ".join(command[:2]) if command[0] == "sources" else command[0]


@pytest.mark.parametrize("command", COMMANDS)
def test_on_a_stack_without_a_region(capsys: pytest.CaptureFixture[str], no_aws: pytest.MonkeyPatch,
                                     command: list[str]) -> None:
    code = main([*command, "--stack", "heed-aubebot"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.strip().splitlines() == [
        f"heed {_name(command)}: no AWS region: give --region or set AWS_REGION"]


@pytest.mark.parametrize("command", COMMANDS)
def test_on_a_stack_without_credentials(capsys: pytest.CaptureFixture[str], no_aws: pytest.MonkeyPatch,
                                        command: list[str]) -> None:
    code = main([*command, "--stack", "heed-aubebot", "--region", "eu-west-1"])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.strip().splitlines() == [f"heed {_name(command)}: no AWS credentials (configure them as for the "
                                        "AWS CLI, or give --profile)"]


@pytest.mark.parametrize("command", COMMANDS)
def test_with_an_unknown_aws_profile(capsys: pytest.CaptureFixture[str], no_aws: pytest.MonkeyPatch,
                                     command: list[str]) -> None:
    code = main([*command, "--stack", "heed-aubebot", "--profile", "ops"])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.strip().splitlines() == [
        f"heed {_name(command)}: no AWS profile named 'ops' (see ~/.aws/config)"]


@pytest.mark.parametrize("command", [c for c in COMMANDS if c[0] != "explain"])
def test_a_target_is_required(capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    assert main(command) == 2  # argparse's mistake, told in one line like every other
    _, err = capsys.readouterr()
    [line] = err.strip().splitlines()
    assert "one of the arguments --stack --state is required" in line


def test_explain_flags_of_the_state_form_with_out(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["explain", "https://example.com/", "--out", str(tmp_path), "--json"])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.strip() == "heed explain: --region, --profile, --bot and --json go with --stack or --state, not --out"


def test_explain_a_bad_url_on_a_state_dir(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["block", "example.com", "--state", str(tmp_path / "s")]) == 0
    capsys.readouterr()
    code = main(["explain", "not a url", "--state", str(tmp_path / "s"), "--bot", "aubebot"])
    _, err = capsys.readouterr()
    assert code == 2 and err.strip() == "heed explain: 'not a url' is not an absolute http(s) URL"
    code = main(["explain", "https://example.com/", "--state", str(tmp_path / "s")])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.strip() == f"heed explain: which bot? state {tmp_path / 's'} does not say: give --bot NAME"

"""`heed deploy`: every mistake it can tell before it runs anything is one line and exit 2, never
a traceback: no project, no SAM CLI, no region, no credentials, a profile still to write or
borrowing its base bot's identity. And `--guided` asks what no profile decides."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from heed.cli import main
from heed.deploy import GUIDED_PARAMETERS, guided_answers
from heed.local.resources import load_template
from heed.ownbot import new_bot_text

from tests.support.bots import own_identity
from tests.support.project import ROOT


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with the template, a stand-in SAM CLI (never run here) and no AWS anywhere."""
    shutil.copy(ROOT / "template.yaml", tmp_path / "template.yaml")
    fake = tmp_path / "sam"
    fake.write_text("#!/bin/sh\nexit 99\n", encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SAM", str(fake))
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                 "AWS_SESSION_TOKEN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    (tmp_path / "ownbot.yaml").write_text(json.dumps(own_identity("aubebot")), encoding="utf-8")
    return tmp_path


def deploy(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["deploy", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_outside_a_project_it_says_where_to_run(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "template.yaml").unlink()
    code, _, err = deploy(capsys, "--bot", "aubebot", "--stack", "aube", "--dry-run")
    assert code == 2
    assert one_line(err) == (f"heed deploy: no template.yaml in {project}: run heed deploy in the project "
                             "(a Heed checkout)")


def test_without_sam_cli_one_line_says_so(project: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import heed.local.root

    monkeypatch.setenv("SAM", str(project / "absent"))
    (project / "bin").mkdir()
    monkeypatch.setenv("PATH", str(project / "bin"))
    monkeypatch.setattr(heed.local.root, "ROOT", project)  # no .venv-tools here either
    code, _, err = deploy(capsys, "--bot", "aubebot", "--stack", "aube", "--dry-run")
    assert code == 2 and one_line(err) == ("heed deploy: no SAM CLI: install it (make tools, or pip install "
                                           "aws-sam-cli) or set SAM=/path/to/sam")


def test_without_a_region_one_line_says_so(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = deploy(capsys, "--bot", "ownbot.yaml", "--stack", "own", "--dry-run")
    assert code == 2
    assert one_line(err) == "heed deploy: no AWS region: give --region, set AWS_REGION or give the AWS profile a region"


def test_without_credentials_one_line_says_so_and_a_dry_run_needs_none(
        project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import heed.deploy

    code, _, err = deploy(capsys, "--bot", "ownbot.yaml", "--stack", "own", "--region", "eu-west-1")
    assert code == 2
    assert one_line(err) == "heed deploy: no AWS credentials (configure them as for the AWS CLI, or give --profile)"
    # a dry run goes past that point, to the conformance gate
    monkeypatch.setattr(heed.deploy, "conformance_gate", lambda *a: (_ for _ in ()).throw(
        heed.deploy.PromiseBroken("gate reached")))
    code, _, err = deploy(capsys, "--bot", "ownbot.yaml", "--stack", "own", "--region", "eu-west-1", "--dry-run")
    assert (code, one_line(err)) == (1, "heed deploy: gate reached")


def test_an_unknown_aws_profile_is_one_line(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = deploy(capsys, "--bot", "ownbot.yaml", "--stack", "own", "--profile", "nobody", "--dry-run")
    assert code == 2 and one_line(err) == "heed deploy: no AWS profile named 'nobody' (see ~/.aws/config)"


def test_a_borrowed_identity_is_refused_in_one_line_naming_the_keys(project: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (project / "fast.yaml").write_text("extends: aubebot\npoliteness:\n  min_delay_s: 2\n", encoding="utf-8")
    code, _, err = deploy(capsys, "--bot", "fast.yaml", "--stack", "fast", "--region", "eu-west-1", "--dry-run")
    assert code == 2
    assert one_line(err).startswith("heed deploy: fast.yaml: identity inherited from aubebot: name, user_agent, "
                                    "robots_token, info_url, contact, info_page.texts (")
    assert not (project / "samconfig.toml").exists()


def test_a_profile_still_to_write_is_one_line_per_key(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "mybot.yaml").write_text(new_bot_text("mybot", "nl", "wannadobot"), encoding="utf-8")
    code, _, err = deploy(capsys, "--bot", "mybot.yaml", "--stack", "mine", "--region", "eu-west-1", "--dry-run")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 12 and "Traceback" not in err
    assert lines[0] == ("heed deploy: mybot.yaml: user_agent: still to write (replace "
                        "'Mybot/0.1 (+https://write-me.invalid/mybot)')")
    assert lines[-2] == "heed deploy: mybot.yaml: info_page.texts.en.keeps[0]: still to write (what we keep and why " \
                        "(in English))"
    assert lines[-1] == "heed deploy: mybot.yaml: usage: still to write (a list of uses: train-ai, ai-use, search " \
                        "([] for none))"


@pytest.mark.parametrize(("argv", "message"), [
    (["--bot", "ownbot.yaml", "--stack", "1st"], "--stack: '1st' is not a stack name (a letter, then letters, "
                                                  "digits and '-')"),
    (["--bot", "ownbot.yaml", "--stack", "own", "--force", "  "], "--force: give the reason the promise is broken "
                                                                   "anyway (it is recorded on the stack)"),
    (["--bot", "nope.yaml", "--stack", "own"], "nope.yaml: no such profile file and not a built-in bot ("),
])
def test_command_mistakes_are_one_line(argv: list[str], message: str, project: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = deploy(capsys, *argv, "--dry-run")
    assert code == 2 and one_line(err).startswith(f"heed deploy: {message}")


def test_a_bot_of_its_own_may_not_take_a_built_in_name(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "aube2.yaml").write_text(json.dumps({**own_identity("praha-x"), "name": "aubebot"}), encoding="utf-8")
    code, _, err = deploy(capsys, "--bot", "aube2.yaml", "--stack", "a2", "--region", "eu-west-1", "--dry-run")
    assert code == 2 and one_line(err) == ("heed deploy: aube2.yaml: name: 'aubebot' is a built-in bot's; a bot of "
                                           "its own needs its own name")


def test_guided_asks_the_region_the_profile_and_each_operator_parameter(capsys: pytest.CaptureFixture[str]) -> None:
    template = load_template(ROOT / "template.yaml")
    asked: list[str] = []
    answers = iter(["", "ops", "not an address", "ops@example.org"])

    def ask(question: str) -> str:
        asked.append(question)
        return next(answers)

    region, profile, values = guided_answers(ask, template, {}, "eu-west-1", None)
    # THEN Enter keeps the default, a value the template refuses is asked again
    assert (region, profile, values) == ("eu-west-1", "ops", {"AlarmEmail": "ops@example.org"})
    assert asked[0] == "AWS region [eu-west-1]: " and asked[2] == asked[3]
    assert asked[2].startswith("AlarmEmail: e-mail address the stack's alarms are sent to")
    assert "'not an address' is not valid here" in capsys.readouterr().err
    assert all(g.parameter in template["Parameters"] for g in GUIDED_PARAMETERS)

"""samconfig.toml's environments beyond the five: a bot of its own recorded with its profile file,
the operator's choices (stack name, region, AWS profile, AlarmEmail) kept when the file is written
again, a borrowed identity refused in one line (exit 2)."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from heed_core.bundle import content_hash
from heed_core.profile import BUILTIN_BOTS, load_profile

from heed.samconfig import EnvChoices, main, read_envs, render_samconfig, write_env

from tests.support.bots import own_identity


def _env(path: Path, bot: str) -> dict[str, str]:
    return tomllib.loads(path.read_text(encoding="utf-8"))[bot]["deploy"]["parameters"]


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "samconfig.toml"
    path.write_text(render_samconfig(), encoding="utf-8")
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "ownbot.yaml").write_text(json.dumps(own_identity("aubebot")), encoding="utf-8")
    return path


def test_a_bot_of_its_own_gets_an_environment_recorded_with_its_profile(config: Path) -> None:
    env, choices = write_env(config, str(config.parent / "bots" / "ownbot.yaml"),
                             EnvChoices(stack_name="own-prod", region="eu-north-1"))
    text = config.read_text(encoding="utf-8")
    assert "# profile: bots/ownbot.yaml\n[ownbot.deploy.parameters]\n" in text
    params = _env(config, "ownbot")
    sha = content_hash(load_profile(str(config.parent / "bots" / "ownbot.yaml")))
    assert (params["stack_name"], params["s3_prefix"], params["region"]) == ("own-prod", "own-prod", "eu-north-1")
    assert params["parameter_overrides"] == (f"BotName=ownbot ProfileSha256={sha} FetcherBatchSize=1 "
                                             "FetcherMaximumConcurrency=2 AlarmEmail=bot@own.example HeartbeatHours=1")
    assert set(tomllib.loads(text)) == {"version", "default", *BUILTIN_BOTS, "ownbot"}
    # AND the five stay what the profiles give
    for bot in BUILTIN_BOTS:
        assert _env(config, bot) == tomllib.loads(render_samconfig())[bot]["deploy"]["parameters"]
    # AND --check reads its profile again: fresh now, stale once the profile changes
    assert main(["--check", "--path", str(config)]) == 0
    profile = config.parent / "bots" / "ownbot.yaml"
    profile.write_text(json.dumps({**own_identity("aubebot"), "politeness": {"max_in_flight": 2}}), encoding="utf-8")
    assert main(["--check", "--path", str(config)]) == 1
    assert main(["--write", "--path", str(config)]) == 0
    assert "FetcherBatchSize=2" in _env(config, "ownbot")["parameter_overrides"]
    assert _env(config, "ownbot")["stack_name"] == "own-prod"


def test_the_operators_choices_are_kept_and_the_profiles_parameters_written_again(config: Path) -> None:
    # GIVEN an operator who chose AubeBot's stack name, region, AWS profile and alarm e-mail by hand
    text = config.read_text(encoding="utf-8").replace('stack_name = "heed-aubebot"\n', (
        'stack_name = "aube"\nregion = "eu-south-1"\nprofile = "aube-ops"\n')).replace(
        "FetcherBatchSize=1", "FetcherBatchSize=7").replace(
        "AlarmEmail=robot@aube.news", "AlarmEmail=ops@aube.news").replace(
        "FetcherMaximumConcurrency=2", "FetcherMaximumConcurrency=3")
    config.write_text(text, encoding="utf-8")
    # WHEN the file is written again from the profiles
    assert main(["--write", "--path", str(config)]) == 0
    # THEN the profile's number is back, the operator's choices are kept (the fetchers at once too:
    # the account's concurrency is the operator's to spend)
    params = _env(config, "aubebot")
    assert (params["stack_name"], params["region"], params["profile"]) == ("aube", "eu-south-1", "aube-ops")
    assert params["parameter_overrides"] == (f"BotName=aubebot ProfileSha256={content_hash(load_profile('aubebot'))} "
                                             "FetcherBatchSize=1 FetcherMaximumConcurrency=3 AlarmEmail=ops@aube.news "
                                             "HeartbeatHours=1")
    assert main(["--check", "--path", str(config)]) == 0
    assert read_envs(config.read_text())["aubebot"].parameters == (("FetcherMaximumConcurrency", "3"),
                                                                   ("AlarmEmail", "ops@aube.news"))


def test_guided_answers_replace_the_operators_parameters_and_empty_takes_one_out(config: Path) -> None:
    write_env(config, "aubebot", EnvChoices(parameters=(("AlarmEmail", "a@aube.news"), ("EgressMode", "none"))))
    assert _env(config, "aubebot")["parameter_overrides"].endswith(
        " AlarmEmail=a@aube.news HeartbeatHours=1 EgressMode=none")
    # an empty answer takes the operator's value out: the profile's default (its contact) is back
    write_env(config, "aubebot", EnvChoices(parameters=(("AlarmEmail", ""),)))
    assert _env(config, "aubebot")["parameter_overrides"].endswith(
        " AlarmEmail=robot@aube.news HeartbeatHours=1 EgressMode=none")


def test_samconfig_refuses_a_borrowed_identity_in_one_line_naming_the_keys(
        config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    borrowed = config.parent / "bots" / "aube-fast.yaml"
    borrowed.write_text("extends: aubebot\npoliteness:\n  min_delay_s: 2\n", encoding="utf-8")
    before = config.read_text(encoding="utf-8")
    assert main(["--write", "--path", str(config), "--bot", str(borrowed)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        f"heed samconfig: {borrowed}: identity inherited from aubebot: name, user_agent, robots_token, info_url, "
        "contact, info_page.texts (")
    assert config.read_text(encoding="utf-8") == before


def test_a_recorded_profile_that_now_borrows_an_identity_is_refused_on_write(
        config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_env(config, str(config.parent / "bots" / "ownbot.yaml"), EnvChoices())
    (config.parent / "bots" / "ownbot.yaml").write_text(json.dumps({"extends": "aubebot", "name": "ownbot"}))
    assert main(["--write", "--path", str(config)]) == 2
    assert "identity inherited from aubebot: user_agent, robots_token" in capsys.readouterr().err


def test_an_environment_nobody_recorded_is_one_line(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config.write_text(config.read_text() + '[mine.deploy.parameters]\nstack_name = "mine"\n', encoding="utf-8")
    assert main(["--check", "--path", str(config)]) == 2
    assert capsys.readouterr().err == (
        "heed samconfig: samconfig.toml: [mine] is no built-in bot and records no profile file (# profile: FILE "
        "above it); heed writes this file: add a bot with heed deploy\n")


def test_bot_needs_write(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--path", str(config), "--bot", "aubebot"]) == 2
    assert "--bot adds an environment to the file: give --write too" in capsys.readouterr().err

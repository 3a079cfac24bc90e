"""samconfig.toml is generated from the profiles, and the committed file is what they give."""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from heed_core.bundle import content_hash
from heed_core.profile import BUILTIN_BOTS, load_profile, load_profile_data

from heed.samconfig import deploy_env, main, render_samconfig

ROOT = Path(__file__).resolve().parents[2]


def _overrides(bot: str) -> dict[str, str]:
    config = tomllib.loads(render_samconfig())
    text = config[bot]["deploy"]["parameters"]["parameter_overrides"]
    return dict(part.split("=", 1) for part in text.split())


def test_committed_samconfig_is_what_the_profiles_give() -> None:
    assert (ROOT / "samconfig.toml").read_text(encoding="utf-8") == render_samconfig()


def test_one_deploy_environment_per_built_in_bot() -> None:
    config = tomllib.loads(render_samconfig())
    assert config["version"] == 0.1
    assert config["default"]["validate"]["parameters"]["lint"] is True
    assert "build" in config["default"]
    for bot in BUILTIN_BOTS:
        deploy = config[bot]["deploy"]["parameters"]
        assert deploy["stack_name"] == f"heed-{bot}"
        assert deploy["capabilities"] == "CAPABILITY_IAM"
        assert deploy["resolve_s3"] is True and deploy["confirm_changeset"] is True
        assert _overrides(bot)["BotName"] == bot
    assert set(config) == {"version", "default", *BUILTIN_BOTS}


def test_aube_11_aubebot_reserves_nothing_and_runs_two_fetchers_at_once() -> None:
    # AUBE-11: one request at a time over all hosts is the state table's request slot, not a
    # reserved concurrency of 1; its event source mapping runs two fetchers (its minimum): one
    # fetching, one ready for the slot when it is freed.
    assert load_profile("aubebot").get("politeness.max_in_flight") == 1
    assert "FetcherReservedConcurrency" not in _overrides("aubebot")
    assert _overrides("aubebot")["FetcherMaximumConcurrency"] == "2"


def test_no_bot_reserves_concurrency_and_each_runs_at_most_five_fetchers() -> None:
    for bot in BUILTIN_BOTS:
        assert "FetcherReservedConcurrency" not in _overrides(bot), bot
        if load_profile(bot).get("politeness.max_in_flight") is None:
            assert _overrides(bot)["FetcherMaximumConcurrency"] == "5", bot


def test_an_older_files_reserved_concurrency_is_dropped_when_written_again(tmp_path: Path) -> None:
    # GIVEN a samconfig.toml written before the request slots: AubeBot's fetcher reserved 1
    path = tmp_path / "samconfig.toml"
    path.write_text(render_samconfig().replace("FetcherBatchSize=1", "FetcherReservedConcurrency=1 FetcherBatchSize=1"),
                    encoding="utf-8")
    assert "FetcherReservedConcurrency=1" in path.read_text(encoding="utf-8")
    # WHEN it is written again THEN the reservation is gone (a retired parameter, not the operator's)
    assert main(["--write", "--path", str(path)]) == 0
    assert "FetcherReservedConcurrency" not in path.read_text(encoding="utf-8")


def test_wannado_02_reverse_dns_name_comes_from_the_profile() -> None:
    name = load_profile("wannadobot").get("egress.reverse_dns")
    assert name
    assert _overrides("wannadobot")["ReverseDnsName"] == name
    assert "ReverseDnsName" not in _overrides("aubebot")


def test_deploy_env_reads_a_custom_profile() -> None:
    profile = load_profile_data({"extends": "aubebot", "name": "mybot",
                                 "politeness": {"max_in_flight": 3},
                                 "egress": {"reverse_dns": "crawler.example.org"}})
    env = deploy_env(profile)
    # (3 at once, each up to 30 s, in 60 s: 3 records a batch; 3 fetchers holding the slots and one ready)
    # (the alarms reach its contact; its rounds every 15 minutes: the heartbeat's hour)
    assert env.parameter_overrides() == (f"BotName=mybot ProfileSha256={content_hash(profile)} "
                                         "FetcherBatchSize=3 FetcherMaximumConcurrency=4 "
                                         "AlarmEmail=robot@aube.news HeartbeatHours=1 "
                                         "ReverseDnsName=crawler.example.org")


def test_the_alarms_reach_the_operator_or_the_contact_and_the_heartbeat_follows_the_schedules() -> None:
    from heed.samconfig import alarm_email, heartbeat_hours

    aube = load_profile("aubebot")
    assert alarm_email(aube) == aube.get("contact") == "robot@aube.news"
    ops = load_profile_data({"extends": "aubebot", "name": "ops", "operator": {"alarm_email": "ops@aube.news"}})
    assert alarm_email(ops) == "ops@aube.news"
    page = load_profile_data({"extends": "aubebot", "name": "page", "contact": "https://aube.news/contact"})
    assert alarm_email(page) is None  # a contact page is no one to mail: the README says to set one
    # three times the longest gap between rounds: 15 min (1 h), 12 h overnight (36 h), daily (72 h)
    assert heartbeat_hours(aube) == 1
    assert heartbeat_hours(load_profile("praha-x")) == 36
    assert heartbeat_hours(load_profile("springstudiobot")) == 72


def test_check_fails_on_a_stale_file_and_passes_after_write(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "samconfig.toml"
    path.write_text(render_samconfig().replace("FetcherBatchSize=1", "FetcherBatchSize=4"), encoding="utf-8")
    assert main(["--check", "--path", str(path)]) == 1
    assert "FetcherBatchSize=4" in capsys.readouterr().err
    assert main(["--write", "--path", str(path)]) == 0
    assert main(["--check", "--path", str(path)]) == 0


def test_check_of_a_missing_file_fails(tmp_path: Path) -> None:
    assert main(["--check", "--path", str(tmp_path / "absent.toml")]) == 1


def test_no_flag_prints_the_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    assert capsys.readouterr().out == render_samconfig()

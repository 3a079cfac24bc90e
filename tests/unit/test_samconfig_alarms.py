"""samconfig.toml gives the oldest-token alarm each bot's own patience, from its profile."""
from __future__ import annotations

import tomllib
from pathlib import Path

from heed_core.profile import BUILTIN_BOTS, load_profile, load_profile_data

from heed.local.resources import load_template
from heed.samconfig import OLDEST_MESSAGE_ALARM_DEFAULT_S, deploy_env, oldest_message_alarm_s, render_samconfig

ROOT = Path(__file__).resolve().parents[2]


def _overrides(bot: str) -> dict[str, str]:
    text = tomllib.loads(render_samconfig())[bot]["deploy"]["parameters"]["parameter_overrides"]
    return dict(part.split("=", 1) for part in text.split())


def test_the_default_is_the_templates() -> None:
    parameter = load_template(ROOT / "template.yaml")["Parameters"]["OldestMessageAlarmSeconds"]
    assert parameter["Default"] == OLDEST_MESSAGE_ALARM_DEFAULT_S


def test_bots_that_honour_a_crawl_delay_of_a_day_wait_two_days_before_alarming() -> None:
    # GIVEN Praha-X and WannadoBot, which honour a Crawl-delay of up to a day (their pages promise no cap)
    for bot in ("praha-x", "wannadobot"):
        assert load_profile(bot).get("politeness.crawl_delay_cap_s") == 86400
        # THEN a token hidden for a site's day-long Crawl-delay does not page anyone
        assert _overrides(bot)["OldestMessageAlarmSeconds"] == str(2 * 86400)


def test_bots_whose_longest_wait_fits_in_the_default_keep_it() -> None:
    # GIVEN the bots whose gap, Crawl-delay cap, round spacing and retry backoff are all under 30 minutes
    for bot in ("aubebot", "springstudiobot", "subsidieupdate"):
        assert oldest_message_alarm_s(load_profile(bot)) is None
        # THEN samconfig names no threshold: the template's hour applies
        assert "OldestMessageAlarmSeconds" not in _overrides(bot)


def test_round_spacing_and_retry_backoff_count_too() -> None:
    spaced = load_profile_data({"extends": "aubebot", "name": "spaced",
                                "politeness": {"round_spacing_s": 3000, "round_spacing_jitter_s": 600}})
    assert oldest_message_alarm_s(spaced) == 7200
    patient = load_profile_data({"extends": "aubebot", "name": "patient", "responses": {"retry_backoff_s": 5400}})
    assert deploy_env(patient).parameter_overrides().endswith(" OldestMessageAlarmSeconds=10800")


def test_every_bot_has_an_override_only_when_it_differs() -> None:
    for bot in BUILTIN_BOTS:
        value = _overrides(bot).get("OldestMessageAlarmSeconds")
        assert value is None or int(value) > OLDEST_MESSAGE_ALARM_DEFAULT_S, bot

"""Web Bot Auth on AWS: samconfig fills WebBotAuthKeyService and WebBotAuthKeyName from the
profile's key_secret, so the template grants the fetcher that one key and tells it where it is."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from heed_core.profile import BUILTIN_BOTS, ProfileError, load_profile, load_profile_data

from heed.local.resources import load_template
from heed.samconfig import deploy_env, main, render_samconfig, web_bot_auth_key

ROOT = Path(__file__).resolve().parents[2]
AGENT = "https://aube.news/.well-known/http-message-signatures-directory"


def signing(**wba: Any) -> Any:
    return load_profile_data({"extends": "aubebot", "identity": {"web_bot_auth": {"signature_agent": AGENT, **wba}}})


def overrides(text: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in text.split())


@pytest.mark.parametrize(("ref", "service", "name"), [
    ("secretsmanager:heed/aubebot/web-bot-auth", "secretsmanager", "heed/aubebot/web-bot-auth"),
    ("ssm:/heed/aubebot/web-bot-auth", "ssm", "/heed/aubebot/web-bot-auth"),
])
def test_a_signing_bot_names_its_key_to_the_stack(ref: str, service: str, name: str) -> None:
    # GIVEN a bot that signs with a key on AWS
    env = deploy_env(signing(enabled=True, key_secret=ref))
    # THEN its stack gets the service and the name, which the template's pattern accepts
    params = overrides(env.parameter_overrides())
    assert (params["WebBotAuthKeyService"], params["WebBotAuthKeyName"]) == (service, name)
    template = load_template(ROOT / "template.yaml")["Parameters"]
    assert service in template["WebBotAuthKeyService"]["AllowedValues"]
    assert re.fullmatch(template["WebBotAuthKeyName"]["AllowedPattern"], name)
    # AND the fetcher's variable (template: "${Service}:${Name}") is the profile's reference again
    assert f"{service}:{name}" == ref


def test_the_shipped_bots_do_not_sign_and_their_stacks_grant_no_key() -> None:
    config = tomllib.loads(render_samconfig())
    for bot in BUILTIN_BOTS:
        assert web_bot_auth_key(load_profile(bot)) is None
        assert "WebBotAuthKey" not in config[bot]["deploy"]["parameters"]["parameter_overrides"]


def test_a_key_secret_that_is_not_switched_on_grants_nothing() -> None:
    assert web_bot_auth_key(signing(enabled=False, key_secret="ssm:/heed/k")) is None


@pytest.mark.parametrize(("wba", "message"), [
    ({"key_file": "bot.pem"}, r"^aubebot: identity\.web_bot_auth\.key_secret: missing \(a deployed bot reads its key "
                              r"from Secrets Manager or SSM; key_file is for local runs\)$"),
    ({"key_secret": "arn:aws:ssm:eu-west-1:111122223333:parameter/heed/k"},
     r"^aubebot: identity\.web_bot_auth\.key_secret: 'arn:aws:ssm:.*' is an ARN; the template grants a key by its "
     r"name in the stack's own account and region \(write secretsmanager:NAME or ssm:/NAME\)$"),
])
def test_a_key_the_stack_cannot_read_is_refused_in_one_line(wba: dict[str, str], message: str) -> None:
    with pytest.raises(ProfileError, match=message):
        deploy_env(signing(enabled=True, **wba))


def test_samconfig_reports_a_profile_mistake_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    import heed.samconfig as samconfig

    monkeypatch.setattr(samconfig, "load_profile", lambda bot: signing(enabled=True, key_file="bot.pem"))
    assert main([]) == 2  # a profile mistake: exit 2, as every command says one
    err = capsys.readouterr().err
    assert err.startswith("heed samconfig: aubebot: identity.web_bot_auth.key_secret: missing") and err.count("\n") == 1

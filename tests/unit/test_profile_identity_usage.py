"""Issue 13: the profile keys identity.web_bot_auth.* and usage, validated with one clear line."""
from __future__ import annotations

import pytest

from heed_core.identity.settings import WebBotAuthSettings
from heed_core.profile import ProfileError, Spec, load_profile, load_profile_data

AGENT = "https://aube.news/.well-known/http-message-signatures-directory"


def profile(**extra):
    return load_profile_data({"extends": "aubebot", **extra})


def wba(**options):
    return {"identity": {"web_bot_auth": options}}


def test_off_by_default_with_the_default_lifetime():
    settings = WebBotAuthSettings.from_profile(load_profile("aubebot"))
    assert settings == WebBotAuthSettings(enabled=False, key_file=None, key_secret=None, signature_agent=None,
                                          lifetime_s=60)
    # no use is declared unless a profile says so; AubeBot declares its two (none trains)
    assert Spec.__dataclass_fields__["usage"].default == ()
    assert load_profile("aubebot").get("usage") == ["search", "ai-use"]


def test_a_complete_section_is_read_as_typed_settings():
    p = profile(usage=["search"], **wba(enabled=True, key_file="keys/aube.pem", key_secret="ssm:/heed/aube/key",
                                          signature_agent=AGENT, lifetime_s=120))
    settings = WebBotAuthSettings.from_profile(p)
    assert (settings.enabled, settings.key_file, settings.key_secret, settings.lifetime_s) == (
        True, "keys/aube.pem", "ssm:/heed/aube/key", 120.0)
    assert p.get("usage") == ["search"]


@pytest.mark.parametrize("extra, message", [
    (wba(enabeld=True), "identity.web_bot_auth.enabeld: unknown key (did you mean enabled?)"),
    ({"identity": {"webbotauth": {}}}, "identity.webbotauth: unknown key (did you mean web_bot_auth?)"),
    (wba(enabled="yes"), "identity.web_bot_auth.enabled: 'yes' is not valid (must be true or false)"),
    (wba(enabled=True, key_file="k.pem"), "identity.web_bot_auth.signature_agent: missing (required when enabled)"),
    (wba(enabled=True, signature_agent=AGENT), "neither key_file (local) nor key_secret (AWS)"),
    (wba(signature_agent="http://aube.news/"),
     "identity.web_bot_auth.signature_agent: 'http://aube.news/' is not valid"),
    (wba(lifetime_s=0), "identity.web_bot_auth.lifetime_s: 0 is not valid (must be a number of seconds >= 1)"),
    (wba(lifetime_s=172800), "lifetime_s: 172800.0 is not valid"),
    (wba(key_file="-----BEGIN PRIVATE KEY-----\nMC4C...\n-----END PRIVATE KEY-----\n"),
     "the private key itself never goes in a profile"),
    (wba(key_secret="my-secret"), "identity.web_bot_auth.key_secret: 'my-secret' is not valid"),
    ({"usage": "search"}, "usage: 'search' is not valid (must be a list of uses: train-ai, ai-use, search)"),
    ({"usage": ["serach"]}, "usage[0]: 'serach' is not a use (did you mean search?)"),
    ({"usage": ["search", "search"]}, "usage: a use is listed twice"),
])
def test_every_mistake_is_one_line_naming_the_key(extra, message):
    with pytest.raises(ProfileError) as caught:
        profile(**extra)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("secret", ["secretsmanager:heed/aube", "ssm:/heed/aube/key",
                                    "arn:aws:secretsmanager:eu-west-1:123456789012:secret:heed/aube-AbCdEf",
                                    "arn:aws:ssm:eu-west-1:123456789012:parameter/heed/aube/key"])
def test_key_secret_forms(secret):
    assert WebBotAuthSettings.from_profile(profile(**wba(key_secret=secret))).key_secret == secret

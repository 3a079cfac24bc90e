"""The profile a stack carries (heed_core.bundle): one self-contained file, its content hash, and
the load at cold start that refuses any profile but the one the stack was deployed with."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from heed_core.bundle import bundle_text, content_hash, load_deployed, packaged_path
from heed_core.errors import ConfigError
from heed_core.profile import BUILTIN_BOTS, load_profile, load_profile_data

from heed_aws import runtime

from tests.support.bots import own_identity


@pytest.mark.parametrize("bot", BUILTIN_BOTS)
def test_a_packaged_profile_loads_back_as_the_same_profile(bot: str, tmp_path: Path) -> None:
    # GIVEN a profile that extends a bot, written as the stack carries it
    profile = load_profile_data({**own_identity(bot), "politeness": {"min_delay_s": 20}})
    path = packaged_path(tmp_path, "ownbot")
    path.write_text(bundle_text(profile), encoding="utf-8")
    # THEN the file stands alone (no extends:) and reads back as the same profile, hash and all
    assert "extends" not in json.loads(path.read_text(encoding="utf-8"))
    again = load_profile(str(path))
    assert again.data == profile.data and content_hash(again) == content_hash(profile)
    assert bundle_text(again) == bundle_text(profile)  # the same profile is always the same bytes


def test_the_hash_follows_every_key_and_no_spelling() -> None:
    a = load_profile_data({"extends": "aubebot"})
    assert content_hash(a) == content_hash(load_profile("aubebot"))  # however it was written
    assert content_hash(load_profile_data({"extends": "aubebot", "politeness": {"min_delay_s": 1.6}})) != \
        content_hash(a)
    assert len(content_hash(a)) == 64 and int(content_hash(a), 16) >= 0


def test_a_function_reads_the_packaged_bot_and_refuses_any_other_hash(tmp_path: Path) -> None:
    profile = load_profile_data(own_identity("aubebot"))
    packaged_path(tmp_path, "ownbot").write_text(bundle_text(profile), encoding="utf-8")
    assert load_deployed("ownbot", str(tmp_path), content_hash(profile)).data == profile.data
    with pytest.raises(ConfigError, match=r"^ownbot: the profile packaged here has sha256 [0-9a-f]{64}, the stack was "
                                          r"deployed with 0{64} \(ProfileSha256\): deploy again with heed deploy$"):
        load_deployed("ownbot", str(tmp_path), "0" * 64)


def test_a_built_in_bot_is_read_from_the_core_and_checked_too(tmp_path: Path) -> None:
    sha = content_hash(load_profile("praha-x"))
    assert load_deployed("praha-x", str(tmp_path), sha).name == "praha-x"
    with pytest.raises(ConfigError, match="the stack was deployed with"):
        load_deployed("praha-x", str(tmp_path), content_hash(load_profile("aubebot")))


def test_a_bot_that_is_neither_packaged_nor_built_in_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=rf"^HEED_BOT='ghost': not a built-in bot and no {tmp_path}/ghost.json "
                                          r"\(deploy it with heed deploy\)$"):
        load_deployed("ghost", str(tmp_path), None)
    packaged_path(tmp_path, "ghost").write_text(bundle_text(load_profile_data(own_identity("aubebot"))))
    with pytest.raises(ConfigError, match=r"holds the profile of 'ownbot', not of 'ghost' \(HEED_BOT\)"):
        load_deployed("ghost", str(tmp_path), None)


def test_the_runtime_loads_the_profile_the_stack_names(tmp_path: Path) -> None:
    profile = load_profile_data(own_identity("subsidieupdate"))
    packaged_path(tmp_path, "ownbot").write_text(bundle_text(profile), encoding="utf-8")
    env = {"HEED_BOT": "ownbot", runtime.PROFILE_DIR_ENV: str(tmp_path)}
    try:
        runtime.configure(env={**env, runtime.PROFILE_SHA256_ENV: content_hash(profile)})
        assert runtime.profile().name == "ownbot"
        runtime.configure(env={**env, runtime.PROFILE_SHA256_ENV: "f" * 64})
        with pytest.raises(ConfigError, match="the stack was deployed with f{64}"):
            runtime.profile()
    finally:
        runtime.configure()

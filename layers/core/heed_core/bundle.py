"""A profile as a stack carries it: one self-contained file (every `extends:` merged, every
default written), the content hash the stack names, and the load a function does at cold start.

A built-in bot is read from this package (``heed_core/profiles``); any other bot from the file
`heed deploy` packages into the profile layer (``/opt/heed-profiles/<name>.json``). Either way
the function computes the hash of what it loaded and refuses to run when it is not the one the
stack was deployed with (the ``ProfileSha256`` parameter): the stack's output then names exactly
the profile that runs.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from heed_core.errors import ConfigError
from heed_core.profile import BUILTIN_BOTS, Profile, ProfileError, load_profile

__all__ = ["PACKAGED_SUFFIX", "bundle_text", "content_hash", "load_deployed", "packaged_path"]

PACKAGED_SUFFIX = ".json"


def _canonical(profile: Profile) -> str:
    return json.dumps(profile.data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def content_hash(profile: Profile) -> str:
    """sha256 (hex) of the merged profile, every default included: two profiles that behave
    alike in every key hash alike, whatever files they were written in."""
    return hashlib.sha256(_canonical(profile).encode("utf-8")).hexdigest()


def bundle_text(profile: Profile) -> str:
    """The file a stack carries for a bot that is not built in: the merged profile as JSON
    (which YAML reads too), keys sorted, so the same profile is always the same bytes."""
    return json.dumps(profile.data, sort_keys=True, ensure_ascii=False, indent=1) + "\n"


def packaged_path(directory: Path, name: str) -> Path:
    return directory / f"{name}{PACKAGED_SUFFIX}"


def load_deployed(bot: str, directory: str | None, sha256: str | None) -> Profile:
    """The profile a function runs: ``bot``'s packaged file in ``directory`` if there is one,
    else the built-in of that name; checked against ``sha256`` when the stack gives one.
    ``ConfigError`` in one line when there is no such bot or it is not the deployed one."""
    path = packaged_path(Path(directory), bot) if directory else None
    try:
        if path is not None and path.is_file():
            profile = load_profile(str(path))
            if profile.name != bot:
                raise ConfigError(f"{path}: holds the profile of {profile.name!r}, not of {bot!r} (HEED_BOT)")
        elif bot in BUILTIN_BOTS:
            profile = load_profile(bot)
        else:
            where = f" and no {path}" if path is not None else ""
            raise ConfigError(f"HEED_BOT={bot!r}: not a built-in bot{where} (deploy it with heed deploy)")
    except ProfileError as exc:
        raise ConfigError(str(exc)) from exc
    got = content_hash(profile)
    if sha256 and got != sha256:
        raise ConfigError(f"{bot}: the profile packaged here has sha256 {got}, the stack was deployed with "
                          f"{sha256} (ProfileSha256): deploy again with heed deploy")
    return profile

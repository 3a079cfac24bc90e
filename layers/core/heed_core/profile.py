"""Bot profiles: load, merge (`extends:`) and validate the single source of truth for a bot."""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Mapping

import yaml

BUILTIN_BOTS = ("springstudiobot", "praha-x", "wannadobot", "subsidieupdate", "aubebot")
_MAX_EXTENDS_DEPTH = 8


class ProfileError(ValueError):
    """A profile that cannot be used. The message names the key and the reason."""


# --- the schema: dotted key -> (required, check, what it must be) -------------------------

def _num(minimum: float = 0.0) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v >= minimum


def _int(minimum: int = 0) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= minimum


def _choice(*options: str) -> Callable[[Any], bool]:
    return lambda v: v in options


def _str(v: Any) -> bool:
    return isinstance(v, str) and bool(v.strip())


def _bool(v: Any) -> bool:
    return isinstance(v, bool)


_TOKEN = re.compile(r"^[A-Za-z_-]+$")  # RFC 9309 2.2.1: product token characters

SCHEMA: dict[str, tuple[bool, Callable[[Any], bool], str]] = {
    "name": (True, lambda v: isinstance(v, str) and re.fullmatch(r"[a-z0-9][a-z0-9-]{0,40}", v) is not None,
             "a lower-case name of letters, digits and '-'"),
    "user_agent": (True, _str, "a non-empty string"),
    "robots_token": (True, lambda v: isinstance(v, str) and _TOKEN.match(v) is not None,
                     "a product token of letters, '_' and '-' (RFC 9309 2.2.1)"),
    "info_url": (True, lambda v: isinstance(v, str) and v.startswith(("https://", "http://")), "an http(s) URL"),
    "contact": (True, _str, "a non-empty string"),
    "language": (True, _str, "a language code"),
    "politeness.min_delay_s": (True, _num(0), "a number of seconds >= 0"),
    "politeness.crawl_delay_cap_s": (True, _num(0), "a number of seconds >= 0"),
    "politeness.round_spacing_s": (True, _num(0), "a number of seconds >= 0"),
    "politeness.round_spacing_jitter_s": (False, _num(0), "a number of seconds >= 0"),
    "politeness.max_in_flight": (True, lambda v: v is None or _int(1)(v), "null or an integer >= 1"),
    "robots.cache_ttl_s": (True, _num(1), "a number of seconds >= 1"),
    "robots.on_401_403": (True, _choice("allow", "deny"), "allow or deny"),
    "robots.on_4xx": (True, _choice("allow", "deny"), "allow or deny"),
    "robots.on_5xx": (True, _choice("deny", "skip_host"), "deny or skip_host"),
    "robots.on_unreachable": (True, _choice("deny", "skip_host"), "deny or skip_host"),
    "robots.max_bytes": (True, _int(1024), "an integer >= 1024"),
    "robots.max_redirects": (True, _int(0), "an integer >= 0"),
    "responses.on_429": (True, _choice("stop_host_today", "close_source"), "stop_host_today or close_source"),
    "responses.on_403": (True, _choice("stop_host_today", "close_source"), "stop_host_today or close_source"),
    "responses.on_challenge": (True, _choice("stop_host_today", "close_source"), "stop_host_today or close_source"),
    "responses.retries_per_day": (True, _int(0), "an integer >= 0"),
    "responses.retry_backoff_s": (True, _num(0), "a number of seconds >= 0"),
    "redirects.max_hops": (True, _int(0), "an integer >= 0"),
    "conditional_requests": (True, _bool, "true or false"),
    "fetch.connect_timeout_s": (True, _num(0.01), "a number of seconds > 0"),
    "fetch.read_timeout_s": (True, _num(0.01), "a number of seconds > 0"),
    "fetch.total_deadline_s": (True, _num(0.01), "a number of seconds > 0"),
    "fetch.max_bytes.default": (True, _int(1024), "an integer >= 1024"),
    "schedules": (True, lambda v: isinstance(v, list), "a list of {expression, task}"),
    "tasks": (True, lambda v: isinstance(v, dict), "a mapping of task kind to options"),
}

TASK_KINDS = ("feed", "page", "sitemap", "site_check", "subsidy", "agenda")
_TOP_LEVEL = {k.split(".")[0] for k in SCHEMA} | {"extends", "egress", "operator", "description"}
_TOP_LEVEL |= {"identity", "usage"}  # issue 13: checked by _validate_identity_and_usage


@dataclass(frozen=True)
class Schedule:
    expression: str
    task: str


@dataclass(frozen=True)
class Profile:
    """A validated bot profile. ``data`` is the merged mapping; accessors read from it."""

    data: Mapping[str, Any]

    def get(self, dotted: str, default: Any = None) -> Any:
        node: Any = self.data
        for part in dotted.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return default
            node = node[part]
        return node

    @property
    def name(self) -> str:
        return str(self.data["name"])

    @property
    def user_agent(self) -> str:
        return str(self.data["user_agent"])

    @property
    def robots_token(self) -> str:
        return str(self.data["robots_token"])

    @property
    def schedules(self) -> tuple[Schedule, ...]:
        return tuple(Schedule(s["expression"], s["task"]) for s in self.data["schedules"])

    def task(self, kind: str) -> Mapping[str, Any]:
        return self.data.get("tasks", {}).get(kind, {}) or {}

    def max_bytes(self, purpose: str) -> int:
        caps = self.data["fetch"]["max_bytes"]
        return int(caps.get(purpose, caps["default"]))


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Mappings merge key by key; anything else (lists included) is replaced."""
    out = copy.deepcopy(dict(base))
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _read_yaml(text: str, where: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise ProfileError(f"{where}: not valid YAML{at}") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ProfileError(f"{where}: a profile must be a mapping of keys, got {type(data).__name__}")
    return data


def _builtin_text(name: str) -> str:
    return resources.files("heed_core.profiles").joinpath(f"{name}.yaml").read_text(encoding="utf-8")


def _raw(ref: str, base_dir: Path | None, depth: int) -> dict[str, Any]:
    """The merged-but-unvalidated mapping of a built-in name or a file path."""
    if depth > _MAX_EXTENDS_DEPTH:
        raise ProfileError(f"extends: chain deeper than {_MAX_EXTENDS_DEPTH} (a cycle?)")
    if ref in BUILTIN_BOTS or ref == "_defaults":
        data = _read_yaml(_builtin_text(ref), ref)
        here: Path | None = None
        where = ref
    else:
        path = Path(ref)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        if not path.is_file():
            known = ", ".join(BUILTIN_BOTS)
            raise ProfileError(f"{ref}: no such profile file and not a built-in bot ({known})")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ProfileError(f"{path}: cannot read the profile ({type(exc).__name__})") from exc
        data = _read_yaml(text, str(path))
        here = path.parent
        where = str(path)
    parent = data.pop("extends", None)
    if parent is None:
        base = {} if ref == "_defaults" else _raw("_defaults", None, depth + 1)
    elif not isinstance(parent, str):
        raise ProfileError(f"{where}: extends: must be a built-in name or a path")
    else:
        base = _raw(parent, here, depth + 1)
    return deep_merge(base, data)


def validate(data: Mapping[str, Any]) -> Profile:
    for key in data:
        if key not in _TOP_LEVEL:
            raise ProfileError(f"{key}: unknown key (known: {', '.join(sorted(_TOP_LEVEL))})")
    for dotted, (required, check, what) in SCHEMA.items():
        node: Any = data
        present = True
        for part in dotted.split("."):
            if not isinstance(node, Mapping) or part not in node:
                present = False
                break
            node = node[part]
        if not present:
            if required:
                raise ProfileError(f"{dotted}: missing (must be {what})")
            continue
        if not check(node):
            raise ProfileError(f"{dotted}: {node!r} is not valid (must be {what})")
    for i, sched in enumerate(data["schedules"]):
        if not isinstance(sched, Mapping) or not {"expression", "task"} <= set(sched):
            raise ProfileError(f"schedules[{i}]: must be a mapping with expression and task")
        if sched["task"] not in TASK_KINDS:
            raise ProfileError(f"schedules[{i}].task: {sched['task']!r} is not one of {', '.join(TASK_KINDS)}")
        from heed_core.schedule import ScheduleError, parse_expression

        try:
            parse_expression(str(sched["expression"]))
        except ScheduleError as exc:
            raise ProfileError(f"schedules[{i}].expression: {exc}") from exc
    for kind, options in data["tasks"].items():
        if kind not in TASK_KINDS + ("sitemap_fallback",):
            raise ProfileError(f"tasks.{kind}: unknown task kind")
        if options is not None and not isinstance(options, Mapping):
            raise ProfileError(f"tasks.{kind}: {options!r} is not valid (must be a mapping of options)")
    ua_token = re.split(r"[/\s]", str(data["user_agent"]), maxsplit=1)[0]
    if ua_token.lower() != str(data["robots_token"]).lower():
        # COMMON-01: the UA's product token is what robots.txt groups name; a longer token
        # ("AubeBotX" for "AubeBot") would be a different bot to the site owner.
        raise ProfileError(
            f"user_agent: its product token {ua_token!r} is not the robots_token {data['robots_token']!r}")
    if "+" + str(data["info_url"]) not in str(data["user_agent"]):
        raise ProfileError("user_agent: must carry the info_url (COMMON-01: '+' info URL)")
    _validate_identity_and_usage(data)
    return Profile(data=data)


# --- issue 13: identity.web_bot_auth and usage, self-contained until the typed rewrite ---------

_WEB_BOT_AUTH_KEYS = ("enabled", "key_file", "key_secret", "signature_agent", "lifetime_s")


def _unknown_key(where: str, key: Any, known: tuple[str, ...]) -> ProfileError:
    import difflib

    close = difflib.get_close_matches(str(key), known, n=1)
    hint = f"did you mean {close[0]}?" if close else f"known: {', '.join(known)}"
    return ProfileError(f"{where}.{key}: unknown key ({hint})")


def _validate_identity_and_usage(data: Mapping[str, Any]) -> None:
    """``identity.web_bot_auth.*`` (signed requests, off by default) and ``usage`` (what the bot
    does with what it reads, in draft-ietf-aipref-vocab's labels). The private key never goes in
    a profile: only the name of a file or of a secret."""
    from heed_core.usage import USES

    uses = data.get("usage", [])
    if not isinstance(uses, list) or not all(isinstance(u, str) for u in uses):
        raise ProfileError(f"usage: {uses!r} is not valid (must be a list of uses: {', '.join(USES)})")
    for use in uses:
        if use not in USES:
            raise _unknown_key("usage", use, USES)
    if len(set(uses)) != len(uses):
        raise ProfileError("usage: a use is listed twice")
    identity = data.get("identity")
    if identity is None:
        return
    if not isinstance(identity, Mapping):
        raise ProfileError("identity: must be a mapping (identity.web_bot_auth: ...)")
    for key in identity:
        if key != "web_bot_auth":
            raise _unknown_key("identity", key, ("web_bot_auth",))
    wba = identity.get("web_bot_auth") or {}
    if not isinstance(wba, Mapping):
        raise ProfileError("identity.web_bot_auth: must be a mapping of options")
    where = "identity.web_bot_auth"
    for key in wba:
        if key not in _WEB_BOT_AUTH_KEYS:
            raise _unknown_key(where, key, _WEB_BOT_AUTH_KEYS)
    if "enabled" in wba and not _bool(wba["enabled"]):
        raise ProfileError(f"{where}.enabled: {wba['enabled']!r} is not valid (must be true or false)")
    for key in ("key_file", "key_secret"):
        if key in wba:
            if not _str(wba[key]):
                raise ProfileError(f"{where}.{key}: must be a non-empty string")
            if "PRIVATE KEY" in wba[key] or "\n" in wba[key]:
                raise ProfileError(f"{where}.{key}: names where the key is; the private key itself never goes "
                                   "in a profile")
    secret = wba.get("key_secret")
    if secret is not None and not re.match(r"(secretsmanager:.|ssm:/.|arn:aws[a-z-]*:(secretsmanager|ssm):)", secret):
        raise ProfileError(f"{where}.key_secret: {secret!r} is not valid (must be secretsmanager:NAME, ssm:/NAME "
                           "or the ARN of a Secrets Manager secret or an SSM SecureString parameter)")
    agent = wba.get("signature_agent")
    if agent is not None and not (isinstance(agent, str) and re.fullmatch(r"https://[^\s/?#]+(/[^\s#]*)?", agent)):
        raise ProfileError(f"{where}.signature_agent: {agent!r} is not valid (must be the https URL of the key "
                           "directory, e.g. https://example.org/.well-known/http-message-signatures-directory)")
    if "lifetime_s" in wba and not (_num(1)(wba["lifetime_s"]) and wba["lifetime_s"] <= 86400):
        raise ProfileError(f"{where}.lifetime_s: {wba['lifetime_s']!r} is not valid (must be 1 to 86400 seconds)")
    if wba.get("enabled"):
        if agent is None:
            raise ProfileError(f"{where}.signature_agent: missing (required when enabled)")
        if "key_file" not in wba and "key_secret" not in wba:
            raise ProfileError(f"{where}: enabled, but neither key_file (local) nor key_secret (AWS) says where "
                               "the private key is")


def load_profile(ref: str) -> Profile:
    """A built-in bot name or a path to a YAML profile (which may `extends:` a built-in)."""
    return validate(_raw(ref, Path.cwd(), 0))


def load_profile_data(data: Mapping[str, Any]) -> Profile:
    """A profile given as a mapping (tests); `extends:` resolves like in a file."""
    data = dict(data)
    parent = data.pop("extends", None)
    if parent is not None and not isinstance(parent, str):
        raise ProfileError("extends: must be a built-in name or a path")
    base = _raw(parent, Path.cwd(), 1) if parent else _raw("_defaults", None, 1)
    return validate(deep_merge(base, data))

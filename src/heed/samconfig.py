"""samconfig.toml is generated from the bot profiles: one deploy environment per bot, the five
built-in ones and each one `heed deploy` (or `heed samconfig --bot FILE --write`) added.

The parameters that come from a profile are written again from it every time; what the operator
chose for an environment (its stack name, region, AWS profile, and any other parameter such as
EgressMode, EgressAllocationId) is kept. A bot that is not built in is recorded with its profile file
(``# profile: PATH`` above its section), so `--check` and `--write` read it again."""
from __future__ import annotations

import argparse
import difflib
import json
import re
import shlex
import sys
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from heed_core.errors import ConfigError
from heed_core.profile import BUILTIN_BOTS, Profile, ProfileError, load_profile

from heed.stack_params import (
    DEFAULT_FETCHERS,
    FETCHER_TIMEOUT_S,
    HEARTBEAT_DEFAULT_H,
    HEARTBEAT_MAX_H,
    OLDEST_MESSAGE_ALARM_DEFAULT_S,
    DeployEnv,
    alarm_email,
    deploy_env,
    fetcher_batch_size,
    fetcher_max_concurrency,
    heartbeat_hours,
    oldest_message_alarm_s,
    publish_info_page,
    web_bot_auth_key,
)

# What a profile decides of its stack lives in heed.stack_params; it is named here too, where
# callers import it.
__all__ = ["DEFAULT_FETCHERS", "FETCHER_TIMEOUT_S", "HEARTBEAT_DEFAULT_H", "HEARTBEAT_MAX_H", "HEADER",
           "OLDEST_MESSAGE_ALARM_DEFAULT_S", "PROFILE_PARAMETERS", "RETIRED_PARAMETERS", "DeployEnv", "EnvChoices",
           "SamconfigError", "alarm_email", "deploy_env", "env_choices", "fetcher_batch_size",
           "fetcher_max_concurrency", "heartbeat_hours", "main", "oldest_message_alarm_s", "own_profile",
           "publish_info_page", "read_envs", "record_ref", "render_samconfig", "run", "web_bot_auth_key",
           "write_env"]

HEADER = (
    "# Generated from the bot profiles by `heed samconfig --write` and `heed deploy`: the five in\n"
    "# layers/core/heed_core/profiles/*.yaml and each bot of its own recorded below (# profile: FILE).\n"
    "# Change the profile and regenerate (`heed samconfig --check` in CI); a stack name, region, AWS\n"
    "# profile or other parameter (EgressMode, EgressAllocationId) set here by hand is kept.\n"
    "# Deploy one bot: heed deploy --bot <bot> --stack <stack>, or sam deploy --config-env <bot>\n"
)


# The parameters a profile decides; every other one in an environment is the operator's. AlarmEmail
# is the operator's too, the profile's address (operator.alarm_email, its contact) only its default,
# and so is FetcherMaximumConcurrency (the account's quota is the operator's to spend).
PROFILE_PARAMETERS = ("BotName", "ProfileSha256", "FetcherBatchSize",
                      "HeartbeatHours", "ReverseDnsName", "BedrockModelId", "OldestMessageAlarmSeconds",
                      "WebBotAuthKeyService", "WebBotAuthKeyName", "PublishInfoPage", "Desk")
# What samconfig once wrote and writes no more: dropped from a file when it is written again.
# FetcherReservedConcurrency (AUBE-11 as reserved concurrency 1) broke every stack on an account
# whose concurrency quota is under 101, and a FIFO event source mapping ignores it: AUBE-11 is
# held by the store's request slots now (heed_core.crawl), and the parameter defaults to 0.
RETIRED_PARAMETERS = ("FetcherReservedConcurrency",)
_RECORD = re.compile(r"# profile: (.+)")
_SECTION = re.compile(r"\[([a-z0-9][a-z0-9-]*)\.deploy\.parameters\]")


class SamconfigError(ConfigError):
    """samconfig.toml cannot be read or written as asked: one line, exit 2."""

    code = "samconfig"


@dataclass(frozen=True)
class EnvChoices:
    """What the operator chose for one environment, kept when it is written again."""

    stack_name: str | None = None
    region: str | None = None
    aws_profile: str | None = None
    parameters: tuple[tuple[str, str], ...] = ()  # parameters no profile decides (EgressMode, ...)
    profile_ref: str | None = None  # a bot that is not built in: its profile file, as recorded

    def with_parameters(self, values: Mapping[str, str]) -> EnvChoices:
        """These operator parameters set (an empty value: taken out), the others kept."""
        kept = {k: v for k, v in self.parameters if k not in values}
        kept.update({k: v for k, v in values.items() if v != ""})
        return replace(self, parameters=tuple(kept.items()))


def _toml_str(value: str) -> str:
    # A JSON string of printable ASCII is a valid TOML basic string.
    return json.dumps(value, ensure_ascii=True)


def read_envs(text: str, where: str = "samconfig.toml") -> dict[str, EnvChoices]:
    """Every bot environment of a samconfig.toml, with what its operator chose, in file order."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SamconfigError(f"{where}: not valid TOML ({exc})") from exc
    refs: dict[str, str] = {}
    lines = text.splitlines()
    for before, line in zip([""] + lines, lines, strict=False):
        section, record = _SECTION.fullmatch(line.strip()), _RECORD.fullmatch(before.strip())
        if section and record:
            refs[section.group(1)] = record.group(1).strip()
    envs = {}
    for env, commands in data.items():
        if env in ("version", "default") or not isinstance(commands, dict):
            continue
        params = (commands.get("deploy") or {}).get("parameters") or {}
        try:
            overrides = [tuple(p.split("=", 1)) for p in shlex.split(str(params.get("parameter_overrides", "")))]
        except ValueError as exc:
            raise SamconfigError(f"{where}: [{env}] parameter_overrides: {exc}") from exc
        envs[env] = EnvChoices(
            stack_name=params.get("stack_name"), region=params.get("region"), aws_profile=params.get("profile"),
            parameters=tuple((k, v) for k, v in overrides if k not in PROFILE_PARAMETERS + RETIRED_PARAMETERS),
            profile_ref=refs.get(env))
    return envs


def _parameter(key: str, value: str) -> str:
    # SAM reads Key=Value, or Key="Value" for a value with spaces (shlex.split reads both back).
    if re.fullmatch(r"[^\s\"'\\]*", value):
        return f"{key}={value}"
    if '"' in value or "\\" in value:
        raise SamconfigError(f"parameter {key}: {value!r} holds a quote or a backslash")
    return f'{key}="{value}"'


def _section(env: DeployEnv, choices: EnvChoices) -> list[str]:
    stack = choices.stack_name or env.stack_name
    # The profile's parameters in their order, the operator's value in the place of one it set
    # (AlarmEmail, FetcherMaximumConcurrency), then the operator's own.
    mine = dict(choices.parameters)
    ours = [p.split("=", 1) for p in shlex.split(env.parameter_overrides())]
    merged = [(k, mine.pop(k, v)) for k, v in ours] + list(mine.items())
    overrides = " ".join(_parameter(k, v) for k, v in merged)
    lines = [f"# profile: {choices.profile_ref}"] if choices.profile_ref else []
    lines += [f"[{env.bot}.deploy.parameters]", f"stack_name = {_toml_str(stack)}", f"s3_prefix = {_toml_str(stack)}"]
    if choices.region:
        lines.append(f"region = {_toml_str(choices.region)}")
    if choices.aws_profile:
        lines.append(f"profile = {_toml_str(choices.aws_profile)}")
    lines += ['capabilities = "CAPABILITY_IAM"', "resolve_s3 = true", "confirm_changeset = true",
              f"parameter_overrides = {_toml_str(overrides)}", ""]
    return lines


def own_profile(ref: str, base_dir: Path) -> tuple[str, Profile]:
    """A recorded bot of its own: (its file as samconfig names it, its profile), refused in one
    line (SamconfigError) when it takes its base bot's identity (heed.ownbot)."""
    from heed.botcheck import identity_problem

    path = str(Path(ref) if Path(ref).is_absolute() else base_dir / ref)
    profile = load_profile(path)
    problem = identity_problem(path, profile)
    if problem:
        raise SamconfigError(problem)
    return ref, profile


def render_samconfig(bots: Sequence[str] = BUILTIN_BOTS, envs: Mapping[str, EnvChoices] | None = None,
                     base_dir: Path | None = None) -> str:
    """The whole file: the built-in bots' environments, then each recorded bot of its own (its
    profile file read again from ``base_dir``, the file's folder), with the operator's choices."""
    envs = envs or {}
    lines = [HEADER.rstrip("\n"), "version = 0.1", ""]
    lines += ["[default.build.parameters]", "cached = true", "parallel = true", ""]
    lines += ["[default.validate.parameters]", "lint = true", ""]
    for bot in bots:
        lines += _section(deploy_env(load_profile(bot)), replace(envs.get(bot, EnvChoices()), profile_ref=None))
    for name, choices in envs.items():
        if name in bots:
            continue
        if not choices.profile_ref:
            raise SamconfigError(f"samconfig.toml: [{name}] is no built-in bot and records no profile file "
                                 "(# profile: FILE above it); heed writes this file: add a bot with heed deploy")
        _, profile = own_profile(choices.profile_ref, base_dir or Path.cwd())
        if profile.name != name:
            raise SamconfigError(f"samconfig.toml: [{name}] records {choices.profile_ref}, whose name is "
                                 f"{profile.name!r}")
        lines += _section(deploy_env(profile), choices)
    return "\n".join(lines)


def _current(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SamconfigError(f"{path}: cannot read ({exc.strerror})") from exc


def env_choices(path: Path, bot: str) -> EnvChoices:
    """What the operator chose for ``bot``'s environment in the file at ``path`` (nothing yet: none)."""
    text = _current(path)
    return read_envs(text, str(path)).get(bot, EnvChoices()) if text else EnvChoices()


def record_ref(ref: str, base_dir: Path) -> str:
    """How samconfig names a profile file: relative to its folder when it lies inside."""
    path = Path(ref).resolve()
    try:
        return path.relative_to(base_dir.resolve()).as_posix()
    except ValueError:
        return str(path)


def write_env(path: Path, ref: str, choices: EnvChoices) -> tuple[DeployEnv, EnvChoices]:
    """Add or update one bot's environment (a built-in name or a profile file) in the file at
    ``path``, with ``choices`` over what the operator chose before; every other environment is
    written again from its profile. Returns what the environment was written with."""
    text = _current(path)
    envs = read_envs(text, str(path)) if text else {}
    base_dir = path.resolve().parent
    if ref in BUILTIN_BOTS:
        profile = load_profile(ref)
        recorded = None
    else:
        recorded, profile = own_profile(record_ref(ref, base_dir), base_dir)
        if profile.name in BUILTIN_BOTS:
            raise SamconfigError(f"{ref}: name {profile.name!r} is a built-in bot's; a bot of its own needs its own")
    old = envs.get(profile.name, EnvChoices())
    new = EnvChoices(stack_name=choices.stack_name or old.stack_name, region=choices.region or old.region,
                     aws_profile=choices.aws_profile or old.aws_profile, profile_ref=recorded,
                     parameters=old.with_parameters(dict(choices.parameters)).parameters)
    envs[profile.name] = new
    path.write_text(render_samconfig(envs=envs, base_dir=base_dir), encoding="utf-8")
    return deploy_env(profile), new


def main(argv: Sequence[str] | None = None) -> int:
    """`heed samconfig [--check|--write] [--bot NAME|FILE [--stack STACK]] [--path samconfig.toml]`;
    without --check or --write, print it."""
    parser = argparse.ArgumentParser(prog="heed samconfig", description=__doc__)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 if the file differs from the profiles")
    mode.add_argument("--write", action="store_true", help="write the file from the profiles")
    parser.add_argument("--path", type=Path, default=Path("samconfig.toml"), help="default: ./samconfig.toml")
    parser.add_argument("--bot", help="add or update this bot's environment (a built-in name or a profile file)")
    parser.add_argument("--stack", help="with --bot: the stack's name (default: as before, or heed-<name>)")
    parser.add_argument("--json", action="store_true", help="--check, --write: the outcome as one JSON object")
    args = parser.parse_args(list(argv) if argv is not None else None)
    try:
        return _main(args)
    except ProfileError as exc:
        print(f"heed samconfig: {exc}", file=sys.stderr)
        return 2
    except SamconfigError as exc:
        print(f"heed samconfig: {exc}", file=sys.stderr)
        return 2


def _say(args: argparse.Namespace, text: str, doc: dict[str, object]) -> None:
    print(json.dumps(doc) if args.json else text)


def run(args: argparse.Namespace) -> int:
    """`heed samconfig` with its arguments parsed (``heed.cli``); errors raised, not told."""
    return _main(args)


def _main(args: argparse.Namespace) -> int:
    if args.bot and not args.write:
        raise SamconfigError("--bot adds an environment to the file: give --write too")
    if args.stack and not args.bot:
        raise SamconfigError("--stack goes with --bot")
    if args.bot:
        env, choices = write_env(args.path, args.bot, EnvChoices(stack_name=args.stack))
        _say(args, f"wrote {args.path}: [{env.bot}] stack {choices.stack_name or env.stack_name}",
             {"path": str(args.path), "wrote": True, "bot": env.bot, "stack": choices.stack_name or env.stack_name})
        return 0
    current = _current(args.path)
    envs = read_envs(current, str(args.path)) if current else {}
    wanted = render_samconfig(envs=envs, base_dir=args.path.resolve().parent)
    if args.write:
        if current == wanted:
            _say(args, f"{args.path} is up to date with the profiles (nothing written)",
                 {"path": str(args.path), "wrote": False, "up_to_date": True})
            return 0
        args.path.write_text(wanted, encoding="utf-8")
        _say(args, f"wrote {args.path}", {"path": str(args.path), "wrote": True, "up_to_date": True})
        return 0
    if args.check:
        if current is None:
            print(f"{args.path}: cannot read (No such file or directory); run `heed samconfig --write`",
                  file=sys.stderr)
            return 1
        if current == wanted:
            if args.json:
                print(json.dumps({"path": str(args.path), "up_to_date": True}))
            return 0
        diff = difflib.unified_diff(current.splitlines(True), wanted.splitlines(True), str(args.path), "profiles")
        sys.stderr.writelines(diff)
        print(f"{args.path} is stale: run `heed samconfig --write`", file=sys.stderr)
        if args.json:
            print(json.dumps({"path": str(args.path), "up_to_date": False}))
        return 1
    sys.stdout.write(wanted)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

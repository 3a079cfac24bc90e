"""samconfig.toml is generated from the bot profiles: one deploy environment per built-in bot."""
from __future__ import annotations

import argparse
import difflib
import json
import math
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from heed_core.profile import BUILTIN_BOTS, Profile, ProfileError, load_profile

HEADER = (
    "# Generated from layers/core/heed_core/profiles/*.yaml by `heed samconfig --write`.\n"
    "# Do not edit by hand: change the profile and regenerate (`heed samconfig --check` in CI).\n"
    "# Deploy one bot: sam deploy --config-env <bot>\n"
)

# template.yaml's OldestMessageAlarmSeconds default (tests/unit/test_samconfig_alarms.py keeps
# the two equal): a work token older than an hour means a host is starving.
OLDEST_MESSAGE_ALARM_DEFAULT_S = 3600
# template.yaml's FetcherFunction Timeout (the same test keeps them equal).
FETCHER_TIMEOUT_S = 60


@dataclass(frozen=True)
class DeployEnv:
    """What one bot's stack is deployed with; every value comes from its profile."""

    bot: str
    fetcher_reserved_concurrency: int
    reverse_dns_name: str | None
    fetcher_batch_size: int = 10
    bedrock_model_id: str | None = None
    oldest_message_alarm_s: int | None = None
    web_bot_auth_key: tuple[str, str] | None = None  # (service, name) of the signing key
    publish_info_page: str = "none"
    alarm_email: str | None = None
    heartbeat_hours: int | None = None

    @property
    def stack_name(self) -> str:
        return f"heed-{self.bot}"

    def parameter_overrides(self) -> str:
        parts = [f"BotName={self.bot}", f"FetcherReservedConcurrency={self.fetcher_reserved_concurrency}",
                 f"FetcherBatchSize={self.fetcher_batch_size}"]
        if self.alarm_email:
            parts.append(f"AlarmEmail={self.alarm_email}")
        if self.heartbeat_hours:
            parts.append(f"HeartbeatHours={self.heartbeat_hours}")
        if self.reverse_dns_name:
            parts.append(f"ReverseDnsName={self.reverse_dns_name}")
        if self.bedrock_model_id:
            parts.append(f"BedrockModelId={self.bedrock_model_id}")
        if self.oldest_message_alarm_s:
            parts.append(f"OldestMessageAlarmSeconds={self.oldest_message_alarm_s}")
        if self.web_bot_auth_key:
            service, name = self.web_bot_auth_key
            parts += [f"WebBotAuthKeyService={service}", f"WebBotAuthKeyName={name}"]
        if self.publish_info_page != "none":
            parts.append(f"PublishInfoPage={self.publish_info_page}")
        return " ".join(parts)


def web_bot_auth_key(profile: Profile) -> tuple[str, str] | None:
    """Where a signing bot's stack reads its key: (``secretsmanager`` | ``ssm``, name), from
    ``identity.web_bot_auth.key_secret``; None for a bot that does not sign. The template grants
    the fetcher that one secret or parameter, by name, in the stack's own account and region."""
    prefix = "identity.web_bot_auth."
    if not profile.get(prefix + "enabled"):
        return None
    ref = profile.get(prefix + "key_secret")
    if not ref:
        raise ProfileError(f"{profile.name}: {prefix}key_secret: missing (a deployed bot reads its key from "
                           "Secrets Manager or SSM; key_file is for local runs)")
    for service, head in (("secretsmanager", "secretsmanager:"), ("ssm", "ssm:")):
        if ref.startswith(head):
            return service, ref[len(head):]
    raise ProfileError(f"{profile.name}: {prefix}key_secret: {ref!r} is an ARN; the template grants a key by its "
                       "name in the stack's own account and region (write secretsmanager:NAME or ssm:/NAME)")


def oldest_message_alarm_s(profile: Profile) -> int | None:
    """The OldestTokenAlarm's threshold when the profile itself may keep a host waiting longer
    than the default allows for: twice the profile's longest wait.

    A token waits, hidden, for its host's next slot: the gap, a Crawl-delay up to the cap
    (Praha-X and WannadoBot honour up to a day), the round spacing with its jitter, or a retry's
    backoff. None where the template's default already covers that."""
    p = profile
    longest = max(float(p.get("politeness.min_delay_s")),
                  float(p.get("politeness.crawl_delay_cap_s")),
                  float(p.get("politeness.round_spacing_s")) + float(p.get("politeness.round_spacing_jitter_s") or 0),
                  float(p.get("responses.retry_backoff_s") or 0))
    wanted = math.ceil(2 * longest)
    return wanted if wanted > OLDEST_MESSAGE_ALARM_DEFAULT_S else None


def publish_info_page(profile: Profile) -> str:
    """The stack's PublishInfoPage: "cloudfront" for a bot that must serve files of its own, its
    ips.json (WANNADO-02: the egress list, machine-readable) or its Web Bot Auth key directory
    (the Signature-Agent URL sites fetch); "none" where the operator's site hosts the page. A
    stack can always be deployed with PublishInfoPage=function-url instead."""
    signs = bool(profile.get("identity.web_bot_auth.enabled"))
    return "cloudfront" if signs or (profile.egress.ips and profile.egress.ips_json_path) else "none"


def fetcher_batch_size(profile: Profile) -> int:
    """The fetcher's SQS BatchSize: the records its turns can surely finish in one invocation, each
    up to a request's whole deadline (fetch.total_deadline_s), politeness.max_in_flight of them
    side by side (AUBE-11's 1: one after another), in the function's timeout."""
    from heed_aws.service import batch_size

    in_flight = profile.get("politeness.max_in_flight")
    return batch_size(float(profile.get("fetch.total_deadline_s")), int(in_flight) if in_flight else 10,
                      float(FETCHER_TIMEOUT_S))


_EMAIL = re.compile(r"[^@\s:/]+@[^@\s]+\.[^@\s]+")
# template.yaml's HeartbeatHours bounds and default (the same test keeps them equal).
HEARTBEAT_DEFAULT_H, HEARTBEAT_MAX_H = 3, 168


def alarm_email(profile: Profile) -> str | None:
    """Who the alarms reach (AlarmEmail): operator.alarm_email, else the bot's contact when it is
    an e-mail address (a contact page URL is no one to mail), else nobody (said in the README)."""
    explicit = profile.get("operator.alarm_email")
    if explicit:
        return str(explicit)
    contact = str(profile.get("contact") or "").removeprefix("mailto:")
    return contact if _EMAIL.fullmatch(contact) else None


def heartbeat_hours(profile: Profile) -> int | None:
    """HeartbeatHours: three times the longest gap between two of the bot's rounds (over a fortnight
    of its schedules), whole hours, at most a week; None where the template's default covers it."""
    from heed_core.schedule import firings

    start = 1_798_761_600.0  # 2027-01-01T00:00:00Z, a Friday: weekdays and weekends both seen
    times = sorted({t for s in profile.schedules for t in firings(s.expression, start, start + 14 * 86400)})
    if len(times) < 2:
        return HEARTBEAT_MAX_H
    longest = max(b - a for a, b in zip(times, times[1:], strict=False))
    hours = min(HEARTBEAT_MAX_H, max(1, math.ceil(3 * longest / 3600)))
    return hours if hours != HEARTBEAT_DEFAULT_H else None


def deploy_env(profile: Profile) -> DeployEnv:
    # AUBE-11: politeness.max_in_flight caps the fetchers running at once (null: no cap).
    in_flight = profile.get("politeness.max_in_flight")
    # WANNADO-02: the published reverse DNS name of the fixed egress IP.
    reverse_dns = profile.get("egress.reverse_dns")
    # WANNADO-10: the LLM extractor is off unless the profile switches it on and names a model.
    agenda = profile.task("agenda")
    model = agenda.get("bedrock_model_id") if agenda.get("extractor") == "bedrock" else None
    return DeployEnv(
        bot=profile.name,
        fetcher_reserved_concurrency=int(in_flight) if in_flight is not None else 0,
        fetcher_batch_size=fetcher_batch_size(profile),
        reverse_dns_name=str(reverse_dns) if reverse_dns else None,
        bedrock_model_id=str(model) if model else None,
        oldest_message_alarm_s=oldest_message_alarm_s(profile),
        web_bot_auth_key=web_bot_auth_key(profile),
        publish_info_page=publish_info_page(profile),
        alarm_email=alarm_email(profile),
        heartbeat_hours=heartbeat_hours(profile),
    )


def _toml_str(value: str) -> str:
    # A JSON string of printable ASCII is a valid TOML basic string.
    return json.dumps(value, ensure_ascii=True)


def render_samconfig(bots: Sequence[str] = BUILTIN_BOTS) -> str:
    lines = [HEADER.rstrip("\n"), "version = 0.1", ""]
    lines += ["[default.build.parameters]", "cached = true", "parallel = true", ""]
    lines += ["[default.validate.parameters]", "lint = true", ""]
    for bot in bots:
        env = deploy_env(load_profile(bot))
        lines += [
            f"[{env.bot}.deploy.parameters]",
            f"stack_name = {_toml_str(env.stack_name)}",
            f"s3_prefix = {_toml_str(env.stack_name)}",
            'capabilities = "CAPABILITY_IAM"',
            "resolve_s3 = true",
            "confirm_changeset = true",
            f"parameter_overrides = {_toml_str(env.parameter_overrides())}",
            "",
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """`heed samconfig [--check|--write] [--path samconfig.toml]`; without a flag, print it."""
    parser = argparse.ArgumentParser(prog="heed samconfig", description=__doc__)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 if the file differs from the profiles")
    mode.add_argument("--write", action="store_true", help="write the file from the profiles")
    parser.add_argument("--path", type=Path, default=Path("samconfig.toml"), help="default: ./samconfig.toml")
    args = parser.parse_args(list(argv) if argv is not None else None)
    try:
        wanted = render_samconfig()
    except ProfileError as exc:
        print(f"heed samconfig: {exc}", file=sys.stderr)
        return 1
    if args.write:
        args.path.write_text(wanted, encoding="utf-8")
        print(f"wrote {args.path}")
        return 0
    if args.check:
        try:
            current = args.path.read_text(encoding="utf-8")
        except OSError as exc:
            print(f"{args.path}: cannot read ({exc.strerror}); run `heed samconfig --write`", file=sys.stderr)
            return 1
        if current == wanted:
            return 0
        diff = difflib.unified_diff(current.splitlines(True), wanted.splitlines(True), str(args.path), "profiles")
        sys.stderr.writelines(diff)
        print(f"{args.path} is stale: run `heed samconfig --write`", file=sys.stderr)
        return 1
    sys.stdout.write(wanted)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

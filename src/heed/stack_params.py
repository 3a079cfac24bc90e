"""The stack parameters a bot's profile decides (heed.samconfig writes them into its samconfig
environment, heed deploy deploys with them): the fetchers' batch and concurrency, the alarms,
the heartbeat, the signing key, the info page, the desk, the profile's hash. Apart from
``heed.samconfig`` (which names them again for the code that imports them there) so that each
file stays small enough to read whole (issue 36)."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from heed_core.profile import Profile, ProfileError

# template.yaml's OldestMessageAlarmSeconds default (tests/unit/test_samconfig_alarms.py keeps
# the two equal): a work token older than an hour means a host is starving.
OLDEST_MESSAGE_ALARM_DEFAULT_S = 3600
# template.yaml's FetcherFunction Timeout (the same test keeps them equal).
FETCHER_TIMEOUT_S = 60
# The fetchers a bot without politeness.max_in_flight runs at once (the event source mapping's
# MaximumConcurrency): a new account's concurrency quota (often 10) holds it beside the scheduler
# and the deliverer, so no invocation is throttled. An operator with more sets more.
DEFAULT_FETCHERS = 5


@dataclass(frozen=True)
class DeployEnv:
    """What one bot's stack is deployed with; every value comes from its profile."""

    bot: str
    reverse_dns_name: str | None
    fetcher_max_concurrency: int = DEFAULT_FETCHERS
    fetcher_batch_size: int = 10
    bedrock_model_id: str | None = None
    oldest_message_alarm_s: int | None = None
    web_bot_auth_key: tuple[str, str] | None = None  # (service, name) of the signing key
    publish_info_page: str = "none"
    profile_sha256: str = ""  # heed_core.bundle.content_hash: the functions refuse any other
    alarm_email: str | None = None
    heartbeat_hours: int | None = None
    desk: bool = False  # the site owners' desk (the profile's desk key)

    @property
    def stack_name(self) -> str:
        return f"heed-{self.bot}"

    def parameter_overrides(self) -> str:
        parts = [f"BotName={self.bot}"]
        if self.profile_sha256:
            parts.append(f"ProfileSha256={self.profile_sha256}")
        parts += [f"FetcherBatchSize={self.fetcher_batch_size}",
                  f"FetcherMaximumConcurrency={self.fetcher_max_concurrency}"]
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
        if self.desk:
            parts.append("Desk=true")
        return " ".join(parts)


def web_bot_auth_key(profile: Profile) -> tuple[str, str] | None:
    """Where a signing bot's stack reads its key: (``secretsmanager`` | ``ssm``, name), from
    ``identity.web_bot_auth.key_secret``; None for a bot that does not sign. The template grants
    the fetcher that one secret or parameter, by name, in the stack's own account and region."""
    prefix = "identity.web_bot_auth."
    wba = profile.identity.web_bot_auth
    if not wba.enabled:
        return None
    ref = wba.key_secret
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
    from heed_core.politeness import longest_gap

    longest = max(longest_gap(profile.politeness), profile.responses.retry_backoff_s)
    wanted = math.ceil(2 * longest)
    return wanted if wanted > OLDEST_MESSAGE_ALARM_DEFAULT_S else None


def publish_info_page(profile: Profile) -> str:
    """The stack's PublishInfoPage: "cloudfront" for a bot that must serve files of its own, its
    ips.json (WANNADO-02: the egress list, machine-readable) or its Web Bot Auth key directory
    (the Signature-Agent URL sites fetch), or a bot with a desk (at /desk/ on the page's host);
    "none" where the operator's site hosts the page. A stack can always be deployed with
    PublishInfoPage=function-url instead (the desk at its own function URL then)."""
    signs = profile.identity.web_bot_auth.enabled
    own_files = signs or (profile.egress.ips and profile.egress.ips_json_path)
    # The desk answers at /desk/ on the info page's host: one distribution serves both.
    return "cloudfront" if own_files or profile.spec.desk else "none"


def fetcher_max_concurrency(profile: Profile) -> int:
    """The fetcher event source mapping's MaximumConcurrency (its minimum is 2): for a bot with
    politeness.max_in_flight N, N invocations holding the N request slots and one more ready to
    take the next slot freed (more would only come back for a slot: AUBE-11's 1 makes 2);
    otherwise, or at most, ``DEFAULT_FETCHERS``. The mapping never invokes past it, so a normal
    round throttles nothing."""
    in_flight = profile.politeness.max_in_flight
    return max(2, min(DEFAULT_FETCHERS, int(in_flight) + 1)) if in_flight else DEFAULT_FETCHERS


def fetcher_batch_size(profile: Profile) -> int:
    """The fetcher's SQS BatchSize: the records its turns can surely finish in one invocation, each
    up to a request's whole deadline (fetch.total_deadline_s), politeness.max_in_flight of them
    side by side (AUBE-11's 1: one after another), in the function's timeout."""
    from heed_aws.service import batch_size

    in_flight = profile.politeness.max_in_flight
    return batch_size(profile.fetch.total_deadline_s, in_flight or 10,
                      float(FETCHER_TIMEOUT_S))


_EMAIL = re.compile(r"[^@\s:/]+@[^@\s]+\.[^@\s]+")
# template.yaml's HeartbeatHours bounds and default (the same test keeps them equal).
HEARTBEAT_DEFAULT_H, HEARTBEAT_MAX_H = 3, 168


def alarm_email(profile: Profile) -> str | None:
    """Who the alarms reach (AlarmEmail): operator.alarm_email, else the bot's contact when it is
    an e-mail address (a contact page URL is no one to mail), else nobody (said in the README)."""
    if profile.operator.alarm_email:
        return profile.operator.alarm_email
    contact = profile.contact.removeprefix("mailto:")
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
    from heed_core import kinds
    from heed_core.bundle import content_hash

    # WANNADO-02: the published reverse DNS name of the fixed egress IP.
    reverse_dns = profile.egress.reverse_dns
    # WANNADO-10: the LLM extractor is off unless the profile switches it on and names a model.
    model = kinds.extractor_model(profile)
    return DeployEnv(
        bot=profile.name,
        fetcher_batch_size=fetcher_batch_size(profile),
        fetcher_max_concurrency=fetcher_max_concurrency(profile),
        reverse_dns_name=reverse_dns or None,
        bedrock_model_id=model or None,
        oldest_message_alarm_s=oldest_message_alarm_s(profile),
        web_bot_auth_key=web_bot_auth_key(profile),
        publish_info_page=publish_info_page(profile),
        profile_sha256=content_hash(profile),
        alarm_email=alarm_email(profile),
        heartbeat_hours=heartbeat_hours(profile),
        desk=profile.spec.desk,
    )

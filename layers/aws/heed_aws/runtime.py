"""Wiring for the handlers: build the services once per warm container, from the environment.

The local runtime calls ``configure`` first to inject its clock, boto3 session, journal tap,
fetch options and request signer; in Lambda nothing is injected and everything comes from env
vars (the Web Bot Auth key from the Secrets Manager secret or SSM parameter they name)."""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import botocore.session

from heed_core import kinds
from heed_core.adapters.http import RequestsTransport
from heed_core.bundle import load_deployed
from heed_core.crawl import Crawler
from heed_core.errors import ConfigError, TransientError
from heed_core.ports import Clock, SystemClock
from heed_core.profile import Profile

from heed_aws.journal import LogJournal, count
from heed_aws.queue import QueueObserver, TokenQueue
from heed_aws.results import AwsResults
from heed_aws.service import TURN_OVERHEAD_S, Budget
from heed_aws.store import DynamoStore

if TYPE_CHECKING:  # the identity package (cryptography) loads only for a bot that signs
    from heed_core.adapters.webhook_post import WebhookPoster
    from heed_core.identity.settings import WebBotAuthSettings
    from heed_core.identity.signing import RequestSigner
    from heed_core.webhook import Endpoint

    from heed_aws.deliverer import Deliveries

# The key's reference as template.yaml sets it ("secretsmanager:NAME" or "ssm:/NAME"): the one
# secret or parameter the fetcher's role may read. Only its name; never the key.
KEY_ENV = "HEED_WEB_BOT_AUTH_KEY"
# Where the profile layer puts a bot that is not built in, and the hash the stack was deployed
# with (template.yaml: the ProfileLayer and the ProfileSha256 parameter; heed_core.bundle).
PROFILE_DIR_ENV = "HEED_PROFILE_DIR"
PROFILE_SHA256_ENV = "HEED_PROFILE_SHA256"


@dataclass
class Overrides:
    clock: Clock | None = None
    session: Any = None
    profile: Profile | None = None
    allow_private: bool = False
    journal_tap: Callable[[str, dict[str, Any]], None] | None = None
    results_tap: Callable[[str, dict[str, Any]], None] | None = None
    resolver: Callable[[str, int], list[str]] | None = None
    queue_observer: QueueObserver | None = None
    signer: RequestSigner | None = None  # the local runtime's (its key file); else built from the environment
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class _Built:
    """The services of this warm container, each built on first use."""

    clients: dict[str, Any] = field(default_factory=dict)
    profile: Profile | None = None
    store: DynamoStore | None = None
    queue: TokenQueue | None = None
    results: AwsResults | None = None
    journal: LogJournal | None = None
    signer: tuple[RequestSigner | None] | None = None  # (None,): built, and the bot does not sign
    crawler: Crawler | None = None
    endpoint: Endpoint | None = None
    poster: WebhookPoster | None = None


_overrides = Overrides()
_built = _Built()


def configure(**kwargs: Any) -> None:
    """Replace the wiring (local runtime, tests). Drops every cached service."""
    global _overrides, _built
    _overrides = Overrides(**kwargs)
    _built = _Built()


def _env(name: str) -> str:
    value = _overrides.env.get(name) or os.environ.get(name)
    if not value:
        raise RuntimeError(f"environment variable {name} is not set")
    return value


def _client(name: str) -> Any:
    if name not in _built.clients:
        if _overrides.session is not None:  # a boto3 session (the local runtime's)
            _built.clients[name] = _overrides.session.client(name)
        else:  # botocore's own: the same clients, without importing boto3 (some 100 ms of a cold start)
            _built.clients[name] = botocore.session.get_session().create_client(name)
    return _built.clients[name]


def client(name: str) -> Any:
    """A client of this container's session (the local runtime's, or botocore's own), made once."""
    return _client(name)


def profile() -> Profile:
    """The bot's profile: the one injected (local runs), else the deployed one, refused in one
    line (``ConfigError``) when it is not the one the stack names (heed_core.bundle)."""
    if _built.profile is None:
        _built.profile = _overrides.profile or load_deployed(
            _env("HEED_BOT"), _overrides.env.get(PROFILE_DIR_ENV) or os.environ.get(PROFILE_DIR_ENV),
            _overrides.env.get(PROFILE_SHA256_ENV) or os.environ.get(PROFILE_SHA256_ENV))
    return _built.profile


def clock() -> Clock:
    return _overrides.clock or SystemClock()


def store() -> DynamoStore:
    if _built.store is None:
        _built.store = DynamoStore(_env("HEED_TABLE"), _client("dynamodb"))
    return _built.store


def queue() -> TokenQueue:
    if _built.queue is None:
        _built.queue = TokenQueue(_env("HEED_QUEUE_URL"), _client("sqs"), observer=_overrides.queue_observer)
    return _built.queue


def results_port() -> AwsResults:
    if _built.results is None:
        _built.results = AwsResults(bot=profile().name, bus_name=_env("HEED_BUS_NAME"), bucket=_env("HEED_BUCKET"),
                                       events_client=_client("events"), s3_client=_client("s3"),
                                    tap=_overrides.results_tap, count=count)
    return _built.results


def parallel_turns() -> int:
    """Turns of one batch run side by side (different hosts), unless the profile caps requests
    at once over all hosts (AUBE-11: one at a time)."""
    limit = profile().politeness.max_in_flight
    return max(1, min(10, int(limit))) if limit else 10


def budget(context: Any) -> Budget:
    """The fetcher invocation's time budget: Lambda's remaining time against the longest turn
    the profile allows (a request's whole deadline, fetch.total_deadline_s, and its commit)."""
    turn_s = profile().fetch.total_deadline_s + TURN_OVERHEAD_S
    return Budget(remaining_s=lambda: context.get_remaining_time_in_millis() / 1000.0, turn_s=turn_s)


def journal() -> LogJournal:
    if _built.journal is None:
        _built.journal = LogJournal(_overrides.journal_tap)
    return _built.journal


def signer() -> RequestSigner | None:
    """The Web Bot Auth signer the profile asks for (None when it does not sign), built once per
    warm container: the private key is read from Secrets Manager or SSM once, not per request.
    ``ConfigError`` for what a person must fix; ``TransientError`` when the service is busy (the
    batch comes back): a signing bot never sends unsigned."""
    if _overrides.signer is not None:
        return _overrides.signer
    if _built.signer is None:
        if not profile().spec.identity.web_bot_auth.enabled:
            _built.signer = (None,)
            return None
        from heed_core.identity.settings import WebBotAuthSettings

        _built.signer = (_aws_signer(WebBotAuthSettings.from_profile(profile())),)
    return _built.signer[0]


def _aws_signer(settings: WebBotAuthSettings) -> RequestSigner:
    from heed_core.identity.keys import IdentityError
    from heed_core.identity.signing import WebBotAuthSigner

    from heed_aws.secrets import SecretUnavailable, load_private_key, parse_key_secret

    ref = _overrides.env.get(KEY_ENV) or os.environ.get(KEY_ENV) or settings.key_secret
    if not ref:
        raise ConfigError(f"identity.web_bot_auth: enabled, but neither {KEY_ENV} (the stack's WebBotAuthKeyName) "
                          "nor key_secret names the private key")
    try:
        service, _ = parse_key_secret(ref)
        key = load_private_key(ref, **{service: _client(service)})
        # Real sites check real time: the signature's created/expires come from the system clock.
        return WebBotAuthSigner.from_settings(settings, key, SystemClock())
    except SecretUnavailable as exc:
        raise TransientError(str(exc)) from exc
    except IdentityError as exc:
        raise ConfigError(str(exc)) from exc


def crawler() -> Crawler:
    if _built.crawler is None:
        p = profile()
        transport = RequestsTransport(
            user_agent=p.user_agent, clock=clock(), allow_private=_overrides.allow_private,
            connect_timeout_s=p.fetch.connect_timeout_s,
            read_timeout_s=p.fetch.read_timeout_s,
            total_deadline_s=p.fetch.total_deadline_s,
            resolver=_overrides.resolver, signer=signer())
        results = results_port()
        render = None
        endpoint = kinds.render_endpoint(p)  # WANNADO-09: the kind whose sources may ask for it
        if endpoint:
            from heed_core.extract.render import RenderClient

            client = RenderClient(transport, endpoint, user_agent=p.user_agent)
            render = lambda url, max_bytes: client.render(url, max_bytes=max_bytes)  # noqa: E731
        extractor = None
        model = kinds.extractor_model(p)  # WANNADO-10: where the profile switches it on
        if model:
            from heed_aws.bedrock import BedrockExtractor

            extractor = BedrockExtractor(model, client=_client("bedrock-runtime"))
        _built.crawler = Crawler(p, store(), transport, journal(), results, clock(), tokens=queue(),
                                 render=render, extractor=extractor)
    return _built.crawler


# --- the webhook's deliverer (template.yaml: DelivererFunction) ------------------------------------

def webhook_endpoint() -> Endpoint:
    """The webhook the stack names, its secret read once per warm container from Secrets Manager
    (``HEED_WEBHOOK_SECRET_ARN``). ``ConfigError`` for what a person must fix (the secret missing,
    not one), ``TransientError`` for what may pass (throttling)."""
    if _built.endpoint is None:
        from heed_core.webhook import Endpoint, WebhookError, check_url, parse_secret

        url, arn = _env("HEED_WEBHOOK_URL"), _env("HEED_WEBHOOK_SECRET_ARN")
        try:
            answer = _client("secretsmanager").get_secret_value(SecretId=arn)
        except Exception as exc:  # noqa: BLE001 - told as a kind of ours, never with the secret
            from botocore.exceptions import ClientError

            code = exc.response.get("Error", {}).get("Code", "") if isinstance(exc, ClientError) else ""
            if code in ("ResourceNotFoundException", "AccessDeniedException", "DecryptionFailure"):
                raise ConfigError(f"ResultsWebhookSecretArn: {code}") from exc
            raise TransientError(f"the webhook's secret: {code or type(exc).__name__}") from exc
        text = str(answer.get("SecretString") or "")
        try:
            _built.endpoint = Endpoint(check_url(url, "ResultsWebhookUrl"),
                                       parse_secret(text, "ResultsWebhookSecretArn's secret"))
        except WebhookError as exc:
            raise ConfigError(str(exc)) from exc
    return _built.endpoint


def poster() -> WebhookPoster:
    if _built.poster is None:
        from heed_core.adapters.webhook_post import WebhookPoster

        _built.poster = WebhookPoster(user_agent=f"heed-webhooks/1 ({os.environ.get('HEED_BOT', 'heed')})")
    return _built.poster


def deliveries() -> Deliveries:
    from heed_aws.deliverer import Deliveries

    return Deliveries(_client("sqs"), _env("HEED_DELIVERY_QUEUE_URL"), _env("HEED_DELIVERY_DLQ_URL"))

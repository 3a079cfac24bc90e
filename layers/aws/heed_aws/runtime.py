"""Wiring for the handlers: build the services once per warm container, from the environment.

The local runtime calls ``configure`` first to inject its clock, boto3 session, journal tap and
fetch options; in Lambda nothing is injected and everything comes from env vars."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable

import boto3

from heed_core.adapters.http import RequestsTransport
from heed_core.crawl import Crawler
from heed_core.ports import Clock, SystemClock
from heed_core.profile import Profile, load_profile

from heed_aws.journal import LogJournal, count
from heed_aws.queue import QueueObserver, TokenQueue
from heed_aws.results import AwsResults
from heed_aws.store import DynamoStore


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
    env: dict[str, str] = field(default_factory=dict)


_overrides = Overrides()
_cache: dict[str, Any] = {}


def configure(**kwargs: Any) -> None:
    """Replace the wiring (local runtime, tests). Drops every cached service."""
    global _overrides
    _overrides = Overrides(**kwargs)
    _cache.clear()


def _env(name: str) -> str:
    value = _overrides.env.get(name) or os.environ.get(name)
    if not value:
        raise RuntimeError(f"environment variable {name} is not set")
    return value


def _client(name: str) -> Any:
    key = f"client:{name}"
    if key not in _cache:
        session = _overrides.session or boto3.session.Session()
        _cache[key] = session.client(name)
    return _cache[key]


def profile() -> Profile:
    if "profile" not in _cache:
        _cache["profile"] = _overrides.profile or load_profile(_env("HEED_BOT"))
    return _cache["profile"]


def clock() -> Clock:
    return _overrides.clock or SystemClock()


def store() -> DynamoStore:
    if "store" not in _cache:
        _cache["store"] = DynamoStore(_env("HEED_TABLE"), _client("dynamodb"))
    return _cache["store"]


def queue() -> TokenQueue:
    if "queue" not in _cache:
        _cache["queue"] = TokenQueue(_env("HEED_QUEUE_URL"), _client("sqs"), observer=_overrides.queue_observer)
    return _cache["queue"]


def results_port() -> AwsResults:
    if "results" not in _cache:
        _cache["results"] = AwsResults(bot=profile().name, bus_name=_env("HEED_BUS_NAME"), bucket=_env("HEED_BUCKET"),
                                       events_client=_client("events"), s3_client=_client("s3"),
                                       tap=_overrides.results_tap, count=count)
    return _cache["results"]


def parallel_turns() -> int:
    """Turns of one batch run side by side (different hosts), unless the profile caps requests
    at once over all hosts (AUBE-11: one at a time)."""
    limit = profile().get("politeness.max_in_flight")
    return max(1, min(10, int(limit))) if limit else 10


def journal() -> LogJournal:
    if "journal" not in _cache:
        _cache["journal"] = LogJournal(_overrides.journal_tap)
    return _cache["journal"]


def crawler() -> Crawler:
    if "crawler" not in _cache:
        p = profile()
        transport = RequestsTransport(
            user_agent=p.user_agent, clock=clock(), allow_private=_overrides.allow_private,
            connect_timeout_s=float(p.get("fetch.connect_timeout_s")),
            read_timeout_s=float(p.get("fetch.read_timeout_s")),
            total_deadline_s=float(p.get("fetch.total_deadline_s")),
            resolver=_overrides.resolver)
        results = results_port()
        render = None
        endpoint = p.task("agenda").get("render_endpoint")
        if endpoint:
            from heed_core.extract.render import RenderClient

            client = RenderClient(transport, endpoint, user_agent=p.user_agent)
            render = lambda url, max_bytes: client.render(url, max_bytes=max_bytes)  # noqa: E731
        extractor = None
        if p.task("agenda").get("extractor") == "bedrock" and p.task("agenda").get("bedrock_model_id"):
            from heed_aws.bedrock import BedrockExtractor

            extractor = BedrockExtractor(p.task("agenda")["bedrock_model_id"], client=_client("bedrock-runtime"))
        _cache["crawler"] = Crawler(p, store(), transport, journal(), results, clock(), tokens=queue(),
                                    render=render, extractor=extractor)
    return _cache["crawler"]

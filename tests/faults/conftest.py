"""Fault injection on the moto stack through the real handlers, seen from the sites' side.

``Faults`` hooks into the botocore session of a ``LocalRun`` (``before-call``): a rule names an
operation and when it fires, and then raises an AWS error (throttling, a 5xx), returns a
made-up answer (a partial PutEvents failure) or kills the invocation on the spot
(``InvocationCrash``: nothing after it runs, its tokens come back after the visibility timeout).
``crawl`` runs a round to the end (redelivering what crashed), and ``check`` holds every run to
the same invariants: each URL fetched once (or the documented, bounded refetch), no result lost
or doubled, no gap shorter than the host's gap."""
from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from heed_core.profile import Profile, load_profile_data
from heed_core.work import Source

from heed.demo.web import RecordingServer, RequestRecord, Site
from heed.local.runtime import InvocationCrash, LocalRun
from heed.outputs import read_jsonl

from tests.support.serve import feed_routes

# The faults suite's loopback addresses (the conformance suites use 127.0.0.100-179).
IPS = tuple(f"127.0.0.{n}" for n in range(180, 200))
GAP = 0.3  # the bots' gap in this suite (their shapes, with small delays)


@dataclass
class Rule:
    op: str  # "dynamodb.PutItem"
    when: Callable[[dict[str, Any]], bool] = lambda params: True
    action: str = "crash"  # crash | throttle | error | condition | denied | partial | call
    times: int = 1  # how many times it fires (-1: always)
    every: int = 1  # fire on every n-th matching call
    seen: int = 0
    fired: int = 0
    call: Callable[[dict[str, Any]], None] | None = None  # action "call": run this, then the call goes on


class Faults:
    """botocore hooks that break chosen calls."""

    def __init__(self) -> None:
        self.rules: list[Rule] = []
        self.lock = threading.Lock()
        self.calls: Counter[str] = Counter()
        self.watched: set[str] = set()
        self.recorded: list[dict[str, Any]] = []  # the parameters of the watched operations' calls

    def record(self, op: str) -> None:
        self.watched.add(op)

    def add(self, op: str, action: str = "crash", *, when: Callable[[dict[str, Any]], bool] = lambda p: True,
            times: int = 1, every: int = 1, call: Callable[[dict[str, Any]], None] | None = None) -> Rule:
        rule = Rule(op, when, action, times, every, call=call)
        self.rules.append(rule)
        return rule

    def attach(self, session: Any) -> None:
        session.events.register("before-parameter-build", self._keep)
        session.events.register("before-call", self._before)

    @staticmethod
    def _keep(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context["fault_params"] = dict(params)  # the call's own parameters (before-call sees the wire form)

    def _before(self, model: Any, context: dict[str, Any], **_: Any) -> Any:
        op = f"{model.service_model.service_name}.{model.name}"
        params = context.get("fault_params") or {}
        fire: Rule | None = None
        with self.lock:
            self.calls[op] += 1
            if op in self.watched:
                self.recorded.append(dict(params))
            for rule in self.rules:
                if rule.op != op or (rule.times >= 0 and rule.fired >= rule.times) or not rule.when(params):
                    continue
                rule.seen += 1
                if rule.seen % rule.every:
                    continue
                rule.fired += 1
                fire = rule
                break
        if fire is not None and fire.action == "call":
            assert fire.call is not None
            fire.call(params)  # outside the lock: the callback may make calls of its own
            return None
        return self._fire(fire, model, params) if fire is not None else None

    @staticmethod
    def _fire(rule: Rule, model: Any, params: dict[str, Any]) -> Any:
        if rule.action == "crash":
            raise InvocationCrash(f"killed before {rule.op}")
        if rule.action == "throttle":
            code = "ProvisionedThroughputExceededException" if rule.op.startswith("dynamodb") else "ThrottlingException"
            raise ClientError({"Error": {"Code": code, "Message": "fault injected"},
                               "ResponseMetadata": {"HTTPStatusCode": 400}}, model.name)
        if rule.action == "error":
            raise ClientError({"Error": {"Code": "InternalFailure", "Message": "fault injected"},
                               "ResponseMetadata": {"HTTPStatusCode": 500}}, model.name)
        if rule.action == "condition":  # the item changed under the write (another writer won)
            raise ClientError({"Error": {"Code": "ConditionalCheckFailedException", "Message": "fault injected"},
                               "ResponseMetadata": {"HTTPStatusCode": 400}}, model.name)
        if rule.action == "denied":  # a permanent fault: the role may not (a misconfigured stack)
            raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "fault injected"},
                               "ResponseMetadata": {"HTTPStatusCode": 400}}, model.name)
        if rule.action == "partial":  # PutEvents: the first entry refused, the others put
            entries = params.get("Entries", [])
            answer = [{"ErrorCode": "InternalFailure", "ErrorMessage": "fault injected"}] + [
                {"EventId": f"fault-{n}"} for n in range(1, len(entries))]
            return None, {"FailedEntryCount": 1, "Entries": answer, "ResponseMetadata": {"HTTPStatusCode": 200}}
        raise AssertionError(rule.action)


def host_commit(host_ip: str, version: int) -> Callable[[dict[str, Any]], bool]:
    """The write of a host's item as ``version`` (1 is the claim of a first turn, 2 its commit...)."""
    def match(params: dict[str, Any]) -> bool:
        item = params.get("Item", {})
        return (item.get("sk", {}).get("S") == "HOST" and host_ip in item.get("pk", {}).get("S", "")
                and item.get("v", {}).get("N") == str(version))
    return match


# --- the web: a few feed sites with articles ------------------------------------------------------

@dataclass
class FaultWeb:
    servers: list[RecordingServer] = field(default_factory=list)

    def start(self, hosts: int, articles: int) -> FaultWeb:
        for h in range(hosts):
            self.servers.append(RecordingServer(Site(name=f"f{h}", routes=feed_routes(articles)), ip=IPS[h]).start())
        return self

    def stop(self) -> None:
        for s in self.servers:
            s.stop()

    def log(self) -> list[RequestRecord]:
        return sorted((r for s in self.servers for r in s.log()), key=lambda r: r.t_start)

    def sources(self) -> list[Source]:
        return [Source(f"feed{h}", f"{s.base_url}/feed.xml", "feed") for h, s in enumerate(self.servers)]


@pytest.fixture
def web() -> Iterator[FaultWeb]:
    w = FaultWeb().start(hosts=3, articles=3)
    yield w
    w.stop()


def profile(**overrides: Any) -> Profile:
    """AubeBot's shape (feeds, then the articles of short items, each read once ever) with a
    small gap, its article caps wide enough for the suite's web, and hosts side by side."""
    data: dict[str, Any] = {"extends": "aubebot",
                            "politeness": {"min_delay_s": GAP, "crawl_delay_cap_s": 1, "max_in_flight": None},
                            "tasks": {"feed": {"article_followup": {"per_source_per_window": 10,
                                                                     "total_per_window": 100}}}}
    for key, value in overrides.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    return load_profile_data(data)


@dataclass
class Crawl:
    run: LocalRun
    out: Path
    faults: Faults

    def requests(self) -> list[dict[str, Any]]:
        return read_jsonl(self.out / "requests.jsonl")

    def items(self) -> list[dict[str, Any]]:
        return read_jsonl(self.out / "items.jsonl")

    def skips(self) -> list[dict[str, Any]]:
        return read_jsonl(self.out / "skips.jsonl")


def crawl(p: Profile, web: FaultWeb, out: Path, faults: Faults | None = None, *,
          before: Callable[[LocalRun], None] | None = None, rounds: int = 1, wait_s: float = 0.0) -> Crawl:
    """Fire the feed round and drain it to the end, handing out again what crashed; with
    ``wait_s``, the clock then moves that far on, every deferred token coming due on the way."""
    faults = faults or Faults()
    run = LocalRun(p, web.sources(), start=time.time(), until=time.time(), out_dir=out, allow_private=True,
                   patience_s=6.0, session_hook=faults.attach)
    run.setup()
    try:
        if before is not None:
            before(run)
        for n in range(rounds):
            run.fire(run.clock.now(), ["feed"])
            for _ in range(12):
                run.drain()
                if not run.redeliver_crashed():
                    break
            if wait_s:
                run.advance_to(run.clock.now() + wait_s)
                while run.redeliver_crashed():
                    run.drain()
            if n + 1 < rounds:
                run.clock.jump_to(run.clock.now() + 900)
        run.out.close({"bot": p.name})
    finally:
        run.close()
    return Crawl(run, out, faults)


def check(web: FaultWeb, c: Crawl, *, refetched: int = 0, articles: int = 3) -> None:
    """The invariants every fault must keep (``refetched``: URLs a crash may have asked twice),
    in the time the bot lives by (the sites log wall-clock time; the runtime's clock jumps over
    idle time, e.g. a visibility timeout that a crashed invocation's tokens wait out)."""
    holds(web, c.items(), at=c.run.clock.at, refetched=refetched, articles=articles)


def holds(web: FaultWeb, results: Sequence[Mapping[str, Any]], *, at: Callable[[float], float] = float,
          refetched: int = 0, articles: int = 3) -> None:
    """What the sites saw and the results say after a crawl through faults, on either engine:
    each page asked once (``refetched`` of them at most twice), every article of every feed read
    (nothing lost), each result reported exactly once, no gap broken (``at``: a site's wall time
    on the bot's clock)."""
    log = web.log()
    per_url = Counter(f"{r.host}{r.path}" for r in log)
    twice = [u for u, n in per_url.items() if n > 1 and not u.endswith("/robots.txt")]
    assert len(twice) <= refetched and all(per_url[u] <= 2 for u in twice), per_url
    pages = {f"{s.host}/a/{i}" for s in web.servers for i in range(articles)}
    assert pages <= set(per_url), sorted(pages - set(per_url))
    ids = Counter(i["id"] for i in results)
    assert ids and max(ids.values()) == 1, [k for k, v in ids.items() if v > 1]
    kinds = Counter(i["detail_type"] for i in results)
    assert kinds == {"item.found": len(web.servers) * articles, "article.read": len(web.servers) * articles}, kinds
    for host, gaps in site_gaps(web, at=at).items():
        assert min(gaps) >= GAP - 0.005, (host, gaps)


def site_gaps(web: FaultWeb, *, at: Callable[[float], float] = float) -> dict[str, list[float]]:
    """Each host's gaps as its site saw them, end of one request to start of the next, in order
    (``at``: a site's wall time on the bot's clock)."""
    by_host: dict[str, list[RequestRecord]] = {}
    for r in web.log():
        by_host.setdefault(r.host, []).append(r)
    return {host: [at(b.t_start) - at(a.t_end) for a, b in pairwise(recs)] for host, recs in by_host.items()}

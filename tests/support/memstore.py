"""In-memory stand-ins for the crawl's ports: a Store with DynamoStore's semantics, a scripted transport.

``MemoryStore`` mirrors ``heed_aws.store.DynamoStore`` rule for rule (tests/unit/test_store_contract.py
runs one test class against both, so they cannot drift). Records are copied through JSON on the way
in and out, as DynamoDB does, so a caller can never change stored state by mutating what it got."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping

from heed_core.politeness import HostState
from heed_core.ports import FakeClock, FetchRequest, FetchResult
from heed_core.urls import authority
from heed_core.work import Source, UrlRecord, WorkItem

__all__ = ["Exchange", "FakeTransport", "ListJournal", "ListResults", "MemoryStore", "Reply"]


def _copy(data: Any) -> Any:
    return json.loads(json.dumps(data, default=str))


def _bare_name(host: str) -> str:
    """``scheme://name:port`` -> ``name``, as DynamoStore.blocked reads an authority."""
    return host.split("://", 1)[-1].rsplit(":", 1)[0].strip("[]")


class MemoryStore:
    """Implements ``heed_core.store.Store`` in dictionaries, with DynamoStore's semantics."""

    def __init__(self) -> None:
        self.cache: dict[tuple[str, str], tuple[str, float]] = {}  # (kind, host) -> (json, expires_at)
        self.hosts: dict[str, HostState] = {}
        self.frontier: dict[str, dict[str, str]] = {}  # host -> order_key -> json of the item
        self.done: dict[str, set[str]] = {}  # host -> work ids done (DynamoStore's D# markers)
        self.urls: dict[str, str] = {}
        self.sources: dict[str, str] = {}
        self.quotas: dict[str, int] = {}
        self.results: dict[str, str] = {}
        self.blocks: dict[str, str] = {}
        self.meta: dict[str, tuple[str, int]] = {}

    # --- caches: an expired entry reads as absent (DynamoDB deletes expired items late) --------
    def get_cached(self, kind: str, host: str, now: float) -> dict[str, Any] | None:
        entry = self.cache.get((kind, host))
        if entry is None or entry[1] <= now:
            return None
        return json.loads(entry[0])

    def put_cached(self, kind: str, host: str, data: dict[str, Any], expires_at: float) -> None:
        self.cache[(kind, host)] = (json.dumps(data), float(expires_at))

    # --- host pacing (COMMON-05) --------------------------------------------------------------
    def get_host(self, host: str) -> HostState:
        return self.hosts.get(host, HostState())

    def acquire_host(self, host: str, now: float, lease_s: float) -> bool:
        state = self.get_host(host)
        if state.in_flight_until > now or state.next_allowed > now or state.stopped_until > now:
            return False
        self.hosts[host] = HostState(**{**asdict(state), "in_flight_until": now + lease_s})
        return True

    def release_host(self, host: str, *, next_allowed: float, t_end: float) -> None:
        state = self.get_host(host)
        self.hosts[host] = HostState(**{**asdict(state), "in_flight_until": 0.0,
                                        "next_allowed": float(next_allowed), "last_end": float(t_end)})

    def stop_host(self, host: str, until: float, reason: str) -> None:
        state = self.get_host(host)
        self.hosts[host] = HostState(**{**asdict(state), "stopped_until": float(until), "stop_reason": reason})

    def skip_host_round(self, host: str, round_id: str) -> None:
        self.hosts[host] = HostState(**{**asdict(self.get_host(host)), "skip_round": round_id})

    # --- the frontier ---------------------------------------------------------------------------
    def add_work(self, item: WorkItem) -> bool:
        host = item.host
        queue = self.frontier.setdefault(host, {})
        # One marker per work id, set when added and kept after it is done: the same work is
        # added once, whatever its position (seq, depth) in the frontier.
        if item.work_id in self.done.get(host, set()):
            return False
        self.done.setdefault(host, set()).add(item.work_id)
        queue[item.order_key] = json.dumps(item.to_dict())
        return True

    def pending_work(self, host: str, limit: int = 25) -> list[WorkItem]:
        queue = self.frontier.get(host, {})
        return [WorkItem.from_dict(json.loads(queue[k])) for k in sorted(queue)[:limit]]

    def update_work(self, item: WorkItem) -> None:
        self.frontier.setdefault(item.host, {})[item.order_key] = json.dumps(item.to_dict())

    def complete_work(self, item: WorkItem) -> None:
        host = item.host
        self.done.setdefault(host, set()).add(item.work_id)
        self.frontier.get(host, {}).pop(item.order_key, None)

    # --- URLs and sources -----------------------------------------------------------------------
    def get_url(self, url: str) -> UrlRecord | None:
        authority(url)  # a bad URL is refused like DynamoStore's key does (BadUrl)
        raw = self.urls.get(url)
        return UrlRecord(**json.loads(raw)) if raw is not None else None

    def put_url(self, record: UrlRecord) -> None:
        authority(record.url)
        self.urls[record.url] = json.dumps(asdict(record))

    def get_source(self, source_id: str) -> Source | None:
        raw = self.sources.get(source_id)
        return Source(**json.loads(raw)) if raw is not None else None

    def put_source(self, source: Source) -> None:
        self.sources[source.id] = json.dumps(asdict(source))

    def list_sources(self) -> list[Source]:
        return [Source(**json.loads(self.sources[k])) for k in sorted(self.sources)]

    def update_source(self, source_id: str, **fields: Any) -> None:
        src = self.get_source(source_id)
        if src is None:
            return
        self.put_source(Source(**{**asdict(src), **fields}))

    # --- caps, exactly-once results, blocks, meta -------------------------------------------------
    def take_quota(self, key: str, limit: int, expires_at: float) -> bool:
        # A limit of 0 refuses the first take too (DynamoStore lets one through: see the contract test).
        used = self.quotas.get(key, 0)
        if used >= limit:
            return False
        self.quotas[key] = used + 1
        return True

    def put_result_once(self, result_id: str, record: dict[str, Any], expires_at: float) -> bool:
        if result_id in self.results:
            return False
        self.results[result_id] = json.dumps(record, default=str)
        return True

    def blocked(self, host: str) -> str | None:
        # COMMON-08: a blocked domain covers its subdomains.
        parts = _bare_name(host).split(".")
        for i in range(len(parts)):
            reason = self.blocks.get(".".join(parts[i:]))
            if reason is not None:
                return reason or "blocked by the operator"
        return None

    def block_domain(self, domain: str, reason: str) -> None:
        self.blocks[domain.lower().strip(".")] = reason

    def get_meta(self, key: str) -> dict[str, Any] | None:
        entry = self.meta.get(key)
        return json.loads(entry[0]) if entry is not None else None

    def put_meta(self, key: str, value: dict[str, Any], *, expected_version: int | None = None) -> bool:
        current = self.meta.get(key)
        if expected_version is not None and current is not None and current[1] != expected_version:
            return False
        self.meta[key] = (json.dumps(value), int(value.get("version", 0)))
        return True


# --- the transport ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Reply:
    """One scripted response. ``duration`` is how long the request takes on the fake clock."""

    status: int | None = 200
    headers: Mapping[str, str] | tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    duration: float = 0.25
    error: str | None = None
    sent: bool = True  # False: refused before any byte left (e.g. private_address)


@dataclass(frozen=True)
class Exchange:
    request: FetchRequest
    result: FetchResult


class FakeTransport:
    """Answers each URL from a script (the last reply of a URL repeats; an unscripted URL is a
    404), records every request, and moves the fake clock by each reply's duration so
    ``t_start``/``t_end`` are exact. ``during`` runs while a request is in flight."""

    def __init__(self, clock: FakeClock, *, default: Reply = Reply(404, body=b"not found")) -> None:
        self.clock = clock
        self.default = default
        self.scripts: dict[str, list[Reply]] = {}
        self.requests: list[FetchRequest] = []
        self.log: list[Exchange] = []
        self.during: Callable[[FetchRequest], None] | None = None

    def script(self, url: str, *replies: Reply) -> None:
        self.scripts[url] = list(replies)

    def fetch(self, request: FetchRequest) -> FetchResult:
        self.requests.append(request)
        replies = self.scripts.get(request.url)
        reply = (replies.pop(0) if len(replies) > 1 else replies[0]) if replies else self.default
        t_start = self.clock.now()
        if reply.sent:
            if self.during is not None:
                self.during(request)
            self.clock.advance(reply.duration)
        headers = reply.headers.items() if isinstance(reply.headers, Mapping) else reply.headers
        result = FetchResult(url=request.url, status=reply.status, headers=tuple(headers),
                             body=reply.body[: request.max_bytes], t_start=t_start, t_end=self.clock.now(),
                             error=reply.error, sent=reply.sent, truncated=len(reply.body) > request.max_bytes)
        self.log.append(Exchange(request, result))
        return result

    def sent(self) -> list[Exchange]:
        """The requests that left the machine, in order."""
        return [e for e in self.log if e.result.sent]

    def urls(self) -> list[str]:
        return [e.request.url for e in self.sent()]


# --- recorders ----------------------------------------------------------------------------------

@dataclass
class ListJournal:
    requests: list[dict[str, Any]] = field(default_factory=list)
    skips: list[dict[str, Any]] = field(default_factory=list)

    def request(self, record: dict[str, Any]) -> None:
        self.requests.append(_copy(record))

    def skip(self, record: dict[str, Any]) -> None:
        self.skips.append(_copy(record))

    def reasons(self, url: str | None = None) -> list[str]:
        return [s["reason"] for s in self.skips if url is None or s["url"] == url]


@dataclass
class ListResults:
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    texts: dict[str, list[str]] = field(default_factory=dict)

    def emit(self, detail_type: str, record: dict[str, Any]) -> None:
        self.events.append((detail_type, _copy(record)))

    def store_text(self, key: str, text: str) -> str:
        versions = self.texts.setdefault(key, [])
        versions.append(text)
        return f"v{len(versions)}"

    def load_text(self, key: str) -> str | None:
        versions = self.texts.get(key)
        return versions[-1] if versions else None

    def of_type(self, detail_type: str) -> list[dict[str, Any]]:
        return [r for t, r in self.events if t == detail_type]

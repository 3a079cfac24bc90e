"""In-memory stand-ins for the crawl's ports: a HostStore with DynamoStore's semantics, a scripted
transport, recorders for the journal, the results and the token queue.

``MemoryStore`` mirrors ``heed_aws.store.DynamoStore`` rule for rule (tests/unit/test_store_contract.py
runs one test class against both, so they cannot drift). Records are copied through JSON on the way
in and out, as DynamoDB does, so a caller can never change stored state by mutating what it got."""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from heed_core.errors import TransientError
from heed_core.hoststate import DrainMark, HostRecord, HostView, Outbox, TokenOut, salvage_outbox
from heed_core.ports import FakeClock, FetchRequest, FetchResult
from heed_core.urls import authority, host_name, in_domain, short_hash
from heed_core.work import Source, UrlRecord, WorkItem

from heed_aws.domains import registrable_domain

__all__ = ["Exchange", "FakeQueue", "FakeTokens", "FakeTransport", "ListJournal", "ListResults", "MemoryStore", "Reply"]


def _copy(data: Any) -> Any:
    return json.loads(json.dumps(data, default=str))


def _source_to_json(src: Source) -> str:
    d = asdict(src)
    d["seen_items"] = list(src.seen_items)
    return json.dumps(d)


def _source_from_json(raw: str) -> Source:
    d = json.loads(raw)
    d["seen_items"] = tuple(d.get("seen_items") or ())
    return Source(**d)


class MemoryStore:
    """Implements ``heed_core.store.HostStore`` in dictionaries, with DynamoStore's semantics."""

    def __init__(self) -> None:
        self.hosts: dict[str, dict[str, Any]] = {}  # host -> raw item
        self.aux: dict[tuple[str, str], str] = {}
        self.marks: dict[str, DrainMark] = {}
        self.urls: dict[str, str] = {}
        self.sources: dict[str, str] = {}
        self.quotas: dict[str, dict[str, Any]] = {}
        self.slots: dict[int, tuple[str, float]] = {}  # AUBE-11's request slots: n -> (holder, until)
        self.blocks: dict[str, str] = {}
        self.meta: dict[str, tuple[str, int]] = {}
        self.reads: dict[str, str] = {}  # source id -> its read-state (DynamoStore's <id>#read)
        self.closed_at: dict[str, float] = {}  # source id -> when it was closed (an attribute in DynamoDB)
        self.block_times: dict[str, float] = {}
        self.domains: dict[str, set[str]] = {}  # registrable domain -> hosts (DynamoStore's DOMAIN#)
        self.purged: dict[str, float] = {}  # domain -> when it was last purged (DynamoStore's !<domain>)
        self.calls: list[str] = []

    # --- the host item ---------------------------------------------------------------------------
    def read_host(self, host: str, *, aux: Sequence[str] = ()) -> HostRecord:
        self.calls.append("read_host")
        raw = self.hosts.get(host)
        name = host_name(host)
        parts = name.split(".")
        blocked = None
        for i in range(len(parts)):
            reason = self.blocks.get(".".join(parts[i:]))
            if reason is not None:
                blocked = reason or "blocked by the operator"
                break
        purged = max((self.purged.get(".".join(parts[i:]), 0.0) for i in range(len(parts))), default=0.0)
        extra = {k: json.loads(self.aux[(host, k)]) for k in aux if (host, k) in self.aux}
        if raw is None:
            return HostRecord(host=host, aux=extra, drained=self.marks.get(host, DrainMark()), blocked=blocked,
                              purged_at=purged)
        lost: list[str] = []
        try:
            state = json.loads(raw["st"])
        except ValueError as exc:
            state, lost = {}, [f"host state (pacing, frontier, caches): {exc}"]
        outbox = None
        if raw["ob"]:
            outbox, bad = salvage_outbox(json.loads(raw["ob"]))
            lost += bad
        return HostRecord(host=host, version=raw["v"], owner=raw["own"], lease_until=raw["lease"],
                          state=state, outbox=outbox, aux=extra, drained=self.marks.get(host, DrainMark()),
                          blocked=blocked, purged_at=purged, corrupt=tuple(lost))

    def read_turn_hosts(self, hosts: Sequence[str], *, aux: Sequence[str] = ()) -> dict[str, HostRecord]:
        out = {host: self.read_host(host, aux=aux) for host in dict.fromkeys(hosts)}
        self.calls[len(self.calls) - len(out):] = ["read_turn_hosts"]  # one read, as DynamoStore's
        return out

    def write_host(self, host: str, expected_version: int, *, owner: str | None, lease_until: float,
                   state: Mapping[str, Any], outbox: Outbox | None, expires_at: float) -> bool:
        self.calls.append("write_host")
        current = self.hosts.get(host)
        if (current["v"] if current else 0) != expected_version:
            return False
        if expected_version == 0:
            self.domains.setdefault(registrable_domain(host), set()).add(host)
        self.hosts[host] = {"v": expected_version + 1, "own": owner, "lease": float(lease_until),
                            "st": json.dumps(state, default=str),
                            "ob": json.dumps(outbox.to_compact()) if outbox else None}
        return True

    def put_aux(self, host: str, kind: str, data: Mapping[str, Any]) -> None:
        self.calls.append("put_aux")
        self.aux[(host, kind)] = json.dumps(data)

    def url_records(self, urls: Iterable[str]) -> dict[str, UrlRecord]:
        self.calls.append("url_records")
        out: dict[str, UrlRecord] = {}
        for url in urls:
            authority(url)  # a bad URL is refused like DynamoStore's key does (BadUrl)
            raw = self.urls.get(url)
            if raw is not None:
                out[url] = UrlRecord.from_compact(json.loads(raw))
        return out

    def take_quota(self, key: str, taker: str, want: int, limit: int, expires_at: float) -> int:
        self.calls.append("take_quota")
        q = self.quotas.setdefault(key, {"n": 0, "takers": {}})
        if taker in q["takers"]:
            return int(q["takers"][taker])
        grant = max(0, min(int(want), int(limit) - q["n"]))
        if grant:
            q["n"] += grant
            q["takers"][taker] = grant
        return grant

    def take_slot(self, slots: int, holder: str, until: float, now: float) -> int | None:
        self.calls.append("take_slot")
        for n in range(slots):
            held = self.slots.get(n)
            if held is None or held[0] == holder or held[1] <= now:
                self.slots[n] = (holder, float(until))
                return n
        return None

    def release_slot(self, slot: int, holder: str) -> None:
        self.calls.append("release_slot")
        held = self.slots.get(slot)
        if held is not None and held[0] == holder:
            self.slots[slot] = ("", 0.0)

    def write_drained(self, records: Sequence[UrlRecord], marks: Sequence[tuple[str, DrainMark]],
                      reads: Sequence[tuple[str, Mapping[str, Any]]] = ()) -> None:
        self.calls.append("write_drained")
        for source_id, fields in reads:
            self.reads[source_id] = json.dumps({k: list(v) if isinstance(v, tuple) else v for k, v in fields.items()})
        for rec in records:
            self.urls[rec.url] = json.dumps(rec.to_compact())
        for host, mark in marks:
            self.marks[host] = mark

    def update_source(self, source_id: str, fields: Mapping[str, Any]) -> None:
        self.calls.append("update_source")
        raw = self.sources.get(source_id)
        if raw is None:
            return
        data = json.loads(raw)
        fields = dict(fields)
        if "last_read" in fields and data.get("last_read") is not None and data["last_read"] > fields["last_read"]:
            fields.pop("last_read")
        if "closed_at" in fields:
            self.closed_at[source_id] = float(fields["closed_at"])
        fields.pop("closed_at", None)
        data.update({k: v for k, v in fields.items() if k in Source.__dataclass_fields__})
        self.sources[source_id] = json.dumps(data)

    # --- sources, meta, blocks ---------------------------------------------------------------------
    def get_source(self, source_id: str) -> Source | None:
        raw = self.sources.get(source_id)
        return self._merged(source_id, raw) if raw is not None else None

    def _merged(self, source_id: str, raw: str) -> Source:
        src = _source_from_json(raw)
        read = self.reads.get(source_id)
        if read is None:
            return src
        fields = json.loads(read)
        if (fields.get("last_read") or -1.0) < (src.last_read if src.last_read is not None else -1.0):
            return src
        fields = {k: tuple(v) if k == "seen_items" else v for k, v in fields.items()
                  if k in Source.__dataclass_fields__}
        return Source(**{**asdict(src), **fields})

    def put_source(self, source: Source) -> None:
        self.sources[source.id] = _source_to_json(source)

    def list_sources(self) -> list[Source]:
        return [self._merged(k, self.sources[k]) for k in sorted(self.sources)]

    def source_page(self, after: str | None, limit: int, *, upto: str | None = None) -> tuple[list[Source], str | None]:
        ids = [k for k in sorted(self.sources) if after is None or k > after]
        if upto is not None:
            return [self._merged(k, self.sources[k]) for k in ids if k <= upto.removesuffix("#read")], None
        page = ids[:max(1, int(limit) // 2)]  # DynamoDB's Limit counts a source's read-state as an item
        return [self._merged(k, self.sources[k]) for k in page], (page[-1] if len(ids) > len(page) else None)

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

    # --- the operator's calls ----------------------------------------------------------------------
    def read_hosts(self, hosts: Iterable[str]) -> dict[str, HostRecord]:
        out = {}
        for host in dict.fromkeys(hosts):
            if host in self.hosts:
                rec = self.read_host(host)
                out[host] = HostRecord(host=rec.host, version=rec.version, owner=rec.owner,
                                       lease_until=rec.lease_until, state=rec.state, outbox=rec.outbox,
                                       drained=rec.drained, blocked=rec.blocked)
        return out

    def update_host_state(self, host: str, expected_version: int, state: Mapping[str, Any]) -> bool:
        current = self.hosts.get(host)
        if current is None or current["v"] != expected_version:
            return False
        self.hosts[host] = {**current, "v": expected_version + 1, "st": json.dumps(state, default=str)}
        return True

    def domain_hosts(self, domain: str) -> list[str]:
        return sorted(h for h in self.domains.get(registrable_domain(domain), set()) if in_domain(h, [domain]))

    def unindex_hosts(self, domain: str, hosts: Sequence[str]) -> None:
        reg = registrable_domain(domain)
        left = self.domains.get(reg, set()) - set(hosts)
        if left:
            self.domains[reg] = left
        else:
            self.domains.pop(reg, None)

    def host_items(self, host: str) -> list[tuple[str, str | None]]:
        out: list[tuple[str, str | None]] = []
        if host in self.hosts:
            out.append(("HOST", None))
        out += [(f"AUX#{k}", None) for h, k in sorted(self.aux) if h == host]
        if host in self.marks:
            out.append(("DRAIN", None))
        out += [(f"U#{short_hash(u, n=32)}", u) for u in sorted(self.urls) if authority(u) == host]
        return sorted(out)

    def delete_host_items(self, host: str, sort_keys: Sequence[str]) -> int:
        keys = set(sort_keys)
        if "HOST" in keys:
            self.hosts.pop(host, None)
        if "DRAIN" in keys:
            self.marks.pop(host, None)
        for h, k in list(self.aux):
            if h == host and f"AUX#{k}" in keys:
                del self.aux[(h, k)]
        for u in list(self.urls):
            if authority(u) == host and f"U#{short_hash(u, n=32)}" in keys:
                del self.urls[u]
        return len(keys)

    def all_hosts(self) -> list[str]:
        return sorted(set(self.hosts) | set(self.marks) | {h for h, _ in self.aux} | {authority(u) for u in self.urls})

    def put_sources(self, sources: Sequence[Source]) -> None:
        for src in sources:
            self.put_source(src)

    def delete_source(self, source_id: str) -> None:
        self.sources.pop(source_id, None)
        self.reads.pop(source_id, None)
        self.closed_at.pop(source_id, None)

    def source_details(self) -> list[tuple[Source, dict[str, Any]]]:
        out = []
        for sid in sorted(self.sources):
            read = json.loads(self.reads.get(sid) or "{}")
            out.append((self._merged(sid, self.sources[sid]),
                        {"closed_at": self.closed_at.get(sid), "last_status": read.get("last_status")}))
        return out

    def update_source_definition(self, source: Source) -> bool:
        raw = self.sources.get(source.id)
        if raw is None:
            return False
        data = json.loads(raw)
        data.update(url=source.url, kind=source.kind, options=dict(source.options))
        self.sources[source.id] = json.dumps(data)
        return True

    def reopen_source(self, source_id: str) -> bool:
        raw = self.sources.get(source_id)
        if raw is None:
            return False
        data = json.loads(raw)
        data.update(closed=False, closed_reason=None)
        self.sources[source_id] = json.dumps(data)
        self.closed_at.pop(source_id, None)
        return True

    def block(self, domain: str, reason: str, at: float) -> None:
        name = domain.lower().strip(".")
        self.blocks[name] = reason or "blocked by the operator"
        self.block_times[name] = float(at)

    def unblock_domain(self, domain: str) -> bool:
        name = domain.lower().strip(".")
        self.block_times.pop(name, None)
        return self.blocks.pop(name, None) is not None

    def block_list(self) -> list[tuple[str, str, float | None]]:
        return sorted((d, r, self.block_times.get(d)) for d, r in self.blocks.items())

    def mark_purged(self, domain: str, at: float) -> None:
        self.purged[domain.lower().strip(".")] = float(at)

    # --- for tests: the host as the crawl sees it ----------------------------------------------------
    def view(self, host: str) -> HostView:
        return HostView.from_record(self.read_host(host))

    def pending_work(self, host: str) -> list[WorkItem]:
        return self.view(host).frontier

    def get_url(self, url: str) -> UrlRecord | None:
        return self.url_records([url]).get(url)


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
    fail_next: int = 0  # make the next N emit_many calls raise (a failing bus)

    def emit_many(self, events: Sequence[tuple[str, str, dict[str, Any]]]) -> list[str]:
        if self.fail_next:
            self.fail_next -= 1
            raise TransientError("bus unavailable")
        for detail_type, _, record in events:
            self.events.append((detail_type, _copy(record)))
        return []

    def store_text(self, key: str, text: str) -> str:
        versions = self.texts.setdefault(key, [])
        versions.append(text)
        return f"v{len(versions)}"

    def load_text(self, key: str) -> str | None:
        versions = self.texts.get(key)
        return versions[-1] if versions else None

    def of_type(self, detail_type: str) -> list[dict[str, Any]]:
        return [r for t, r in self.events if t == detail_type]


@dataclass
class FakeTokens:
    """The token queue: what was sent, in order (deduplicated by token id, as SQS FIFO does)."""

    sent: list[TokenOut] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)

    def send(self, tokens: Sequence[TokenOut]) -> None:
        for t in tokens:
            if t.tok not in self.ids:
                self.ids.add(t.tok)
                self.sent.append(t)


class FakeQueue(FakeTokens):
    """The fetcher's queue port: tokens sent, and the hides asked for (receipt handle, seconds)."""

    def __init__(self) -> None:
        super().__init__()
        self.hidden: list[tuple[str, float]] = []

    def hide(self, handles: Sequence[tuple[str, float]]) -> None:
        self.hidden += handles

"""Everything a host turn knows about one host, read in one call and written back in one.

A host's item holds its pacing, the owner token and its lease, the robots.txt and tdmrep.json
cache (small bodies inline, big ones in an aux item beside it), the frontier of work parked on
the host (what a token brought and is not done yet, retries, redirect hops), the tokens already
taken in, a short memory of recent fetches and results (exactly once on at-least-once delivery),
host-local caps, closed sources, and the outbox of the last commit: the effects that leave the
host's partition (events, tokens for other hosts, URL records, source fields), drained after
the commit and, if a crash got in between, before the next decision."""
from __future__ import annotations

import json
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from heed_core.errors import InputError
from heed_core.politeness import HostState
from heed_core.work import UrlRecord, WorkItem

__all__ = ["DRAIN_LEASE_S", "DrainMark", "HostRecord", "HostView", "Outbox", "TokenOut", "decode_blob", "encode_blob",
           "recent_read", "salvage_outbox", "was_read"]

# A host item must stay small (a write costs one unit per KB): these bound what it remembers.
MAX_RECENT = 64  # URLs fetched lately (once-ever, title and cadence checks for work in flight)
RECENT_FOR_S = 8 * 86400.0
MAX_RESULTS = 128  # result ids reported lately (one event, one result across a host's pages)
RESULTS_FOR_S = 8 * 86400.0
TOKENS_FOR_S = 3 * 86400.0  # a token taken in is refused again for this long (SQS dedups 5 min)
INLINE_AUX_BYTES = 1200  # robots.txt / tdmrep.json records up to this size live in the host item
MAX_SEEN_ITEMS = 200  # feed items a source remembers having reported (in its host's item)
DRAIN_LEASE_S = 20.0  # a committed outbox is the committing turn's to drain this long


def was_read(status: int | None) -> bool:
    """AUBE-03: did an answer with this status read the page? A network error (None), a 5xx or a
    429 is a read not done: the page may be asked for again later. Anything else is an answer."""
    return status is not None and status < 500 and status != 429


def recent_read(entry: list[Any] | None) -> bool:
    """Whether a host's memory of a fetch (``[t, purpose, source, ok]``) was a read that happened
    (entries written before the flag existed count as reads)."""
    return entry is not None and (len(entry) < 4 or bool(entry[3]))


def encode_blob(data: Mapping[str, Any]) -> bytes:
    """``data`` as compact JSON, zlib-compressed (what a host item's state attribute holds);
    values JSON cannot hold are written as their ``str``."""
    return zlib.compress(json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str).encode("utf-8"), 6)


def decode_blob(blob: bytes | None) -> dict[str, Any]:
    """The mapping ``encode_blob`` wrote; ``{}`` for nothing. ``InputError`` (``bad_host_state``)
    for bytes that are not such a mapping."""
    if not blob:
        return {}
    try:
        data = json.loads(zlib.decompress(blob).decode("utf-8"))
    except (zlib.error, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"undecodable host state: {exc!r}", reason="bad_host_state") from exc
    if not isinstance(data, dict):
        raise InputError("host state is not a mapping", reason="bad_host_state")
    return data


@dataclass(frozen=True)
class TokenOut:
    """Work for a host, carried by one SQS FIFO message (MessageGroupId = host). ``tok`` is
    deterministic (it is the deduplication id), so the same work sent twice is taken in once."""

    host: str
    tok: str
    items: tuple[WorkItem, ...] = ()

    def to_compact(self) -> list[Any]:
        """``[host, tok, [item, ...]]``, JSON-able (the message body and the outbox's form)."""
        return [self.host, self.tok, [i.to_compact() for i in self.items]]

    @classmethod
    def from_compact(cls, raw: Any) -> TokenOut:
        """The token ``to_compact`` wrote; ``InputError`` for an item that does not decode, and
        ``ValueError``/``TypeError`` for a shape that is not ``[host, tok, items]``."""
        host, tok, items = raw
        return cls(str(host), str(tok), tuple(WorkItem.from_compact(i) for i in items))


@dataclass(frozen=True)
class Outbox:
    """The effects of one commit that leave the host's partition, each with a deterministic id."""

    version: int  # the host item version that carried it
    events: tuple[tuple[str, str, dict[str, Any]], ...] = ()  # (detail type, result id, record)
    tokens: tuple[TokenOut, ...] = ()
    urls: tuple[UrlRecord, ...] = ()
    sources: tuple[tuple[str, dict[str, Any]], ...] = ()  # (source id, fields to SET)

    def __bool__(self) -> bool:
        return bool(self.events or self.tokens or self.urls or self.sources)

    def to_compact(self) -> dict[str, Any]:
        """The outbox as short-keyed JSON (``v``, ``e``, ``t``, ``u``, ``s``)."""
        return {"v": self.version, "e": [list(e) for e in self.events], "t": [t.to_compact() for t in self.tokens],
                "u": [u.to_compact() for u in self.urls], "s": [list(s) for s in self.sources]}

    @classmethod
    def from_compact(cls, d: Mapping[str, Any]) -> Outbox:
        """The outbox ``to_compact`` wrote; ``InputError`` (``bad_host_state``) if it does not decode."""
        try:
            return cls(version=int(d["v"]),
                       events=tuple((str(t), str(i), dict(r)) for t, i, r in d.get("e") or ()),
                       tokens=tuple(TokenOut.from_compact(t) for t in d.get("t") or ()),
                       urls=tuple(UrlRecord.from_compact(u) for u in d.get("u") or ()),
                       sources=tuple((str(s), dict(f)) for s, f in d.get("s") or ()))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"undecodable outbox: {exc!r}", reason="bad_host_state") from exc


def salvage_outbox(d: Any) -> tuple[Outbox | None, list[str]]:
    """An outbox read entry by entry: what decodes is kept, each part that does not is named in
    the second value (``corrupt_state``: one bad entry never stalls its host)."""
    lost: list[str] = []
    if not isinstance(d, Mapping):
        return None, ["outbox: not a mapping"]
    try:
        version = int(d["v"])
    except (KeyError, TypeError, ValueError):
        return None, ["outbox: no version"]
    parts: dict[str, list[Any]] = {"e": [], "t": [], "u": [], "s": []}
    readers: dict[str, Any] = {
        "e": lambda x: (str(x[0]), str(x[1]), dict(x[2])) if len(x) == 3 else _bad("not (type, id, record)"),
        "t": TokenOut.from_compact, "u": UrlRecord.from_compact,
        "s": lambda x: (str(x[0]), dict(x[1])) if len(x) == 2 else _bad("not (source, fields)")}
    names = {"e": "event", "t": "token", "u": "URL record", "s": "source fields"}
    for key in d:
        if key != "v" and key not in parts:
            lost.append(f"outbox field {str(key)[:40]!r}")
    for key, read in readers.items():
        for entry in d.get(key) or ():
            try:
                parts[key].append(read(entry))
            except (InputError, KeyError, TypeError, ValueError, IndexError):
                lost.append(f"outbox {names[key]} {json.dumps(entry, default=str)[:120]}")
    return Outbox(version=version, events=tuple(parts["e"]), tokens=tuple(parts["t"]), urls=tuple(parts["u"]),
                  sources=tuple(parts["s"])), lost


def _bad(why: str) -> Any:
    raise ValueError(why)


@dataclass(frozen=True)
class DrainMark:
    """How much of a host's outbox has left: everything up to ``version``, and of the outbox
    at ``version + 1`` (if partly drained) the events in ``sent``."""

    version: int = 0
    sent: tuple[str, ...] = ()

    def done(self, outbox: Outbox | None) -> bool:
        """True when nothing of ``outbox`` is left to drain (none, empty, or drained up to its version)."""
        return outbox is None or not outbox or outbox.version <= self.version


@dataclass(frozen=True)
class HostRecord:
    """The raw host item and its aux items, as the store reads and writes them."""

    host: str
    version: int = 0  # 0: no item yet
    owner: str | None = None
    lease_until: float = 0.0
    state: Mapping[str, Any] = field(default_factory=dict)
    outbox: Outbox | None = None
    aux: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # robots, tdmrep (big bodies)
    drained: DrainMark = DrainMark()
    blocked: str | None = None  # the operator block list's reason, for this host or a parent domain
    purged_at: float = 0.0  # COMMON-08: when the host's domain (or a parent) was last purged (0: never)
    corrupt: tuple[str, ...] = ()  # what of the stored item could not be decoded, and was left out


@dataclass
class HostView:
    """A host's state, decoded, to read and change during one turn (the plan works on a copy)."""

    host: str
    version: int
    owner: str | None
    lease_until: float
    pacing: HostState
    robots: dict[str, Any] | None  # {"exp", "stamp", "rec"} (rec: RobotsOutcome.to_dict(), or None if in aux)
    robots_hop: dict[str, Any] | None
    tdmrep: dict[str, Any] | None  # {"exp", "stamp", "rec"}
    frontier: list[WorkItem]
    tokens_done: dict[str, float]
    recent: dict[str, list[Any]]  # url -> [time, purpose, source]
    results: dict[str, float]
    quotas: dict[str, list[float]]  # key -> [used, expires_at]
    closed: dict[str, str]
    nurl: int
    aux: Mapping[str, Mapping[str, Any]]
    blocked: str | None
    outbox: Outbox | None
    drained: DrainMark
    bad_items: list[tuple[Any, str]] = field(default_factory=list)  # frontier entries that did not decode
    drain_until: float = 0.0  # the turn that committed ``outbox`` drains it until then: others wait
    seen: dict[str, list[str]] = field(default_factory=dict)  # feed source -> the items it reported
    purged_at: float = 0.0
    corrupt: tuple[str, ...] = ()

    def undrained(self) -> bool:
        """True while the last commit's outbox has not all left."""
        return self.outbox is not None and not self.drained.done(self.outbox)

    @classmethod
    def from_record(cls, rec: HostRecord) -> HostView:
        """The view of a raw record: pacing and memories decoded, the frontier in order.
        Frontier entries that do not decode are kept apart in ``bad_items`` (the plan turns
        them into skips) rather than raised, so one bad item never blocks its host."""
        s = rec.state
        p = s.get("pace") or {}
        frontier: list[WorkItem] = []
        bad: list[tuple[Any, str]] = []
        for raw in s.get("q") or ():
            try:
                frontier.append(WorkItem.from_compact(raw))
            except InputError as exc:
                bad.append((raw, str(exc)))
        frontier.sort(key=lambda i: i.order_key)
        return cls(
            host=rec.host, version=rec.version, owner=rec.owner, lease_until=rec.lease_until,
            pacing=HostState(next_allowed=float(p.get("na", 0.0)), stopped_until=float(p.get("su", 0.0)),
                             stop_reason=p.get("sr"), skip_round=p.get("skr"), last_end=float(p.get("le", 0.0)),
                             floor_s=float(p.get("fl", 0.0))),
            robots=s.get("rob"), robots_hop=s.get("hop"), tdmrep=s.get("tdm"), frontier=frontier,
            tokens_done=dict(s.get("tok") or {}), recent=dict(s.get("rec") or {}),
            results=dict(s.get("res") or {}), quotas=dict(s.get("quo") or {}), closed=dict(s.get("cls") or {}),
            nurl=int(s.get("nurl", 0)), aux=rec.aux, blocked=rec.blocked, outbox=rec.outbox,
            drained=rec.drained, bad_items=bad, drain_until=float(s.get("dr", 0.0)),
            seen={str(k): [str(x) for x in v] for k, v in (s.get("si") or {}).items() if isinstance(v, list)},
            purged_at=rec.purged_at, corrupt=rec.corrupt)

    def copy(self) -> HostView:
        """A copy whose lists and dicts can be changed without touching this view."""
        return replace(self, frontier=list(self.frontier), tokens_done=dict(self.tokens_done),
                       recent=dict(self.recent), results=dict(self.results),
                       quotas={k: list(v) for k, v in self.quotas.items()}, closed=dict(self.closed),
                       bad_items=list(self.bad_items), seen={k: list(v) for k, v in self.seen.items()})

    def state_blob(self, now: float) -> dict[str, Any]:
        """The state to write, with the memories pruned to their bounds."""
        p = self.pacing
        pace: dict[str, Any] = {"na": p.next_allowed, "le": p.last_end}
        if p.stopped_until > now:
            pace.update(su=p.stopped_until, sr=p.stop_reason)
        if p.skip_round:
            pace["skr"] = p.skip_round
        if p.floor_s:
            pace["fl"] = p.floor_s
        recent = sorted(((k, v) for k, v in self.recent.items() if now - float(v[0]) < RECENT_FOR_S),
                        key=lambda kv: -float(kv[1][0]))[:MAX_RECENT]
        results = sorted(((k, t) for k, t in self.results.items() if now - t < RESULTS_FOR_S),
                         key=lambda kv: -kv[1])[:MAX_RESULTS]
        out: dict[str, Any] = {"pace": pace, "nurl": self.nurl}
        if self.drain_until > now:
            out["dr"] = self.drain_until
        optional: dict[str, Any] = {
            "si": {k: v[:MAX_SEEN_ITEMS] for k, v in self.seen.items() if v},
            "rob": self.robots, "hop": self.robots_hop, "tdm": self.tdmrep,
            "q": [i.to_compact() for i in sorted(self.frontier, key=lambda i: i.order_key)],
            "tok": {k: e for k, e in self.tokens_done.items() if e > now},
            "rec": dict(recent), "res": dict(results),
            "quo": {k: v for k, v in self.quotas.items() if v[1] > now},
            "cls": self.closed,
        }
        out.update({k: v for k, v in optional.items() if v})
        return out

    # --- small helpers the policies share ----------------------------------------------------
    def quota_left(self, key: str, limit: int, now: float) -> int:
        """How many of a host-local cap of ``limit`` are left at ``now`` (an expired count is 0 used)."""
        used = self.quotas.get(key)
        taken = int(used[0]) if used and used[1] > now else 0
        return max(0, int(limit) - taken)

    def take_local(self, key: str, n: int, expires_at: float, now: float) -> None:
        """Charge ``n`` to the host-local cap ``key`` (a fresh count if the old one expired); the
        count lives until ``expires_at`` or its earlier expiry, whichever is later."""
        used = self.quotas.get(key)
        taken = int(used[0]) if used and used[1] > now else 0
        self.quotas[key] = [taken + n, max(expires_at, used[1] if used else 0.0)]

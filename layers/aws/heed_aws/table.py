"""One DynamoDB table (pk/sk) for a bot's state: its key layout, its codecs, and what both of its
adapters share (``heed_aws.store.DynamoStore``, the crawl's; ``heed_aws.operator_store``, the operator's).

Key layout (see README, "One table"):
- ``H#<authority>`` / ``HOST``: the host's item (version, owner token and lease, the state blob,
  the outbox of the last commit); ``AUX#robots`` / ``AUX#tdmrep``: bodies too big for it;
  ``DRAIN``: how much of the outbox has left; ``U#<hash>``: URL records.
- ``SOURCES`` / ``<id>``: a source, its fields as attributes, and ``<id>#read``: what its reads
  left (last read, the feed items reported), put by the drain in its batch; ``QUOTA#<key>`` /
  ``N``: counters shared by all hosts; ``BLOCKS`` / ``ALL``: the operator block list, one
  attribute per domain (its reason), read with every host, and ``@<domain>``: when it was
  blocked; ``META`` / ``<key>``; ``INFLIGHT`` / ``<n>``: AUBE-11's request slots (holder, until).
- ``DOMAIN#<registrable domain>`` / ``HOSTS``: the index of a domain's hosts (a string set of
  authorities, added to when a host's item is first written), so that everything stored from a
  domain is found by key (COMMON-08, SUBSIDIE-13: ``heed purge``).
Every call is by key: no Scan, no Query on the crawl's path (their cost grows with the table).
The operator's calls (sources, blocks, purge) Query one partition at most, never Scan, except
``all_hosts`` for a table written before the domain index existed."""
from __future__ import annotations

import json
import logging
import time
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from heed_core.errors import HeedError, InputError, ServiceFault, TransientError
from heed_core.hoststate import DrainMark, HostRecord, decode_blob, salvage_outbox
from heed_core.urls import authority, host_name, short_hash
from heed_core.work import Source, UrlRecord

from heed_aws.domains import registrable_domain

__all__ = ["StoreError", "Table", "decode_host", "translate"]

_log = logging.getLogger(__name__)

# Codes that mean "busy, try again": never the item's fault (STYLE 4).
_TRANSIENT = frozenset({
    "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded",
    "InternalServerError", "ServiceUnavailable", "TransactionConflictException", "LimitExceededException",
    "InternalFailure", "Throttling", "SlowDown", "RequestTimeout", "RequestTimeoutException",
})
_URL_TTL_S = 400 * 86400  # what a URL told us (AUBE-03: read once ever) outlives any round
_BATCH_TRIES = 5


class StoreError(ServiceFault):
    """A call that failed for a reason other than load: a bug or a misconfiguration (AccessDenied,
    a validation error), never the work item's fault."""


def translate(exc: Exception, what: str) -> HeedError:
    """A boto error as Heed's kind of error (raise the result ``from exc``)."""
    if isinstance(exc, ClientError):
        err = exc.response.get("Error", {})
        code = str(err.get("Code", ""))
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        if code in _TRANSIENT or status >= 500:
            return TransientError(f"{what}: {code}")
        return StoreError(f"{what}: {code} {err.get('Message', '')}".strip())
    return TransientError(f"{what}: {type(exc).__name__}")  # BotoCoreError: endpoint, timeout, connection


def _conditional_failed(exc: ClientError) -> bool:
    code: str = exc.response.get("Error", {}).get("Code", "")
    return code == "ConditionalCheckFailedException"


def _n(x: float | int) -> dict[str, str]:
    return {"N": repr(float(x)) if isinstance(x, float) else str(x)}


def _s(x: str) -> dict[str, str]:
    return {"S": x}


def _num(item: Mapping[str, Any], key: str, default: float = 0.0) -> float:
    v = item.get(key)
    return float(v["N"]) if v and "N" in v else default


def _str(item: Mapping[str, Any], key: str) -> str | None:
    v = item.get(key)
    return v["S"] if v and "S" in v else None


def _blob(item: Mapping[str, Any], key: str) -> bytes | None:
    v = item.get(key)
    return bytes(v["B"]) if v and "B" in v else None


def _to_attr(value: Any) -> dict[str, Any]:
    """A Python value as a DynamoDB attribute (source fields: SET as attributes, not a blob)."""
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, (int, float)):
        return _n(value)
    if value is None:
        return {"NULL": True}
    if isinstance(value, (list, tuple)):
        return {"L": [_to_attr(v) for v in value]}
    if isinstance(value, Mapping):
        return {"S": json.dumps(value)}
    return _s(str(value))


_BLOCKS_KEY = {"pk": {"S": "BLOCKS"}, "sk": {"S": "ALL"}}
_READ_FIELDS = frozenset({"last_read", "seen_items", "last_status"})  # a source's read-state (``<id>#read``)


def _block_reason(item: Mapping[str, Any] | None, host: str) -> str | None:
    """COMMON-08: the reason a host is blocked (its name or a parent domain is listed), or None."""
    if not item:
        return None
    parts = host_name(host).split(".")
    for i in range(len(parts)):
        hit = item.get(".".join(parts[i:]))
        if hit is not None and "S" in hit:
            return hit["S"] or "blocked by the operator"
    return None


def _purged_at(item: Mapping[str, Any] | None, host: str) -> float:
    """COMMON-08: when the host's name or a parent domain was last purged (``!<domain>``), or 0."""
    if not item:
        return 0.0
    parts = host_name(host).split(".")
    return max((_num(item, "!" + ".".join(parts[i:])) for i in range(len(parts))), default=0.0)


def decode_host(host: str, item: Mapping[str, Any] | None, mark_item: Mapping[str, Any] | None,
                aux_items: Mapping[str, Mapping[str, Any]], blocks: Mapping[str, Any] | None) -> HostRecord:
    """A host's items as a ``HostRecord``, decoded part by part: what does not decode (a damaged
    state blob, an outbox entry of an unknown kind, a bad aux record or drain mark) is left out
    and named in ``corrupt``, so the turn records it (``corrupt_state``) and the host goes on."""
    lost: list[str] = []
    mark = DrainMark()
    if mark_item:
        try:
            sent = tuple(str(x) for x in json.loads(_str(mark_item, "sent") or "[]"))
            mark = DrainMark(int(_num(mark_item, "v")), sent)
        except (TypeError, ValueError) as exc:
            lost.append(f"drain mark: {exc}")
    extra: dict[str, dict[str, Any]] = {}
    for kind, aux_item in aux_items.items():
        try:
            extra[kind] = decode_blob(_blob(aux_item, "d"))
        except InputError as exc:
            lost.append(f"{kind} cache: {exc}")
    blocked, purged = _block_reason(blocks, host), _purged_at(blocks, host)
    if item is None:
        return HostRecord(host=host, aux=extra, drained=mark, blocked=blocked, purged_at=purged, corrupt=tuple(lost))
    try:
        state = decode_blob(_blob(item, "st"))
    except InputError as exc:
        state = {}
        lost.append(f"host state (pacing, frontier, caches): {exc}")
    outbox = None
    outbox_blob = _blob(item, "ob")
    if outbox_blob:
        try:
            outbox, bad = salvage_outbox(decode_blob(outbox_blob))
            lost += bad
        except InputError as exc:
            lost.append(f"outbox: {exc}")
    return HostRecord(host=host, version=int(_num(item, "v")), owner=_str(item, "own"), lease_until=_num(item, "lease"),
                      state=state, outbox=outbox, aux=extra, drained=mark, blocked=blocked, purged_at=purged,
                      corrupt=tuple(lost))


def _domain_key(domain: str) -> dict[str, dict[str, str]]:
    return {"pk": _s(f"DOMAIN#{registrable_domain(domain)}"), "sk": _s("HOSTS")}


def _url_key(url: str) -> dict[str, dict[str, str]]:
    return {"pk": _s(f"H#{authority(url)}"), "sk": _s(f"U#{short_hash(url, n=32)}")}

class Table:
    """The table's plumbing (calls translated into Heed's errors, batched reads and writes, a
    conditional write) and the reads by key both adapters make."""

    def __init__(self, table_name: str, client: Any) -> None:
        self.table = table_name
        self.db = client

    # --- plumbing ------------------------------------------------------------------------
    def _call(self, op: str, what: str, **kwargs: Any) -> Any:
        try:
            return getattr(self.db, op)(**kwargs)
        except (ClientError, BotoCoreError) as exc:
            raise translate(exc, what) from exc

    def _if(self, op: str, what: str, **kwargs: Any) -> bool:
        """A conditional write: True when written, False when its condition failed (never an error)."""
        try:
            getattr(self.db, op)(**kwargs)
        except ClientError as exc:
            if _conditional_failed(exc):
                return False
            raise translate(exc, what) from exc
        except BotoCoreError as exc:
            raise translate(exc, what) from exc
        return True

    def _batch_get(self, keys: list[dict[str, Any]], what: str) -> list[dict[str, Any]]:
        """BatchGetItem (strongly consistent), retrying unprocessed keys a few times."""
        found: list[dict[str, Any]] = []
        pending = list({json.dumps(k, sort_keys=True): k for k in keys}.values())
        for start in range(0, len(pending), 100):
            request: dict[str, Any] = {self.table: {"Keys": pending[start:start + 100], "ConsistentRead": True}}
            for attempt in range(_BATCH_TRIES):
                resp = self._call("batch_get_item", what, RequestItems=request)
                found += resp.get("Responses", {}).get(self.table, [])
                request = resp.get("UnprocessedKeys") or {}
                if not request:
                    break
                time.sleep(0.05 * 2 ** attempt)  # DynamoDB's own backoff advice, not a politeness wait
            else:
                raise TransientError(f"{what}: keys left unprocessed")
        return found

    def _batch_write(self, requests: list[dict[str, Any]], what: str) -> None:
        for start in range(0, len(requests), 25):
            chunk: dict[str, Any] = {self.table: requests[start:start + 25]}
            for attempt in range(_BATCH_TRIES):
                resp = self._call("batch_write_item", what, RequestItems=chunk)
                chunk = resp.get("UnprocessedItems") or {}
                if not chunk:
                    break
                time.sleep(0.05 * 2 ** attempt)
            else:
                raise TransientError(f"{what}: items left unprocessed")

    # --- reads by key ------------------------------------------------------------------------
    def read_host(self, host: str, *, aux: Sequence[str] = ()) -> HostRecord:
        return self.read_turn_hosts([host], aux=aux)[host]

    def read_turn_hosts(self, hosts: Sequence[str], *, aux: Sequence[str] = ()) -> dict[str, HostRecord]:
        wanted = list(dict.fromkeys(hosts))
        keys = [_BLOCKS_KEY]
        for host in wanted:
            pk = _s(f"H#{host}")
            keys += [{"pk": pk, "sk": _s("HOST")}, {"pk": pk, "sk": _s("DRAIN")}]
            keys += [{"pk": pk, "sk": _s(f"AUX#{kind}")} for kind in aux]
        what = f"read {wanted[0]}" if len(wanted) == 1 else f"read {len(wanted)} hosts"
        by_key = {(i["pk"]["S"], i["sk"]["S"]): i for i in self._batch_get(keys, what)} if wanted else {}
        blocks = by_key.get(("BLOCKS", "ALL"))
        return {host: self._host_record(host, by_key, aux, blocks) for host in wanted}

    @staticmethod
    def _host_record(host: str, by_key: Mapping[tuple[str, str], dict[str, Any]], aux: Sequence[str],
                     blocks: dict[str, Any] | None) -> HostRecord:
        pk = f"H#{host}"
        found = {kind: by_key[(pk, f"AUX#{kind}")] for kind in aux if (pk, f"AUX#{kind}") in by_key}
        return decode_host(host, by_key.get((pk, "HOST")), by_key.get((pk, "DRAIN")), found, blocks)

    def url_records(self, urls: Iterable[str]) -> dict[str, UrlRecord]:
        wanted = list(dict.fromkeys(urls))
        if not wanted:
            return {}
        out: dict[str, UrlRecord] = {}
        for raw in self._batch_get([_url_key(u) for u in wanted], "url records"):
            rec = UrlRecord.from_compact(json.loads(zlib.decompress(_blob(raw, "d") or b"").decode("utf-8")))
            out[rec.url] = rec
        return out

    def get_url(self, url: str) -> UrlRecord | None:
        return self.url_records([url]).get(url)

    def blocked(self, host: str) -> str | None:
        """The block reason for the host or any parent domain."""
        return self.read_host(host).blocked

    # --- sources and meta ------------------------------------------------------------------------
    @staticmethod
    def _source_item(src: Source) -> dict[str, Any]:
        item: dict[str, Any] = {"pk": _s("SOURCES"), "sk": _s(src.id), "url": _s(src.url), "kind": _s(src.kind),
                                "options": _s(json.dumps(dict(src.options))), "closed": {"BOOL": src.closed}}
        if src.closed_reason:
            item["closed_reason"] = _s(src.closed_reason)
        if src.last_read is not None:
            item["last_read"] = _n(float(src.last_read))
        if src.seen_items:
            item["seen_items"] = {"L": [_s(x) for x in src.seen_items]}
        return item

    @staticmethod
    def _source(item: Mapping[str, Any], read: Mapping[str, Any] | None = None) -> Source:
        if read:
            # A read-state newer than the source's own fields wins (the drain puts it in its batch).
            own = _num(item, "last_read", -1.0)
            if _num(read, "last_read", -1.0) >= own:
                item = {**item, **{k: v for k, v in read.items() if k in _READ_FIELDS}}
        last = item.get("last_read")
        return Source(id=item["sk"]["S"], url=item["url"]["S"], kind=item["kind"]["S"],
                      options=json.loads(_str(item, "options") or "{}"),
                      closed=bool(item.get("closed", {}).get("BOOL", False)),
                      closed_reason=_str(item, "closed_reason"),
                      last_read=float(last["N"]) if last and "N" in last else None,
                      seen_items=tuple(x["S"] for x in item.get("seen_items", {}).get("L", []) if "S" in x))

    def get_source(self, source_id: str) -> Source | None:
        found = {i["sk"]["S"]: i for i in self._batch_get(
            [{"pk": _s("SOURCES"), "sk": _s(source_id)}, {"pk": _s("SOURCES"), "sk": _s(f"{source_id}#read")}],
            f"source {source_id}")}
        item = found.get(source_id)
        return self._source(item, found.get(f"{source_id}#read")) if item else None

    def _source_items(self) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
        """The SOURCES partition (one Query, paged): the items and their read-states by source id."""
        items: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {"TableName": self.table, "KeyConditionExpression": "pk = :pk",
                                  "ExpressionAttributeValues": {":pk": _s("SOURCES")}, "ConsistentRead": True}
        while True:
            resp = self._call("query", "sources", **kwargs)
            items += resp.get("Items", [])
            if "LastEvaluatedKey" not in resp:
                break
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]
        reads = {i["sk"]["S"][: -len("#read")]: i for i in items if i["sk"]["S"].endswith("#read")}
        return items, reads

    def list_sources(self) -> list[Source]:
        items, reads = self._source_items()
        return [self._source(i, reads.get(i["sk"]["S"])) for i in items if not i["sk"]["S"].endswith("#read")]

    def source_page(self, after: str | None, limit: int, *, upto: str | None = None) -> tuple[list[Source], str | None]:
        """One Query page of the SOURCES partition after the key ``after`` (None: from the start),
        at most ``limit`` items, each source with its read-state; and the key to go on after (None:
        the partition is done). A source whose read-state may lie on the next page is left to it.
        With ``upto``: every source after ``after`` up to that key (a chunk read again), paged."""
        kwargs: dict[str, Any] = {"TableName": self.table, "ConsistentRead": True,
                                  "KeyConditionExpression": "pk = :pk",
                                  "ExpressionAttributeValues": {":pk": _s("SOURCES")}}
        if upto is not None:
            kwargs["KeyConditionExpression"] = "pk = :pk AND sk <= :upto"
            kwargs["ExpressionAttributeValues"][":upto"] = _s(upto if upto.endswith("#read") else f"{upto}#read")
        else:
            kwargs["Limit"] = max(2, int(limit))
        if after is not None:
            kwargs["ExclusiveStartKey"] = {"pk": _s("SOURCES"), "sk": _s(after)}
        items: list[dict[str, Any]] = []
        while True:
            resp = self._call("query", "sources", **kwargs)
            items += resp.get("Items", [])
            more = "LastEvaluatedKey" in resp
            if upto is None or not more:
                break
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]
        if more and len(items) > 1 and not items[-1]["sk"]["S"].endswith("#read"):
            items.pop()  # its read-state (<id>#read sorts right after it) may be on the next page
        reads = {i["sk"]["S"][: -len("#read")]: i for i in items if i["sk"]["S"].endswith("#read")}
        sources = [self._source(i, reads.get(i["sk"]["S"])) for i in items if not i["sk"]["S"].endswith("#read")]
        last = items[-1]["sk"]["S"] if items else after
        return sources, (last if more and upto is None else None)

    def get_meta(self, key: str) -> dict[str, Any] | None:
        resp = self._call("get_item", f"meta {key}", TableName=self.table, Key={"pk": _s("META"), "sk": _s(key)},
                          ConsistentRead=True)
        item = resp.get("Item")
        return json.loads(item["data"]["S"]) if item else None

    def put_meta(self, key: str, value: dict[str, Any], *, expected_version: int | None = None) -> bool:
        version = int(value.get("version", 0))
        kwargs: dict[str, Any] = {"TableName": self.table, "Item": {
            "pk": _s("META"), "sk": _s(key), "data": _s(json.dumps(value)), "version": _n(version)}}
        if expected_version is not None:
            kwargs["ConditionExpression"] = "attribute_not_exists(pk) OR version = :v"
            kwargs["ExpressionAttributeValues"] = {":v": _n(expected_version)}
        return self._if("put_item", f"meta {key}", **kwargs)

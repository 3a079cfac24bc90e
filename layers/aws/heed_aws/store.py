"""The crawl state in one DynamoDB table (pk/sk), behind ``heed_core.store.HostStore``.

Key layout (see README, "One table"):
- ``H#<authority>`` / ``HOST``: the host's item (version, owner token and lease, the state blob,
  the outbox of the last commit); ``AUX#robots`` / ``AUX#tdmrep``: bodies too big for it;
  ``DRAIN``: how much of the outbox has left; ``U#<hash>``: URL records.
- ``SOURCES`` / ``<id>``: a source, its fields as attributes, and ``<id>#read``: what its reads
  left (last read, the feed items reported), put by the drain in its batch; ``QUOTA#<key>`` /
  ``N``: counters shared by all hosts; ``BLOCKS`` / ``ALL``: the operator block list, one
  attribute per domain (its reason), read with every host, and ``@<domain>``: when it was
  blocked; ``META`` / ``<key>``.
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
from heed_core.hoststate import DrainMark, HostRecord, Outbox, decode_blob, encode_blob, salvage_outbox
from heed_core.urls import authority, host_name, in_domain, short_hash
from heed_core.work import Source, UrlRecord

from heed_aws.domains import registrable_domain

__all__ = ["DynamoStore", "StoreError", "translate"]

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


class DynamoStore:
    """Implements ``heed_core.store.HostStore`` on one table (see the module docstring)."""

    def __init__(self, table_name: str, client: Any) -> None:
        self.table = table_name
        self.db = client

    # --- plumbing ------------------------------------------------------------------------
    def _call(self, op: str, what: str, **kwargs: Any) -> Any:
        try:
            return getattr(self.db, op)(**kwargs)
        except (ClientError, BotoCoreError) as exc:
            raise translate(exc, what) from exc

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

    # --- the host item ---------------------------------------------------------------------
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

    def write_host(self, host: str, expected_version: int, *, owner: str | None, lease_until: float,
                   state: Mapping[str, Any], outbox: Outbox | None, expires_at: float) -> bool:
        item: dict[str, Any] = {"pk": _s(f"H#{host}"), "sk": _s("HOST"), "v": _n(expected_version + 1),
                                "st": {"B": encode_blob(state)}, "ttl": _n(int(expires_at))}
        if owner:
            item["own"] = _s(owner)
            item["lease"] = _n(float(lease_until))
        if outbox:
            item["ob"] = {"B": encode_blob(outbox.to_compact())}
        kwargs: dict[str, Any] = {"TableName": self.table, "Item": item}
        if expected_version == 0:
            self._index_host(host)
            kwargs["ConditionExpression"] = "attribute_not_exists(pk)"
        else:
            kwargs["ConditionExpression"] = "v = :v"
            kwargs["ExpressionAttributeValues"] = {":v": _n(expected_version)}
        try:
            self.db.put_item(**kwargs)
        except ClientError as exc:
            if _conditional_failed(exc):
                return False
            raise translate(exc, f"write {host}") from exc
        except BotoCoreError as exc:
            raise translate(exc, f"write {host}") from exc
        return True

    def _index_host(self, host: str) -> None:
        """The domain index: written before the host's first item (ADD is idempotent, so a lost
        race or a crash in between leaves at most a name whose partition is empty)."""
        try:
            key = _domain_key(host)
        except ImportError:  # the layer lacks publicsuffixlist: crawl on; `heed purge --scan` finds the host
            _log.warning("domain index not written for %s: publicsuffixlist is not installed", host)
            return
        self._call("update_item", f"index {host}", TableName=self.table, Key=key,
                   UpdateExpression="ADD hosts :h", ExpressionAttributeValues={":h": {"SS": [host]}})

    def put_aux(self, host: str, kind: str, data: Mapping[str, Any]) -> None:
        self._call("put_item", f"aux {kind} {host}", TableName=self.table, Item={
            "pk": _s(f"H#{host}"), "sk": _s(f"AUX#{kind}"), "d": {"B": encode_blob(data)},
            "ttl": _n(int(time.time()) + 30 * 86400)})

    # --- URL records, caps, drains ------------------------------------------------------------------
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

    def take_quota(self, key: str, taker: str, want: int, limit: int, expires_at: float) -> int:
        """ADD under a condition; a refused take reads the counter back (no extra read) and
        takes what is left. The taker's id is remembered, so a repeated take changes nothing."""
        grant = min(int(want), int(limit))
        while grant > 0:
            try:
                self.db.update_item(
                    TableName=self.table, Key={"pk": _s(f"QUOTA#{key}"), "sk": _s("N")},
                    UpdateExpression="ADD n :k, tk :t, tg :g SET #ttl = :ttl",
                    ConditionExpression="(attribute_not_exists(n) OR n <= :room) AND NOT contains(tk, :taker)",
                    ExpressionAttributeNames={"#ttl": "ttl"},
                    ExpressionAttributeValues={":k": _n(grant), ":t": {"SS": [taker]},
                                               ":g": {"SS": [f"{taker}={grant}"]},
                                               ":ttl": _n(int(expires_at) + 3600), ":room": _n(int(limit) - grant),
                                               ":taker": _s(taker)},
                    ReturnValuesOnConditionCheckFailure="ALL_OLD")
                return grant
            except ClientError as exc:
                if not _conditional_failed(exc):
                    raise translate(exc, f"quota {key}") from exc
                old = exc.response.get("Item") or {}
                for entry in (old.get("tg") or {}).get("SS", []):
                    who, _, n = entry.rpartition("=")
                    if who == taker:
                        return int(n)
                grant = min(grant, int(limit) - int(_num(old, "n")))
            except BotoCoreError as exc:
                raise translate(exc, f"quota {key}") from exc
        return 0

    def write_drained(self, records: Sequence[UrlRecord], marks: Sequence[tuple[str, DrainMark]],
                      reads: Sequence[tuple[str, Mapping[str, Any]]] = ()) -> None:
        by_key: dict[tuple[str, str], dict[str, Any]] = {}
        for source_id, fields in reads:
            item = {"pk": _s("SOURCES"), "sk": _s(f"{source_id}#read"),
                    **{k: _to_attr(v) for k, v in fields.items() if k in _READ_FIELDS}}
            by_key[("SOURCES", f"{source_id}#read")] = {"PutRequest": {"Item": item}}
        ttl = _n(int(time.time()) + _URL_TTL_S)
        for rec in records:
            key = _url_key(rec.url)
            data = zlib.compress(json.dumps(rec.to_compact(), separators=(",", ":")).encode("utf-8"))
            by_key[(key["pk"]["S"], key["sk"]["S"])] = {"PutRequest": {"Item": {**key, "d": {"B": data}, "ttl": ttl}}}
        for host, mark in marks:
            item = {"pk": _s(f"H#{host}"), "sk": _s("DRAIN"), "v": _n(mark.version),
                    "ttl": _n(int(time.time()) + 30 * 86400)}
            if mark.sent:
                item["sent"] = _s(json.dumps(list(mark.sent)))
            by_key[(f"H#{host}", "DRAIN")] = {"PutRequest": {"Item": item}}
        requests = list(by_key.values())  # one put per key: BatchWriteItem refuses duplicates
        if requests:
            self._batch_write(requests, "drained")

    def update_source(self, source_id: str, fields: Mapping[str, Any]) -> None:
        names: dict[str, str] = {}
        values: dict[str, Any] = {}
        sets = []
        for i, (name, value) in enumerate(sorted(fields.items())):
            names[f"#f{i}"] = name
            values[f":v{i}"] = _to_attr(value)
            sets.append(f"#f{i} = :v{i}")
        if not sets:
            return
        try:
            self.db.update_item(TableName=self.table, Key={"pk": _s("SOURCES"), "sk": _s(source_id)},
                                UpdateExpression="SET " + ", ".join(sets), ConditionExpression="attribute_exists(pk)",
                                ExpressionAttributeNames=names, ExpressionAttributeValues=values)
        except ClientError as exc:
            if not _conditional_failed(exc):  # a removed or purged source is not brought back
                raise translate(exc, f"source {source_id}") from exc
        except BotoCoreError as exc:
            raise translate(exc, f"source {source_id}") from exc

    # --- sources, meta, blocks -------------------------------------------------------------------
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

    def put_source(self, source: Source) -> None:
        self._call("put_item", f"source {source.id}", TableName=self.table, Item=self._source_item(source))

    def put_sources(self, sources: Sequence[Source]) -> None:
        self._batch_write([{"PutRequest": {"Item": self._source_item(s)}} for s in sources], "sources")

    def delete_source(self, source_id: str) -> None:
        for sk in (source_id, f"{source_id}#read"):
            self._call("delete_item", f"source {source_id}", TableName=self.table,
                       Key={"pk": _s("SOURCES"), "sk": _s(sk)})

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

    def list_sources(self) -> list[Source]:
        items, reads = self._source_items()
        return [self._source(i, reads.get(i["sk"]["S"])) for i in items if not i["sk"]["S"].endswith("#read")]

    def block_domain(self, domain: str, reason: str) -> None:
        self._call("update_item", f"block {domain}", TableName=self.table, Key=_BLOCKS_KEY,
                   UpdateExpression="SET #d = :r", ExpressionAttributeNames={"#d": domain.lower().strip(".")},
                   ExpressionAttributeValues={":r": _s(reason or "blocked by the operator")})

    def blocked(self, host: str) -> str | None:
        """The block reason for the host or any parent domain."""
        return self.read_host(host).blocked

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
        try:
            self.db.put_item(**kwargs)
        except ClientError as exc:
            if _conditional_failed(exc):
                return False
            raise translate(exc, f"meta {key}") from exc
        return True

    # --- the operator's calls (heed sources, block, purge): by key, one partition at most -----------
    def read_hosts(self, hosts: Iterable[str]) -> dict[str, HostRecord]:
        """Many hosts' items (no aux items) in batched reads; a host never seen is left out."""
        wanted = list(dict.fromkeys(hosts))
        keys = [{"pk": _s(f"H#{h}"), "sk": _s(sk)} for h in wanted for sk in ("HOST", "DRAIN")]
        if not keys:
            return {}
        found = {(i["pk"]["S"], i["sk"]["S"]): i for i in self._batch_get(keys + [_BLOCKS_KEY], "read hosts")}
        blocks = found.get(("BLOCKS", "ALL"))
        return {host: decode_host(host, found[(f"H#{host}", "HOST")], found.get((f"H#{host}", "DRAIN")), {}, blocks)
                for host in wanted if (f"H#{host}", "HOST") in found}

    def update_host_state(self, host: str, expected_version: int, state: Mapping[str, Any]) -> bool:
        """An operator's change of a host's state blob (a source closed or reopened there): SET as
        version ``expected_version + 1``, owner, lease and outbox untouched; False when the item is
        gone or no longer at that version (a turn committed meanwhile: read again and retry)."""
        try:
            self.db.update_item(TableName=self.table, Key={"pk": _s(f"H#{host}"), "sk": _s("HOST")},
                                UpdateExpression="SET st = :st, v = :v1", ConditionExpression="v = :v",
                                ExpressionAttributeValues={":st": {"B": encode_blob(state)},
                                                           ":v1": _n(expected_version + 1), ":v": _n(expected_version)})
        except ClientError as exc:
            if _conditional_failed(exc):
                return False
            raise translate(exc, f"update {host}") from exc
        except BotoCoreError as exc:
            raise translate(exc, f"update {host}") from exc
        return True

    def domain_hosts(self, domain: str) -> list[str]:
        """The hosts of ``domain`` and its subdomains, from the index of its registrable domain."""
        resp = self._call("get_item", f"domain {domain}", TableName=self.table, Key=_domain_key(domain),
                          ConsistentRead=True)
        hosts = (resp.get("Item") or {}).get("hosts", {}).get("SS", [])
        return sorted(h for h in hosts if in_domain(h, [domain]))

    def unindex_hosts(self, domain: str, hosts: Sequence[str]) -> None:
        """Take hosts out of the domain index; the index item goes when it names none."""
        if not hosts:
            return
        key = _domain_key(domain)
        resp = self._call("update_item", f"domain {domain}", TableName=self.table, Key=key,
                          UpdateExpression="DELETE hosts :h", ExpressionAttributeValues={":h": {"SS": list(hosts)}},
                          ReturnValues="ALL_NEW")
        if not (resp.get("Attributes") or {}).get("hosts"):
            try:
                self.db.delete_item(TableName=self.table, Key=key, ConditionExpression="attribute_not_exists(hosts)")
            except ClientError as exc:
                if not _conditional_failed(exc):  # a host was indexed meanwhile: the item stays
                    raise translate(exc, f"domain {domain}") from exc

    def host_items(self, host: str) -> list[tuple[str, str | None]]:
        """Every item of the host's partition (a Query by key): (sort key, the URL of a URL record)."""
        out: list[tuple[str, str | None]] = []
        kwargs: dict[str, Any] = {"TableName": self.table, "KeyConditionExpression": "pk = :pk",
                                  "ExpressionAttributeValues": {":pk": _s(f"H#{host}")},
                                  "ProjectionExpression": "sk, d", "ConsistentRead": True}
        while True:
            resp = self._call("query", f"host {host}", **kwargs)
            for item in resp.get("Items", []):
                sk = item["sk"]["S"]
                url = None
                if sk.startswith("U#") and _blob(item, "d"):
                    try:
                        url = str(json.loads(zlib.decompress(_blob(item, "d") or b"").decode("utf-8")).get("u") or "")
                    except (zlib.error, ValueError, UnicodeDecodeError):
                        url = None
                out.append((sk, url or None))
            if "LastEvaluatedKey" not in resp:
                return out
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]

    def delete_host_items(self, host: str, sort_keys: Sequence[str]) -> int:
        keys = list(dict.fromkeys(sort_keys))
        self._batch_write([{"DeleteRequest": {"Key": {"pk": _s(f"H#{host}"), "sk": _s(sk)}}} for sk in keys],
                          f"delete {host}")
        return len(keys)

    def all_hosts(self) -> list[str]:
        """Every host partition, by a Scan of the whole table: only for a table whose hosts were
        written before the domain index existed (``heed purge --scan``), never on the crawl's path."""
        hosts: set[str] = set()
        kwargs: dict[str, Any] = {"TableName": self.table, "ProjectionExpression": "pk",
                                  "FilterExpression": "begins_with(pk, :h)",
                                  "ExpressionAttributeValues": {":h": _s("H#")}}
        while True:
            resp = self._call("scan", "scan hosts", **kwargs)
            hosts |= {i["pk"]["S"][2:] for i in resp.get("Items", [])}
            if "LastEvaluatedKey" not in resp:
                return sorted(hosts)
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]

    def source_details(self) -> list[tuple[Source, dict[str, Any]]]:
        """Every source with the fields a Source does not carry: ``closed_at``, ``last_status``."""
        items, reads = self._source_items()
        out = []
        for item in items:
            if item["sk"]["S"].endswith("#read"):
                continue
            read = reads.get(item["sk"]["S"])
            status = _num(read, "last_status", -1.0) if read else _num(item, "last_status", -1.0)
            extra = {"closed_at": _num(item, "closed_at") if "closed_at" in item else None,
                     "last_status": int(status) if status >= 0 else None}
            out.append((self._source(item, read), extra))
        return out

    def update_source_definition(self, source: Source) -> bool:
        """An imported source that exists already: its url, kind and options replaced, what the
        crawl learnt of it (last read, closed, seen items) kept. False if it does not exist."""
        try:
            self.db.update_item(TableName=self.table, Key={"pk": _s("SOURCES"), "sk": _s(source.id)},
                                UpdateExpression="SET #u = :u, #k = :k, #o = :o",
                                ConditionExpression="attribute_exists(pk)",
                                ExpressionAttributeNames={"#u": "url", "#k": "kind", "#o": "options"},
                                ExpressionAttributeValues={":u": _s(source.url), ":k": _s(source.kind),
                                                           ":o": _s(json.dumps(dict(source.options)))})
        except ClientError as exc:
            if _conditional_failed(exc):
                return False
            raise translate(exc, f"source {source.id}") from exc
        return True

    def reopen_source(self, source_id: str) -> bool:
        """The source's closed fields cleared; False if there is no such source."""
        try:
            self.db.update_item(TableName=self.table, Key={"pk": _s("SOURCES"), "sk": _s(source_id)},
                                UpdateExpression="SET closed = :f REMOVE closed_reason, closed_at",
                                ConditionExpression="attribute_exists(pk)",
                                ExpressionAttributeValues={":f": {"BOOL": False}})
        except ClientError as exc:
            if _conditional_failed(exc):
                return False
            raise translate(exc, f"source {source_id}") from exc
        return True

    def block(self, domain: str, reason: str, at: float) -> None:
        """COMMON-08: block a domain and its subdomains, remembering when."""
        name = domain.lower().strip(".")
        self._call("update_item", f"block {domain}", TableName=self.table, Key=_BLOCKS_KEY,
                   UpdateExpression="SET #d = :r, #t = :t", ExpressionAttributeNames={"#d": name, "#t": f"@{name}"},
                   ExpressionAttributeValues={":r": _s(reason or "blocked by the operator"), ":t": _n(float(at))})

    def unblock_domain(self, domain: str) -> bool:
        """Lift a block; False if the domain was not on the list."""
        name = domain.lower().strip(".")
        resp = self._call("update_item", f"unblock {domain}", TableName=self.table, Key=_BLOCKS_KEY,
                          UpdateExpression="REMOVE #d, #t", ExpressionAttributeNames={"#d": name, "#t": f"@{name}"},
                          ReturnValues="UPDATED_OLD")
        return name in (resp.get("Attributes") or {})

    def block_list(self) -> list[tuple[str, str, float | None]]:
        """(domain, reason, when blocked or None) for every block."""
        resp = self._call("get_item", "blocks", TableName=self.table, Key=_BLOCKS_KEY, ConsistentRead=True)
        item = resp.get("Item") or {}
        return sorted((k, v["S"], _num(item, f"@{k}") if f"@{k}" in item else None)
                      for k, v in item.items() if k not in ("pk", "sk") and "S" in v)

    def mark_purged(self, domain: str, at: float) -> None:
        """COMMON-08: the purge's tombstone where every turn reads it (the block list's item, read
        with every host): work made before ``at`` for the domain's hosts is dropped, not stored."""
        name = domain.lower().strip(".")
        self._call("update_item", f"purge mark {domain}", TableName=self.table, Key=_BLOCKS_KEY,
                   UpdateExpression="SET #p = :t", ExpressionAttributeNames={"#p": f"!{name}"},
                   ExpressionAttributeValues={":t": _n(float(at))})

"""The crawl's adapter on the table (``heed_aws.table``, its key layout): ``heed_core.store.HostStore``.

Every call is by key: no Scan, no Query on the crawl's path (their cost grows with the table), but
the scheduler's one page of the SOURCES partition a tick. The operator's calls are in
``heed_aws.operator_store``."""
from __future__ import annotations

import json
import logging
import time
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from heed_core.hoststate import DrainMark, Outbox, encode_blob
from heed_core.urls import short_hash
from heed_core.work import Source, UrlRecord

from heed_aws.table import (
    _BLOCKS_KEY,
    _READ_FIELDS,
    _URL_TTL_S,
    StoreError,
    Table,
    _conditional_failed,
    _domain_key,
    _n,
    _num,
    _s,
    _to_attr,
    _url_key,
    decode_host,
    translate,
)

__all__ = ["DynamoStore", "StoreError", "decode_host", "translate"]

_log = logging.getLogger(__name__)


class DynamoStore(Table):
    """Implements ``heed_core.store.HostStore`` on the table: the reads ``Table`` has, and the crawl's writes."""

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
        return self._if("put_item", f"write {host}", **kwargs)

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

    def take_slot(self, slots: int, holder: str, until: float, now: float) -> int | None:
        """``INFLIGHT`` / ``<n>``: one conditional put per slot tried, first the one the holder's
        name points at (holders spread over the slots), and it wins only where the slot is free,
        expired or its own."""
        first = int(short_hash(holder), 16) % slots if slots > 1 else 0
        for i in range(slots):
            n = (first + i) % slots
            if self._if("put_item", f"slot {n}", TableName=self.table, Item={
                    "pk": _s("INFLIGHT"), "sk": _s(str(n)), "holder": _s(holder), "until": _n(float(until)),
                    "ttl": _n(int(until) + 86400)},
                    ConditionExpression="attribute_not_exists(pk) OR #until <= :now OR holder = :h",
                    ExpressionAttributeNames={"#until": "until"},
                    ExpressionAttributeValues={":now": _n(float(now)), ":h": _s(holder)}):
                return n
        return None

    def release_slot(self, slot: int, holder: str) -> None:
        self._if("put_item", f"slot {slot}", TableName=self.table, Item={
            "pk": _s("INFLIGHT"), "sk": _s(str(slot)), "holder": _s(""), "until": _n(0.0),
            "ttl": _n(int(time.time()) + 86400)},
            ConditionExpression="holder = :h", ExpressionAttributeValues={":h": _s(holder)})

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
        # A removed or purged source is not brought back: a failed condition writes nothing.
        self._if("update_item", f"source {source_id}", TableName=self.table,
                 Key={"pk": _s("SOURCES"), "sk": _s(source_id)},
                 UpdateExpression="SET " + ", ".join(sets), ConditionExpression="attribute_exists(pk)",
                 ExpressionAttributeNames=names, ExpressionAttributeValues=values)

    def put_source(self, source: Source) -> None:
        self._call("put_item", f"source {source.id}", TableName=self.table, Item=self._source_item(source))

    def block_domain(self, domain: str, reason: str) -> None:
        self._call("update_item", f"block {domain}", TableName=self.table, Key=_BLOCKS_KEY,
                   UpdateExpression="SET #d = :r", ExpressionAttributeNames={"#d": domain.lower().strip(".")},
                   ExpressionAttributeValues={":r": _s(reason or "blocked by the operator")})

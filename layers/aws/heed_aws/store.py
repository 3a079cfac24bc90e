"""The crawl state in one DynamoDB table (pk/sk), with conditional writes where invocations race."""
from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from botocore.exceptions import ClientError

from heed_core.politeness import HostState
from heed_core.urls import authority, host_name, short_hash
from heed_core.work import Source, UrlRecord, WorkItem

_DONE_TTL_S = 3 * 86400  # a finished work item is remembered long enough to refuse a re-add


class StoreError(RuntimeError):
    """A transient state failure: the record fails and SQS delivers it again."""


def _conditional_failed(exc: ClientError) -> bool:
    code = exc.response.get("Error", {}).get("Code", "")
    if code == "TransactionCanceledException":
        reasons = exc.response.get("CancellationReasons") or []
        return any(r.get("Code") == "ConditionalCheckFailed" for r in reasons)
    return code == "ConditionalCheckFailedException"


def _n(x: float | int) -> dict[str, str]:
    return {"N": repr(float(x)) if isinstance(x, float) else str(x)}


def _s(x: str) -> dict[str, str]:
    return {"S": x}


def _num(item: dict[str, Any], key: str, default: float = 0.0) -> float:
    v = item.get(key)
    return float(v["N"]) if v and "N" in v else default


def _str(item: dict[str, Any], key: str) -> str | None:
    v = item.get(key)
    return v["S"] if v and "S" in v else None


class DynamoStore:
    """Implements ``heed_core.store.Store``. Key layout (one table, see README):
    ``H#<authority>`` partitions hold a host's cache entries, pacing state, frontier (``Q#``),
    done markers (``D#``) and URL records (``U#``), so purging a host is one query."""

    def __init__(self, table_name: str, client: Any) -> None:
        self.table = table_name
        self.db = client

    # --- plumbing ------------------------------------------------------------------------
    def _get(self, pk: str, sk: str) -> dict[str, Any] | None:
        try:
            resp = self.db.get_item(TableName=self.table, Key={"pk": _s(pk), "sk": _s(sk)}, ConsistentRead=True)
        except ClientError as exc:
            raise StoreError(f"get {pk}/{sk}") from exc
        return resp.get("Item")

    def _put(self, item: dict[str, Any], *, only_new: bool = False) -> bool:
        kwargs: dict[str, Any] = {"TableName": self.table, "Item": item}
        if only_new:
            kwargs["ConditionExpression"] = "attribute_not_exists(pk)"
        try:
            self.db.put_item(**kwargs)
        except ClientError as exc:
            if only_new and _conditional_failed(exc):
                return False
            raise StoreError(f"put {item['pk']['S']}/{item['sk']['S']}") from exc
        return True

    def _delete(self, pk: str, sk: str) -> None:
        try:
            self.db.delete_item(TableName=self.table, Key={"pk": _s(pk), "sk": _s(sk)})
        except ClientError as exc:
            raise StoreError(f"delete {pk}/{sk}") from exc

    # --- caches ----------------------------------------------------------------------------
    def get_cached(self, kind: str, host: str, now: float) -> dict[str, Any] | None:
        item = self._get(f"H#{host}", f"CACHE#{kind}")
        # DynamoDB deletes expired items late: an expired entry reads as absent.
        if item is None or _num(item, "expires_at") <= now:
            return None
        return json.loads(item["data"]["S"])

    def put_cached(self, kind: str, host: str, data: dict[str, Any], expires_at: float) -> None:
        self._put({"pk": _s(f"H#{host}"), "sk": _s(f"CACHE#{kind}"), "data": _s(json.dumps(data)),
                   "expires_at": _n(expires_at), "ttl": _n(int(expires_at) + 3600)})

    # --- host pacing -------------------------------------------------------------------------
    def get_host(self, host: str) -> HostState:
        item = self._get(f"H#{host}", "STATE") or {}
        return HostState(next_allowed=_num(item, "next_allowed"), in_flight_until=_num(item, "in_flight_until"),
                         stopped_until=_num(item, "stopped_until"), stop_reason=_str(item, "stop_reason"),
                         skip_round=_str(item, "skip_round"), last_end=_num(item, "last_end"))

    def acquire_host(self, host: str, now: float, lease_s: float) -> bool:
        """COMMON-05: one request in flight per host, even if two invocations race."""
        try:
            self.db.update_item(
                TableName=self.table, Key={"pk": _s(f"H#{host}"), "sk": _s("STATE")},
                UpdateExpression="SET in_flight_until = :lease",
                ConditionExpression=("(attribute_not_exists(in_flight_until) OR in_flight_until <= :now) AND "
                                     "(attribute_not_exists(next_allowed) OR next_allowed <= :now) AND "
                                     "(attribute_not_exists(stopped_until) OR stopped_until <= :now)"),
                ExpressionAttributeValues={":lease": _n(now + lease_s), ":now": _n(now)})
        except ClientError as exc:
            if _conditional_failed(exc):
                return False
            raise StoreError(f"acquire {host}") from exc
        return True

    def release_host(self, host: str, *, next_allowed: float, t_end: float) -> None:
        self._update(f"H#{host}", "STATE", "SET in_flight_until = :z, next_allowed = :na, last_end = :te",
                     {":z": _n(0), ":na": _n(next_allowed), ":te": _n(t_end)})

    def stop_host(self, host: str, until: float, reason: str) -> None:
        self._update(f"H#{host}", "STATE", "SET stopped_until = :u, stop_reason = :r",
                     {":u": _n(until), ":r": _s(reason)})

    def skip_host_round(self, host: str, round_id: str) -> None:
        self._update(f"H#{host}", "STATE", "SET skip_round = :r", {":r": _s(round_id)})

    def _update(self, pk: str, sk: str, expr: str, values: dict[str, Any]) -> None:
        try:
            self.db.update_item(TableName=self.table, Key={"pk": _s(pk), "sk": _s(sk)},
                                UpdateExpression=expr, ExpressionAttributeValues=values)
        except ClientError as exc:
            raise StoreError(f"update {pk}/{sk}") from exc

    # --- frontier ------------------------------------------------------------------------------
    def add_work(self, item: WorkItem) -> bool:
        """Idempotent: the same work (same round, source, URL, hop) is added once, whatever its
        place in the frontier and even after it was done (its marker stays for a few days)."""
        pk = f"H#{item.host}"
        try:
            self.db.transact_write_items(TransactItems=[
                {"Put": {"TableName": self.table, "ConditionExpression": "attribute_not_exists(pk)",
                         "Item": {"pk": _s(pk), "sk": _s(f"D#{item.work_id}"),
                                  "ttl": _n(int(item.round_start) + _DONE_TTL_S)}}},
                {"Put": {"TableName": self.table, "ConditionExpression": "attribute_not_exists(pk)",
                         "Item": {"pk": _s(pk), "sk": _s(f"Q#{item.order_key}"),
                                  "item": _s(json.dumps(item.to_dict())), "ttl": _n(int(item.round_start) + 7 * 86400)}}},
            ])
        except ClientError as exc:
            if _conditional_failed(exc):
                return False
            raise StoreError(f"add work {item.url}") from exc
        return True

    def pending_work(self, host: str, limit: int = 25) -> list[WorkItem]:
        try:
            resp = self.db.query(TableName=self.table, KeyConditionExpression="pk = :pk AND begins_with(sk, :q)",
                                 ExpressionAttributeValues={":pk": _s(f"H#{host}"), ":q": _s("Q#")},
                                 ConsistentRead=True, Limit=limit)
        except ClientError as exc:
            raise StoreError(f"query work {host}") from exc
        return [WorkItem.from_dict(json.loads(i["item"]["S"])) for i in resp.get("Items", [])]

    def update_work(self, item: WorkItem) -> None:
        self._put({"pk": _s(f"H#{item.host}"), "sk": _s(f"Q#{item.order_key}"),
                   "item": _s(json.dumps(item.to_dict())), "ttl": _n(int(item.round_start) + 7 * 86400)})

    def complete_work(self, item: WorkItem) -> None:
        pk = f"H#{item.host}"
        self._put({"pk": _s(pk), "sk": _s(f"D#{item.work_id}"), "ttl": _n(int(item.round_start) + _DONE_TTL_S)})
        self._delete(pk, f"Q#{item.order_key}")

    # --- URLs and sources -------------------------------------------------------------------
    def get_url(self, url: str) -> UrlRecord | None:
        item = self._get(f"H#{authority(url)}", f"U#{short_hash(url, n=32)}")
        return UrlRecord(**json.loads(item["data"]["S"])) if item else None

    def put_url(self, record: UrlRecord) -> None:
        self._put({"pk": _s(f"H#{authority(record.url)}"), "sk": _s(f"U#{short_hash(record.url, n=32)}"),
                   "data": _s(json.dumps(asdict(record)))})

    def get_source(self, source_id: str) -> Source | None:
        item = self._get("SOURCES", source_id)
        return Source(**json.loads(item["data"]["S"])) if item else None

    def put_source(self, source: Source) -> None:
        self._put({"pk": _s("SOURCES"), "sk": _s(source.id), "data": _s(json.dumps(asdict(source)))})

    def list_sources(self) -> list[Source]:
        out: list[Source] = []
        kwargs: dict[str, Any] = {"TableName": self.table, "KeyConditionExpression": "pk = :pk",
                                  "ExpressionAttributeValues": {":pk": _s("SOURCES")}, "ConsistentRead": True}
        while True:
            resp = self.db.query(**kwargs)
            out += [Source(**json.loads(i["data"]["S"])) for i in resp.get("Items", [])]
            if "LastEvaluatedKey" not in resp:
                return out
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]

    def update_source(self, source_id: str, **fields: Any) -> None:
        src = self.get_source(source_id)
        if src is None:
            return
        data = asdict(src)
        data.update(fields)
        self.put_source(Source(**data))

    # --- caps, results, blocks, meta ----------------------------------------------------------
    def take_quota(self, key: str, limit: int, expires_at: float) -> bool:
        if limit <= 0:
            return False
        try:
            self.db.update_item(TableName=self.table, Key={"pk": _s(f"QUOTA#{key}"), "sk": _s("N")},
                                UpdateExpression="ADD n :one SET #t = :ttl",
                                ConditionExpression="attribute_not_exists(n) OR n < :limit",
                                ExpressionAttributeNames={"#t": "ttl"},
                                ExpressionAttributeValues={":one": _n(1), ":limit": _n(limit),
                                                           ":ttl": _n(int(expires_at) + 3600)})
        except ClientError as exc:
            if _conditional_failed(exc):
                return False
            raise StoreError(f"quota {key}") from exc
        return True

    def put_result_once(self, result_id: str, record: dict[str, Any], expires_at: float) -> bool:
        return self._put({"pk": _s(f"R#{result_id}"), "sk": _s("R"), "data": _s(json.dumps(record, default=str)),
                          "ttl": _n(int(expires_at))}, only_new=True)

    def blocked(self, host: str) -> str | None:
        """The block reason for the host or any parent domain, in one BatchGetItem."""
        parts = host_name(host).split(".")
        names = [".".join(parts[i:]) for i in range(len(parts))][:50]
        try:
            resp = self.db.batch_get_item(RequestItems={self.table: {
                "Keys": [{"pk": _s("BLOCKS"), "sk": _s(n)} for n in dict.fromkeys(names)], "ConsistentRead": True}})
        except ClientError as exc:
            raise StoreError(f"blocked {host}") from exc
        found = resp.get("Responses", {}).get(self.table, [])
        if resp.get("UnprocessedKeys"):
            raise StoreError(f"blocked {host}: unprocessed keys")
        return (_str(found[0], "reason") or "blocked by the operator") if found else None

    def delete_domain(self, domain: str) -> int:
        """COMMON-08 / SUBSIDIE-13: delete everything this table holds from a domain (see
        ``heed_aws.operator.purge_domain`` for the bucket's page texts too). Returns items deleted."""
        from heed_aws.operator import purge_domain

        report = purge_domain(self, domain)
        return report.state_items + report.sources + report.results

    def block_domain(self, domain: str, reason: str) -> None:
        self._put({"pk": _s("BLOCKS"), "sk": _s(domain.lower().strip(".")), "reason": _s(reason)})

    def get_meta(self, key: str) -> dict[str, Any] | None:
        item = self._get("META", key)
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
            raise StoreError(f"meta {key}") from exc
        return True

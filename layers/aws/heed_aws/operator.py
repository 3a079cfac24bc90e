"""Operator tools on a bot's state: block a domain, purge everything stored from it (COMMON-08)."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from heed_core.tasks import stored_keys
from heed_core.urls import in_domain

from heed_aws.store import DynamoStore


@dataclass(frozen=True)
class PurgeReport:
    domain: str
    state_items: int
    sources: int
    results: int
    objects: int


def _scan(store: DynamoStore, **kwargs: Any):  # type: ignore[no-untyped-def]
    params: dict[str, Any] = {"TableName": store.table, **kwargs}
    while True:
        resp = store.db.scan(**params)
        yield from resp.get("Items", [])
        if "LastEvaluatedKey" not in resp:
            return
        params["ExclusiveStartKey"] = resp["LastEvaluatedKey"]


def _url_in(url: str | None, domain: str) -> bool:
    return bool(url) and "://" in str(url) and in_domain(str(url), [domain])


def purge_domain(store: DynamoStore, domain: str, *, s3: Any = None, bucket: str | None = None,
                 keep_block: bool = True) -> PurgeReport:
    """Delete every host partition of ``domain`` and its subdomains (robots cache, pacing, frontier,
    URL records), its sources, its results, and the page texts kept in the bucket (all versions).
    The block list entry stays, so the stop holds (SUBSIDIE-13: delete on request)."""
    state = sources = results = objects = 0
    text_keys: set[str] = set()
    for item in _scan(store, ProjectionExpression="pk, sk, #d", ExpressionAttributeNames={"#d": "data"}):
        pk, sk = item["pk"]["S"], item["sk"]["S"]
        data = item.get("data", {}).get("S")
        if pk.startswith("H#") and in_domain(pk[2:], [domain]):
            if sk.startswith("U#") and data:
                url = json.loads(data).get("url", "")
                text_keys |= set(stored_keys(url))
            store._delete(pk, sk)
            state += 1
        elif pk.startswith("QUOTA#") and any(_url_in(u, domain) for u in re.findall(r"https?://[^#/]+", pk)):
            store._delete(pk, sk)  # per-site caps name the site
            state += 1
        elif pk == "SOURCES" and data and _url_in(json.loads(data).get("url"), domain):
            store._delete(pk, sk)
            sources += 1
        elif pk.startswith("R#") and data and _url_in(json.loads(data).get("url"), domain):
            store._delete(pk, sk)
            results += 1
    if s3 is not None and bucket:
        for key in sorted(text_keys):
            resp = s3.list_object_versions(Bucket=bucket, Prefix=key)
            for v in resp.get("Versions", []) + resp.get("DeleteMarkers", []):
                if v["Key"] == key:
                    s3.delete_object(Bucket=bucket, Key=key, VersionId=v["VersionId"])
                    objects += 1
    if not keep_block:
        store._delete("BLOCKS", domain.lower().strip("."))
    return PurgeReport(domain, state, sources, results, objects)


def list_blocks(store: DynamoStore) -> list[tuple[str, str]]:
    resp = store.db.query(TableName=store.table, KeyConditionExpression="pk = :pk",
                          ExpressionAttributeValues={":pk": {"S": "BLOCKS"}})
    return [(i["sk"]["S"], i.get("reason", {}).get("S", "")) for i in resp.get("Items", [])]


def unblock(store: DynamoStore, domain: str) -> None:
    store._delete("BLOCKS", domain.lower().strip("."))

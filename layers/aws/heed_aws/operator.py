"""Operator tools on a bot's state: block a domain, purge everything stored from it (COMMON-08)."""
from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from typing import Any, Iterator

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


def _scan(store: DynamoStore, **kwargs: Any) -> Iterator[dict[str, Any]]:
    params: dict[str, Any] = {"TableName": store.table, **kwargs}
    while True:
        resp = store.db.scan(**params)
        yield from resp.get("Items", [])
        if "LastEvaluatedKey" not in resp:
            return
        params["ExclusiveStartKey"] = resp["LastEvaluatedKey"]


def _delete(store: DynamoStore, pk: str, sk: str) -> None:
    store.db.delete_item(TableName=store.table, Key={"pk": {"S": pk}, "sk": {"S": sk}})


def purge_domain(store: DynamoStore, domain: str, *, s3: Any = None, bucket: str | None = None,
                 keep_block: bool = True) -> PurgeReport:
    """Delete every host partition of ``domain`` and its subdomains (host state with its robots
    and tdmrep cache and frontier, drain marks, URL records), its sources, and the page texts
    kept in the bucket (every version). The block list entry stays, so the stop holds
    (SUBSIDIE-13: delete on request). Results already sent on the bus are the consumers'."""
    state = sources = objects = 0
    text_keys: set[str] = set()
    for item in _scan(store, ProjectionExpression="pk, sk, #d, #u", ExpressionAttributeNames={"#d": "d", "#u": "url"}):
        pk, sk = item["pk"]["S"], item["sk"]["S"]
        if pk.startswith("H#") and in_domain(pk[2:], [domain]):
            if sk.startswith("U#") and "d" in item:
                try:
                    url = json.loads(zlib.decompress(bytes(item["d"]["B"])).decode("utf-8")).get("u", "")
                except (zlib.error, ValueError, UnicodeDecodeError):
                    url = ""
                text_keys |= set(stored_keys(url)) if url else set()
            _delete(store, pk, sk)
            state += 1
        elif pk == "SOURCES" and "url" in item and in_domain(item["url"]["S"], [domain]):
            store.delete_source(sk)
            sources += 1
    if s3 is not None and bucket:
        for key in sorted(text_keys):
            resp = s3.list_object_versions(Bucket=bucket, Prefix=key)
            for v in resp.get("Versions", []) + resp.get("DeleteMarkers", []):
                if v["Key"] == key:
                    s3.delete_object(Bucket=bucket, Key=key, VersionId=v["VersionId"])
                    objects += 1
    if not keep_block:
        unblock(store, domain)
    return PurgeReport(domain, state, sources, 0, objects)


def list_blocks(store: DynamoStore) -> list[tuple[str, str]]:
    return store.blocks()


def unblock(store: DynamoStore, domain: str) -> None:
    store.unblock(domain)

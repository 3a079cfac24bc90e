"""The operator's adapter on the table (``heed_aws.table``): ``heed_core.store.OperatorStore``
for ``heed sources``, ``block``, ``purge`` and the rest. By key, one partition at most, never a
Scan but ``all_hosts`` (a table written before the domain index existed)."""
from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from heed_core.hoststate import HostRecord, encode_blob
from heed_core.urls import in_domain
from heed_core.work import Source

from heed_aws.table import _BLOCKS_KEY, Table, _blob, _domain_key, _n, _num, _s, decode_host

__all__ = ["DynamoOperatorStore", "S3Texts"]


class DynamoOperatorStore(Table):
    """The operator's calls on a bot's table, beside the reads ``Table`` has."""

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
        return self._if("update_item", f"update {host}", TableName=self.table,
                        Key={"pk": _s(f"H#{host}"), "sk": _s("HOST")},
                        UpdateExpression="SET st = :st, v = :v1", ConditionExpression="v = :v",
                        ExpressionAttributeValues={":st": {"B": encode_blob(state)},
                                                   ":v1": _n(expected_version + 1), ":v": _n(expected_version)})

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
            # a host indexed meanwhile keeps the item (the condition fails, nothing is deleted)
            self._if("delete_item", f"domain {domain}", TableName=self.table, Key=key,
                     ConditionExpression="attribute_not_exists(hosts)")

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

    def put_sources(self, sources: Sequence[Source]) -> None:
        self._batch_write([{"PutRequest": {"Item": self._source_item(s)}} for s in sources], "sources")

    def delete_source(self, source_id: str) -> None:
        for sk in (source_id, f"{source_id}#read"):
            self._call("delete_item", f"source {source_id}", TableName=self.table,
                       Key={"pk": _s("SOURCES"), "sk": _s(sk)})

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
        return self._if("update_item", f"source {source.id}", TableName=self.table,
                        Key={"pk": _s("SOURCES"), "sk": _s(source.id)},
                        UpdateExpression="SET #u = :u, #k = :k, #o = :o", ConditionExpression="attribute_exists(pk)",
                        ExpressionAttributeNames={"#u": "url", "#k": "kind", "#o": "options"},
                        ExpressionAttributeValues={":u": _s(source.url), ":k": _s(source.kind),
                                                   ":o": _s(json.dumps(dict(source.options)))})

    def reopen_source(self, source_id: str) -> bool:
        """The source's closed fields cleared; False if there is no such source."""
        return self._if("update_item", f"source {source_id}", TableName=self.table,
                        Key={"pk": _s("SOURCES"), "sk": _s(source_id)},
                        UpdateExpression="SET closed = :f REMOVE closed_reason, closed_at",
                        ConditionExpression="attribute_exists(pk)", ExpressionAttributeValues={":f": {"BOOL": False}})

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


class S3Texts:
    """The results bucket: every version and delete marker of a key."""

    def __init__(self, s3: Any, bucket: str) -> None:
        self.s3 = s3
        self.bucket = bucket

    def versions(self, key: str) -> list[str]:
        out: list[str] = []
        kwargs: dict[str, Any] = {"Bucket": self.bucket, "Prefix": key}
        while True:
            resp = self.s3.list_object_versions(**kwargs)
            out += [v["VersionId"] for v in resp.get("Versions", []) + resp.get("DeleteMarkers", []) if v["Key"] == key]
            if not resp.get("IsTruncated"):
                return out
            kwargs.update(KeyMarker=resp["NextKeyMarker"], VersionIdMarker=resp["NextVersionIdMarker"])

    def delete_version(self, key: str, version_id: str) -> None:
        self.s3.delete_object(Bucket=self.bucket, Key=key, VersionId=version_id)

"""A state directory of the first format (``table.jsonl``: the DynamoDB items a run saved whole,
``bucket.jsonl``: the page text versions) read into the embedded database, row for item.

The items are DynamoDB's own JSON (binary attributes in base64, the host state and outbox
zlib-compressed JSON), laid out as ``heed_aws.store`` keys them; each becomes the row that
``heed_embedded.store`` keeps for the same key. Items whose TTL has passed are left out, as
DynamoDB would have deleted them."""
from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from heed_core.errors import ConfigError

from heed_embedded.db import Database

__all__ = ["MigrationError", "migrate_format_1"]


class MigrationError(ConfigError):
    """A file of the old format that cannot be read: one line, naming the file and the line."""


def _value(attr: Any) -> Any:
    """A DynamoDB attribute value (as the first format saved it) as plain data."""
    if not isinstance(attr, dict) or len(attr) != 1:
        raise ValueError(f"not a DynamoDB attribute: {str(attr)[:80]}")
    (kind, v), = attr.items()
    if kind == "S":
        return str(v)
    if kind == "N":
        text = str(v)
        return float(text) if any(c in text for c in ".eE") else int(text)
    if kind == "BOOL":
        return bool(v)
    if kind == "NULL":
        return None
    if kind == "B64":
        return base64.b64decode(v)
    if kind in ("SS", "NS"):
        return [_value({kind[0]: x}) for x in v]
    if kind == "L":
        return [_value(x) for x in v]
    if kind == "M":
        return {k: _value(x) for k, x in v.items()}
    raise ValueError(f"unknown attribute type {kind}")


def _blob(raw: Any) -> Any:
    """A zlib-compressed JSON attribute (the host state, an outbox, a URL record) as data."""
    return json.loads(zlib.decompress(raw).decode("utf-8")) if raw else None


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        return
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise MigrationError(f"{path}:{number}: not a saved record (edited by hand?)") from exc
            if not isinstance(rec, dict):
                raise MigrationError(f"{path}:{number}: not a saved record (edited by hand?)")
            yield number, rec


def _dump(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str)


def migrate_format_1(directory: Path, db: Database, *, now: float) -> dict[str, int]:
    """Every item of ``directory``'s table.jsonl and every text of its bucket.jsonl into ``db``
    (one transaction: all or nothing). Returns how many rows of each kind."""
    counts: dict[str, int] = {}

    def add(kind: str) -> None:
        counts[kind] = counts.get(kind, 0) + 1

    with db.write("migrate") as c:
        for number, raw in _lines(directory / "table.jsonl"):
            try:
                item = {k: _value(v) for k, v in raw.items()}
                pk, sk = str(item.pop("pk")), str(item.pop("sk"))
            except (ValueError, KeyError, TypeError) as exc:
                raise MigrationError(f"{directory / 'table.jsonl'}:{number}: {exc}") from exc
            ttl = float(item.pop("ttl", 0) or 0)
            if ttl and ttl < now:
                continue  # DynamoDB had deleted it
            expires = ttl or now + 30 * 86400.0
            try:
                if pk.startswith("H#"):
                    host = pk[2:]
                    if sk == "HOST":
                        c.execute("INSERT OR REPLACE INTO hosts (host, v, own, lease, st, ob, expires) "
                                  "VALUES (?, ?, ?, ?, ?, ?, ?)",
                                  (host, int(item["v"]), item.get("own"), float(item.get("lease", 0.0)),
                                   _dump(_blob(item.get("st")) or {}),
                                   _dump(_blob(item["ob"])) if item.get("ob") else None, expires))
                    elif sk.startswith("AUX#"):
                        c.execute("INSERT OR REPLACE INTO aux (host, kind, data, expires) VALUES (?, ?, ?, ?)",
                                  (host, sk[4:], _dump(_blob(item.get("d")) or {}), expires))
                    elif sk == "DRAIN":
                        c.execute("INSERT OR REPLACE INTO marks (host, v, sent, expires) VALUES (?, ?, ?, ?)",
                                  (host, int(item.get("v", 0)), item.get("sent") or "[]", expires))
                    elif sk.startswith("U#"):
                        data = _blob(item.get("d")) or {}
                        c.execute("INSERT OR REPLACE INTO urls (url, host, data, expires) VALUES (?, ?, ?, ?)",
                                  (str(data["u"]), host, _dump(data), expires))
                    else:
                        raise ValueError(f"unknown item {sk!r} of a host")
                    add(sk.split("#")[0])
                elif pk == "SOURCES":
                    if sk.endswith("#read"):
                        c.execute("INSERT OR REPLACE INTO source_reads (id, data) VALUES (?, ?)",
                                  (sk[: -len("#read")], _dump(item)))
                    else:
                        if isinstance(item.get("options"), str):
                            item["options"] = json.loads(item["options"])
                        c.execute("INSERT OR REPLACE INTO sources (id, data) VALUES (?, ?)", (sk, _dump(item)))
                    add("SOURCES")
                elif pk.startswith("QUOTA#"):
                    key = pk[len("QUOTA#"):]
                    c.execute("INSERT OR REPLACE INTO quotas (key, n, expires) VALUES (?, ?, ?)",
                              (key, int(item.get("n", 0)), expires))
                    for entry in item.get("tg") or []:
                        who, _, n = str(entry).rpartition("=")
                        c.execute("INSERT OR REPLACE INTO quota_takers (key, taker, granted) VALUES (?, ?, ?)",
                                  (key, who, int(n)))
                    add("QUOTA")
                elif pk == "BLOCKS":
                    for name, value in item.items():
                        if name.startswith("!"):
                            c.execute("INSERT OR REPLACE INTO purges (domain, at) VALUES (?, ?)",
                                      (name[1:], float(value)))
                        elif not name.startswith("@"):
                            at = item.get(f"@{name}")
                            c.execute("INSERT OR REPLACE INTO blocks (domain, reason, at) VALUES (?, ?, ?)",
                                      (name, str(value) or "blocked by the operator",
                                       float(at) if at is not None else None))
                    add("BLOCKS")
                elif pk == "META":
                    c.execute("INSERT OR REPLACE INTO meta (key, data, version) VALUES (?, ?, ?)",
                              (sk, str(item["data"]), int(item.get("version", 0))))
                    add("META")
                elif pk.startswith("DOMAIN#"):
                    for host in item.get("hosts") or []:
                        name = host.split("://", 1)[-1].rsplit(":", 1)[0].strip("[]").lower()
                        c.execute("INSERT OR IGNORE INTO domain_index (host, rname) VALUES (?, ?)",
                                  (host, ".".join(reversed(name.split(".")))))
                    add("DOMAIN")
                else:
                    raise ValueError(f"unknown item {pk!r}/{sk!r}")
            except (ValueError, KeyError, TypeError, zlib.error) as exc:
                raise MigrationError(f"{directory / 'table.jsonl'}:{number}: {type(exc).__name__}: {exc}") from exc
        for number, obj in _lines(directory / "bucket.jsonl"):
            try:
                text = base64.b64decode(obj["body"]).decode("utf-8", "replace")
                c.execute("INSERT INTO texts (key, text, at) VALUES (?, ?, ?)", (str(obj["key"]), text, now))
            except (KeyError, ValueError, TypeError) as exc:
                raise MigrationError(f"{directory / 'bucket.jsonl'}:{number}: {exc}") from exc
            add("texts")
    return counts

"""The embedded store's rows for the operator (``heed_core.store.OperatorStore``'s host calls:
read, change and purge a domain's hosts), for what is kept keyed as DynamoDB would key it (a
dump, the retention's reads) and for its housekeeping (what DynamoDB would expire by TTL).
A part of ``store.SqliteStore`` (its base class), apart so that each file stays small enough
to read whole (issue 36)."""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from heed_core.hoststate import HostRecord
from heed_core.urls import host_name, in_domain, short_hash

from heed_embedded.db import Database
from heed_embedded.rows import dumps, loads, rname

__all__ = ["OperatorRows"]


class OperatorRows:
    """The operator's calls, the items as DynamoDB would key them and the housekeeping of
    ``store.SqliteStore``: on its ``db``, a host's records read with its ``read_turn_hosts``."""

    db: Database

    def read_turn_hosts(self, hosts: Sequence[str], *, aux: Sequence[str] = ()) -> dict[str, HostRecord]:
        raise NotImplementedError  # store.SqliteStore's

    # --- the operator's calls ------------------------------------------------------------------------
    def read_hosts(self, hosts: Iterable[str]) -> dict[str, HostRecord]:
        """Many hosts' items (no aux items); a host never seen is left out."""
        got = self.read_turn_hosts(list(hosts))
        return {h: r for h, r in got.items() if r.version > 0}

    def update_host_state(self, host: str, expected_version: int, state: Mapping[str, Any]) -> bool:
        """An operator's change of a host's state: version + 1, owner, lease and outbox untouched;
        False when the item is gone or no longer at ``expected_version``."""
        with self.db.write(f"update {host}") as c:
            cur = c.execute("UPDATE hosts SET st = ?, v = v + 1 WHERE host = ? AND v = ?",
                            (dumps(state), host, expected_version))
            return cur.rowcount == 1

    def domain_hosts(self, domain: str) -> list[str]:
        """The indexed hosts of ``domain`` and its subdomains (one range of the reversed names)."""
        r = rname(domain)
        with self.db.read(f"domain {domain}") as c:
            rows = c.execute("SELECT host FROM domain_index WHERE rname = ? OR (rname > ? AND rname < ?)",
                             (r, r + ".", r + "/")).fetchall()
        return sorted(h for (h,) in rows if in_domain(h, [domain]))

    def unindex_hosts(self, domain: str, hosts: Sequence[str]) -> None:
        if not hosts:
            return
        with self.db.write(f"domain {domain}") as c:
            c.executemany("DELETE FROM domain_index WHERE host = ?", [(h,) for h in hosts])

    def host_items(self, host: str) -> list[tuple[str, str | None]]:
        """Everything kept of the host, as DynamoDB's sort keys name it: (key, the URL of a URL record)."""
        out: list[tuple[str, str | None]] = []
        with self.db.read(f"host {host}") as c:
            if c.execute("SELECT 1 FROM hosts WHERE host = ?", (host,)).fetchone():
                out.append(("HOST", None))
            out += [(f"AUX#{k}", None) for (k,) in c.execute("SELECT kind FROM aux WHERE host = ?", (host,))]
            if c.execute("SELECT 1 FROM marks WHERE host = ?", (host,)).fetchone():
                out.append(("DRAIN", None))
            out += [(f"U#{short_hash(u, n=32)}", u) for (u,) in c.execute("SELECT url FROM urls WHERE host = ?",
                                                                          (host,))]
        return sorted(out)

    def delete_host_items(self, host: str, sort_keys: Sequence[str]) -> int:
        keys = set(sort_keys)
        with self.db.write(f"delete {host}") as c:
            if "HOST" in keys:
                c.execute("DELETE FROM hosts WHERE host = ?", (host,))
                c.execute("DELETE FROM attempts WHERE host = ?", (host,))
            if "DRAIN" in keys:
                c.execute("DELETE FROM marks WHERE host = ?", (host,))
            c.executemany("DELETE FROM aux WHERE host = ? AND kind = ?",
                          [(host, k[4:]) for k in keys if k.startswith("AUX#")])
            hashes = {k[2:] for k in keys if k.startswith("U#")}
            if hashes:
                urls = [u for (u,) in c.execute("SELECT url FROM urls WHERE host = ?", (host,))
                        if short_hash(u, n=32) in hashes]
                c.executemany("DELETE FROM urls WHERE url = ?", [(u,) for u in urls])
        return len(keys)

    def all_hosts(self) -> list[str]:
        """Every host anything is kept of (``heed purge --scan``)."""
        with self.db.read("all hosts") as c:
            rows = c.execute("SELECT host FROM hosts UNION SELECT host FROM marks UNION SELECT host FROM aux "
                             "UNION SELECT host FROM urls").fetchall()
        return sorted(h for (h,) in rows)

    # --- what is kept, as DynamoDB would key it -----------------------------------------------------
    def items(self) -> list[dict[str, Any]]:
        """Every row as the DynamoDB item the AWS store keeps for the same key (``pk``, ``sk`` and
        its fields, decoded): what a test or an operator searches to see what is stored."""
        out: list[dict[str, Any]] = []
        with self.db.read("items") as c:
            for host, v, own, lease, st, ob, exp in c.execute(
                    "SELECT host, v, own, lease, st, ob, expires FROM hosts"):
                out.append({"pk": f"H#{host}", "sk": "HOST", "v": v, "own": own, "lease": lease, "st": loads(st),
                            "ob": loads(ob) if ob else None, "ttl": exp})
            for host, kind, data in c.execute("SELECT host, kind, data FROM aux"):
                out.append({"pk": f"H#{host}", "sk": f"AUX#{kind}", "d": loads(data)})
            for host, v, sent in c.execute("SELECT host, v, sent FROM marks"):
                out.append({"pk": f"H#{host}", "sk": "DRAIN", "v": v, "sent": loads(sent)})
            for url, host, data in c.execute("SELECT url, host, data FROM urls"):
                out.append({"pk": f"H#{host}", "sk": f"U#{short_hash(url, n=32)}", "d": loads(data)})
            for sid, data in c.execute("SELECT id, data FROM sources"):
                out.append({"pk": "SOURCES", "sk": sid, **loads(data)})
            for sid, data in c.execute("SELECT id, data FROM source_reads"):
                out.append({"pk": "SOURCES", "sk": f"{sid}#read", **loads(data)})
            takers: dict[str, list[str]] = {}
            for key, taker, granted in c.execute("SELECT key, taker, granted FROM quota_takers"):
                takers.setdefault(key, []).append(f"{taker}={granted}")
            for key, n in c.execute("SELECT key, n FROM quotas"):
                out.append({"pk": f"QUOTA#{key}", "sk": "N", "n": n, "tg": sorted(takers.get(key, []))})
            blocks: dict[str, Any] = {}
            for domain, reason, at in c.execute("SELECT domain, reason, at FROM blocks"):
                blocks[domain] = reason
                if at is not None:
                    blocks[f"@{domain}"] = at
            blocks.update({f"!{d}": at for d, at in c.execute("SELECT domain, at FROM purges")})
            if blocks:
                out.append({"pk": "BLOCKS", "sk": "ALL", **blocks})
            for key, data, version in c.execute("SELECT key, data, version FROM meta"):
                out.append({"pk": "META", "sk": key, "data": data, "version": version})
            names: dict[str, list[str]] = {}
            for (host,) in c.execute("SELECT host FROM domain_index"):
                names.setdefault(host_name(host), []).append(host)
            out += [{"pk": f"DOMAIN#{n}", "sk": "HOSTS", "hosts": sorted(h)} for n, h in names.items()]
        return sorted(out, key=lambda i: (str(i["pk"]), str(i["sk"])))

    def dump(self) -> str:
        """``items()`` one JSON a line (sorted keys): everything the store keeps, to search."""
        return "\n".join(json.dumps(i, sort_keys=True, ensure_ascii=False, default=str) for i in self.items())

    # --- housekeeping ----------------------------------------------------------------------------
    def prune(self, now: float) -> dict[str, int]:
        """Delete what DynamoDB's TTL would have deleted by ``now`` (host items not written for 30
        days, URL records after 400, expired caps); returns how many rows of each."""
        out: dict[str, int] = {}
        with self.db.write("prune") as c:
            for table in ("hosts", "aux", "marks", "urls", "attempts"):
                out[table] = c.execute(f"DELETE FROM {table} WHERE expires < ?", (now,)).rowcount
            gone = [k for (k,) in c.execute("SELECT key FROM quotas WHERE expires < ?", (now,))]
            c.executemany("DELETE FROM quota_takers WHERE key = ?", [(k,) for k in gone])
            out["quotas"] = c.execute("DELETE FROM quotas WHERE expires < ?", (now,)).rowcount
        return out

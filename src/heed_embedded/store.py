"""The crawl's state in SQLite, behind ``heed_core.store.HostStore`` and the operator's calls
(``heed_core.store.OperatorStore``'s methods), with DynamoStore's semantics key for key.

Each DynamoDB item is a row: the host's item (``hosts``: version, owner and lease, the state, the
outbox of the last commit), its big robots.txt and tdmrep.json (``aux``), its drain mark
(``marks``), URL records (``urls``), sources and their read-state (``sources``,
``source_reads``), the caps shared by all hosts (``quotas``), the block list and purge marks
(``blocks``, ``purges``), the bookkeeping records (``meta``) and the index of a domain's hosts
(``domain_index``: by the reversed host name, so a domain and its subdomains are one range).
The conditional write is ``UPDATE ... WHERE v = ?`` (or an insert that finds no row). The
contract test (tests/unit/test_store_contract.py) runs the same class against this store,
DynamoStore and MemoryStore."""
from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from heed_core.hoststate import DrainMark, HostRecord, Outbox, salvage_outbox
from heed_core.store import READ_FIELDS
from heed_core.urls import authority, host_name, in_domain, short_hash
from heed_core.work import Source, UrlRecord, as_task_kind

from heed_embedded.db import Database

__all__ = ["SqliteStore", "SqliteTexts", "suffixes"]

_URL_TTL_S = 400 * 86400.0  # as DynamoStore: what a URL told us outlives any round
_AUX_TTL_S = 30 * 86400.0
_CHUNK = 400  # parameters in one IN (...) list
_SOURCE_FIELDS = frozenset(Source.__dataclass_fields__)


def _dumps(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def suffixes(host: str) -> list[str]:
    """The host's name and every parent domain (news.a.example: itself, a.example, example)."""
    parts = host_name(host).split(".")
    return [".".join(parts[i:]) for i in range(len(parts))]


def _rname(name: str) -> str:
    return ".".join(reversed(name.lower().strip(".").split(".")))


def _chunks(items: Sequence[str]) -> Iterable[Sequence[str]]:
    for i in range(0, len(items), _CHUNK):
        yield items[i:i + _CHUNK]


def _marks(n: int) -> str:
    return ",".join("?" * n)


class SqliteStore:
    """Implements ``heed_core.store.HostStore`` (and the operator's calls) on ``db``. ``clock``
    stamps the expiry of what DynamoDB would expire by TTL (the engine's clock: wall time in a
    state directory, the simulated one in a conformance run)."""

    def __init__(self, db: Database, clock: Callable[[], float] = time.time) -> None:
        self.db = db
        self.clock = clock
        self._local = threading.local()  # the URL whose in-flight mark this thread's turn holds

    # --- requests in flight (the embedded engine's marks: heed_embedded.engine.EmbeddedCrawler) ------
    def attempts(self, url: str) -> int:
        """How many requests of ``url`` were marked in flight and got no committed answer."""
        with self.db.read("attempts") as c:
            row = c.execute("SELECT n FROM attempts WHERE url = ?", (url,)).fetchone()
        return int(row[0]) if row is not None else 0

    def mark_attempt(self, url: str, host: str, now: float, expires_at: float) -> None:
        """Mark a request of ``url`` in flight (a write that survives a kill, not a wait for the
        disk: a power cut that loses it costs at most one more request). The next host write of
        this thread that lands deletes the mark, in its own transaction: its answer is committed."""
        with self.db.write("attempt", durable=False) as c:
            c.execute("INSERT INTO attempts (url, host, n, at, expires) VALUES (?, ?, 1, ?, ?) "
                      "ON CONFLICT (url) DO UPDATE SET n = n + 1, at = excluded.at, expires = excluded.expires",
                      (url, host, now, expires_at))
        self._local.marked = (url, host)

    def hold_mark(self, url: str | None, host: str = "") -> None:
        """Which URL's mark the next landed write of ``host`` by this thread deletes (None: none)."""
        self._local.marked = (url, host) if url is not None else None

    def held_mark(self) -> tuple[str, str] | None:
        """(url, host) of the mark this thread's turn holds, or None."""
        marked: tuple[str, str] | None = getattr(self._local, "marked", None)
        return marked

    def clear_attempt(self) -> None:
        """Delete this thread's mark now (its request was answered, but its turn failed after)."""
        marked = self.held_mark()
        if marked is not None:
            with self.db.write("attempt") as c:
                c.execute("DELETE FROM attempts WHERE url = ?", (marked[0],))
            self._local.marked = None

    # --- the host item ---------------------------------------------------------------------------
    def read_host(self, host: str, *, aux: Sequence[str] = ()) -> HostRecord:
        return self.read_turn_hosts([host], aux=aux)[host]

    def read_turn_hosts(self, hosts: Sequence[str], *, aux: Sequence[str] = ()) -> dict[str, HostRecord]:
        wanted = list(dict.fromkeys(hosts))
        if not wanted:
            return {}
        items: dict[str, tuple[Any, ...]] = {}
        extra: dict[str, dict[str, str]] = {}
        marks: dict[str, tuple[int, str]] = {}
        names = sorted({s for h in wanted for s in suffixes(h)})
        blocks: dict[str, str] = {}
        purges: dict[str, float] = {}
        with self.db.read("read hosts") as c:
            for part in _chunks(wanted):
                q = _marks(len(part))
                for row in c.execute(f"SELECT host, v, own, lease, st, ob FROM hosts WHERE host IN ({q})", part):
                    items[row[0]] = row
                for host, v, sent in c.execute(f"SELECT host, v, sent FROM marks WHERE host IN ({q})", part):
                    marks[host] = (v, sent)
                if aux:
                    kinds = list(aux)
                    for host, kind, data in c.execute(
                            f"SELECT host, kind, data FROM aux WHERE host IN ({q}) AND kind IN ({_marks(len(kinds))})",
                            [*part, *kinds]):
                        extra.setdefault(host, {})[kind] = data
            for part in _chunks(names):
                q = _marks(len(part))
                blocks.update(c.execute(f"SELECT domain, reason FROM blocks WHERE domain IN ({q})", part).fetchall())
                purges.update(c.execute(f"SELECT domain, at FROM purges WHERE domain IN ({q})", part).fetchall())
        return {h: self._record(h, items.get(h), marks.get(h), extra.get(h, {}), blocks, purges) for h in wanted}

    @staticmethod
    def _record(host: str, row: tuple[Any, ...] | None, mark: tuple[int, str] | None, aux: Mapping[str, str],
                blocks: Mapping[str, str], purges: Mapping[str, float]) -> HostRecord:
        """A host's rows as a ``HostRecord``, decoded part by part (``corrupt`` names what did not
        decode), as DynamoStore's ``decode_host``."""
        lost: list[str] = []
        drained = DrainMark()
        if mark is not None:
            try:
                drained = DrainMark(int(mark[0]), tuple(str(x) for x in json.loads(mark[1] or "[]")))
            except (TypeError, ValueError) as exc:
                lost.append(f"drain mark: {exc}")
        extra: dict[str, dict[str, Any]] = {}
        for kind, data in aux.items():
            try:
                value = json.loads(data)
                if not isinstance(value, dict):
                    raise ValueError("not a mapping")
                extra[kind] = value
            except ValueError as exc:
                lost.append(f"{kind} cache: {exc}")
        names = suffixes(host)
        blocked = next((blocks[n] or "blocked by the operator" for n in names if n in blocks), None)
        purged = max((float(purges[n]) for n in names if n in purges), default=0.0)
        if row is None:
            return HostRecord(host=host, aux=extra, drained=drained, blocked=blocked, purged_at=purged,
                              corrupt=tuple(lost))
        _, v, own, lease, st, ob = row
        try:
            state = json.loads(st)
            if not isinstance(state, dict):
                raise ValueError("not a mapping")
        except ValueError as exc:
            state = {}
            lost.append(f"host state (pacing, frontier, caches): {exc}")
        outbox = None
        if ob:
            try:
                outbox, bad = salvage_outbox(json.loads(ob))
                lost += bad
            except ValueError as exc:
                lost.append(f"outbox: {exc}")
        return HostRecord(host=host, version=int(v), owner=own, lease_until=float(lease or 0.0), state=state,
                          outbox=outbox, aux=extra, drained=drained, blocked=blocked, purged_at=purged,
                          corrupt=tuple(lost))

    def write_host(self, host: str, expected_version: int, *, owner: str | None, lease_until: float,
                   state: Mapping[str, Any], outbox: Outbox | None, expires_at: float) -> bool:
        st = _dumps(state)
        ob = _dumps(outbox.to_compact()) if outbox else None
        own, lease = (owner, float(lease_until)) if owner else (None, 0.0)
        marked = self.held_mark()
        # (Everything above is made before the write lock is taken: the lock is held for SQL only.)
        with self.db.write(f"write {host}") as c:
            if expected_version == 0:
                try:
                    c.execute("INSERT INTO hosts (host, v, own, lease, st, ob, expires) VALUES (?, 1, ?, ?, ?, ?, ?)",
                              (host, own, lease, st, ob, float(expires_at)))
                except sqlite3.IntegrityError:
                    return False  # the item exists: another turn wrote it first
                c.execute("INSERT OR IGNORE INTO domain_index (host, rname) VALUES (?, ?)",
                          (host, _rname(host_name(host))))
                landed = True
            else:
                cur = c.execute("UPDATE hosts SET v = v + 1, own = ?, lease = ?, st = ?, ob = ?, expires = ? "
                                "WHERE host = ? AND v = ?",
                                (own, lease, st, ob, float(expires_at), host, expected_version))
                landed = cur.rowcount == 1
            if landed and marked is not None and marked[1] == host:
                # The request in flight is answered and its answer committed, in this transaction.
                c.execute("DELETE FROM attempts WHERE url = ?", (marked[0],))
                self._local.marked = None
            return landed

    def put_aux(self, host: str, kind: str, data: Mapping[str, Any]) -> None:
        row = (host, kind, _dumps(data), self.clock() + _AUX_TTL_S)
        with self.db.write(f"aux {kind} {host}") as c:
            c.execute("INSERT OR REPLACE INTO aux (host, kind, data, expires) VALUES (?, ?, ?, ?)", row)

    # --- URL records, caps, drains ------------------------------------------------------------------
    def url_records(self, urls: Iterable[str]) -> dict[str, UrlRecord]:
        wanted = list(dict.fromkeys(urls))
        for url in wanted:
            authority(url)  # a URL that can have no record is refused as DynamoStore's key refuses it (BadUrl)
        out: dict[str, UrlRecord] = {}
        if not wanted:
            return out
        with self.db.read("url records") as c:
            for part in _chunks(wanted):
                for (data,) in c.execute(f"SELECT data FROM urls WHERE url IN ({_marks(len(part))})", part):
                    rec = UrlRecord.from_compact(json.loads(data))
                    out[rec.url] = rec
        return out

    def get_url(self, url: str) -> UrlRecord | None:
        return self.url_records([url]).get(url)

    def take_quota(self, key: str, taker: str, want: int, limit: int, expires_at: float) -> int:
        """Idempotent per taker: a taker's grant is kept, and taking again returns it."""
        with self.db.write(f"quota {key}") as c:
            held = c.execute("SELECT granted FROM quota_takers WHERE key = ? AND taker = ?", (key, taker)).fetchone()
            if held is not None:
                return int(held[0])
            row = c.execute("SELECT n FROM quotas WHERE key = ?", (key,)).fetchone()
            used = int(row[0]) if row else 0
            grant = max(0, min(int(want), int(limit) - used))
            if grant:
                c.execute("INSERT OR REPLACE INTO quotas (key, n, expires) VALUES (?, ?, ?)",
                          (key, used + grant, float(expires_at) + 3600.0))
                c.execute("INSERT INTO quota_takers (key, taker, granted) VALUES (?, ?, ?)", (key, taker, grant))
            return grant

    def write_drained(self, records: Sequence[UrlRecord], marks: Sequence[tuple[str, DrainMark]],
                      reads: Sequence[tuple[str, Mapping[str, Any]]] = ()) -> None:
        now = self.clock()
        with self.db.write("drained") as c:
            for source_id, fields in reads:
                c.execute("INSERT OR REPLACE INTO source_reads (id, data) VALUES (?, ?)",
                          (source_id, _dumps({k: list(v) if isinstance(v, tuple) else v
                                              for k, v in fields.items() if k in READ_FIELDS})))
            c.executemany("INSERT OR REPLACE INTO urls (url, host, data, expires) VALUES (?, ?, ?, ?)",
                          [(r.url, authority(r.url), _dumps(r.to_compact()), now + _URL_TTL_S) for r in records])
            c.executemany("INSERT OR REPLACE INTO marks (host, v, sent, expires) VALUES (?, ?, ?, ?)",
                          [(h, m.version, _dumps(list(m.sent)), now + _AUX_TTL_S) for h, m in marks])

    # --- sources ------------------------------------------------------------------------------------
    @staticmethod
    def _source(source_id: str, raw: str, read: str | None) -> Source:
        data = json.loads(raw)
        if read is not None:
            fields = json.loads(read)
            # A read-state as new as the source's own fields wins (the drain writes it with its batch).
            if float(fields.get("last_read") if fields.get("last_read") is not None else -1.0) >= float(
                    data.get("last_read") if data.get("last_read") is not None else -1.0):
                data.update({k: v for k, v in fields.items() if k in READ_FIELDS})
        last = data.get("last_read")
        return Source(id=source_id, url=str(data["url"]), kind=as_task_kind(data["kind"]),
                      options=dict(data.get("options") or {}),
                      closed=bool(data.get("closed", False)), closed_reason=data.get("closed_reason"),
                      last_read=float(last) if last is not None else None,
                      seen_items=tuple(str(x) for x in data.get("seen_items") or ()))

    @staticmethod
    def _source_data(src: Source) -> str:
        data: dict[str, Any] = {"url": src.url, "kind": src.kind, "options": dict(src.options), "closed": src.closed}
        if src.closed_reason:
            data["closed_reason"] = src.closed_reason
        if src.last_read is not None:
            data["last_read"] = float(src.last_read)
        if src.seen_items:
            data["seen_items"] = list(src.seen_items)
        return _dumps(data)

    def _rows(self, c: sqlite3.Connection, where: str = "",
              args: Sequence[Any] = ()) -> list[tuple[str, str, str | None]]:
        return c.execute("SELECT s.id, s.data, r.data FROM sources s LEFT JOIN source_reads r ON r.id = s.id "
                         f"{where} ORDER BY s.id", args).fetchall()

    def update_source(self, source_id: str, fields: Mapping[str, Any]) -> None:
        if not fields:
            return
        with self.db.write(f"source {source_id}") as c:
            row = c.execute("SELECT data FROM sources WHERE id = ?", (source_id,)).fetchone()
            if row is None:
                return  # a removed or purged source is not brought back
            data = json.loads(row[0])
            changes: dict[str, Any] = {k: list(v) if isinstance(v, tuple) else v for k, v in fields.items()}
            if changes.get("last_read") is not None and data.get("last_read") is not None \
                    and float(data["last_read"]) > float(changes["last_read"]):
                changes.pop("last_read")  # never moves backwards
            data.update(changes)
            c.execute("UPDATE sources SET data = ? WHERE id = ?", (_dumps(data), source_id))

    def list_sources(self) -> list[Source]:
        with self.db.read("sources") as c:
            return [self._source(i, d, r) for i, d, r in self._rows(c)]

    def source_page(self, after: str | None, limit: int, *, upto: str | None = None) -> tuple[list[Source], str | None]:
        with self.db.read("sources") as c:
            if upto is not None:
                stop = upto.removesuffix("#read")
                rows = self._rows(c, "WHERE s.id > ? AND s.id <= ?", (after or "", stop)) if after is not None \
                    else self._rows(c, "WHERE s.id <= ?", (stop,))
                return [self._source(i, d, r) for i, d, r in rows], None
            n = max(1, int(limit) // 2)  # as DynamoDB's Limit, which counts a source's read-state as an item
            where, args = ("WHERE s.id > ?", [after]) if after is not None else ("", [])
            rows = c.execute("SELECT s.id, s.data, r.data FROM sources s LEFT JOIN source_reads r ON r.id = s.id "
                             f"{where} ORDER BY s.id LIMIT ?", [*args, n + 1]).fetchall()
        page = rows[:n]
        return [self._source(i, d, r) for i, d, r in page], (page[-1][0] if len(rows) > n else None)

    def get_source(self, source_id: str) -> Source | None:
        with self.db.read(f"source {source_id}") as c:
            rows = self._rows(c, "WHERE s.id = ?", (source_id,))
        return self._source(*rows[0]) if rows else None

    def put_source(self, source: Source) -> None:
        self.put_sources([source])

    def put_sources(self, sources: Sequence[Source]) -> None:
        with self.db.write("sources") as c:
            c.executemany("INSERT OR REPLACE INTO sources (id, data) VALUES (?, ?)",
                          [(s.id, self._source_data(s)) for s in sources])

    def delete_source(self, source_id: str) -> None:
        with self.db.write(f"source {source_id}") as c:
            c.execute("DELETE FROM sources WHERE id = ?", (source_id,))
            c.execute("DELETE FROM source_reads WHERE id = ?", (source_id,))

    def source_details(self) -> list[tuple[Source, dict[str, Any]]]:
        """Every source with the fields a Source does not carry: ``closed_at``, ``last_status``."""
        out = []
        with self.db.read("sources") as c:
            rows = self._rows(c)
        for sid, raw, read in rows:
            data = json.loads(raw)
            status = json.loads(read).get("last_status") if read is not None else data.get("last_status")
            out.append((self._source(sid, raw, read),
                        {"closed_at": float(data["closed_at"]) if data.get("closed_at") is not None else None,
                         "last_status": int(status) if status is not None else None}))
        return out

    def update_source_definition(self, source: Source) -> bool:
        with self.db.write(f"source {source.id}") as c:
            row = c.execute("SELECT data FROM sources WHERE id = ?", (source.id,)).fetchone()
            if row is None:
                return False
            data = json.loads(row[0])
            data.update(url=source.url, kind=source.kind, options=dict(source.options))
            c.execute("UPDATE sources SET data = ? WHERE id = ?", (_dumps(data), source.id))
            return True

    def reopen_source(self, source_id: str) -> bool:
        with self.db.write(f"source {source_id}") as c:
            row = c.execute("SELECT data FROM sources WHERE id = ?", (source_id,)).fetchone()
            if row is None:
                return False
            data = json.loads(row[0])
            data["closed"] = False
            data.pop("closed_reason", None)
            data.pop("closed_at", None)
            c.execute("UPDATE sources SET data = ? WHERE id = ?", (_dumps(data), source_id))
            return True

    # --- AUBE-11's request slots: meta rows inflight#<n>, as DynamoStore's INFLIGHT items ----------
    def take_slot(self, slots: int, holder: str, until: float, now: float) -> int | None:
        # Not waited onto the disk: a slot lost to a power cut is one nobody holds (the process
        # that held it is gone with its request).
        with self.db.write("slot", durable=False) as c:
            for n in range(slots):
                row = c.execute("SELECT data FROM meta WHERE key = ?", (f"inflight#{n}",)).fetchone()
                held = json.loads(row[0]) if row else {}
                if not held or held.get("holder") == holder or float(held.get("until", 0)) <= now:
                    c.execute("INSERT OR REPLACE INTO meta (key, data, version) VALUES (?, ?, 0)",
                              (f"inflight#{n}", _dumps({"holder": holder, "until": float(until)})))
                    return n
        return None

    def release_slot(self, slot: int, holder: str) -> None:
        with self.db.write("slot", durable=False) as c:
            row = c.execute("SELECT data FROM meta WHERE key = ?", (f"inflight#{slot}",)).fetchone()
            if row and json.loads(row[0]).get("holder") == holder:
                c.execute("UPDATE meta SET data = ? WHERE key = ?",
                          (_dumps({"holder": "", "until": 0.0}), f"inflight#{slot}"))

    # --- meta, blocks, purges ----------------------------------------------------------------------
    def get_meta(self, key: str) -> dict[str, Any] | None:
        with self.db.read(f"meta {key}") as c:
            row = c.execute("SELECT data FROM meta WHERE key = ?", (key,)).fetchone()
        return dict(json.loads(row[0])) if row else None

    def put_meta(self, key: str, value: dict[str, Any], *, expected_version: int | None = None) -> bool:
        version = int(value.get("version", 0))
        with self.db.write(f"meta {key}") as c:
            if expected_version is not None:
                row = c.execute("SELECT version FROM meta WHERE key = ?", (key,)).fetchone()
                if row is not None and int(row[0]) != expected_version:
                    return False
            c.execute("INSERT OR REPLACE INTO meta (key, data, version) VALUES (?, ?, ?)",
                      (key, _dumps(value), version))
            return True

    def block_domain(self, domain: str, reason: str) -> None:
        """COMMON-08: the domain and its subdomains on the block list (when: not recorded)."""
        with self.db.write(f"block {domain}") as c:
            c.execute("INSERT INTO blocks (domain, reason, at) VALUES (?, ?, NULL) "
                      "ON CONFLICT (domain) DO UPDATE SET reason = excluded.reason",
                      (domain.lower().strip("."), reason or "blocked by the operator"))

    def block(self, domain: str, reason: str, at: float) -> None:
        """COMMON-08: block a domain and its subdomains, remembering when."""
        with self.db.write(f"block {domain}") as c:
            c.execute("INSERT OR REPLACE INTO blocks (domain, reason, at) VALUES (?, ?, ?)",
                      (domain.lower().strip("."), reason or "blocked by the operator", float(at)))

    def unblock_domain(self, domain: str) -> bool:
        with self.db.write(f"unblock {domain}") as c:
            return c.execute("DELETE FROM blocks WHERE domain = ?", (domain.lower().strip("."),)).rowcount > 0

    def block_list(self) -> list[tuple[str, str, float | None]]:
        with self.db.read("blocks") as c:
            rows = c.execute("SELECT domain, reason, at FROM blocks ORDER BY domain").fetchall()
        return [(str(d), str(r), float(a) if a is not None else None) for d, r, a in rows]

    def blocked(self, host: str) -> str | None:
        """The block reason for the host or any parent domain."""
        return self.read_host(host).blocked

    def mark_purged(self, domain: str, at: float) -> None:
        """COMMON-08: the purge's tombstone, read with every host: work made before ``at`` is dropped."""
        with self.db.write(f"purge mark {domain}") as c:
            c.execute("INSERT OR REPLACE INTO purges (domain, at) VALUES (?, ?)",
                      (domain.lower().strip("."), float(at)))

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
                            (_dumps(state), host, expected_version))
            return cur.rowcount == 1

    def domain_hosts(self, domain: str) -> list[str]:
        """The indexed hosts of ``domain`` and its subdomains (one range of the reversed names)."""
        r = _rname(domain)
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
                out.append({"pk": f"H#{host}", "sk": "HOST", "v": v, "own": own, "lease": lease, "st": _loads(st),
                            "ob": _loads(ob) if ob else None, "ttl": exp})
            for host, kind, data in c.execute("SELECT host, kind, data FROM aux"):
                out.append({"pk": f"H#{host}", "sk": f"AUX#{kind}", "d": _loads(data)})
            for host, v, sent in c.execute("SELECT host, v, sent FROM marks"):
                out.append({"pk": f"H#{host}", "sk": "DRAIN", "v": v, "sent": _loads(sent)})
            for url, host, data in c.execute("SELECT url, host, data FROM urls"):
                out.append({"pk": f"H#{host}", "sk": f"U#{short_hash(url, n=32)}", "d": _loads(data)})
            for sid, data in c.execute("SELECT id, data FROM sources"):
                out.append({"pk": "SOURCES", "sk": sid, **_loads(data)})
            for sid, data in c.execute("SELECT id, data FROM source_reads"):
                out.append({"pk": "SOURCES", "sk": f"{sid}#read", **_loads(data)})
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


class SqliteTexts:
    """The page texts kept (S3's versioned bucket in AWS): ``heed.operator.actions.TextBucket``'s
    methods for a purge, and the reads the conformance run's checks make."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def versions(self, key: str) -> list[str]:
        with self.db.read(f"texts {key}") as c:
            return [str(v) for (v,) in c.execute("SELECT vid FROM texts WHERE key = ? ORDER BY vid", (key,))]

    def delete_version(self, key: str, version_id: str) -> None:
        with self.db.write(f"texts {key}") as c:
            c.execute("DELETE FROM texts WHERE key = ? AND vid = ?", (key, int(version_id)))

    def all_versions(self) -> dict[str, list[str]]:
        """Every text kept, by key, oldest version first."""
        out: dict[str, list[str]] = {}
        with self.db.read("texts") as c:
            for key, text in c.execute("SELECT key, text FROM texts ORDER BY key, vid"):
                out.setdefault(key, []).append(text)
        return out

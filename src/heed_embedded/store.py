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
DynamoStore and MemoryStore.

The sources (``store_sources.SourceRows``) and the operator's calls and housekeeping
(``store_operator.OperatorRows``) are written in modules of their own, as ``SqliteStore``'s base
classes; ``rows`` says how a value is written in a row."""
from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from heed_core.hoststate import DrainMark, HostRecord, Outbox, salvage_outbox
from heed_core.store import READ_FIELDS
from heed_core.urls import authority, host_name
from heed_core.work import Source, UrlRecord

from heed_embedded.db import Database
from heed_embedded.rows import CHUNK, chunks, dumps, qmarks, rname, suffixes
from heed_embedded.staged import Conflict
from heed_embedded.store_operator import OperatorRows
from heed_embedded.store_sources import SourceRows

__all__ = ["SqliteStore", "SqliteTexts", "suffixes"]

_URL_TTL_S = 400 * 86400.0  # as DynamoStore: what a URL told us outlives any round
_AUX_TTL_S = 30 * 86400.0
_SOURCE_FIELDS = frozenset(Source.__dataclass_fields__)


class SqliteStore(OperatorRows, SourceRows):
    """Implements ``heed_core.store.HostStore`` (and the operator's calls) on ``db``. ``clock``
    stamps the expiry of what DynamoDB would expire by TTL (the engine's clock: wall time in a
    state directory, the simulated one in a conformance run)."""

    def __init__(self, db: Database, clock: Callable[[], float] = time.time) -> None:
        self.db = db
        self.clock = clock
        self._local = threading.local()  # the URL whose in-flight mark this thread's turn holds

    # --- requests in flight (the embedded engine's marks: heed_embedded.crawler.EmbeddedCrawler) -----
    def attempts(self, url: str) -> int:
        """How many requests of ``url`` were marked in flight and got no committed answer."""
        rows = self.db.query("SELECT n FROM attempts WHERE url = ?", (url,), "attempts")
        return int(rows[0][0]) if rows else 0

    @staticmethod
    def write_attempt(c: sqlite3.Connection, url: str, host: str, now: float, expires_at: float) -> None:
        """Mark a request of ``url`` in flight, on ``c`` (the crawler writes it with others',
        ``WriteGroups``: a write that survives a kill, not a wait for the disk: a power cut that
        loses it costs at most one more request). The thread that asked names it with
        ``hold_mark``; its next host write that lands deletes the mark, in its own transaction:
        its answer is committed."""
        c.execute("INSERT INTO attempts (url, host, n, at, expires) VALUES (?, ?, 1, ?, ?) "
                  "ON CONFLICT (url) DO UPDATE SET n = n + 1, at = excluded.at, expires = excluded.expires",
                  (url, host, now, expires_at))

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
        kinds = list(aux)
        if len(wanted) <= CHUNK and len(names) <= CHUNK:
            # One statement, one snapshot: the host's rows, its marks and caches, and the blocks
            # and purges of its names (a turn's read: five SELECTs in a transaction were seven
            # calls into SQLite, each a wait for the GIL on a busy process).
            q, d = qmarks(len(wanted)), qmarks(len(names))
            sql = (f"SELECT 0, host, v, own, lease, st, ob FROM hosts WHERE host IN ({q}) "
                   f"UNION ALL SELECT 1, host, v, sent, NULL, NULL, NULL FROM marks WHERE host IN ({q}) "
                   f"UNION ALL SELECT 3, domain, reason, NULL, NULL, NULL, NULL FROM blocks WHERE domain IN ({d}) "
                   f"UNION ALL SELECT 4, domain, at, NULL, NULL, NULL, NULL FROM purges WHERE domain IN ({d})")
            params = [*wanted, *wanted, *names, *names]
            if kinds:
                sql += (f" UNION ALL SELECT 2, host, kind, data, NULL, NULL, NULL FROM aux WHERE host IN ({q}) "
                        f"AND kind IN ({qmarks(len(kinds))})")
                params += [*wanted, *kinds]
            for tag, *row in self.db.query(sql, params, "read hosts"):
                if tag == 0:
                    items[row[0]] = tuple(row)
                elif tag == 1:
                    marks[row[0]] = (row[1], row[2])
                elif tag == 2:
                    extra.setdefault(row[0], {})[row[1]] = row[2]
                elif tag == 3:
                    blocks[row[0]] = row[1]
                else:
                    purges[row[0]] = row[1]
            return {h: self._record(h, items.get(h), marks.get(h), extra.get(h, {}), blocks, purges) for h in wanted}
        with self.db.read("read hosts") as c:
            for part in chunks(wanted):
                q = qmarks(len(part))
                for row in c.execute(f"SELECT host, v, own, lease, st, ob FROM hosts WHERE host IN ({q})", part):
                    items[row[0]] = row
                for host, v, sent in c.execute(f"SELECT host, v, sent FROM marks WHERE host IN ({q})", part):
                    marks[host] = (v, sent)
                if kinds:
                    for host, kind, data in c.execute(
                            f"SELECT host, kind, data FROM aux WHERE host IN ({q}) AND kind IN ({qmarks(len(kinds))})",
                            [*part, *kinds]):
                        extra.setdefault(host, {})[kind] = data
            for part in chunks(names):
                q = qmarks(len(part))
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
        st = dumps(state)
        ob = dumps(outbox.to_compact()) if outbox else None
        own, lease = (owner, float(lease_until)) if owner else (None, 0.0)
        marked = self.held_mark()
        mark = marked[0] if marked is not None and marked[1] == host else None
        # (Everything above is made before the write lock is taken: the lock is held for SQL only.)
        row = (own, lease, st, ob, float(expires_at))
        if self.db.can_stage():
            # In a batch: staged, landed at the flush or the whole unit undone there (``Conflict``:
            # nothing of the turn's commit is written; its token comes back after the longest gap).
            def staged(c: sqlite3.Connection) -> None:
                if not _write_host(c, host, expected_version, row, mark):
                    raise Conflict(f"{host}: the host item changed during the turn")
            self.db.later(f"write {host}", staged)
            if mark is not None:
                self._local.marked = None
            return True
        with self.db.write(f"write {host}") as c:
            landed = _write_host(c, host, expected_version, row, mark)
            if landed and mark is not None:
                self._local.marked = None
            return landed

    def put_aux(self, host: str, kind: str, data: Mapping[str, Any]) -> None:
        row = (host, kind, dumps(data), self.clock() + _AUX_TTL_S)
        self.db.stage(f"aux {kind} {host}",
                      "INSERT OR REPLACE INTO aux (host, kind, data, expires) VALUES (?, ?, ?, ?)", row)

    # --- URL records, caps, drains ------------------------------------------------------------------
    def url_records(self, urls: Iterable[str]) -> dict[str, UrlRecord]:
        wanted = list(dict.fromkeys(urls))
        for url in wanted:
            authority(url)  # a URL that can have no record is refused as DynamoStore's key refuses it (BadUrl)
        out: dict[str, UrlRecord] = {}
        if not wanted:
            return out
        with self.db.read("url records") as c:
            for part in chunks(wanted):
                for (data,) in c.execute(f"SELECT data FROM urls WHERE url IN ({qmarks(len(part))})", part):
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
        # (Made before the write: staged in a batch, the lock held for SQL only.)
        read_rows = [(source_id, dumps({k: list(v) if isinstance(v, tuple) else v
                                        for k, v in fields.items() if k in READ_FIELDS}))
                     for source_id, fields in reads]
        url_rows = [(r.url, authority(r.url), dumps(r.to_compact()), now + _URL_TTL_S) for r in records]
        mark_rows = [(h, m.version, dumps(list(m.sent)), now + _AUX_TTL_S) for h, m in marks]

        def work(c: sqlite3.Connection) -> None:
            c.executemany("INSERT OR REPLACE INTO source_reads (id, data) VALUES (?, ?)", read_rows)
            c.executemany("INSERT OR REPLACE INTO urls (url, host, data, expires) VALUES (?, ?, ?, ?)", url_rows)
            c.executemany("INSERT OR REPLACE INTO marks (host, v, sent, expires) VALUES (?, ?, ?, ?)", mark_rows)
        self.db.later("drained", work)


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
                              (f"inflight#{n}", dumps({"holder": holder, "until": float(until)})))
                    return n
        return None

    def release_slot(self, slot: int, holder: str) -> None:
        with self.db.write("slot", durable=False) as c:
            row = c.execute("SELECT data FROM meta WHERE key = ?", (f"inflight#{slot}",)).fetchone()
            if row and json.loads(row[0]).get("holder") == holder:
                c.execute("UPDATE meta SET data = ? WHERE key = ?",
                          (dumps({"holder": "", "until": 0.0}), f"inflight#{slot}"))

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
                      (key, dumps(value), version))
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



def _write_host(c: sqlite3.Connection, host: str, expected_version: int, row: tuple[Any, ...],
                mark: str | None) -> bool:
    """The host's item written on ``c`` if it is still at ``expected_version`` (0: none yet), and
    the mark of its answered request deleted with it; False when it changed."""
    if expected_version == 0:
        try:
            c.execute("INSERT INTO hosts (host, v, own, lease, st, ob, expires) VALUES (?, 1, ?, ?, ?, ?, ?)",
                      (host, *row))
        except sqlite3.IntegrityError:
            return False  # the item exists: another turn wrote it first
        c.execute("INSERT OR IGNORE INTO domain_index (host, rname) VALUES (?, ?)", (host, rname(host_name(host))))
    elif c.execute("UPDATE hosts SET v = v + 1, own = ?, lease = ?, st = ?, ob = ?, expires = ? "
                   "WHERE host = ? AND v = ?", (*row, host, expected_version)).rowcount != 1:
        return False
    if mark is not None:
        # The request in flight is answered and its answer committed, in this transaction.
        c.execute("DELETE FROM attempts WHERE url = ?", (mark,))
    return True


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

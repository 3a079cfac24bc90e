"""The embedded store's sources: each a row of ``sources`` (its definition and what was learnt of
it, closed or not) beside its read-state in ``source_reads``, as DynamoStore keeps a source's
item and its reads apart. A part of ``store.SqliteStore`` (its base class), apart so that each
file stays small enough to read whole (issue 36)."""
from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from heed_core.store import READ_FIELDS
from heed_core.work import Source, as_task_kind

from heed_embedded.db import Database
from heed_embedded.rows import dumps

__all__ = ["SourceRows"]


class SourceRows:
    """The sources of ``store.SqliteStore``, on its ``db``: ``heed_core.store.HostStore``'s
    source calls and the operator's."""

    db: Database

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
        return dumps(data)

    def _rows(self, c: sqlite3.Connection, where: str = "",
              args: Sequence[Any] = ()) -> list[tuple[str, str, str | None]]:
        return c.execute("SELECT s.id, s.data, r.data FROM sources s LEFT JOIN source_reads r ON r.id = s.id "
                         f"{where} ORDER BY s.id", args).fetchall()

    def update_source(self, source_id: str, fields: Mapping[str, Any]) -> None:
        if not fields:
            return
        changes: dict[str, Any] = {k: list(v) if isinstance(v, tuple) else v for k, v in fields.items()}

        def work(c: Any) -> None:
            row = c.execute("SELECT data FROM sources WHERE id = ?", (source_id,)).fetchone()
            if row is None:
                return  # a removed or purged source is not brought back
            data = json.loads(row[0])
            new = dict(changes)
            if new.get("last_read") is not None and data.get("last_read") is not None \
                    and float(data["last_read"]) > float(new["last_read"]):
                new.pop("last_read")  # never moves backwards
            data.update(new)
            c.execute("UPDATE sources SET data = ? WHERE id = ?", (dumps(data), source_id))
        self.db.later(f"source {source_id}", work)

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
            c.execute("UPDATE sources SET data = ? WHERE id = ?", (dumps(data), source.id))
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
            c.execute("UPDATE sources SET data = ? WHERE id = ?", (dumps(data), source_id))
            return True

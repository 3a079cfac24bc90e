"""The desk on one machine: a state directory's request log (by host and time), its queue (the
proof file's work item goes where the scheduler's go), its skip log (why a proof file was not
read) and a log line for the operator (``heed serve``'s JSON log: ``desk_action``)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from heed_core.desk.scope import Scope
from heed_core.desk.store import DeskAction
from heed_core.hoststate import TokenOut
from heed_core.profile import Profile

from heed_embedded.db import Database
from heed_embedded.desk import SqliteDeskStore, latest_requests
from heed_embedded.journal import host_ranges, records_by_host, records_by_url
from heed_embedded.queue import WorkQueue
from heed_embedded.store import SqliteStore, SqliteTexts

from heed.desk.backend import StoreBackend
from heed.operator.audit import audit_row

__all__ = ["EmbeddedBackend", "embedded_desk"]

Log = Callable[[str, dict[str, Any]], None]
_PRUNE_EVERY_S = 600.0


def _epoch(value: Any) -> float:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


class EmbeddedBackend(StoreBackend):
    """``heed.desk.backend.Backend`` on a state directory's database ``db``."""

    def __init__(self, profile: Profile, db: Database, *, log: Log | None = None, **kwargs: Any) -> None:
        super().__init__(profile, SqliteStore(db), SqliteTexts(db), where="the desk", **kwargs)
        self.db = db
        self.log = log
        self.queue = WorkQueue(db)
        self.desk_store = SqliteDeskStore(db)
        self._pruned = 0.0

    def _ranges(self, scope: Scope) -> list[tuple[str, str]]:
        return host_ranges(scope.name, scope.port)

    def requests_near(self, scope: Scope, times: Sequence[float], window_s: float) -> list[tuple[float, str]]:
        out: dict[tuple[float, str], None] = {}
        for t in sorted(set(times)):
            for rec in records_by_host(self.db, "requests", self._ranges(scope), since=t - window_s - 1,
                                       until=t + window_s + 1, limit=1000):
                url = str(rec.get("url", ""))
                if scope.covers(url) and rec.get("clock") != "simulated":
                    out[(_epoch(rec.get("t_start")), url)] = None
        return list(out)

    def audit(self, scope: Scope, limit: int) -> list[dict[str, Any]]:
        rows = [audit_row(r) for r in latest_requests(self.db, self._ranges(scope), limit * 2)
                if scope.covers(str(r.get("url", "")))]
        return rows[:limit]

    def ask_fetch(self, work: TokenOut) -> None:
        self.queue.send([work])

    def skipped(self, url: str, since: float) -> str | None:
        found = [r for r in records_by_url(self.db, "skips", [url]) if _epoch(r.get("t")) >= since - 1]
        return str(found[-1].get("reason")) if found else None

    def notify(self, action: DeskAction) -> None:
        fields = {"action": action.kind, "host": action.name, "client": action.client,
                  **{k: v for k, v in action.detail.items() if k in ("reason", "min_delay_s", "items", "texts")}}
        if self.log is not None:
            self.log("desk_action", fields)

    def housekeeping(self, now: float) -> None:
        if now - self._pruned > _PRUNE_EVERY_S:
            self.desk_store.prune(now)
            self._pruned = now


def embedded_desk(profile: Profile, db: Database, *, log: Log | None = None, allow_private: bool = False,
                  resolver: tuple[str, int] | None = None) -> Any:
    """The desk of ``profile`` on a state directory's database."""
    from heed.desk.service import Desk

    backend = EmbeddedBackend(profile, db, log=log, allow_private=allow_private, resolver=resolver)
    return Desk(profile, backend.desk_store, backend)

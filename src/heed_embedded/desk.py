"""The desk's records in the state's database (``heed_core.desk.store.DeskStore``): its secret,
rate-limit counters, proof tokens and sessions as rows of ``desk`` (by key, each with its end),
and what site owners asked for in ``desk_actions`` (kept: the operator's record, ``heed desk
actions``). Expired rows go when a token is given (``prune``)."""
from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from heed_core.desk.proof import ProofToken
from heed_core.desk.store import DeskAction, Session

from heed_embedded.db import Database

__all__ = ["SqliteDeskStore"]

_FOREVER = 1e18


def _dumps(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str)


class SqliteDeskStore:
    """Implements ``heed_core.desk.store.DeskStore`` on ``db``."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def secret(self, fresh: bytes) -> bytes:
        with self.db.write("desk secret") as c:
            c.execute("INSERT OR IGNORE INTO desk (key, data, expires) VALUES ('secret', ?, ?)",
                      (fresh.hex(), _FOREVER))
            row = c.execute("SELECT data FROM desk WHERE key = 'secret'").fetchone()
        return bytes.fromhex(str(row[0]))

    def hit(self, key: str, expires: float) -> int:
        with self.db.write("desk limit", durable=False) as c:
            row = c.execute("INSERT INTO desk (key, data, n, expires) VALUES (?, '', 1, ?) "
                            "ON CONFLICT (key) DO UPDATE SET n = n + 1 RETURNING n",
                            (f"limit|{key}", expires)).fetchone()
        return int(row[0])

    def put_token(self, token: ProofToken) -> None:
        with self.db.write("desk token") as c:
            c.execute("INSERT INTO desk (key, data, expires) VALUES (?, ?, ?)",
                      (f"token|{token.tid}", _dumps(asdict(token)), token.expires + 86400.0))

    def get_token(self, tid: str) -> ProofToken | None:
        with self.db.read("desk token") as c:
            row = c.execute("SELECT data FROM desk WHERE key = ?", (f"token|{tid}",)).fetchone()
        return ProofToken(**json.loads(row[0])) if row is not None else None

    def swap_token(self, old: ProofToken, new: ProofToken) -> bool:
        with self.db.write("desk token") as c:
            row = c.execute("SELECT data FROM desk WHERE key = ?", (f"token|{old.tid}",)).fetchone()
            if row is None or ProofToken(**json.loads(row[0])) != old:
                return False
            c.execute("UPDATE desk SET data = ? WHERE key = ?", (_dumps(asdict(new)), f"token|{old.tid}"))
        return True

    def put_session(self, session: Session) -> None:
        with self.db.write("desk session") as c:
            c.execute("INSERT OR REPLACE INTO desk (key, data, expires) VALUES (?, ?, ?)",
                      (f"session|{session.sid}", _dumps(asdict(session)), session.expires))

    def get_session(self, sid: str, now: float) -> Session | None:
        with self.db.read("desk session") as c:
            row = c.execute("SELECT data FROM desk WHERE key = ? AND expires > ?", (f"session|{sid}", now)).fetchone()
        return Session(**json.loads(row[0])) if row is not None else None

    def record(self, action: DeskAction) -> None:
        with self.db.write("desk action") as c:
            c.execute("INSERT INTO desk_actions (at, data) VALUES (?, ?)", (action.at, _dumps(asdict(action))))

    def actions(self, limit: int = 100) -> list[DeskAction]:
        with self.db.read("desk actions") as c:
            rows = c.execute("SELECT data FROM desk_actions ORDER BY id DESC LIMIT ?", (int(limit),)).fetchall()
        return [DeskAction(**json.loads(r[0])) for r in rows]

    def prune(self, now: float) -> int:
        """Delete the counters, tokens and sessions that have ended; how many."""
        with self.db.write("desk prune", durable=False) as c:
            return int(c.execute("DELETE FROM desk WHERE expires < ?", (now,)).rowcount)


def latest_requests(db: Database, ranges: list[tuple[str, str]], limit: int) -> list[dict[str, Any]]:
    """The latest ``limit`` requests whose host lies in ``ranges``, newest first (the request
    log's index on host and time, read backwards)."""
    where = " OR ".join("(host BETWEEN ? AND ?)" for _ in ranges)
    args: list[Any] = [v for r in ranges for v in r]
    with db.read("requests by host") as c:
        rows = c.execute(f"SELECT record FROM requests WHERE ({where}) ORDER BY t DESC, id DESC LIMIT {int(limit)}",
                         args).fetchall()
    return [json.loads(r[0]) for r in rows]

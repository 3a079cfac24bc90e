"""The webhook of a state directory (``heed serve --webhook URL``): every result posted to the
operator's application, at least once, in commit order within each source (``heed_core.webhook``
says how each POST is signed and what each answer means).

The events go into ``deliveries`` as the ``_webhook`` consumer reads them (its position moved in
the same transaction: each event is taken in once). A delivery is due when it is its source's
oldest and its time has come; deliveries are made one at a time, so a kill repeats at most the one
in flight (its POST may have arrived; the row goes only after the answer). A delivery given up (a
day of failures, or an answer that keeps saying no) moves to ``delivery_dead`` (``heed events dead``,
``--redrive`` puts it back), and its source's next is due. A 410 Gone stops the endpoint until the
operator says otherwise (``heed events dead --redrive``, or another URL)."""
from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from heed_core.envelope import envelope
from heed_core.webhook import SCHEDULE_S, Answer, Endpoint, Post, next_try, signed_headers, verdict

from heed_embedded.db import Database
from heed_embedded.events import WEBHOOK

__all__ = ["STOP_KEY", "Deliverer", "dead_letters", "redrive", "stopped"]

STOP_KEY = "webhook_stop"  # the manifest's record of an endpoint that answered 410 Gone
TAKE = 500  # events taken into the deliveries at a time

Log = Callable[[str, dict[str, Any]], None]


@dataclass
class _Due:
    seq: int
    attempts: int
    first_try: float | None
    kind: str
    rid: str
    record: dict[str, Any]
    at: float


class Deliverer:
    """Delivers a state directory's results to ``endpoint``; ``step`` does what is due now and
    returns how many POSTs it made, ``run`` steps until ``stop`` is set."""

    def __init__(self, db: Database, endpoint: Endpoint, post: Post, *, clock: Callable[[], float] = time.time,
                 log: Log = lambda event, fields: None, schedule: tuple[float, ...] = SCHEDULE_S,
                 rand: Callable[[], float] = random.random) -> None:
        self.db, self.endpoint, self.post = db, endpoint, post
        self.clock, self.log, self.schedule, self.rand = clock, log, schedule, rand
        self.counts = {"delivered": 0, "failed": 0, "dead": 0}

    # --- the consumer's side: events into deliveries ------------------------------------------------
    def take_in(self) -> int:
        """The events committed since the last take, as due deliveries (one transaction with the
        ``_webhook`` position: none is taken twice, none skipped)."""
        now = self.clock()
        with self.db.write("webhook take") as c:
            row = c.execute("SELECT seq FROM consumers WHERE name = ?", (WEBHOOK,)).fetchone()
            after = int(row[0]) if row else 0
            rows = c.execute("SELECT seq, record FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
                             (after, TAKE)).fetchall()
            if not rows:
                return 0
            c.executemany("INSERT OR IGNORE INTO deliveries (seq, grp, attempts, next_try) VALUES (?, ?, 0, ?)",
                          [(int(seq), str(json.loads(rec).get("source") or ""), now) for seq, rec in rows])
            c.execute("INSERT OR REPLACE INTO consumers (name, seq, updated) VALUES (?, ?, ?)",
                      (WEBHOOK, int(rows[-1][0]), now))
        return len(rows)

    def _due(self, limit: int) -> list[_Due]:
        now = self.clock()
        with self.db.read("webhook due") as c:
            rows = c.execute(
                "SELECT d.seq, d.attempts, d.first_try, e.detail_type, e.rid, e.record, e.at FROM deliveries d "
                "JOIN events e ON e.seq = d.seq WHERE d.next_try <= ? "
                "AND d.seq = (SELECT min(seq) FROM deliveries WHERE grp = d.grp) ORDER BY d.seq LIMIT ?",
                (now, limit)).fetchall()
        return [_Due(int(s), int(a), f, str(k), str(r), json.loads(rec), float(at)) for s, a, f, k, r, rec, at in rows]

    # --- one delivery --------------------------------------------------------------------------------
    def step(self, limit: int = 100) -> int:
        """Take in what was committed, then make the deliveries due now, oldest first."""
        if stopped(self.db, self.endpoint.url) is not None:
            return 0
        self.take_in()
        made = 0
        while made < limit:
            # One at a time, the oldest due each time: in commit order overall while nothing
            # fails, and in commit order within each source whatever fails.
            due = self._due(1)
            if not due:
                break
            made += 1
            if not self._deliver(due[0]):
                break  # the endpoint is gone: nothing more
        return made

    def _deliver(self, due: _Due) -> bool:
        body = json.dumps(envelope(due.kind, due.rid, due.record, at=due.at), ensure_ascii=False,
                          separators=(",", ":"), default=str).encode("utf-8")
        now = self.clock()
        answer = self.post(self.endpoint.url, body, signed_headers(self.endpoint.key, due.rid, int(now), body))
        what = verdict(answer)
        done = self.clock()
        if what == "delivered":
            with self.db.write("webhook delivered") as c:
                c.execute("DELETE FROM deliveries WHERE seq = ?", (due.seq,))
            self.counts["delivered"] += 1
            return True
        self.counts["failed"] += 1
        if what == "gone":
            self._stop(answer, done)
            return False
        attempts = due.attempts + 1
        when = next_try(attempts, what, done, self.rand, self.schedule)
        with self.db.write("webhook failed") as c:
            if when is None:
                c.execute("INSERT OR REPLACE INTO delivery_dead (seq, attempts, dead_at, why) VALUES (?, ?, ?, ?)",
                          (due.seq, attempts, done, f"{answer} after {attempts} tries"))
                c.execute("DELETE FROM deliveries WHERE seq = ?", (due.seq,))
            else:
                c.execute("UPDATE deliveries SET attempts = ?, first_try = coalesce(first_try, ?), next_try = ?, "
                          "last_error = ? WHERE seq = ?", (attempts, now, when, str(answer), due.seq))
        if when is None:
            self.counts["dead"] += 1
            self.log("webhook_dead", {"id": due.rid, "answer": str(answer), "attempts": attempts})
        else:
            self.log("webhook_retry", {"id": due.rid, "answer": str(answer), "attempts": attempts,
                                       "next_try_in_s": round(when - done, 1)})
        return True

    def _stop(self, answer: Answer, at: float) -> None:
        with self.db.write("webhook stop") as c:
            c.execute("INSERT OR REPLACE INTO manifest (key, value) VALUES (?, ?)",
                      (STOP_KEY, json.dumps({"url": self.endpoint.url, "at": at, "answer": str(answer)})))
        self.log("webhook_gone", {"url": self.endpoint.url, "answer": str(answer),
                                  "detail": "the receiver answered 410 Gone: no more deliveries to it until "
                                            "`heed events dead --redrive` (or another --webhook URL)"})

    def idle(self, within_s: float) -> bool:
        """Nothing to deliver within ``within_s`` (every event taken in, none due by then; a
        stopped endpoint is idle): ``heed serve --once`` may end."""
        if stopped(self.db, self.endpoint.url) is not None:
            return True
        with self.db.read("webhook idle") as c:
            taken = c.execute("SELECT coalesce((SELECT seq FROM consumers WHERE name = ?), 0) >= "
                              "coalesce((SELECT max(seq) FROM events), 0)", (WEBHOOK,)).fetchone()[0]
            soon = c.execute("SELECT min(next_try) FROM deliveries").fetchone()[0]
        return bool(taken) and (soon is None or float(soon) > self.clock() + within_s)

    def run(self, stop: threading.Event, poll_s: float = 0.2) -> None:
        """Deliver until ``stop`` is set (a delivery under way ends first)."""
        while not stop.is_set():
            try:
                made = self.step()
            except Exception as exc:  # noqa: BLE001 - a busy database: the next step tries again
                self.log("webhook_trouble", {"error": f"{type(exc).__name__}: {exc}"[:300]})
                made = 0
            if not made:
                stop.wait(poll_s)


def stopped(db: Database, url: str) -> dict[str, Any] | None:
    """The 410 Gone that stopped ``url`` (None: it is not stopped)."""
    with db.read("webhook stop") as c:
        row = c.execute("SELECT value FROM manifest WHERE key = ?", (STOP_KEY,)).fetchone()
    if row is None:
        return None
    data = dict(json.loads(row[0]))
    return data if data.get("url") == url else None


def pending(db: Database) -> int:
    with db.read("deliveries") as c:
        return int(c.execute("SELECT count(*) FROM deliveries").fetchone()[0])


def dead_letters(db: Database, limit: int | None = None) -> list[dict[str, Any]]:
    """The deliveries given up, oldest first, each with its envelope."""
    with db.read("delivery dead") as c:
        rows = c.execute("SELECT d.seq, d.attempts, d.dead_at, d.why, e.detail_type, e.rid, e.record, e.at "
                         "FROM delivery_dead d JOIN events e ON e.seq = d.seq ORDER BY d.dead_at, d.seq LIMIT ?",
                         (limit if limit is not None else -1,)).fetchall()
    return [{"seq": int(s), "attempts": int(a), "dead_at": float(t), "why": str(w),
             "envelope": envelope(str(k), str(r), json.loads(rec), at=float(at))}
            for s, a, t, w, k, r, rec, at in rows]


def redrive(db: Database, now: float | None = None) -> tuple[int, dict[str, Any] | None]:
    """Every dead letter back into the deliveries (due now, tries counted afresh), and the stop of
    an endpoint that answered 410 lifted. Returns how many went back and the stop lifted."""
    now = time.time() if now is None else now
    with db.write("webhook redrive") as c:
        rows = c.execute("SELECT d.seq, e.record FROM delivery_dead d JOIN events e ON e.seq = d.seq").fetchall()
        c.executemany("INSERT OR REPLACE INTO deliveries (seq, grp, attempts, next_try) VALUES (?, ?, 0, ?)",
                      [(int(s), str(json.loads(rec).get("source") or ""), now) for s, rec in rows])
        c.execute("DELETE FROM delivery_dead")
        row = c.execute("SELECT value FROM manifest WHERE key = ?", (STOP_KEY,)).fetchone()
        c.execute("DELETE FROM manifest WHERE key = ?", (STOP_KEY,))
    return len(rows), (dict(json.loads(row[0])) if row else None)

"""The work queue in SQLite, with SQS FIFO's semantics: one group per host, hidden instead of slept on.

A message is a token (``{"v": 2, "host", "tok", "items"}``, as the AWS queue carries it). Per
group (a host) messages come out in the order they were sent, and while one of them is in
flight or hidden the group gives out nothing else: the head of the group (``head = 1``) is the
only one a receive looks at, by an index on (head, visible, chain). A receive takes the visible
heads, the longest chains first (``CHAIN_CAP_S``: SQS FIFO promises no order across groups; this
one serves a round's critical path first), read outside the write lock and then taken in one
transaction, each only if no other receive took it meanwhile, ``holder`` holding them (visible
again after the visibility timeout if nobody hides or deletes them); ``hide`` sets when a
message comes back (exactly: SQS's whole seconds are not needed here) and its chain; ``delete``
acknowledges it and the next message of the group becomes the head. A message received more
than ``max_receive_count`` times goes to the dead-letter table instead, as does one older than
the retention period. Sends are deduplicated by the token's id for ``dedup_s`` (SQS: five
minutes). ``release`` hands back at once what a process that is gone held (a restart resumes
pending work at once)."""
from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from heed_core.hoststate import TokenOut
from heed_core.tokens import decode_token

from heed_embedded.db import Database

__all__ = ["Message", "WorkQueue", "decode_token", "encode_token"]

VISIBILITY_TIMEOUT_S = 900.0  # template.yaml's WorkQueue: longer than any gap a bot promises
MAX_RECEIVE_COUNT = 100  # template.yaml's RedrivePolicy (deferrals rotate tokens at 40: ROTATE_AT)
RETENTION_S = 345600.0  # template.yaml's MessageRetentionPeriod: four days
DEDUP_S = 300.0  # SQS FIFO's deduplication interval
# The order of due tokens. A token hidden by a deferring turn carries what its host's known work
# still takes (``chain``, seconds: ``TurnResult.chain_s``); when more hosts are due than the
# engine serves at once (a round's waves), the hosts with the longest chains go first, as a
# critical path is scheduled: a token counts as due ``chain`` seconds earlier than it came due,
# up to ``CHAIN_CAP_S``, so no token waits behind longer chains for more than that. A token of
# unknown chain (new: its host's robots.txt, its first item) counts as the longest: what it
# brings is learnt first. Only the order of tokens already due changes: none is handed out early.
CHAIN_CAP_S = 600.0
DUE_WINDOW = 512  # the due tokens, oldest first, among which the longest chains are picked
# (The window in the order of the index alone: a tie broken by id would sort it.)
_HEADS = ("SELECT q.id, q.grp, q.body, q.receives, q.sent FROM (SELECT id, visible, chain FROM queue "
          "WHERE head = 1 AND visible <= ? ORDER BY visible LIMIT ?) AS w JOIN queue AS q ON q.id = w.id "
          "ORDER BY w.visible - min(coalesce(w.chain, ?), ?), w.id LIMIT ?")
_TAKE = ("UPDATE queue SET receives = receives + 1, holder = ?, receipt = ?, visible = ?, "
         "first_received = coalesce(first_received, ?) WHERE id = ?")


def encode_token(token: TokenOut) -> str:
    """A token as its message body (the AWS queue's form; no size limit to split for here)."""
    return json.dumps({"v": 2, "host": token.host, "tok": token.tok, "items": [i.to_compact() for i in token.items]},
                      separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Message:
    """One received message: its id (the owner of its host while it is at work), its group, its
    body, how often it was received (this time included) and the receipt that hides or deletes it."""

    id: int
    group: str
    body: str
    receives: int
    receipt: str
    sent: float

    @property
    def message_id(self) -> str:
        return f"m{self.id}"


class WorkQueue:
    """Implements ``heed_core.store.Tokens`` on ``db``'s queue table, plus receiving, hiding and
    deleting (the fetcher's side) and the dead-letter table (``heed dlq --state``). Times are on
    ``clock`` (the engine's: wall time in a state directory)."""

    def __init__(self, db: Database, clock: Callable[[], float] = time.time, *,
                 visibility_timeout_s: float = VISIBILITY_TIMEOUT_S, max_receive_count: int = MAX_RECEIVE_COUNT,
                 retention_s: float = RETENTION_S, dedup_s: float = DEDUP_S,
                 on_send: Callable[[int], None] | None = None,
                 on_hide: Callable[[float], None] | None = None) -> None:
        self.db = db
        self.clock = clock
        self.visibility_timeout_s = visibility_timeout_s
        self.max_receive_count = max_receive_count
        self.retention_s = retention_s
        self.dedup_s = dedup_s
        self.on_send = on_send  # told how many messages went in (wakes this process's receivers)
        self.on_hide = on_hide  # told when the soonest message this process hid comes out

    # --- Tokens ------------------------------------------------------------------------------------
    def send(self, tokens: Sequence[TokenOut]) -> None:
        """Each token as one message of its host's group; a token id sent again within ``dedup_s``
        is dropped (the host also drops a token it took in, for days)."""
        messages = [(t.host, t.tok, encode_token(t)) for t in tokens]
        if not messages or not self.db.can_stage():
            self.send_raw(messages)
            return
        # In a batch: staged (what it sends is then known, and told once committed).
        now, new = self.clock(), [0]

        def work(c: Any) -> None:
            new[0] = self._send(c, messages, now)
        self.db.later("send tokens", work)
        if self.on_send is not None:
            on_send = self.on_send
            self.db.after_commit(lambda: on_send(new[0]) if new[0] else None)

    def send_raw(self, messages: Sequence[tuple[str, str, str]]) -> int:
        """(group, deduplication id, body) messages in; returns how many were new."""
        if not messages:
            return 0
        now = self.clock()
        with self.db.write("send tokens") as c:
            new = self._send(c, messages, now)
        if new and self.on_send is not None:
            self.on_send(new)
        return new

    def _send(self, c: Any, messages: Sequence[tuple[str, str, str]], now: float) -> int:
        new = 0
        for group, dedup, body in messages:
            row = c.execute("SELECT until FROM dedup WHERE id = ?", (dedup,)).fetchone()
            if row is not None and float(row[0]) > now:
                continue
            c.execute("INSERT OR REPLACE INTO dedup (id, until) VALUES (?, ?)", (dedup, now + self.dedup_s))
            first = c.execute("SELECT 1 FROM queue WHERE grp = ? LIMIT 1", (group,)).fetchone() is None
            c.execute("INSERT INTO queue (grp, dedup, body, sent, visible, head) VALUES (?, ?, ?, ?, ?, ?)",
                      (group, dedup, body, now, now, 1 if first else 0))
            new += 1
        return new

    # --- the fetcher's side ------------------------------------------------------------------------
    def receive(self, max_messages: int, holder: str) -> list[Message]:
        """Up to ``max_messages`` visible messages, the heads of their groups and, after each head,
        the visible messages of its group behind it (as SQS FIFO hands a group out in one batch),
        held by ``holder`` until hidden, deleted or the visibility timeout is over. Of the heads
        due, the longest chains first (``CHAIN_CAP_S``), then the oldest."""
        now = self.clock()
        # The candidates are read first, outside the write lock (its own snapshot); each is then
        # taken only if no other receive took it meanwhile (its receive count unchanged, still
        # due), a group's followers only with its head. One with something to bury (kept past
        # the retention, received too often) is read again and taken under the lock.
        window = (now, max(DUE_WINDOW, max_messages), CHAIN_CAP_S, CHAIN_CAP_S, max(1, max_messages))
        with self.db.read("receive") as c:
            groups = self._candidates(c, window, max_messages, now)
        if any(float(s) + self.retention_s < now or int(r) >= self.max_receive_count
               for _grp, group in groups for _m, _b, r, s in group):
            return self._receive_locked(window, max_messages, holder, now)
        out: list[Message] = []
        # A receive lost to a power cut only makes its messages visible again (at-least-once):
        # committed without a wait for the disk.
        with self.db.write("receive", durable=False) as c:
            for grp, group in groups:
                for m, b, r, s in group:
                    receipt = f"{m}.{int(r) + 1}.{holder}"
                    took = c.execute(_TAKE + " AND receives = ? AND visible <= ?",
                                     (holder, receipt, now + self.visibility_timeout_s, now, m, r, now)).rowcount
                    if took != 1:
                        break  # taken meanwhile (and what comes after it in its group)
                    out.append(Message(int(m), grp, b, int(r) + 1, receipt, float(s)))
        return out

    @staticmethod
    def _candidates(c: Any, window: tuple[float, int, float, float, int], max_messages: int,
                    now: float) -> list[tuple[str, list[tuple[Any, ...]]]]:
        """The heads due (the longest chains first, then the oldest), each with the visible
        messages of its group behind it, up to ``max_messages`` in all."""
        groups: list[tuple[str, list[tuple[Any, ...]]]] = []
        n = 0
        for mid, grp, body, receives, sent in c.execute(_HEADS, window).fetchall():
            if n >= max_messages:
                break
            group = [(mid, body, receives, sent)]
            group += c.execute("SELECT id, body, receives, sent FROM queue WHERE grp = ? AND id > ? "
                               "AND visible <= ? AND holder IS NULL ORDER BY id LIMIT ?",
                               (grp, mid, now, max_messages - n - 1)).fetchall()
            groups.append((grp, group))
            n += len(group)
        return groups

    def _receive_locked(self, window: tuple[float, int, float, float, int], max_messages: int, holder: str,
                        now: float) -> list[Message]:
        """``receive`` read and taken under the write lock, burying what is past the retention
        or received too often (each group's next message is its head then: a later receive
        takes it)."""
        out: list[Message] = []
        with self.db.write("receive", durable=False) as c:
            for grp, group in self._candidates(c, window, max_messages, now):
                for n, (m, b, r, s) in enumerate(group):
                    if float(s) + self.retention_s < now:
                        self._bury(c, m, grp, "retention", now)
                        if n == 0:
                            break
                        continue
                    if int(r) >= self.max_receive_count:
                        self._bury(c, m, grp, f"received {int(r)} times (maxReceiveCount {self.max_receive_count})",
                                   now)
                        if n == 0:
                            break
                        continue
                    receipt = f"{m}.{int(r) + 1}.{holder}"
                    c.execute(_TAKE, (holder, receipt, now + self.visibility_timeout_s, now, m))
                    out.append(Message(int(m), grp, b, int(r) + 1, receipt, float(s)))
        return out

    def _bury(self, c: Any, mid: int, grp: str, why: str, now: float) -> None:
        """Move a message to the dead-letter table; the next of its group becomes the head."""
        c.execute("INSERT OR REPLACE INTO dead (id, grp, dedup, body, sent, receives, first_received, dead_at, why) "
                  "SELECT id, grp, dedup, body, sent, receives, first_received, ?, ? FROM queue WHERE id = ?",
                  (now, why, mid))
        self._remove(c, mid, grp)

    @staticmethod
    def _remove(c: Any, mid: int, grp: str) -> None:
        was_head = c.execute("SELECT head FROM queue WHERE id = ?", (mid,)).fetchone()
        c.execute("DELETE FROM queue WHERE id = ?", (mid,))
        if was_head and was_head[0]:
            nxt = c.execute("SELECT id FROM queue WHERE grp = ? ORDER BY id LIMIT 1", (grp,)).fetchone()
            if nxt is not None:
                c.execute("UPDATE queue SET head = 1 WHERE id = ?", (nxt[0],))

    def hide(self, handles: Sequence[tuple[str, float] | tuple[str, float, float | None]]) -> None:
        """Defer messages: each comes back ``seconds`` from now (never shorter); a receipt that no
        longer holds its message (received again since) changes nothing. A third value is what the
        host's known work still takes (its chain, for the order of due tokens; None keeps the
        one it had)."""
        if not handles:
            return
        now = self.clock()
        self.db.stage("hide", "UPDATE queue SET visible = ?, holder = NULL, chain = coalesce(?, chain) "
                      "WHERE id = ? AND receipt = ?",
                      [(now + max(0.0, float(h[1])), h[2] if len(h) > 2 else None, _id(h[0]), h[0]) for h in handles],
                      many=True)
        later = [float(h[1]) for h in handles if h[1] > 0]
        if self.on_send is not None and len(later) < len(handles):
            self.db.after_commit(partial(self.on_send, 0))  # back now: the receivers look at once
        if self.on_hide is not None and later:
            self.db.after_commit(partial(self.on_hide, now + min(later)))  # the soonest of the others

    def delete(self, receipts: Sequence[str]) -> None:
        """Acknowledge messages (a stale receipt deletes nothing)."""
        if not receipts:
            return
        def work(c: Any) -> None:
            for h in receipts:
                row = c.execute("SELECT grp FROM queue WHERE id = ? AND receipt = ?", (_id(h), h)).fetchone()
                if row is not None:
                    self._remove(c, _id(h), row[0])
        self.db.later("delete", work)
        if self.on_send is not None:
            self.db.after_commit(partial(self.on_send, 0))

    def release(self, holders: Sequence[str] | None = None, *, keep: Sequence[str] = ()) -> list[tuple[str, str]]:
        """What the given holders (None: every holder but those in ``keep``) hold, visible again
        now: their processes are gone. Returns (group, owner) of each message handed back."""
        now = self.clock()
        with self.db.write("release") as c:
            rows = c.execute("SELECT id, grp, holder FROM queue WHERE holder IS NOT NULL").fetchall()
            mine = [(m, g) for m, g, h in rows if (h in holders if holders is not None else h not in keep)]
            c.executemany("UPDATE queue SET holder = NULL, visible = ? WHERE id = ?", [(now, m) for m, _ in mine])
        if mine and self.on_send is not None:
            self.on_send(len(mine))
        return [(g, f"m{m}") for m, g in mine]

    # --- what is in it -------------------------------------------------------------------------------
    def next_visible(self) -> float | None:
        """When the next message not held by anyone comes out (None: none is waiting)."""
        rows = self.db.query("SELECT min(visible) FROM queue WHERE head = 1 AND holder IS NULL", what="queue")
        return float(rows[0][0]) if rows and rows[0][0] is not None else None

    def counts(self) -> dict[str, Any]:
        """Messages by state: ``ready`` (visible now), ``waiting`` (hidden: deferred hosts),
        ``held`` (in flight), ``queued`` (behind their group's head), ``dead``, and ``next`` (the
        time the next waiting one comes out)."""
        now = self.clock()
        with self.db.read("queue") as c:
            ready, waiting, held, queued, nxt = c.execute(
                "SELECT count(*) FILTER (WHERE head = 1 AND holder IS NULL AND visible <= ?), "
                "count(*) FILTER (WHERE head = 1 AND holder IS NULL AND visible > ?), "
                "count(*) FILTER (WHERE holder IS NOT NULL), count(*) FILTER (WHERE head = 0 AND holder IS NULL), "
                "min(visible) FILTER (WHERE head = 1 AND holder IS NULL AND visible > ?) FROM queue",
                (now, now, now)).fetchone()
            dead = c.execute("SELECT count(*) FROM dead").fetchone()[0]
        return {"ready": int(ready), "waiting": int(waiting), "held": int(held), "queued": int(queued),
                "dead": int(dead), "next": float(nxt) if nxt is not None else None}

    def prune(self, now: float) -> int:
        """Forget deduplication ids past their interval; returns how many."""
        with self.db.write("prune dedup") as c:
            return int(c.execute("DELETE FROM dedup WHERE until < ?", (now,)).rowcount)

    # --- the dead-letter table -------------------------------------------------------------------------
    def dead_letters(self, limit: int | None = None) -> list[dict[str, Any]]:
        """What the dead-letter table holds, oldest first."""
        with self.db.read("dead letters") as c:
            rows = c.execute("SELECT id, grp, dedup, body, sent, receives, first_received, dead_at, why FROM dead "
                             "ORDER BY dead_at, id LIMIT ?", (limit if limit is not None else -1,)).fetchall()
        keys = ("id", "group", "dedup", "body", "sent", "receives", "first_received", "dead_at", "why")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def redrive(self, limit: int | None = None) -> list[dict[str, Any]]:
        """Dead letters back on the work queue (their group kept: the host's FIFO order), each as a
        new message with a deduplication id derived from the dead one (a repeated redrive sends it once)."""
        moved = []
        now = self.clock()
        with self.db.write("redrive") as c:
            rows = c.execute("SELECT id, grp, dedup, body, receives FROM dead ORDER BY dead_at, id LIMIT ?",
                             (limit if limit is not None else -1,)).fetchall()
            for mid, grp, _dedup, body, receives in rows:
                first = c.execute("SELECT 1 FROM queue WHERE grp = ? LIMIT 1", (grp,)).fetchone() is None
                cur = c.execute("INSERT INTO queue (grp, dedup, body, sent, visible, head) VALUES (?, ?, ?, ?, ?, ?)",
                                (grp, f"redrive-{mid}", body, now, now, 1 if first else 0))
                c.execute("DELETE FROM dead WHERE id = ?", (mid,))
                moved.append({"id": mid, "group": grp, "receives": receives, "new_id": cur.lastrowid})
        if moved and self.on_send is not None:
            self.on_send(len(moved))
        return moved


def _id(receipt: str) -> int:
    return int(receipt.split(".", 1)[0])

"""The embedded scheduler's tick: the rounds due on the clock become one token per host, in one
transaction with the tick record that says they were sent.

The same decisions as the AWS scheduler (``heed_core.rounds``: which firings are due since the
last tick, one round of each task however many firings were missed, the entry work of each
source, one token per host whose id names its rounds and its host), without its chunks: the
queue is in the same database as the tick record, so a round's tokens and the record that the
round started commit together. A tick that dies sent nothing and moved nothing; the next one
sends the same tokens (their ids: the queue and the host each take a token in once)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from heed_core.profile import Profile
from heed_core.refusals import iso
from heed_core.rounds import Round, due_rounds, entry_items, round_id, round_tokens
from heed_core.schedule import next_fire
from heed_core.store import Journal

from heed_embedded.db import Database
from heed_embedded.queue import WorkQueue
from heed_embedded.store import SqliteStore

__all__ = ["META_KEY", "next_firing", "tick"]

META_KEY = "tick"


def next_firing(profile: Profile, now: float) -> float | None:
    """When the profile's next schedule fires after ``now`` (None: it has none)."""
    times = [next_fire(s.expression, now) for s in profile.schedules]
    return min(times) if times else None


def tick(profile: Profile, db: Database, store: SqliteStore, queue: WorkQueue, journal: Journal, *, now: float,
         tasks: list[str] | None = None, log: Callable[[str, dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Start every round due since the last tick (the first tick ever: none, it only records
    the time), or, with ``tasks``, a round of each of them now. Returns the rounds started and
    how many items and tokens they sent."""
    state = store.get_meta(META_KEY) or {"version": 0}
    version = int(state.get("version", 0))
    if tasks:
        rounds = [Round(round_id(now, t), now, t) for t in dict.fromkeys(tasks)]
    else:
        last = state.get("last")
        rounds = due_rounds(profile, float(last), now) if last is not None and now > float(last) else []
    out: dict[str, Any] = {"rounds": [r.round_id for r in rounds], "items": 0, "tokens": 0}
    sources = store.list_sources() if rounds else []
    items = []
    skips = []
    for rnd in rounds:
        found, refused = entry_items(profile, rnd, sources, now)
        items += found
        skips += [(rnd, s, reason, detail) for s, reason, detail in refused]
    if items:
        # AUBE-02 / WANNADO-07: the entry work carries what is known of its URL (validators).
        records = store.url_records(i.url for i in items)
        items = [replace(i, seen=records.get(i.url)) for i in items]
    tokens = round_tokens(items)
    record = {**state, "version": version + 1, "last": max(now, float(state.get("last") or 0.0)),
              "sources": len(sources) if rounds else state.get("sources")}
    if rounds:
        record["started"] = now  # a round's id names its second: the next one must be in another
    with db.write("tick"):
        if not store.put_meta(META_KEY, record, expected_version=version):
            return {**out, "note": "another tick won"}
        queue.send(tokens)
    for rnd, src, reason, detail in skips:
        journal.skip({"bot": profile.name, "url": src.url, "reason": reason, "detail": detail, "source": src.id,
                      "round": rnd.round_id, "t": iso(now)})
    out.update(items=len(items), tokens=len(tokens), sources=len(sources))
    if log is not None and rounds:
        log("round", {"rounds": out["rounds"], "sources": len(sources), "items": len(items), "tokens": len(tokens)})
    return out

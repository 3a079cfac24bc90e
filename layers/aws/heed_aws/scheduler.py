"""The scheduler's tick: rounds that are due become a pass over the sources, cut into chunks that
fit the invocation, with a cursor kept in the table.

A pass walks the SOURCES partition in key order. Each chunk is claimed before its tokens leave:
one conditional write of the tick record says "the chunk (after, upto] is being sent" and moves
the cursor past it; the tokens follow; the next chunk's claim (or the pass's end) confirms it. An
invocation that dies mid-chunk leaves the claim behind, and the next tick sends exactly that chunk
again: the same sources, the same token ids (a token's id names its rounds, its host and its
chunk), so SQS (within five minutes) and the host (for days) take each token in once; the tail
of a big partition is reached because the cursor only moves forward. The tick stops starting
chunks when the time left would not cover one, and the next tick (a minute later) goes on."""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from heed_core.profile import Profile
from heed_core.refusals import iso
from heed_core.rounds import Round, due_rounds, entry_items, round_id, round_tokens
from heed_core.store import HostStore, Journal
from heed_core.work import Source

from heed_aws.journal import count, logger
from heed_aws.queue import TokenQueue

__all__ = ["FIRST_CHUNK", "MAX_CHUNK", "MIN_CHUNK", "RESERVE_S", "Pass", "chunk_size", "tick"]

META_KEY = "tick"
FIRST_CHUNK = 200  # sources in a pass's first chunk, before the tick knows what one costs
MIN_CHUNK = 25
MAX_CHUNK = 1000  # one Query page of sources (items of ~200 bytes: well under its 1 MB)
RESERVE_S = 5.0  # kept at the end of an invocation for the write that records where it stopped
_SAFETY = 0.5  # a chunk is sized to take at most half of the time that is left


@dataclass(frozen=True)
class Claim:
    """A chunk claimed for sending: the sources after ``start`` up to ``upto``; ``last``: the pass's last."""

    start: str | None
    upto: str
    last: bool


@dataclass(frozen=True)
class Pass:
    """A pass over the sources for some rounds: where it stands (``after``: the last key claimed),
    the chunk claimed but perhaps not sent, and what it did so far."""

    rounds: tuple[Round, ...]
    after: str | None = None
    claim: Claim | None = None
    sources: int = 0
    tokens: int = 0

    def to_json(self) -> dict[str, Any]:
        claim = [self.claim.start, self.claim.upto, self.claim.last] if self.claim else None
        return {"rounds": [[r.round_id, r.start, r.task] for r in self.rounds], "after": self.after,
                "claim": claim, "sources": self.sources, "tokens": self.tokens}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Pass:
        c = d.get("claim")
        return cls(tuple(Round(str(i), float(s), str(t)) for i, s, t in d["rounds"]), d.get("after"),
                   Claim(c[0], str(c[1]), bool(c[2])) if c else None, int(d.get("sources", 0)),
                   int(d.get("tokens", 0)))


@dataclass
class _State:
    """The tick record (META/tick): the last tick's time, the pass under way and the rounds
    waiting for it to end, the number of sources of the last full pass, its version."""

    version: int = 0
    last: float | None = None
    current: Pass | None = None
    queued: list[Round] = field(default_factory=list)
    sources: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "last": self.last, "pass": self.current.to_json() if self.current else None,
                "queued": [[r.round_id, r.start, r.task] for r in self.queued], "sources": self.sources}

    @classmethod
    def from_json(cls, d: dict[str, Any] | None) -> _State:
        if not d:
            return cls()
        return cls(int(d.get("version", 0)), float(d["last"]) if d.get("last") is not None else None,
                   Pass.from_json(d["pass"]) if d.get("pass") else None,
                   [Round(str(i), float(s), str(t)) for i, s, t in d.get("queued") or ()],
                   int(d["sources"]) if d.get("sources") is not None else None)


def chunk_size(left_s: float, per_source_s: float | None) -> int:
    """How many sources the next chunk takes: half of what the time left would hold at the rate
    measured so far (the first chunk: FIRST_CHUNK), MIN_CHUNK to MAX_CHUNK; 0 when not even the
    smallest chunk fits (the next tick goes on)."""
    room = left_s - RESERVE_S
    if per_source_s is None:
        return FIRST_CHUNK if room > 0 else 0
    if math.isinf(room):  # no deadline (a tick run outside Lambda): the largest chunk
        return MAX_CHUNK
    fits = math.floor(room * _SAFETY / max(per_source_s, 1e-6))
    return 0 if fits < MIN_CHUNK else min(MAX_CHUNK, fits)


def _queue_rounds(queued: list[Round], new: list[Round]) -> list[Round]:
    """Rounds waiting for the pass under way: one per task, the latest (a source gets one round
    of each task however many firings it missed: AUBE-08, PRAHA-04)."""
    latest: dict[str, Round] = {r.task: r for r in queued}
    for r in new:
        if r.task not in latest or r.start >= latest[r.task].start:
            latest[r.task] = r
    return sorted(latest.values(), key=lambda r: (r.start, r.task))


class _Lost(Exception):
    """Another tick wrote the record first: this one stops (the other goes on)."""


class _Ticker:
    def __init__(self, profile: Profile, store: HostStore, queue: TokenQueue, journal: Journal, now: float,
                 remaining_s: Callable[[], float] | None) -> None:
        self.profile, self.store, self.queue, self.journal, self.now = profile, store, queue, journal, now
        self.remaining_s = remaining_s or (lambda: math.inf)
        self.items = 0
        self.chunks = 0
        self.per_source_s: float | None = None

    def save(self, state: _State) -> None:
        expected = state.version
        state.version += 1
        if not self.store.put_meta(META_KEY, state.to_json(), expected_version=expected):
            raise _Lost

    def send_chunk(self, p: Pass, sources: list[Source]) -> int:
        """The tokens of one chunk's sources for every round of the pass; their ids name the chunk."""
        items = []
        for rnd in p.rounds:
            found, skips = entry_items(self.profile, rnd, sources, self.now)
            for src, reason, detail in skips:
                self.journal.skip({"bot": self.profile.name, "url": src.url, "reason": reason, "detail": detail,
                                   "source": src.id, "round": rnd.round_id, "t": iso(self.now)})
            items += found
        if not items:
            return 0
        # AUBE-02 / WANNADO-07: the entry work carries what is known of its URL (validators).
        records = self.store.url_records(i.url for i in items)
        items = [replace(i, seen=records.get(i.url)) for i in items]
        tokens = round_tokens(items, part=(p.claim.start or "") if p.claim else "")
        self.queue.send(tokens)
        self.items += len(items)
        return len(tokens)

    def run_pass(self, state: _State) -> None:
        """Chunks of the pass under way while the time left holds one; the record moves with them."""
        unsaved = False  # a chunk sent whose claim the stored record still holds
        while state.current is not None:
            p = state.current
            t0 = time.monotonic()
            if p.claim is None:
                size = chunk_size(self.remaining_s(), self.per_source_s)
                if size == 0:
                    break
                # (a Query's Limit counts items, a source's read-state among them: at most ``size`` sources)
                sources, nxt = self.store.source_page(p.after, size)
                if not sources and nxt is None:
                    self.finish(state)
                    unsaved = False
                    continue
                upto = nxt if nxt is not None else sources[-1].id
                p = replace(p, after=upto, claim=Claim(p.after, upto, last=nxt is None))
                state.current = p
                self.save(state)  # claimed: from here on, an invocation that dies sends this chunk again
            else:  # claimed by an invocation that did not finish it: the very same chunk, again
                sources, _ = self.store.source_page(p.claim.start, 0, upto=p.claim.upto)
            assert p.claim is not None
            sent = self.send_chunk(p, sources)
            self.chunks += 1
            if sources:
                self.per_source_s = (time.monotonic() - t0) / len(sources)
            last = p.claim.last
            state.current = replace(p, claim=None, sources=p.sources + len(sources), tokens=p.tokens + sent)
            unsaved = True
            if last:
                self.finish(state)
                unsaved = False
            # else: the next chunk's claim confirms this one (one write a chunk)
        if unsaved:
            self.save(state)  # stopping for time: the chunk just sent is confirmed, not sent again

    def finish(self, state: _State) -> None:
        """The pass is done: record it, and start the rounds that waited for it, if any."""
        done = state.current
        state.sources = done.sources if done else state.sources
        state.current = Pass(tuple(state.queued)) if state.queued else None
        state.queued = []
        self.save(state)
        if done is not None:
            logger.info("pass done", extra={"heed": "pass", "rounds": [r.round_id for r in done.rounds],
                                            "sources": done.sources, "tokens": done.tokens})


def tick(profile: Profile, store: HostStore, queue: TokenQueue, journal: Journal, *, now: float,
         tasks: list[str] | None = None, remaining_s: Callable[[], float] | None = None,
         resume_only: bool = False) -> dict[str, Any]:
    """Start every round due since the last tick (or, with ``tasks``, a round of each now) and
    work the pass over the sources while ``remaining_s()`` (Lambda's time left) holds a chunk.
    ``resume_only``: no new rounds, only go on with the pass under way. Returns what it did:
    the rounds it started, the items and chunks it sent, and the pass still under way, if any."""
    state = _State.from_json(store.get_meta(META_KEY))
    new: list[Round] = []
    changed = False
    if tasks:
        new = [Round(round_id(now, t), now, t) for t in tasks]
    elif not resume_only:
        last = state.last if state.last is not None else now - 60.0
        if now > last:
            new, state.last, changed = due_rounds(profile, last, now), now, True
    if new:
        state.queued, changed = _queue_rounds(state.queued, new), True
    if state.current is None and state.queued:
        state.current, state.queued, changed = Pass(tuple(state.queued)), [], True
    ticker = _Ticker(profile, store, queue, journal, now, remaining_s)
    try:
        if changed:
            ticker.save(state)
        ticker.run_pass(state)
    except _Lost:
        return {"rounds": [r.round_id for r in new], "items": ticker.items, "chunks": ticker.chunks,
                "note": "another tick won"}
    out: dict[str, Any] = {"rounds": [r.round_id for r in new], "items": ticker.items, "chunks": ticker.chunks}
    if state.current is not None:
        out["pass"] = {"rounds": [r.round_id for r in state.current.rounds], "after": state.current.after,
                       "sources": state.current.sources}
    if state.sources is not None:
        out["sources"] = state.sources
        count("Sources", state.sources)  # every tick: the heartbeat alarm knows sources exist
    return out

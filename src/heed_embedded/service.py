"""One batch of host tokens from the embedded queue: ``heed_aws.service.process_batch``'s semantics.

FIFO per host (a group's messages are one turn: the later tokens' work is taken in with the
first's and they are acknowledged only when the turn wrote it), a deferred token hidden for what
is left of its wait, counted from the end of its turn, a failed turn's token hidden with a short
backoff (a transient failure charges nothing, a real one is charged to the work item at the
head of the host), receive counts and the dead-letter table kept by the queue, and every
outbox of the batch drained after the commits. Here the drain is one transaction: the tokens
for other hosts, the source fields, the events and the drain marks land together or not at all
(no crash between an event and its mark can repeat it). A token whose outbox did not leave is
not acknowledged: it comes back soon and its turn drains it first. Nothing here sleeps."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from heed_core.crawl import Crawler, TurnResult
from heed_core.drain import Pending, drain
from heed_core.errors import InputError, ServiceFault, TransientError
from heed_core.hoststate import HostRecord
from heed_core.store import Journal
from heed_core.tokens import backoff, deferred_wait, with_copies
from heed_core.turn import TokenIn

from heed_embedded.db import Database
from heed_embedded.queue import Message, WorkQueue, decode_token
from heed_embedded.results import SqliteResults
from heed_embedded.store import SqliteStore

__all__ = ["MAX_REAL_FAILURES", "Counts", "process_batch"]

MAX_REAL_FAILURES = 3  # then the work item is recorded as a skip; deferrals never count here
_REDRAIN_S = 5.0  # a token whose outbox did not fully leave comes back this soon to drain it

Counts = Callable[[str, int], None]  # (what, how many): turns, failures, transient, faults
Log = Callable[[str, dict[str, object]], None]  # (event, fields): the engine's JSON log line


@dataclass
class _Outcome:
    """What became of one message: acknowledged or not, a hide, an outbox to drain."""

    msg: Message
    failed: bool = False
    hide: float | TurnResult | None = None
    pending: Pending | None = None


class _Rollback(Exception):
    """The drain met a fault: nothing of it is committed."""


def _turns(msgs: list[Message], crawler: Crawler, snapshots: dict[str, HostRecord], journal: Journal,
           count: Counts, log: Log) -> list[_Outcome]:
    """One group's messages (one host's tokens) in one turn."""
    out: list[_Outcome] = []
    tokens: list[tuple[Message, TokenIn]] = []
    for m in msgs:
        try:
            tokens.append((m, decode_token(m.body, m.receives, m.message_id)))
        except InputError as exc:
            # A token that can never be processed must not loop or block its host.
            journal.skip({"url": m.body[:300], "reason": exc.reason, "detail": str(exc)})
            out.append(_Outcome(m))
    if not tokens:
        return out
    (head_msg, head), rest = tokens[0], tokens[1:]
    token = with_copies(head, [t for _, t in rest])
    others = [(m, t) for m, t in rest if t.host != head.host]  # a group is a host: only by accident
    count("turns", 1)
    try:
        turn = crawler.host_turn(token, snapshots.get(head.host))
    except TransientError as exc:
        # Busy, a lost race: try again later, nothing charged. After a request (CommitFailed),
        # not before the gap it began is over (COMMON-05).
        wait = deferred_wait(exc, head.receives, crawler.clock.now())
        count("transient", 1)
        log("transient", {"host": head.host, "error": str(exc)})
        return out + [_Outcome(m, failed=True, hide=wait) for m, _ in tokens]
    except ServiceFault as exc:
        # The machine refuses (a full disk, a damaged database): its fault, not the work's.
        count("faults", 1)
        log("service_fault", {"host": head.host, "error": str(exc)})
        return out + [_Outcome(m, failed=True, hide=backoff(head.receives)) for m, _ in tokens]
    except Exception as exc:  # noqa: BLE001 - a real failure: charge the item, the token comes back
        count("failures", 1)
        log("failure", {"host": head.host, "error": f"{type(exc).__name__}: {exc}"[:500]})
        try:
            crawler.charge_failure(token, MAX_REAL_FAILURES, f"{type(exc).__name__}: {exc}"[:300])
        except Exception as again:  # noqa: BLE001 - the store itself is failing: the token comes back
            log("failure", {"host": head.host, "error": f"could not count the failure: {again}"[:500]})
        return out + [_Outcome(m, failed=True, hide=backoff(head.receives)) for m, _ in tokens]
    if turn.action == "defer":
        out.append(_Outcome(head_msg, failed=True, hide=turn, pending=turn.pending))
    else:
        out.append(_Outcome(head_msg, pending=turn.pending))
    # The later tokens of the host: their work is in the frontier now (committed by the turn), or,
    # when the turn wrote nothing (another turn holds the host), they wait with the first.
    if turn.took_also:
        out += [_Outcome(m) for m, t in rest if t.host == head.host]
    else:
        out += [_Outcome(m, failed=True, hide=turn) for m, t in rest if t.host == head.host]
    for m, _ in others:
        out.append(_Outcome(m, failed=True, hide=turn.delay_s))
    return out


def process_batch(msgs: list[Message], crawler: Crawler, queue: WorkQueue, store: SqliteStore,
                  results: SqliteResults, journal: Journal, db: Database, *,
                  count: Counts = lambda what, n: None, log: Log = lambda event, fields: None) -> dict[str, int]:
    """The batch's groups one after the other (the caller runs batches side by side), then the
    hides of the tokens with nothing to drain, the drain of every outbox in one transaction, the
    hides of the rest, and the acknowledgement of every token whose work is done or handed on.
    Returns how many were acknowledged and hidden."""
    groups: dict[str, list[Message]] = {}
    for m in msgs:
        groups.setdefault(m.group, []).append(m)
    snapshots: dict[str, HostRecord] = {}
    if len(groups) > 1:
        try:
            hosts = [decode_token(g[0].body).host for g in groups.values()]
            snapshots = store.read_turn_hosts(hosts, aux=crawler.aux)
        except Exception:  # noqa: BLE001 - a bad token or a busy store: each turn finds out alone
            snapshots = {}
    outcomes = [o for g in groups.values() for o in _turns(g, crawler, snapshots, journal, count, log)]

    def hide_of(o: _Outcome, at: float) -> tuple[str, float]:
        return o.msg.receipt, o.hide.left(at) if isinstance(o.hide, TurnResult) else float(o.hide or 0.0)

    # A token with nothing to drain is hidden at once; one with an outbox only after its drain
    # (hidden early, a short wait could bring it back while its outbox is still leaving).
    queue.hide([hide_of(o, crawler.clock.now()) for o in outcomes if o.hide is not None and o.pending is None])
    pendings = [o for o in outcomes if o.pending is not None]
    undrained: dict[str, str] = {}
    if pendings:
        try:
            with db.write("drain"):
                report = drain([o.pending for o in pendings if o.pending], store, results, queue)
                if report.fault:
                    raise _Rollback(report.fault)
            undrained = dict(report.failed)
            count("events", report.events)
        except (_Rollback, TransientError, ServiceFault) as exc:
            # Nothing of it left: the next turn of each host drains its outbox first.
            log("drain", {"error": str(exc), "hosts": sorted({o.pending.host for o in pendings if o.pending})})
            undrained = {o.pending.host: str(exc) for o in pendings if o.pending}
        late: list[tuple[str, float]] = []
        now = crawler.clock.now()
        for o in pendings:
            if o.hide is not None:
                late.append(hide_of(o, now))  # deferred anyway: its next turn drains what is left first
            elif o.pending is not None and o.pending.host in undrained and not o.failed:
                o.failed = True  # not acknowledged: it comes back soon, and its turn drains first
                late.append((o.msg.receipt, _REDRAIN_S))
        queue.hide(late)
    done = [o.msg.receipt for o in outcomes if not o.failed]
    queue.delete(done)
    return {"acknowledged": len(done), "hidden": len(outcomes) - len(done)}

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

from heed_core.batch import Outcome, after_drain, all_back, before_drain, turn_outcomes
from heed_core.crawl import Crawler, TurnResult
from heed_core.drain import drain
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

Counts = Callable[[str, int], None]  # (what, how many): turns, failures, transient, faults
Log = Callable[[str, dict[str, object]], None]  # (event, fields): the engine's JSON log line




_Outcome = Outcome[Message]  # a message of the queue, and what became of it


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
            out.append(Outcome(m))
    if not tokens:
        return out
    (head_msg, head), rest = tokens[0], tokens[1:]
    token = with_copies(head, [t for _, t in rest])
    count("turns", 1)
    try:
        turn = crawler.host_turn(token, snapshots.get(head.host))
    except TransientError as exc:
        # Busy, a lost race: try again later, nothing charged. After a request (CommitFailed),
        # not before the gap it began is over (COMMON-05).
        wait = deferred_wait(exc, head.receives, crawler.clock.now())
        count("transient", 1)
        log("transient", {"host": head.host, "error": str(exc)})
        return out + all_back([m for m, _ in tokens], wait)
    except ServiceFault as exc:
        # The machine refuses (a full disk, a damaged database): its fault, not the work's.
        count("faults", 1)
        log("service_fault", {"host": head.host, "error": str(exc)})
        return out + all_back([m for m, _ in tokens], backoff(head.receives))
    except Exception as exc:  # noqa: BLE001 - a real failure: charge the item, the token comes back
        count("failures", 1)
        log("failure", {"host": head.host, "error": f"{type(exc).__name__}: {exc}"[:500]})
        try:
            crawler.charge_failure(token, MAX_REAL_FAILURES, f"{type(exc).__name__}: {exc}"[:300])
        except Exception as again:  # noqa: BLE001 - the store itself is failing: the token comes back
            log("failure", {"host": head.host, "error": f"could not count the failure: {again}"[:500]})
        return out + all_back([m for m, _ in tokens], backoff(head.receives))
    return out + turn_outcomes(head_msg, rest, head.host, turn)


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

    # A token with nothing to drain is hidden at once; one with an outbox only after its drain.
    slack = crawler.p.politeness.end_stamp_slack_s
    chains = {o.msg.id: o.hide.chain_s for o in outcomes if isinstance(o.hide, TurnResult)}
    queue.hide(_receipts(before_drain(outcomes, crawler.clock.now()), slack, chains))
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
        queue.hide(_receipts(after_drain(pendings, undrained, crawler.clock.now()), slack, chains))
    done = [o.msg.receipt for o in outcomes if not o.failed]
    queue.delete(done)
    return {"acknowledged": len(done), "hidden": len(outcomes) - len(done)}


def _receipts(hides: list[tuple[Message, float]], slack: float,
              chains: dict[int, float | None]) -> list[tuple[str, float, float | None]]:
    """The receipts, hides and chains for the queue (a turn's ``chain_s``: the queue hands the
    longest out first when more are due than it serves). A host's token comes back for the gap its turn
    measured on this machine's clock; the site stamps the request's end a little after the bot
    does (its log line follows its answer, a few ms later under load), so every hide is longer by
    ``slack``, the profile's ``politeness.end_stamp_slack_s``. (SQS rounds a hide up to whole
    seconds, which already covers it: the AWS engine leaves the key to this queue, whose hides are
    exact.)"""
    return [(m.receipt, seconds + slack if seconds > 0 else seconds, chains.get(m.id)) for m, seconds in hides]

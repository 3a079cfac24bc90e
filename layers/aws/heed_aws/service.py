"""The fetcher's service: one batch of FIFO host tokens, each host's turn within the invocation's time."""
from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from heed_core.batch import Outcome, after_drain, all_back, before_drain, turn_outcomes
from heed_core.crawl import Crawler
from heed_core.drain import drain
from heed_core.errors import InputError, ServiceFault, TransientError
from heed_core.hoststate import HostRecord
from heed_core.store import HostStore, Journal, Results
from heed_core.tokens import backoff, deferred_wait, with_copies
from heed_core.turn import TokenIn

from heed_aws.journal import count, logger
from heed_aws.queue import TokenQueue, decode_token

__all__ = ["DRAIN_RESERVE_S", "MAX_REAL_FAILURES", "TURN_OVERHEAD_S", "Budget", "batch_size", "process_batch"]

MAX_REAL_FAILURES = 3  # then the work item is recorded as a skip; deferrals never count here
# A turn is at most one request (its whole deadline, fetch.total_deadline_s) plus the read, the
# commit and the settling around it; the end of a batch (the drain, the hides) keeps its own time.
TURN_OVERHEAD_S = 3.0
DRAIN_RESERVE_S = 5.0


@dataclass(frozen=True)
class Budget:
    """The invocation's time: what is left (Lambda's ``get_remaining_time_in_millis``) against
    what a turn may take. A turn starts only if it can end, with the drain after it, before the
    function's timeout; a record not started goes back at once (a batch item failure, visible
    again now: not lost, not left for the visibility timeout)."""

    remaining_s: Callable[[], float]
    turn_s: float  # the longest one turn can take
    reserve_s: float = DRAIN_RESERVE_S

    def allows_turn(self) -> bool:
        return self.remaining_s() >= self.turn_s + self.reserve_s


def batch_size(request_deadline_s: float, parallel: int, timeout_s: float) -> int:
    """The fetcher's SQS BatchSize for a bot: as many records as its turns can surely finish in
    one invocation (``parallel`` side by side, each up to a request's deadline), 1 to 10. AubeBot
    (one request at a time, 30 s deadline, 60 s timeout): 1."""
    rounds = int((timeout_s - DRAIN_RESERVE_S) // (request_deadline_s + TURN_OVERHEAD_S))
    return max(1, min(10, max(1, parallel) * max(1, rounds)))


_Outcome = Outcome[dict[str, Any]]  # an SQS record, and what became of it
_Decoded = tuple[list[_Outcome], list[tuple[dict[str, Any], TokenIn]]]  # skipped records, (record, token)


def _decode_group(records: list[dict[str, Any]], journal: Journal) -> _Decoded:
    """One message group's records as tokens; a record that cannot be decoded is acknowledged
    with a skip (a token that can never be processed must not loop or block its host)."""
    out: list[_Outcome] = []
    tokens: list[tuple[dict[str, Any], TokenIn]] = []
    for rec in records:
        receives = int(rec.get("attributes", {}).get("ApproximateReceiveCount") or 1)
        try:
            tokens.append((rec, decode_token(rec.get("body", ""), receives, rec["messageId"])))
        except InputError as exc:
            journal.skip({"url": str(rec.get("body", ""))[:300], "reason": exc.reason, "detail": str(exc)})
            out.append(Outcome(rec))
    return out, tokens


def _group_turns(decoded: _Decoded, crawler: Crawler, snapshots: dict[str, HostRecord],
                 budget: Budget | None = None) -> list[_Outcome]:
    """One message group's records (one host's tokens), in one turn: the later tokens' work is
    taken into the host's frontier with the first's and they are acknowledged, so a host never
    has more than one token in flight (FIFO order cannot be lost between hidden messages).
    Without the time for a turn, every record of the group goes back untouched, visible at once."""
    out, tokens = decoded
    if not tokens:
        return out
    if budget is not None and not budget.allows_turn():
        count("RecordsReturned", len(tokens))
        return out + all_back([r for r, _ in tokens], 0.0)
    (head_rec, head), rest = tokens[0], tokens[1:]
    token = with_copies(head, [t for _, t in rest])
    try:
        turn = crawler.host_turn(token, snapshots.get(head.host))
    except TransientError as exc:
        # Busy, throttled, a lost race: try again later; the work item is not charged. After a
        # request (CommitFailed), not before the gap it began is over (COMMON-05).
        wait = deferred_wait(exc, head.receives, crawler.clock.now())
        logger.warning("turn deferred: transient", extra={"heed": "transient", "host": head.host, "error": str(exc)})
        count("Turns")
        count("TurnFailures")
        return out + all_back([r for r, _ in tokens], wait)
    except ServiceFault as exc:
        # A service refuses for good (AccessDenied, a validation error): the deployment is at
        # fault, not the work. Alarm, charge nothing, try again later.
        logger.error("turn stopped: service fault", extra={"heed": "service_fault", "host": head.host,
                                                           "error": str(exc)})
        count("ServiceFaults")
        wait = backoff(head.receives)
        return out + all_back([r for r, _ in tokens], wait)
    except Exception as exc:  # noqa: BLE001 - a real failure: charge the item, let SQS redeliver
        logger.exception("host turn failed", extra={"heed": "failure", "host": head.host})
        count("Turns")
        count("TurnFailures")
        _charge_failure(crawler, token, exc)
        wait = backoff(head.receives)
        return out + all_back([r for r, _ in tokens], wait)
    count("Turns")
    return out + turn_outcomes(head_rec, rest, head.host, turn)


def process_batch(records: list[dict[str, Any]], crawler: Crawler, queue: TokenQueue, store: HostStore,
                  results: Results, journal: Journal, *, parallel: int = 1,
                  budget: Budget | None = None) -> dict[str, Any]:
    """SQS FIFO partial batch. A deferred token is hidden for exactly the wait and reported
    failed; later records of the same group in this batch are hidden just as long (FIFO order
    within a host), other groups go on, ``parallel`` of them side by side (1 keeps AUBE-11's one
    request at a time). The outboxes of every turn are drained together at the end (events ten
    to a PutEvents, records 25 to a BatchWriteItem). With a ``budget``, a group's turn starts
    only while it can still end in time; the groups left go back at once. Nothing here sleeps."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        groups.setdefault(rec.get("attributes", {}).get("MessageGroupId", ""), []).append(rec)
    decoded = [_decode_group(g, journal) for g in groups.values()]
    snapshots = _snapshots([tokens[0][1].host for _, tokens in decoded if tokens], crawler, store)
    if parallel > 1 and len(decoded) > 1:
        with ThreadPoolExecutor(max_workers=min(parallel, len(decoded))) as pool:
            done = list(pool.map(lambda d: _group_turns(d, crawler, snapshots, budget), decoded))
    else:
        done = [_group_turns(d, crawler, snapshots, budget) for d in decoded]
    outcomes = {o.msg["messageId"]: o for group in done for o in group}
    ordered = [outcomes[r["messageId"]] for r in records]
    # A wait counts from the end of its turn: a token is hidden for what is left of it (SQS rounds
    # up to whole seconds, so every moment between a turn and its hide lengthens the host's gap).
    early = before_drain(ordered, crawler.clock.now())
    if early:
        queue.hide(_receipts(early))
    pendings = [o for o in ordered if o.pending is not None]
    if pendings:
        try:
            report = drain([o.pending for o in pendings if o.pending], store, results, queue)
            undrained = report.failed
            if report.fault:
                logger.error("drain stopped: service fault", extra={"heed": "service_fault", "error": report.fault})
                count("ServiceFaults")
        except Exception as exc:  # noqa: BLE001 - the next turn of each host drains its outbox first
            logger.exception("drain failed", extra={"heed": "drain"})
            undrained = {o.pending.host: str(exc) for o in pendings if o.pending}
        late = after_drain(pendings, undrained, crawler.clock.now())
        if late:
            queue.hide(_receipts(late))
        if undrained:
            logger.warning("outbox not drained", extra={"heed": "drain", "hosts": sorted(undrained)})
    # Every record may have failed (all deferred): that is a normal answer, not an error.
    return {"batchItemFailures": [{"itemIdentifier": o.msg["messageId"]} for o in ordered if o.failed]}


def _receipts(hides: list[tuple[dict[str, Any], float]]) -> list[tuple[str, float]]:
    return [(rec["receiptHandle"], seconds) for rec, seconds in hides]


def _snapshots(hosts: list[str], crawler: Crawler, store: HostStore) -> dict[str, HostRecord]:
    """The batch's hosts in one read (each turn's snapshot); a turn whose host is missing here
    (a busy store) reads its own."""
    if len(hosts) < 2:
        return {}  # one host: its turn reads it, as one read all the same
    try:
        return store.read_turn_hosts(hosts, aux=crawler.aux)
    except Exception as exc:  # noqa: BLE001 - busy, or one host's item undecodable: each turn finds out alone
        logger.warning("batch read left to the turns", extra={"heed": "snapshots", "error": str(exc)})
        return {}


def _charge_failure(crawler: Crawler, token: Any, exc: Exception) -> None:
    try:
        crawler.charge_failure(token, MAX_REAL_FAILURES, f"{type(exc).__name__}: {exc}"[:300])
    except Exception:  # noqa: BLE001 - the state store itself is failing; SQS keeps the token
        logger.exception("could not count the failure", extra={"heed": "failure", "host": token.host})

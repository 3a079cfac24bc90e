"""The fetcher's service: one batch of SQS FIFO records as the core's batch (``heed_core.service``),
each host's turn within the invocation's time, and a partial batch response."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from heed_core.crawl import Crawler
from heed_core.service import MAX_REAL_FAILURES, BatchPorts, Delivery, Hide
from heed_core.service import process_batch as core_batch
from heed_core.store import HostStore, Journal, Results

from heed_aws.journal import count, logger
from heed_aws.queue import TokenQueue

__all__ = ["DRAIN_RESERVE_S", "MAX_REAL_FAILURES", "TURN_OVERHEAD_S", "Budget", "batch_size", "process_batch"]

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


_METRIC = {"turns": "Turns", "transient": "TurnFailures", "failures": "TurnFailures", "faults": "ServiceFaults",
           "returned": "RecordsReturned"}  # events: counted as Results where the bus takes them


class _Observer:
    """The batch's counts as the fetcher's metrics, its trouble as log records."""

    def count(self, what: str, n: int = 1) -> None:
        if what in _METRIC and n:
            count(_METRIC[what], n)

    def trouble(self, event: str, fields: Mapping[str, object], exc: BaseException | None = None) -> None:
        extra = {"heed": event, **fields}
        if event == "failure" and exc is not None:
            logger.error("host turn failed", extra=extra, exc_info=exc)
        elif event in ("service_fault", "drain_fault", "drain"):
            logger.error(f"{event.replace('_', ' ')}", extra=extra, exc_info=exc)
        else:
            logger.warning(f"{event.replace('_', ' ')}", extra=extra)


class _Hides:
    """Hides SQS records by their receipt handles (SQS rounds each up to whole seconds)."""

    def __init__(self, queue: TokenQueue) -> None:
        self.queue = queue

    def hide_many(self, hides: Sequence[Hide[dict[str, Any]]]) -> None:
        self.queue.hide([(h.msg["receiptHandle"], h.seconds) for h in hides])


def process_batch(records: list[dict[str, Any]], crawler: Crawler, queue: TokenQueue, store: HostStore,
                  results: Results, journal: Journal, *, parallel: int = 1,
                  budget: Budget | None = None) -> dict[str, Any]:
    """SQS FIFO partial batch: the core's batch over these records, ``parallel`` groups side by
    side, each started only while ``budget`` allows; the records not acknowledged are reported
    failed (every record may be: all deferred is a normal answer, not an error)."""
    deliveries = [Delivery(rec, rec.get("attributes", {}).get("MessageGroupId", ""), rec.get("body", ""),
                           int(rec.get("attributes", {}).get("ApproximateReceiveCount") or 1), rec["messageId"])
                  for rec in records]
    ports = BatchPorts(_Hides(queue), store, results, queue, journal, _Observer(), parallel=parallel,
                       allows_turn=budget.allows_turn if budget is not None else None)
    outcomes = core_batch(deliveries, crawler, ports)
    return {"batchItemFailures": [{"itemIdentifier": o.msg["messageId"]} for o in outcomes if o.failed]}

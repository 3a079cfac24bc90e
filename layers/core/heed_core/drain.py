"""Drains committed outboxes: the effects that leave a host's partition, exactly once where it counts.

Each effect is idempotent or remembered: tokens carry their deduplication id (SQS drops a
repeat within 5 minutes; the receiving host remembers tokens it took in for days), URL records
and source fields are plain puts and SETs, and events, which EventBridge cannot deduplicate,
are marked sent in the host's drain mark, written after them. Only a crash between a successful
PutEvents and that mark can repeat events; each carries its deterministic ``id`` for consumers."""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from heed_core.errors import ServiceFault, TransientError
from heed_core.hoststate import DrainMark, Outbox
from heed_core.store import READ_FIELDS, HostStore, Results, Tokens

__all__ = ["DrainReport", "Pending", "drain"]

_MARK_TRIES = 3


@dataclass(frozen=True)
class Pending:
    """A committed outbox still to leave: the host, the outbox, and its drain mark so far."""

    host: str
    outbox: Outbox
    mark: DrainMark  # what of it had left already (a previous, interrupted drain)


@dataclass
class DrainReport:
    """How a drain went: the hosts whose outbox is not fully out (and why), and how many events,
    tokens and URL records left."""

    failed: dict[str, str] = field(default_factory=dict)  # host -> why its outbox is not fully out
    fault: str | None = None  # a service refused for good (ServiceFault): the drain stopped there
    events: int = 0
    tokens: int = 0
    records: int = 0


def drain(pending: Sequence[Pending], store: HostStore, results: Results, tokens: Tokens) -> DrainReport:
    """Drain every outbox given, batching each kind of effect over all of them: tokens, source
    fields, events, then the URL records with the drain marks that say what left. Never raises
    for a busy service: what could not leave is in ``DrainReport.failed``, and the marks written
    make a later drain send only the rest (tokens are deduplicated by id, events by the mark;
    only a crash between PutEvents and the mark can repeat an event). A service that refuses for
    good (``ServiceFault``: AccessDenied...) stops the drain where it is: ``fault`` says why, and
    every outbox stays to be drained again once the deployment is mended."""
    report = DrainReport()
    work = [p for p in pending if p.outbox and p.outbox.version > p.mark.version]
    if not work:
        return report
    try:
        _drain(work, store, results, tokens, report)
    except ServiceFault as exc:
        report.fault = str(exc)
        for p in work:
            report.failed[p.host] = f"service fault: {exc}"
    return report


def _drain(work: list[Pending], store: HostStore, results: Results, tokens: Tokens, report: DrainReport) -> None:
    outgoing = [t for p in work for t in p.outbox.tokens]
    if outgoing:
        try:
            tokens.send(outgoing)
            report.tokens = len(outgoing)
        except TransientError as exc:
            for p in work:
                if p.outbox.tokens:
                    report.failed[p.host] = f"tokens: {exc}"
    reads: list[tuple[str, dict[str, Any]]] = []
    for p in work:
        for source_id, fields in p.outbox.sources:
            read = {k: v for k, v in fields.items() if k in READ_FIELDS}
            if read:
                reads.append((source_id, read))
            rest = {k: v for k, v in fields.items() if k not in READ_FIELDS}
            if not rest:
                continue
            try:
                store.update_source(source_id, rest)
            except TransientError as exc:
                report.failed[p.host] = f"source {source_id}: {exc}"
    events = [(p, e) for p in work for e in p.outbox.events if e[1] not in set(p.mark.sent)]
    failed_ids: set[str] = set()
    if events:
        try:
            failed_ids = set(results.emit_many([e for _, e in events]))
        except TransientError as exc:
            failed_ids = {e[1] for _, e in events}
            for p, _ in events:
                report.failed.setdefault(p.host, f"events: {exc}")
        report.events = len(events) - len(failed_ids)
    marks: list[tuple[str, DrainMark]] = []
    for p in work:
        unsent = [e[1] for e in p.outbox.events if e[1] in failed_ids]
        if p.host in report.failed or unsent:
            sent = tuple(dict.fromkeys(list(p.mark.sent) + [e[1] for e in p.outbox.events if e[1] not in failed_ids]))
            marks.append((p.host, DrainMark(version=p.mark.version, sent=sent)))
            report.failed.setdefault(p.host, f"{len(unsent)} events not put")
        else:
            marks.append((p.host, DrainMark(version=p.outbox.version)))
    records = [u for p in work for u in p.outbox.urls]
    # The marks say which events left: losing them to a throttled write would send those events
    # again, so this write is tried a few times (AWS's backoff, not a politeness wait).
    for attempt in range(_MARK_TRIES):
        try:
            store.write_drained(records, marks, reads)
            report.records = len(records)
            break
        except TransientError as exc:
            if attempt + 1 == _MARK_TRIES:
                for p in work:
                    report.failed[p.host] = f"records: {exc}"
            else:
                time.sleep(0.05 * 4 ** attempt)

"""The two services the handlers call: a fetcher batch (FIFO tokens) and a scheduler tick."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from heed_core.crawl import Crawler
from heed_core.drain import drain
from heed_core.errors import InputError, TransientError
from heed_core.profile import Profile
from heed_core.refusals import iso
from heed_core.rounds import Round, due_rounds, entry_items, round_id, round_tokens
from heed_core.store import HostStore, Journal, Results

from heed_aws.journal import count, logger
from heed_aws.queue import TokenQueue, decode_token

__all__ = ["MAX_REAL_FAILURES", "process_batch", "tick"]

MAX_REAL_FAILURES = 3  # then the work item is recorded as a skip; deferrals never count here
_REDRAIN_S = 5.0  # a token whose outbox did not fully leave comes back this soon to drain it


def _backoff(receives: int) -> float:
    return float(min(300, 2 ** min(max(receives, 1), 8)))


def process_batch(records: list[dict[str, Any]], crawler: Crawler, queue: TokenQueue, store: HostStore,
                  results: Results, journal: Journal) -> dict[str, Any]:
    """SQS FIFO partial batch. A deferred token is hidden for exactly the wait and reported
    failed; later records of the same group in this batch are hidden just as long (FIFO order
    within a host), other groups go on. The outboxes of every turn are drained together at the
    end (events ten to a PutEvents, records 25 to a BatchWriteItem). Nothing here sleeps."""
    failures: list[dict[str, str]] = []
    hides: list[tuple[str, float]] = []
    held: dict[str, float] = {}  # message group -> seconds its later records are hidden for
    done: dict[str, tuple[str, str]] = {}  # message id -> (receipt handle, group) of tokens to delete
    pendings = []
    for rec in records:
        msg_id, receipt = rec["messageId"], rec["receiptHandle"]
        attrs = rec.get("attributes", {})
        group = attrs.get("MessageGroupId", "")
        if group in held:
            hides.append((receipt, held[group]))
            failures.append({"itemIdentifier": msg_id})
            continue
        receives = int(attrs.get("ApproximateReceiveCount") or 1)
        try:
            token = decode_token(rec.get("body", ""), receives, msg_id)
        except InputError as exc:
            # Acknowledged: a token that can never be processed must not loop or block its host.
            journal.skip({"url": str(rec.get("body", ""))[:300], "reason": exc.reason, "detail": str(exc)})
            continue
        try:
            turn = crawler.host_turn(token)
        except TransientError as exc:
            # Busy, throttled, a lost race: try again later; the work item is not charged.
            wait = _backoff(receives)
            logger.warning("turn deferred: transient", extra={"heed": "transient", "host": token.host, "error": str(exc)})
            count("Turns", "transient")
            hides.append((receipt, wait))
            failures.append({"itemIdentifier": msg_id})
            held[group] = wait
            continue
        except Exception as exc:  # noqa: BLE001 - a real failure: charge the item, let SQS redeliver
            logger.exception("host turn failed", extra={"heed": "failure", "host": token.host})
            count("Turns", "failed")
            _charge_failure(crawler, token, exc)
            wait = _backoff(receives)
            hides.append((receipt, wait))
            failures.append({"itemIdentifier": msg_id})
            held[group] = wait
            continue
        count("Turns", turn.why or turn.action)
        if turn.pending is not None:
            pendings.append((msg_id, receipt, group, turn.pending))
        if turn.action == "defer":
            hides.append((receipt, turn.delay_s))
            failures.append({"itemIdentifier": msg_id})
            held[group] = turn.delay_s
            count("Deferrals", turn.why or "defer")
        else:
            done[msg_id] = (receipt, group)
    if pendings:
        try:
            report = drain([p for *_, p in pendings], store, results, queue)
            undrained = report.failed
        except Exception as exc:  # noqa: BLE001 - the next turn of each host drains its outbox first
            logger.exception("drain failed", extra={"heed": "drain"})
            undrained = {p.host: str(exc) for *_, p in pendings}
        for msg_id, receipt, group, p in pendings:
            if p.host in undrained and msg_id in done:
                # Not acknowledged: the token comes back soon, and its turn drains the outbox first.
                del done[msg_id]
                hides.append((receipt, _REDRAIN_S))
                failures.append({"itemIdentifier": msg_id})
        if undrained:
            logger.warning("outbox not drained", extra={"heed": "drain", "hosts": sorted(undrained)})
    if hides:
        queue.hide(hides)
    # Every record may have failed (all deferred): that is a normal answer, not an error.
    return {"batchItemFailures": failures}


def _charge_failure(crawler: Crawler, token: Any, exc: Exception) -> None:
    try:
        crawler.charge_failure(token, MAX_REAL_FAILURES, f"{type(exc).__name__}: {exc}"[:300])
    except Exception:  # noqa: BLE001 - the state store itself is failing; SQS keeps the token
        logger.exception("could not count the failure", extra={"heed": "failure", "host": token.host})


def tick(profile: Profile, store: HostStore, queue: TokenQueue, journal: Journal, *, now: float,
         tasks: list[str] | None = None) -> dict[str, Any]:
    """Start every round due since the last tick (or, with ``tasks``, a round of each now).

    The tokens go out first, then the tick's record: a tick that fails half-way has recorded
    nothing and is done again; the tokens it sent carry deterministic ids, so SQS (within five
    minutes) and the hosts (for days) take each in once."""
    meta: dict[str, Any] | None = None
    if tasks:
        rounds = [Round(round_id(now, t), now, t) for t in tasks]
    else:
        meta = store.get_meta("tick")
        last = float(meta["last"]) if meta else now - 60.0
        if now <= last:
            return {"rounds": [], "items": 0}
        rounds = due_rounds(profile, last, now)
    items = []
    if rounds:
        sources = store.list_sources()
        for rnd in rounds:
            found, skips = entry_items(profile, rnd, sources, now)
            for src, reason, detail in skips:
                journal.skip({"bot": profile.name, "url": src.url, "reason": reason, "detail": detail,
                              "source": src.id, "round": rnd.round_id, "t": iso(now)})
            items += found
        if items:
            # AUBE-02 / WANNADO-07: the entry work carries what is known of its URL (validators).
            records = store.url_records(i.url for i in items)
            items = [replace(i, seen=records.get(i.url)) for i in items]
            queue.send(round_tokens(items))
    if not tasks:
        version = int(meta["version"]) if meta else 0
        if not store.put_meta("tick", {"last": now, "version": version + 1},
                              expected_version=version if meta else None):
            return {"rounds": [r.round_id for r in rounds], "items": len(items), "note": "another tick won"}
    return {"rounds": [r.round_id for r in rounds], "items": len(items)}

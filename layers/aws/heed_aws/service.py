"""The two services the handlers call: a fetcher batch (FIFO tokens) and a scheduler tick."""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from heed_core.crawl import Crawler, iso
from heed_core.profile import Profile
from heed_core.rounds import Round, due_rounds, entry_items, round_id
from heed_core.store import Journal, Store

from aws_lambda_powertools.metrics import MetricUnit

from heed_aws.journal import logger, metrics
from heed_aws.queue import TokenQueue

MAX_REAL_FAILURES = 3  # then the work item is recorded as a skip; deferrals never count here


def process_batch(records: list[dict[str, Any]], crawler: Crawler, queue: TokenQueue, store: Store,
                  journal: Journal) -> dict[str, Any]:
    """SQS FIFO partial batch. A deferred token is hidden for exactly the wait and reported
    failed; later records of the same group in this batch are hidden just as long (FIFO order
    within a host), other groups go on. Nothing here sleeps."""
    failures: list[dict[str, str]] = []
    held: dict[str, float] = {}  # message group -> seconds its later records are hidden for
    tokens: list[tuple[str, str, str]] = []
    for rec in records:
        msg_id = rec["messageId"]
        group = rec.get("attributes", {}).get("MessageGroupId", "")
        if group in held:
            queue.hide(rec["receiptHandle"], held[group])
            failures.append({"itemIdentifier": msg_id})
            continue
        try:
            body = json.loads(rec["body"])
            host = str(body["host"])
        except (ValueError, KeyError, TypeError):
            logger.error("malformed work token dropped", extra={"heed": "bad_token", "body": rec.get("body", "")[:500]})
            continue  # acknowledged: a token that can never be processed must not loop
        rid = str(body.get("round_id", ""))
        try:
            turn = crawler.host_turn(host)
        except Exception:  # noqa: BLE001 - a real failure: count it, let SQS redeliver
            logger.exception("host turn failed", extra={"heed": "failure", "host": host})
            _count_failure(host, store, journal)
            failures.append({"itemIdentifier": msg_id})
            held[group] = 0.0
            continue
        for other in sorted(turn.wake):
            tokens.append((other, rid, f"wake:{msg_id}:{other}"))
        if turn.action == "defer":
            queue.hide(rec["receiptHandle"], turn.delay_s)
            failures.append({"itemIdentifier": msg_id})
            held[group] = turn.delay_s
            metrics.add_metric(name="Deferrals", unit=MetricUnit.Count, value=1)
            logger.debug("deferred", extra={"heed": "defer", "host": host, "seconds": turn.delay_s, "why": turn.why})
        elif turn.more:
            tokens.append((host, rid, f"after:{msg_id}"))
    if tokens:
        queue.send_tokens(tokens)
    # Every record may have failed (all deferred): that is a normal answer, not an error.
    return {"batchItemFailures": failures}


def _count_failure(host: str, store: Store, journal: Journal) -> None:
    try:
        pending = store.pending_work(host, limit=1)
        if not pending:
            return
        item = pending[0]
        if item.failures + 1 >= MAX_REAL_FAILURES:
            journal.skip({"url": item.url, "reason": "processing_failed", "source": item.source_id,
                          "detail": f"{MAX_REAL_FAILURES} failed attempts", "purpose": item.purpose})
            store.complete_work(item)
        else:
            store.update_work(replace(item, failures=item.failures + 1))
    except Exception:  # noqa: BLE001 - the state store itself is failing; SQS keeps the token
        logger.exception("could not count the failure", extra={"heed": "failure", "host": host})


def tick(profile: Profile, store: Store, queue: TokenQueue, journal: Journal, *, now: float,
         tasks: list[str] | None = None) -> dict[str, Any]:
    """Start every round due since the last tick (or, with ``tasks``, a round of each now)."""
    if tasks:
        rounds = [Round(round_id(now, t), now, t) for t in tasks]
    else:
        meta = store.get_meta("tick")
        last = float(meta["last"]) if meta else now - 60.0
        version = int(meta["version"]) if meta else 0
        if now <= last:
            return {"rounds": [], "items": 0}
        if not store.put_meta("tick", {"last": now, "version": version + 1}, expected_version=version if meta else None):
            return {"rounds": [], "items": 0, "note": "another tick won"}
        rounds = due_rounds(profile, last, now)
    sources = store.list_sources()
    added = 0
    for rnd in rounds:
        items, skips = entry_items(profile, rnd, sources, now)
        for src, reason, detail in skips:
            journal.skip({"bot": profile.name, "url": src.url, "reason": reason, "detail": detail,
                          "source": src.id, "round": rnd.round_id, "t": iso(now)})
        hosts: dict[str, None] = {}
        for item in items:
            if store.add_work(item):
                added += 1
                hosts[item.host] = None
        queue.send_tokens([(h, rnd.round_id, f"round:{rnd.round_id}") for h in hosts])
    return {"rounds": [r.round_id for r in rounds], "items": added}

"""The webhook on AWS: the results bus's rule puts every result (its EventBridge event, the
envelope in ``detail``) on a FIFO queue of one message group; this function posts each, in order,
with the core's rules (``heed_core.webhook``: signed as Standard Webhooks says, what each answer
means, when to try again).

A batch is posted one record at a time. Delivered: acknowledged. Not delivered: the record is
hidden until its next try (its receive count is its tries) and it and every record after it are
reported failed (those behind it visible again at once: the group gives none of them out while
the first is hidden), so the group keeps its order. Given up (a day of failures, an answer that keeps
saying no): sent to the dead-letter queue and acknowledged, and the next one goes. 410 Gone: the
endpoint is stopped (a META record of the state table, read by every batch) until the operator
runs ``heed events dead --stack S --redrive``; until then batches wait an hour at a time."""
from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from heed_core.store import HostStore
from heed_core.webhook import Endpoint, Post, next_try, signed_headers, verdict

from heed_aws.store import translate

__all__ = ["STOP_KEY", "STOPPED_WAIT_S", "Deliveries", "body_of", "process_deliveries"]

STOP_KEY = "webhook_stop"
STOPPED_WAIT_S = 3600  # a stopped endpoint's records look again this often (their retention is 4 days)
MAX_VISIBILITY_S = 43200  # SQS: 12 hours (the schedule's longest step is 10 h)
GROUP = "results"  # the one message group (template.yaml: ResultsToWebhookRule)

Log = Callable[[str, dict[str, Any]], None]


def body_of(message: str) -> tuple[str, bytes]:
    """(the result's id, the body to post) of a delivery message: the envelope of the EventBridge
    event the rule sent (its ``detail``), or the message itself where it is an envelope already.
    ``ValueError`` for a message that is neither."""
    data = json.loads(message)
    env = data.get("detail") if isinstance(data, dict) and isinstance(data.get("detail"), dict) else data
    if not isinstance(env, dict) or not isinstance(env.get("id"), str) or env.get("specversion") != "1.0":
        raise ValueError("not a result envelope")
    return env["id"], json.dumps(env, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8")


@dataclass
class Deliveries:
    """The delivery queue's side: hiding a record until its next try, and the dead letters."""

    sqs: Any
    queue_url: str
    dlq_url: str

    def hide(self, receipt: str, seconds: float) -> None:
        try:
            self.sqs.change_message_visibility(QueueUrl=self.queue_url, ReceiptHandle=receipt,
                                               VisibilityTimeout=min(MAX_VISIBILITY_S, max(0, math.ceil(seconds))))
        except (ClientError, BotoCoreError) as exc:
            raise translate(exc, "change_message_visibility") from exc

    def bury(self, body: str, rid: str, why: str, receives: int) -> None:
        try:
            self.sqs.send_message(QueueUrl=self.dlq_url, MessageBody=body, MessageGroupId=GROUP,
                                  MessageDeduplicationId=f"{rid}.{receives}"[:128],
                                  MessageAttributes={"why": {"DataType": "String", "StringValue": why[:256]}})
        except (ClientError, BotoCoreError) as exc:
            raise translate(exc, "send_message (dead letters)") from exc


def stopped(store: HostStore, url: str) -> Mapping[str, Any] | None:
    mark = store.get_meta(STOP_KEY)
    return mark if mark and mark.get("url") == url else None


def process_deliveries(records: Sequence[Mapping[str, Any]], *, endpoint: Endpoint, post: Post, queue: Deliveries,
                       store: HostStore, clock: Callable[[], float] = time.time, log: Log = lambda e, f: None,
                       rand: Callable[[], float] = random.random) -> dict[str, Any]:
    """One SQS batch of deliveries, in order; the partial batch response."""
    failed: list[str] = []

    def hold(rest: Sequence[Mapping[str, Any]]) -> None:
        failed.extend(str(r["messageId"]) for r in rest)

    if stopped(store, endpoint.url) is not None:
        for r in records:
            queue.hide(str(r["receiptHandle"]), STOPPED_WAIT_S)
        hold(records)
        log("webhook_stopped", {"url": endpoint.url, "records": len(records)})
        return {"batchItemFailures": [{"itemIdentifier": i} for i in failed]}
    for n, rec in enumerate(records):
        receives = int(rec.get("attributes", {}).get("ApproximateReceiveCount") or 1)
        try:
            rid, body = body_of(str(rec.get("body", "")))
        except ValueError:
            queue.bury(str(rec.get("body", "")), str(rec["messageId"]), "not a result envelope", receives)
            log("webhook_dead", {"id": rec["messageId"], "why": "not a result envelope"})
            continue
        now = clock()
        answer = post(endpoint.url, body, signed_headers(endpoint.key, rid, int(now), body))
        what = verdict(answer)
        if what == "delivered":
            continue
        done = clock()
        if what == "gone":
            store.put_meta(STOP_KEY, {"url": endpoint.url, "at": done, "answer": str(answer)})
            log("webhook_gone", {"url": endpoint.url, "id": rid,
                                 "detail": "410 Gone: no more deliveries until heed events dead --redrive"})
            for r in records[n:]:
                queue.hide(str(r["receiptHandle"]), STOPPED_WAIT_S)
            hold(records[n:])
            break
        when = next_try(receives, what, done, rand)
        if when is None:
            queue.bury(str(rec["body"]), rid, f"{answer} after {receives} tries", receives)
            log("webhook_dead", {"id": rid, "answer": str(answer), "attempts": receives})
            continue
        queue.hide(str(rec["receiptHandle"]), when - done)
        # FIFO: the ones behind it are handed back now, and the group gives none of them out
        # while the first is hidden (in flight), so it is still first when it comes back.
        for r in records[n + 1:]:
            queue.hide(str(r["receiptHandle"]), 0)
        log("webhook_retry", {"id": rid, "answer": str(answer), "attempts": receives,
                              "next_try_in_s": round(when - done, 1)})
        hold(records[n:])
        break
    return {"batchItemFailures": [{"itemIdentifier": i} for i in failed]}

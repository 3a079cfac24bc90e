"""SQS FIFO tokens: one message per host (MessageGroupId = host), hidden instead of slept on."""
from __future__ import annotations

import json
import math
from typing import Any

from botocore.exceptions import ClientError

from heed_core.urls import group_id, short_hash

MAX_VISIBILITY_S = 43200  # SQS limit: 12 hours


class QueueError(RuntimeError):
    pass


class TokenQueue:
    def __init__(self, queue_url: str, client: Any) -> None:
        self.url = queue_url
        self.sqs = client

    def send_tokens(self, tokens: list[tuple[str, str, str]]) -> None:
        """``(host, round_id, dedup_seed)`` each; the dedup id makes a repeated send a no-op
        within SQS's 5-minute window (a repeated schedule firing enqueues nothing twice)."""
        for i in range(0, len(tokens), 10):
            batch = tokens[i:i + 10]
            entries = [{"Id": str(n), "MessageBody": json.dumps({"host": host, "round_id": rid}),
                        "MessageGroupId": group_id(host),
                        "MessageDeduplicationId": short_hash(host, seed, n=64)}
                       for n, (host, rid, seed) in enumerate(batch)]
            try:
                resp = self.sqs.send_message_batch(QueueUrl=self.url, Entries=entries)
            except ClientError as exc:
                raise QueueError("send_message_batch") from exc
            if resp.get("Failed"):
                raise QueueError(f"send_message_batch failed for {len(resp['Failed'])} tokens")

    def hide(self, receipt_handle: str, seconds: float) -> None:
        """Defer a token: SQS visibility is whole seconds, so round *up* (a gap is never shorter)."""
        vis = min(MAX_VISIBILITY_S, max(0, math.ceil(seconds)))
        try:
            self.sqs.change_message_visibility(QueueUrl=self.url, ReceiptHandle=receipt_handle,
                                               VisibilityTimeout=vis)
        except ClientError as exc:
            raise QueueError("change_message_visibility") from exc

"""SQS FIFO tokens: work for one host per message (MessageGroupId = host), hidden instead of slept on."""
from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any, Protocol

from botocore.exceptions import BotoCoreError, ClientError

from heed_core.errors import TransientError
from heed_core.hoststate import TokenOut
from heed_core.tokens import decode_token
from heed_core.urls import group_id

from heed_aws.store import translate

__all__ = ["MAX_BODY_BYTES", "MAX_VISIBILITY_S", "QueueObserver", "TokenQueue", "decode_token", "encode_token"]

MAX_VISIBILITY_S = 43200  # SQS limit: 12 hours
MAX_BODY_BYTES = 200_000  # under SQS's message size limit, with room for attributes


class QueueObserver(Protocol):
    """Told what the fetcher does to the queue (the local runtime's seam: it learns when hidden
    tokens come back without reading the queue's private state)."""

    def sent(self, count: int) -> None: ...
    def hidden(self, receipt_handle: str, seconds: int) -> None: ...


def encode_token(token: TokenOut) -> list[tuple[str, str]]:
    """(dedup id, body) pairs, the messages a token is sent as: a token too big for one message
    is split into parts (events/ are made with it too)."""
    items = [i.to_compact() for i in token.items]
    parts: list[list[dict[str, Any]]] = [[]]
    size = 0
    for raw in items:
        n = len(json.dumps(raw))
        if parts[-1] and size + n > MAX_BODY_BYTES:
            parts.append([])
            size = 0
        parts[-1].append(raw)
        size += n
    out = []
    for i, part in enumerate(parts):
        tok = token.tok if i == 0 else f"{token.tok}.{i}"
        out.append((tok, json.dumps({"v": 2, "host": token.host, "tok": tok, "items": part}, separators=(",", ":"))))
    return out


class TokenQueue:
    """Implements ``heed_core.store.Tokens`` on the work queue, plus hiding deferred tokens."""

    def __init__(self, queue_url: str, client: Any, observer: QueueObserver | None = None) -> None:
        self.url = queue_url
        self.sqs = client
        self.observer = observer

    def send(self, tokens: Sequence[TokenOut]) -> None:
        """The deduplication id is the token's id: SQS drops a repeat within 5 minutes, and the
        host drops a token it already took in for days after."""
        messages = [(t.host, tok, body) for t in tokens for tok, body in encode_token(t)]
        for i in range(0, len(messages), 10):
            batch = messages[i:i + 10]
            entries = [{"Id": str(n), "MessageBody": body, "MessageGroupId": group_id(host),
                        "MessageDeduplicationId": tok[:128]} for n, (host, tok, body) in enumerate(batch)]
            try:
                resp = self.sqs.send_message_batch(QueueUrl=self.url, Entries=entries)
            except (ClientError, BotoCoreError) as exc:
                raise translate(exc, "send_message_batch") from exc
            if resp.get("Failed"):
                raise TransientError(f"send_message_batch failed for {len(resp['Failed'])} tokens")
            if self.observer is not None:
                self.observer.sent(len(batch))

    def hide(self, handles: Sequence[tuple[str, float]]) -> None:
        """Defer tokens: SQS visibility is whole seconds, so round *up* (a gap is never shorter)."""
        for i in range(0, len(handles), 10):
            batch = [(h, min(MAX_VISIBILITY_S, max(0, math.ceil(s)))) for h, s in handles[i:i + 10]]
            entries = [{"Id": str(n), "ReceiptHandle": h, "VisibilityTimeout": vis} for n, (h, vis) in enumerate(batch)]
            try:
                resp = self.sqs.change_message_visibility_batch(QueueUrl=self.url, Entries=entries)
            except (ClientError, BotoCoreError) as exc:
                raise translate(exc, "change_message_visibility_batch") from exc
            failed = {f["Id"] for f in resp.get("Failed", [])}
            if self.observer is not None:
                for n, (h, vis) in enumerate(batch):
                    if str(n) not in failed:
                        self.observer.hidden(h, vis)

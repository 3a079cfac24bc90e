"""A token as a queue carries it (``{"v": 2, "host", "tok", "items"}``), read back: the same on
SQS (``heed_aws.queue``) and on the embedded engine's queue (``heed_embedded.queue``); a batch's
tokens of one host made one turn's; and how long a token whose turn failed stays hidden (both
services)."""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from heed_core.crawl import CommitFailed
from heed_core.errors import InputError, TransientError
from heed_core.turn import TokenIn
from heed_core.urls import authority
from heed_core.work import WorkItem

__all__ = ["backoff", "decode_token", "deferred_wait", "with_copies"]


def decode_token(body: str, receives: int = 1, message_id: str = "") -> TokenIn:
    """A message body as the token it carries. ``InputError`` (``bad_token``) if it names no host;
    items that do not decode are set aside with why, so the rest of the work still gets done."""
    try:
        data = json.loads(body)
        host = authority(str(data["host"])) if "://" in str(data["host"]) else None
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"undecodable token: {exc!r}", reason="bad_token") from exc
    if host is None:
        raise InputError(f"token names no host: {str(data.get('host'))[:100]!r}", reason="bad_token")
    items: list[WorkItem] = []
    bad: list[tuple[str, str]] = []
    for raw in data.get("items") or ():
        try:
            item = WorkItem.from_compact(raw)
        except InputError as exc:
            bad.append((str(raw)[:200], str(exc)))
            continue
        if item.host != host:
            bad.append((item.url, f"work for {item.host} in a token of {host}"))
            continue
        items.append(item)
    tok = str(data.get("tok") or f"legacy:{data.get('round_id', '')}")
    return TokenIn(host=host, tok=tok, items=tuple(items), bad=tuple(bad), receives=receives, message_id=message_id)


def with_copies(head: TokenIn, rest: Sequence[TokenIn]) -> TokenIn:
    """The head token of a host carrying the work of the batch's other tokens of that host (a
    second token is acknowledged only with its work done: ``also``, with its undecodable items)."""
    same = [t for t in rest if t.host == head.host]
    return replace(head, also=tuple((t.tok, t.items, t.bad) for t in same))


def backoff(receives: int) -> float:
    """How long a token whose turn failed stays hidden. A host's token is reused between its
    requests, so its receive count says how much work it did, not how often it failed: the
    wait grows slowly with it and stays short (the queue's receive limit ends a poison loop)."""
    return float(min(30, 2 + receives // 10))


def deferred_wait(exc: TransientError, receives: int, now: float) -> float:
    """A turn deferred by a transient error: the backoff, and after a request whose commit failed
    (``CommitFailed``) not before the gap that request began is over (COMMON-05)."""
    wait = backoff(receives)
    if isinstance(exc, CommitFailed):
        wait = max(wait, exc.not_before - now)
    return wait

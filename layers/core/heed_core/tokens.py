"""A token as a queue carries it (``{"v": 2, "host", "tok", "items"}``), read back: the same on
SQS (``heed_aws.queue``) and on the embedded engine's queue (``heed_embedded.queue``); and a
batch's tokens of one host made one turn's (both services)."""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from heed_core.errors import InputError
from heed_core.turn import TokenIn
from heed_core.urls import authority
from heed_core.work import WorkItem

__all__ = ["decode_token", "with_copies"]


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
    second token is acknowledged only with its work done: ``also``), and their undecodable items."""
    same = [t for t in rest if t.host == head.host]
    return replace(head, also=tuple((t.tok, t.items) for t in same),
                   bad=head.bad + tuple(b for t in same for b in t.bad))

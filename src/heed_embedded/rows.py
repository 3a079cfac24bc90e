"""How the embedded store writes DynamoDB's values in SQLite rows: JSON without spaces (what is
not JSON read back as text), a host's name and its parent domains, a domain's name reversed (so
a domain and its subdomains are one range of ``domain_index``), and IN (...) lists in chunks.
Apart from ``store`` so that its parts (``store_sources``, ``store_operator``) share them
without importing it (issue 36)."""
from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from heed_core.urls import host_name

__all__ = ["CHUNK", "chunks", "dumps", "loads", "qmarks", "rname", "suffixes"]

CHUNK = 400  # parameters in one IN (...) list


def dumps(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str)


def loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def suffixes(host: str) -> list[str]:
    """The host's name and every parent domain (news.a.example: itself, a.example, example)."""
    parts = host_name(host).split(".")
    return [".".join(parts[i:]) for i in range(len(parts))]


def rname(name: str) -> str:
    return ".".join(reversed(name.lower().strip(".").split(".")))


def chunks(items: Sequence[str]) -> Iterable[Sequence[str]]:
    for i in range(0, len(items), CHUNK):
        yield items[i:i + CHUNK]


def qmarks(n: int) -> str:
    return ",".join("?" * n)

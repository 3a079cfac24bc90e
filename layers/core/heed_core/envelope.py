"""The one contract results leave Heed by, on every engine and every door (the pull of ``heed
events``, a webhook, the AWS results bus): a CloudEvents 1.0 JSON envelope per result.

``id`` is the result's deterministic id (the exactly-once id: the same result has the same id on
every delivery and every engine, so a consumer de-duplicates on it); ``type`` is ``heed.`` and the
result's kind (``TYPES``); ``source`` names the bot and the source id; ``subject`` the URL the
result is about; ``time`` when the crawl found it; ``data`` the result's record; ``dataschema``
the versioned JSON Schema shipped for the type (``schemas/<type>.json``, ``heed events
schema``). A new field in ``data`` is a new minor version of nothing: consumers ignore what they
do not know; a field removed or changed is a new schema version."""
from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from importlib import resources
from typing import Any
from urllib.parse import quote

__all__ = ["PREFIX", "SCHEMA_VERSION", "SPEC_VERSION", "TYPES", "envelope", "found_at", "schema", "type_of"]

SPEC_VERSION = "1.0"
PREFIX = "heed."
SCHEMA_VERSION = 1
# The result kinds, as the core's tasks name them (the EventBridge detail type is the same name).
TYPES = ("item.found", "article.read", "event.found", "page.new", "page.changed", "site.checked", "source.closed")


def found_at(now: float) -> str:
    """RFC 3339 UTC with milliseconds: a result's ``found_at`` (its envelope's ``time``)."""
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def type_of(kind: str) -> str:
    """``item.found`` -> ``heed.item.found`` (a full type is returned as it is)."""
    return kind if kind.startswith(PREFIX) else PREFIX + kind


def schema_uri(kind: str) -> str:
    return f"urn:heed:schema:{type_of(kind)}:{SCHEMA_VERSION}"


def envelope(kind: str, rid: str, record: Mapping[str, Any], *, at: float | None = None) -> dict[str, Any]:
    """The CloudEvents envelope of one result: ``kind`` its detail type, ``rid`` its id, ``record``
    its data. ``time`` is the record's ``found_at`` (fixed when the result was found, so every
    delivery carries the same), else ``at`` (a result recorded before ``found_at`` existed)."""
    bot = str(record.get("bot") or "")
    source_id = str(record.get("source") or "")
    out: dict[str, Any] = {
        "specversion": SPEC_VERSION,
        "id": rid,
        "source": f"/heed/{quote(bot, safe='')}/sources/{quote(source_id, safe='')}",
        "type": type_of(kind),
        "datacontenttype": "application/json",
        "dataschema": schema_uri(kind),
    }
    when = record.get("found_at")
    if not isinstance(when, str) and at is not None:
        when = found_at(at)
    if isinstance(when, str):
        out["time"] = when
    subject = record.get("url") or record.get("source_url")
    if isinstance(subject, str) and subject:
        out["subject"] = subject
    out["data"] = dict(record)
    return out


def schema(kind: str) -> dict[str, Any]:
    """The JSON Schema shipped for a result kind (``KeyError`` for a kind there is none of)."""
    name = type_of(kind)
    if name[len(PREFIX):] not in TYPES:
        raise KeyError(kind)
    text = resources.files("heed_core").joinpath("schemas", f"{name}.json").read_text(encoding="utf-8")
    return dict(json.loads(text))

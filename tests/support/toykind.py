"""A toy source kind, from one file: a project's plain-text changelog (``CHANGES.txt``, one release a
line: ``2026-11-30 1.4.0 Faster feeds``), each release a result. What a new kind is: its profile
section (``tasks.changelog``), a source field and its check, its own small parser, its handler,
registered through the registry's public function (``heed_core.kinds.register(KIND)``)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from heed_core.kinds.base import Kind, SourceField
from heed_core.kinds.handling import TaskInput, TaskOutput, canon, emit, options_of, seen_before, usage_refused
from heed_core.profile_schema import key
from heed_core.urls import short_hash

__all__ = ["KIND", "ChangelogTask", "Release", "parse_changelog"]

NAME = "changelog"
_LINE = re.compile(r"(\d{4}-\d{2}-\d{2})\s+(\S+)\s+(.+)")


@dataclass(frozen=True, kw_only=True)
class ChangelogTask:
    max_entries: int = key(10, ge=1, doc="releases read per changelog read, newest first")


@dataclass(frozen=True)
class Release:
    date: str
    version: str
    notes: str


def parse_changelog(body: bytes, max_entries: int) -> tuple[list[Release], int]:
    """The releases of a changelog, newest first as written (at most ``max_entries``), and how many
    it lists; a line that is not ``DATE VERSION NOTES`` is not a release."""
    found = [Release(*m.groups()) for line in body.decode("utf-8", "replace").splitlines()
             if (m := _LINE.fullmatch(line.strip()))]
    return found[:max_entries], len(found)


def _since(value: Any) -> str | None:
    ok = isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value) is not None
    return None if ok else "must be a date, YYYY-MM-DD"


def _changelog(inp: TaskInput) -> TaskOutput:
    item, task = inp.item, inp.profile.section(NAME, ChangelogTask)
    out = TaskOutput(source_fields={"last_read": inp.result.t_start or inp.now})
    if usage_refused(inp, out):
        return out
    releases, total = parse_changelog(inp.result.body, task.max_entries)
    if total > len(releases):
        out.skips.append((item.url, "cap_reached", f"{total - len(releases)} releases beyond max_entries"))
    since, before, ids = options_of(item).get("since"), seen_before(item), []
    for r in releases:
        if since and r.date < since:
            continue
        rid = short_hash(inp.profile.name, NAME, item.source_id, r.version)
        ids.append(rid)
        if rid not in before:
            emit(inp, out, "item.found", rid, {"kind": "page_item", "url": canon(inp, f"{item.url}#{r.version}"),
                                               "title": f"{r.version}: {r.notes}", "published": r.date})
    out.url_fields["emitted"] = tuple(ids)
    return out


class Changelog(Kind):
    name = NAME
    section = ChangelogTask
    entry_purpose = NAME
    handlers = {NAME: _changelog}
    fields = {"since": SourceField(_since, doc="releases on or after this date only")}


KIND = Changelog()

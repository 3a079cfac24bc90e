"""Work items (one URL to fetch for one source in one round) and the records kept about URLs.

Both travel a lot (inside SQS tokens, inside a host's item in DynamoDB), so each has a compact
codec: short keys, defaults left out. ``from_compact`` raises ``InputError`` on anything it
cannot rebuild, so an undecodable item becomes a recorded skip, never a stuck host."""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from heed_core.errors import InputError
from heed_core.urls import authority, short_hash

# What a source is (its kind: the task its rounds run, one room of heed_core.kinds) and what one
# request is for (a purpose: robots.txt and tdmrep.json are the turn's own, the rest a kind's).
# Both are names here; which ones exist is the kinds' registry's to say (heed_core.kinds), which
# the turn asks before any request (an item of a kind or purpose nobody knows is never fetched).
TaskKind = str
Purpose = str
# "proof": a site owner's proof of control, the desk's file at /.well-known/ (heed_core.desk.proof), asked
# of a host the crawl knows, through its turn like any page, whatever kind of work brought the host.
TURN_PURPOSES: tuple[Purpose, ...] = ("robots", "tdmrep", "proof")
_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")


def is_name(value: object) -> bool:
    """A kind's or a purpose's name as the registry spells them: lower case, digits and '_'."""
    return isinstance(value, str) and _NAME.fullmatch(value) is not None


def as_task_kind(value: object) -> TaskKind:
    """A task kind read from outside (a token, a stored item), checked as a name."""
    if is_name(value):
        return str(value)
    raise InputError(f"unknown task kind {value!r}", reason="bad_work_item")


def as_purpose(value: object) -> Purpose:
    """A request's purpose read from outside, checked as a name."""
    if is_name(value):
        return str(value)
    raise InputError(f"unknown purpose {value!r}", reason="bad_work_item")


@dataclass(frozen=True)
class UrlRecord:
    """What we remember of one URL: validators for conditional GET (AUBE-02, WANNADO-07),
    when it was read (AUBE-03, SPRING-04), the hash of its text (SUBSIDIE-04) and the ids of
    the results it last gave (so a page read again reports only what is new)."""

    url: str
    etag: str | None = None
    last_modified: str | None = None
    content_hash: str | None = None
    last_fetched: float | None = None
    title_fetched_at: float | None = None
    last_status: int | None = None
    emitted: tuple[str, ...] = ()

    _KEYS = (("etag", "e"), ("last_modified", "m"), ("content_hash", "h"), ("last_fetched", "f"),
             ("title_fetched_at", "t"), ("last_status", "s"))

    def to_compact(self) -> dict[str, Any]:
        out: dict[str, Any] = {"u": self.url}
        for name, key in self._KEYS:
            value = getattr(self, name)
            if value is not None:
                out[key] = value
        if self.emitted:
            out["x"] = list(self.emitted)
        return out

    @classmethod
    def from_compact(cls, d: Mapping[str, Any]) -> UrlRecord:
        try:
            fields: dict[str, Any] = {name: d[key] for name, key in cls._KEYS if d.get(key) is not None}
            for name in ("last_fetched", "title_fetched_at"):
                if name in fields:
                    fields[name] = float(fields[name])
            if "last_status" in fields:
                fields["last_status"] = int(fields["last_status"])
            return cls(url=str(d["u"]), emitted=tuple(str(x) for x in d.get("x") or ()), **fields)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"undecodable URL record: {exc!r}", reason="bad_url_record") from exc


@dataclass(frozen=True)
class WorkItem:
    url: str
    purpose: Purpose
    task: TaskKind  # the source's kind
    source_id: str
    source_url: str
    round_id: str
    round_start: float
    depth: int = 0  # 0 = the source's entry; follow-ups are deeper (breadth first per host)
    hop: int = 0  # redirects followed so far (COMMON-06)
    seq: int = 0  # position among its siblings (feed order, sitemap order)
    not_before: float = 0.0
    attempts: int = 0  # retries used today (SPRING-06)
    failures: int = 0  # real processing failures (not deferrals)
    ctx: Mapping[str, Any] = field(default_factory=dict)
    seen: UrlRecord | None = None  # what we knew of the URL when the item was made

    @property
    def host(self) -> str:
        return authority(self.url)

    @property
    def work_id(self) -> str:
        return short_hash(self.round_id, self.source_id, self.purpose, self.url, str(self.hop))

    @property
    def order_key(self) -> str:
        """Sorts a host's frontier: older rounds first, then shallower work (the entry page
        before what it leads to), then a stable hash."""
        return f"{int(self.round_start):011d}#{self.depth:03d}#{self.seq:06d}#{self.work_id}"

    def follow(self, url: str, purpose: Purpose, **changes: Any) -> WorkItem:
        """A follow-up of this item: same source and round, one level deeper."""
        ctx = dict(self.ctx)
        ctx.update(changes.pop("ctx", {}))
        return replace(self, url=url, purpose=purpose, depth=self.depth + 1, hop=0, not_before=0.0,
                       attempts=0, failures=0, ctx=ctx, seen=changes.pop("seen", None), **changes)

    # --- codecs -------------------------------------------------------------------------------
    def to_compact(self) -> dict[str, Any]:
        out: dict[str, Any] = {"u": self.url, "p": self.purpose, "t": self.task, "s": self.source_id,
                               "r": self.round_id, "rs": self.round_start}
        if self.source_url != self.url:
            out["su"] = self.source_url
        for name, key in (("depth", "d"), ("hop", "h"), ("seq", "q"), ("not_before", "nb"),
                          ("attempts", "a"), ("failures", "f")):
            value = getattr(self, name)
            if value:
                out[key] = value
        if self.ctx:
            out["c"] = dict(self.ctx)
        if self.seen is not None:
            out["w"] = self.seen.to_compact()
        return out

    @classmethod
    def from_compact(cls, d: Mapping[str, Any]) -> WorkItem:
        try:
            item = cls(
                url=str(d["u"]), purpose=as_purpose(d["p"]), task=as_task_kind(d["t"]), source_id=str(d["s"]),
                source_url=str(d.get("su") or d["u"]), round_id=str(d["r"]), round_start=float(d["rs"]),
                depth=int(d.get("d", 0)), hop=int(d.get("h", 0)), seq=int(d.get("q", 0)),
                not_before=float(d.get("nb", 0.0)), attempts=int(d.get("a", 0)), failures=int(d.get("f", 0)),
                ctx=dict(d.get("c") or {}),
                seen=UrlRecord.from_compact(d["w"]) if d.get("w") else None)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"undecodable work item: {exc!r}", reason="bad_work_item") from exc
        authority(item.url)  # raises BadUrl (an InputError) for a URL we could never fetch
        return item

    # The long form (tests, tools): field names as keys.
    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.url, "purpose": self.purpose, "task": self.task, "source_id": self.source_id,
            "source_url": self.source_url, "round_id": self.round_id, "round_start": self.round_start,
            "depth": self.depth, "hop": self.hop, "seq": self.seq, "not_before": self.not_before,
            "attempts": self.attempts, "failures": self.failures, "ctx": dict(self.ctx),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> WorkItem:
        return cls(
            url=str(d["url"]), purpose=as_purpose(d["purpose"]), task=as_task_kind(d["task"]),
            source_id=str(d["source_id"]), source_url=str(d["source_url"]),
            round_id=str(d["round_id"]), round_start=float(d["round_start"]),
            depth=int(d.get("depth", 0)), hop=int(d.get("hop", 0)), seq=int(d.get("seq", 0)),
            not_before=float(d.get("not_before", 0.0)), attempts=int(d.get("attempts", 0)),
            failures=int(d.get("failures", 0)), ctx=dict(d.get("ctx") or {}),
        )


@dataclass(frozen=True)
class Source:
    """A customer-added source (a feed, a listing page, a site, a municipality, a venue), with
    what the crawl learnt of it (``last_read``, closed or not, and the ids of the feed items
    already reported, so a feed read again reports only new items)."""

    id: str
    url: str
    kind: TaskKind
    options: Mapping[str, Any] = field(default_factory=dict)
    closed: bool = False
    closed_reason: str | None = None
    last_read: float | None = None
    seen_items: tuple[str, ...] = ()

    @staticmethod
    def make_id(url: str, kind: str) -> str:
        return f"{kind}-{short_hash(url, kind, n=10)}"

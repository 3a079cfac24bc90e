"""What a kind's handler is handed (``TaskInput``) and hands back (``TaskOutput``: results,
follow-up candidates and skips), and the reading steps every handler shares: noindex, the site's
usage preferences, links made canonical, a result emitted.

Pure: no store, no clock, no network. What a handler needs from outside is handed in (kept texts,
the host's tdmrep.json, an extractor's answer), and what it would need but was not given it asks
for (``needs_texts``, ``needs_extract``): the executor loads it and calls again. Follow-ups come
out as candidates with the checks that decide them (read once ever, title seen this week, caps),
which ``admit`` applies."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from heed_core import usage
from heed_core.envelope import found_at
from heed_core.extract import signals
from heed_core.extract.events import Event
from heed_core.ports import FetchResult
from heed_core.robots import RobotsTxt
from heed_core.typed_profile import Profile
from heed_core.urls import BAD_URL, BadUrl, canonical
from heed_core.work import WorkItem

__all__ = ["Candidate", "Cap", "Event_", "Handler", "Skip", "TaskInput", "TaskOutput", "bad_links", "canon",
           "content_type", "directives", "emit", "options_of", "seen_before", "text_version", "usage_refused"]

Skip = tuple[str, str, str]  # url, reason code, detail
Event_ = tuple[str, str, dict[str, Any]]  # detail type, result id, record


@dataclass(frozen=True)
class Cap:
    """A cap on follow-ups (AUBE-10, SPRING-03, SUBSIDIE-02, WANNADO's pages per round)."""

    key: str
    limit: int
    expires_at: float
    detail: str
    scope: str = "host"  # "host": counted in the host's item; "global": over all hosts


@dataclass(frozen=True)
class Candidate:
    """A follow-up and what decides it. ``once_ever``: never if the URL was read before
    (AUBE-03, PRAHA-05); ``title_week_s``: not if its title was fetched within that many
    seconds (SPRING-04); ``caps`` in order; ``with_record``: the item should carry the URL's
    record (validators for a conditional GET, the text hash)."""

    item: WorkItem
    once_ever: bool = False
    title_week_s: float = 0.0
    caps: tuple[Cap, ...] = ()
    with_record: bool = False

    @property
    def needs_record(self) -> bool:
        return self.once_ever or self.title_week_s > 0 or self.with_record


@dataclass(frozen=True)
class TaskInput:
    profile: Profile
    item: WorkItem
    result: FetchResult
    now: float
    texts: Mapping[str, str | None] = field(default_factory=dict)  # kept texts asked for, by key
    tdmrep_body: bytes | None = None  # the host's /.well-known/tdmrep.json, if read
    host_results: Mapping[str, float] = field(default_factory=dict)  # result ids reported lately
    extracted: tuple[Event, ...] | None = None  # the extractor's answer, once asked
    robots: RobotsTxt | None = None  # the robots.txt whose verdict allowed the request (AIPREF)
    host_seen: Sequence[str] = ()  # the feed items this source reported, as its host's item remembers them


@dataclass
class TaskOutput:
    skips: list[Skip] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    url_fields: dict[str, Any] = field(default_factory=dict)
    source_fields: dict[str, Any] = field(default_factory=dict)
    events: list[Event_] = field(default_factory=list)
    texts_out: list[tuple[str, str]] = field(default_factory=list)  # (key, text) kept before the commit
    needs_texts: list[str] = field(default_factory=list)
    needs_extract: bool = False
    detail: str | None = None  # how the body was read (what was recovered), for the request record


Handler = Callable[[TaskInput], TaskOutput]


def text_version(key: str) -> str:
    """A placeholder in an event record for the version id the bucket gives ``key``'s text."""
    return f"\x00version:{key}"


def emit(inp: TaskInput, out: TaskOutput, detail_type: str, result_id: str, record: dict[str, Any]) -> None:
    """A result of the item's source: ``record`` with the bot, the source and when it was found."""
    item = inp.item
    record = {"bot": inp.profile.name, "id": result_id, "source": item.source_id,
              "source_url": item.source_url, "found_at": found_at(inp.now), **record}
    out.events.append((detail_type, result_id, record))


def directives(inp: TaskInput, out: TaskOutput, page: signals.Page | None = None) -> signals.Directives | None:
    """SUBSIDIE-09: a noindex page is not stored (None, with the skip recorded); nofollow is the
    caller's to honour. ``page``: the body's parse, shared with the turn's other readers."""
    found = signals.robots_directives(inp.result.headers, inp.result.body, inp.profile.robots_token, page=page)
    if found.noindex:
        out.skips.append((inp.item.url, "noindex", ", ".join(found.sources)))
        return None
    return found


def usage_refused(inp: TaskInput, out: TaskOutput) -> bool:
    """AIPREF: True (with a ``usage_refused`` skip naming the rule) when the site says ``n`` to a
    use the bot declares, in the robots.txt that allowed the request (attach 3.3) or in the
    response's Content-Usage header. Nothing of such a page is kept, and nothing read from it is
    followed: its links were content too."""
    uses = inp.profile.spec.usage
    if not uses:
        return False
    decision = usage.decide(uses, robots=inp.robots, url=inp.item.url, token=inp.profile.robots_token,
                            headers=inp.result.headers)
    if decision.keep:
        return False
    out.skips.append((inp.item.url, decision.reason or usage.REFUSED, decision.detail))
    return True


def canon(inp: TaskInput, url: str) -> str:
    """A link as it is requested, judged by robots.txt, deduplicated, recorded and named in
    results: its canonical form (heed_core.urls), less the profile's tracking parameters."""
    try:
        return canonical(url, inp.profile.strip_params)
    except BadUrl:
        return url  # the extractors hand over http(s) links only; never a reason to fail a page


def bad_links(out: TaskOutput, links: tuple[str, ...] | list[str]) -> None:
    for text in links:
        out.skips.append((text, BAD_URL, "the link is not a URL (the URL Standard cannot parse it)"))


def content_type(result: FetchResult) -> str | None:
    return result.header("Content-Type")


def options_of(item: WorkItem) -> Mapping[str, Any]:
    """The options of the item's source (``Source.options``), as its round handed them on."""
    return item.ctx.get("opts") or {}


def seen_before(item: WorkItem) -> set[str]:
    """The result ids the item's URL gave when it was last read (reported again: never)."""
    return set(item.seen.emitted) if item.seen is not None else set()

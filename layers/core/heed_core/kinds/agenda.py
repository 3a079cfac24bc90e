"""The agenda kind (WANNADO-06, -09, -10): a venue's programme and ticket pages, found from its
sitemap, each event on them a result; pages through a render service where a source asks, and a
language model where the structured data is missing, where the profile says so."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from heed_core.extract import events as ev
from heed_core.extract import sitemaps
from heed_core.kinds.base import Entry, Kind, flag, url_list
from heed_core.kinds.handling import (
    Candidate,
    Cap,
    TaskInput,
    TaskOutput,
    canon,
    directives,
    emit,
    options_of,
    seen_before,
    usage_refused,
)
from heed_core.kinds.sayings import Count, Quoted, Sayings, say
from heed_core.kinds.walk import OFF_SITE, first_sitemap, read_sitemap, sitemap_entries, sitemap_key
from heed_core.profile_keys import http_url
from heed_core.profile_schema import ProfileError, key
from heed_core.typed_profile import Profile
from heed_core.urls import authority, path_of, same_authority, short_hash
from heed_core.work import Source, WorkItem

__all__ = ["KIND", "AgendaTask"]

_DEFAULT_TIMEZONE = "Europe/Amsterdam"  # WannadoBot's venues (tasks.agenda.timezone overrides)


@dataclass(frozen=True, kw_only=True)
class AgendaTask:
    start: Literal["sitemap"] = key("sitemap", doc="where a round starts")
    follow_patterns: tuple[str, ...] = key((), doc="a sitemap URL is followed only if its path has one of these")
    max_pages_per_site_per_round: int = key(20, ge=1, doc="agenda pages per site per round")
    extractor: Literal["structured", "bedrock"] = key(
        "structured", doc="structured data only, or a language model where it is missing")
    bedrock_model_id: str | None = key(None, doc="the model of the bedrock extractor")
    render_endpoint: str | None = key(None, check=http_url, doc="render service for sources marked render: true")
    timezone: str = key("Europe/Amsterdam", doc="the venues' time zone: an event time without an offset is read in it")


def _task(profile: Profile) -> AgendaTask:
    return profile.section("agenda", AgendaTask)


def _rule(loc: str, entry: sitemaps.SitemapEntry, inp: TaskInput, seq: int) -> Candidate | tuple[str, str]:
    item, task = inp.item, _task(inp.profile)
    if not same_authority(loc, item.url):
        return OFF_SITE
    path = path_of(loc).lower()
    if not any(p.lower() in path for p in task.follow_patterns):
        return ("not_followed", "not about programme or tickets (WANNADO-06)")
    limit = task.max_pages_per_site_per_round
    render = bool(options_of(item).get("render"))
    return Candidate(item.follow(loc, "agenda", seq=seq, ctx={"render": True} if render else {}),
                     caps=(Cap(f"agenda#{authority(loc)}#{item.round_id}", limit, inp.now + 86400,
                               f"at most {limit} agenda pages per site per round"),), with_record=True)


def _sitemap(inp: TaskInput) -> TaskOutput:
    return read_sitemap(inp, _rule, source_after=True)


def _agenda(inp: TaskInput) -> TaskOutput:
    item, out, task = inp.item, TaskOutput(), _task(inp.profile)
    if directives(inp, out) is None:
        return out
    if usage_refused(inp, out):
        return out  # before the extractor too: handing the page to a language model is a use
    found = ev.extract_events(inp.result.body, base_url=item.url, timezone=task.timezone or _DEFAULT_TIMEZONE)
    events = list(found.events)
    if not events and task.extractor == "bedrock":
        if inp.extracted is None:
            out.needs_extract = True
            return out
        events = list(inp.extracted)
    if not events:
        out.skips.append((item.url, "no_events", found.error or "no schema.org Event on the page"))
    before = seen_before(item)
    ids: list[str] = []
    for e in events:
        # One event, one result: an overview page and the event's own page name the same event.
        url = canon(inp, e.url) if e.url else item.url
        rid = short_hash(inp.profile.name, "event", url, e.name or "", e.start or "")
        ids.append(rid)
        if rid in before or rid in inp.host_results:
            continue
        emit(inp, out, "event.found", rid, {
            "kind": "event", "url": url, "page": item.url, "name": e.name, "start": e.start,
            "end": e.end, "location": e.location, "online": e.online, "price": e.price,
            "description": e.description, "image": e.image, "format": e.source_format,
            # A cancelled or sold-out show must not look like a normal one.
            "status": e.status, "availability": e.availability, "previous_start": e.previous_start})
    out.url_fields["emitted"] = tuple(dict.fromkeys(ids))
    return out


class Agenda(Kind):
    name = "agenda"
    section = AgendaTask
    entry_purpose = "sitemap"
    handlers = {"sitemap": _sitemap, "agenda": _agenda}
    fields = {"sitemaps": url_list("start here instead of /sitemap.xml"),
              "render": flag("its pages through the profile's render service")}
    spaced = frozenset({"agenda"})
    read_on_304 = frozenset({"sitemap"})

    def check(self, options: Any) -> None:
        if options.extractor == "bedrock" and not options.bedrock_model_id:
            raise ProfileError("tasks.agenda.bedrock_model_id: missing (extractor: bedrock needs a model)")

    def entries(self, entry: Entry) -> list[WorkItem]:
        return sitemap_entries(entry, self.name)

    def status_url(self, source: Source) -> str:
        return first_sitemap(source)

    def may_bring(self, profile: Profile, item: WorkItem) -> int:
        return _task(profile).max_pages_per_site_per_round if item.purpose == "sitemap" else 0

    def stored_keys(self, url: str) -> list[str]:
        return [sitemap_key(url)]

    def render_endpoint(self, profile: Profile) -> str | None:
        return _task(profile).render_endpoint

    def extractor_model(self, profile: Profile) -> str | None:
        task = _task(profile)
        return task.bedrock_model_id if task.extractor == "bedrock" else None

    def says(self, profile: Profile) -> Sayings:
        task = _task(profile)
        outside = (("tasks.agenda.render_endpoint",) if task.render_endpoint else ()) + (
            ("tasks.agenda.extractor",) if task.extractor == "bedrock" else ())
        return Sayings(fetched=(say("f_agenda", patterns=Quoted(task.follow_patterns)), say("f_structured")),
                       kept=(say("k_agenda"),),
                       caps=(say("cap_agenda", pages=Count(task.max_pages_per_site_per_round, "page")),),
                       reads_meta_robots=True, outside_services=outside)


KIND = Agenda()

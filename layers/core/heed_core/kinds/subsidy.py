"""The subsidy kind (SUBSIDIE-01..05, -09, -12): a municipality's pages about subsidies, found
from its sitemap, each kept to be compared with its next version; a change is a result."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from heed_core.extract import pages, paywall, signals, sitemaps
from heed_core.extract import subsidy as text
from heed_core.kinds.base import Entry, Kind, url_list
from heed_core.kinds.handling import (
    Candidate,
    Cap,
    TaskInput,
    TaskOutput,
    directives,
    emit,
    text_version,
    usage_refused,
)
from heed_core.kinds.sayings import Count, Quoted, Sayings, say
from heed_core.kinds.walk import OFF_SITE, first_sitemap, read_sitemap, sitemap_entries, sitemap_key
from heed_core.profile_schema import key
from heed_core.typed_profile import Profile
from heed_core.urls import authority, path_of, same_authority, short_hash
from heed_core.work import Source, WorkItem

__all__ = ["KIND", "SubsidyTask", "subsidy_key"]


@dataclass(frozen=True, kw_only=True)
class SubsidyTask:
    topic_patterns: tuple[str, ...] = key((), doc="a sitemap URL is followed only if its path has one of these")
    max_pages_per_host_per_round: int = key(5, ge=1, doc="pages per host per round")
    diff_summary_max_chars: int = key(300, ge=1, doc="characters of the change summary")


def subsidy_key(url: str) -> str:
    return f"subsidy/{short_hash(url, n=24)}.txt"


def _task(profile: Profile) -> SubsidyTask:
    return profile.section("subsidy", SubsidyTask)


def _rule(loc: str, entry: sitemaps.SitemapEntry, inp: TaskInput, seq: int) -> Candidate | tuple[str, str] | None:
    item, task = inp.item, _task(inp.profile)
    if not same_authority(loc, item.url):
        return OFF_SITE
    path = path_of(loc).lower()
    pats = [p.lower() for p in task.topic_patterns]
    if not any(re.search(rf"(^|[/_.-]){re.escape(p)}", path) for p in pats) or "?" in path:
        return ("off_topic", "not about subsidies (SUBSIDIE-05)")
    if loc == item.source_url:
        return None  # the source page itself is read every round on its own (SUBSIDIE-01)
    limit = task.max_pages_per_host_per_round
    return Candidate(item.follow(loc, "subsidy", seq=seq),
                     caps=(Cap(f"subsidy#{authority(loc)}#{item.round_id}", limit, inp.now + 86400,
                               f"at most {limit} pages per municipality per round (SUBSIDIE-02)"),),
                     with_record=True)


def _sitemap(inp: TaskInput) -> TaskOutput:
    return read_sitemap(inp, _rule)


# --- subsidy pages (SUBSIDIE-04, -09, -12) -----------------------------------------------------------
def _subsidy(inp: TaskInput) -> TaskOutput:
    item, out = inp.item, TaskOutput()
    page = signals.Page(inp.result.body)  # parsed once: read for its directives and paywall, then its text
    found = directives(inp, out, page)
    if found is None:
        return out
    if found.nofollow:
        # SUBSIDIE-09, the stricter reading: "noindex and nofollow ... the page is not stored and
        # its links are not followed" holds for either directive.
        out.skips.append((item.url, "nofollow", ", ".join(found.sources)))
        return out
    pay = paywall.is_paywalled(inp.result.body, page=page)
    if pay.paywalled:
        out.skips.append((item.url, "paywalled", pay.marker or ""))  # SUBSIDIE-05: nothing behind a paywall
        return out
    if usage_refused(inp, out):
        return out  # neither the text, nor its hash, nor a summary
    body = text.normalise(text.main_text(inp.result.body, page=page))
    digest = text.content_hash(body)
    seen = item.seen
    if seen is not None and seen.content_hash == digest:
        out.skips.append((item.url, "unchanged", "same text as the previous version (SUBSIDIE-04)"))
        return out
    key_ = subsidy_key(item.url)
    known = seen is not None and seen.content_hash is not None
    if known and key_ not in inp.texts:
        out.needs_texts.append(key_)
        return out
    previous = inp.texts.get(key_) if known else None
    out.texts_out.append((key_, body))
    limit = _task(inp.profile).diff_summary_max_chars
    summary = text.diff_summary(previous, body, max_chars=limit) if previous else "new page"
    # The seed: customers are warned when a regulation appears or changes.
    kind = "page.changed" if known else "page.new"
    emit(inp, out, kind, short_hash(inp.profile.name, "change", item.url, digest),
         {"kind": "page_change" if known else "page_new", "url": item.url,
          "title": pages.extract_title(inp.result.body), "summary": summary, "hash": digest,
          "previous_hash": seen.content_hash if seen else None, "version": text_version(key_)})
    out.url_fields["content_hash"] = digest
    return out


class Subsidy(Kind):
    name = "subsidy"
    section = SubsidyTask
    entry_purpose = "sitemap"
    handlers = {"sitemap": _sitemap, "subsidy": _subsidy}
    fields = {"sitemaps": url_list("start here instead of /sitemap.xml")}
    spaced = frozenset({"subsidy"})
    read_on_304 = frozenset({"sitemap"})

    def entries(self, entry: Entry) -> list[WorkItem]:
        items = sitemap_entries(entry, self.name)
        if (urlsplit(entry.item.url).path or "/") != "/":
            # SUBSIDIE-01/-02: the page the operator gave is itself watched, every round (a home
            # page is only the site's address).
            items.append(replace(entry.item, purpose="subsidy"))
        return items

    def status_url(self, source: Source) -> str:
        return first_sitemap(source)

    def may_bring(self, profile: Profile, item: WorkItem) -> int:
        return _task(profile).max_pages_per_host_per_round if item.purpose == "sitemap" else 0

    def stored_keys(self, url: str) -> list[str]:
        return [subsidy_key(url), sitemap_key(url)]

    def says(self, profile: Profile) -> Sayings:
        task = _task(profile)
        return Sayings(fetched=(say("f_subsidy", topics=Quoted(task.topic_patterns)), say("f_compare")),
                       kept=(say("k_subsidy", chars=Count(task.diff_summary_max_chars, "character")),),
                       caps=(say("cap_subsidy", pages=Count(task.max_pages_per_host_per_round, "page")),),
                       paywall_checked=True, reads_meta_robots=True)


KIND = Subsidy()

"""The page kind (SPRING-01..04): a listing page whose items are results (title, link and time
only); a page built by JavaScript leads, where the profile allows, to its site's sitemap and the
titles of the pages under the source's path."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from heed_core.extract import pages
from heed_core.kinds.base import Kind
from heed_core.kinds.handling import (
    Candidate,
    TaskInput,
    TaskOutput,
    bad_links,
    canon,
    content_type,
    directives,
    emit,
    seen_before,
    usage_refused,
)
from heed_core.kinds.sayings import Count, Duration, Sayings, say
from heed_core.kinds.walk import (
    SitemapFallback,
    fallback,
    fallback_rule,
    read_sitemap,
    read_title,
    sitemap_key,
    title_refusal,
)
from heed_core.profile_schema import key
from heed_core.typed_profile import Profile
from heed_core.urls import authority, origin, short_hash
from heed_core.work import WorkItem

__all__ = ["KIND", "PageTask"]


@dataclass(frozen=True, kw_only=True)
class PageTask:
    max_pages_per_source_per_round: int = key(1, ge=1, doc="listing pages per source per round")


def _page(inp: TaskInput) -> TaskOutput:
    if inp.item.ctx.get("title_only"):
        return read_title(inp)
    item, out = inp.item, TaskOutput()
    found = directives(inp, out)
    if found is None:
        return out
    if usage_refused(inp, out):
        return out  # and no sitemap fallback: its titles would be kept for the same use
    listing = pages.extract_listing(inp.result.body, base_url=item.url, content_type=content_type(inp.result))
    if listing.error:
        out.skips.append((item.url, "bad_page", listing.error))
        return out
    bad_links(out, listing.bad_links)
    before = seen_before(item)
    ids: list[str] = []
    for it in listing.items:
        # SPRING-01: title, link and publication time only; ListingItem has nothing else.
        link = canon(inp, it.link)
        rid = short_hash(inp.profile.name, "item", item.source_id, link)
        ids.append(rid)
        if rid not in before:
            emit(inp, out, "item.found", rid, {"kind": "page_item", "url": link, "title": it.title,
                                               "published": it.published})
    out.url_fields["emitted"] = tuple(dict.fromkeys(ids))
    fb = fallback(inp.profile)
    if not listing.items and fb.enabled and not found.nofollow:
        # SPRING-03: a page built by JavaScript yields nothing: read the site's sitemap instead.
        # SPRING-03 promises "the site's sitemap.xml": that one file (robots.txt Sitemap: lines
        # are not read on top of it, so the site never sees more than 1 + 2 sitemap requests).
        url = origin(authority(item.url)) + "/sitemap.xml"
        out.candidates.append(Candidate(item.follow(url, "sitemap", ctx={"role": "fallback", "level": 0}),
                                        with_record=True))
        out.skips.append((item.url, "no_items", "page built by JavaScript: sitemap fallback (SPRING-03)"))
    return out


def _fallback_sitemap(inp: TaskInput) -> TaskOutput:
    return read_sitemap(inp, fallback_rule, children=fallback(inp.profile).max_child_sitemaps)


class Page(Kind):
    name = "page"
    section = PageTask
    entry_purpose = "page"
    handlers = {"page": _page, "sitemap": _fallback_sitemap}
    extra_sections = {"sitemap_fallback": SitemapFallback}
    spaced = frozenset({"page"})
    read_on_304 = frozenset({"sitemap"})

    def may_bring(self, profile: Profile, item: WorkItem) -> int:
        """A listing page the sitemap fallback's reads; the fallback's sitemap its pages."""
        fb = fallback(profile)
        if item.purpose == "page" and not item.ctx.get("title_only"):
            return 1 + fb.max_child_sitemaps + fb.max_new_pages if fb.enabled else 0
        if item.purpose == "sitemap":
            return fb.max_child_sitemaps + fb.max_new_pages
        return 0

    def stored_keys(self, url: str) -> list[str]:
        return [sitemap_key(url)]

    def refusal(self, profile: Profile, item: WorkItem, recent: list[Any] | None, now: float) -> tuple[str, str] | None:
        return title_refusal(profile, item, recent, now)

    def says(self, profile: Profile) -> Sayings:
        fb = fallback(profile)
        fetched = [say("f_page")]
        if fb.enabled:
            fetched.append(say("f_fallback", children=Count(fb.max_child_sitemaps, "child_sitemap"),
                               pages=Count(fb.max_new_pages, "new_page")))
        fetched.append(say("f_title_refetch", d=Duration(fb.title_refetch_after_s),
                           d_dat=Duration(fb.title_refetch_after_s, dative=True)))
        cap = profile.section("page", PageTask).max_pages_per_source_per_round
        return Sayings(fetched=tuple(fetched), kept=(say("k_page"),), caps=(say("cap_page", pages=Count(cap, "page")),),
                       reads_meta_robots=True)


KIND = Page()

"""What the kinds that start at a sitemap share: a round's sitemap reads (one per host and round),
a sitemap read (kept for a 304, its children capped, each entry judged by the kind's own rule),
and the title-only page a sitemap leads to (SPRING-03/-04), with ``tasks.sitemap_fallback``, the
options of titles and of a listing page's fallback."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from heed_core.extract import pages, sitemaps
from heed_core.hoststate import recent_read
from heed_core.kinds.base import Entry
from heed_core.kinds.handling import (
    Candidate,
    Cap,
    TaskInput,
    TaskOutput,
    canon,
    content_type,
    directives,
    emit,
    seen_before,
    usage_refused,
)
from heed_core.profile_schema import key
from heed_core.typed_profile import Profile
from heed_core.urls import BadUrl, authority, canonical, origin, same_authority, short_hash, under_path
from heed_core.work import Source, WorkItem

__all__ = ["CHILDREN_PER_ROUND", "OFF_SITE", "EntryRule", "SitemapFallback", "fallback", "fallback_rule",
           "first_sitemap", "read_sitemap", "read_title", "sitemap_entries", "sitemap_key", "title_refusal",
           "title_rule"]

CHILDREN_PER_ROUND = 5  # child sitemaps read per source and round, but for a listing page's fallback


@dataclass(frozen=True, kw_only=True)
class SitemapFallback:
    enabled: bool = key(False, doc="a page without items leads to its site's sitemap.xml")
    max_child_sitemaps: int = key(2, ge=0, doc="child sitemaps read per source and round")
    max_new_pages: int = key(5, ge=0, doc="new pages whose title is fetched per source and round")
    title_refetch_after_s: float = key(604800, ge=0, doc="a title is not fetched again within this")


def fallback(profile: Profile) -> SitemapFallback:
    """``tasks.sitemap_fallback`` of ``profile`` (its defaults when absent)."""
    return profile.section("sitemap_fallback", SitemapFallback)


def sitemap_key(url: str) -> str:
    return f"sitemaps/{short_hash(url, n=24)}.bin"


def first_sitemap(source: Source) -> str:
    """Where a round of a source that starts at a sitemap starts: the first it names, or its site's."""
    maps = list(source.options.get("sitemaps") or [])
    return str(maps[0]) if maps else origin(authority(source.url)) + "/sitemap.xml"


def sitemap_entries(entry: Entry, role: str) -> list[WorkItem]:
    """WANNADO-06 / SUBSIDIE-01: a round starts at the site's sitemap (or the ones the source
    names), never walking blindly; one read of a sitemap per host per round, however many
    sources share the host (``entry.taken``)."""
    src, item, profile = entry.source, entry.item, entry.profile
    out: list[WorkItem] = []
    ctx = dict(item.ctx)
    for given in list(src.options.get("sitemaps") or [origin(item.host) + "/sitemap.xml"]):
        try:
            url = canonical(str(given), profile.strip_params)
        except BadUrl:
            entry.skips.append(("bad_url", f"sitemap {str(given)[:200]!r} is not an absolute http(s) URL"))
            continue
        if url in entry.taken:
            continue
        entry.taken.add(url)
        out.append(replace(item, url=url, purpose="sitemap", ctx={**ctx, "role": role, "level": 0},
                           seen=entry.records.get(url)))
    return out


# What a kind makes of one sitemap entry (its canonical URL): a candidate, a skip (reason,
# detail), or None (left out, not worth a record).
EntryRule = Callable[[str, sitemaps.SitemapEntry, TaskInput, int], Candidate | tuple[str, str] | None]


def read_sitemap(inp: TaskInput, rule: EntryRule, *, children: int = CHILDREN_PER_ROUND,
                 source_after: bool = False) -> TaskOutput:
    """A sitemap's answer: its child sitemaps (at most ``children`` per source and round, and an
    index inside an index not walked further) and each URL it lists judged by ``rule``.
    ``source_after``: the source URL is read after the sitemap when the sitemap does not list it."""
    item, out, now, profile = inp.item, TaskOutput(), inp.now, inp.profile
    key_ = sitemap_key(item.url)
    if inp.result.status == 304:
        # SUBSIDIE-04 / WANNADO-07: an unchanged sitemap costs the site a 304, but the pages it
        # lists are still due: read the copy kept from its last 200.
        if key_ not in inp.texts:
            out.needs_texts.append(key_)
            return out
        kept = inp.texts[key_]
        if kept is None:
            out.skips.append((item.url, "not_modified", "304 and no kept copy of the sitemap"))
            return out
        body = kept.encode("latin-1")
    else:
        body = inp.result.body
        if profile.conditional_requests:
            out.texts_out.append((key_, body.decode("latin-1")))  # bytes, losslessly
    parsed = sitemaps.parse_sitemap(body, url=item.url, max_bytes=profile.max_bytes("sitemap"))
    out.detail = parsed.detail
    if parsed.error:
        out.skips.append((item.url, "bad_sitemap", parsed.error))
        return out
    for loc, reason in parsed.skipped:
        out.skips.append((loc, "bad_sitemap_entry", reason))
    if parsed.skipped_total > len(parsed.skipped):
        more = parsed.skipped_total - len(parsed.skipped)
        out.skips.append((item.url, "bad_sitemap_entry", f"{more} more entries skipped"))
    role = item.ctx.get("role", item.task)
    level = int(item.ctx.get("level", 0))
    if parsed.children:
        limit = 0 if level > 0 else children  # an index inside an index is not walked further
        # SPRING-03: at most two child sitemaps per source and round, however many indexes.
        cap = Cap(f"children#{item.source_id}#{item.round_id}", limit, now + 86400, f"at most {limit} child sitemaps")
        for seq, child in enumerate(parsed.children):
            nxt = item.follow(canon(inp, child), "sitemap", seq=seq, ctx={"role": role, "level": level + 1})
            out.candidates.append(Candidate(nxt, caps=(cap,), with_record=True))
    entries = list(parsed.urls)
    own = source_after and level == 0 and all(e.loc != item.source_url for e in entries)
    if own:
        # A source URL that is itself about programme or tickets is read too, after the
        # sitemap, when the sitemap does not list it (a home page is only the site's address).
        entries.append(sitemaps.SitemapEntry(loc=item.source_url, lastmod=None))
    for seq, entry in enumerate(entries):
        decision = rule(canon(inp, entry.loc), entry, inp, seq)
        if isinstance(decision, Candidate):
            out.candidates.append(decision)
        elif decision is not None and not (own and seq == len(entries) - 1):
            out.skips.append((entry.loc, *decision))
    return out


OFF_SITE = ("off_site", "sitemap entry on another host")


def title_rule(loc: str, entry: sitemaps.SitemapEntry, inp: TaskInput, seq: int) -> Candidate | tuple[str, str]:
    """A page on the sitemap's host whose title is fetched (the sitemap kind's rule)."""
    if not same_authority(loc, inp.item.url):
        return OFF_SITE
    ctx = {"title_only": True, "lastmod": entry.lastmod}
    return Candidate(inp.item.follow(loc, "page", seq=seq, ctx=ctx))


def fallback_rule(loc: str, entry: sitemaps.SitemapEntry, inp: TaskInput, seq: int) -> Candidate | None:
    """SPRING-03: a listing page's fallback takes the pages under the source's path only (the rest
    not worth a record each), at most ``max_new_pages`` of them, no title fetched twice a week."""
    item = inp.item
    if not under_path(loc, item.source_url):
        return None
    fb = fallback(inp.profile)
    limit = fb.max_new_pages
    cap = Cap(f"fallback#{item.source_id}#{item.round_id}", limit, inp.now + 86400,
              f"at most {limit} new pages per source (SPRING-03)")
    return Candidate(item.follow(loc, "page", seq=seq, ctx={"title_only": True, "lastmod": entry.lastmod}),
                     title_week_s=fb.title_refetch_after_s, caps=(cap,))


def read_title(inp: TaskInput) -> TaskOutput:
    """A page whose title alone is read (SPRING-04: fetched, whether kept or not)."""
    item, out = inp.item, TaskOutput()
    if directives(inp, out) is None:
        return out
    out.url_fields["title_fetched_at"] = inp.now
    if usage_refused(inp, out):
        return out
    title = pages.extract_title(inp.result.body, content_type=content_type(inp.result))
    if title:
        rid = short_hash(inp.profile.name, "title", item.source_id, item.url)
        out.url_fields["emitted"] = (rid,)
        if rid not in seen_before(item):
            emit(inp, out, "item.found", rid, {"kind": "page_item", "url": item.url, "title": title,
                                               "published": item.ctx.get("lastmod")})
    else:
        out.skips.append((item.url, "no_title", "the page has no title"))
    return out


def title_refusal(profile: Profile, item: WorkItem, recent: list[Any] | None, now: float) -> tuple[str, str] | None:
    """SPRING-04: a title is not fetched again within ``title_refetch_after_s`` (a retry is)."""
    if not item.ctx.get("title_only") or item.attempts:
        return None
    week = fallback(profile).title_refetch_after_s
    last = max(float(recent[0]) if recent_read(recent) and recent else 0.0,
               (item.seen.title_fetched_at or 0.0) if item.seen else 0.0)
    if last and now - last < week:
        return "seen_recently", "title fetched within a week (SPRING-04)"
    return None

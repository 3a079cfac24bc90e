"""What each kind of page is for: turn one good response into results, follow-ups and skips."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from heed_core.extract import events as ev
from heed_core.extract import feeds, pages, paywall, signals, site_check, sitemaps, subsidy, tdmrep
from heed_core.ports import FetchResult
from heed_core.profile import Profile
from heed_core.store import Results, Store
from heed_core.urls import absolute, authority, origin, path_of, same_authority, short_hash, under_path
from heed_core.work import WorkItem

Skip = tuple[str, str, str]  # url, reason code, detail


@dataclass
class TaskContext:
    profile: Profile
    store: Store
    results: Results
    now: float
    extractor: Any = None


@dataclass
class TaskOutput:
    skips: list[Skip] = field(default_factory=list)
    followups: list[WorkItem] = field(default_factory=list)
    url_fields: dict[str, Any] = field(default_factory=dict)
    source_fields: dict[str, Any] = field(default_factory=dict)


def _emit(ctx: TaskContext, detail_type: str, result_id: str, record: dict[str, Any]) -> bool:
    """Exactly-once effects: a result id is written (and its event sent) only once."""
    record = {"bot": ctx.profile.name, **record}
    if not ctx.store.put_result_once(result_id, record, expires_at=ctx.now + 400 * 86400):
        return False
    ctx.results.emit(detail_type, record)
    return True


def _directives(item: WorkItem, result: FetchResult, ctx: TaskContext, out: TaskOutput) -> signals.Directives | None:
    """SUBSIDIE-09: a noindex page is not stored (None, with the skip recorded); nofollow is the
    caller's to honour."""
    directives = signals.robots_directives(result.headers, result.body, ctx.profile.robots_token)
    if directives.noindex:
        out.skips.append((item.url, "noindex", ", ".join(directives.sources)))
        return None
    return directives


def _ctype(result: FetchResult) -> str | None:
    return result.header("Content-Type")


# --- feeds (AUBE-01..03, AUBE-10, PRAHA-01/02) --------------------------------------------------
def _feed(item: WorkItem, result: FetchResult, ctx: TaskContext) -> TaskOutput:
    task = ctx.profile.task("feed")
    out = TaskOutput(source_fields={"last_read": ctx.now})
    parsed = feeds.parse_feed(result.body, base_url=item.url, content_type=_ctype(result),
                              max_items=int(task.get("max_items", 40)))
    if parsed.error:
        out.skips.append((item.url, "bad_feed", parsed.error))
        return out
    if parsed.total_items > len(parsed.items):
        out.skips.append((item.url, "cap_reached", f"{parsed.total_items - len(parsed.items)} items beyond max_items={task.get('max_items')}"))
    follow = task.get("article_followup") or {}
    source = ctx.store.get_source(item.source_id)
    write_about = bool(source and source.options.get("write_about"))
    for it in parsed.items:
        if not it.link:
            continue
        record: dict[str, Any] = {"kind": "feed_item", "source": item.source_id, "url": it.link,
                                  "title": it.title, "published": it.published}
        if task.get("keep_summary") and it.summary:
            record["summary"] = it.summary[: int(task.get("summary_max_chars", 500))]
        _emit(ctx, "item.found", short_hash(ctx.profile.name, "item", item.source_id, it.guid or it.link), record)
        wanted = (follow.get("mode") == "short_summary" and it.summary_length < int(follow.get("summary_shorter_than", 0))) \
            or (follow.get("mode") == "selected" and write_about)
        if not wanted:
            continue
        skip = _article_refusal(it.link, item, follow, ctx)
        if skip:
            out.skips.append((it.link, *skip))
        else:
            out.followups.append(item.follow(it.link, "article", ctx={"title": it.title}))
    return out


def _article_refusal(url: str, item: WorkItem, follow: dict[str, Any], ctx: TaskContext) -> tuple[str, str] | None:
    seen = ctx.store.get_url(url)
    if follow.get("once_ever") and seen is not None and seen.last_fetched is not None:
        return ("already_read", "an article page is read only once (AUBE-03, PRAHA-05)")
    window = float(follow.get("window_s", 0) or 0)
    if window > 0:
        # AUBE-10: per source per quarter hour, and in total over all sources.
        slot = int(ctx.now // window)
        end = (slot + 1) * window
        if not ctx.store.take_quota(f"art#{item.source_id}#{slot}", int(follow["per_source_per_window"]), end):
            return ("cap_reached", f"{follow['per_source_per_window']} articles per source per {int(window)} s")
        if not ctx.store.take_quota(f"art#*#{slot}", int(follow["total_per_window"]), end):
            return ("cap_reached", f"{follow['total_per_window']} articles in total per {int(window)} s")
    return None


def _article(item: WorkItem, result: FetchResult, ctx: TaskContext) -> TaskOutput:
    out = TaskOutput()
    directives = _directives(item, result, ctx, out)
    if directives is None:
        return out
    pay = paywall.is_paywalled(result.body)
    if pay.paywalled:
        # AUBE-06 / COMMON-07: never extracted, even when the page carries its text.
        out.skips.append((item.url, "paywalled", pay.marker or ""))
        return out
    follow = ctx.profile.task("feed").get("article_followup") or {}
    if follow.get("respect_tdmrep"):
        cached = ctx.store.get_cached("tdmrep", authority(item.url), ctx.now) or {}
        rules = tdmrep.parse_tdmrep_json(cached.get("body", "").encode("utf-8")) if cached.get("body") else None
        decision = tdmrep.reservation(rules, path_of(item.url), result.headers, result.body)
        if decision.reserved:
            out.skips.append((item.url, "tdm_reserved", f"tdm-reservation via {decision.source}"))  # PRAHA-03
            return out
    text = subsidy.main_text(result.body)
    record: dict[str, Any] = {"kind": "article", "source": item.source_id, "url": item.url,
                              "title": pages.extract_title(result.body) or item.ctx.get("title"),
                              "chars": len(text)}
    if follow.get("keep_text", True):
        record["text_key"] = article_key(item.url)
        ctx.results.store_text(record["text_key"], text)
    _emit(ctx, "article.read", short_hash(ctx.profile.name, "article", item.url), record)
    return out


# --- listing pages and the sitemap fallback (SPRING-01..04) -----------------------------------
def _page(item: WorkItem, result: FetchResult, ctx: TaskContext) -> TaskOutput:
    out = TaskOutput()
    directives = _directives(item, result, ctx, out)
    if directives is None:
        return out
    if item.ctx.get("title_only"):
        title = pages.extract_title(result.body, content_type=_ctype(result))
        out.url_fields["title_fetched_at"] = ctx.now
        if title:
            _emit(ctx, "item.found", short_hash(ctx.profile.name, "title", item.source_id, item.url),
                  {"kind": "page_item", "source": item.source_id, "url": item.url, "title": title,
                   "published": item.ctx.get("lastmod")})
        else:
            out.skips.append((item.url, "no_title", "the page has no title"))
        return out
    listing = pages.extract_listing(result.body, base_url=item.url, content_type=_ctype(result))
    if listing.error:
        out.skips.append((item.url, "bad_page", listing.error))
        return out
    for it in listing.items:
        # SPRING-01: title, link and publication time only; ListingItem has nothing else.
        _emit(ctx, "item.found", short_hash(ctx.profile.name, "item", item.source_id, it.link),
              {"kind": "page_item", "source": item.source_id, "url": it.link, "title": it.title,
               "published": it.published})
    fallback = ctx.profile.task("sitemap_fallback")
    if not listing.items and fallback.get("enabled") and not directives.nofollow:
        # SPRING-03: a page built by JavaScript yields nothing: read the site's sitemap instead.
        # SPRING-03 promises "the site's sitemap.xml": that one file (robots.txt Sitemap: lines
        # are not read on top of it, so the site never sees more than 1 + 2 sitemap requests).
        url = origin(authority(item.url)) + "/sitemap.xml"
        out.followups.append(item.follow(url, "sitemap", ctx={"role": "fallback", "level": 0}))
        out.skips.append((item.url, "no_items", "page built by JavaScript: sitemap fallback (SPRING-03)"))
    return out


def sitemap_key(url: str) -> str:
    return f"sitemaps/{short_hash(url, n=24)}.bin"


def article_key(url: str) -> str:
    return f"articles/{short_hash(url, n=24)}.txt"


def subsidy_key(url: str) -> str:
    return f"subsidy/{short_hash(url, n=24)}.txt"


def stored_keys(url: str) -> list[str]:
    """Every bucket key a URL's texts may be kept under (COMMON-08: delete on request)."""
    return [article_key(url), subsidy_key(url), sitemap_key(url)]


def _sitemap(item: WorkItem, result: FetchResult, ctx: TaskContext) -> TaskOutput:
    out = TaskOutput()
    if result.status == 304:
        # SUBSIDIE-04 / WANNADO-07: an unchanged sitemap costs the site a 304, but the pages it
        # lists are still due: read the copy kept from its last 200.
        kept = ctx.results.load_text(sitemap_key(item.url))
        if kept is None:
            out.skips.append((item.url, "not_modified", "304 and no kept copy of the sitemap"))
            return out
        body = kept.encode("latin-1")
    else:
        body = result.body
        if ctx.profile.get("conditional_requests"):
            ctx.results.store_text(sitemap_key(item.url), body.decode("latin-1"))  # bytes, losslessly
    parsed = sitemaps.parse_sitemap(body, url=item.url, max_bytes=ctx.profile.max_bytes("sitemap"))
    if parsed.error:
        out.skips.append((item.url, "bad_sitemap", parsed.error))
        return out
    role = item.ctx.get("role", item.task)
    level = int(item.ctx.get("level", 0))
    if parsed.children:
        limit = int(ctx.profile.task("sitemap_fallback").get("max_child_sitemaps", 2)) if role == "fallback" else 5
        if level > 0:
            limit = 0  # an index inside an index is not walked further
        for child in parsed.children:
            # SPRING-03: at most two child sitemaps per source and round, however many indexes.
            if ctx.store.take_quota(f"children#{item.source_id}#{item.round_id}", limit, ctx.now + 86400):
                out.followups.append(item.follow(child, "sitemap", ctx={"role": role, "level": level + 1}))
            else:
                out.skips.append((child, "cap_reached", f"at most {limit} child sitemaps"))
    for entry in parsed.urls:
        decision = _sitemap_entry(role, entry, item, ctx)
        if isinstance(decision, WorkItem):
            out.followups.append(decision)
        elif decision is not None:
            out.skips.append((entry.loc, *decision))
    return out


def _sitemap_entry(role: str, entry: sitemaps.SitemapEntry, item: WorkItem, ctx: TaskContext) -> WorkItem | tuple[str, str] | None:
    loc = entry.loc
    if role == "fallback":
        if not under_path(loc, item.source_url):
            return None  # SPRING-03: only pages under the source's path (not worth a record each)
        seen = ctx.store.get_url(loc)
        week = float(ctx.profile.task("sitemap_fallback").get("title_refetch_after_s", 604800))
        if seen is not None and seen.title_fetched_at and ctx.now - seen.title_fetched_at < week:
            return ("seen_recently", "title fetched within a week (SPRING-04)")
        limit = int(ctx.profile.task("sitemap_fallback").get("max_new_pages", 5))
        if not ctx.store.take_quota(f"fallback#{item.source_id}#{item.round_id}", limit, ctx.now + 86400):
            return ("cap_reached", f"at most {limit} new pages per source (SPRING-03)")
        return item.follow(loc, "page", ctx={"title_only": True, "lastmod": entry.lastmod})
    if not same_authority(loc, item.url):
        return ("off_site", "sitemap entry on another host")
    path = path_of(loc).lower()
    if role == "agenda":
        pats = [p.lower() for p in ctx.profile.task("agenda").get("follow_patterns", [])]
        if not any(p in path for p in pats):
            return ("not_followed", "not about programme or tickets (WANNADO-06)")
        limit = int(ctx.profile.task("agenda").get("max_pages_per_site_per_round", 20))
        if not ctx.store.take_quota(f"agenda#{authority(loc)}#{item.round_id}", limit, ctx.now + 86400):
            return ("cap_reached", f"at most {limit} agenda pages per site per round")
        render = bool((ctx.store.get_source(item.source_id) or _NoSource).options.get("render"))
        return item.follow(loc, "agenda", ctx={"render": render} if render else {})
    if role == "subsidy":
        pats = [p.lower() for p in ctx.profile.task("subsidy").get("topic_patterns", [])]
        if not any(re.search(rf"(^|[/_.-]){re.escape(p)}", path) for p in pats) or "?" in path:
            return ("off_topic", "not about subsidies (SUBSIDIE-05)")
        limit = int(ctx.profile.task("subsidy").get("max_pages_per_host_per_round", 5))
        if not ctx.store.take_quota(f"subsidy#{authority(loc)}#{item.round_id}", limit, ctx.now + 86400):
            return ("cap_reached", f"at most {limit} pages per municipality per round (SUBSIDIE-02)")
        return item.follow(loc, "subsidy")
    return item.follow(loc, "page", ctx={"title_only": True, "lastmod": entry.lastmod})


class _NoSource:
    options: dict[str, Any] = {}


# --- agenda pages (WANNADO-06, -09, -10) -----------------------------------------------------------
def _agenda(item: WorkItem, result: FetchResult, ctx: TaskContext) -> TaskOutput:
    out = TaskOutput()
    directives = _directives(item, result, ctx, out)
    if directives is None:
        return out
    found = ev.extract_events(result.body, base_url=item.url)
    events = list(found.events)
    if not events and ctx.extractor is not None:
        events = list(ctx.extractor.extract(subsidy.main_text(result.body), url=item.url))
    if not events:
        out.skips.append((item.url, "no_events", found.error or "no schema.org Event on the page"))
    for e in events:
        record = {"kind": "event", "source": item.source_id, "url": e.url or item.url, "page": item.url,
                  "name": e.name, "start": e.start, "end": e.end, "location": e.location,
                  "price": e.price, "description": e.description, "image": e.image,
                  "format": e.source_format}
        # One event, one result: an overview page and the event's own page name the same event.
        _emit(ctx, "event.found", short_hash(ctx.profile.name, "event", e.url or item.url, e.name or "", e.start or ""), record)
    return out


# --- subsidy pages (SUBSIDIE-04, -09, -12) -----------------------------------------------------------
def _subsidy(item: WorkItem, result: FetchResult, ctx: TaskContext) -> TaskOutput:
    out = TaskOutput()
    directives = _directives(item, result, ctx, out)
    if directives is None:
        return out
    if directives.nofollow:
        # SUBSIDIE-09, the stricter reading: "noindex and nofollow ... the page is not stored and
        # its links are not followed" holds for either directive.
        out.skips.append((item.url, "nofollow", ", ".join(directives.sources)))
        return out
    pay = paywall.is_paywalled(result.body)
    if pay.paywalled:
        out.skips.append((item.url, "paywalled", pay.marker or ""))  # SUBSIDIE-05: nothing behind a paywall
        return out
    text = subsidy.normalise(subsidy.main_text(result.body))
    digest = subsidy.content_hash(text)
    seen = ctx.store.get_url(item.url)
    if seen is not None and seen.content_hash == digest:
        out.skips.append((item.url, "unchanged", "same text as the previous version (SUBSIDIE-04)"))
        return out
    key = subsidy_key(item.url)
    previous = ctx.results.load_text(key) if seen is not None and seen.content_hash else None
    version = ctx.results.store_text(key, text)
    limit = int(ctx.profile.task("subsidy").get("diff_summary_max_chars", 300))
    summary = subsidy.diff_summary(previous, text, max_chars=limit) if previous else "new page"
    _emit(ctx, "page.changed", short_hash(ctx.profile.name, "change", item.url, digest),
          {"kind": "page_change", "source": item.source_id, "url": item.url,
           "title": pages.extract_title(result.body), "summary": summary, "hash": digest,
           "previous_hash": seen.content_hash if seen else None, "version": version})
    out.url_fields["content_hash"] = digest
    return out


# --- site checks (PRAHA-04) -----------------------------------------------------------------------
def _homepage(item: WorkItem, result: FetchResult, ctx: TaskContext) -> TaskOutput:
    info = site_check.site_info(result.body, base_url=item.url, content_type=_ctype(result))
    # PRAHA-04: nothing of the home page is kept but its name and where it led.
    return TaskOutput(followups=[item.follow(info.icon_url, "icon", ctx={
        "start_url": item.ctx.get("first_url", item.url), "final_url": item.url,
        "status": result.status, "name": info.name})])


def _icon(item: WorkItem, result: FetchResult | None, ctx: TaskContext, icon_status: Any) -> TaskOutput:
    c = item.ctx
    _emit(ctx, "site.checked", short_hash(ctx.profile.name, "check", item.source_id, item.round_id),
          {"kind": "site_check", "source": item.source_id, "url": c.get("start_url", item.source_url),
           "reachable": True, "final_url": c.get("final_url"), "status": c.get("status"),
           "name": c.get("name"), "icon_url": item.url, "icon_status": icon_status})
    return TaskOutput(source_fields={"last_read": ctx.now})


_HANDLERS = {"feed": _feed, "article": _article, "page": _page, "sitemap": _sitemap,
             "agenda": _agenda, "subsidy": _subsidy, "homepage": _homepage}


def handle_success(item: WorkItem, result: FetchResult, ctx: TaskContext) -> TaskOutput:
    if item.purpose == "icon":
        return _icon(item, result, ctx, result.status)
    handler = _HANDLERS.get(item.purpose)
    if handler is None:
        return TaskOutput(skips=[(item.url, "unknown_purpose", item.purpose)])
    return handler(item, result, ctx)


def handle_failure(item: WorkItem, result: FetchResult | None, ctx: TaskContext, code: str, detail: str) -> TaskOutput:
    """A response that gives up on the item: record it; a site check still reports (PRAHA-04)."""
    out = TaskOutput(skips=[(item.url, code, detail)])
    if item.task == "site_check" and item.purpose == "homepage":
        status = result.status if result is not None else None
        _emit(ctx, "site.checked", short_hash(ctx.profile.name, "check", item.source_id, item.round_id),
              {"kind": "site_check", "source": item.source_id, "url": item.ctx.get("first_url", item.url),
               "reachable": False, "final_url": item.url, "status": status,
               "error": (result.error if result is not None else None) or code, "name": None})
        out.source_fields["last_read"] = ctx.now
    elif item.purpose == "icon":
        out = _icon(item, result, ctx, (result.status or result.error) if result is not None else code)
        out.skips.append((item.url, code, detail))
    return out

"""What each kind of page is for: one good response in, results, follow-up candidates and skips out.

Pure: no store, no clock, no network. What a task needs from outside is handed in
(``TaskInput``: kept texts, the host's tdmrep.json, an extractor's answer), and what it would
need but was not given it asks for (``needs_texts``, ``needs_extract``): the executor loads it
and calls again. Follow-ups come out as candidates with the checks that decide them
(read once ever, title seen this week, caps), which ``admit`` applies."""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from heed_core import usage
from heed_core.desk.proof import proof_digest
from heed_core.envelope import found_at
from heed_core.extract import events as ev
from heed_core.extract import feeds, pages, paywall, signals, site_check, sitemaps, subsidy, tdmrep
from heed_core.extract.events import Event
from heed_core.ports import FetchResult
from heed_core.profile import ArticleFollowup, Profile
from heed_core.robots import RobotsTxt
from heed_core.urls import (
    BAD_URL,
    BadUrl,
    authority,
    canonical,
    origin,
    path_of,
    same_authority,
    short_hash,
    under_path,
)
from heed_core.work import WorkItem

Skip = tuple[str, str, str]  # url, reason code, detail
Event_ = tuple[str, str, dict[str, Any]]  # detail type, result id, record

_DEFAULT_TIMEZONE = "Europe/Amsterdam"  # WannadoBot's venues (tasks.agenda.timezone overrides)


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


def text_version(key: str) -> str:
    """A placeholder in an event record for the version id the bucket gives ``key``'s text."""
    return f"\x00version:{key}"


def _emit(inp: TaskInput, out: TaskOutput, detail_type: str, result_id: str, record: dict[str, Any]) -> None:
    item = inp.item
    record = {"bot": inp.profile.name, "id": result_id, "source": item.source_id,
              "source_url": item.source_url, "found_at": found_at(inp.now), **record}
    out.events.append((detail_type, result_id, record))


def _directives(inp: TaskInput, out: TaskOutput) -> signals.Directives | None:
    """SUBSIDIE-09: a noindex page is not stored (None, with the skip recorded); nofollow is the
    caller's to honour."""
    directives = signals.robots_directives(inp.result.headers, inp.result.body, inp.profile.robots_token)
    if directives.noindex:
        out.skips.append((inp.item.url, "noindex", ", ".join(directives.sources)))
        return None
    return directives


def _usage_refused(inp: TaskInput, out: TaskOutput) -> bool:
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


def _canon(inp: TaskInput, url: str) -> str:
    """A link as it is requested, judged by robots.txt, deduplicated, recorded and named in
    results: its canonical form (heed_core.urls), less the profile's tracking parameters."""
    try:
        return canonical(url, inp.profile.strip_params)
    except BadUrl:
        return url  # the extractors hand over http(s) links only; never a reason to fail a page


def _bad_links(out: TaskOutput, links: tuple[str, ...] | list[str]) -> None:
    for text in links:
        out.skips.append((text, BAD_URL, "the link is not a URL (the URL Standard cannot parse it)"))


def _ctype(result: FetchResult) -> str | None:
    return result.header("Content-Type")


def _opts(item: WorkItem) -> Mapping[str, Any]:
    return item.ctx.get("opts") or {}


def _seen_before(item: WorkItem) -> set[str]:
    return set(item.seen.emitted) if item.seen is not None else set()


# --- feeds (AUBE-01..03, AUBE-10, PRAHA-01/02) --------------------------------------------------
def _feed(inp: TaskInput) -> TaskOutput:
    item, task, now = inp.item, inp.profile.feed, inp.now
    # AUBE-08 counts from the start of the read (the request), not from when it was settled; the
    # items reported before stay remembered whatever this read keeps (the read-state is written whole).
    before = list(dict.fromkeys(list(inp.host_seen) + list(item.ctx.get("si") or ())))
    out = TaskOutput(source_fields={"last_read": inp.result.t_start or now, "seen_items": before})
    if _usage_refused(inp, out):
        return out
    max_items = task.max_items
    parsed = feeds.parse_feed(inp.result.body, base_url=item.url, content_type=_ctype(inp.result),
                              max_items=max_items)
    out.detail = parsed.detail
    if parsed.error:
        out.skips.append((item.url, "bad_feed", parsed.error))
        return out
    if parsed.total_items > len(parsed.items):
        beyond = parsed.total_items - len(parsed.items)
        out.skips.append((item.url, "cap_reached", f"{beyond} items beyond max_items={max_items}"))
    follow = task.article_followup
    write_about = bool(_opts(item).get("write_about"))
    known = set(before)  # the feed items this source already reported (its host's memory and the round's)
    ids: list[str] = []
    for seq, it in enumerate(parsed.items):
        if not it.link:
            if it.bad_link:
                _bad_links(out, [it.bad_link])
            continue
        link = _canon(inp, it.link)
        rid = short_hash(inp.profile.name, "item", item.source_id, it.guid or link)
        ids.append(rid)
        if rid not in known:  # a feed read again reports only its new items
            record: dict[str, Any] = {"kind": "feed_item", "url": link, "title": it.title,
                                      "published": it.published}
            if task.keep_summary and it.summary:
                record["summary"] = it.summary[: task.summary_max_chars]
            _emit(inp, out, "item.found", rid, record)
        if follow is None:
            continue  # no article is ever opened (the feed's items are all there is)
        short = it.summary_length < follow.summary_shorter_than
        wanted = (follow.mode == "short_summary" and short) or (follow.mode == "selected" and write_about)
        if wanted:
            out.candidates.append(_article_candidate(item.follow(link, "article", seq=seq, ctx={"title": it.title}),
                                                     follow, now))
    # The memory of reported items: this read's first, then older ones, bounded.
    out.source_fields["seen_items"] = list(dict.fromkeys(ids + before))[: 2 * max_items]
    return out


def _article_candidate(follow_item: WorkItem, follow: ArticleFollowup, now: float) -> Candidate:
    caps: list[Cap] = []
    window = follow.window_s
    if window > 0:
        # AUBE-10: per source per quarter hour, and in total over all sources (either may be off).
        slot = int(now // window)
        end = (slot + 1) * window
        if follow.per_source_per_window is not None:
            caps.append(Cap(f"art#{follow_item.source_id}#{slot}", follow.per_source_per_window, end,
                            f"{follow.per_source_per_window} articles per source per {int(window)} s"))
        if follow.total_per_window is not None:
            caps.append(Cap(f"art#*#{slot}", follow.total_per_window, end,
                            f"{follow.total_per_window} articles in total per {int(window)} s", scope="global"))
    return Candidate(follow_item, once_ever=follow.once_ever, caps=tuple(caps))


def _article(inp: TaskInput) -> TaskOutput:
    item, out = inp.item, TaskOutput()
    directives = _directives(inp, out)
    if directives is None:
        return out
    pay = paywall.is_paywalled(inp.result.body)
    if pay.paywalled:
        # AUBE-06 / COMMON-07: never extracted, even when the page carries its text.
        out.skips.append((item.url, "paywalled", pay.marker or ""))
        return out
    follow = inp.profile.feed.article_followup
    if follow is not None and follow.respect_tdmrep:
        rules = tdmrep.parse_tdmrep_json(inp.tdmrep_body) if inp.tdmrep_body else None
        decision = tdmrep.reservation(rules, path_of(item.url), inp.result.headers, inp.result.body)
        if decision.reserved:
            out.skips.append((item.url, "tdm_reserved", f"tdm-reservation via {decision.source}"))  # PRAHA-03
            return out
    if _usage_refused(inp, out):
        return out
    text = subsidy.main_text(inp.result.body)
    record: dict[str, Any] = {"kind": "article", "url": item.url,
                              "title": pages.extract_title(inp.result.body) or item.ctx.get("title"),
                              "chars": len(text)}
    if follow is None or follow.keep_text:
        record["text_key"] = article_key(item.url)
        out.texts_out.append((record["text_key"], text))
    _emit(inp, out, "article.read", short_hash(inp.profile.name, "article", item.url), record)
    return out


# --- listing pages and the sitemap fallback (SPRING-01..04) -----------------------------------
def _page(inp: TaskInput) -> TaskOutput:
    item, out = inp.item, TaskOutput()
    directives = _directives(inp, out)
    if directives is None:
        return out
    before = _seen_before(item)
    if item.ctx.get("title_only"):
        out.url_fields["title_fetched_at"] = inp.now  # SPRING-04: fetched, whether kept or not
        if _usage_refused(inp, out):
            return out
        title = pages.extract_title(inp.result.body, content_type=_ctype(inp.result))
        if title:
            rid = short_hash(inp.profile.name, "title", item.source_id, item.url)
            out.url_fields["emitted"] = (rid,)
            if rid not in before:
                _emit(inp, out, "item.found", rid, {"kind": "page_item", "url": item.url, "title": title,
                                                    "published": item.ctx.get("lastmod")})
        else:
            out.skips.append((item.url, "no_title", "the page has no title"))
        return out
    if _usage_refused(inp, out):
        return out  # and no sitemap fallback: its titles would be kept for the same use
    listing = pages.extract_listing(inp.result.body, base_url=item.url, content_type=_ctype(inp.result))
    if listing.error:
        out.skips.append((item.url, "bad_page", listing.error))
        return out
    _bad_links(out, listing.bad_links)
    ids: list[str] = []
    for it in listing.items:
        # SPRING-01: title, link and publication time only; ListingItem has nothing else.
        link = _canon(inp, it.link)
        rid = short_hash(inp.profile.name, "item", item.source_id, link)
        ids.append(rid)
        if rid not in before:
            _emit(inp, out, "item.found", rid, {"kind": "page_item", "url": link, "title": it.title,
                                                "published": it.published})
    out.url_fields["emitted"] = tuple(dict.fromkeys(ids))
    fallback = inp.profile.sitemap_fallback
    if not listing.items and fallback.enabled and not directives.nofollow:
        # SPRING-03: a page built by JavaScript yields nothing: read the site's sitemap instead.
        # SPRING-03 promises "the site's sitemap.xml": that one file (robots.txt Sitemap: lines
        # are not read on top of it, so the site never sees more than 1 + 2 sitemap requests).
        url = origin(authority(item.url)) + "/sitemap.xml"
        out.candidates.append(Candidate(item.follow(url, "sitemap", ctx={"role": "fallback", "level": 0}),
                                        with_record=True))
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


def _sitemap(inp: TaskInput) -> TaskOutput:
    item, out, now, profile = inp.item, TaskOutput(), inp.now, inp.profile
    key = sitemap_key(item.url)
    if inp.result.status == 304:
        # SUBSIDIE-04 / WANNADO-07: an unchanged sitemap costs the site a 304, but the pages it
        # lists are still due: read the copy kept from its last 200.
        if key not in inp.texts:
            out.needs_texts.append(key)
            return out
        kept = inp.texts[key]
        if kept is None:
            out.skips.append((item.url, "not_modified", "304 and no kept copy of the sitemap"))
            return out
        body = kept.encode("latin-1")
    else:
        body = inp.result.body
        if profile.conditional_requests:
            out.texts_out.append((key, body.decode("latin-1")))  # bytes, losslessly
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
    day = now + 86400
    if parsed.children:
        limit = profile.sitemap_fallback.max_child_sitemaps if role == "fallback" else 5
        if level > 0:
            limit = 0  # an index inside an index is not walked further
        # SPRING-03: at most two child sitemaps per source and round, however many indexes.
        cap = Cap(f"children#{item.source_id}#{item.round_id}", limit, day, f"at most {limit} child sitemaps")
        for seq, child in enumerate(parsed.children):
            nxt = item.follow(_canon(inp, child), "sitemap", seq=seq, ctx={"role": role, "level": level + 1})
            out.candidates.append(Candidate(nxt, caps=(cap,), with_record=True))
    entries = list(parsed.urls)
    own = role == "agenda" and level == 0 and all(e.loc != item.source_url for e in entries)
    if own:
        # A source URL that is itself about programme or tickets is read too, after the
        # sitemap, when the sitemap does not list it (a home page is only the site's address).
        entries.append(sitemaps.SitemapEntry(loc=item.source_url, lastmod=None))
    for seq, entry in enumerate(entries):
        decision = _sitemap_entry(role, entry, item, inp, seq)
        if isinstance(decision, Candidate):
            out.candidates.append(decision)
        elif decision is not None and not (own and seq == len(entries) - 1):
            out.skips.append((entry.loc, *decision))
    return out


def _sitemap_entry(role: str, entry: sitemaps.SitemapEntry, item: WorkItem, inp: TaskInput,
                   seq: int) -> Candidate | tuple[str, str] | None:
    loc, profile, day = _canon(inp, entry.loc), inp.profile, inp.now + 86400
    if role == "fallback":
        if not under_path(loc, item.source_url):
            return None  # SPRING-03: only pages under the source's path (not worth a record each)
        fallback = profile.sitemap_fallback
        limit = fallback.max_new_pages
        return Candidate(item.follow(loc, "page", seq=seq, ctx={"title_only": True, "lastmod": entry.lastmod}),
                         title_week_s=fallback.title_refetch_after_s,
                         caps=(Cap(f"fallback#{item.source_id}#{item.round_id}", limit, day,
                                   f"at most {limit} new pages per source (SPRING-03)"),))
    if not same_authority(loc, item.url):
        return ("off_site", "sitemap entry on another host")
    path = path_of(loc).lower()
    if role == "agenda":
        pats = [p.lower() for p in profile.agenda.follow_patterns]
        if not any(p in path for p in pats):
            return ("not_followed", "not about programme or tickets (WANNADO-06)")
        limit = profile.agenda.max_pages_per_site_per_round
        render = bool(_opts(item).get("render"))
        return Candidate(item.follow(loc, "agenda", seq=seq, ctx={"render": True} if render else {}),
                         caps=(Cap(f"agenda#{authority(loc)}#{item.round_id}", limit, day,
                                   f"at most {limit} agenda pages per site per round"),), with_record=True)
    if role == "subsidy":
        pats = [p.lower() for p in profile.subsidy.topic_patterns]
        if not any(re.search(rf"(^|[/_.-]){re.escape(p)}", path) for p in pats) or "?" in path:
            return ("off_topic", "not about subsidies (SUBSIDIE-05)")
        if loc == item.source_url:
            return None  # the source page itself is read every round on its own (SUBSIDIE-01)
        limit = profile.subsidy.max_pages_per_host_per_round
        return Candidate(item.follow(loc, "subsidy", seq=seq),
                         caps=(Cap(f"subsidy#{authority(loc)}#{item.round_id}", limit, day,
                                   f"at most {limit} pages per municipality per round (SUBSIDIE-02)"),),
                         with_record=True)
    return Candidate(item.follow(loc, "page", seq=seq, ctx={"title_only": True, "lastmod": entry.lastmod}))


# --- agenda pages (WANNADO-06, -09, -10) -----------------------------------------------------------
def _agenda(inp: TaskInput) -> TaskOutput:
    item, out = inp.item, TaskOutput()
    directives = _directives(inp, out)
    if directives is None:
        return out
    if _usage_refused(inp, out):
        return out  # before the extractor too: handing the page to a language model is a use
    zone = inp.profile.agenda.timezone or _DEFAULT_TIMEZONE
    found = ev.extract_events(inp.result.body, base_url=item.url, timezone=zone)
    events = list(found.events)
    if not events and inp.profile.agenda.extractor == "bedrock":
        if inp.extracted is None:
            out.needs_extract = True
            return out
        events = list(inp.extracted)
    if not events:
        out.skips.append((item.url, "no_events", found.error or "no schema.org Event on the page"))
    before = _seen_before(item)
    ids: list[str] = []
    for e in events:
        # One event, one result: an overview page and the event's own page name the same event.
        url = _canon(inp, e.url) if e.url else item.url
        rid = short_hash(inp.profile.name, "event", url, e.name or "", e.start or "")
        ids.append(rid)
        if rid in before or rid in inp.host_results:
            continue
        _emit(inp, out, "event.found", rid, {
            "kind": "event", "url": url, "page": item.url, "name": e.name, "start": e.start,
            "end": e.end, "location": e.location, "online": e.online, "price": e.price,
            "description": e.description, "image": e.image, "format": e.source_format,
            # A cancelled or sold-out show must not look like a normal one.
            "status": e.status, "availability": e.availability, "previous_start": e.previous_start})
    out.url_fields["emitted"] = tuple(dict.fromkeys(ids))
    return out


# --- subsidy pages (SUBSIDIE-04, -09, -12) -----------------------------------------------------------
def _subsidy(inp: TaskInput) -> TaskOutput:
    item, out = inp.item, TaskOutput()
    directives = _directives(inp, out)
    if directives is None:
        return out
    if directives.nofollow:
        # SUBSIDIE-09, the stricter reading: "noindex and nofollow ... the page is not stored and
        # its links are not followed" holds for either directive.
        out.skips.append((item.url, "nofollow", ", ".join(directives.sources)))
        return out
    pay = paywall.is_paywalled(inp.result.body)
    if pay.paywalled:
        out.skips.append((item.url, "paywalled", pay.marker or ""))  # SUBSIDIE-05: nothing behind a paywall
        return out
    if _usage_refused(inp, out):
        return out  # neither the text, nor its hash, nor a summary
    text = subsidy.normalise(subsidy.main_text(inp.result.body))
    digest = subsidy.content_hash(text)
    seen = item.seen
    if seen is not None and seen.content_hash == digest:
        out.skips.append((item.url, "unchanged", "same text as the previous version (SUBSIDIE-04)"))
        return out
    key = subsidy_key(item.url)
    known = seen is not None and seen.content_hash is not None
    if known and key not in inp.texts:
        out.needs_texts.append(key)
        return out
    previous = inp.texts.get(key) if known else None
    out.texts_out.append((key, text))
    limit = inp.profile.subsidy.diff_summary_max_chars
    summary = subsidy.diff_summary(previous, text, max_chars=limit) if previous else "new page"
    # The seed: customers are warned when a regulation appears or changes.
    kind = "page.changed" if known else "page.new"
    _emit(inp, out, kind, short_hash(inp.profile.name, "change", item.url, digest),
          {"kind": "page_change" if known else "page_new", "url": item.url,
           "title": pages.extract_title(inp.result.body), "summary": summary, "hash": digest,
           "previous_hash": seen.content_hash if seen else None, "version": text_version(key)})
    out.url_fields["content_hash"] = digest
    return out


# --- site checks (PRAHA-04) -----------------------------------------------------------------------
def _homepage(inp: TaskInput) -> TaskOutput:
    item, out = inp.item, TaskOutput()
    ctx = {"start_url": item.ctx.get("first_url", item.url), "final_url": item.url, "status": inp.result.status}
    if _usage_refused(inp, out):
        # PRAHA-04 records whether the site answered and where it led, and that is kept; its name
        # is the page's content, and its icon would be followed from it: neither.
        out.source_fields["last_read"] = inp.now
        _site_checked(inp, out, {**ctx, "name": None}, None, None)
        return out
    info = site_check.site_info(inp.result.body, base_url=item.url, content_type=_ctype(inp.result))
    # PRAHA-04: nothing of the home page is kept but its name and where it led.
    out.candidates.append(Candidate(item.follow(_canon(inp, info.icon_url), "icon", ctx={**ctx, "name": info.name})))
    return out


def _site_checked(inp: TaskInput, out: TaskOutput, c: Mapping[str, Any], icon_url: str | None,
                  icon_status: Any) -> None:
    item = inp.item
    _emit(inp, out, "site.checked", short_hash(inp.profile.name, "check", item.source_id, item.round_id),
          {"kind": "site_check", "url": c.get("start_url", item.source_url), "reachable": True,
           "final_url": c.get("final_url"), "status": c.get("status"), "name": c.get("name"),
           "icon_url": icon_url, "icon_status": icon_status})


def _icon(inp: TaskInput, icon_status: Any) -> TaskOutput:
    out = TaskOutput(source_fields={"last_read": inp.now})
    _site_checked(inp, out, inp.item.ctx, inp.item.url, icon_status)
    return out


def may_bring(profile: Profile, item: WorkItem) -> int:
    """The most requests an item's answer can still add to its host's work this round, as the
    profile's caps bound them: a feed its articles (``feed.max_items``, or fewer under the
    follow-up's per-source cap), a listing page the sitemap fallback's, a sitemap its task's
    pages, a home page its icon; 0 for the rest. An upper bound for ordering work (a queue with
    more hosts due than it serves at once hands out first the hosts that may take longest),
    never a promise nor a cap."""
    purpose = item.purpose
    fallback = profile.sitemap_fallback
    if purpose == "feed":
        follow = profile.feed.article_followup
        if follow is None:
            return 0
        n = profile.feed.max_items
        if follow.window_s > 0 and follow.per_source_per_window is not None:
            n = min(n, follow.per_source_per_window)
        return n
    if purpose == "homepage":
        return 1
    if purpose == "page" and not item.ctx.get("title_only"):
        return 1 + fallback.max_child_sitemaps + fallback.max_new_pages if fallback.enabled else 0
    if purpose == "sitemap":
        role = item.ctx.get("role", item.task)
        if role == "fallback":
            return fallback.max_child_sitemaps + fallback.max_new_pages
        if role == "subsidy":
            return profile.subsidy.max_pages_per_host_per_round
        if role == "agenda":
            return profile.agenda.max_pages_per_site_per_round
    return 0


def _proof(inp: TaskInput) -> TaskOutput:
    """A site owner's proof file (the desk): nothing is kept but its digest, in the URL's record,
    which the desk compares with the token it gave (heed_core.desk.proof)."""
    return TaskOutput(url_fields={"content_hash": proof_digest(inp.result.body)})


_HANDLERS = {"feed": _feed, "article": _article, "page": _page, "sitemap": _sitemap,
             "agenda": _agenda, "subsidy": _subsidy, "homepage": _homepage, "proof": _proof}


def handle_success(inp: TaskInput) -> TaskOutput:
    """A response worth reading (2xx, or a 304 whose kept copy is still read)."""
    if inp.item.purpose == "icon":
        return _icon(inp, inp.result.status)
    handler = _HANDLERS.get(inp.item.purpose)
    if handler is None:
        return TaskOutput(skips=[(inp.item.url, "unknown_purpose", inp.item.purpose)])
    return handler(inp)


def handle_failure(inp: TaskInput, code: str, detail: str) -> TaskOutput:
    """A response (or none) that gives up on the item: record it; a site check still reports (PRAHA-04)."""
    item, result = inp.item, inp.result
    out = TaskOutput(skips=[(item.url, code, detail)])
    if item.task == "site_check" and item.purpose == "homepage":
        _emit(inp, out, "site.checked", short_hash(inp.profile.name, "check", item.source_id, item.round_id),
              {"kind": "site_check", "url": item.ctx.get("first_url", item.url), "reachable": False,
               "final_url": item.url, "status": result.status, "error": result.error or code, "name": None})
        out.source_fields["last_read"] = inp.now
    elif item.purpose == "icon":
        icon = _icon(inp, result.status or result.error or code)
        icon.skips.append((item.url, code, detail))
        return icon
    return out

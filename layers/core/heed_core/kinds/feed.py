"""The feed kind (AUBE-01..03, -08, -10, PRAHA-01..03): an RSS or Atom feed read at its cadence,
each new item a result, and where the profile says so the article page an item links to."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from heed_core.extract import feeds, pages, paywall, signals, subsidy, tdmrep
from heed_core.hoststate import recent_read, was_read
from heed_core.kinds.base import Entry, Kind, flag
from heed_core.kinds.handling import (
    Candidate,
    Cap,
    TaskInput,
    TaskOutput,
    bad_links,
    canon,
    content_type,
    directives,
    emit,
    options_of,
    usage_refused,
)
from heed_core.kinds.sayings import Count, Duration, Every, Say, Sayings, say
from heed_core.profile_schema import ProfileError, key
from heed_core.typed_profile import Profile
from heed_core.urls import path_of, short_hash
from heed_core.work import WorkItem

__all__ = ["KIND", "ArticleFollowup", "FeedTask", "article_key"]


@dataclass(frozen=True, kw_only=True)
class ArticleFollowup:
    mode: Literal["short_summary", "selected"] = key(
        doc="short_summary: when the feed summary is short; selected: sources marked write_about")
    summary_shorter_than: int = key(0, ge=0, doc="short_summary: a summary shorter than this many characters")
    once_ever: bool = key(False, doc="an article page is read once, never again")
    per_source_per_window: int | None = key(None, ge=0, doc="article pages per source per window")
    total_per_window: int | None = key(None, ge=0, doc="article pages over all sources per window")
    window_s: float = key(0, ge=0, doc="the window of both caps (0: no caps)")
    keep_text: bool = key(True, doc="keep the article text (false: read, not kept)")
    respect_tdmrep: bool = key(False, doc="a TDMRep reservation means the text is not kept")


@dataclass(frozen=True, kw_only=True)
class FeedTask:
    max_items: int = key(40, ge=1, doc="items read per feed read")
    min_read_interval_s: float = key(0, ge=0, doc="at most one read per source this often")
    keep_summary: bool = key(False, doc="keep each item's summary")
    summary_max_chars: int = key(500, ge=0, doc="characters of summary kept")
    article_followup: ArticleFollowup | None = key(None, doc="when the linked article page is opened (absent: never)")


def article_key(url: str) -> str:
    return f"articles/{short_hash(url, n=24)}.txt"


def _task(profile: Profile) -> FeedTask:
    return profile.section("feed", FeedTask)


# --- the feed -------------------------------------------------------------------------------------
def _feed(inp: TaskInput) -> TaskOutput:
    item, task, now = inp.item, _task(inp.profile), inp.now
    # AUBE-08 counts from the start of the read (the request), not from when it was settled; the
    # items reported before stay remembered whatever this read keeps (the read-state is written whole).
    before = list(dict.fromkeys(list(inp.host_seen) + list(item.ctx.get("si") or ())))
    out = TaskOutput(source_fields={"last_read": inp.result.t_start or now, "seen_items": before})
    if usage_refused(inp, out):
        return out
    max_items = task.max_items
    parsed = feeds.parse_feed(inp.result.body, base_url=item.url, content_type=content_type(inp.result),
                              max_items=max_items)
    out.detail = parsed.detail
    if parsed.error:
        out.skips.append((item.url, "bad_feed", parsed.error))
        return out
    if parsed.total_items > len(parsed.items):
        beyond = parsed.total_items - len(parsed.items)
        out.skips.append((item.url, "cap_reached", f"{beyond} items beyond max_items={max_items}"))
    follow = task.article_followup
    write_about = bool(options_of(item).get("write_about"))
    known = set(before)  # the feed items this source already reported (its host's memory and the round's)
    # The read's memory of reported items is the feed's, not its articles': an article that carried
    # it (up to MAX_SEEN_ITEMS ids) made each pending article of the host's frontier 4 KB.
    parent = replace(item, ctx={k: v for k, v in item.ctx.items() if k != "si"}) if "si" in item.ctx else item
    ids: list[str] = []
    for seq, it in enumerate(parsed.items):
        if not it.link:
            if it.bad_link:
                bad_links(out, [it.bad_link])
            continue
        link = canon(inp, it.link)
        rid = short_hash(inp.profile.name, "item", item.source_id, it.guid or link)
        ids.append(rid)
        if rid not in known:  # a feed read again reports only its new items
            record: dict[str, Any] = {"kind": "feed_item", "url": link, "title": it.title,
                                      "published": it.published}
            if task.keep_summary and it.summary:
                record["summary"] = it.summary[: task.summary_max_chars]
            emit(inp, out, "item.found", rid, record)
        if follow is None:
            continue  # no article is ever opened (the feed's items are all there is)
        short = it.summary_length < follow.summary_shorter_than
        wanted = (follow.mode == "short_summary" and short) or (follow.mode == "selected" and write_about)
        if wanted:
            out.candidates.append(_article_candidate(parent.follow(link, "article", seq=seq, ctx={"title": it.title}),
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


# --- the article page -----------------------------------------------------------------------------
def _article(inp: TaskInput) -> TaskOutput:
    item, out = inp.item, TaskOutput()
    page = signals.Page(inp.result.body)  # parsed once: read for its directives, paywall and TDM, then its text
    if directives(inp, out, page) is None:
        return out
    pay = paywall.is_paywalled(inp.result.body, page=page)
    if pay.paywalled:
        # AUBE-06 / COMMON-07: never extracted, even when the page carries its text.
        out.skips.append((item.url, "paywalled", pay.marker or ""))
        return out
    follow = _task(inp.profile).article_followup
    if follow is not None and follow.respect_tdmrep:
        rules = tdmrep.parse_tdmrep_json(inp.tdmrep_body) if inp.tdmrep_body else None
        decision = tdmrep.reservation(rules, path_of(item.url), inp.result.headers, inp.result.body, page=page)
        if decision.reserved:
            out.skips.append((item.url, "tdm_reserved", f"tdm-reservation via {decision.source}"))  # PRAHA-03
            return out
    if usage_refused(inp, out):
        return out
    text = subsidy.main_text(inp.result.body, page=page)
    record: dict[str, Any] = {"kind": "article", "url": item.url,
                              "title": pages.extract_title(inp.result.body) or item.ctx.get("title"),
                              "chars": len(text)}
    if follow is None or follow.keep_text:
        record["text_key"] = article_key(item.url)
        out.texts_out.append((record["text_key"], text))
    emit(inp, out, "article.read", short_hash(inp.profile.name, "article", item.url), record)
    return out


class Feed(Kind):
    name = "feed"
    section = FeedTask
    entry_purpose = "feed"
    handlers = {"feed": _feed, "article": _article}
    fields = {"write_about": flag("open each item's article once (mode: selected)")}
    spaced = frozenset({"article"})
    keeps_seen_items = True

    def check(self, options: Any) -> None:
        follow = options.article_followup
        if follow is None:
            return
        where = "tasks.feed.article_followup"
        if follow.window_s > 0:
            for cap in ("per_source_per_window", "total_per_window"):
                if getattr(follow, cap) is None:
                    raise ProfileError(f"{where}.{cap}: missing (window_s is set, so both caps are needed)")
        elif follow.per_source_per_window is not None or follow.total_per_window is not None:
            raise ProfileError(f"{where}.window_s: {follow.window_s:g} is not valid "
                               "(the per-window caps need a window > 0)")
        if follow.mode == "short_summary" and follow.summary_shorter_than <= 0:
            raise ProfileError(f"{where}.summary_shorter_than: missing (mode short_summary needs a length > 0)")

    def cadence_s(self, profile: Profile) -> float:
        return _task(profile).min_read_interval_s

    def entries(self, entry: Entry) -> list[WorkItem]:
        seen = entry.source.seen_items
        # The items this feed reported travel with its read: reported again, never.
        return [replace(entry.item, ctx={**entry.item.ctx, "si": list(seen)})] if seen else [entry.item]

    def may_bring(self, profile: Profile, item: WorkItem) -> int:
        """A feed its articles (``max_items``, or fewer under the follow-up's per-source cap)."""
        task = _task(profile)
        follow = task.article_followup
        if item.purpose != "feed" or follow is None:
            return 0
        n = task.max_items
        if follow.window_s > 0 and follow.per_source_per_window is not None:
            n = min(n, follow.per_source_per_window)
        return n

    def read_once(self, profile: Profile, item: WorkItem) -> bool:
        follow = _task(profile).article_followup
        return item.purpose == "article" and follow is not None and follow.once_ever

    def refusal(self, profile: Profile, item: WorkItem, recent: list[Any] | None, now: float) -> tuple[str, str] | None:
        if self.read_once(profile, item):
            # AUBE-03 / PRAHA-05: queued twice (two feeds, two rounds) is still read once. A read
            # that failed (no answer, a 5xx, a 429) is a read not done: asked for again later.
            if recent_read(recent) or (item.seen is not None and item.seen.last_fetched is not None
                                       and was_read(item.seen.last_status)):
                return "already_read", "an article page is read only once"
        cadence = _task(profile).min_read_interval_s
        if cadence and item.depth == 0 and item.hop == 0 and item.attempts == 0 and recent is not None \
                and recent[2] == item.source_id:
            # AUBE-08: one feed read per source per cadence, however many rounds queued it.
            if now - float(recent[0]) < cadence:
                return "seen_recently", f"read {int(now - float(recent[0]))} s ago; cadence {int(cadence)} s"
        return None

    def reads_tdmrep(self, profile: Profile, item: WorkItem | None = None) -> bool:
        follow = _task(profile).article_followup
        return follow is not None and follow.respect_tdmrep and (item is None or item.purpose == "article")

    def stored_keys(self, url: str) -> list[str]:
        return [article_key(url)]

    def says(self, profile: Profile) -> Sayings:
        task = _task(profile)
        fetched = [say("f_feed", items=Count(task.max_items, "item")), say("f_feed_only")]
        kept = [say("k_feed", chars=Count(task.summary_max_chars, "character")) if task.keep_summary
                else say("k_feed_no_summary")]
        follow = task.article_followup
        cadence = ((say("feed_interval", once=Every(task.min_read_interval_s)),)
                   if task.min_read_interval_s else ())
        if follow is None:
            return Sayings(fetched=tuple(fetched), kept=tuple(kept), cadence=cadence)
        if follow.mode == "short_summary":
            fetched.append(say("f_article_short", chars=Count(follow.summary_shorter_than, "character")))
        else:
            fetched.append(say("f_article_selected"))
        if follow.once_ever:
            fetched.append(say("f_article_once"))
        kept.append(say("k_article_text" if follow.keep_text else "k_article_read"))
        if follow.respect_tdmrep:
            kept.append(say("k_tdmrep", once=Every(profile.robots.cache_ttl_s)))
        caps: tuple[Say, ...] = ()
        if follow.window_s > 0:
            caps = (say("cap_articles", per=Count(follow.per_source_per_window or 0, "article_page"),
                        total=str(follow.total_per_window), window=Duration(follow.window_s),
                        window_dat=Duration(follow.window_s, dative=True)),)
        return Sayings(fetched=tuple(fetched), kept=tuple(kept), cadence=cadence, follow_caps=caps,
                       paywall_checked=True, reads_meta_robots=True)


KIND = Feed()

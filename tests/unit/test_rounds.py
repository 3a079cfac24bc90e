"""Which rounds are due between two ticks, and the entry work (or the skip) of each source."""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import pytest

from heed_core.profile import Profile, load_profile
from heed_core.rounds import Round, due_rounds, entry_items, round_id
from heed_core.urls import same_authority
from heed_core.work import Source


def ts(*args: int) -> float:
    return datetime(*args, tzinfo=UTC).timestamp()


MONDAY = ts(2024, 3, 4)
SATURDAY = ts(2024, 3, 9)


@pytest.fixture(scope="module")
def aube() -> Profile:
    return load_profile("aubebot")


@pytest.fixture(scope="module")
def subsidie() -> Profile:
    return load_profile("subsidieupdate")


def src(url: str, kind: str, **kw: Any) -> Source:
    return Source(id=Source.make_id(url, kind), url=url, kind=kind, **kw)


# --- due_rounds ------------------------------------------------------------------------------------

def test_round_id_is_the_utc_start_and_the_task() -> None:
    assert round_id(ts(2024, 3, 4, 12, 15), "feed") == "2024-03-04T12:15:00Z/feed"


def _ticks(profile: Profile, start: float, end: float) -> list[Round]:
    """The rounds a tick every minute starts over [start, end) (as EventBridge drives the scheduler)."""
    out: list[Round] = []
    for minute in range(int((end - start) // 60)):
        out += due_rounds(profile, start + minute * 60, start + (minute + 1) * 60)
    return out


def test_aube_08_a_feed_round_every_15_minutes(aube: Profile) -> None:
    rounds = _ticks(aube, ts(2024, 3, 4, 12), ts(2024, 3, 4, 13, 1))
    assert [r.round_id for r in rounds] == [
        "2024-03-04T12:15:00Z/feed", "2024-03-04T12:30:00Z/feed",
        "2024-03-04T12:45:00Z/feed", "2024-03-04T13:00:00Z/feed",
    ]
    assert all(r.task == "feed" for r in rounds)


def test_due_rounds_between_close_ticks(aube: Profile) -> None:
    assert due_rounds(aube, ts(2024, 3, 4, 12, 1), ts(2024, 3, 4, 12, 14, 59)) == []
    assert due_rounds(aube, ts(2024, 3, 4, 12, 14), ts(2024, 3, 4, 12, 15)) == [
        Round("2024-03-04T12:15:00Z/feed", ts(2024, 3, 4, 12, 15), "feed")]
    assert due_rounds(aube, ts(2024, 3, 4, 12, 15), ts(2024, 3, 4, 12, 15)) == []


def test_subsidie_02_working_day_rounds(subsidie: Profile) -> None:
    rounds = _ticks(subsidie, MONDAY, MONDAY + 86400)
    hours = [datetime.fromtimestamp(r.start, tz=UTC).hour for r in rounds]
    assert hours == [7, 9, 11, 13, 15]
    assert {r.task for r in rounds} == {"subsidy"}


def test_subsidie_02_weekend_day_has_one_round(subsidie: Profile) -> None:
    rounds = _ticks(subsidie, SATURDAY, SATURDAY + 86400)
    assert [r.round_id for r in rounds] == ["2024-03-09T10:00:00Z/subsidy"]


def test_aube_08_missed_ticks_start_one_round_of_each_task_not_one_per_firing(aube: Profile, subsidie: Profile) -> None:
    # GIVEN the scheduler was off for two hours (or a week)
    now = ts(2024, 3, 11, 12)
    for gap in (2 * 3600, 7 * 86400):
        # THEN one round starts, the latest: eight missed AubeBot firings are not eight reads of
        # each feed in a row (AUBE-08: one read per 15 minutes)
        assert [r.round_id for r in due_rounds(aube, now - gap, now)] == ["2024-03-11T12:00:00Z/feed"]
    # Monday 12:00 looks back at most a day: the last firing in it is 11:00
    assert [r.round_id for r in due_rounds(subsidie, now - 7 * 86400, now)] == ["2024-03-11T11:00:00Z/subsidy"]
    assert due_rounds(subsidie, now - 7 * 86400, ts(2024, 3, 11, 6)) == [
        Round("2024-03-10T10:00:00Z/subsidy", ts(2024, 3, 10, 10), "subsidy")]


def test_due_rounds_are_sorted_and_one_per_task_over_several_schedules() -> None:
    praha = load_profile("praha-x")
    assert [r.round_id for r in _ticks(praha, MONDAY, MONDAY + 86400)] == [
        "2024-03-04T03:00:00Z/site_check",
        "2024-03-04T06:00:00Z/feed", "2024-03-04T10:00:00Z/feed",
        "2024-03-04T14:00:00Z/feed", "2024-03-04T18:00:00Z/feed",
    ]
    # a tick that missed both tasks' firings starts one of each, in time order
    assert [r.round_id for r in due_rounds(praha, MONDAY, MONDAY + 86400 - 1)] == [
        "2024-03-04T03:00:00Z/site_check", "2024-03-04T18:00:00Z/feed"]


# --- entry_items -----------------------------------------------------------------------------------

NOW = ts(2024, 3, 4, 12, 15)
FEED_ROUND = Round(round_id(NOW, "feed"), NOW, "feed")


def test_entry_item_of_a_feed_source(aube: Profile) -> None:
    feed = src("https://news.example/feed.xml", "feed")
    items, skips = entry_items(aube, FEED_ROUND, [feed], NOW)
    assert skips == []
    (item,) = items
    assert (item.url, item.purpose, item.task, item.source_id, item.source_url) == (
        feed.url, "feed", "feed", feed.id, feed.url)
    assert (item.round_id, item.round_start, item.depth) == (FEED_ROUND.round_id, NOW, 0)


def test_closed_source_is_skipped(aube: Profile) -> None:
    closed = src("https://news.example/feed.xml", "feed", closed=True, closed_reason="http_403")
    items, skips = entry_items(aube, FEED_ROUND, [closed], NOW)
    assert items == []
    assert skips == [(closed, "source_closed", "http_403")]


def test_sources_of_other_kinds_sit_out_silently(aube: Profile) -> None:
    page = src("https://news.example/", "page")
    assert entry_items(aube, FEED_ROUND, [page], NOW) == ([], [])


def test_aube_08_feed_read_less_than_15_minutes_ago_waits_or_sits_out(aube: Profile) -> None:
    # A read 14 minutes ago (late in the last round) waits one more minute instead of losing the
    # round; a read 5 minutes ago sits this round out. Either way: never two reads within 15 min.
    late = src("https://a.example/feed", "feed", last_read=NOW - 14 * 60)
    recent = src("https://d.example/feed", "feed", last_read=NOW - 5 * 60)
    due = src("https://b.example/feed", "feed", last_read=NOW - 15 * 60)
    never = src("https://c.example/feed", "feed")
    items, skips = entry_items(aube, FEED_ROUND, [late, recent, due, never], NOW)
    assert [(i.source_id, i.not_before) for i in items] == [
        (late.id, NOW + 60), (due.id, 0.0), (never.id, 0.0)]
    assert [(s, reason) for s, reason, _ in skips] == [(recent, "seen_recently")]


def test_praha_04_site_check_once_a_week() -> None:
    praha = load_profile("praha-x")
    rnd = Round(round_id(NOW, "site_check"), NOW, "site_check")
    six_days = src("https://a.example.cz/", "site_check", last_read=NOW - 6 * 86400)
    a_week = src("https://b.example.cz/", "site_check", last_read=NOW - 7 * 86400)
    items, skips = entry_items(praha, rnd, [six_days, a_week], NOW)
    assert [(i.source_id, i.purpose, i.url) for i in items] == [(a_week.id, "homepage", a_week.url)]
    assert [(s.id, reason) for s, reason, _ in skips] == [(six_days.id, "seen_recently")]


@pytest.mark.parametrize("bot, kind", [("wannadobot", "agenda"), ("subsidieupdate", "subsidy")])
def test_wannado_06_site_sources_start_at_sitemap_xml(bot: str, kind: str) -> None:
    p = load_profile(bot)
    rnd = Round(round_id(NOW, kind), NOW, kind)
    venue = src("https://Venue.example/", kind)
    items, skips = entry_items(p, rnd, [venue], NOW)
    assert skips == []
    (item,) = items
    assert urlsplit(item.url).path == "/sitemap.xml"
    assert same_authority(item.url, venue.url)
    # The source URL in its canonical spelling (host lower-cased): what is requested and recorded.
    assert (item.purpose, item.task, item.source_url) == ("sitemap", kind, "https://venue.example/")
    assert item.ctx["role"] == kind and item.ctx["level"] == 0


def test_site_source_with_its_own_sitemaps() -> None:
    p = load_profile("subsidieupdate")
    rnd = Round(round_id(NOW, "subsidy"), NOW, "subsidy")
    maps = ["https://gemeente.example.nl/sitemap-subsidies.xml", "https://gemeente.example.nl/sitemap-2.xml"]
    town = src("https://gemeente.example.nl/", "subsidy", options={"sitemaps": maps})
    items, _ = entry_items(p, rnd, [town], NOW)
    assert [i.url for i in items] == maps


def test_subsidie_01_the_source_page_itself_is_watched_every_round() -> None:
    # GIVEN a subsidy source that is a page (not only the site's address)
    p = load_profile("subsidieupdate")
    rnd = Round(round_id(NOW, "subsidy"), NOW, "subsidy")
    page = src("https://gemeente.example.nl/subsidies/energie", "subsidy")
    items, _ = entry_items(p, rnd, [page], NOW)
    # THEN the round reads the sitemap (for the other pages) and the page itself, every round
    assert [(i.url, i.purpose) for i in items] == [("https://gemeente.example.nl/sitemap.xml", "sitemap"),
                                                   (page.url, "subsidy")]


def test_subsidie_01_one_sitemap_read_per_host_per_round_however_many_sources() -> None:
    p = load_profile("subsidieupdate")
    rnd = Round(round_id(NOW, "subsidy"), NOW, "subsidy")
    pages = [src(f"https://gemeente.example.nl/subsidies/{n}", "subsidy") for n in ("a", "b", "c")]
    items, _ = entry_items(p, rnd, pages, NOW)
    assert [i.url for i in items if i.purpose == "sitemap"] == ["https://gemeente.example.nl/sitemap.xml"]
    assert sorted(i.url for i in items if i.purpose == "subsidy") == [s.url for s in pages]


def test_source_with_a_bad_url_is_skipped(aube: Profile) -> None:
    bad = src("ftp://news.example/feed", "feed")
    items, skips = entry_items(aube, FEED_ROUND, [bad], NOW)
    assert items == [] and [(s, reason) for s, reason, _ in skips] == [(bad, "bad_url")]


def test_entry_items_have_distinct_work_ids(aube: Profile) -> None:
    feeds = [src(f"https://n{i}.example/feed", "feed") for i in range(5)]
    items, _ = entry_items(aube, FEED_ROUND, feeds, NOW)
    assert len({i.work_id for i in items}) == 5

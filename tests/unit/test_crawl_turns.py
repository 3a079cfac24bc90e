"""The crawl policy of ``Crawler.host_turn``, played turn by turn on a fake clock and a scripted transport."""
from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import pytest

from heed_core import tasks
from heed_core.crawl import ROTATE_AT, SLOT_WAIT_S, Crawler, TurnResult
from heed_core.hoststate import HostView, TokenOut
from heed_core.kinds import agenda as kind_agenda
from heed_core.kinds import feed as kind_feed
from heed_core.kinds.subsidy import SubsidyTask
from heed_core.kinds.walk import fallback
from heed_core.politeness import end_of_day
from heed_core.ports import FakeClock
from heed_core.profile import Profile, load_profile, load_profile_data
from heed_core.rounds import Round, entry_items, round_id, round_tokens
from heed_core.turn import TokenIn
from heed_core.urls import origin
from heed_core.work import Source, WorkItem

from tests.support.fifo import FifoSim
from tests.support.memstore import Exchange, FakeTokens, FakeTransport, ListJournal, ListResults, MemoryStore, Reply

T0 = 1_709_618_400.0  # 2024-03-05T06:00:00Z, a Tuesday
SITE = "http://news.example"
HOST = "http://news.example:80"  # the authority: robots.txt is asked at SITE + "/robots.txt"
OTHER = "http://other.example"
OTHER_HOST = "http://other.example:80"
LONG = "x" * 700  # a feed summary long enough that AubeBot opens no article (AUBE-03)


# --- small bodies ---------------------------------------------------------------------------------
def robots(text: str, **kw: Any) -> Reply:
    return Reply(200, {"Content-Type": "text/plain"}, text.encode(), **kw)


def rss(*items: tuple[str, str]) -> bytes:
    """An RSS 2.0 feed of (link, summary) items."""
    body = "".join(f"<item><title>Item {i}</title><link>{link}</link><guid>{link}</guid>"
                   f"<description>{summary}</description></item>" for i, (link, summary) in enumerate(items))
    return (f'<?xml version="1.0"?><rss version="2.0"><channel><title>News</title><link>{SITE}/</link>'
            f"<description>d</description>{body}</channel></rss>").encode()


def listing(*links: str) -> bytes:
    """A listing page whose items are <article>s with a headline link (SPRING-01)."""
    arts = "".join(f'<article><h2><a href="{href}">Story {i}</a></h2>'
                   f'<time datetime="2024-03-05T05:00:00Z">today</time></article>' for i, href in enumerate(links))
    return f"<html><head><title>Listing</title></head><body>{arts}</body></html>".encode()


PAGE = b"<html><head><title>A page</title></head><body><main><p>Subsidie voor groene daken.</p></main></body></html>"
FEED_CT = {"Content-Type": "application/rss+xml"}
HTML_CT = {"Content-Type": "text/html; charset=utf-8"}
# The kind of work each bot does on a host, and a body that gives it nothing to follow.
KIND = {"aubebot": ("feed", "feed"), "praha-x": ("feed", "feed"), "springstudiobot": ("page", "page"),
        "subsidieupdate": ("subsidy", "subsidy"), "wannadobot": ("agenda", "agenda")}


def plain_reply(purpose: str, **kw: Any) -> Reply:
    if purpose == "feed":
        return Reply(200, FEED_CT, rss(), **kw)
    if purpose == "page":
        return Reply(200, HTML_CT, listing(SITE + "/story/1"), **kw)
    return Reply(200, HTML_CT, PAGE, **kw)


# --- the rig: one bot, its ports, and a loop that plays the queue ----------------------------------
@dataclass
class Rig:
    profile: Profile
    clock: FakeClock = field(default_factory=lambda: FakeClock(T0))
    store: MemoryStore = field(default_factory=MemoryStore)
    journal: ListJournal = field(default_factory=ListJournal)
    results: ListResults = field(default_factory=ListResults)
    tokens: FakeTokens = field(default_factory=FakeTokens)
    round_skips: list[tuple[str, str]] = field(default_factory=list)  # source id, reason (set by the round)

    def __post_init__(self) -> None:
        self.transport = FakeTransport(self.clock)
        self.crawler = Crawler(self.profile, self.store, self.transport, self.journal, self.results, self.clock,
                               tokens=self.tokens)
        self.queue = FifoSim(self.crawler, self.store, self.results, self.tokens, self.clock)

    @property
    def turns(self) -> list[tuple[str, TurnResult, int]]:
        return [(h, t, t.requests) for h, t in self.queue.turns]

    def source(self, url: str, kind: str, **options: Any) -> Source:
        src = Source(id=Source.make_id(url, kind), url=url, kind=kind, options=options)
        self.store.put_source(src)
        return src

    def round(self, *sources: Source, at: float | None = None) -> list[WorkItem]:
        """Fire a round of the sources' kind now (or at ``at``): its tokens go to the queue."""
        if at is not None:
            self.clock.t = max(self.clock.t, at)
        now = self.clock.now()
        rnd = Round(round_id(now, sources[0].kind), now, sources[0].kind)
        current = [self.store.get_source(s.id) or s for s in sources]
        entry_urls = [s.url for s in current]
        items, skips = entry_items(self.profile, rnd, current, now, self.store.url_records(
            [u for u in entry_urls if u.startswith("http")]))
        self.round_skips += [(src.id, reason) for src, reason, _ in skips]
        for token in round_tokens(items):
            self.queue.send(token)
        return items

    def enqueue(self, *items: WorkItem, tok: str | None = None) -> None:
        for host in sorted({i.host for i in items}):
            group = tuple(i for i in items if i.host == host)
            self.queue.send(TokenOut(host, tok or f"t-{host}-{group[0].work_id}", group))

    def item(self, url: str, purpose: str, task: str, *, at: float | None = None, seq: int = 0,
             **ctx: Any) -> WorkItem:
        """One work item of a source of kind ``task`` (created on the fly), in a round starting now."""
        if at is not None:
            self.clock.t = max(self.clock.t, at)
        src = self.source(url, task)
        now = self.clock.now()
        work = WorkItem(url=url, purpose=purpose, task=task, source_id=src.id, source_url=url,
                        round_id=round_id(now, task), round_start=now, seq=seq, ctx=ctx,
                        seen=self.store.get_url(url))
        self.enqueue(work)
        return work

    def play(self, max_turns: int = 300) -> list[TurnResult]:
        """Deliver host tokens like the FIFO queue does (see tests/support/fifo.py)."""
        return self.queue.play(max_turns)

    # what the site saw
    def sent(self, host: str | None = None) -> list[Exchange]:
        return [e for e in self.transport.sent() if host is None or e.request.url.startswith(host.rsplit(":", 1)[0])]

    def skipped(self, url: str) -> list[str]:
        return self.journal.reasons(url)


def rig(bot: str | Mapping[str, Any]) -> Rig:
    return Rig(load_profile(bot) if isinstance(bot, str) else load_profile_data(bot))


@pytest.fixture(autouse=True)
def _no_sleeping(monkeypatch: pytest.MonkeyPatch) -> None:
    # COMMON-05 / AUBE-09: a turn never sleeps; it answers "defer" and the queue waits.
    def refuse(seconds: float) -> None:
        raise AssertionError(f"time.sleep({seconds}) inside a turn")

    monkeypatch.setattr(time, "sleep", refuse)


def gaps(exchanges: list[Exchange]) -> list[float]:
    return [b.result.t_start - a.result.t_end for a, b in pairwise(exchanges)]


# --- COMMON-02: robots.txt first; nothing disallowed is fetched ----------------------------------------
def test_common_02_robots_first_and_a_disallowed_url_is_never_requested() -> None:
    # GIVEN AubeBot, a feed whose two short items link to /private/a (disallowed) and /news/b
    r = rig("aubebot")
    r.transport.script(SITE + "/robots.txt", robots("User-agent: *\nDisallow: /private/\n"))
    r.transport.script(SITE + "/feed.xml", Reply(200, FEED_CT, rss((SITE + "/private/a", "short"),
                                                                   (SITE + "/news/b", "short"))))
    r.transport.script(SITE + "/news/b", Reply(200, HTML_CT, PAGE))
    r.round(r.source(SITE + "/feed.xml", "feed"))
    # WHEN the queue is played out
    r.play()
    # THEN robots.txt was the first request, the allowed article was read, the disallowed never
    assert r.transport.urls() == [SITE + "/robots.txt", SITE + "/feed.xml", SITE + "/news/b"]
    assert SITE + "/private/a" not in [q.url for q in r.transport.requests]
    assert r.skipped(SITE + "/private/a") == ["robots_disallowed"]
    assert [j["url"] for j in r.journal.requests] == r.transport.urls()


def test_common_02_robots_first_on_every_host_a_bot_visits() -> None:
    # GIVEN two feeds on two hosts
    r = rig("aubebot")
    r.round(r.source(SITE + "/feed.xml", "feed"), r.source(OTHER + "/rss", "feed"))
    r.transport.script(SITE + "/feed.xml", Reply(200, FEED_CT, rss()))
    r.transport.script(OTHER + "/rss", Reply(200, FEED_CT, rss()))
    r.play()
    # THEN each host's first request is its robots.txt
    for host in (HOST, OTHER_HOST):
        assert [e.request.url for e in r.sent(host)][0] == origin(host) + "/robots.txt"
        assert [e.request.purpose for e in r.sent(host)] == ["robots", "feed"]


# --- COMMON-05 / AUBE-09: the gap, counted from the end of one request to the start of the next -----
def test_common_05_aube_09_gap_counted_from_end_of_request_and_no_turn_sleeps() -> None:
    # GIVEN AubeBot (1.5 s) and requests that take 0.25 to 0.75 s
    r = rig("aubebot")
    r.transport.script(SITE + "/robots.txt", robots("User-agent: *\nAllow: /\n", duration=0.25))
    r.transport.script(SITE + "/feed.xml", Reply(200, FEED_CT, rss((SITE + "/a", "s"), (SITE + "/b", "s")),
                                                 duration=0.5))
    for path in ("/a", "/b"):
        r.transport.script(SITE + path, Reply(200, HTML_CT, PAGE, duration=0.75))
    r.round(r.source(SITE + "/feed.xml", "feed"))
    wall = time.monotonic()
    # WHEN the queue is played out
    r.play()
    # THEN each request starts exactly 1.5 s after the end of the previous one (never two at once)
    sent = r.sent(HOST)
    assert [e.request.purpose for e in sent] == ["robots", "feed", "article", "article"]
    assert [e.result.t_start for e in sent[1:]] == [e.result.t_end + 1.5 for e in sent[:-1]]
    # and no turn slept or made more than one request: the waiting was the queue's (deferrals)
    assert time.monotonic() - wall < 2.0
    assert r.clock.now() - T0 == pytest.approx(0.25 + 0.5 + 0.75 * 2 + 1.5 * 3)
    assert all(n <= 1 for _, _, n in r.turns)
    assert sum(t.delay_s for _, t, _ in r.turns if t.action == "defer") == pytest.approx(1.5 * 3)


def test_common_05_a_second_invocation_is_refused_while_a_request_is_in_flight() -> None:
    # GIVEN a second fetcher on the same state, woken while the first one's request is in flight
    r = rig("aubebot")
    other = Crawler(r.profile, r.store, r.transport, r.journal, r.results, r.clock)
    seen: list[TurnResult] = []
    r.transport.during = lambda req: seen.append(other.host_turn(TokenIn(HOST, "another-token"))) if not seen else None
    r.transport.script(SITE + "/feed.xml", Reply(200, FEED_CT, rss()))
    r.round(r.source(SITE + "/feed.xml", "feed"))
    # WHEN the queue is played out
    r.play()
    # THEN the second invocation deferred without a request (two requests never overlap)
    assert [t.action for t in seen] == ["defer"] and seen[0].requests == 0
    assert [e.request.url for e in r.transport.log] == [SITE + "/robots.txt", SITE + "/feed.xml"]


# --- AUBE-11: one request at a time over all hosts, held by the store's request slots --------------
def test_aube_11_another_hosts_turn_waits_while_a_request_is_in_flight_and_writes_nothing() -> None:
    # GIVEN AubeBot (politeness.max_in_flight 1) and a second fetcher on the same state, woken for
    # another host, with its work ready, while the first one's feed request is in flight
    r = rig("aubebot")
    other = Crawler(r.profile, r.store, r.transport, r.journal, r.results, r.clock, tokens=r.tokens)
    seen: list[TurnResult] = []
    calls: list[list[str]] = []

    def meanwhile(req: Any) -> None:
        if req.url == SITE + "/feed.xml" and not seen:
            before = len(r.store.calls)
            seen.append(other.host_turn(TokenIn(OTHER_HOST, "other-token", (r.item(OTHER + "/rss", "feed", "feed"),))))
            calls.append(r.store.calls[before:])

    r.transport.during = meanwhile
    r.transport.script(SITE + "/feed.xml", Reply(200, FEED_CT, rss()))
    r.round(r.source(SITE + "/feed.xml", "feed"))
    # WHEN the queue is played out
    r.play()
    # THEN the other host's turn came back in SLOT_WAIT_S without a request, having written nothing
    assert [(t.action, t.why, t.delay_s, t.requests) for t in seen] == [("defer", "in_flight_cap", SLOT_WAIT_S, 0)]
    assert "write_host" not in calls[0] and calls[0].count("take_slot") == 1
    # AND its work was done once the slot was free: one request after the other, never two at once
    sent = r.transport.log
    assert [e.request.url for e in sent[:2]] == [SITE + "/robots.txt", SITE + "/feed.xml"]
    assert OTHER + "/rss" in [e.request.url for e in sent[2:]]
    assert all(b.result.t_start >= a.result.t_end for a, b in pairwise(sent))
    assert r.store.slots == {0: ("", 0.0)}


def test_aube_11_the_slot_is_taken_before_the_request_and_freed_at_its_answer() -> None:
    r = rig("aubebot")
    held: list[tuple[str, float]] = []
    r.transport.during = lambda req: held.append(r.store.slots[0])
    r.transport.script(SITE + "/feed.xml", Reply(200, FEED_CT, rss(), duration=0.5))
    r.round(r.source(SITE + "/feed.xml", "feed"))
    r.play()
    # every request held the one slot, each its own, until the request's deadline and the claim
    assert len(held) == 2 and all(h and until >= T0 + r.profile.fetch.total_deadline_s for h, until in held)
    assert held[0][0] != held[1][0]
    assert r.store.slots == {0: ("", 0.0)}
    calls = [c for c in r.store.calls if c in ("take_slot", "release_slot")]
    assert calls == ["take_slot", "release_slot"] * 2


def test_aube_11_a_slot_held_by_a_dead_fetcher_frees_itself_at_its_deadline() -> None:
    # GIVEN a slot held by a fetcher that died mid-request, until T0 + 60
    r = rig("aubebot")
    assert r.store.take_slot(1, "dead", T0 + 60, T0) == 0
    r.transport.script(SITE + "/feed.xml", Reply(200, FEED_CT, rss()))
    r.round(r.source(SITE + "/feed.xml", "feed"))
    # WHEN the queue is played out
    r.play()
    # THEN nothing was asked before its deadline, and the host's work was done after it
    assert [e.request.url for e in r.transport.log] == [SITE + "/robots.txt", SITE + "/feed.xml"]
    assert r.transport.log[0].result.t_start >= T0 + 60
    assert {t.why for _, t, _ in r.turns if t.action == "defer"} >= {"in_flight_cap"}


def test_aube_11_a_token_that_waited_for_a_slot_rotate_at_times_is_replaced_not_sent_to_the_dlq() -> None:
    # GIVEN the slot held elsewhere, and a host's token received for the ROTATE_AT-th time
    r = rig("aubebot")
    assert r.store.take_slot(1, "busy", T0 + 60, T0) == 0
    work = r.item(SITE + "/feed.xml", "feed", "feed")
    # WHEN its turn finds no slot
    turn = r.crawler.host_turn(TokenIn(HOST, "tired", (work,), receives=ROTATE_AT))
    # THEN it is done (acknowledged), its work kept on the host and a fresh token for the host left
    assert (turn.action, turn.why, turn.requests) == ("ack", "in_flight_cap", 0)
    assert turn.pending is not None and [t.host for t in turn.pending.outbox.tokens] == [HOST]
    assert [i.url for i in r.store.view(HOST).frontier] == [SITE + "/feed.xml"]
    assert r.transport.log == []


def test_aube_11_a_release_lost_to_a_busy_table_costs_the_answer_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    from heed_core.errors import TransientError

    r = rig("aubebot")

    def busy(slot: int, holder: str) -> None:
        raise TransientError("ProvisionedThroughputExceededException")

    monkeypatch.setattr(r.store, "release_slot", busy)
    r.transport.script(SITE + "/feed.xml", Reply(200, FEED_CT, rss()))
    r.round(r.source(SITE + "/feed.xml", "feed"))
    # WHEN the slot cannot be freed after robots.txt THEN the answer is committed all the same, and
    # the next request waits for the slot's deadline (never sooner than the gap)
    r.play()
    assert [e.request.url for e in r.transport.log] == [SITE + "/robots.txt", SITE + "/feed.xml"]
    robots, feed = r.transport.log
    assert feed.result.t_start >= robots.result.t_start + r.profile.fetch.total_deadline_s


def test_aube_11_a_bot_without_a_cap_takes_no_slot() -> None:
    r = rig("springstudiobot")
    r.transport.script(SITE + "/", plain_reply("page"))
    r.round(r.source(SITE + "/", "page"))
    r.play()
    assert len(r.transport.log) >= 2 and "take_slot" not in r.store.calls


# --- AUBE-04 / SUBSIDIE-07 / SPRING-08: Crawl-delay raises the gap up to the bot's cap ----------------
@pytest.mark.parametrize(("bot", "crawl_delay", "gap"), [
    ("aubebot", 4, 4.0), ("aubebot", 30, 10.0),                    # AUBE-04: honoured up to 10 s
    ("subsidieupdate", 20, 20.0), ("subsidieupdate", 100, 30.0),   # SUBSIDIE-07: above 30 is 30
    ("springstudiobot", 5, 10.0), ("springstudiobot", 90, 60.0),   # SPRING-08: 10 s, Crawl-delay up to 60
])
def test_aube_04_subsidie_07_crawl_delay_raises_the_gap_up_to_the_cap(bot: str, crawl_delay: int, gap: float) -> None:
    # GIVEN a host asking for a Crawl-delay, and two pages of the bot's kind of work on it
    r = rig(bot)
    purpose, task = KIND[bot]
    r.transport.script(SITE + "/robots.txt", robots(f"User-agent: *\nCrawl-delay: {crawl_delay}\n"))
    for i in (1, 2):
        r.transport.script(f"{SITE}/p{i}", plain_reply(purpose, duration=0.5))
        r.item(f"{SITE}/p{i}", purpose, task, seq=i)
    # WHEN the queue is played out
    r.play()
    # THEN every gap on the host, the one after robots.txt included, is the capped delay exactly;
    # p2 comes with a token of its own, which reads the gap p1's turn wrote as a fresh token does
    # (by whichever machine's clock): it waits the clock-skew margin too (tests/unit/test_clock_skew.py)
    sent = r.sent(HOST)
    assert [e.request.url for e in sent] == [SITE + "/robots.txt", SITE + "/p1", SITE + "/p2"]
    margin = r.profile.politeness.clock_skew_margin_s
    assert gaps(sent) == pytest.approx([gap, gap + margin])


# --- SPRING-05: a 429 stops the host for the rest of the UTC day ------------------------------------
def test_spring_05_429_stops_the_host_for_the_rest_of_the_day() -> None:
    # GIVEN two listing pages on one host; the first answers 429
    r = rig("springstudiobot")
    r.transport.script(SITE + "/one", Reply(429), plain_reply("page"))
    r.transport.script(SITE + "/two", plain_reply("page"))
    first, second = r.source(SITE + "/one", "page"), r.source(SITE + "/two", "page")
    r.round(first, second)
    # WHEN the round is played
    r.play()
    # THEN nothing after the 429 was requested; the later page is skipped as host_stopped
    assert r.transport.urls() == [SITE + "/robots.txt", SITE + "/one"]
    assert r.skipped(SITE + "/one") == ["host_stopped"]
    assert r.skipped(SITE + "/two") == ["host_stopped"]
    assert r.store.view(HOST).pacing.stopped_until == end_of_day(T0) == T0 + 18 * 3600
    # and the next day's round may fetch again
    r.round(first, second, at=T0 + 86400 + 60)
    r.play()
    assert r.transport.urls()[2:] == [SITE + "/robots.txt", SITE + "/one", SITE + "/two"]


def test_spring_05_a_longer_retry_after_is_respected() -> None:
    # GIVEN a 429 that asks for two days
    r = rig("springstudiobot")
    r.transport.script(SITE + "/one", Reply(429, {"Retry-After": "172800"}))
    src = r.source(SITE + "/one", "page")
    r.round(src)
    r.play()
    t_429 = r.sent()[-1].result.t_end
    assert r.store.view(HOST).pacing.stopped_until == t_429 + 172800
    # WHEN the next day's round comes
    before = len(r.transport.log)
    r.round(src, at=T0 + 86400)
    r.play()
    # THEN the host is still stopped: no request at all, robots.txt included
    assert len(r.transport.log) == before
    assert r.skipped(SITE + "/one") == ["host_stopped", "host_stopped"]


# --- PRAHA-07: a 403, a 429 or a challenge closes the source -----------------------------------------
@pytest.mark.parametrize("reply", [
    Reply(403, HTML_CT, b"<html><title>Forbidden</title></html>"),
    Reply(429, HTML_CT, b"slow down"),
    Reply(200, HTML_CT, b"<html><head><title>Just a moment...</title></head><body></body></html>"),
    Reply(403, {"cf-mitigated": "challenge"}, b"<html></html>"),
], ids=["403", "429", "challenge-title", "challenge-header"])
def test_praha_07_block_closes_the_source(reply: Reply) -> None:
    # GIVEN Praha-X, a feed answering with a block, and an article of that source already queued
    r = rig("praha-x")
    r.transport.script(SITE + "/rss", reply)
    feed, other = r.source(SITE + "/rss", "feed"), r.source(SITE + "/other-rss", "feed")
    (entry,) = r.round(feed)
    r.enqueue(entry.follow(SITE + "/article", "article"))
    # WHEN the round is played
    r.play()
    # THEN the source is closed, a source.closed result says so, and its work is skipped as source_closed
    assert r.transport.urls() == [SITE + "/robots.txt", SITE + "/rss"]
    closed = r.store.get_source(feed.id)
    assert closed is not None and closed.closed
    assert [e["source"] for e in r.results.of_type("source.closed")] == [feed.id]
    assert r.skipped(SITE + "/rss") == ["source_closed"]
    assert r.skipped(SITE + "/article") == ["source_closed"]
    # and nothing is tried again: the closed source sits later rounds out, the host the rest of the day
    r.round(feed, other, at=T0 + 4 * 3600)
    r.play()
    assert r.round_skips == [(feed.id, "source_closed")]
    assert r.transport.urls() == [SITE + "/robots.txt", SITE + "/rss"]
    assert r.skipped(SITE + "/other-rss") == ["host_stopped"]


# --- SPRING-06: a 5xx is retried at most three more times the same day, with backoff ------------------
def test_spring_06_error_retried_at_most_three_more_times_with_backoff() -> None:
    r = rig("springstudiobot")
    r.transport.script(SITE + "/one", Reply(503, duration=0.5))
    r.round(r.source(SITE + "/one", "page"))
    r.play()
    pages = [e for e in r.sent() if e.request.purpose == "page"]
    # THEN 1 + 3 requests, each retry the backoff (600 s, doubling) after the end of the last one
    assert len(pages) == 4
    assert gaps(pages) == [600.0, 1200.0, 2400.0]
    assert r.skipped(SITE + "/one") == ["retries_exhausted"]
    assert r.store.pending_work(HOST) == []


def test_spring_06_no_retry_crosses_midnight() -> None:
    # GIVEN a 5xx at 23:55 UTC: the first retry would fall on the next day
    r = rig("springstudiobot")
    r.transport.script(SITE + "/one", Reply(502))
    r.clock.t = end_of_day(T0) - 300
    r.round(r.source(SITE + "/one", "page"))
    r.play()
    assert [e.request.purpose for e in r.sent()] == ["robots", "page"]
    assert r.skipped(SITE + "/one") == ["retries_exhausted"]


# --- COMMON-06 / SPRING-07: a redirect is a new work item, robots-checked and paced ---------------------
def test_common_06_redirect_is_a_separate_paced_request() -> None:
    r = rig("springstudiobot")
    r.transport.script(SITE + "/old", Reply(301, {"Location": "/new"}))
    r.transport.script(SITE + "/new", plain_reply("page"))
    r.round(r.source(SITE + "/old", "page"))
    r.play()
    sent = r.sent()
    assert [e.request.url for e in sent] == [SITE + "/robots.txt", SITE + "/old", SITE + "/new"]
    assert gaps(sent) == [10.0, 10.0]  # SPRING-08: the hop waits like any other request
    assert [e["url"] for e in r.results.of_type("item.found")] == [SITE + "/story/1"]


def test_common_06_redirect_to_a_disallowed_path_is_not_requested() -> None:
    r = rig("springstudiobot")
    r.transport.script(SITE + "/robots.txt", robots("User-agent: SpringStudioBot\nDisallow: /private/\n"))
    r.transport.script(SITE + "/old", Reply(302, {"Location": SITE + "/private/x"}))
    r.round(r.source(SITE + "/old", "page"))
    r.play()
    assert r.transport.urls() == [SITE + "/robots.txt", SITE + "/old"]
    assert r.skipped(SITE + "/private/x") == ["robots_disallowed"]


def test_common_06_redirect_to_another_host_reads_that_hosts_robots_first() -> None:
    r = rig("springstudiobot")
    r.transport.script(SITE + "/old", Reply(301, {"Location": OTHER + "/page"}))
    r.transport.script(OTHER + "/page", plain_reply("page"))
    r.round(r.source(SITE + "/old", "page"))
    turns = r.play()
    assert r.transport.urls() == [SITE + "/robots.txt", SITE + "/old", OTHER + "/robots.txt", OTHER + "/page"]
    assert any(OTHER_HOST in t.wake for t in turns)
    assert gaps(r.sent(OTHER_HOST)) == [10.0]


def test_common_06_redirect_into_a_blocked_domain_is_not_requested() -> None:
    r = rig("springstudiobot")
    r.store.block_domain("other.example", "owner asked")
    r.transport.script(SITE + "/old", Reply(301, {"Location": OTHER + "/page"}))
    r.round(r.source(SITE + "/old", "page"))
    r.play()
    assert r.transport.urls() == [SITE + "/robots.txt", SITE + "/old"]
    assert r.skipped(OTHER + "/page") == ["blocked_by_operator"]


# --- AUBE-02 / WANNADO-07: conditional requests; a 304 costs no parsing -------------------------------
@pytest.mark.parametrize(("bot", "purpose", "task", "parser"), [
    ("aubebot", "feed", "feed", (kind_feed.feeds, "parse_feed")),
    ("wannadobot", "agenda", "agenda", (kind_agenda.ev, "extract_events")),
])
def test_aube_02_wannado_07_second_read_is_conditional_and_304_is_not_parsed(
        bot: str, purpose: str, task: str, parser: tuple[Any, str], monkeypatch: pytest.MonkeyPatch) -> None:
    module, name = parser
    calls: list[str] = []
    real = getattr(module, name)
    monkeypatch.setattr(module, name, lambda body, **kw: calls.append("parsed") or real(body, **kw))
    r = rig(bot)
    url = SITE + "/watched"
    validators = {"ETag": '"v1"', "Last-Modified": "Tue, 05 Mar 2024 05:00:00 GMT"}
    first = plain_reply(purpose)
    r.transport.script(url, Reply(200, {**dict(first.headers), **validators}, first.body), Reply(304))
    # WHEN the page is read, and read again a day later
    r.item(url, purpose, task)
    r.play()
    r.item(url, purpose, task, at=T0 + 86400)
    r.play()
    reads = [e for e in r.sent() if e.request.url == url]
    # THEN the first read is plain, the second carries both validators, and the 304 is not parsed
    assert [dict(e.request.headers) for e in reads] == [
        {}, {"If-None-Match": '"v1"', "If-Modified-Since": "Tue, 05 Mar 2024 05:00:00 GMT"}]
    assert r.skipped(url)[-1] == "not_modified"
    assert calls == ["parsed"]


# --- SPRING-10 / SUBSIDIE-11: an unreadable robots.txt, per bot ----------------------------------------
@pytest.mark.parametrize("status", [401, 403, 500, 503])
def test_spring_10_unreadable_robots_means_nothing_is_fetched(status: int) -> None:
    r = rig("springstudiobot")
    r.transport.script(SITE + "/robots.txt", Reply(status))
    r.round(r.source(SITE + "/one", "page"), r.source(SITE + "/two", "page"))
    r.play()
    assert r.transport.urls() == [SITE + "/robots.txt"]
    assert r.skipped(SITE + "/one") == r.skipped(SITE + "/two") == ["robots_unavailable"]


@pytest.mark.parametrize("status", [401, 403, 404, 410])
def test_subsidie_11_robots_4xx_means_no_restrictions(status: int) -> None:
    r = rig("subsidieupdate")
    r.transport.script(SITE + "/robots.txt", Reply(status))
    r.transport.script(SITE + "/sitemap.xml", Reply(200, {"Content-Type": "application/xml"},
                                                      b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>'))
    r.round(r.source(SITE + "/", "subsidy"))  # the round starts at the site's sitemap.xml (SUBSIDIE-01)
    r.play()
    assert r.transport.urls() == [SITE + "/robots.txt", SITE + "/sitemap.xml"]


def test_subsidie_11_robots_5xx_skips_the_host_this_round_only() -> None:
    # GIVEN a municipality with two sitemaps and a robots.txt that fails with a 503, then recovers
    r = rig("subsidieupdate")
    r.transport.script(SITE + "/robots.txt", Reply(503), robots("User-agent: *\nAllow: /\n"))
    empty = Reply(200, {"Content-Type": "application/xml"}, b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>')
    r.transport.script(SITE + "/a.xml", empty)
    r.transport.script(SITE + "/b.xml", empty)
    src = r.source(SITE + "/", "subsidy", sitemaps=[SITE + "/a.xml", SITE + "/b.xml"])
    r.round(src)
    r.play()
    # THEN this round fetches nothing but robots.txt, and both entries are skipped
    assert r.transport.urls() == [SITE + "/robots.txt"]
    assert r.skipped(SITE + "/a.xml") == r.skipped(SITE + "/b.xml") == ["robots_unavailable"]
    # WHEN the next round comes (two hours later)
    r.round(src, at=T0 + 7200)
    r.play()
    # THEN robots.txt is read again and the host is crawled
    urls = r.transport.urls()
    assert urls[:2] == [SITE + "/robots.txt", SITE + "/robots.txt"]
    assert sorted(urls[2:]) == [SITE + "/a.xml", SITE + "/b.xml"]


# --- SPRING-09 / SUBSIDIE-06 / AUBE-12 / WANNADO-11: robots.txt is re-read only after its TTL ---------------
@pytest.mark.parametrize(("bot", "ttl"), [("springstudiobot", 86400), ("subsidieupdate", 86400),
                                          ("aubebot", 900), ("wannadobot", 86400)])
def test_spring_09_aube_12_robots_reread_only_after_the_cache_ttl(bot: str, ttl: float) -> None:
    # GIVEN a host whose robots.txt allows all, then bans the bot
    r = rig(bot)
    assert r.profile.get("robots.cache_ttl_s") == ttl
    purpose, task = KIND[bot]
    r.transport.script(SITE + "/robots.txt", robots("User-agent: *\nAllow: /\n"),
                       robots("User-agent: *\nDisallow: /\n"))
    for path in ("/x", "/y", "/z"):  # three pages (AUBE-08 and -03 let no page of AubeBot be read twice so soon)
        r.transport.script(SITE + path, plain_reply(purpose))

    def robots_reads() -> int:
        return sum(e.request.purpose == "robots" for e in r.sent())

    r.item(SITE + "/x", purpose, task)
    r.play()
    assert robots_reads() == 1
    robots_end = r.sent()[0].result.t_end
    # WHEN the host is visited again just before the TTL runs out: the cached copy is used
    r.item(SITE + "/y", purpose, task, at=robots_end + ttl - 60)
    r.play()
    assert robots_reads() == 1
    assert SITE + "/y" in r.transport.urls()
    # WHEN it is visited after the TTL: robots.txt is read again, and the new ban takes effect
    r.item(SITE + "/z", purpose, task, at=robots_end + ttl + 60)
    r.play()
    assert robots_reads() == 2
    assert SITE + "/z" not in r.transport.urls()
    assert r.skipped(SITE + "/z")[-1] == "robots_disallowed"


# --- COMMON-08: a blocked domain is never requested ----------------------------------------------------
@pytest.mark.parametrize("how", ["store", "profile"])
def test_common_08_blocked_domain_is_never_requested(how: str) -> None:
    if how == "profile":
        r = rig({"extends": "aubebot", "operator": {"blocked_domains": ["example"]}})
    else:
        r = rig("aubebot")
        r.store.block_domain("news.example", "stop request by mail")
    r.round(r.source(SITE + "/feed.xml", "feed"))
    r.play()
    assert r.transport.requests == []
    assert r.skipped(SITE + "/feed.xml") == ["blocked_by_operator"]


# --- netguard: a refused address is a skip, not a request ---------------------------------------------
def test_private_address_refusal_of_robots_is_a_skip_not_a_request() -> None:
    r = rig("aubebot")
    r.transport.script(SITE + "/robots.txt", Reply(None, error="private_address", sent=False))
    r.round(r.source(SITE + "/feed.xml", "feed"))
    r.play()
    assert r.transport.sent() == [] and r.journal.requests == []
    assert r.skipped(SITE + "/robots.txt") == ["private_address"]
    assert r.skipped(SITE + "/feed.xml") == ["private_address"]
    assert [q.url for q in r.transport.requests] == [SITE + "/robots.txt"]  # nothing else was even tried


def test_private_address_refusal_of_a_page_is_a_skip_not_a_request() -> None:
    r = rig("aubebot")
    r.transport.script(SITE + "/feed.xml", Reply(None, error="private_address", sent=False))
    r.round(r.source(SITE + "/feed.xml", "feed"))
    r.play()
    assert [j["url"] for j in r.journal.requests] == [SITE + "/robots.txt"]
    assert r.skipped(SITE + "/feed.xml") == ["private_address", "private_address"]  # the refusal, the item
    assert r.store.pending_work(HOST) == []


# --- the request log: journaled with the answer's commit, after its parse --------------------------
def test_a_wait_counts_from_the_settle_not_from_the_end_of_a_slow_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN AubeBot (1.5 s), and a host write that takes 0.3 s (on one machine: a wait for the
    # database's write lock)
    r = rig("aubebot")
    r.transport.script(SITE + "/feed.xml", Reply(200, FEED_CT, rss()))
    write = r.store.write_host

    def slow(*a: Any, **k: Any) -> Any:
        r.clock.t += 0.3
        return write(*a, **k)
    monkeypatch.setattr(r.store, "write_host", slow)
    r.round(r.source(SITE + "/feed.xml", "feed"))
    # WHEN the host's first turn (robots.txt) is played
    turn = r.queue.step(HOST)
    # THEN its wait ends where the gap does (1.5 s after the answer), not 0.3 s later: it counts
    # from when it was worked out, before the commit, and the token is hidden for what is left
    answer = r.sent(HOST)[0].result
    assert turn.action == "defer"
    assert turn.at + turn.delay_s == pytest.approx(answer.t_end + 1.5)
    assert turn.at < r.clock.now()
    assert turn.left(r.clock.now()) == pytest.approx(1.5 - 0.3)


def test_the_request_is_journaled_after_its_answer_is_settled_and_before_the_commit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN AubeBot, and a record of the order of the settle, the journal and the host's commits
    r = rig("aubebot")
    r.transport.script(SITE + "/feed.xml", Reply(200, FEED_CT, rss()))
    order: list[str] = []
    settle, request, write = r.crawler.settler.settle, r.journal.request, r.store.write_host

    def settling(*a: Any, **k: Any) -> Any:
        order.append("settle")
        return settle(*a, **k)

    def journaling(record: dict[str, Any]) -> None:
        order.append("request " + record["url"].rsplit("/", 1)[-1])
        request(record)

    def writing(*a: Any, **k: Any) -> Any:
        order.append("write")
        return write(*a, **k)
    monkeypatch.setattr(r.crawler.settler, "settle", settling)
    monkeypatch.setattr(r.journal, "request", journaling)
    monkeypatch.setattr(r.store, "write_host", writing)
    r.round(r.source(SITE + "/feed.xml", "feed"))
    # WHEN the queue is played out
    r.play()
    # THEN each request is journaled once, after its answer is settled (the parse is no part of
    # the commit's transaction) and before the commit that carries it
    assert order == ["write", "settle", "request robots.txt", "write", "settle", "request feed.xml", "write"]
    assert [j["url"] for j in r.journal.requests] == r.transport.urls()


def test_a_request_whose_answer_cannot_be_settled_is_journaled_all_the_same(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN AubeBot, and settling the feed's answer failing (a defect in a parser, say)
    r = rig("aubebot")
    r.transport.script(SITE + "/feed.xml", Reply(200, FEED_CT, rss()))
    settle = r.crawler.settler.settle

    def failing(token: Any, plan: Any, *a: Any, **k: Any) -> Any:
        if plan.role != "robots":
            raise RuntimeError("a defect")
        return settle(token, plan, *a, **k)
    monkeypatch.setattr(r.crawler.settler, "settle", failing)
    r.round(r.source(SITE + "/feed.xml", "feed"))
    # WHEN the feed's turn runs
    with pytest.raises(RuntimeError):
        r.play()
    # THEN the request it made is in the log: the site saw it, so an operator sees it too
    assert [j["url"] for j in r.journal.requests] == [SITE + "/robots.txt", SITE + "/feed.xml"]
    assert r.transport.urls() == [SITE + "/robots.txt", SITE + "/feed.xml"]


# --- at-least-once delivery: a redelivered turn makes no second request --------------------------------
class CrashOnCommit(MemoryStore):
    """A store whose commit after a fetch fails once, as if the invocation died after the request."""

    def __init__(self, purpose: str) -> None:
        super().__init__()
        self.crashes = 1
        self.purpose = purpose
        self.fetched = False

    def write_host(self, host: str, expected_version: int, **kw: Any) -> bool:
        if self.crashes and self.fetched:
            self.crashes -= 1
            raise RuntimeError("invocation died")
        return super().write_host(host, expected_version, **kw)


def test_redelivered_turn_after_success_makes_no_second_request() -> None:
    r = rig("aubebot")
    r.transport.script(SITE + "/feed.xml", Reply(200, FEED_CT, rss((SITE + "/a", LONG))))
    (entry,) = r.round(r.source(SITE + "/feed.xml", "feed"))
    (token,) = round_tokens([entry])
    r.play()
    assert r.transport.urls() == [SITE + "/robots.txt", SITE + "/feed.xml"]
    # WHEN the same token is delivered again, later (SQS delivers at least once)
    r.clock.advance(60)
    turn = r.crawler.host_turn(TokenIn(token.host, token.tok, token.items))
    # THEN nothing is requested
    assert (turn.action, turn.requests) == ("ack", 0)
    assert len(r.transport.log) == 2


def test_a_crash_before_the_commit_refetches_once_and_reports_once() -> None:
    # GIVEN an invocation that fetched the feed and died before its commit
    store = CrashOnCommit("feed")
    r = Rig(load_profile("aubebot"), store=store)
    r.transport.script(SITE + "/feed.xml", Reply(200, FEED_CT, rss((SITE + "/a", LONG))))
    r.transport.during = lambda req: setattr(store, "fetched", req.purpose == "feed")
    r.round(r.source(SITE + "/feed.xml", "feed"))
    with pytest.raises(RuntimeError):
        r.play()
    assert r.transport.urls() == [SITE + "/robots.txt", SITE + "/feed.xml"]
    assert r.results.events == []  # nothing left the host: its effects were never committed
    # WHEN SQS delivers the token again (after its visibility timeout)
    r.clock.advance(360)
    r.play()
    # THEN the feed is read once more (the documented, bounded refetch), its items reported once
    assert r.transport.urls() == [SITE + "/robots.txt", SITE + "/feed.xml", SITE + "/feed.xml"]
    assert [e["url"] for e in r.results.of_type("item.found")] == [SITE + "/a"]
    assert r.store.pending_work(HOST) == []


# --- found while writing these tests (fixed in crawl.py since) ---
def test_common_05_robots_redirect_hop_on_the_same_host_waits_the_gap() -> None:
    # GIVEN a robots.txt that redirects to another path on the same host
    r = rig("springstudiobot")
    r.transport.script(SITE + "/robots.txt", Reply(301, {"Location": "/robots-new.txt"}))
    r.transport.script(SITE + "/robots-new.txt", robots("User-agent: *\nAllow: /\n"))
    r.transport.script(SITE + "/one", plain_reply("page"))
    r.round(r.source(SITE + "/one", "page"))
    r.play()
    # THEN the hop is a new request on the host: it keeps SPRING-08's 10 s like any other (COMMON-05/06)
    sent = r.sent()
    assert [e.request.url for e in sent] == [SITE + "/robots.txt", SITE + "/robots-new.txt", SITE + "/one"]
    assert min(gaps(sent)) >= 10.0


def test_praha_06_crawl_delay_holds_after_the_tdmrep_request() -> None:
    # GIVEN Praha-X on a host with Crawl-delay: 10, and a feed item it writes about (PRAHA-02/03)
    r = rig("praha-x")
    r.transport.script(SITE + "/robots.txt", robots("User-agent: *\nCrawl-delay: 10\n"))
    r.transport.script(SITE + "/rss", Reply(200, FEED_CT, rss((SITE + "/article/1", "short"))))
    r.transport.script(SITE + "/article/1", Reply(200, HTML_CT, PAGE))
    r.round(r.source(SITE + "/rss", "feed", write_about=True))
    r.play()
    sent = r.sent()
    assert [e.request.purpose for e in sent] == ["robots", "feed", "tdmrep", "article"]
    # THEN every gap on the host is the Crawl-delay, the one after tdmrep.json included (COMMON-05)
    assert gaps(sent) == [10.0, 10.0, 10.0]


def test_common_02_tdmrep_json_is_not_fetched_where_robots_disallows_it() -> None:
    # GIVEN robots.txt disallowing /.well-known/ for everyone
    r = rig("praha-x")
    r.transport.script(SITE + "/robots.txt", robots("User-agent: *\nDisallow: /.well-known/\n"))
    r.transport.script(SITE + "/rss", Reply(200, FEED_CT, rss((SITE + "/article/1", "short"))))
    r.transport.script(SITE + "/article/1", Reply(200, HTML_CT, PAGE))
    r.round(r.source(SITE + "/rss", "feed", write_about=True))
    r.play()
    # THEN /.well-known/tdmrep.json is never requested (COMMON-02: nothing it disallows is fetched)
    assert SITE + "/.well-known/tdmrep.json" not in r.transport.urls()


@pytest.mark.parametrize("bot", ["springstudiobot", "praha-x"])
def test_spring_05_a_429_on_robots_txt_stops_the_host_for_the_day(bot: str) -> None:
    # GIVEN a host whose robots.txt answers 429
    r = rig(bot)
    purpose, task = KIND[bot]
    r.transport.script(SITE + "/robots.txt", Reply(429))
    r.item(SITE + "/x", purpose, task)
    r.play()
    assert r.transport.urls() == [SITE + "/robots.txt"]
    # WHEN more work for the host comes later the same day
    r.item(SITE + "/y", purpose, task, at=T0 + 2 * 3600)
    r.play()
    # THEN no request goes to that host before the next UTC day (SPRING-05; PRAHA-07 stops too)
    assert r.transport.urls() == [SITE + "/robots.txt"]


# --- the chain a deferring turn reports: what a queue with more hosts due than it serves orders by ---
def test_a_deferring_turn_reports_how_long_the_hosts_work_may_still_take() -> None:
    # GIVEN AubeBot, a host asking for a Crawl-delay of 4 s, a feed with two short items
    r = rig("aubebot")
    r.transport.script(SITE + "/robots.txt", robots("User-agent: *\nCrawl-delay: 4\n"))
    r.transport.script(SITE + "/feed.xml", Reply(200, FEED_CT, rss((SITE + "/a", "s"), (SITE + "/b", "s"))))
    for path in ("/a", "/b"):
        r.transport.script(SITE + path, Reply(200, HTML_CT, PAGE))
    r.round(r.source(SITE + "/feed.xml", "feed"))
    # WHEN the queue is played out
    r.play()
    fetched = [t for _, t, n in r.turns if n]
    # THEN after robots.txt the feed counts with the articles it may bring (AUBE-10: five a
    # source a quarter hour, fewer than its 40 items), each a 4 s gap; after the feed, the two
    # articles it brought; after the first of them, the other; the last turn is done: no chain
    follow = r.profile.feed.article_followup
    assert follow is not None and follow.per_source_per_window == 5 < r.profile.feed.max_items
    assert [t.action for t in fetched] == ["defer", "defer", "defer", "ack"]
    assert [t.chain_s for t in fetched] == [(1 + 5) * 4.0, 2 * 4.0, 1 * 4.0, None]


@pytest.mark.parametrize(("bot", "item", "bring"), [
    # AUBE-10's per-source cap (5), below the 40 items a feed read takes
    ("aubebot", ("feed", "feed", {}), lambda p: p.feed.article_followup.per_source_per_window),
    # PRAHA-02: articles of selected sources, no window cap: as many as a feed read takes
    ("praha-x", ("feed", "feed", {}), lambda p: p.feed.max_items),
    ("praha-x", ("homepage", "site_check", {}), lambda p: 1),  # PRAHA-04: the home page, then its icon
    # SPRING-03: the fallback sitemap, its children, the titles of new pages
    ("springstudiobot", ("page", "page", {}),
     lambda p: 1 + fallback(p).max_child_sitemaps + fallback(p).max_new_pages),
    ("springstudiobot", ("page", "page", {"title_only": True}), lambda p: 0),
    ("subsidieupdate", ("sitemap", "subsidy", {}),
     lambda p: p.section("subsidy", SubsidyTask).max_pages_per_host_per_round),
    ("wannadobot", ("sitemap", "agenda", {}), lambda p: p.agenda.max_pages_per_site_per_round),
    ("wannadobot", ("agenda", "agenda", {}), lambda p: 0),
])
def test_what_an_item_may_bring_is_bounded_by_the_profiles_caps(bot: str, item: tuple[str, str, dict[str, Any]],
                                                                bring: Any) -> None:
    purpose, task, ctx = item
    profile = load_profile(bot)
    work = WorkItem(url=SITE + "/x", purpose=purpose, task=task, source_id="s", source_url=SITE + "/x",
                    round_id="r", round_start=T0, ctx=ctx)
    assert tasks.may_bring(profile, work) == bring(profile)


def test_a_tokens_undecodable_items_are_said_once_whether_its_turn_fails_or_goes_on() -> None:
    # GIVEN a token of one good item and one that does not decode, whose first turn fails (a bug)
    r = rig("aubebot")
    good = r.item(SITE + "/feed.xml", "feed", "feed")
    token = TokenIn(HOST, "t-bad", items=(good,), bad=(("{'u': 1}", "undecodable work item"),))
    # WHEN its failure is charged, and the token comes back for another turn, and another
    r.crawler.charge_failure(token, 3, "RuntimeError: boom")
    r.crawler.charge_failure(token, 3, "RuntimeError: boom")
    # THEN the undecodable item was said once, the good one kept (charged, not given up)
    assert [s["reason"] for s in r.journal.skips] == ["bad_work_item"]
    assert [i.url for i in HostView.from_record(r.store.read_host(HOST)).frontier] == [SITE + "/feed.xml"]

"""The host turn's two pure steps as tables, with no store, no clock and no network (issue 18):
``plan_turn`` (a snapshot and a token in, the one request or the wait and the skips out) and
``settle_item`` (the plan's item and its answer in, the host's next state and what leaves out)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from heed_core.hoststate import HostRecord, HostView, recent_read
from heed_core.ports import FetchResult
from heed_core.profile import Profile, load_profile_data
from heed_core.robots_policy import RobotsFetchPolicy, robots_from_response
from heed_core.robots_step import answer_token, hop_token
from heed_core.settle import settle_item
from heed_core.turn import TokenIn, plan_turn
from heed_core.work import UrlRecord, WorkItem

NOW = 1_796_025_600.0  # 2026-12-01T08:00:00Z
HOST = "http://news.example:80"
SITE = "http://news.example"
OTHER = "http://cdn.example:80"
AUBE: Profile = load_profile_data({"extends": "aubebot", "politeness": {"min_delay_s": 2.0}})


def _robots(body: str = "User-agent: *\nAllow: /\n", *, exp: float = NOW + 600) -> dict[str, Any]:
    outcome = robots_from_response(200, None, body.encode(), RobotsFetchPolicy.from_mapping(AUBE.get("robots")))
    # (a copy's stamp says which read it was: each body its own, as two reads of a host would be)
    return {"exp": exp, "stamp": NOW - 10 - len(body), "rec": outcome.to_dict()}


def item(path: str = "/feed.xml", purpose: str = "feed", *, round_start: float = NOW - 60, **kw: Any) -> WorkItem:
    return WorkItem(url=SITE + path, purpose=purpose, task="feed", source_id="s1", source_url=SITE + "/feed.xml",
                    round_id="r1", round_start=round_start, **kw)


@dataclass
class Snap:
    """A host's snapshot, said in the few words a case needs."""

    robots: dict[str, Any] | None = field(default_factory=_robots)
    next_allowed: float = 0.0
    stopped_until: float = 0.0
    owner: str | None = None
    lease_until: float = 0.0
    recent: dict[str, list[Any]] = field(default_factory=dict)
    hop: dict[str, Any] | None = None
    blocked: str | None = None
    purged_at: float = 0.0
    corrupt: tuple[str, ...] = ()
    version: int = 3

    def view(self, frontier: list[WorkItem] = ()) -> HostView:  # type: ignore[assignment]
        state: dict[str, Any] = {"pace": {"na": self.next_allowed, "su": self.stopped_until, "sr": "429"},
                                 "q": [i.to_compact() for i in frontier], "rec": self.recent}
        if self.robots:
            state["rob"] = self.robots
        if self.hop:
            state["hop"] = self.hop
        return HostView.from_record(HostRecord(host=HOST, version=self.version, owner=self.owner,
                                               lease_until=self.lease_until, state=state, blocked=self.blocked,
                                               purged_at=self.purged_at, corrupt=self.corrupt))


# (case, the snapshot, the work the token brings) -> (what the plan asks for, why, the skips' reasons)
PLANS: list[tuple[str, Snap, list[WorkItem], tuple[str | None, str, list[str]]]] = [
    ("a host never seen: robots.txt first (COMMON-02)", Snap(robots=None, version=0), [item()],
     (SITE + "/robots.txt", "", [])),
    ("robots.txt allows, the gap is over: the item", Snap(), [item()], (SITE + "/feed.xml", "", [])),
    ("the gap is not over: wait for it (COMMON-05)", Snap(next_allowed=NOW + 1.5), [item()], (None, "gap", [])),
    ("another turn holds the host: wait for its lease", Snap(owner="other", lease_until=NOW + 30), [item()],
     (None, "lease_taken", [])),
    ("the host was stopped (SPRING-05)", Snap(stopped_until=NOW + 3600), [item()], (None, "no_work", ["host_stopped"])),
    ("blocked by the operator (COMMON-08)", Snap(blocked="asked by mail"), [item()],
     (None, "no_work", ["blocked_by_operator"])),
    ("robots.txt says no", Snap(robots=_robots("User-agent: *\nDisallow: /\n")), [item()],
     (None, "no_work", ["robots_disallowed"])),
    ("work made before its domain was purged (COMMON-08)", Snap(purged_at=NOW - 30), [item()],
     (None, "no_work", ["purged"])),
    ("work made after the purge goes on", Snap(purged_at=NOW - 120), [item()], (SITE + "/feed.xml", "", [])),
    ("a damaged item: said once, the host goes on", Snap(corrupt=("host state: bad zlib",)), [item()],
     (SITE + "/feed.xml", "", ["corrupt_state"])),
    ("robots.txt redirected to another host: that host's work (COMMON-06)",
     Snap(robots=None, hop={"url": "http://cdn.example/robots.txt", "hops": 1, "exp": NOW + 3000}), [item()],
     (None, "robots_hop", [])),
    ("an article read once is never read again (AUBE-03)",
     Snap(recent={SITE + "/a/1": [NOW - 900, "article", "s1", 1]}), [item("/a/1", "article", depth=1)],
     (None, "no_work", ["already_read"])),
    ("an article whose read failed is asked for again (AUBE-03)",
     Snap(recent={SITE + "/a/1": [NOW - 900, "article", "s1", 0]}), [item("/a/1", "article", depth=1)],
     (SITE + "/a/1", "", [])),
    ("a feed read within its cadence waits for the next cycle (AUBE-08)",
     Snap(recent={SITE + "/feed.xml": [NOW - 100, "feed", "s1", 0]}), [item()], (None, "no_work", ["seen_recently"])),
    ("the same read's retry is not the next cycle's read (SPRING-06)",
     Snap(recent={SITE + "/feed.xml": [NOW - 100, "feed", "s1", 0]}), [item(attempts=1)],
     (SITE + "/feed.xml", "", [])),
]


@pytest.mark.parametrize("case, snap, work, expected", PLANS, ids=[c for c, *_ in PLANS])
def test_plan_turn_table(case: str, snap: Snap, work: list[WorkItem], expected: tuple[str | None, str, list[str]]
                         ) -> None:
    plan = plan_turn(AUBE, snap.view(), TokenIn(HOST, "tok-1", tuple(work)), NOW)
    url, why, reasons = expected
    assert (plan.request.url if plan.request else None) == url, case
    if why:
        assert plan.why == why, case
    assert [s.reason for s in plan.skips] == reasons, case


def test_a_plan_never_changes_its_snapshot() -> None:
    view = Snap(corrupt=("x",)).view()
    before = view.copy()
    plan_turn(AUBE, view, TokenIn(HOST, "tok-1", (item(),)), NOW)
    assert view == before


def test_a_robots_hop_to_another_host_is_a_token_for_it_handed_once() -> None:
    snap = Snap(robots=None, hop={"url": "http://cdn.example/robots.txt", "hops": 1, "exp": NOW + 3000})
    plan = plan_turn(AUBE, snap.view(), TokenIn(HOST, "tok-1", (item(),)), NOW)
    (token,) = plan.tokens
    assert token.host == OTHER and token.items[0].ctx["hop_for"] == HOST and plan.request is None
    # handed already: the next turn waits for the answer, it does not hand it again
    again = plan_turn(AUBE, plan.view, TokenIn(HOST, "tok-2"), NOW + 5)
    assert again.tokens == [] and again.why == "robots_hop"


def test_the_hop_on_the_other_host_is_its_request_under_its_gap_and_the_answer_goes_back() -> None:
    src = Snap(robots=None, hop={"url": "http://cdn.example/robots.txt", "hops": 1, "exp": NOW + 3000})
    (token,) = plan_turn(AUBE, src.view(), TokenIn(HOST, "tok-1", (item(),)), NOW).tokens
    other = HostView.from_record(HostRecord(host=OTHER, state={"pace": {"na": NOW + 1.0}}))
    waiting = plan_turn(AUBE, other, TokenIn(OTHER, token.tok, token.items), NOW)
    assert waiting.request is None and waiting.why == "gap"  # the other host's own gap
    plan = plan_turn(AUBE, other, TokenIn(OTHER, token.tok, token.items), NOW + 2)
    assert plan.request is not None and plan.role == "hop" and plan.request.url == "http://cdn.example/robots.txt"
    assert plan.item is not None
    got = FetchResult(url="http://cdn.example/robots.txt", status=200, body=b"User-agent: *\nDisallow: /x/\n",
                      t_start=NOW + 2, t_end=NOW + 2.1)
    answer = answer_token(plan.item, got)
    assert answer.host == HOST
    # back home, the answer is settled as if this host had made the request: the item goes on
    home = plan_turn(AUBE, plan_turn(AUBE, src.view(), TokenIn(HOST, "tok-1", (item(),)), NOW).view,
                     TokenIn(HOST, answer.tok, answer.items), NOW + 3)
    assert home.request is not None and home.request.url == SITE + "/feed.xml"
    assert home.view.robots is not None and home.view.robots_hop is None


def test_hop_tokens_are_deterministic() -> None:
    view = Snap(robots=None, hop={"url": "http://cdn.example/robots.txt", "hops": 1, "exp": NOW + 3000}).view()
    assert hop_token(view, "http://cdn.example/robots.txt", 1, item()) == hop_token(
        view, "http://cdn.example/robots.txt", 1, item())


# --- settle ------------------------------------------------------------------------------------------

def _result(status: int | None, body: bytes = b"", *, headers: tuple[tuple[str, str], ...] = (),
            error: str | None = None) -> FetchResult:
    return FetchResult(url=SITE + "/a/1", status=status, headers=headers, body=body, t_start=NOW, t_end=NOW + 0.5,
                       error=error)


ARTICLE = item("/a/1", "article", depth=1)
PAGE = b"<!doctype html><title>A</title><main><p>Testo dell'articolo.</p></main>"
# (case, the answer) -> (the item back in the frontier?, the recent entry's read flag, skips' reasons)
SETTLES: list[tuple[str, FetchResult, tuple[bool, bool, list[str]]]] = [
    ("200: read, gone from the frontier", _result(200, PAGE, headers=(("Content-Type", "text/html"),)),
     (False, True, [])),
    ("503 with a retry left: back for later today, not a read (SPRING-06, AUBE-03)", _result(503), (True, False, [])),
    ("no answer at all: the same", _result(None, error="timeout"), (True, False, [])),
    ("404: an answer (a read), not retried", _result(404), (False, True, ["http_404"])),
]


@pytest.mark.parametrize("case, result, expected", SETTLES, ids=[c for c, *_ in SETTLES])
def test_settle_item_table(case: str, result: FetchResult, expected: tuple[bool, bool, list[str]]) -> None:
    view = Snap().view([ARTICLE])
    out = settle_item(AUBE, view, ARTICLE, result, 2.0, NOW + 0.5)
    back, read, reasons = expected
    assert any(i.url == ARTICLE.url for i in view.frontier) is back, case
    assert recent_read(view.recent.get(ARTICLE.url)) is read, case
    # the gap counts from the request's end, whatever the answer (COMMON-05)
    assert view.pacing.next_allowed >= NOW + 0.5 + 2.0
    assert [s[1] for s in out.skips] == reasons, case


def test_settle_remembers_a_feeds_reported_items_in_the_host() -> None:
    feed = (b'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
            b"<item><title>a</title><link>http://news.example/a/1</link><description>" + b"x" * 700 +
            b"</description></item></channel></rss>")
    view = Snap().view([item()])
    answer = replace(_result(200, feed, headers=(("Content-Type", "application/rss+xml"),)), url=SITE + "/feed.xml")
    out = settle_item(AUBE, view, item(), answer, 2.0, NOW + 0.5)
    (rid,) = [r for _, r, _ in out.events]
    assert view.seen["s1"] == [rid]
    # the next read of the same feed, even by a token made before this commit, reports nothing again
    again = Snap().view([item(round_start=NOW)])
    again.seen = dict(view.seen)
    out2 = settle_item(AUBE, again, item(round_start=NOW), answer, 2.0, NOW + 900)
    assert out2.events == []


def test_a_feeds_articles_leave_the_feeds_memory_of_reported_items_behind() -> None:
    # GIVEN a feed read whose item carries its source's reported items (a round's token does)
    feed = (b'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
            b"<item><title>a</title><link>http://news.example/a/1</link><description>Short.</description></item>"
            b"</channel></rss>")
    read = item(ctx={"si": [f"{n:016x}" for n in range(200)]})
    answer = replace(_result(200, feed, headers=(("Content-Type", "application/rss+xml"),)), url=SITE + "/feed.xml")
    out = settle_item(AUBE, Snap().view([read]), read, answer, 2.0, NOW + 0.5)
    # THEN its article goes to the frontier without them (they were 4 KB of every pending article)
    (article,) = [c.item for c in out.candidates]
    assert article.purpose == "article" and article.ctx == {"title": "a"}
    assert "si" not in article.to_compact().get("c", {})


def test_a_record_of_a_failed_read_is_no_read() -> None:
    from heed_core.hoststate import was_read
    assert [was_read(s) for s in (200, 304, 404, 410, 403, 429, 500, 503, None)] == [
        True, True, True, True, True, False, False, False, False]
    assert UrlRecord(url=SITE, last_fetched=NOW, last_status=503).last_status == 503

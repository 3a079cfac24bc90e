"""A site owner's slower pace (issue 37): a floor under the host's gap, kept in the host's state,
that the core's plan and settlement honour on every request, and that never makes one faster."""
from __future__ import annotations

from typing import Any

from heed_core import politeness
from heed_core.hoststate import HostRecord, HostView
from heed_core.ports import FetchResult
from heed_core.profile import load_profile_data
from heed_core.robots_policy import RobotsFetchPolicy, robots_from_response
from heed_core.settle import settle_item
from heed_core.turn import TokenIn, host_gap, plan_turn
from heed_core.work import WorkItem

NOW = 1_796_025_600.0
HOST = "http://news.example:80"
AUBE = load_profile_data({"extends": "aubebot", "politeness": {"min_delay_s": 2.0}})


def _view(floor: float, next_allowed: float = 0.0) -> HostView:
    robots = robots_from_response(200, None, b"User-agent: *\nAllow: /\n",
                                  RobotsFetchPolicy.from_mapping(AUBE.get("robots")))
    item = WorkItem(url="http://news.example/feed.xml", purpose="feed", task="feed", source_id="s1",
                    source_url="http://news.example/feed.xml", round_id="r1", round_start=NOW - 60)
    state: dict[str, Any] = {"pace": {"na": next_allowed, "fl": floor}, "q": [item.to_compact()],
                             "rob": {"exp": NOW + 600, "stamp": NOW - 20, "rec": robots.to_dict()}}
    return HostView.from_record(HostRecord(host=HOST, version=2, state=state))


def test_the_floor_is_kept_in_the_hosts_state_and_read_back() -> None:
    view = _view(300.0)
    assert view.pacing.floor_s == 300.0
    assert view.state_blob(NOW)["pace"]["fl"] == 300.0
    assert "fl" not in _view(0.0).state_blob(NOW)["pace"]  # none: nothing written (old states read the same)


def test_a_request_under_a_floor_begins_a_gap_of_the_floor() -> None:
    view = _view(300.0)
    plan = plan_turn(AUBE, view, TokenIn(HOST, "t1"), NOW)
    assert plan.request is not None and plan.delay == 300.0
    after = politeness.after_request(view.pacing, AUBE.politeness, NOW + 1, 2.0)
    assert after.next_allowed == NOW + 1 + 300.0 + AUBE.politeness.clock_skew_margin_s
    assert host_gap(AUBE, view, NOW) == 300.0
    # the settlement of its answer writes that gap too
    assert plan.item is not None
    answer = FetchResult(url=plan.item.url, status=200, body=b"<rss/>", t_start=NOW, t_end=NOW + 1)
    v = plan.view.copy()
    settle_item(AUBE, v, plan.item, answer, plan.delay, NOW + 1)
    assert v.pacing.next_allowed >= NOW + 1 + 300.0


def test_a_floor_below_the_bots_own_gap_changes_nothing() -> None:
    view = _view(0.5)
    plan = plan_turn(AUBE, view, TokenIn(HOST, "t1"), NOW)
    assert plan.delay == 2.0  # never faster than the profile
    after = politeness.after_request(view.pacing, AUBE.politeness, NOW, 2.0)
    assert after.next_allowed == NOW + 2.0 + AUBE.politeness.clock_skew_margin_s


def test_a_host_still_within_its_floor_waits() -> None:
    view = _view(300.0, next_allowed=NOW + 250)
    plan = plan_turn(AUBE, view, TokenIn(HOST, "t1"), NOW)
    assert plan.request is None and plan.why == "gap" and plan.wait is not None and plan.wait > 240

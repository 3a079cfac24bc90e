"""`heed serve`'s default concurrency follows the work (issue 34): with sites that take their time,
more requests are in flight than the old fixed pool of 16 threads allowed, with no flag, and
every gap is still kept, end to start."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.serve import FeedWeb, Serve, gaps, serve_profile

GAP = 0.5
HOSTS = 30
SLOW_S = 0.8  # each article answers this late


@pytest.fixture
def web() -> Iterator[FeedWeb]:
    w = FeedWeb(HOSTS, 2, SLOW_S).start()
    yield w
    w.stop()


def _serve_once(web: FeedWeb, tmp_path: Path) -> Serve:
    """`heed serve --once` in one process, its defaults otherwise, on ``web``'s feeds, run to its end."""
    bot = serve_profile(tmp_path / "bot.yaml", GAP)
    serve = Serve(bot, tmp_path / "state", ["--once", "--quiet", "--workers", "1", "--patience", "2",
                                             "--sources", str(web.sources_file(tmp_path / "s.yaml"))]).start()
    try:
        assert serve.wait(120) == 0, serve.text()[-3000:]
    finally:
        serve.stop_group()
    return serve


def test_slow_sites_get_more_requests_in_flight_and_every_gap_is_kept(web: FeedWeb, tmp_path: Path) -> None:
    # GIVEN 30 feed sites whose articles answer 0.8 s late, and `heed serve --once` in one process
    # with its defaults (no --threads)
    serve = _serve_once(web, tmp_path)
    # THEN every page was asked once
    log = web.log()
    assert len(log) == HOSTS * 4, serve.text()[-3000:]
    # and the articles of all 30 sites waited on their sites at once: more than the 16 turns
    # the old fixed pool ran, as many as the hosts due
    pool = [e for e in serve.lines() if e.get("event") == "threads"]
    assert len(pool) == 1 and pool[0]["in_flight"] > 16, pool
    assert pool[0]["bound"] in ("memory", "RLIMIT_NOFILE", "MAX_TURNS")
    # and no site saw two requests closer than the gap, end to start
    seen = [g for per_host in gaps(log).values() for g in per_host]
    assert seen and min(seen) >= GAP - 0.001


def test_a_turn_comes_out_early_and_its_request_leaves_when_its_host_is_due(tmp_path: Path) -> None:
    # GIVEN 4 feed sites that answer at once, 3 articles each, and `heed serve --once` with its
    # defaults: a host's token comes out of its hide LEAD_S before its host is due
    web = FeedWeb(4, 3).start()
    try:
        serve = _serve_once(web, tmp_path)
        log = web.log()
    finally:
        web.stop()
    # THEN every page was asked once
    assert len(log) == 4 * 5, serve.text()[-3000:]
    # and the turns after the first came early: planned for when their host was due, their
    # requests connected and marked, then held until then (robots.txt, the feed, 3 articles:
    # 4 of each host's 5 requests follow a gap)
    pool = [e for e in serve.lines() if e.get("event") == "threads"]
    assert len(pool) == 1 and pool[0]["held"] >= 4 * 3, pool
    # and held they were: no site saw two requests closer than the gap, end to start
    seen = [g for per_host in gaps(log).values() for g in per_host]
    assert len(seen) == 4 * 4 and min(seen) >= GAP - 0.001, sorted(seen)[:4]

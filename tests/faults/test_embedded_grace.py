"""`heed serve` stopped (SIGTERM) while a request outlives the grace (issue 21): it exits 0 once
the grace is over, not when the request ends, with no traceback; its stop line says that turns were
cut; the next start takes the cut page's token back and reads the page, its event put once."""
from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from heed.demo.web import Hit, RecordingServer, Route, Site

from tests.support.serve import Serve, events, feed_routes, serve_profile

GAP = 0.2
LATENCY = 3.0  # the article answers this late: far past the grace
GRACE = 0.5
ARRIVED = threading.Event()  # the article's request reached the site


def _slow_article(hit: Hit) -> str:
    ARRIVED.set()
    time.sleep(LATENCY)
    return "<!doctype html><html><head><title>A0</title></head><body><main><p>Text.</p></main></body></html>"


@pytest.fixture
def site() -> Iterator[RecordingServer]:
    ARRIVED.clear()
    routes = {**feed_routes(1), "/a/0": Route(body=_slow_article)}
    server = RecordingServer(Site(name="slow", routes=routes), ip="127.0.1.40").start()
    yield server
    server.stop()


@pytest.mark.slow
def test_sigterm_with_a_request_past_the_grace_exits_at_the_grace_and_the_next_start_reads_the_page(
        site: RecordingServer, tmp_path: Path) -> None:
    # GIVEN heed serve (one process) with one feed whose only article answers in 3 s
    bot = serve_profile(tmp_path / "bot.yaml", GAP)
    state = tmp_path / "state"
    sources = tmp_path / "s.yaml"
    sources.write_text(yaml.safe_dump({"sources": [{"id": "f", "url": f"{site.base_url}/feed.xml", "kind": "feed"}]}))
    first = Serve(bot, state, ["--quiet", "--workers", "1", "--grace", str(GRACE), "--sources", str(sources)]).start(0)
    try:
        first.wait_started()
        assert ARRIVED.wait(30), first.text()[-3000:]
        # WHEN it is told to stop while that request is in flight
        assert first.proc is not None and first.proc.poll() is None, first.text()[-3000:]
        t0 = time.monotonic()
        first.proc.send_signal(signal.SIGTERM)
        code = first.wait(30)
        took = time.monotonic() - t0
    finally:
        first.stop_group()
    # THEN it exited 0 at the grace, well before the request would have ended, with no traceback
    assert code == 0, first.text()[-3000:]
    assert took < LATENCY - 0.5, took
    assert "Traceback" not in first.text(), first.text()[-3000:]
    # AND its stop line says turns were cut (their tokens come back at the next start)
    stop = [e for e in first.lines() if e.get("event") == "stop"]
    assert stop and stop[-1].get("cut") is True, first.lines()[-3:]
    assert not [e for e in events(state) if e["detail_type"] == "article.read"]

    # WHEN, the site done with the cut request, heed serve runs again to the end of the work
    assert [r.path for r in site.log(wait_s=LATENCY + 2)] == ["/robots.txt", "/feed.xml", "/a/0"]
    second = Serve(bot, state, ["--quiet", "--workers", "1", "--once", "--patience", "3"]).start(1)
    try:
        assert second.wait(60) == 0, second.text()[-3000:]
    finally:
        second.stop_group()
    # THEN the cut page's token was taken back and the page read, its event put once
    assert any(e.get("event") == "resumed" for e in second.lines()), second.lines()[:5]
    assert [r.path for r in site.log()].count("/a/0") == 2
    articles = [e for e in events(state) if e["detail_type"] == "article.read"]
    assert len(articles) == 1, [e["detail_type"] for e in events(state)]
    assert "Traceback" not in second.text()

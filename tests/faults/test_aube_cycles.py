"""AubeBot over eight 15-minute cycles, with a feed and an article that each answer 503 once.

AubeBot's retry backoff (900 s) equals its robots.txt cache life (900 s): the retry of a failed
item comes when the copy of robots.txt is exactly as old as the work. Once, every such turn found
the copy it had just read already expired and read robots.txt again, for ever."""
from __future__ import annotations

from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from heed_core.profile import load_profile_data
from heed_core.work import Source

from heed.demo.web import RecordingServer, Route, Site
from heed.outputs import read_jsonl

CYCLE = 900.0
START = datetime.fromisoformat("2026-12-01T10:00:00+00:00").timestamp()


def _once_then(server_ref: list[RecordingServer], path: str, then: Route) -> Route:
    """A route that answers 503 the first time, then as ``then``."""
    def first(hit: Any) -> str:
        server_ref[0].set_route(path, then)
        return "<!doctype html><title>503</title>"
    return Route(body=first, status=503)


@pytest.mark.slow
def test_aube_08_12_eight_cycles_one_robots_and_one_feed_read_a_cycle_and_a_failed_article_retried_once(
        tmp_path: Path) -> None:
    ref: list[RecordingServer] = []
    items = "".join(f"<item><title>Notizia {i}</title><link>{{{{base}}}}/n/{i}</link><guid>{{{{base}}}}/n/{i}</guid>"
                    f"<description>Breve.</description></item>" for i in range(2))
    feed = Route(body=f'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><link>{{{{base}}}}/</link>'
                      f"{items}</channel></rss>", content_type="application/rss+xml", conditional=True)
    article = Route(body="<!doctype html><html><head><title>N</title></head>"
                         "<body><main><p>Testo.</p></main></body></html>")
    site = Site(name="aube", routes={"/robots.txt": Route(body="User-agent: *\nAllow: /\n", content_type="text/plain"),
                                     "/feed.xml": _once_then(ref, "/feed.xml", feed),
                                     "/n/0": article, "/n/1": _once_then(ref, "/n/1", article)})
    server = RecordingServer(site, ip="127.0.0.199").start()
    ref.append(server)
    try:
        # AubeBot's numbers that make the case (TTL = backoff = cycle), with a short gap
        profile = load_profile_data({"extends": "aubebot", "politeness": {"min_delay_s": 0.3}})
        assert profile.get("robots.cache_ttl_s") == profile.get("responses.retry_backoff_s") == CYCLE
        from heed.local.runtime import LocalRun

        run = LocalRun(profile, [Source("aube", server.base_url + "/feed.xml", "feed")], start=START,
                       until=START + 7 * CYCLE, out_dir=tmp_path, allow_private=True)
        summary = run.run()
        reqs = read_jsonl(tmp_path / "requests.jsonl")

        def t(r: dict[str, Any]) -> float:
            return datetime.fromisoformat(r["t_start"].replace("Z", "+00:00")).timestamp()

        cycle = Counter()
        for r in reqs:
            cycle[(int((t(r) - START) // CYCLE), r["purpose"])] += 1
        # THEN eight rounds ran and the run ended (nothing left deferred)
        assert summary["rounds"] == 8 and summary["deferred_at_end"] == 0
        # robots.txt at most once a cycle (AUBE-12), the feed once a cycle (AUBE-08)
        assert max(n for (c, p), n in cycle.items() if p == "robots") == 1, cycle
        feed_cycles = [c for (c, p), n in cycle.items() if p == "feed" for _ in range(n)]
        assert sorted(feed_cycles) == list(range(8)), cycle
        # the failed article was retried once, the other read once (AUBE-03: then never again)
        paths = Counter(r["url"].removeprefix(server.base_url) for r in reqs)
        assert paths["/n/1"] == 2 and paths["/n/0"] == 1
        assert [r["status"] for r in reqs if r["url"].endswith("/n/1")] == [503, 200]
        # and the feed's 503 was a failed read, retried: the cycle after it read the feed again
        assert [r.get("status") for r in reqs if r["purpose"] == "feed"][:2] == [503, 200]
    finally:
        server.stop()

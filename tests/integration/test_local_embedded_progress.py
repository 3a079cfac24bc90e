"""`heed local run` on the embedded engine: its progress line never outlives the run's database."""
from __future__ import annotations

import threading
import time
from pathlib import Path

from heed_core.profile import load_profile_data
from heed_core.work import Source

from heed_embedded.queue import WorkQueue

from heed.demo.web import RecordingServer, Site
from heed.local.embedded import EmbeddedRun

from tests.support.serve import feed_routes


def test_the_progress_line_is_drawn_before_the_database_closes(tmp_path: Path, monkeypatch):
    # GIVEN a site whose articles take 0.4 s each (the run lasts past the first progress line)
    server = RecordingServer(Site(name="slow", routes=feed_routes(3, latency_s=0.4)), ip="127.0.9.41").start()
    # AND a run whose progress thread is slow to read the queue's counts (a busy machine)
    profile = load_profile_data({"extends": "aubebot", "politeness": {"min_delay_s": 0.2}})
    real = WorkQueue.counts
    readers: set[threading.Thread] = set()

    def slow_counts(self):
        if threading.current_thread() is not threading.main_thread():
            readers.add(threading.current_thread())
            time.sleep(1.0)
        return real(self)

    monkeypatch.setattr(WorkQueue, "counts", slow_counts)
    failures: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: failures.append(args.exc_value))
    lines: list[str] = []
    t0 = 1_800_000_000.0
    # WHEN it runs a round and ends
    try:
        summary = EmbeddedRun(profile, [Source("f", f"{server.base_url}/feed.xml", "feed")], start=t0, until=t0,
                              out_dir=tmp_path / "out", allow_private=True, progress=lines.append,
                              patience_s=1.0).run()
    finally:
        server.stop()
    for t in readers:
        t.join(5.0)
    # THEN the thread drew its line before the database closed: no error in it, the run's summary whole
    assert failures == []
    assert readers and summary["bot"] == "aubebot" and lines
    assert len(server.log()) == 5  # robots.txt, the feed, three articles

"""`heed serve` as a user runs it, in a subprocess, on a state directory, against recording sites.

``FeedWeb`` is a few feed sites whose articles answer slowly (a kill lands mid-request often);
``Serve`` starts `heed serve` and knows when it is at work (its ``start`` log line); ``events``
reads a state directory's events table (what the drain delivered); ``gaps`` are the gaps each
site saw between two requests, end to start."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import yaml

from heed.demo.web import Hit, RecordingServer, RequestRecord, Route, Site

__all__ = ["FeedWeb", "Serve", "events", "feed_routes", "gaps", "serve_profile", "state_log"]

# The embedded engine's fault suites' loopback addresses (the faults suite has 127.0.0.180-199).
IPS = tuple(f"127.0.1.{n}" for n in range(10, 40))


def feed_routes(articles: int, latency_s: float = 0.0) -> dict[str, Route]:
    """A feed site's routes: robots.txt open to all, a feed of ``articles`` short items (answering
    304 when unchanged), and each item's article page (``latency_s`` late)."""
    items = "".join(f"<item><title>Story {i}</title><link>{{{{base}}}}/a/{i}</link><guid>{{{{base}}}}/a/{i}</guid>"
                    f"<description>Short {i}.</description></item>" for i in range(articles))
    feed = Route(body=f'<?xml version="1.0"?><rss version="2.0"><channel><title>F</title><link>{{{{base}}}}/</link>'
                      f"{items}</channel></rss>", content_type="application/rss+xml", conditional=True)
    return {"/robots.txt": Route(body="User-agent: *\nAllow: /\n", content_type="text/plain"), "/feed.xml": feed,
            **{f"/a/{i}": _article(i, latency_s) for i in range(articles)}}


def _article(i: int, latency_s: float) -> Route:
    text = (f"<!doctype html><html><head><title>A{i}</title></head><body><main><article><h1>A{i}</h1>"
            f"<p>Text of article {i}. {'Lorem ipsum. ' * 20}</p></article></main></body></html>")
    if not latency_s:
        return Route(body=text)

    def body(hit: Hit) -> str:
        time.sleep(latency_s)  # a request that takes a while: a kill lands inside one often
        return text
    return Route(body=body)


@dataclass
class FeedWeb:
    """``hosts`` feed sites on the suite's addresses, ``articles`` short items each."""

    hosts: int
    articles: int
    latency_s: float = 0.0
    servers: list[RecordingServer] = field(default_factory=list)

    def start(self, first_ip: int = 0) -> FeedWeb:
        for h in range(self.hosts):
            routes = feed_routes(self.articles, self.latency_s)
            self.servers.append(RecordingServer(Site(name=f"k{h}", routes=routes), ip=IPS[first_ip + h]).start())
        return self

    def stop(self) -> None:
        for s in self.servers:
            s.stop()

    def log(self) -> list[RequestRecord]:
        return sorted((r for s in self.servers for r in s.log()), key=lambda r: r.t_start)

    def sources_file(self, path: Path) -> Path:
        path.write_text(yaml.safe_dump({"sources": [{"id": f"feed{h}", "url": f"{s.base_url}/feed.xml", "kind": "feed"}
                                                    for h, s in enumerate(self.servers)]}), encoding="utf-8")
        return path


def serve_profile(path: Path, gap_s: float) -> Path:
    """AubeBot's shape (feeds, the articles of short items, each read once ever) with a small gap,
    its article caps wide, hosts side by side, and no schedule firing while a test runs (only the
    round a first start or --once begins)."""
    path.write_text(yaml.safe_dump({
        "extends": "aubebot",
        "politeness": {"min_delay_s": gap_s, "crawl_delay_cap_s": 1, "max_in_flight": None},
        "schedules": [{"expression": "cron(0 3 1 1 ? *)", "task": "feed"}],
        "tasks": {"feed": {"article_followup": {"per_source_per_window": 1000, "total_per_window": 10000}}},
    }), encoding="utf-8")
    return path


@dataclass
class Serve:
    """One `heed serve` process on ``state``; ``wait_started`` returns once it logged ``start``."""

    bot: Path
    state: Path
    args: Sequence[str] = ()
    proc: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None

    def start(self, n: int = 0) -> Serve:
        self.log_path = self.state.parent / f"serve-{n}.log"
        out = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "heed.cli", "serve", "--bot", str(self.bot), "--state", str(self.state),
             "--allow-private", *self.args], stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        out.close()
        return self

    def lines(self) -> list[dict[str, Any]]:
        assert self.log_path is not None
        out = []
        for line in self.log_path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
        return out

    def text(self) -> str:
        assert self.log_path is not None
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def wait_started(self, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if any(e.get("event") == "start" for e in self.lines()):
                return
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise AssertionError(f"heed serve exited {self.proc.returncode}:\n{self.text()[-3000:]}")
            time.sleep(0.02)
        raise AssertionError(f"heed serve did not start in {timeout_s} s:\n{self.text()[-3000:]}")

    def kill(self) -> float:
        """SIGKILL the serving process (only it: its workers must die with it); the moment it died."""
        assert self.proc is not None
        at = time.time()
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        return at

    def wait(self, timeout_s: float = 120.0) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout_s)

    def stop_group(self) -> None:
        """Whatever is left of its process group (a test that failed half-way)."""
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def events(state: Path) -> list[dict[str, Any]]:
    """Every event the state directory's events table holds, in order."""
    from heed_embedded.results import events_since
    from heed_embedded.state import open_state

    st = open_state(state, create=False)
    try:
        out: list[dict[str, Any]] = []
        while True:
            batch = events_since(st.db, int(out[-1]["seq"]) if out else 0)
            if not batch:
                return out
            out += batch
    finally:
        st.close()


def state_log(state: Path, table: str) -> list[dict[str, Any]]:
    """The request log (``requests``) or skip log (``skips``) of a state directory, in order."""
    from heed_embedded.state import open_state

    st = open_state(state, create=False)
    try:
        with st.db.read(table) as c:
            return [json.loads(r) for (r,) in c.execute(f"SELECT record FROM {table} ORDER BY id")]
    finally:
        st.close()


def gaps(log: Sequence[RequestRecord]) -> dict[str, list[float]]:
    """Per site, the gaps between two requests it saw (end of one to the start of the next)."""
    by_host: dict[str, list[RequestRecord]] = {}
    for r in log:
        by_host.setdefault(r.host, []).append(r)
    return {h: [b.t_start - a.t_end for a, b in pairwise(sorted(rs, key=lambda r: r.t_start))]
            for h, rs in by_host.items()}

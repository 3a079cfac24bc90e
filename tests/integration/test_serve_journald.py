"""heed serve under systemd (issue 34): to journald (JOURNAL_STREAM names its stdout) its log lines
carry no time stamp of their own and say their priority, --quiet leaves out the line of each
request, and the progress line's counts go on from the state's after a restart."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.serve import FeedWeb

_PROGRESS = re.compile(r": rounds (\d+) \| requests (\d+) \|.*\| events (\d+) \|")


@pytest.fixture
def web() -> Iterator[FeedWeb]:
    sites = FeedWeb(hosts=2, articles=3).start(first_ip=20)
    yield sites
    sites.stop()


def _serve(tmp_path: Path, web: FeedWeb, n: int, *args: str, journald: bool = False) -> tuple[list[str], list[str]]:
    bot = tmp_path / "bot.yaml"
    bot.write_text(yaml.safe_dump({
        "extends": "aubebot", "politeness": {"min_delay_s": 0.1, "crawl_delay_cap_s": 1},
        "schedules": [{"expression": "cron(0 3 1 1 ? *)", "task": "feed"}],
        # each run reads the feeds again (AubeBot waits 15 minutes)
        "tasks": {"feed": {"min_read_interval_s": 0,
                           "article_followup": {"per_source_per_window": 1000, "total_per_window": 10000}}},
    }), encoding="utf-8")
    out, err = tmp_path / f"out-{n}", tmp_path / f"err-{n}"
    env = {k: v for k, v in os.environ.items() if k != "JOURNAL_STREAM"}
    with out.open("wb") as stdout, err.open("wb") as stderr:
        if journald:  # as systemd starts a service: its stdout a stream to journald, named in JOURNAL_STREAM
            st = os.fstat(stdout.fileno())
            env["JOURNAL_STREAM"] = f"{st.st_dev}:{st.st_ino}"
        proc = subprocess.run([sys.executable, "-m", "heed.cli", "serve", "--bot", str(bot), "--state",
                               str(tmp_path / "state"), "--sources", str(web.sources_file(tmp_path / "s.yaml")),
                               "--once", "--allow-private", "--workers", "1", "--patience", "3", *args],
                              stdout=stdout, stderr=stderr, timeout=120, env=env)
    assert proc.returncode == 0, err.read_text(encoding="utf-8")[-3000:]
    return out.read_text(encoding="utf-8").splitlines(), err.read_text(encoding="utf-8").splitlines()


def _progress(lines: list[str]) -> list[tuple[int, int, int]]:
    return [(int(m[1]), int(m[2]), int(m[3])) for m in map(_PROGRESS.search, lines) if m]


def _records(lines: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines]


def test_under_journald_quiet_lines_without_time_stamps_and_counts_from_the_state(web: FeedWeb,
                                                                                  tmp_path: Path) -> None:
    # GIVEN a first run, outside systemd: a line per request, each with its time stamp
    out1, err1 = _serve(tmp_path, web, 1)
    first = _records(out1)
    assert all(r["t"].endswith("Z") for r in first)
    assert sum(r["event"] == "request" for r in first) == 10  # robots.txt, the feed, three articles: twice
    rounds1, requests1, events1 = _progress(err1)[-1]
    assert (rounds1, requests1) == (1, 10) and events1 > 0
    web_before = len(web.log())

    # WHEN it runs again as systemd runs it (stdout journald's), --quiet
    out2, err2 = _serve(tmp_path, web, 2, "--quiet", journald=True)
    # THEN each log line leaves the time to journald and begins with its priority, which journald takes
    assert out2 and all(line.startswith(("<6>{", "<4>{")) for line in out2), out2
    second = [json.loads(line[3:]) for line in out2]
    assert all("t" not in r for r in second)
    # AND --quiet leaves out the line of each request and skip, not the rounds, the start and the stop
    events = [r["event"] for r in second]
    assert "request" not in events and "skip" not in events
    assert {"start", "round", "stop"} <= set(events), events
    # AND the progress counts go on from the first run's: the state's totals, then this run's on top
    asked = len(web.log()) - web_before
    assert asked > 0
    progress = _progress(err2)
    assert progress[0][1] >= requests1 and progress[0][2] >= events1
    assert progress[-1][:2] == (rounds1 + 1, requests1 + asked)

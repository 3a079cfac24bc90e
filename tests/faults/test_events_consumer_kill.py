"""A consumer pulling results while `heed serve` crawls (issue 33): `heed events --consumer app
--follow` SIGKILLed at random moments and started again, while every log and export file under the
state directory is moved away (logrotate's way). No event is missed, and none is printed twice
but the lines of the batch a kill cut before its position moved."""
from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from heed.events_cli import BATCH

from tests.support.serve import FeedWeb, Serve, events, serve_profile

KILLS = 8


@pytest.fixture
def web() -> Iterator[FeedWeb]:
    w = FeedWeb(3, 20, 0.05).start(first_ip=24)
    yield w
    w.stop()


def _follow(state: Path, out: Path, *extra: str) -> subprocess.Popen[bytes]:
    with out.open("wb") as f:
        return subprocess.Popen([sys.executable, "-m", "heed.cli", "events", "--state", str(state), "--consumer", "app",
                                 "--json", *extra], stdout=f, stderr=subprocess.STDOUT)


def _ids(path: Path) -> list[str]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(str(json.loads(line)["id"]))
        except (ValueError, KeyError):
            pass  # a line a kill cut in two is not a line the consumer took
    return out


@pytest.mark.slow
def test_a_killed_consumer_misses_nothing_while_files_are_moved_under_it(web: FeedWeb, tmp_path: Path) -> None:
    # GIVEN heed serve crawling three feeds of twenty items (an article each)
    bot = serve_profile(tmp_path / "bot.yaml", 0.25)
    state = tmp_path / "state"
    crawl = Serve(bot, state, ["--quiet", "--once", "--patience", "3", "--sources",
                               str(web.sources_file(tmp_path / "sources.yaml"))]).start(0)
    rng = random.Random(33)
    outs: list[Path] = []
    try:
        crawl.wait_started()
        # WHEN a consumer follows the events and is SIGKILLed at random moments, started again each
        # time, while every file under the state directory but the database is moved away
        for n in range(KILLS):
            outs.append(tmp_path / f"consumer-{n}.jsonl")
            p = _follow(state, outs[-1], "--follow")
            time.sleep(rng.uniform(0.3, 1.2))
            p.send_signal(signal.SIGKILL)
            p.wait(10)
            for f in state.iterdir():
                if f.suffix == ".jsonl" or ".jsonl." in f.name:
                    f.rename(f.with_name(f"{f.name}.{n}"))
        assert crawl.wait(240) == 0, crawl.text()[-3000:]
    finally:
        crawl.stop_group()
    # AND once the crawl is over, the consumer is started once more and reads to the end
    outs.append(tmp_path / "consumer-last.jsonl")
    assert _follow(state, outs[-1]).wait(60) == 0

    # THEN every event of the events table was printed, in commit order
    table = [str(e["id"]) for e in events(state)]
    runs = [_ids(o) for o in outs]
    printed = [i for run in runs for i in run]
    assert len(table) > 40 and set(printed) == set(table)
    assert list(dict.fromkeys(printed)) == table
    # AND a line printed twice is only one of the last batch a killed run wrote (its position had
    # not moved yet), printed again first by the next run
    seen: list[str] = []
    for run in runs:
        again = [i for i in run if i in set(seen)]
        assert run[:len(again)] == again, "a repeat after new lines: a line printed twice that no kill explains"
        assert set(again) <= set(seen[-BATCH:])
        seen += run

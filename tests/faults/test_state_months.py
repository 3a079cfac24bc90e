"""A state directory an operator runs for months (issue 34): the request log is a table, not a file,
so logrotate's moves and deletions under the directory change no answer; a backup taken while
`heed serve` runs is served elsewhere without a page asked twice. Judged from the sites' logs."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.serve import FeedWeb, Serve, events, serve_profile, state_log

KEEP = {"heed.db", "heed.db-wal", "heed.db-shm", "heed.db-wlock", "heed-state.json", "serve.lock"}


@pytest.fixture
def web() -> Iterator[FeedWeb]:
    w = FeedWeb(3, 12, 0.05).start(first_ip=0)
    yield w
    w.stop()


def _heed(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "heed.cli", *argv], capture_output=True, text=True, timeout=120)


def _rotate(state: Path, n: int) -> int:
    """logrotate's way with every file but the database's own and the locks: moved away, or deleted."""
    touched = 0
    for f in list(state.iterdir()):
        if f.name in KEEP or not f.is_file():
            continue
        if n % 2:
            f.unlink()
        else:
            f.rename(state.parent / f"{f.name}.{n}")
        touched += 1
    return touched


@pytest.mark.slow
def test_files_moved_and_deleted_under_a_serving_state_change_no_answer(web: FeedWeb, tmp_path: Path) -> None:
    # GIVEN heed serve crawling three feeds of twelve items
    bot = serve_profile(tmp_path / "bot.yaml", 0.25)
    state = tmp_path / "state"
    crawl = Serve(bot, state, ["--quiet", "--once", "--patience", "3", "--sources",
                               str(web.sources_file(tmp_path / "sources.yaml"))]).start(0)
    touched = 0
    try:
        crawl.wait_started()
        # WHEN every file under its state directory is moved away or deleted, again and again, while it serves
        n = 0
        while crawl.proc is not None and crawl.proc.poll() is None:
            time.sleep(0.4)
            touched += _rotate(state, n)
            n += 1
        assert crawl.wait(10) == 0, crawl.text()[-3000:]
    finally:
        crawl.stop_group()
    assert touched > 3  # the export was there to move, again and again
    # THEN the audit of each host is every request its site logged, nothing missing
    log = web.log()
    for server in web.servers:
        run = _heed("audit", "--host", server.host, "--state", str(state), "--json")
        assert run.returncode == 0, run.stderr
        audited = [json.loads(line) for line in run.stdout.splitlines()]
        assert sorted(r["path"] for r in audited) == sorted(r.path for r in log if r.host == server.host)
    # AND explain of an article tells its request from the log
    article = f"http://{web.servers[0].host}/a/3"
    run = _heed("explain", article, "--state", str(state), "--json")
    assert run.returncode == 0, run.stderr
    history = json.loads(run.stdout)["history"]
    assert [h["record"] for h in history if h["record"] == "request"] == ["request"]
    assert any(h["record"] == "item" and h.get("detail_type") == "article.read" for h in history)
    # AND nothing was fetched twice, nor emitted twice
    assert max(Counter(f"{r.host}{r.path}" for r in log).values()) == 1
    ids = [e["id"] for e in events(state)]
    assert len(ids) == len(set(ids)) == 3 * 12 * 2
    assert len(state_log(state, "requests")) == len(log)


@pytest.mark.slow
def test_a_backup_of_a_serving_state_serves_elsewhere_without_asking_a_page_twice(web: FeedWeb, tmp_path: Path) -> None:
    # GIVEN heed serve that read the round's every article and serves on (waiting for its schedule)
    bot = serve_profile(tmp_path / "bot.yaml", 0.25)
    state = tmp_path / "state"
    crawl = Serve(bot, state, ["--quiet", "--sources", str(web.sources_file(tmp_path / "sources.yaml"))]).start(0)
    try:
        crawl.wait_started()
        deadline = time.monotonic() + 90
        while sum(1 for r in web.log() if r.path.startswith("/a/")) < 3 * 12 and time.monotonic() < deadline:
            time.sleep(0.2)
        # WHEN it is backed up while it runs, then the machine is lost
        run = _heed("state", "backup", "--state", str(state), str(tmp_path / "copy"), "--json")
        assert run.returncode == 0, run.stderr
        assert json.loads(run.stdout)["bytes"] > 0
        copied = time.time()
    finally:
        crawl.stop_group()
    before = len(web.log())
    # AND the copy serves a round of its own elsewhere
    again = Serve(bot, tmp_path / "copy", ["--quiet", "--once", "--patience", "3"]).start(1)
    try:
        assert again.wait(120) == 0, again.text()[-3000:]
    finally:
        again.stop_group()
    # THEN no page was asked again: the copy remembers what was read (a feed is not read again
    # before its cadence, AUBE-08; an article is read once ever, AUBE-04)
    after = web.log()[before:]
    assert not after, [f"{r.host}{r.path}" for r in after]
    assert max(Counter(f"{r.host}{r.path}" for r in web.log()).values()) == 1
    # AND the copy did run its round: it skipped each feed, saying why
    skipped = [s for s in state_log(tmp_path / "copy", "skips")
               if s["url"].endswith("/feed.xml") and s["wall"] > copied]
    assert len({s["url"] for s in skipped}) == 3
    # AND the copy answers as the original did
    info = json.loads(_heed("state", "info", "--state", str(tmp_path / "copy"), "--json").stdout)
    assert info["tables"]["requests"]["rows"] >= 3 * 12 and info["auto_vacuum"] == "incremental"

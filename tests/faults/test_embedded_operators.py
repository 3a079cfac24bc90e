"""Operator commands on a state directory while `heed serve` crawls it (issue 21): two commands at a
time, each a process of its own as a person types them, beside the serving process and its
workers: no command meets a lock error (SQLite's busy timeout waits for the writer), no write is
lost (every source added is listed, the block is kept), and a block takes effect on the host's
next request (the site's log: no request begins after the block command has returned, but the
one a turn had already begun)."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.serve import FeedWeb, Serve, serve_profile

GAP = 0.3
SOURCES = 6  # added by one command line each, while serve runs


@pytest.fixture
def web() -> Iterator[FeedWeb]:
    w = FeedWeb(3, 40, 0.05).start(first_ip=10)
    yield w
    w.stop()


def _heed(*argv: str) -> tuple[int, str, str, float]:
    p = subprocess.run([sys.executable, "-m", "heed.cli", *argv], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr, time.time()


@pytest.mark.slow
def test_two_operator_commands_beside_serve_lose_no_write_and_a_block_stops_the_next_request(
        web: FeedWeb, tmp_path: Path) -> None:
    # GIVEN heed serve crawling three feed sites of forty articles each, their gap 0.3 s
    bot = serve_profile(tmp_path / "bot.yaml", GAP)
    state = tmp_path / "state"
    serve = Serve(bot, state, ["--quiet", "--sources", str(web.sources_file(tmp_path / "s.yaml"))]).start()
    results: list[tuple[str, tuple[int, str, str, float]]] = []
    blocked_at: list[float] = []
    target = web.servers[0]
    try:
        serve.wait_started()
        while len(target.log()) < 4:  # at work on the host to be blocked
            time.sleep(0.05)

        # WHEN one person adds sources one by one and lists them, while another blocks a host
        # and reads the audit and the block list, each command as its own process
        def adder() -> None:
            for n in range(SOURCES):
                results.append(("add", _heed("sources", "add", f"http://127.0.1.99/feed{n}.xml", "--kind", "feed",
                                             "--id", f"added{n}", "--state", str(state), "--bot", str(bot))))
                results.append(("list", _heed("sources", "list", "--state", str(state), "--json")))

        def blocker() -> None:
            results.append(("audit", _heed("audit", "--host", target.host, "--state", str(state))))
            got = _heed("block", target.ip, "--reason", "asked us to stop", "--state", str(state))
            results.append(("block", got))
            blocked_at.append(got[3])
            for _ in range(3):
                results.append(("blocks", _heed("blocks", "--state", str(state), "--json")))
                results.append(("audit", _heed("audit", "--host", target.host, "--state", str(state))))

        threads = [threading.Thread(target=adder), threading.Thread(target=blocker)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        time.sleep(2 * GAP + 0.5)  # the host's next turns, had the block not held
        assert serve.proc is not None and serve.proc.poll() is None, serve.text()[-3000:]
        serve.proc.send_signal(signal.SIGTERM)
        assert serve.wait(60) == 0, serve.text()[-3000:]
    finally:
        serve.stop_group()

    # THEN every command succeeded, none met a lock
    for what, (code, _, err, _) in results:
        assert code == 0, (what, err)
        assert "locked" not in err and "busy" not in err, (what, err)
    assert "locked" not in serve.text()
    # AND no write was lost: every source added is kept, and the block
    code, out, err, _ = _heed("sources", "list", "--state", str(state), "--json")
    assert code == 0, err
    ids = {json.loads(line)["id"] for line in out.splitlines() if line.strip()}
    assert {f"added{n}" for n in range(SOURCES)} <= ids, ids
    assert len([i for i in ids if not i.startswith("added")]) == len(web.servers)
    code, out, err, _ = _heed("blocks", "--state", str(state), "--json")
    assert code == 0 and json.loads(out)["domain"] == target.ip, (out, err)
    # AND the blocked site saw no request begin after the block command returned (a turn that had
    # read the host before the block may end its one request)
    late = [r for r in target.log() if r.t_start > blocked_at[0]]
    assert len(late) <= 1, [(r.path, r.t_start - blocked_at[0]) for r in late]
    # AND the other sites were crawled on meanwhile
    assert all(len(s.log()) > len(target.log()) for s in web.servers[1:]), [len(s.log()) for s in web.servers]

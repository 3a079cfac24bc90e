"""What heed serve tells the journal (issue 34): no time stamp of its own where journald stamps
each line, one line per request only when asked for, and a progress line only when something
changed (at most one a minute while idle), its counts going on from the state's after a restart."""
from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from heed_embedded.console import BUSY_S, IDLE_S, KEEP_S, Progress, Totals, to_journal, totals_so_far
from heed_embedded.db import Database
from heed_embedded.serve import JsonLog


def _stream_id(path: Path) -> str:
    st = os.stat(path)
    return f"{st.st_dev}:{st.st_ino}"


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@pytest.fixture
def out(tmp_path: Path) -> Any:
    path = tmp_path / "stdout"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    yield path, fd
    os.close(fd)


def test_a_stream_is_journald_s_when_journal_stream_names_it(out: Any, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    path, fd = out
    monkeypatch.delenv("JOURNAL_STREAM", raising=False)
    assert not to_journal(fd)
    monkeypatch.setenv("JOURNAL_STREAM", _stream_id(path))
    assert to_journal(fd)
    (tmp_path / "other").write_text("")
    monkeypatch.setenv("JOURNAL_STREAM", _stream_id(tmp_path / "other"))  # a parent's, our output redirected
    assert not to_journal(fd)
    monkeypatch.setenv("JOURNAL_STREAM", "not-a-stream")
    assert not to_journal(fd)


def test_under_journald_a_log_line_has_no_time_stamp_of_its_own_and_says_its_priority(
        out: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    path, fd = out
    monkeypatch.setenv("JOURNAL_STREAM", _stream_id(path))
    log = JsonLog("mybot", fd)
    log("request", {"url": "https://a.example/"})
    log("transient", {"detail": "a timeout"})
    info, warning = _lines(path)
    assert info.startswith("<6>{") and warning.startswith("<4>{")  # journald takes the prefix as the priority
    for line in (info, warning):
        rec = json.loads(line[3:])
        assert "t" not in rec and rec["bot"] == "mybot"


def test_elsewhere_a_log_line_keeps_its_time_stamp(out: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    path, fd = out
    monkeypatch.delenv("JOURNAL_STREAM", raising=False)
    JsonLog("mybot", fd)("request", {"url": "https://a.example/"})
    [line] = _lines(path)
    rec = json.loads(line)
    assert rec["t"].endswith("Z") and rec["event"] == "request"


def test_quiet_leaves_out_the_line_of_each_request_and_skip_and_keeps_rounds_and_trouble(out: Any) -> None:
    path, fd = out
    log = JsonLog("mybot", fd, quiet=True)
    for event in ("request", "skip", "round", "transient", "stop"):
        log(event, {})
    assert [json.loads(line)["event"] for line in _lines(path)] == ["round", "transient", "stop"]


class _Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


_COUNTS = {"waiting": 0, "held": 0}


def _stats(**kw: int) -> dict[str, int]:
    return {"requests": 0, "skips": 0, "events": 0, "turns": 0, "failures": 0, "transient": 0, "faults": 0,
            "rounds": 0, **kw}


def test_an_idle_day_writes_no_progress_line() -> None:
    clock, err = _Clock(), io.StringIO()
    progress = Progress("mybot", err, clock)
    assert progress.show(_stats(requests=5), _COUNTS, None)  # the first line says where it stands
    for _ in range(86_400):  # a day, a look every second, nothing moving
        clock.t += 1
        progress.show(_stats(requests=5), _COUNTS, None)
    assert len(err.getvalue().splitlines()) == 1


def test_work_shows_at_most_every_busy_s_and_idle_changes_at_most_once_a_minute() -> None:
    clock, err = _Clock(), io.StringIO()
    progress = Progress("mybot", err, clock)
    shown = [clock.t] if progress.show(_stats(), _COUNTS, None) else []
    requests = 0
    for _ in range(600):  # ten minutes of a request a second
        clock.t += 1
        requests += 1
        if progress.show(_stats(requests=requests), _COUNTS, None):
            shown.append(clock.t)
    gaps = [b - a for a, b in zip(shown, shown[1:], strict=False)]
    assert gaps and min(gaps) >= BUSY_S and len(shown) >= 600 / BUSY_S - 1
    # THEN idle: only the waiting hosts move, every second
    idle = []
    for n in range(600):
        clock.t += 1
        if progress.show(_stats(requests=requests), {"waiting": n % 7, "held": 0}, None):
            idle.append(clock.t)
    assert 600 / IDLE_S - 1 <= len(idle) <= 600 / IDLE_S
    assert all(b - a >= IDLE_S for a, b in zip(idle, idle[1:], strict=False))
    # AND the stop's line is written whatever the clock says
    assert progress.show(_stats(requests=requests), _COUNTS, None, force=True)


def test_totals_go_on_from_what_the_state_kept(tmp_path: Path) -> None:
    db = Database(tmp_path / "heed.db")
    try:
        clock = _Clock()
        # GIVEN a fresh state: nothing counted
        first = Totals(db, clock)
        assert set(first.base.values()) == {0}
        with db.write() as c:  # three results put
            c.executemany("INSERT INTO events (rid, detail_type, record, at, wall) VALUES (?, 'x', '{}', 0, 0)",
                          [("a",), ("b",), ("c",)])
        # WHEN a run counts, its totals are kept at most every KEEP_S, and at once at its stop
        first.keep(_stats(requests=7, rounds=1, events=3))
        assert totals_so_far(db)["requests"] == 0
        clock.t += KEEP_S
        first.keep(_stats(requests=9, rounds=1, events=3))
        assert totals_so_far(db)["requests"] == 9
        first.keep(_stats(requests=10, skips=2, rounds=1, events=3), now=True)
        # THEN the next run starts from them, the results from the events table itself
        second = Totals(db, clock)
        assert second.base == {**_stats(requests=10, skips=2, rounds=1), "events": 3}
        assert second.add(_stats(requests=1, events=2))["requests"] == 11
        assert second.add(_stats(requests=1, events=2))["events"] == 5
        with db.write() as c:  # results pruned: the sequence still counts them
            c.execute("DELETE FROM events")
        assert totals_so_far(db)["events"] == 3
    finally:
        db.close()

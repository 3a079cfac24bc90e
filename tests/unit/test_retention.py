"""Every table of a state directory bounded (issue 34): the retention's pruning on a real SQLite
database, oldest first, what the webhook has still to deliver kept, a text's current version kept,
the pages freed returned to the file system; a state of an older schema has its log files read
into the tables once."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from heed_embedded.db import Database
from heed_embedded.journal import SqliteJournal, host_ranges, records_by_host
from heed_embedded.results import SqliteResults
from heed_embedded.retention import DAY, Retention, RetentionError, parse_duration, prune
from heed_embedded.state import open_state

NOW = 1_765_000_000.0


def _requests(db: Database, walls: list[float]) -> None:
    with db.write("fill") as c:
        c.executemany("INSERT INTO requests (host, t, wall, url, record) VALUES (?, ?, ?, ?, ?)",
                      [("http://a.example:80", w, w, f"http://a.example/{i}", "{}") for i, w in enumerate(walls)])


def test_requests_past_their_retention_go_oldest_first_and_the_rest_stay(tmp_path: Path) -> None:
    db = Database(tmp_path / "heed.db")
    _requests(db, [NOW - 500 * DAY + i for i in range(12_000)] + [NOW - 10 * DAY + i for i in range(50)])
    out = prune(db, NOW, Retention())
    assert out["requests"] == 12_000
    with db.read() as c:
        assert c.execute("SELECT count(*), min(wall) FROM requests").fetchone() == (50, NOW - 10 * DAY)
    assert prune(db, NOW, Retention())["requests"] == 0  # nothing past it: nothing scanned away


def test_an_event_the_webhook_has_still_to_deliver_is_kept_past_its_retention(tmp_path: Path) -> None:
    db = Database(tmp_path / "heed.db")
    SqliteResults(db).emit_many([("item.found", f"r{i}", {"id": f"r{i}", "source": "s"}) for i in range(3)])
    with db.write() as c:
        c.execute("UPDATE events SET wall = ?", (NOW - 500 * DAY,))
        c.execute("INSERT INTO deliveries (seq, grp, attempts, next_try) VALUES (2, 's', 1, ?)", (NOW,))
    assert prune(db, NOW, Retention())["events"] == 2
    with db.read() as c:
        assert [r for (r,) in c.execute("SELECT rid FROM events")] == ["r1"]


def test_a_replaced_text_version_goes_after_30_days_the_current_one_stays(tmp_path: Path) -> None:
    db = Database(tmp_path / "heed.db")
    with db.write() as c:
        c.executemany("INSERT INTO texts (key, text, at) VALUES (?, ?, ?)",
                      [("k", "v1", NOW - 90 * DAY), ("k", "v2", NOW - 60 * DAY), ("k", "v3", NOW - 1 * DAY),
                       ("old", "only", NOW - 900 * DAY)])
    assert prune(db, NOW, Retention())["texts"] == 1  # v1 (replaced 60 days ago); v2 replaced yesterday
    with db.read() as c:
        assert sorted(t for (t,) in c.execute("SELECT text FROM texts")) == ["only", "v2", "v3"]


def test_the_pages_freed_go_back_to_the_file_system(tmp_path: Path) -> None:
    db = Database(tmp_path / "heed.db")
    with db.write() as c:
        c.executemany("INSERT INTO requests (host, t, wall, url, record) VALUES (?, ?, ?, ?, ?)",
                      [("http://a.example:80", 0.0, NOW - 500 * DAY, f"http://a.example/{i}", "x" * 2000)
                       for i in range(3000)])
    size = (tmp_path / "heed.db").stat().st_size + (tmp_path / "heed.db-wal").stat().st_size
    prune(db, NOW, Retention())
    with db.read() as c:
        free = c.execute("PRAGMA freelist_count").fetchone()[0]
        pages = c.execute("PRAGMA page_count").fetchone()[0]
    assert free == 0 and pages * 4096 < size / 2


@pytest.mark.parametrize(("text", "seconds"), [("400d", 400 * DAY), ("12h", 43200.0), ("30m", 1800.0),
                                                ("90s", 90.0), ("1.5d", 1.5 * DAY)])
def test_a_duration_is_read_as_written(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "400", "0d", "-1d", "1y", "forever"])
def test_a_duration_that_is_none_is_one_line(text: str) -> None:
    with pytest.raises(RetentionError, match="is not a duration"):
        parse_duration(text, "--keep-requests")


def test_the_settings_keys_are_checked() -> None:
    assert Retention.from_settings({"requests": "30d"}).requests_s == 30 * DAY
    with pytest.raises(RetentionError, match="unknown key 'request'"):
        Retention.from_settings({"request": "30d"})
    assert Retention().shown() == {"requests": "400d", "events": "400d", "dead_letters": "14d",
                                   "text_versions": "30d"}


def test_an_older_state_s_log_files_are_read_into_the_tables_once(tmp_path: Path) -> None:
    # GIVEN a state directory of an older schema, its request log a file
    st = open_state(tmp_path / "s", create=True)
    st.close()
    lines = [{"t_start": "2026-12-01T10:00:00.000Z", "url": "http://a.example:8080/x", "status": 200,
              "host": "http://a.example:8080", "wall": NOW},
             {"t_start": "2026-12-01T10:00:05.000Z", "url": "https://b.example/y", "status": 404}]
    (tmp_path / "s" / "requests.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines) + '{"cut', "utf-8")
    # WHEN it is opened (twice)
    for _ in range(2):
        st = open_state(tmp_path / "s", create=False)
        try:
            rows = list(records_by_host(st.db, "requests", host_ranges("a.example", None)))
            total = len(list(records_by_host(st.db, "requests", host_ranges("b.example", 443))))
        finally:
            st.close()
        # THEN its records are in the table, each once, by host
        assert [r["url"] for r in rows] == ["http://a.example:8080/x"] and total == 1
    assert (tmp_path / "s" / "requests.jsonl.imported").is_file() and not (tmp_path / "s" / "requests.jsonl").exists()


def test_a_request_is_a_row_of_its_turn_s_transaction(tmp_path: Path) -> None:
    db = Database(tmp_path / "heed.db")
    seen: list[str] = []
    journal = SqliteJournal(db, tap=lambda what, rec: seen.append(what))
    with pytest.raises(RuntimeError), db.write("a turn"):
        journal.request({"url": "http://a.example/1", "t_start": "2026-12-01T10:00:00.000Z"})
        raise RuntimeError("the turn failed before its commit")
    with db.read() as c:
        assert c.execute("SELECT count(*) FROM requests").fetchone()[0] == 0
    journal.request({"url": "http://a.example/2", "t_start": "2026-12-01T10:00:00.000Z"})
    assert len(list(records_by_host(db, "requests", host_ranges("a.example", 80)))) == 1 and seen == ["request"] * 2

"""The doors results leave a state directory by (issue 33), on a real SQLite database: envelopes in
commit order, named consumers' positions, the JSONL export that survives being moved away, and
the webhook deliverer's order, retries, dead letters and stop (its POST a recording fake here;
tests/faults/test_webhook_kill.py posts to a real receiver)."""
from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from heed_core.envelope import TYPES, envelope, schema
from heed_core.webhook import Answer, Endpoint

from heed_embedded.db import Database
from heed_embedded.events import advance, consumers, position, read_after, reset, seq_of
from heed_embedded.results import SqliteResults, export_events
from heed_embedded.webhooks import Deliverer, dead_letters, pending, redrive, stopped

KEY = b"k" * 32


def _events(db: Database, n: int, source: str = "s1", start: int = 0) -> list[str]:
    ids = [f"{source}-{i}" for i in range(start, start + n)]
    SqliteResults(db).emit_many([("item.found", rid, {"bot": "aubebot", "id": rid, "source": source,
                                                      "source_url": "https://x.example/feed",
                                                      "found_at": "2026-12-06T10:00:00.000Z", "kind": "feed_item",
                                                      "url": f"https://x.example/{rid}", "title": rid,
                                                      "published": None}) for rid in ids])
    return ids


@pytest.fixture
def db(tmp_path: Path) -> Database:
    return Database(tmp_path / "heed.db")


class Clock:
    def __init__(self) -> None:
        self.t = 1_765_000_000.0

    def __call__(self) -> float:
        return self.t


class Receiver:
    """Answers each POST from a script (default 200); keeps every id it was sent, in order."""

    def __init__(self) -> None:
        self.got: list[str] = []
        self.script: dict[str, list[int]] = {}

    def __call__(self, url: str, body: bytes, headers: Mapping[str, str]) -> Answer:
        rid = headers["webhook-id"]
        assert json.loads(body)["id"] == rid
        self.got.append(rid)
        answers = self.script.get(rid)
        return Answer(answers.pop(0) if answers else 200)


def test_every_result_envelope_has_the_shape_its_schema_ships() -> None:
    from jsonschema import Draft202012Validator, FormatChecker

    env = envelope("item.found", "r1", {"bot": "b", "id": "r1", "source": "s 1", "source_url": None,
                                        "found_at": "2026-12-06T10:00:00.000Z", "kind": "feed_item",
                                        "url": "https://x.example/a", "title": "A", "published": None})
    assert env["source"] == "/heed/b/sources/s%201" and env["subject"] == "https://x.example/a"
    Draft202012Validator(schema("item.found"), format_checker=FormatChecker()).validate(env)
    for kind in TYPES:  # each type's schema is itself a valid schema
        Draft202012Validator.check_schema(schema(kind))


def test_a_consumer_reads_in_commit_order_and_its_position_moves_only_when_told(db: Database) -> None:
    ids = _events(db, 5)
    rows, upto = read_after(db, position(db, "app") or 0, limit=3)
    assert [r.envelope["id"] for r in rows] == ids[:3] and upto == 3
    assert position(db, "app") is None  # not moved: the lines were not said to be out
    advance(db, "app", upto)
    rows, upto = read_after(db, position(db, "app") or 0)
    assert [r.envelope["id"] for r in rows] == ids[3:]
    advance(db, "app", 1)  # never back
    assert position(db, "app") == 3
    reset(db, "app", seq_of(db, ids[0]) or 0)  # --since: on purpose
    assert position(db, "app") == 1
    (c,) = consumers(db)
    assert (c.name, c.seq, c.lag) == ("app", 1, 4)


def test_the_export_moved_away_is_started_afresh_not_filled_again(db: Database, tmp_path: Path) -> None:
    # GIVEN 3 events exported to events.jsonl
    out = tmp_path / "events.jsonl"
    _events(db, 3)
    assert export_events(db, out) == 3
    # WHEN the file is rotated away (logrotate's mv) and 2 more events come
    out.rename(tmp_path / "events.jsonl.1")
    later = _events(db, 2, start=3)
    # THEN the new file holds the 2 new ones only, and exporting again adds nothing
    assert export_events(db, out) == 2 and export_events(db, out) == 0
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == later


def test_a_crash_between_the_append_and_the_position_does_not_export_twice(db: Database, tmp_path: Path) -> None:
    out = tmp_path / "events.jsonl"
    _events(db, 3)
    export_events(db, out)
    reset(db, "_export", 0)  # as if the position had not moved before a kill
    assert export_events(db, out) == 0  # the file's own last line says how far it got


def test_the_webhook_delivers_in_commit_order_each_once(db: Database) -> None:
    ids = _events(db, 4, "a") + _events(db, 3, "b")
    hook = Receiver()
    d = Deliverer(db, Endpoint("http://127.0.0.1:9/x", KEY), hook, clock=Clock())
    while d.step():
        pass
    assert hook.got == ids and pending(db) == 0


def test_a_failing_event_holds_its_source_back_but_not_the_others(db: Database) -> None:
    a = _events(db, 3, "a")
    b = _events(db, 2, "b")
    hook = Receiver()
    hook.script[a[0]] = [503]
    clock = Clock()
    d = Deliverer(db, Endpoint("http://127.0.0.1:9/x", KEY), hook, clock=clock, rand=lambda: 0.5)
    while d.step():
        pass
    # THEN source b went on, source a waits behind its first
    assert hook.got == [a[0], *b] and pending(db) == 3
    # WHEN its retry is due
    clock.t += 5.0
    while d.step():
        pass
    assert hook.got == [a[0], *b, *a] and pending(db) == 0


def test_an_event_the_receiver_keeps_refusing_becomes_a_dead_letter_and_comes_back(db: Database) -> None:
    (rid, nxt) = _events(db, 2)
    hook = Receiver()
    hook.script[rid] = [400, 400, 400]
    clock = Clock()
    d = Deliverer(db, Endpoint("http://127.0.0.1:9/x", KEY), hook, clock=clock, rand=lambda: 0.5)
    for _ in range(10):
        d.step()
        clock.t += 400.0
    assert hook.got == [rid, rid, rid, nxt]  # three tries, then the next of its source
    (dead,) = dead_letters(db)
    assert dead["envelope"]["id"] == rid and "HTTP 400 after 3 tries" in dead["why"]
    assert redrive(db, clock.t) == (1, None)
    d.step()
    assert hook.got[-1] == rid and dead_letters(db) == []


def test_410_gone_stops_the_endpoint_until_the_operator_redrives(db: Database) -> None:
    (rid,) = _events(db, 1)
    hook = Receiver()
    hook.script[rid] = [410]
    url = "http://127.0.0.1:9/x"
    d = Deliverer(db, Endpoint(url, KEY), hook, clock=Clock())
    d.step()
    assert stopped(db, url) is not None and d.step() == 0 and hook.got == [rid]
    assert stopped(db, "http://127.0.0.1:9/other") is None  # another URL is not stopped
    n, lifted = redrive(db)
    assert n == 0 and lifted is not None and lifted["url"] == url
    d.step()
    assert hook.got == [rid, rid] and pending(db) == 0

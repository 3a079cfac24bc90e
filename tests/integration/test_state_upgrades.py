"""Upgrades (issue 34): a state directory made by every earlier Heed opens with this one, is
migrated in place, keeps what it knew, and is served without asking a site again for a page the
old state had read; a state from a newer Heed is refused in one line.

The fixtures (tests/fixtures/states/, README.md there) are real crawls by the earlier code itself:
one round of tests/fixtures/states/bot.yaml against two feed sites of three articles at fixed
addresses. Here the sites come back at those addresses with two articles more each."""
from __future__ import annotations

import base64
import json
import shutil
import sqlite3
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from heed_embedded.db import SCHEMA_VERSION
from heed_embedded.state import FORMAT

from heed.cli import main

from tests.support.state_fixtures import ARTICLES, BOT, FIXTURES, FixtureWeb, unpack

NAMES = sorted(p.name.removesuffix(".tar.gz") for p in FIXTURES.glob("*.tar.gz"))
SCHEMAS = [n for n in NAMES if n.startswith("schema-")]
NEW = 2  # articles each feed lists now beyond the ones the old state read


def test_there_is_a_fixture_for_every_earlier_schema_and_the_first_format() -> None:
    # schema N's fixture is a state whose database says user_version N; format-1 predates them
    assert "format-1" in NAMES
    made = {int(n.removeprefix("schema-")) for n in SCHEMAS}
    assert set(range(1, SCHEMA_VERSION)) <= made, f"no fixture for schema {set(range(1, SCHEMA_VERSION)) - made}"


@pytest.fixture
def web() -> Iterator[FixtureWeb]:
    sites = FixtureWeb(articles=ARTICLES + NEW).start()
    yield sites
    sites.stop()


def _heed(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _user_version(db: Path) -> int:
    with closing(sqlite3.connect(db)) as c:
        return int(c.execute("PRAGMA user_version").fetchone()[0])


def _tables(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, in the columns the table had (a later schema adds some)."""
    c = sqlite3.connect(db)
    try:
        names = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                                         "'sqlite_%'")]
        out = {}
        for name in names:
            columns = [r[1] for r in c.execute(f"PRAGMA table_info({name})")]
            out[name] = sorted(c.execute(f"SELECT {', '.join(columns)} FROM {name}").fetchall(), key=repr)
        return out
    finally:
        c.close()


def _kept_rows(old: dict[str, list[tuple[Any, ...]]], db: Path) -> None:
    c = sqlite3.connect(db)
    try:
        for name, rows in old.items():
            if name == "manifest":
                continue  # the directory's notes of itself, which a run adds to
            width = len(rows[0]) if rows else 0
            columns = [r[1] for r in c.execute(f"PRAGMA table_info({name})")][:width or None]
            now = sorted(c.execute(f"SELECT {', '.join(columns)} FROM {name}").fetchall(), key=repr)
            assert now == rows, f"{name}: rows changed by the migration"
    finally:
        c.close()


def _format_1_items(state: Path) -> list[dict[str, Any]]:
    def value(attr: dict[str, Any]) -> Any:
        (kind, v), = attr.items()
        return base64.b64decode(v) if kind == "B64" else float(v) if kind == "N" else v
    lines = (state / "table.jsonl").read_text(encoding="utf-8").splitlines()
    return [{k: value(v) for k, v in json.loads(line).items()} for line in lines if line.strip()]


def _format_1_kept(items: list[dict[str, Any]], db: Path, opened_at: float) -> None:
    """What DynamoDB would still hold when the state was opened (its TTL not passed) is in the
    database: each host's state (its pacing), its URL records, the sources' reads."""
    alive = [i for i in items if i.get("ttl") is None or i["ttl"] > opened_at]
    c = sqlite3.connect(db)
    try:
        hosts = {h: json.loads(st) for h, st in c.execute("SELECT host, st FROM hosts")}
        for item in (i for i in alive if i["sk"] == "HOST"):
            st = json.loads(zlib.decompress(item["st"]))
            assert hosts[item["pk"].removeprefix("H#")] == st
            assert "pace" in st
        for item in (i for i in alive if i["sk"].startswith("U#")):
            host = item["pk"].removeprefix("H#")
            want = sum(1 for i in alive if i["pk"] == item["pk"] and i["sk"].startswith("U#"))
            assert c.execute("SELECT count(*) FROM urls WHERE host = ?", (host,)).fetchone()[0] == want
        reads = {i: json.loads(d) for i, d in c.execute("SELECT id, data FROM source_reads")}
        for item in (i for i in alive if i["sk"].endswith("#read")):
            assert reads[item["sk"].removesuffix("#read")]["last_read"] == item["last_read"]
    finally:
        c.close()


def _serve_once(state: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "heed.cli", "serve", "--bot", str(BOT), "--state", str(state), "--once",
         "--allow-private", "--workers", "1", "--patience", "3", "--quiet"],
        capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name", NAMES)
def test_an_earlier_state_is_migrated_in_place_and_served_without_asking_again(
        name: str, web: FixtureWeb, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a state directory an earlier Heed made (a round of two feeds, three articles each)
    state = unpack(name, tmp_path)
    old_requests = [json.loads(line) for line in (state / "requests.jsonl").read_text(encoding="utf-8").splitlines()
                    ] if (state / "requests.jsonl").is_file() else []
    first = name == "format-1"
    items = _format_1_items(state) if first else []
    tables = {} if first else _tables(state / "heed.db")
    if not first:
        assert _user_version(state / "heed.db") == int(name.removeprefix("schema-"))

    # WHEN an operator command opens it
    opened_at = time.time()
    code, out, err = _heed("sources", "list", "--state", str(state), "--json", capsys=capsys)
    # THEN it is migrated in place: the current schema, every row it had kept as it was
    assert code == 0, err
    assert _user_version(state / "heed.db") == SCHEMA_VERSION
    assert json.loads((state / "heed-state.json").read_text(encoding="utf-8"))["format"] == FORMAT
    if first:
        assert "migrated" in err and not (state / "table.jsonl").exists()
        _format_1_kept(items, state / "heed.db", opened_at)
    else:
        _kept_rows(tables, state / "heed.db")
        assert _heed("blocks", "--state", str(state), "--json", capsys=capsys)[1].count("blocked.example") == 1
    sources = [json.loads(line) for line in out.splitlines()]
    assert sorted(s["url"] for s in sources) == sorted(f"{s.base_url}/feed.xml" for s in web.servers)
    assert all(s["last_read"] for s in sources), sources

    # AND the operator's questions are answered from it: a page the old state read is known,
    # and would not be asked again
    host = web.servers[0]
    code, out, err = _heed("explain", f"{host.base_url}/a/0", "--state", str(state), "--json", capsys=capsys)
    assert code == 0, err
    answer = json.loads(out)
    # (the first format's URL records are migrated while their TTL of 400 days runs, as DynamoDB kept them)
    if not first or any(i["sk"].startswith("U#") and i["ttl"] > opened_at for i in items):
        assert answer["seen"]["last_status"] == 200
        assert answer["now"]["action"] == "skip" and answer["now"]["reason"] == "already_read", answer["now"]

    # WHEN this Heed serves it, the feeds now listing two articles more
    proc = _serve_once(state)
    # THEN the sites are asked for the new articles, and for none the old state had read
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    asked = [(r.host, r.path) for r in web.log()]
    for server in web.servers:
        paths = [p for h, p in asked if h == server.host]
        assert sorted(p for p in paths if p.startswith("/a/")) == [f"/a/{i}" for i in range(ARTICLES, ARTICLES + NEW)]
        assert paths.count("/feed.xml") == 1
    assert _user_version(state / "heed.db") == SCHEMA_VERSION

    # AND audit --host shows the host's requests, the old state's and this run's
    code, out, err = _heed("audit", "--host", host.host, "--state", str(state), "--json", capsys=capsys)
    assert code == 0, err
    seen = [json.loads(line)["path"] for line in out.splitlines()]
    old = [r["url"].removeprefix(host.base_url) for r in old_requests if r["url"].startswith(host.base_url)]
    assert seen[:len(old)] == old and {f"/a/{ARTICLES}", f"/a/{ARTICLES + 1}"} <= set(seen[len(old):]), seen


def _newer(tmp_path: Path) -> Path:
    state = unpack(SCHEMAS[-1], tmp_path)
    with closing(sqlite3.connect(state / "heed.db")) as c:  # closed: its change in the file, not a WAL
        c.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    return state


@pytest.mark.parametrize("argv", [
    ["serve", "--bot", str(BOT), "--state", "{state}", "--once"],
    ["sources", "list", "--state", "{state}"],
    ["explain", "http://127.0.4.1:8734/a/0", "--state", "{state}"],
], ids=["serve", "sources list", "explain"])
def test_a_state_from_a_newer_heed_is_refused_in_one_line(argv: list[str], tmp_path: Path) -> None:
    # GIVEN a state whose database a newer Heed wrote (its schema above this one's)
    state = _newer(tmp_path)
    copy = tmp_path / "copy.db"
    shutil.copy2(state / "heed.db", copy)
    # WHEN this Heed is run on it
    proc = subprocess.run([sys.executable, "-m", "heed.cli", *(a.format(state=state) for a in argv)],
                          capture_output=True, text=True, timeout=60)
    # THEN it is refused: one line saying so, exit 2, no traceback, the database untouched
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert f"written by a newer heed (schema {SCHEMA_VERSION + 1}" in proc.stderr, proc.stderr
    assert proc.stdout == ""
    assert (state / "heed.db").read_bytes() == copy.read_bytes()


def test_a_state_directory_of_a_newer_format_is_refused_in_one_line(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    state = unpack(SCHEMAS[-1], tmp_path)
    manifest = state / "heed-state.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text(encoding="utf-8")), "format": FORMAT + 1}),
                        encoding="utf-8")
    code, out, err = _heed("sources", "list", "--state", str(state), capsys=capsys)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and f"written by a newer heed (format {FORMAT + 1}" in err, err

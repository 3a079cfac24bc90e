"""A state directory on one machine: ``heed-state.json`` (what it is), ``heed.db`` (the SQLite
database: every table the crawl and the operator commands share, the request and skip log among
them: ``heed audit --state``, ``heed explain``), and ``events.jsonl`` (the events table, exported).
A state of an older schema kept its request and skip log in ``requests.jsonl`` and ``skips.jsonl``:
they are read into the tables the first time it is opened (once), and kept aside as
``*.jsonl.imported``.

One crawl at a time holds a directory (``serve_lock``: ``heed serve`` or ``heed local run``);
the operator's commands never lock it (the database lets them read and write while it runs). A
directory of the first format (``table.jsonl``, ``bucket.jsonl``, loaded into moto and written
back whole) is migrated into the database the first time it is opened, its files kept aside.
The directory keeps wall-clock time: ``times_ahead`` reports a state whose times lie ahead of
this machine's clock (a simulated run wrote them, or the clock moved back)."""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from heed_core.errors import ConfigError

from heed_embedded.db import Database
from heed_embedded.migrate import MigrationError, migrate_format_1

__all__ = ["DATABASE", "FORMAT", "MANIFEST", "EmbeddedState", "StateError", "open_state"]

FORMAT = 2
MANIFEST = "heed-state.json"
DATABASE = "heed.db"
_OLD = ("table.jsonl", "bucket.jsonl")
_AHEAD_S = 60.0  # a clock set a little differently is no "state from the future"
_OURS = frozenset({MANIFEST, DATABASE, f"{DATABASE}-wal", f"{DATABASE}-shm", f"{DATABASE}-wlock", "serve.lock",
                   ".migrate.lock", "requests.jsonl", "skips.jsonl", "events.jsonl", ".lock", "format-1",
                   "requests.jsonl.imported", "skips.jsonl.imported"})


class StateError(ConfigError):
    """A state directory that cannot be used: one line, naming the directory."""

    code = "state_dir"


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as f:
        f.write(json.dumps(data, indent=2) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


@dataclass
class EmbeddedState:
    """An open state directory: its database, and what it records of itself (the bot, the
    profile it ran with, the last run's output folder)."""

    path: Path
    db: Database
    notes: list[str] = field(default_factory=list)  # one line each, for the user (a migration)

    @property
    def events_log(self) -> Path:
        return self.path / "events.jsonl"

    def get(self, key: str) -> Any:
        with self.db.read("manifest") as c:
            row = c.execute("SELECT value FROM manifest WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def set(self, key: str, value: Any) -> None:
        with self.db.write("manifest") as c:
            c.execute("INSERT OR REPLACE INTO manifest (key, value) VALUES (?, ?)",
                      (key, json.dumps(value, default=str)))

    @property
    def manifest(self) -> dict[str, Any]:
        """Everything the directory records of itself (bot, profile, last_out, created...)."""
        with self.db.read("manifest") as c:
            return {k: json.loads(v) for k, v in c.execute("SELECT key, value FROM manifest")}

    @property
    def bot(self) -> str | None:
        bot = self.get("bot")
        return str(bot) if bot else None

    def claim_bot(self, name: str) -> None:
        """The directory learns whose state it is; another bot's state is refused."""
        have = self.bot
        if have and have != name:
            raise StateError(f"--state: {self.path} holds the state of {have}, not {name}")
        if not have:
            self.set("bot", name)

    @contextmanager
    def serve_lock(self) -> Iterator[None]:
        """The one crawl of this directory (``heed serve``, ``heed local run``): a second is
        refused in one line; the operator's commands need no lock."""
        path = self.path / "serve.lock"
        f = path.open("a+")
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            f.seek(0)
            pid = f.read().strip() or "?"
            f.close()
            raise StateError(f"--state: {self.path} is crawled by another heed serve or run (pid {pid}): one crawl "
                             "at a time; the operator commands (sources, block, purge, explain, audit, dlq) work "
                             "while it runs") from exc
        try:
            f.seek(0)
            f.truncate()
            f.write(str(os.getpid()))
            f.flush()
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
            f.close()

    def times_ahead(self, now: float) -> tuple[float, str] | None:
        """(the latest time, one line) when the state holds times more than a minute ahead of
        ``now``: a simulated run wrote them, or this machine's clock moved back."""
        with self.db.read("times") as c:
            row = c.execute(
                "SELECT max(t) FROM ("
                "SELECT max(json_extract(data, '$.last_read')) AS t FROM sources "
                "UNION ALL SELECT max(json_extract(data, '$.last_read')) FROM source_reads "
                "UNION ALL SELECT max(json_extract(data, '$.f')) FROM urls "
                "UNION ALL SELECT max(json_extract(st, '$.pace.le')) FROM hosts "
                "UNION ALL SELECT max(json_extract(data, '$.last')) FROM meta WHERE key = 'tick' "
                "UNION ALL SELECT max(at) FROM events)").fetchone()
        latest = float(row[0]) if row and row[0] is not None else None
        if latest is None or latest <= now + _AHEAD_S:
            return None
        return latest, (f"{self.path} holds times up to {_iso(latest)}, {int(latest - now)} s ahead of this machine's "
                        f"clock ({_iso(now)}): a simulated run wrote them, or the clock moved back; what was read "
                        "then counts as read until this clock gets there")

    def close(self) -> None:
        self.db.close()


def _manifest(path: Path) -> dict[str, Any] | None:
    file = path / MANIFEST
    if not file.is_file():
        return None
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StateError(f"{path}: {MANIFEST} is unreadable ({type(exc).__name__})") from exc
    if isinstance(data, dict) and isinstance(data.get("format"), int) and data["format"] > FORMAT:
        raise StateError(f"{path}: written by a newer heed (format {data['format']}; this one reads up to "
                         f"{FORMAT}): run that heed or a newer one")
    if not isinstance(data, dict) or data.get("format") not in (1, FORMAT):
        raise StateError(f"{path}: not a heed state directory of format {FORMAT}")
    return data


def open_state(path: Path, *, create: bool, synchronous: str = "FULL") -> EmbeddedState:
    """The state directory at ``path`` (made if ``create``), migrated first if it is of the first
    format. ``StateError``, one line, when it cannot be one."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise StateError(f"--state: {path} is a file, not a folder")
    manifest = _manifest(path) if path.is_dir() else None
    if manifest is None:
        if not create:
            raise StateError(f"--state: {path} is not a heed state directory (`heed serve --state {path}` makes one)")
        if path.is_dir() and any(p.name not in _OURS for p in path.iterdir()):
            raise StateError(f"--state: {path} is a folder with other files in it, not a heed state directory")
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StateError(f"--state: cannot make {path} ({exc.strerror or exc})") from exc
    state = EmbeddedState(path, Database(path / DATABASE, synchronous=synchronous))
    try:
        if manifest is not None and manifest.get("format") == 1:
            _migrate(state, manifest)
        elif manifest is None:
            state.set("created", _iso(time.time()))
            state.set("clock", "wall")
            _write_json(path / MANIFEST, {"format": FORMAT, "engine": "embedded", "database": DATABASE,
                                          "clock": "wall"})
        else:
            state.db.conn()  # opens (and checks) the database now: a bad one is one line here
        _import_logs(state)
    except OSError as exc:
        state.close()
        raise StateError(f"--state: {path}: {exc.strerror or exc}") from exc
    except Exception:
        state.close()
        raise
    return state


def _migrate(state: EmbeddedState, manifest: dict[str, Any]) -> None:
    """The first format's files into the database (once: a lock keeps two processes from doing
    it at the same time), then set aside in ``format-1/``."""
    path = state.path
    with (path / ".migrate.lock").open("a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            again = _manifest(path)
            if again is not None and again.get("format") == FORMAT:
                return  # another process migrated it meanwhile
            counts = dict((state.get("migrated") or {}).get("rows") or {})
            if state.get("migrated") is None:  # (a migration cut before the manifest was written is not done twice)
                try:
                    with state.db.write("migrate"):
                        counts = migrate_format_1(path, state.db, now=time.time())
                        for key in ("bot", "profile", "last_out"):
                            if manifest.get(key) is not None:
                                state.set(key, manifest[key])
                        state.set("created", manifest.get("saved_at") or _iso(time.time()))
                        state.set("clock", "wall")
                        state.set("migrated", {"from": 1, "at": _iso(time.time()), "rows": counts})
                except MigrationError as exc:
                    raise StateError(f"--state: {path} is of the first format and cannot be migrated: {exc}") from exc
            aside = path / "format-1"
            aside.mkdir(exist_ok=True)
            for name in (*_OLD, MANIFEST):
                if (path / name).exists():
                    shutil.copy2(path / name, aside / name)
            _write_json(path / MANIFEST, {"format": FORMAT, "engine": "embedded", "database": DATABASE,
                                          "clock": "wall"})
            for name in _OLD:
                (path / name).unlink(missing_ok=True)
            state.notes.append(f"heed: migrated {path} to the embedded database ({DATABASE}: "
                               f"{sum(counts.values())} records); the old files are kept in {aside}")
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _import_logs(state: EmbeddedState) -> None:
    """The request and skip logs a state of an older schema kept as files, into their tables, once
    (one transaction: a crash in the middle imports nothing, and the next open does it whole)."""
    from heed_embedded.journal import import_logs

    path = state.path
    files = [path / "requests.jsonl", path / "skips.jsonl"]
    if not any(f.is_file() for f in files):
        return
    with (path / ".migrate.lock").open("a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            if state.get("journal_imported") is not None:
                return
            with state.db.write("import the request log"):
                counts = import_logs(state.db, files[0], files[1])
                state.set("journal_imported", {"at": _iso(time.time()), **counts})
            for f in files:
                if f.is_file():
                    f.rename(f.with_name(f.name + ".imported"))
            state.notes.append(f"heed: {path}: the request and skip logs read into the database ({counts['requests']} "
                               f"requests, {counts['skips']} skips); the files are kept as *.jsonl.imported")
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)

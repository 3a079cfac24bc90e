"""`heed state info --state DIR` and `heed state backup --state DIR DEST`: what a state directory
holds and keeps, and a consistent copy of it while `heed serve` runs.

``info`` prints the database's size, each table's rows with its oldest and newest record, the
retention in force (as `heed serve` last set it) and the named consumers' lag; every figure is an
index or key lookup, so it answers in a moment on a state of millions of requests. ``backup``
copies the database with SQLite's online backup (one read transaction: the copy is the state at
one instant, while `heed serve` goes on writing), and the directory's manifest: DEST is a state
directory of its own, which `heed serve --state DEST` serves (what was in flight at that instant is
handed back and asked again, as after a crash). Mistakes are one line, exit 2."""
from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from heed_core.errors import ConfigError

__all__ = ["register", "state_info", "state_backup"]

# (table, its key, the column that says when: None for a table with no time of its own)
_LOGS = (("requests", "id", "wall"), ("skips", "id", "wall"), ("events", "seq", "wall"))
_COUNTED: tuple[tuple[str, str | None], ...] = (
    ("texts", "at"), ("urls", None), ("hosts", None), ("sources", None), ("queue", "sent"), ("dead", "dead_at"),
    ("deliveries", None), ("delivery_dead", "dead_at"), ("attempts", "at"))


class StateCommandError(ConfigError):
    code = "state"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("state", help="what a state directory holds and keeps (info); a consistent copy of "
                                            "it while heed serve runs (backup)",
                              description=(__doc__ or "").split("\n\n", 1)[1])
    sub = p.add_subparsers(dest="state_command", required=True)
    info = sub.add_parser("info", help="sizes, rows, oldest and newest records, the retention in force")
    info.add_argument("--state", required=True, metavar="DIR", help="the state directory")
    info.add_argument("--json", action="store_true", help="one JSON object")
    info.set_defaults(func=cmd_info)
    backup = sub.add_parser("backup", help="a consistent copy of the state directory, while heed serve runs")
    backup.add_argument("--state", required=True, metavar="DIR", help="the state directory")
    backup.add_argument("dest", metavar="DEST", help="where the copy goes (a new or empty folder)")
    backup.add_argument("--json", action="store_true", help="what was copied, as one JSON object")
    backup.set_defaults(func=cmd_backup)


def _iso(t: Any) -> str | None:
    return datetime.fromtimestamp(float(t), UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if t is not None else None


def _open(path: str) -> Any:
    from heed.state_dir import open_local

    return open_local(Path(path), write=False)


def state_info(state: Any) -> dict[str, Any]:
    """What ``heed state info`` prints, as data."""
    from heed_embedded.db import SCHEMA_VERSION
    from heed_embedded.events import consumers

    db = state.db
    files = {p.name: p.stat().st_size for p in state.path.iterdir() if p.name.startswith("heed.db") and p.is_file()}
    tables: dict[str, dict[str, Any]] = {}
    with db.read("state info") as c:
        page, pages, free = (int(c.execute(f"PRAGMA {k}").fetchone()[0])
                             for k in ("page_size", "page_count", "freelist_count"))
        vacuum = {0: "none", 1: "full", 2: "incremental"}[int(c.execute("PRAGMA auto_vacuum").fetchone()[0])]
        version = int(c.execute("PRAGMA user_version").fetchone()[0])
        for table, key, when in _LOGS:
            # (min and max apart: each a key lookup; together in one query SQLite scans the table)
            lo = c.execute(f"SELECT min({key}) FROM {table}").fetchone()[0]
            hi = c.execute(f"SELECT max({key}) FROM {table}").fetchone()[0]
            if lo is None:
                tables[table] = {"rows": 0}
                continue
            first = c.execute(f"SELECT {when} FROM {table} WHERE {key} = ?", (lo,)).fetchone()[0]
            last = c.execute(f"SELECT {when} FROM {table} WHERE {key} = ?", (hi,)).fetchone()[0]
            # Rows are appended and pruned from the oldest: the key range is the count.
            tables[table] = {"rows": int(hi) - int(lo) + 1, "oldest": _iso(first), "newest": _iso(last)}
        for table, column in _COUNTED:
            n = int(c.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            row: dict[str, Any] = {"rows": n}
            if column and n:
                lo, hi = c.execute(f"SELECT min({column}), max({column}) FROM {table}").fetchone()
                row.update(oldest=_iso(lo), newest=_iso(hi))
            tables[table] = row
    retention = state.get("retention")
    return {"state": str(state.path), "bot": state.bot, "schema": version, "schema_current": SCHEMA_VERSION,
            "files": files, "bytes": sum(files.values()), "page_size": page, "pages": pages, "free_pages": free,
            "auto_vacuum": vacuum, "tables": tables,
            "retention": retention or {"note": "not set yet: heed serve sets it (defaults: requests 400d, events "
                                               "400d, dead_letters 14d, text_versions 30d)"},
            "consumers": [{"consumer": x.name, "position": x.seq, "lag": x.lag} for x in consumers(db)]}


def cmd_info(args: argparse.Namespace) -> int:
    with _open(args.state) as st:
        info = state_info(st)
    if args.json:
        print(json.dumps(info, ensure_ascii=False))
        return 0
    mb = info["bytes"] / 1e6
    print(f"{info['state']} ({info['bot'] or 'no bot yet'}), schema {info['schema']}: {mb:.1f} MB on disk "
          f"({info['free_pages']} of {info['pages']} pages free, auto-vacuum {info['auto_vacuum']})")
    for name, t in info["tables"].items():
        span = f"  {t['oldest']} .. {t['newest']}" if t.get("oldest") else ""
        print(f"  {name:<14} {t['rows']:>10} rows{span}")
    keep = info["retention"]
    print("  retention: " + ", ".join(f"{k} {v}" for k, v in keep.items()) if "note" not in keep else
          f"  retention: {keep['note']}")
    for x in info["consumers"]:
        print(f"  consumer {x['consumer']}: position {x['position']}, lag {x['lag']}")
    return 0


def state_backup(state: Any, dest: Path) -> dict[str, Any]:
    """The state at one instant into ``dest`` (a new or empty folder): its database by SQLite's
    online backup, its manifest beside it."""
    from heed_embedded.state import DATABASE, MANIFEST

    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise StateCommandError(f"{dest}: exists and is not an empty folder (a backup goes to a new one)")
    if dest.resolve() == state.path.resolve():
        raise StateCommandError(f"{dest}: that is the state directory itself")
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StateCommandError(f"{dest}: cannot make it ({exc.strerror or exc})") from exc
    t0 = time.monotonic()
    target = sqlite3.connect(str(dest / f".{DATABASE}.partial"))
    try:
        # All pages in one step: one read transaction, so the copy is one instant of the state
        # (a copy made a few pages at a time starts again whenever heed serve writes meanwhile).
        state.db.conn().backup(target, pages=-1)
        target.execute("PRAGMA journal_mode=WAL")
    except sqlite3.Error as exc:
        target.close()
        shutil.rmtree(dest, ignore_errors=True)
        raise StateCommandError(f"backup of {state.path} failed: {exc}") from exc
    target.close()
    (dest / f".{DATABASE}.partial").rename(dest / DATABASE)
    shutil.copy2(state.path / MANIFEST, dest / MANIFEST)
    size = (dest / DATABASE).stat().st_size
    return {"state": str(state.path), "backup": str(dest), "bytes": size, "seconds": round(time.monotonic() - t0, 2)}


def cmd_backup(args: argparse.Namespace) -> int:
    with _open(args.state) as st:
        done = state_backup(st, Path(args.dest))
    if args.json:
        print(json.dumps(done))
    else:
        print(f"{done['backup']}: a copy of {done['state']} ({done['bytes'] / 1e6:.1f} MB, {done['seconds']} s); "
              f"heed serve --state {done['backup']} serves it")
    return 0

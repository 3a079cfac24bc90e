"""State directories made by earlier Heeds (tests/fixtures/states/), and the web they crawled.

Each fixture is a real crawl by the code of an earlier commit: a worktree of that commit run with
this checkout's packages (its own ``layers/core``, ``layers/aws`` and ``src`` first on
``PYTHONPATH``), one round of ``tests/fixtures/states/bot.yaml`` against ``FixtureWeb`` (two feed
sites at fixed addresses: the state keeps their URLs, so a test serves them again where they
were), its state directory packed as ``<name>.tar.gz``. Made with::

    .venv/bin/python -m tests.support.state_fixtures COMMIT NAME [--format-1]

(``--format-1``: a commit before the embedded database, whose ``heed local run --state`` wrote
``table.jsonl`` and ``bucket.jsonl``). tests/fixtures/states/README.md says which commit made each."""
from __future__ import annotations

import argparse
import errno
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from heed.demo.web import RecordingServer, RequestRecord, Site

from tests.support.serve import feed_routes

__all__ = ["BOT", "FIXTURES", "FixtureWeb", "unpack"]

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "states"
BOT = FIXTURES / "bot.yaml"
# Addresses no other test uses, at a fixed port: the fixtures' sources and hosts name them.
ADDRESSES = ("127.0.4.1", "127.0.4.2")
PORT = 8734
ARTICLES = 3  # what each feed listed when the fixtures were made
# Files of a state directory that belong to a running process, not to the state (a WAL the old code
# left is the state's: packed with it).
_LIVE = frozenset({"heed.db-shm", "heed.db-wlock", "serve.lock", ".lock", ".migrate.lock"})


@dataclass
class FixtureWeb:
    """The fixtures' two feed sites, ``articles`` short items each (the first ``ARTICLES`` are the
    ones the earlier Heeds read), at the addresses their states name."""

    articles: int = ARTICLES
    servers: list[RecordingServer] = field(default_factory=list)

    def start(self, wait_s: float = 60.0) -> FixtureWeb:
        deadline = time.monotonic() + wait_s
        for n, ip in enumerate(ADDRESSES):
            while True:
                try:
                    server = RecordingServer(Site(name=f"s{n}", routes=feed_routes(self.articles)), ip=ip, port=PORT)
                    break
                except OSError as exc:  # another run of this test holds the address: wait for it
                    if exc.errno != errno.EADDRINUSE or time.monotonic() > deadline:
                        self.stop()
                        raise
                    time.sleep(0.5)
            self.servers.append(server.start())
        return self

    def stop(self) -> None:
        for s in self.servers:
            s.stop()
        self.servers.clear()

    def log(self) -> list[RequestRecord]:
        return sorted((r for s in self.servers for r in s.log()), key=lambda r: r.t_start)

    def sources_file(self, path: Path) -> Path:
        path.write_text(yaml.safe_dump({"sources": [{"id": f"feed{n}", "url": f"{s.base_url}/feed.xml", "kind": "feed"}
                                                    for n, s in enumerate(self.servers)]}), encoding="utf-8")
        return path


def unpack(name: str, into: Path) -> Path:
    """The fixture ``name`` unpacked in ``into``: the state directory's path."""
    with tarfile.open(FIXTURES / f"{name}.tar.gz") as tar:
        tar.extractall(into, filter="data")
    return into / "state"


def _run(args: list[str], env: dict[str, str], cwd: Path) -> None:
    print("$", " ".join(args), file=sys.stderr)
    proc = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=600)
    sys.stderr.write(proc.stderr[-4000:])
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-4000:])
        raise SystemExit(f"exit {proc.returncode}")


def make(worktree: Path, name: str, *, format_1: bool) -> Path:
    """One round of the fixtures' bot by the code in ``worktree``; its state packed as
    ``FIXTURES/<name>.tar.gz``."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PYTHONPATH"] = os.pathsep.join(str(worktree / p) for p in ("layers/core", "layers/aws", "src"))
    env["PYTHONUNBUFFERED"] = "1"
    web = FixtureWeb().start()
    with tempfile.TemporaryDirectory(prefix="heed-fixture-") as tmp:
        base = Path(tmp)
        state = base / "state"
        sources = web.sources_file(base / "sources.yaml")
        heed = [sys.executable, "-m", "heed.cli"]
        try:
            if format_1:
                _run([*heed, "local", "run", "--bot", str(BOT), "--sources", str(sources), "--state", str(state),
                      "--allow-private", "--out", str(base / "out"), "--json"], env, base)
            else:
                _run([*heed, "serve", "--bot", str(BOT), "--state", str(state), "--sources", str(sources), "--once",
                      "--allow-private", "--workers", "1", "--patience", "3"], env, base)
                # an operator's block (the first format had none on a state directory)
                _run([*heed, "block", "blocked.example", "--reason", "fixture", "--state", str(state)], env, base)
            print(f"the sites saw: {[(r.host, r.path, r.status) for r in web.log()]}", file=sys.stderr)
        finally:
            web.stop()
        print(f"the state: {sorted((p.name, p.stat().st_size) for p in state.iterdir())}", file=sys.stderr)
        out = FIXTURES / f"{name}.tar.gz"
        with tarfile.open(out, "w:gz") as tar:
            for path in sorted(state.rglob("*")):
                if path.is_file() and path.name not in _LIVE:
                    tar.add(path, arcname=f"state/{path.relative_to(state)}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description="a state directory made by an earlier Heed, as a test fixture")
    parser.add_argument("worktree", type=Path, help="a checkout of the earlier commit (git worktree add DIR COMMIT)")
    parser.add_argument("name", help="the fixture's name (schema-N, format-1)")
    parser.add_argument("--format-1", action="store_true", help="heed local run --state (before the database)")
    args = parser.parse_args()
    print(make(args.worktree.resolve(), args.name, format_1=args.format_1))


if __name__ == "__main__":
    main()

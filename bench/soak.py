"""A soak: `heed serve` for a long while against a web that keeps bringing new work, at the highest
rate its politeness allows, and whether memory and the database stay flat once retention applies
(issue 34).

The web: ``--hosts`` sites on loopback (127.78.x.y), each a feed whose items change every minute
(``--items`` new articles to read: by default as many as fill 80 % of the minute at the gap, so
the bot runs near the highest rate its politeness allows and every round ends before the next)
and those articles. The bot: AubeBot's shape with a short gap (``--delay``), its feed read every
minute, its articles capped wide, its request log and its results kept ``--keep`` (short, so
retention applies within the run). Every ``--every`` seconds it samples the resident memory of the
serving process and its workers, the database's size on disk and, of it, the seen URLs' (AUBE-03:
a page read once is never asked again, so what a URL told the bot is kept 400 days, however
short the other retentions: on a web that mints new URLs these grow for as long), then prints
each one's slope per hour over the second half of the run (after retention began to apply),
beside the first half's, and the rows and bytes of every table at the end.

    .venv/bin/python bench/soak.py [--minutes 30] [--hosts 40] [--delay 0.5] [--keep 5m] [--items N]
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import closing
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _site(index: int, items: int) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            base = f"http://{self.server.server_address[0]}:{self.server.server_address[1]}"
            epoch = int(time.time() // 60)
            if self.path == "/robots.txt":
                body, kind = "User-agent: *\nAllow: /\n", "text/plain"
            elif self.path == "/feed.xml":
                entries = "".join(f"<item><title>Story {epoch}-{i}</title><link>{base}/a/{epoch}-{i}</link>"
                                  f"<guid>{base}/a/{epoch}-{i}</guid><description>Short.</description></item>"
                                  for i in range(items))
                body = (f'<?xml version="1.0"?><rss version="2.0"><channel><title>S{index}</title>{entries}'
                        "</channel></rss>")
                kind = "application/rss+xml"
            elif self.path.startswith("/a/"):
                body = (f"<!doctype html><html><head><title>{self.path}</title></head><body><main><article>"
                        f"<p>{'Lorem ipsum dolor sit amet. ' * 40}</p></article></main></body></html>")
                kind = "text/html; charset=utf-8"
            else:
                self.send_response(404)
                self.end_headers()
                return
            data = body.encode()
            self.send_response(200)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer((f"127.78.{index // 250}.{index % 250 + 1}", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _tree_rss_mb(pid: int) -> float:
    """Resident memory of a process and its children (from /proc), in MB."""
    total = 0
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
        todo += children.get(p, [])
    return total / 1024


def _slope_per_hour(points: list[tuple[float, float]]) -> float:
    if len(points) < 2:
        return 0.0
    n = len(points)
    mt = sum(t for t, _ in points) / n
    mv = sum(v for _, v in points) / n
    var = sum((t - mt) ** 2 for t, _ in points)
    return 3600 * sum((t - mt) * (v - mv) for t, v in points) / var if var else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--hosts", type=int, default=40)
    ap.add_argument("--delay", type=float, default=0.5)
    ap.add_argument("--keep", default="5m", help="the request log's and the results' retention (heed serve "
                                                  "--keep-requests, and retention.events in its --settings)")
    ap.add_argument("--every", type=float, default=20.0, help="seconds between two samples")
    ap.add_argument("--items", type=int, default=None,
                    help="new articles in each feed every minute (default: 80 %% of what the gap allows)")
    args = ap.parse_args()
    items = args.items if args.items is not None else max(1, int(0.8 * 60 / args.delay) - 1)
    sites = [_site(i, items) for i in range(args.hosts)]
    work = Path(tempfile.mkdtemp(prefix="heed-soak-"))
    bot = work / "bot.yaml"
    bot.write_text(yaml.safe_dump({
        "extends": "aubebot",
        "politeness": {"min_delay_s": args.delay, "crawl_delay_cap_s": 1, "max_in_flight": None},
        "schedules": [{"expression": "cron(* * * * ? *)", "task": "feed"}],
        "tasks": {"feed": {"min_read_interval_s": 0, "max_items": items,
                           "article_followup": {"per_source_per_window": 100 * items,
                                                "total_per_window": 100 * items * args.hosts}}},
    }), encoding="utf-8")
    sources = work / "sources.yaml"
    sources.write_text(yaml.safe_dump({"sources": [
        {"id": f"s{i}", "url": f"http://{s.server_address[0]}:{s.server_address[1]}/feed.xml", "kind": "feed"}
        for i, s in enumerate(sites)]}), encoding="utf-8")
    settings = work / "settings.yaml"
    settings.write_text(yaml.safe_dump({"retention": {"events": args.keep}}), encoding="utf-8")
    state = work / "state"
    heed = str(Path(sys.executable).parent / "heed")
    log = (work / "serve.log").open("wb")
    proc = subprocess.Popen([heed, "serve", "--bot", str(bot), "--state", str(state), "--sources", str(sources),
                             "--allow-private", "--quiet", "--keep-requests", args.keep, "--settings", str(settings)],
                            stdout=log,
                            stderr=subprocess.STDOUT)
    samples: list[tuple[float, float, float, float]] = []  # (seconds, RSS MB, database MB, of it seen URLs MB)
    t0 = time.monotonic()
    try:
        while time.monotonic() - t0 < args.minutes * 60:
            time.sleep(args.every)
            if proc.poll() is not None:
                raise SystemExit(f"heed serve exited {proc.returncode}: see {work / 'serve.log'}")
            size = sum(p.stat().st_size for p in state.iterdir() if p.name.startswith("heed.db")) / 1e6
            urls = _table_bytes(state).get("urls", 0) / 1e6
            samples.append((time.monotonic() - t0, _tree_rss_mb(proc.pid), size, urls))
            print(f"  {samples[-1][0]:6.0f} s  RSS {samples[-1][1]:6.1f} MB  database {size:7.1f} MB  "
                  f"(seen URLs {urls:6.1f} MB)", file=sys.stderr, flush=True)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        for s in sites:
            s.shutdown()
    info = json.loads(subprocess.run([heed, "state", "info", "--state", str(state), "--json"], capture_output=True,
                                     text=True).stdout)
    half = len(samples) // 2
    print(f"soak: {args.minutes:g} min, {args.hosts} hosts, d = {args.delay:g} s, {items} new articles a feed a "
          f"minute, request log and results kept {args.keep}; "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    print(f"  requests logged (all runs): {info['tables']['requests']['rows']:,} kept now; results "
          f"{info['tables']['events']['rows']:,}")
    series = {"RSS (MB)": [(t, rss) for t, rss, _, _ in samples],
              "database (MB)": [(t, db) for t, _, db, _ in samples],
              "of it seen URLs": [(t, u) for t, _, _, u in samples],
              "the rest": [(t, db - u) for t, _, db, u in samples]}
    for name, points in series.items():
        a, b = _slope_per_hour(points[:half]), _slope_per_hour(points[half:])
        print(f"  {name:<16} first half {points[half - 1][1] if half else 0:7.1f}, slope {a:+7.1f}/h;  "
              f"second half {points[-1][1] if points else 0:7.1f}, slope {b:+7.1f}/h")
    sizes = _table_bytes(state)
    rows = {name: t.get("rows") for name, t in info["tables"].items()}
    print("  at the end: " + ", ".join(
        f"{name} {size / 1e6:.1f} MB" + (f" ({rows[name]:,} rows)" if isinstance(rows.get(name), int) else "")
        for name, size in sorted(sizes.items(), key=lambda kv: -kv[1])[:6]))
    return 0


def _table_bytes(state: Path) -> dict[str, int]:
    """Bytes of each table of the state's database, its indexes counted in (SQLite's dbstat)."""
    try:
        with closing(sqlite3.connect(f"file:{state / 'heed.db'}?mode=ro", uri=True, timeout=5)) as c:
            rows = c.execute("SELECT coalesce(m.tbl_name, d.name), sum(d.pgsize) FROM dbstat d "
                             "LEFT JOIN sqlite_master m ON m.name = d.name GROUP BY 1").fetchall()
    except sqlite3.Error:
        return {}
    return {str(name): int(size) for name, size in rows}


if __name__ == "__main__":
    sys.exit(main())

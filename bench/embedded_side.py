"""One bench run of the embedded engine as a user runs it: `heed serve --once` on a fresh state
directory, a subprocess, against the fixture web.

Prints one JSON object: the CPU seconds of the command and every process it started (its
workers), measured from outside (the children's rusage once it has exited), the peak of the
summed RSS of its process tree (sampled from /proc), its wall time and what it reported when it
stopped (tokens left waiting, events)."""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fixture_web import PORT, add_size_arguments, make_hosts  # noqa: E402


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants, from /proc."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children", encoding="ascii") as f:
                    todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return out


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def heed_command() -> list[str]:
    """The `heed` a user would run: the one installed beside this Python."""
    script = Path(sys.executable).parent / "heed"
    return [str(script)] if script.exists() else [sys.executable, "-m", "heed.cli"]


def main() -> None:
    ap = argparse.ArgumentParser()
    add_size_arguments(ap)
    ap.add_argument("--workers", type=int, default=0, help="heed serve --workers (0: its default)")
    ap.add_argument("--threads", type=int, default=0, help="heed serve --threads (0: its default)")
    ap.add_argument("--sync", choices=["full", "normal"], default=None, help="heed serve --sync (default: its own)")
    args = ap.parse_args()
    d = args.delay
    hosts = make_hosts(args.hosts, args.pages, d)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        # The profile of bench/heed_side.py: AubeBot's shape with the bench's delay, no article caps.
        (root / "bot.yaml").write_text(yaml.safe_dump({
            "extends": "aubebot",
            "politeness": {"min_delay_s": d, "crawl_delay_cap_s": max(10.0, 4 * d), "max_in_flight": None},
            "tasks": {"feed": {"article_followup": {"per_source_per_window": None, "total_per_window": None,
                                                     "window_s": 0}}},
        }), encoding="utf-8")
        (root / "sources.csv").write_text("id,url,kind\n" + "".join(
            f"h{h.index},http://{h.ip}:{PORT}/feed.xml,feed\n" for h in hosts), encoding="utf-8")
        cmd = [*heed_command(), "serve", "--bot", str(root / "bot.yaml"), "--state", str(root / "state"),
               "--sources", str(root / "sources.csv"), "--once", "--quiet", "--allow-private", "--patience", "30"]
        if args.workers:
            cmd += ["--workers", str(args.workers)]
        if args.threads:
            cmd += ["--threads", str(args.threads)]
        if args.sync:
            cmd += ["--sync", args.sync]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        out_path, err_path = root / "stdout", root / "stderr"
        with out_path.open("wb") as out, err_path.open("wb") as err:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err)
            peak = [0]
            done = threading.Event()

            def sample() -> None:
                while not done.wait(0.2):
                    peak[0] = max(peak[0], sum(_rss_kb(p) for p in _tree(proc.pid)))
            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            code = proc.wait(timeout=7200)
            done.set()
            sampler.join()
        wall = time.monotonic() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if code != 0:
            raise SystemExit(f"heed serve exited {code}:\n{err_path.read_text()[-3000:]}")
        stop: dict[str, Any] = {}
        start: dict[str, Any] = {}
        pools: list[dict[str, Any]] = []  # each process's threads, as its engine reports them on stopping
        for line in out_path.read_text(encoding="utf-8").splitlines():
            if line.startswith("{"):
                rec = json.loads(line)
                if rec.get("event") == "stop":
                    stop = rec
                elif rec.get("event") == "start":
                    start = rec
                elif rec.get("event") == "threads":
                    pools.append({k: rec.get(k) for k in ("peak", "cap", "in_flight")})
    print(json.dumps({
        "engine": "embedded", "command": " ".join(["heed", *cmd[len(heed_command()):]]),
        "requests": stop.get("requests", 0), "left": stop.get("waiting", 0), "events": stop.get("events", 0),
        "failures": stop.get("failures", 0), "wall_s": wall, "workers": start.get("workers"),
        "threads": start.get("threads"), "pools": pools,
        "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "sys_s": after.ru_stime - before.ru_stime, "rss_mb": peak[0] / 1024,
        # every thread's context switches, given up (a wait) and taken (preempted)
        "switches": [after.ru_nvcsw - before.ru_nvcsw, after.ru_nivcsw - before.ru_nivcsw],
    }))


if __name__ == "__main__":
    main()

"""A state directory that has run for months, and how fast it answers a site owner (issue 34).

Makes a state holding ``--requests`` logged requests (default 10,000,000) over ``--hosts`` hosts
(default 20,000), each row as `heed serve` writes it (its record, ~270 bytes), then runs, each as
a subprocess as an operator would, `heed audit --host H --state S --json`, `heed explain URL
--state S --json` and `heed state info --state S --json`, and prints each one's wall time and peak
RSS beside the goals (<= 1 s, <= 150 MB; state info <= 1 s).

    .venv/bin/python bench/state_size.py [--requests N] [--hosts N] [--state DIR] [--keep]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
T0 = 1_760_000_000.0  # the log starts here and runs on for the span the requests take


def make_state(path: Path, requests: int, hosts: int) -> float:
    """The state, its request log filled as `heed serve` fills it; seconds it took."""
    from heed_embedded.journal import _INSERT_REQUEST, _request_row
    from heed_embedded.state import open_state

    t0 = time.monotonic()
    st = open_state(path, create=True)
    st.claim_bot("aubebot")
    db = st.db
    step = 400 * 86400.0 / requests  # a year and more of requests, evenly spread
    batch = 50_000
    for start in range(0, requests, batch):
        rows = []
        for i in range(start, min(requests, start + batch)):
            h = i % hosts
            t = T0 + i * step
            url = f"https://site{h}.example/articles/{i // hosts}"
            rec = {"bot": "aubebot", "t_start": _iso(t), "t_end": _iso(t + 0.3), "method": "GET", "url": url,
                   "purpose": "article", "bytes": 31_337, "source": f"feed-{h}", "status": 200,
                   "host": f"https://site{h}.example:443", "wall": round(t + 0.301, 3)}
            rows.append(_request_row(rec))
        with db.write("bench fill") as c:
            c.executemany(_INSERT_REQUEST, rows)
        if start % 1_000_000 == 0:
            print(f"  {start:,} rows, {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    st.close()
    return time.monotonic() - t0


def _iso(t: float) -> str:
    from heed_core.refusals import iso

    return iso(t)


def timed(argv: list[str]) -> tuple[float, float, int, int]:
    """(seconds, peak RSS in MB, exit code, lines printed) of one command, run as a subprocess."""
    code = ("import resource, subprocess, sys, time, json; t = time.monotonic(); "
            "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
            "print(json.dumps([time.monotonic() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
            "p.returncode, len(p.stdout.splitlines())]))")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True).stdout
    seconds, rss_kb, rc, lines = json.loads(out)
    return float(seconds), float(rss_kb) / 1024, int(rc), int(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=10_000_000)
    ap.add_argument("--hosts", type=int, default=20_000)
    ap.add_argument("--state", help="make (or reuse) the state here (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the state afterwards")
    args = ap.parse_args()
    heed = str(Path(sys.executable).parent / "heed")
    state = Path(args.state) if args.state else Path(tempfile.mkdtemp(prefix="heed-state-bench-")) / "state"
    try:
        if not (state / "heed.db").is_file():
            print(f"making a state of {args.requests:,} requests over {args.hosts:,} hosts in {state}", file=sys.stderr)
            took = make_state(state, args.requests, args.hosts)
            print(f"made in {took:.0f} s", file=sys.stderr)
        size = sum(p.stat().st_size for p in state.iterdir() if p.name.startswith("heed.db"))
        host = f"site{args.hosts // 2}.example"
        url = f"https://{host}/articles/3"
        rows = []
        for name, argv, goal_s, goal_mb in (
                ("audit --host", [heed, "audit", "--host", host, "--state", str(state), "--json"], 1.0, 150.0),
                ("explain URL", [heed, "explain", url, "--state", str(state), "--bot", "aubebot", "--json"],
                 1.0, 150.0),
                ("state info", [heed, "state", "info", "--state", str(state), "--json"], 1.0, None)):
            seconds, mb, rc, lines = timed(argv)
            ok = rc == 0 and seconds <= goal_s and (goal_mb is None or mb <= goal_mb)
            rows.append(f"  {name:<14} {seconds:6.2f} s  {mb:6.0f} MB peak RSS  exit {rc}  "
                        f"(goal <= {goal_s:g} s{f', <= {goal_mb:g} MB' if goal_mb else ''}) {'ok' if ok else 'MISSED'}"
                        f"{'' if name != 'audit --host' else f'  ({lines} requests)'}")
        load = os.getloadavg()[0]
        print(f"state: {args.requests:,} requests over {args.hosts:,} hosts, {size / 1e9:.2f} GB; "
              f"{os.cpu_count()} cores, load {load:.1f}")
        print("\n".join(rows))
        return 0
    finally:
        if not args.keep and not args.state:
            shutil.rmtree(state.parent, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

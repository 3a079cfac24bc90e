"""Billed time vs network time vs politeness waits, for one round over several hosts (on demand).

    .venv/bin/python bench/bench_pipeline.py [--hosts 4] [--pages 6] [--delay 0.3] [--latency 0.05]

Prints figures measured in one run, and their ratios (this machine is shared: compare ratios)."""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from heed.demo.web import RecordingServer, Route, Site
from heed.local.runtime import LocalRun
from heed_core.profile import load_profile_data
from heed_core.work import Source


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=4)
    ap.add_argument("--pages", type=int, default=6)
    ap.add_argument("--delay", type=float, default=0.3)
    ap.add_argument("--latency", type=float, default=0.05)
    args = ap.parse_args()

    def page(i: int) -> Route:
        def body(hit: object) -> str:
            time.sleep(args.latency)
            return f"<html><title>p{i}</title><article><h2><a href='/x/{i}'>p{i}</a></h2></article></html>"
        return Route(body=body)

    servers = []
    for h in range(args.hosts):
        routes = {"/robots.txt": Route(body="User-agent: *\nAllow: /\n", content_type="text/plain")}
        routes.update({f"/l/{i}/": page(i) for i in range(args.pages)})
        servers.append(RecordingServer(Site(name=f"h{h}", routes=routes), ip=f"127.0.0.{200 + h}").start())
    profile = load_profile_data({"extends": "springstudiobot", "politeness": {"min_delay_s": args.delay}})
    sources = [Source(id=f"s{h}-{i}", url=f"{s.base_url}/l/{i}/", kind="page") for h, s in enumerate(servers)
               for i in range(args.pages)]
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.monotonic()
        summary = LocalRun(profile, sources, start=time.time(), until=time.time(), out_dir=Path(tmp),
                           allow_private=True, patience_s=10).run()
        wall = time.monotonic() - t0
        reqs = [json.loads(x) for x in (Path(tmp) / "requests.jsonl").read_text().splitlines()]
    for s in servers:
        s.stop()
    from datetime import datetime

    def ts(x: str) -> float:
        return datetime.fromisoformat(x.replace("Z", "+00:00")).timestamp()

    network = sum(ts(r["t_end"]) - ts(r["t_start"]) for r in reqs)
    waits = args.hosts * args.pages * args.delay
    billed = summary["fetcher_billed_s"]
    print(f"hosts={args.hosts} pages/host={args.pages} delay={args.delay}s latency={args.latency}s")
    print(f"requests={len(reqs)} invocations={summary['invocations']} wall={wall:.2f}s")
    print(f"network={network:.3f}s billed={billed:.3f}s politeness waits (sum)={waits:.2f}s")
    print(f"billed/network={billed / network:.2f}  billed/waits={billed / waits:.2f}  "
          f"overhead per invocation={(billed - network) / summary['invocations'] * 1000:.1f} ms")


if __name__ == "__main__":
    main()

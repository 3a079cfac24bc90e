"""Heed's local runtime and Scrapy on the same fixture web, in one run, side by side (see bench/run).

For each size: the fixture web starts in its own process, Heed crawls it (its own process), then
Scrapy does (its own process); the fixture logs every request's start and end from the site's
side, and the figures are computed from that log: span against the ideal, gap violations, gaps
against the required gap, CPU per page, peak RSS; for Heed also the AWS calls per page by
operation and the cost per million pages from the price table below. Last, the ceiling
(``ceiling_side.py``): the same requests through `requests` alone, as fast as this machine makes
them, and from it the highest efficiency any crawler on `requests` can reach here at that size."""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fixture_web import Host, add_latency_arguments, describe_latency, make_hosts  # noqa: E402

SIZES = {  # name: (hosts, requests per host, delay d in seconds)
    "smoke": (10, 5, 1.0),
    "200x10": (200, 10, 1.0),
    "1000x5": (1000, 5, 2.0),
    "10000x3": (10000, 3, 2.0),
}

# eu-west-1 (Ireland) list prices, read 2026-11 from aws.amazon.com/<service>/pricing; DynamoDB's
# on-demand prices are those after the 50 % cut of November 2024. Free tiers are left out.
PRICES = {
    "lambda_gb_s": 0.0000133334,  # arm64 (the template's), per GB-second
    "lambda_request": 0.20 / 1e6,
    "sqs_fifo_request": 0.50 / 1e6,  # a request carries up to 10 messages / 64 KB
    "dynamodb_wru": 0.7068 / 1e6,  # on-demand write request unit (1 KB)
    "dynamodb_rru": 0.1413 / 1e6,  # on-demand read request unit (4 KB, strongly consistent)
    "eventbridge_event": 1.00 / 1e6,  # custom events, per 64 KB chunk
    "s3_put": 0.005 / 1e3,
    "s3_get": 0.0004 / 1e3,
    "nat_gb": 0.048,  # NAT gateway data processed (shown apart)
}


@dataclass
class SiteView:
    """What the sites saw from one crawler."""

    requests: int
    span_s: float
    ideal_s: float
    violations: int
    gaps: int
    ratio_median: float
    ratio_p99: float
    ratio_min: float

    @property
    def efficiency(self) -> float:
        return self.ideal_s / self.span_s if self.span_s else 0.0


def site_view(log: list[dict[str, Any]], hosts: dict[str, Host], delay: float) -> SiteView:
    by_host: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in log:
        by_host[r["host"]].append(r)
    ratios: list[float] = []
    violations = 0
    # The same ideal for every crawler: the slowest host's polite requests (robots.txt, the feed,
    # the articles it allows), their latencies and the gaps between them, end to start.
    ideal = max((h.ideal_span(delay) for h in hosts.values()), default=0.0)
    for ip, recs in by_host.items():
        recs.sort(key=lambda r: r["t_start"])
        required = hosts[ip].required_gap(delay)
        for a, b in pairwise(recs):
            gap = b["t_start"] - a["t_end"]
            ratios.append(gap / required)
            violations += gap < required - 0.001
    span = (max(r["t_end"] for r in log) - min(r["t_start"] for r in log)) if log else 0.0
    ratios.sort()
    p99 = ratios[min(len(ratios) - 1, int(0.99 * len(ratios)))] if ratios else 0.0
    return SiteView(len(log), span, ideal, violations, len(ratios), statistics.median(ratios) if ratios else 0.0,
                    p99, ratios[0] if ratios else 0.0)


def cost_per_million(h: dict[str, Any]) -> dict[str, float]:
    """Dollars per million pages on AWS, by what is billed (NAT data apart)."""
    pages = max(1, h["requests"])
    scale = 1e6 / pages
    lam = (h["billed_s"] * h["fetcher_memory_mb"] / 1024 * PRICES["lambda_gb_s"]
           + h["invocations"] * PRICES["lambda_request"])
    out = {
        "lambda": lam * scale,
        "sqs": h["sqs_requests"] * PRICES["sqs_fifo_request"] * scale,
        "dynamodb": (h["wru"] * PRICES["dynamodb_wru"] + h["rru"] * PRICES["dynamodb_rru"]) * scale,
        "eventbridge": h["events"] * PRICES["eventbridge_event"] * scale,
        "s3": (h["s3_puts"] * PRICES["s3_put"] + h["s3_gets"] * PRICES["s3_get"]) * scale,
    }
    out["total"] = sum(out.values())
    out["nat_per_gb"] = PRICES["nat_gb"]
    return out


def cost_inputs(res: dict[str, Any]) -> dict[str, Any]:
    """What one page costs in each billed unit, as this run measured it (``heed cost`` reads this)."""
    h = res["heed"]
    pages = max(1, h["requests"])
    calls = Counter(h["calls"])
    return {
        "measured": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "python": platform.python_version(), "size": res["size"], "pages": pages,
        "bench_latency_s": res["mean_latency_s"], "fetcher_memory_mb": h["fetcher_memory_mb"],
        "per_page": {
            "billed_s": h["billed_s"] / pages, "cpu_s": h["cpu_s"] / pages,
            "fetcher_invocations": h["invocations"] / pages,
            "rru": h["rru"] / pages, "wru": h["wru"] / pages,
            # the poller's ReceiveMessage is Lambda's event source mapping: billed as SQS requests too
            "sqs_requests": h["sqs_requests"] / pages, "receive_requests": calls.get("sqs.ReceiveMessage", 0) / pages,
            "events": h["events"] / pages, "s3_puts": h["s3_puts"] / pages, "s3_gets": h["s3_gets"] / pages,
            "log_bytes": h["log_bytes"] / pages, "bytes_fetched": h["page_bytes"] / pages,
        },
        "per_invocation": {"emf_bytes": h["emf_bytes_per_invocation"]},
        "per_tick": {"log_bytes": h["tick_log_bytes"]},
    }


def _python() -> str:
    return sys.executable


def _run_side(cmd: list[str], env: dict[str, str]) -> dict[str, Any]:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:2])} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def load_avg() -> float:
    """The machine's 1-minute load average (other jobs share it: each figure is read beside it)."""
    return os.getloadavg()[0]


def run_size(name: str, hosts_n: int, pages: int, delay: float, sides: list[str], engine: str = "aws",
             workers: int = 0, sync: str | None = None, threads: int = 0, latency: float | None = None,
             mix: bool = False, seed: int = 1, keep_logs: Path | None = None, webhook: bool = False) -> dict[str, Any]:
    host_list = make_hosts(hosts_n, pages, delay, latency, mix, seed)
    hosts = {h.ip: h for h in host_list}
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    out: dict[str, Any] = {"size": name, "hosts": hosts_n, "pages": pages, "delay": delay, "engine": engine,
                           "latency": describe_latency(host_list),
                           "mean_latency_s": sum(h.latency for h in host_list) / max(1, len(host_list))}
    latency_args = ["--latency-mix", "--seed", str(seed)] if mix else (
        ["--latency", str(latency)] if latency is not None else [])
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "web.jsonl"
        web = subprocess.Popen([_python(), str(HERE / "fixture_web.py"), "--hosts", str(hosts_n), "--pages",
                                str(pages), "--delay", str(delay), *latency_args, "--log", str(log_path)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        assert web.stdout is not None and web.stdin is not None
        ready = web.stdout.readline()
        if not ready.startswith("ready"):
            raise SystemExit(f"fixture web did not start: {ready!r}")

        def dump() -> list[dict[str, Any]]:
            web.stdin.write("dump\n")  # type: ignore[union-attr]
            web.stdin.flush()  # type: ignore[union-attr]
            assert web.stdout.readline().strip() == "dumped"  # type: ignore[union-attr]
            return [json.loads(line) for line in log_path.read_text().splitlines()]

        try:
            args = ["--hosts", str(hosts_n), "--pages", str(pages), "--delay", str(delay)]
            for side in sides:
                script = {"heed": "embedded_side.py" if engine == "embedded" else "heed_side.py",
                          "scrapy": "scrapy_side.py", "ceiling": "ceiling_side.py",
                          "parsed-ceiling": "ceiling_side.py"}[side]
                extra: list[str] = ["--parse"] if side == "parsed-ceiling" else []
                if side == "heed" and engine == "aws" and webhook:
                    extra = ["--webhook"]
                if side == "heed" and engine == "embedded":
                    extra = ((["--workers", str(workers)] if workers else []) + (["--sync", sync] if sync else [])
                             + (["--threads", str(threads)] if threads else []))
                load0 = load_avg()
                t0 = time.monotonic()
                result = _run_side([_python(), str(HERE / script), *args, *extra], env)
                result["process_wall_s"] = time.monotonic() - t0
                result["load"] = [load0, load_avg()]
                log = dump()
                if keep_logs is not None:
                    keep_logs.mkdir(parents=True, exist_ok=True)
                    (keep_logs / f"{name}-{side}.jsonl").write_text(log_path.read_text())
                result["site"] = site_view(log, hosts, delay).__dict__
                out[side] = result
        finally:
            web.stdin.write("quit\n")
            web.stdin.flush()
            web.wait(timeout=30)
    return out


def _fmt(v: float, unit: str = "", digits: int = 2) -> str:
    return f"{v:.{digits}f}{unit}"


def report(res: dict[str, Any]) -> str:
    lines = [f"== {res['size']}: {res['hosts']} hosts x {res['pages']} requests, d = {res['delay']:g} s "
             f"(every 4th host Crawl-delay {2 * res['delay']:g} s), {res['latency']}"]
    engine = res.get("engine", "aws")
    rows = [("", f"heed ({engine})", "scrapy")]

    def both(label: str, f: Any) -> None:
        rows.append((label, *(f(res[s]) if s in res else "-" for s in ("heed", "scrapy"))))

    both("requests seen by the sites", lambda r: str(r["site"]["requests"]))
    both("site-side span / ideal", lambda r: f"{r['site']['span_s']:.1f} s / {r['site']['ideal_s']:.1f} s")
    both("efficiency (ideal / span)",
         lambda r: _fmt(r["site"]["ideal_s"] / r["site"]["span_s"] if r["site"]["span_s"] else 0))
    both("gap violations", lambda r: f"{r['site']['violations']} of {r['site']['gaps']}")
    both("gap / required: median, p99, min",
         lambda r: f"{r['site']['ratio_median']:.2f}, {r['site']['ratio_p99']:.2f}, {r['site']['ratio_min']:.2f}")
    both("CPU per page", lambda r: _fmt(1000 * r["cpu_s"] / max(1, r["site"]["requests"]), " ms", 1))
    both("peak RSS", lambda r: _fmt(r["rss_mb"], " MB", 0))
    both("machine load (1 min), before / after", lambda r: f"{r['load'][0]:.2f} / {r['load'][1]:.2f}")
    width = [max(len(str(r[i])) for r in rows) for i in range(3)]
    if "heed" in res or "scrapy" in res:
        lines += ["  ".join(str(c).ljust(width[i]) for i, c in enumerate(r)) for r in rows]
    h = res.get("heed")
    if h and engine == "embedded":
        shape = f"{h['threads']} threads" if h["threads"] else "threads as the work asks"
        lines.append(f"Heed: `{h['command']}` ({h['workers']} processes x {shape}), wall "
                     f"{h['wall_s']:.1f} s from start to exit, {h['events']} events, {h['left']} tokens left, "
                     f"{h['failures']} failures")
        if h.get("switches"):
            pages = max(1, h["site"]["requests"])
            lines.append(f"  context switches a page: {h['switches'][0] / pages:.1f} waits, "
                         f"{h['switches'][1] / pages:.1f} preempted (every thread of every process)")
        if h.get("pools"):
            lines.append("  threads of each process at most: " + ", ".join(
                f"{p['peak']} (cap {p['cap']}, most requests in flight {p['in_flight']})" for p in h["pools"]))
        if "scrapy" in res:
            ratio = (h["cpu_s"] / max(1, h["site"]["requests"])) / max(
                1e-9, res["scrapy"]["cpu_s"] / max(1, res["scrapy"]["site"]["requests"]))
            lines.append(f"Heed's CPU per page / Scrapy's: {ratio:.2f}")
    elif h:
        pages = max(1, h["requests"])
        calls = Counter(h["calls"])
        poll = calls.pop("sqs.ReceiveMessage", 0)
        dynamo = sum(v for k, v in calls.items() if k.startswith("dynamodb."))
        lines.append(f"Heed AWS calls per page: {sum(calls.values()) / pages:.2f} (DynamoDB {dynamo / pages:.2f}; "
                     f"the poller's ReceiveMessage apart: {poll / pages:.2f})")
        lines.append("  " + ", ".join(f"{k} {v / pages:.2f}" for k, v in sorted(calls.items(), key=lambda kv: -kv[1])))
        c = cost_per_million(h)
        lines.append(f"Heed's per-page units on AWS, per million pages: ${c['total']:.2f} "
                     f"(Lambda {c['lambda']:.2f}, SQS {c['sqs']:.2f}, "
                     f"DynamoDB {c['dynamodb']:.2f}, EventBridge {c['eventbridge']:.2f}, S3 {c['s3']:.2f}); "
                     f"NAT data apart at ${c['nat_per_gb']}/GB; the bill, all in: heed cost")
        lines.append(f"  ({h['invocations']} fetcher invocations of {h['concurrency']} at once, billed "
                     f"{h['billed_s']:.1f} s; {h['wru']:.0f} WRU, {h['rru']:.0f} RRU; "
                     f"max receive count {h['max_receive_count']})")
        d = h.get("delivery")
        if d:
            events = max(1, d["events"])
            lines.append(f"The webhook's deliverer beside the crawl: {1000 * d['cpu_s'] / events:.2f} ms CPU and "
                         f"{sum(d['calls'].values()) / events:.2f} AWS calls a result delivered "
                         f"({d['events']} results in {d['invocations']} invocations); the crawl "
                         f"{1000 * h['cpu_s'] / pages:.2f} ms CPU and {sum(calls.values()) / pages:.2f} AWS calls "
                         "a page")
            lines.append("  " + ", ".join(f"{k} {v / events:.2f}" for k, v in sorted(d["calls"].items(),
                                                                                     key=lambda kv: -kv[1])))
    for side in ("ceiling", "parsed-ceiling"):
        if res.get(side):
            lines.append(ceiling_line(res[side]))
    return "\n".join(lines)


def ceiling_floor(c: dict[str, Any]) -> float:
    """The shortest span a crawler on `requests` can have on this machine at this size: it makes
    the ceiling's requests and more work for each, so at least requests / rate."""
    return c["requests"] / c["rate"] if c["rate"] else float("inf")


def ceiling_bound(c: dict[str, Any]) -> float:
    """The highest efficiency a crawler on `requests` can reach on this machine at this size."""
    floor = ceiling_floor(c)
    return min(1.0, c["site"]["ideal_s"] / floor) if floor else 1.0


def ceiling_line(c: dict[str, Any]) -> str:
    if c.get("parsed"):
        what, who = ("each answer parsed (robots.txt by protego, the feed by feedparser, an article by lxml), "
                     "no gap, no state"), "on Heed's packages"
    else:
        what, who = "no gap, no parsing", "on `requests`"
    return (f"Ceiling of this machine (the same {c['requests']} requests through `requests` alone, "
            f"{c['processes']} x {c['threads']} threads, {what}): {c['wall_s']:.1f} s, "
            f"{c['rate']:.0f} requests/s, CPU {1000 * c['cpu_s'] / max(1, c['requests']):.1f} ms each: a crawler "
            f"{who} spans at least {ceiling_floor(c):.1f} s here, efficiency at most {ceiling_bound(c):.2f}")


def _memory() -> str:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            return f"{int(f.readline().split()[1]) / 2**20:.0f} GiB"
    except (OSError, ValueError, IndexError):
        return "memory unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", action="append", choices=sorted(SIZES) + ["all"],
                    help="smoke (default), 200x10, 1000x5, 10000x3 or all; may be repeated")
    ap.add_argument("--side", action="append", choices=["heed", "scrapy", "ceiling", "parsed-ceiling"],
                    help="default: heed, scrapy and ceiling (ceiling: the crawl's requests through `requests` "
                         "alone, as fast as this machine makes them: the highest efficiency any crawler on it "
                         "can reach; parsed-ceiling: the same with each answer parsed by protego, feedparser "
                         "or lxml, as a crawler on Heed's packages must)")
    ap.add_argument("--engine", choices=["aws", "embedded"], default="aws",
                    help="heed's side: aws (heed local run's AWS-fidelity path, the real handlers on moto; "
                         "the default, and what --cost-inputs measures) or embedded (`heed serve --once` on "
                         "SQLite, the command a user runs, timed from outside)")
    ap.add_argument("--workers", type=int, default=0, help="--engine embedded: heed serve --workers N")
    ap.add_argument("--threads", type=int, default=0, help="--engine embedded: heed serve --threads N")
    ap.add_argument("--delay", type=float, default=None, metavar="D",
                    help="the gap d every site asks for (default: the size's, 1 s up to 200x10, 2 s above)")
    add_latency_arguments(ap)
    ap.add_argument("--sync", choices=["full", "normal"], help="--engine embedded: heed serve --sync")
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    ap.add_argument("--keep-logs", metavar="DIR", type=Path,
                    help="keep what the sites logged of each side (DIR/SIZE-SIDE.jsonl: a request a line)")
    ap.add_argument("--cost-inputs", metavar="FILE",
                    help="write what `heed cost` reads: Heed's per-page figures of the largest size run")
    ap.add_argument("--bot-shapes", metavar="FILE",
                    help="also run each built-in bot's own shape of work (bench/cost_units.py: one round of each "
                         "on the demo web, its batch size and concurrency) and write its units into this "
                         "cost-inputs file, under 'bots' (what `heed cost` bills each bot with)")
    ap.add_argument("--webhook", action="store_true",
                    help="--engine aws: the stack posts each result to a webhook (a receiver on loopback); the "
                         "deliverer's CPU and AWS calls a result are printed beside the crawl's")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if Heed broke a gap or left work undone (make test runs the smoke size so)")
    args = ap.parse_args()
    sizes = args.size or ["smoke"]
    if "all" in sizes:
        sizes = list(SIZES)
    latency_set = args.latency_mix or args.latency is not None
    # The ceiling is the machine's rate at the base latency: with sites that take longer, the
    # bound it gives is the same and no longer a figure of this run.
    sides = args.side or (["heed", "scrapy"] if latency_set else ["heed", "scrapy", "ceiling"])
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {_memory()}, {platform.python_implementation()} "
          f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}, load {load_avg():.2f}")
    results = []
    for name in sizes:
        hosts_n, pages, delay = SIZES[name]
        res = run_size(name, hosts_n, pages, args.delay if args.delay is not None else delay, sides, args.engine,
                       args.workers, args.sync, args.threads, args.latency, args.latency_mix, args.seed, args.keep_logs,
                       args.webhook)
        results.append(res)
        print(report(res), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    if args.cost_inputs:
        if args.engine != "aws":
            raise SystemExit("bench: --cost-inputs measures the aws engine (the handlers as Lambda runs them)")
        runs = [r for r in results if "heed" in r]
        if not runs:
            raise SystemExit("bench: --cost-inputs needs the heed side")
        biggest = max(runs, key=lambda r: r["heed"]["requests"])
        Path(args.cost_inputs).write_text(json.dumps(cost_inputs(biggest), indent=2) + "\n")
    if args.bot_shapes:
        proc = subprocess.run([_python(), str(HERE / "cost_units.py"), "--write", args.bot_shapes], timeout=3600)
        if proc.returncode != 0:
            raise SystemExit("bench: bench/cost_units.py failed")
    if args.check:
        bad = [r["size"] for r in results if "heed" in r and (
            r["heed"]["site"]["violations"] or r["heed"]["left"] or r["heed"]["site"]["requests"] == 0)]
        if bad:
            raise SystemExit(f"bench: Heed broke a gap or left work undone at {', '.join(bad)}")


if __name__ == "__main__":
    main()

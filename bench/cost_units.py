#!/usr/bin/env python3.13
"""Each bot's own units for `heed cost`: one round of the bot on the bundled demo web (the shape of
its work: AubeBot's feeds and articles, Praha-X's texts kept in S3, SpringStudioBot's sitemaps
and listings, SubsidieUpdate's municipal pages, WannadoBot's agenda), through the real handlers
on in-process moto, with the bot's own batch size and concurrency, AWS calls counted with
botocore's hooks (bench/heed_side.py's counter) and DynamoDB units from the items' sizes.

    bench/run is not needed: .venv/bin/python bench/cost_units.py [--bot B ...] [--write bench/cost-inputs.json]

Prints one line a bot; --write merges them into the file `heed cost` reads, under "bots"."""
from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from heed_side import AwsCounter, count_logs, item_size  # noqa: E402

from heed_core.profile import BUILTIN_BOTS  # noqa: E402
from heed_core.rounds import round_plan  # noqa: E402
from heed_core.sources import load_sources  # noqa: E402

from heed.demo.run import demo_profile  # noqa: E402
from heed.demo.sources import write_sources  # noqa: E402
from heed.demo.web import DemoWeb  # noqa: E402
from heed.local.runtime import LocalRun  # noqa: E402
from heed.samconfig import fetcher_batch_size  # noqa: E402


class StoreCounter(AwsCounter):
    """The bench's counter, and what is stored: the bytes of the items written to the table (a
    month of them stays: the items' 30-day TTL) and of the objects put in the bucket."""

    def __init__(self) -> None:
        super().__init__()
        self.table_bytes = 0
        self.bucket_bytes = 0

    def _after(self, http_response: Any, parsed: dict[str, Any], model: Any, context: dict[str, Any],
               **kw: Any) -> None:
        super()._after(http_response, parsed, model, context, **kw)
        params = context.get("bench_params") or {}
        service, op = model.service_model.service_name, model.name
        if service == "dynamodb" and op == "PutItem":
            self.table_bytes += item_size(params.get("Item", {}))
        elif service == "dynamodb" and op == "BatchWriteItem":
            self.table_bytes += sum(item_size((r.get("PutRequest") or {}).get("Item") or {})
                                    for reqs in params.get("RequestItems", {}).values() for r in reqs)
        elif service == "s3" and op == "PutObject":
            body = params.get("Body", b"")
            self.bucket_bytes += len(body) if isinstance(body, (bytes, str)) else 0


def measure(bot: str, files: dict[str, Path], tmp: Path) -> dict[str, Any]:
    """One round of ``bot`` on the demo web: its units per request made (a page, its robots.txt
    and every other request alike: what the bill follows)."""
    profile = demo_profile(bot)
    sources = load_sources(files[bot], profile)
    counter = StoreCounter()
    now = time.time()
    run = LocalRun(profile, sources, start=now, until=now, out_dir=tmp / bot, allow_private=True,
                   patience_s=10.0, session_hook=counter.attach)
    run.setup()
    logs = count_logs()
    counter.calls.clear()
    counter.rru = counter.wru = 0.0
    counter.events = counter.s3_puts = counter.s3_gets = counter.sqs_requests = 0
    counter.table_bytes = counter.bucket_bytes = 0
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    left = 0
    for t, tasks in round_plan(profile, now, now).items():  # the rounds `heed demo` plays
        run.fire(t, tasks)
        left = run.drain()
    tick_log_bytes = 0  # the scheduler's lines are in the fixed part of the bill (per_tick)
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    requests = run.out.n["requests"]
    run.out.close({"bot": profile.name})
    run.close()
    pages = max(1, requests)
    return {
        "requests": requests, "left": left, "batch_size": fetcher_batch_size(profile),
        "concurrency": run.concurrency,
        "per_page": {
            "billed_s": run.billed_s / pages,
            "cpu_s": ((cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)) / pages,
            "fetcher_invocations": run.invocations / pages,
            "rru": counter.rru / pages, "wru": counter.wru / pages,
            "sqs_requests": counter.sqs_requests / pages,
            "events": counter.events / pages,
            "s3_puts": counter.s3_puts / pages, "s3_gets": counter.s3_gets / pages,
            "log_bytes": (logs.bytes - tick_log_bytes) / pages,
            "table_bytes": counter.table_bytes / pages, "bucket_bytes": counter.bucket_bytes / pages,
        },
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bot", action="append", choices=list(BUILTIN_BOTS), help="only this bot (repeatable)")
    ap.add_argument("--write", metavar="FILE", help="merge the figures into this cost-inputs file, under 'bots'")
    args = ap.parse_args()
    bots = args.bot or list(BUILTIN_BOTS)
    web = DemoWeb()
    urls = web.start()
    found: dict[str, Any] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            files = write_sources(urls, Path(tmp) / "sources")
            for bot in bots:
                found[bot] = measure(bot, files, Path(tmp))
                u = found[bot]["per_page"]
                print(f"{bot:16} {found[bot]['requests']:4d} requests (batch {found[bot]['batch_size']}): "
                      f"{u['fetcher_invocations']:.2f} calls, {u['billed_s'] * 1000:.0f} ms billed, "
                      f"{u['wru']:.1f} WRU, {u['rru']:.1f} RRU, {u['sqs_requests']:.2f} SQS, "
                      f"{u['events']:.2f} events, {u['s3_puts']:.2f} S3 puts a request", flush=True)
    finally:
        web.stop()
    if args.write:
        path = Path(args.write)
        data = json.loads(path.read_text(encoding="utf-8"))
        stamp = {"measured": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, "
                 f"{len(__import__('os').sched_getaffinity(0))} cores", "shape": "one round on the demo web"}
        data.setdefault("bots", {}).update({bot: {**stamp, **v} for bot, v in found.items()})
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {path} (bots: {', '.join(found)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

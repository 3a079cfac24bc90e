"""One bench run of Heed's local runtime (the real handlers on in-process moto) against the fixture web.

Prints one JSON object: CPU seconds and peak RSS of this process for the crawl, AWS calls by
service and operation (counted with botocore's own event hooks), DynamoDB read and write units
worked out from the items' sizes as DynamoDB bills them, and what Lambda would bill."""
from __future__ import annotations

import argparse
import json
import math
import resource
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from heed_core.profile import load_profile_data  # noqa: E402
from heed_core.work import Source  # noqa: E402

from heed.local.runtime import LocalRun  # noqa: E402
from heed.outputs import read_jsonl  # noqa: E402

from fixture_web import PORT, add_size_arguments, make_hosts  # noqa: E402


def _size(value: dict[str, Any]) -> int:
    """The size DynamoDB counts for one attribute value (names are added by the caller)."""
    (kind, v), = value.items()
    if kind == "S":
        return len(v.encode("utf-8"))
    if kind == "N":
        return len(str(v).lstrip("-").replace(".", "")) // 2 + 2
    if kind == "B":
        return len(v)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind in ("SS", "NS", "BS"):
        return sum(len(str(x)) for x in v)
    if kind == "L":
        return 3 + sum(1 + _size(x) for x in v)
    if kind == "M":
        return 3 + sum(len(k) + 1 + _size(x) for k, x in v.items())
    return 0


def item_size(item: dict[str, Any]) -> int:
    return sum(len(k) + _size(v) for k, v in item.items())


class AwsCounter:
    """botocore ``after-call`` hooks: calls by operation, and the units they cost."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.rru = 0.0
        self.wru = 0.0
        self.events = 0
        self.s3_puts = 0
        self.s3_gets = 0
        self.sqs_requests = 0
        self.sizes: dict[str, list[int]] = defaultdict(list)  # bytes written per kind of item

    def attach(self, session: Any) -> None:
        session.events.register("provide-client-params", self._keep_params)
        session.events.register("after-call", self._after)

    def _keep_params(self, params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context["bench_params"] = dict(params)

    def _after(self, http_response: Any, parsed: dict[str, Any], model: Any, context: dict[str, Any],
               **_: Any) -> None:
        service = model.service_model.service_name
        op = model.name
        self.calls[f"{service}.{op}"] += 1
        params = context.get("bench_params") or {}
        if service == "dynamodb":
            self._units(op, params, parsed)
        elif service == "sqs":
            self.sqs_requests += 1
        elif service == "events" and op == "PutEvents":
            self.events += sum(max(1, math.ceil(len(e.get("Detail", "")) / 65536)) for e in params.get("Entries", []))
        elif service == "s3":
            self.s3_puts += op in ("PutObject", "DeleteObject", "ListObjectVersions")
            self.s3_gets += op == "GetObject"

    def _units(self, op: str, params: dict[str, Any], parsed: dict[str, Any]) -> None:
        if op == "GetItem":
            self.rru += max(1, math.ceil(item_size(parsed.get("Item") or {}) / 4096))
        elif op == "BatchGetItem":
            asked = sum(len(t["Keys"]) for t in params.get("RequestItems", {}).values())
            found = [i for items in parsed.get("Responses", {}).values() for i in items]
            # Strongly consistent: 4 KB a unit, and a key asked for costs a unit even when absent.
            self.rru += sum(max(1, math.ceil(item_size(i) / 4096)) for i in found) + (asked - len(found))
        elif op == "Query":
            self.rru += max(1, math.ceil(sum(item_size(i) for i in parsed.get("Items", [])) / 4096))
        elif op == "PutItem":
            item = params.get("Item", {})
            self.sizes[item.get("sk", {}).get("S", "?").split("#")[0]].append(item_size(item))
            self.wru += max(1, math.ceil(item_size(item) / 1024))
        elif op in ("UpdateItem", "DeleteItem"):
            self.wru += 1  # Heed's updates touch small items (counters, source fields)
        elif op == "BatchWriteItem":
            for reqs in params.get("RequestItems", {}).values():
                for r in reqs:
                    item = (r.get("PutRequest") or {}).get("Item") or {}
                    self.sizes["batch:" + item.get("sk", {}).get("S", "?").split("#")[0]].append(item_size(item))
                    self.wru += max(1, math.ceil(item_size(item) / 1024))


class ByteCount:
    """A stream that only counts what is written to it (the log lines Lambda would ingest)."""

    def __init__(self) -> None:
        self.bytes = 0
        self.lines = 0

    def write(self, text: str) -> int:
        self.bytes += len(text.encode("utf-8"))
        self.lines += text.count("\n")
        return len(text)

    def flush(self) -> None:
        pass


def count_logs() -> ByteCount:
    """The handlers' log records at INFO (the template's LogLevel) counted instead of printed."""
    import logging

    from heed_aws.journal import logger

    sink = ByteCount()
    logger.setLevel("INFO")
    handler = logger.registered_handler
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(sink)  # type: ignore[arg-type]
    return sink


def emf_bytes() -> int:
    """The size of one invocation's EMF document with every one of the bot's metrics in it."""
    from aws_lambda_powertools import Metrics
    from aws_lambda_powertools.metrics import MetricUnit

    from heed_aws.journal import METRICS

    doc = Metrics(service="heed", namespace="Heed/aubebot")
    for name in METRICS:
        doc.add_metric(name=name, unit=MetricUnit.Count, value=123.0)
    out = json.dumps(doc.serialize_metric_set(), separators=(",", ":"))
    doc.clear_metrics()
    return len(out) + 1


def main() -> None:
    ap = argparse.ArgumentParser()
    add_size_arguments(ap)
    ap.add_argument("--concurrency", type=int, default=None)
    ap.add_argument("--webhook", action="store_true",
                    help="the stack posts each result to a webhook (a receiver here, on loopback): the "
                         "deliverer's CPU and AWS calls a delivered result are measured apart")
    args = ap.parse_args()
    hosts = make_hosts(args.hosts, args.pages, args.delay)
    d = args.delay
    # AubeBot's shape (feeds, then the articles of short items) with the bench's delay, no cap on
    # articles (the bench measures pacing and the turn, not AUBE-10) and none on concurrent hosts.
    profile = load_profile_data({
        "extends": "aubebot",
        "politeness": {"min_delay_s": d, "crawl_delay_cap_s": max(10.0, 4 * d), "max_in_flight": None},
        "tasks": {"feed": {"article_followup": {"per_source_per_window": None, "total_per_window": None,
                                                 "window_s": 0}}},
    })
    sources = [Source(f"h{h.index}", f"http://{h.ip}:{PORT}/feed.xml", "feed") for h in hosts]
    counter = AwsCounter()
    receiver = _Receiver() if args.webhook else None
    with tempfile.TemporaryDirectory() as tmp:
        now = time.time()
        run = LocalRun(profile, sources, start=now, until=now, out_dir=Path(tmp), allow_private=True,
                       patience_s=30.0, concurrency=args.concurrency, session_hook=counter.attach,
                       webhook=receiver.hook if receiver else None)
        run.setup()
        logs = count_logs()
        setup_calls = sum(counter.calls.values())
        counter.calls.clear()
        counter.rru = counter.wru = 0.0
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        wall0 = time.monotonic()
        run.fire(time.time(), ["feed"])
        tick_log_bytes = logs.bytes
        left = run.drain()
        page_bytes = 0
        run.out.files["requests"].flush()
        page_bytes = sum(int(r.get("bytes") or 0) for r in read_jsonl(Path(tmp) / "requests.jsonl"))
        wall = time.monotonic() - wall0
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        requests = run.out.n["requests"]
        delivery = _deliver(run, counter, receiver) if receiver else None
        run.out.close({"bot": profile.name})
        run.close()
    print(json.dumps({
        "requests": requests, "left": left, "wall_s": wall,
        "cpu_s": (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime),
        "sys_s": cpu1.ru_stime - cpu0.ru_stime,
        "ctx_switches": (cpu1.ru_nvcsw - cpu0.ru_nvcsw) + (cpu1.ru_nivcsw - cpu0.ru_nivcsw),
        "rss_mb": cpu1.ru_maxrss / 1024, "calls": dict(counter.calls), "setup_calls": setup_calls,
        "rru": counter.rru, "wru": counter.wru, "events": counter.events, "s3_puts": counter.s3_puts,
        "s3_gets": counter.s3_gets, "sqs_requests": counter.sqs_requests, "billed_s": run.billed_s,
        "invocations": run.invocations, "fetcher_memory_mb": 512, "concurrency": run.concurrency,
        "max_receive_count": run.max_receive_count,
        "log_bytes": logs.bytes - tick_log_bytes, "log_lines": logs.lines, "tick_log_bytes": tick_log_bytes,
        "emf_bytes_per_invocation": emf_bytes(), "page_bytes": page_bytes,
        "item_bytes": {k: {"n": len(v), "mean": sum(v) / len(v), "max": max(v)} for k, v in counter.sizes.items()},
        "delivery": delivery,
    }))


class _Receiver:
    """The operator's application: a server on loopback that takes every POST with a 204 (what it
    does with a result is not the deliverer's cost), on a thread of its own."""

    def __init__(self) -> None:
        import base64
        import os
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        me = self
        self.posts = 0

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                self.rfile.read(int(self.headers.get("content-length") or 0))
                me.posts += 1
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        secret = "whsec_" + base64.b64encode(os.urandom(24)).decode("ascii")
        self.hook = (f"http://127.0.0.1:{self.server.server_address[1]}/hook", secret)


def _deliver(run: Any, counter: AwsCounter, receiver: _Receiver) -> dict[str, Any]:
    """The deliverer's work after the crawl: its queue drained to the receiver. CPU is this
    thread's (the receiver's thread apart), AWS calls the deliverer's and its poller's."""
    before = Counter(counter.calls)
    cpu0, wall0 = time.thread_time(), time.monotonic()
    invocations = run.deliver(timeout_s=600.0)
    cpu, wall = time.thread_time() - cpu0, time.monotonic() - wall0
    receiver.server.shutdown()
    calls = Counter(counter.calls)
    calls.subtract(before)
    return {"events": receiver.posts, "invocations": invocations, "cpu_s": cpu, "wall_s": wall,
            "calls": {k: v for k, v in calls.items() if v}}


if __name__ == "__main__":
    main()

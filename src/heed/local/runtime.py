"""Heed's own local runtime: the real handlers on in-process moto, driven like Lambda drives them.

EventBridge is replaced by firing the scheduler at each schedule time; Lambda's SQS event source
mapping by receiving up to 10 FIFO messages, invoking the fetcher with them as an SQS event and
deleting what it did not report as failed."""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from heed_core.crawl import iso
from heed_core.profile import Profile
from heed_core.schedule import firings
from heed_core.work import Source

from heed.local.clock import SimClock

def _stack_root() -> Path:
    """Where template.yaml and functions/<name>/app.py are: the copy an installed wheel carries
    (setup.py puts it in heed/_stack at build time), else the checkout this file lives in."""
    here = Path(__file__).resolve()
    packaged = here.parents[1] / "_stack"
    return packaged if (packaged / "template.yaml").is_file() else here.parents[3]


ROOT = _stack_root()
REGION = "eu-west-1"


def _quiet_powertools() -> None:
    import warnings

    warnings.filterwarnings("ignore", message="No application metrics to publish")
    # The CLI prints its own progress; Lambda-style JSON logs and EMF would drown it.
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "Heed")
    for k, v in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                 "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": REGION}.items():
        os.environ[k] = v


def load_handler(name: str) -> Callable[[dict[str, Any], Any], Any]:
    """``functions/<name>/app.py``'s handler, loaded by path (each function has its own app.py)."""
    path = ROOT / "functions" / name / "app.py"
    mod_name = f"heed_function_{name}"
    module = sys.modules.get(mod_name)
    if module is None:
        spec = importlib.util.spec_from_file_location(mod_name, path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        spec.loader.exec_module(module)
    return module.handler  # type: ignore[no-any-return]


@dataclass
class LambdaContext:
    function_name: str
    memory_limit_in_mb: int = 512
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:{REGION}:123456789012:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


class Output:
    """requests.jsonl, items.jsonl, skips.jsonl and summary.json under ``--out``."""

    def __init__(self, out_dir: Path) -> None:
        out_dir.mkdir(parents=True, exist_ok=True)
        self.dir = out_dir
        self.files = {name: (out_dir / f"{name}.jsonl").open("w", encoding="utf-8")
                      for name in ("requests", "items", "skips")}
        self.counts: dict[str, Counter[str]] = {"status": Counter(), "purpose": Counter(), "reason": Counter(),
                                                "kind": Counter()}
        self.n = Counter()

    def journal(self, what: str, record: dict[str, Any]) -> None:
        name = "requests" if what == "request" else "skips"
        self._write(name, record)
        if name == "requests":
            self.counts["status"][str(record.get("status", record.get("error")))] += 1
            self.counts["purpose"][str(record.get("purpose"))] += 1
        else:
            self.counts["reason"][str(record.get("reason"))] += 1

    def item(self, detail_type: str, record: dict[str, Any]) -> None:
        self._write("items", {"detail_type": detail_type, **record})
        self.counts["kind"][detail_type] += 1

    def _write(self, name: str, record: dict[str, Any]) -> None:
        self.files[name].write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        self.files[name].flush()
        self.n[name] += 1

    def close(self, summary: dict[str, Any]) -> None:
        for f in self.files.values():
            f.close()
        summary = {**summary, "requests": self.n["requests"], "items": self.n["items"], "skips": self.n["skips"],
                   **{f"by_{k}": dict(sorted(v.items())) for k, v in self.counts.items()}}
        (self.dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


class LocalRun:
    def __init__(self, profile: Profile, sources: list[Source], *, start: float, until: float, out_dir: Path,
                 allow_private: bool, progress: Callable[[str], None] | None = None,
                 patience_s: float | None = None, resolver: Callable[[str, int], list[str]] | None = None) -> None:
        self.profile = profile
        self.sources = sources
        self.start = start
        self.until = max(until, start)
        self.out = Output(out_dir)
        self.allow_private = allow_private
        self.progress = progress
        self.resolver = resolver
        p = profile
        # How long to wait in real time for deferred work before ending a round: every gap a
        # round needs (delays, Crawl-delay up to the cap, round spacing) fits in it.
        self.patience_s = patience_s if patience_s is not None else 5.0 + max(
            10.0, 2 * float(p.get("politeness.min_delay_s")),
            float(p.get("politeness.round_spacing_s")) + float(p.get("politeness.round_spacing_jitter_s") or 0),
            min(float(p.get("politeness.crawl_delay_cap_s")), 120.0))
        self.clock = SimClock(start)
        self.rounds = 0
        self.invocations = 0
        self.billed_s = 0.0  # wall time spent inside the fetcher handler (Lambda's billed duration)
        self.max_receive_count = 0  # the highest ApproximateReceiveCount a token reached
        self.in_handler = False  # True while the fetcher handler runs (tests watch for sleeps)

    # --- set-up ---------------------------------------------------------------------------
    def setup(self) -> None:
        _quiet_powertools()
        import boto3
        from moto import mock_aws

        from heed.local.resources import create_stack_resources
        from heed_aws import runtime

        self._mock = mock_aws()
        self._mock.start()
        session = boto3.session.Session(region_name=REGION)
        prefix = f"heed-{self.profile.name}"
        self.res = create_stack_resources(template_path=ROOT / "template.yaml", bot=self.profile.name,
                                          prefix=prefix, session=session, region=REGION)
        self.sqs = session.client("sqs")
        env = {"HEED_BOT": self.profile.name, "HEED_TABLE": self.res.table_name,
               "HEED_QUEUE_URL": self.res.queue_url, "HEED_BUS_NAME": self.res.bus_name,
               "HEED_BUCKET": self.res.bucket}
        runtime.configure(clock=self.clock, session=session, profile=self.profile,
                          allow_private=self.allow_private, journal_tap=self.out.journal,
                          results_tap=self.out.item, resolver=self.resolver, env=env)
        store = runtime.store()
        for src in self.sources:
            store.put_source(src)
        self.scheduler = load_handler("scheduler")
        self.fetcher = load_handler("fetcher")

    # --- the run ---------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        wall0 = time.monotonic()
        self.setup()
        try:
            plan: dict[float, list[str]] = {self.start: sorted({s.task for s in self.profile.schedules})}
            for s in self.profile.schedules:
                for t in firings(s.expression, self.start, self.until):
                    plan.setdefault(t, [])
                    if s.task not in plan[t]:
                        plan[t].append(s.task)
            left = 0
            for t in sorted(plan):
                jumped = self.clock.jump_to(t)
                if jumped:
                    self._release_hidden(jumped)
                self.fire(t, plan[t])
                left = self.drain()
            summary = {"bot": self.profile.name, "start": iso(self.start), "until": iso(self.until),
                       "rounds": self.rounds, "invocations": self.invocations,
                       "fetcher_billed_s": round(self.billed_s, 3), "max_receive_count": self.max_receive_count,
                       "deferred_at_end": left, "wall_time_s": round(time.monotonic() - wall0, 3)}
        finally:
            self._mock.stop()
        self.out.close(summary)
        return summary

    def close(self) -> None:
        """Stop the embedded AWS (``run()`` does this itself)."""
        self._mock.stop()

    def fire(self, t: float, tasks: list[str]) -> None:
        event = {"version": "0", "id": str(uuid.uuid4()), "detail-type": "Scheduled Event",
                 "source": "aws.events", "account": "123456789012", "time": iso(t).replace(".000Z", "Z"),
                 "region": REGION, "resources": [], "detail": {"tasks": tasks}}
        self.scheduler(event, LambdaContext("SchedulerFunction"))
        self.rounds += len(tasks)

    def drain(self) -> int:
        """Feed the fetcher until no work is left, or only work hidden beyond our patience."""
        idle_since: float | None = None
        while True:
            resp = self.sqs.receive_message(QueueUrl=self.res.queue_url, MaxNumberOfMessages=self.res.batch_size,
                                            AttributeNames=["All"], MessageSystemAttributeNames=["All"],
                                            WaitTimeSeconds=0)
            msgs = resp.get("Messages", [])
            if msgs:
                idle_since = None
                self.invoke(msgs)
                continue
            queued = self._hidden()
            now = time.time()
            hidden = [v for v, _ in queued if v > now]
            self._show_progress(len(hidden))
            if not queued:
                return 0
            if not hidden:
                time.sleep(0.005)  # a message just came back or is being deleted
                continue
            soonest = min(hidden) - now
            if soonest > self.patience_s:
                return len(queued)
            idle_since = idle_since or time.monotonic()
            time.sleep(min(0.05, max(0.005, soonest)))

    def invoke(self, msgs: list[dict[str, Any]]) -> None:
        records = [{"messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
                    "attributes": m.get("Attributes", {}), "messageAttributes": {},
                    "md5OfBody": m.get("MD5OfBody", ""), "eventSource": "aws:sqs",
                    "eventSourceARN": self.res.queue_arn, "awsRegion": REGION} for m in msgs]
        self.invocations += 1
        self.max_receive_count = max([self.max_receive_count] + [
            int(m.get("Attributes", {}).get("ApproximateReceiveCount", "0")) for m in msgs])
        t0 = time.monotonic()
        self.in_handler = True
        try:
            resp = self.fetcher({"Records": records}, LambdaContext("FetcherFunction"))
        except Exception as exc:  # noqa: BLE001 - as in Lambda: a crashed batch is retried by SQS
            print(f"\nfetcher invocation failed: {exc!r}", file=sys.stderr)
            return
        finally:
            self.in_handler = False
            self.billed_s += time.monotonic() - t0
        failed = {f["itemIdentifier"] for f in (resp or {}).get("batchItemFailures", [])}
        done = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(msgs)
                if m["MessageId"] not in failed]
        if done:
            self.sqs.delete_message_batch(QueueUrl=self.res.queue_url, Entries=done)

    # moto keeps visibility in wall-clock milliseconds; the runtime reads it to know when the
    # next deferred token comes back, and releases tokens whose wait a clock jump has covered.
    def _queue_model(self) -> Any:
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.sqs.models import sqs_backends

        name = self.res.queue_url.rsplit("/", 1)[-1]
        return sqs_backends[DEFAULT_ACCOUNT_ID][REGION].queues[name]

    def _hidden(self) -> list[tuple[float, Any]]:
        q = self._queue_model()
        return [(m.visible_at / 1000.0, m) for m in list(q._messages)]

    def _release_hidden(self, jumped_s: float) -> None:
        now = time.time()
        for visible_at, msg in self._hidden():
            if visible_at - now <= jumped_s and msg.receipt_handle:
                self.sqs.change_message_visibility(QueueUrl=self.res.queue_url,
                                                   ReceiptHandle=msg.receipt_handle, VisibilityTimeout=0)

    def _show_progress(self, hidden: int) -> None:
        if self.progress is not None:
            self.progress(f"{self.profile.name}: round {self.rounds} | requests {self.out.n['requests']} | "
                          f"items {self.out.n['items']} | skips {self.out.n['skips']} | deferred hosts {hidden} | "
                          f"t={iso(self.clock.now())}")

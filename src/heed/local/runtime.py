"""Heed's own local runtime: the real handlers on in-process moto, driven like Lambda drives them.

EventBridge is replaced by firing the scheduler at each schedule time; Lambda's SQS event source
mapping by receiving up to 10 FIFO messages, invoking the fetcher with them as an SQS event and
deleting what it did not report as failed."""
from __future__ import annotations

import math
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from heed_core.crawl import iso
from heed_core.politeness import patience
from heed_core.profile import Profile
from heed_core.rounds import play_rounds
from heed_core.work import Source

from heed.local.clock import SimClock, is_simulated
from heed.local.harness import (
    REGION,
    InvocationCrash,
    LambdaContext,
    LockedSession,
    Output,
    QueueWatch,
    load_handler,
    local_signer,
    operator_store,
    queue_left,
    quiet_powertools,
)
from heed.local.root import ROOT

# What ran beside LocalRun lives in ``harness`` now; it is named here too, where callers import it.
__all__ = ["REGION", "InvocationCrash", "LambdaContext", "LocalRun", "Output", "QueueWatch", "local_signer",
           "operator_store"]


class LocalRun:
    def __init__(self, profile: Profile, sources: list[Source], *, start: float, until: float, out_dir: Path,
                 allow_private: bool, progress: Callable[[str], None] | None = None,
                 patience_s: float | None = None, resolver: Callable[[str, int], list[str]] | None = None,
                 concurrency: int | None = None, session_hook: Callable[[Any], None] | None = None,
                 webhook: tuple[str, str] | None = None) -> None:
        self.signer = local_signer(profile)  # refused here, before any file or service exists
        self.webhook = webhook  # (URL, secret): the stack's ResultsWebhookUrl and its secret's value
        self.profile = profile
        self.sources = sources
        self.start = start
        self.until = max(until, start)
        self.out = Output(out_dir, simulated=is_simulated(start, max(until, start)))
        self.allow_private = allow_private
        self.progress = progress
        self.resolver = resolver
        p = profile
        # How long to wait in real time for deferred work before ending a round: every gap a
        # round needs (delays, Crawl-delay up to the cap, round spacing) fits in it.
        self.patience_s = patience_s if patience_s is not None else patience(p.politeness)
        # Lambda's event source mapping runs fetcher invocations side by side, up to its
        # MaximumConcurrency (at least 2; samconfig's FetcherMaximumConcurrency for this profile).
        # AUBE-11's one request at a time is not this: it is the store's request slots.
        from heed.samconfig import fetcher_max_concurrency

        self.concurrency = max(2, concurrency or fetcher_max_concurrency(p))
        self.most_at_once = 0  # the most fetcher invocations that ran at once
        self.clock = SimClock(start)
        self.rounds = 0
        self.invocations = 0
        self.jumps: list[float] = []  # wall times at which the simulated clock jumped ahead
        self.billed_s = 0.0  # wall time spent inside the fetcher handler (Lambda's billed duration)
        self.max_receive_count = 0  # the highest ApproximateReceiveCount a token reached
        self._local = threading.local()
        self._stats_lock = threading.Lock()
        self.watch = QueueWatch()
        self.crashed: list[str] = []  # message ids of tokens whose invocation died (fault tests)
        self.aws_lock = threading.RLock()
        self._fetchers = 0  # fetcher invocations running now
        self.session_hook = session_hook  # e.g. the bench's botocore call counter

    @property
    def in_handler(self) -> bool:
        """True in a thread that is running the fetcher handler (tests watch for sleeps)."""
        return bool(getattr(self._local, "in_handler", False))

    @property
    def acting_function(self) -> str | None:
        """The function whose role an AWS call made now runs under (the IAM test's question): the
        handler this thread runs, or Lambda's poller for the fetcher (its role too); the worker
        threads of a fetcher batch count as the fetcher. None: the operator, the test itself."""
        name = getattr(self._local, "function", None)
        if name is None and self._fetchers and threading.current_thread().name.startswith("ThreadPoolExecutor"):
            return "FetcherFunction"
        return name

    # --- set-up ---------------------------------------------------------------------------
    def setup(self) -> None:
        quiet_powertools()
        import boto3
        from moto import mock_aws

        from heed_aws import runtime

        from heed.local import motofix
        from heed.local.resources import create_stack_resources

        motofix.apply()
        self._mock = mock_aws()
        self._mock.start()
        motofix.release_requests()
        base = boto3.session.Session(region_name=REGION)
        if self.session_hook is not None:
            self.session_hook(base)
        # (An unsigned call names no region: moto keeps its queues in us-east-1 then, where the
        # bus's rule, in the region, would not find the webhook's delivery queue: signed then.)
        session = LockedSession(base, self.aws_lock, ("dynamodb",) if self.webhook else ("dynamodb", "sqs"))
        prefix = f"heed-{self.profile.name}"
        from heed.samconfig import fetcher_batch_size

        # The stack as this profile deploys it (samconfig.toml): its fetcher's BatchSize.
        self.res = create_stack_resources(template_path=ROOT / "template.yaml", bot=self.profile.name,
                                          prefix=prefix, session=session, region=REGION,
                                          parameters={"FetcherBatchSize": str(fetcher_batch_size(self.profile))})
        self.sqs = session.client("sqs")
        env = {"HEED_BOT": self.profile.name, "HEED_TABLE": self.res.table_name,
               "HEED_QUEUE_URL": self.res.queue_url, "HEED_BUS_NAME": self.res.bus_name,
               "HEED_BUCKET": self.res.bucket}
        if self.webhook is not None:
            # The stack with ResultsWebhookUrl: the rule, the delivery queues, the secret.
            from heed.local.resources import create_webhook_resources

            self.hooks = create_webhook_resources(self.res, template_path=ROOT / "template.yaml",
                                                  bot=self.profile.name, prefix=prefix, session=session, region=REGION)
            arn = session.client("secretsmanager").create_secret(
                Name=f"{prefix}-webhook", SecretString=self.webhook[1])["ARN"]
            self.webhook_secret_arn = arn
            env.update(HEED_WEBHOOK_URL=self.webhook[0], HEED_WEBHOOK_SECRET_ARN=arn,
                       HEED_DELIVERY_QUEUE_URL=self.hooks.queue_url, HEED_DELIVERY_DLQ_URL=self.hooks.dlq_url)
        runtime.configure(clock=self.clock, session=session, profile=self.profile,
                          allow_private=self.allow_private, journal_tap=self.out.journal,
                          results_tap=self.out.item, resolver=self.resolver, queue_observer=self.watch, env=env,
                          signer=self.signer)
        operator_store().put_sources(self.sources)
        self._session = session
        self.scheduler = load_handler("scheduler")
        self.fetcher = load_handler("fetcher")

    # --- the run ---------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        wall0 = time.monotonic()
        self.setup()
        try:
            left = play_rounds(self, self.profile, self.start, self.until)
            summary = {"bot": self.profile.name, "engine": "aws", "start": iso(self.start), "until": iso(self.until),
                       "rounds": self.rounds, "invocations": self.invocations,
                       "fetcher_billed_s": round(self.billed_s, 3), "max_receive_count": self.max_receive_count,
                       "fetchers_at_once": self.most_at_once,
                       "deferred_at_end": left, "wall_time_s": round(time.monotonic() - wall0, 3)}
        finally:
            self._stop_aws()
        self.out.close(summary)
        return summary

    def close(self) -> None:
        """Stop the embedded AWS (``run()`` does this itself)."""
        self._stop_aws()

    def _stop_aws(self) -> None:
        """The embedded AWS stops, and moto is as it ships again once no run needs the fixes."""
        from heed.local import motofix

        mock = getattr(self, "_mock", None)
        if mock is not None:
            mock.stop()
            del self._mock
            motofix.undo()

    def now(self) -> float:
        """The run's clock (simulated, or the wall on a state directory)."""
        return self.clock.now()

    def fire(self, t: float, tasks: list[str]) -> None:
        event = {"version": "0", "id": str(uuid.uuid4()), "detail-type": "Scheduled Event",
                 "source": "aws.events", "account": "123456789012", "time": iso(t).replace(".000Z", "Z"),
                 "region": REGION, "resources": [], "detail": {"tasks": tasks}}
        self._local.function = "SchedulerFunction"
        try:
            summary = self.scheduler(event, LambdaContext("SchedulerFunction"))
            while summary and summary.get("pass"):  # a pass longer than one invocation: the next ticks go on
                event = {**event, "id": str(uuid.uuid4()), "detail": {"resume": True}}
                summary = self.scheduler(event, LambdaContext("SchedulerFunction"))
        finally:
            self._local.function = None
        self.rounds += len(tasks)
        self.watch.sent(1)

    def receive(self) -> list[dict[str, Any]]:
        """Up to a batch of visible tokens, as Lambda's event source mapping polls them."""
        return self._receive()

    def _receive(self) -> list[dict[str, Any]]:
        self._local.function = "FetcherFunction"  # Lambda's poller acts with the function's role
        try:
            resp = self.sqs.receive_message(QueueUrl=self.res.queue_url, MaxNumberOfMessages=self.res.batch_size,
                                            AttributeNames=["All"], MessageSystemAttributeNames=["All"],
                                            WaitTimeSeconds=0)
        finally:
            self._local.function = None
        msgs: list[dict[str, Any]] = resp.get("Messages", [])
        self.watch.received(msgs)
        return msgs

    def drain(self) -> int:
        """Feed the fetcher until no token is left, or only tokens hidden beyond our patience.
        Returns how many tokens were left hidden."""
        busy = 0
        lock = self.watch.cond
        errors: list[BaseException] = []
        unknown_since: float | None = None  # tokens in the queue we hold no time for (sent by hand)

        def work(msgs: list[dict[str, Any]]) -> None:
            nonlocal busy
            try:
                self.invoke(msgs)
            except BaseException as exc:  # noqa: BLE001 - surfaced by the drain loop
                errors.append(exc)
            finally:
                with lock:
                    busy -= 1
                    lock.notify_all()

        while True:
            if errors:
                raise errors[0]
            now = time.time()
            with lock:
                due_now = any(v <= now for v in self.watch.hidden_until.values())
                want = (self.watch.hint > 0 or due_now) and busy < self.concurrency
                if want:
                    self.watch.hint = 0
            if want:
                msgs = self._receive()
                if not msgs and due_now:
                    # The queue's clock and ours part by a hair: a token due now is not handed out
                    # yet. Look again in a moment rather than at once (a receive scans the queue).
                    with lock:
                        lock.wait(0.01)
                    continue
                if msgs:
                    with lock:
                        busy += 1
                    threading.Thread(target=work, args=(msgs,), daemon=True).start()
                    with lock:
                        self.watch.hint += 1  # other groups may have tokens too
                    continue
            with lock:
                hidden = sorted(self.watch.hidden_until.values())
                if busy == 0 and self.watch.hint == 0:
                    if not hidden:
                        if self._queue_empty():
                            self._show_progress(0)
                            return 0
                        unknown_since = unknown_since or time.monotonic()
                        if time.monotonic() - unknown_since > self.patience_s:
                            return 1
                        self.watch.hint = 1  # a token whose time we do not know: look again soon
                        lock.wait(0.05)
                        continue
                    unknown_since = None
                    if hidden[0] - now > self.patience_s:
                        self._show_progress(len(hidden))
                        return len(hidden)
                timeout = max(0.001, min(0.25, (hidden[0] - now) if hidden else 0.25))
                if self.watch.hint == 0 or busy >= self.concurrency:
                    lock.wait(timeout)
            self._show_progress(len(hidden))

    def _queue_empty(self) -> bool:
        return queue_left(self.sqs, self.res.queue_url) == 0

    def deliver(self, timeout_s: float = 60.0) -> int:
        """Lambda's event source mapping for the webhook's deliverer: batches of the delivery queue
        to the handler until the queue is empty (retries wait in real time: the deliverer hides a
        record until its next try) or ``timeout_s`` passed. Returns the invocations made."""
        deliverer = load_handler("deliverer")
        url = self.hooks.queue_url
        deadline, calls = time.monotonic() + timeout_s, 0
        while time.monotonic() < deadline:
            msgs = self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=5, AttributeNames=["All"],
                                            WaitTimeSeconds=0).get("Messages", [])
            if not msgs:
                if queue_left(self.sqs, url) == 0:
                    return calls
                time.sleep(0.2)
                continue
            records = [{"messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
                        "attributes": m.get("Attributes", {}), "eventSource": "aws:sqs", "awsRegion": REGION}
                       for m in msgs]
            self._local.function = "DelivererFunction"
            try:
                resp = deliverer({"Records": records}, LambdaContext("DelivererFunction", timeout_s=120))
            finally:
                self._local.function = None
            calls += 1
            failed = {f["itemIdentifier"] for f in (resp or {}).get("batchItemFailures", [])}
            done = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(msgs)
                    if m["MessageId"] not in failed]
            if done:
                self.sqs.delete_message_batch(QueueUrl=url, Entries=done)
        return calls

    def invoke(self, msgs: list[dict[str, Any]]) -> None:
        try:
            self._invoke(msgs)
        finally:
            self._local.function = None

    def _invoke(self, msgs: list[dict[str, Any]]) -> None:
        records = [{"messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
                    "attributes": m.get("Attributes", {}), "messageAttributes": {},
                    "md5OfBody": m.get("MD5OfBody", ""), "eventSource": "aws:sqs",
                    "eventSourceARN": self.res.queue_arn, "awsRegion": REGION} for m in msgs]
        with self._stats_lock:
            self.invocations += 1
            self.max_receive_count = max([self.max_receive_count] + [
                int(m.get("Attributes", {}).get("ApproximateReceiveCount", "0")) for m in msgs])
        t0 = time.monotonic()
        self._local.in_handler = True
        self._local.function = "FetcherFunction"
        with self._stats_lock:
            self._fetchers += 1
            self.most_at_once = max(self.most_at_once, self._fetchers)
        try:
            resp = self.fetcher({"Records": records}, LambdaContext("FetcherFunction",
                                                                     timeout_s=self.res.fetcher_timeout_s))
        except (Exception, InvocationCrash) as exc:  # noqa: BLE001 - as in Lambda: SQS delivers the batch again
            if not isinstance(exc, InvocationCrash):
                print(f"\nfetcher invocation failed: {exc!r}", file=sys.stderr)
            self._died(msgs)
            return
        finally:
            self._local.in_handler = False
            with self._stats_lock:
                self.billed_s += time.monotonic() - t0
                self._fetchers -= 1
        failed = {f["itemIdentifier"] for f in (resp or {}).get("batchItemFailures", [])}
        done = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(msgs)
                if m["MessageId"] not in failed]
        if done:
            try:
                self.sqs.delete_message_batch(QueueUrl=self.res.queue_url, Entries=done)  # the poller, the role
            except (Exception, InvocationCrash) as exc:  # noqa: BLE001 - an undeleted token comes back later
                if not isinstance(exc, InvocationCrash):
                    print(f"\ndeleting tokens failed: {exc!r}", file=sys.stderr)
                self._died(msgs)
                return
        self.watch.finished([m["MessageId"] for m in msgs if m["MessageId"] not in failed])

    # Tokens hidden by the fetcher come back when their wait is over; a clock jump (the runtime
    # skipping idle time to the next round) covers some waits, whose tokens are released early.
    def hidden_tokens(self) -> list[tuple[float, str]]:
        """(wall-clock time it comes back, message id) of every token hidden now."""
        now = time.time()
        with self.watch.cond:
            return sorted((t, m) for m, t in self.watch.hidden_until.items() if t > now)

    def release_hidden(self, jumped_s: float) -> None:
        """The simulated clock jumped ``jumped_s`` ahead: every hidden token's wait (kept by SQS
        in wall-clock time) is that much shorter; a token whose wait is over comes back now."""
        now = time.time()
        for visible_at, msg in self.hidden_tokens():
            handle = self.watch.handle_of.get(msg)
            if not handle:
                continue
            left = visible_at - now - jumped_s
            # (SQS counts visibility in whole seconds: a wait that ends within a second of the
            # jump ends at it)
            seconds = 0 if left <= 1.0 else math.ceil(left)
            self.sqs.change_message_visibility(QueueUrl=self.res.queue_url, ReceiptHandle=handle,
                                               VisibilityTimeout=seconds)
            self.watch.hidden_for(handle, seconds)
        self.watch.sent(0)

    def advance_to(self, t: float) -> int:
        """Move the simulated clock to ``t``, stopping at each deferred token that comes due
        before it (as the queue would hand it back) and draining there. Returns how many tokens
        are still hidden at ``t``."""
        while True:
            hidden = self.hidden_tokens()
            soonest = self.clock.now() + (hidden[0][0] - time.time()) if hidden else None
            if soonest is None or soonest > t:
                jumped = self._jump(t)
                if jumped:
                    self.release_hidden(jumped)
                return len(self.hidden_tokens())
            self.release_hidden(self._jump(soonest))
            self.drain()

    def _jump(self, t: float) -> float:
        jumped = self.clock.jump_to(t)
        if jumped:
            self.jumps.append(time.time())
        return jumped

    def _died(self, msgs: list[dict[str, Any]]) -> None:
        # SQS hands the tokens of a dead invocation out again after the visibility timeout.
        with self._stats_lock:
            self.crashed += [m["MessageId"] for m in msgs]
        for m in msgs:
            self.watch.hidden_for(m["ReceiptHandle"], self.res.visibility_timeout_s)
        self.watch.finished([])

    def redeliver_crashed(self) -> int:
        """Let the visibility timeout of the tokens whose invocation died pass (the clock jumps
        by it) and hand them out again, as SQS does. Returns how many came back."""
        with self._stats_lock:
            crashed, self.crashed = self.crashed, []
        handles = [self.watch.handle_of[m] for m in dict.fromkeys(crashed) if m in self.watch.handle_of]
        if not handles:
            return 0
        self.clock.jump_to(self.clock.now() + self.res.visibility_timeout_s)
        self.release_hidden(self.res.visibility_timeout_s)
        for handle in handles:
            self.sqs.change_message_visibility(QueueUrl=self.res.queue_url, ReceiptHandle=handle, VisibilityTimeout=0)
        self.watch.sent(len(handles))
        return len(handles)

    def _show_progress(self, hidden: int) -> None:
        if self.progress is not None:
            self.progress(f"{self.profile.name}: round {self.rounds} | requests {self.out.n['requests']} | "
                          f"items {self.out.n['items']} | skips {self.out.n['skips']} | deferred hosts {hidden} | "
                          f"t={iso(self.clock.now())}")

"""What the local runtime drives Heed's handlers with, as Lambda would: the handlers loaded from
``functions/``, Lambda's context, the run's output files, the boto3 session locked for moto's
in-process backends, the queue's view of its hidden tokens, and the local signer and operator
store. Apart from ``runtime.LocalRun`` (which names them again for the code that imports them
there) so that each file stays small enough to read whole (issue 36)."""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from heed_core.errors import ConfigError
from heed_core.profile import Profile

from heed.local.root import ROOT

__all__ = ["REGION", "InvocationCrash", "LambdaContext", "LockedSession", "Output", "QueueWatch", "load_handler",
           "local_signer", "operator_store", "queue_left", "quiet_powertools"]

REGION = "eu-west-1"


def local_signer(profile: Profile) -> Any:
    """The Web Bot Auth signer of a local run, or None when the profile does not sign: the key
    from ``identity.web_bot_auth.key_file``, the time from the system clock, not the simulated
    one (the sites check signatures against real time). ``ConfigError``, one line, when it
    cannot sign: a signing bot never sends unsigned."""
    from heed_core.identity.settings import WebBotAuthSettings

    settings = WebBotAuthSettings.from_profile(profile)
    if not settings.enabled:
        return None
    if not settings.key_file:
        raise ConfigError(f"{profile.name}: identity.web_bot_auth is enabled but has no key_file: a local run "
                          "signs with a key file (key_secret is for AWS; make one with: heed identity keygen "
                          "--out KEYFILE)")
    from heed_core.identity.keys import IdentityError, read_key_file
    from heed_core.identity.signing import WebBotAuthSigner
    from heed_core.ports import SystemClock

    try:
        return WebBotAuthSigner.from_settings(settings, read_key_file(settings.key_file), SystemClock())
    except IdentityError as exc:
        raise ConfigError(f"identity.web_bot_auth.key_file: {exc}") from exc


def operator_store() -> Any:
    """The operator's adapter (``heed_aws.operator_store``) on the table of the local stack that
    runs now: what ``heed sources``, ``block`` and ``purge`` write with, beside the crawl's store."""
    from heed_aws import runtime
    from heed_aws.operator_store import DynamoOperatorStore

    return DynamoOperatorStore(runtime.store().table, runtime.store().db)


def quiet_powertools() -> None:
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


def queue_left(sqs: Any, url: str) -> int:
    """The messages a queue holds, hidden or not, for a caller that is their only consumer, to
    tell whether any is left (0: none): the hidden ones read first, then the visible ones, in two
    calls. A hidden message turns visible and never back unless received, so in that order it is
    counted at least once (twice if it turns visible between the reads). Read in one call,
    moto counts the visible ones first: a message whose hide ends between the two counts is in
    neither, and a queue with a token due that instant looked empty (a round ended with its host's
    work left)."""
    def count(name: str) -> int:
        return int(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=[name])["Attributes"][name])

    return count("ApproximateNumberOfMessagesNotVisible") + count("ApproximateNumberOfMessages")


@dataclass
class LambdaContext:
    """Lambda's context object: the remaining time counts down from the invocation's start, in
    real time, to the function's timeout (the fetcher's time budget reads it)."""

    function_name: str
    memory_limit_in_mb: int = 512
    timeout_s: float = 60.0
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    started: float = field(default_factory=time.monotonic)

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:{REGION}:123456789012:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.started + self.timeout_s - time.monotonic()) * 1000))


class Output:
    """requests.jsonl, items.jsonl, skips.jsonl and summary.json under ``--out``. A run on a
    simulated clock (``simulated``) marks every request and skip so (``clock: "simulated"``, with
    ``wall``: the machine's time when it was written), and its summary, so no one reads its times
    for a site's log's."""

    def __init__(self, out_dir: Path, *, simulated: bool = False) -> None:
        out_dir.mkdir(parents=True, exist_ok=True)
        self.dir = out_dir
        self.simulated = simulated
        self.files = {name: (out_dir / f"{name}.jsonl").open("w", encoding="utf-8")
                      for name in ("requests", "items", "skips")}
        self.counts: dict[str, Counter[str]] = {"status": Counter(), "purpose": Counter(), "reason": Counter(),
                                                "kind": Counter()}
        self.n: Counter[str] = Counter()
        self.lock = threading.RLock()

    def journal(self, what: str, record: dict[str, Any]) -> None:
        name = "requests" if what == "request" else "skips"
        with self.lock:
            self._write(name, record)
            if name == "requests":
                self.counts["status"][str(record.get("status", record.get("error")))] += 1
                self.counts["purpose"][str(record.get("purpose"))] += 1
            else:
                self.counts["reason"][str(record.get("reason"))] += 1

    def item(self, detail_type: str, record: dict[str, Any]) -> None:
        with self.lock:
            self._write("items", {"detail_type": detail_type, **record})
            self.counts["kind"][detail_type] += 1

    def _write(self, name: str, record: dict[str, Any]) -> None:
        if self.simulated and name != "items":  # (a result's record is the bot's product: kept as it is)
            record = {**record, "clock": "simulated", "wall": round(time.time(), 3)}
        line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
        with self.lock:
            self.files[name].write(line)
            self.files[name].flush()
            self.n[name] += 1

    def close(self, summary: dict[str, Any]) -> None:
        for f in self.files.values():
            f.close()
        summary = {"clock": "simulated" if self.simulated else "wall", **summary,
                   "requests": self.n["requests"], "items": self.n["items"], "skips": self.n["skips"],
                   **{f"by_{k}": dict(sorted(v.items())) for k, v in self.counts.items()}}
        (self.dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


class InvocationCrash(BaseException):
    """Raised by fault tests inside an invocation: it dies on the spot, as a Lambda that is killed
    (not an exception the handler could catch): its tokens come back after the visibility timeout."""


class _LockedClient:
    """A boto3 client whose calls run one at a time: moto's in-process backends are not made for
    threads, and DynamoDB's own guarantees (a conditional write is atomic) must hold for the
    fetcher invocations that run side by side, as Lambda runs them."""

    def __init__(self, client: Any, lock: threading.RLock) -> None:
        self._client = client
        self._lock = lock
        self.meta = client.meta
        self.exceptions = client.exceptions

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not callable(attr) or name.startswith("_") or name in ("get_paginator", "get_waiter", "can_paginate"):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return attr(*args, **kwargs)
        return call


class LockedSession:
    """A boto3 session whose clients run their calls one at a time (``_LockedClient``), the state
    and queue calls unsigned."""

    def __init__(self, session: Any, lock: threading.RLock, unsigned: tuple[str, ...] = ("dynamodb", "sqs")) -> None:
        self._session = session
        self._lock = lock
        self._unsigned = unsigned

    def client(self, name: str, **kwargs: Any) -> Any:
        from botocore import UNSIGNED
        from botocore.config import Config

        # The embedded AWS checks no signatures: signing every state and queue call would only
        # cost time (S3 is left signed: moto's bucket reads the signature to authorise a write).
        unsigned = {"signature_version": UNSIGNED} if name in self._unsigned else {}
        kwargs.setdefault("config", Config(retries={"max_attempts": 2, "mode": "standard"}, **unsigned))
        return _LockedClient(self._session.client(name, **kwargs), self._lock)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


class QueueWatch:
    """What the local runtime knows of its tokens, learnt through Heed's own seam (the queue
    adapter's observer) and its own receives: which are hidden until when."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.hidden_until: dict[str, float] = {}  # message id -> wall-clock time it is visible again
        self.receipts: dict[str, str] = {}  # receipt handle -> message id
        self.handle_of: dict[str, str] = {}  # message id -> its latest receipt handle
        self.hint = 0  # messages that may be deliverable now (sent, come back, a group freed)

    # QueueObserver
    def sent(self, count: int) -> None:
        with self.cond:
            self.hint += count
            self.cond.notify_all()

    def hidden_for(self, receipt: str, seconds: float) -> None:
        with self.cond:
            msg = self.receipts.get(receipt)
            if msg is not None:
                self.hidden_until[msg] = time.time() + seconds
            self.cond.notify_all()

    def hidden(self, receipt_handle: str, seconds: int) -> None:
        self.hidden_for(receipt_handle, seconds)

    # the runtime's own view
    def received(self, msgs: list[dict[str, Any]]) -> None:
        with self.cond:
            for m in msgs:
                self.receipts[m["ReceiptHandle"]] = m["MessageId"]
                self.handle_of[m["MessageId"]] = m["ReceiptHandle"]
                self.hidden_until.pop(m["MessageId"], None)

    def finished(self, deleted: list[str]) -> None:
        with self.cond:
            for msg in deleted:
                self.hidden_until.pop(msg, None)
                self.handle_of.pop(msg, None)
            self.hint += 1  # a group's next token may be deliverable now
            self.cond.notify_all()

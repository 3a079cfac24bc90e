"""One bot's stack driven round by round for a scenario: the real handlers on moto (``Stack``: LocalRun),
or the embedded engine on a throwaway SQLite database (``EmbeddedStack``: EmbeddedRun).

``round(t)`` fires the scheduler at simulated time ``t`` and drains the queue; ``advance_to(t)``
moves the clock, letting deferred work (retries, gaps) come due on the way as the real queue
would. Every clock jump is marked with the wall time it happened at: the sites log wall time,
and a gap measured across a jump means nothing (hours of simulated time in no real time)."""
from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from heed_core.profile import Profile, deep_merge, validate
from heed_core.work import Source

from heed.local.embedded import EmbeddedRun
from heed.local.runtime import REGION, LocalRun
from heed.outputs import read_jsonl, read_summary

__all__ = ["EmbeddedStack", "Output", "Stack", "derive", "sim_time"]

# The waits a shape scales (the clock-skew margin is part of every gap, so it scales with them).
_DURATIONS = ("min_delay_s", "crawl_delay_cap_s", "round_spacing_s", "round_spacing_jitter_s", "clock_skew_margin_s")


def derive(profile: Profile, scale: float, changes: Mapping[str, Any] | None = None) -> Profile:
    """The user's own profile with its waits multiplied by ``scale`` (0: no waits at all) and
    ``changes`` deep-merged on top: a shape is proven in seconds, and every other key the user
    set still counts."""
    pol = profile.data.get("politeness", {})
    waits = {k: float(pol.get(k) or 0) * scale for k in _DURATIONS}
    return validate(deep_merge(profile.data, {"politeness": waits, **(changes or {})}))


@dataclass(frozen=True)
class Output:
    """What the run wrote (requests, items, skips), the page texts the bucket kept (key ->
    versions) and everything the stack stored, as one text to search."""

    requests: list[dict[str, Any]]
    items: list[dict[str, Any]]
    skips: list[dict[str, Any]]
    summary: dict[str, Any]
    texts: dict[str, list[str]]
    stored: str

    def skipped(self, reason: str, source: str | None = None) -> list[dict[str, Any]]:
        return [s for s in self.skips if s.get("reason") == reason and (source is None or s.get("source") == source)]

    def of(self, detail_type: str, source: str | None = None) -> list[dict[str, Any]]:
        return [i for i in self.items if i.get("detail_type") == detail_type
                and (source is None or i.get("source") == source)]

    def requested(self, purpose: str | None = None, source: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.requests if (purpose is None or r.get("purpose") == purpose)
                and (source is None or r.get("source") == source)]

    def kept_text(self) -> str:
        return "\n".join(v for vs in self.texts.values() for v in vs)


def sim_time(record: Mapping[str, Any], key: str = "t_start") -> float:
    """A run record's time on the run's own (simulated) clock, as epoch seconds."""
    return datetime.fromisoformat(str(record[key]).replace("Z", "+00:00")).timestamp()


_jsonl = read_jsonl


@dataclass
class Stack:
    profile: Profile
    sources: Sequence[Source]
    out_dir: Path
    start: float
    resolver: Callable[[str, int], list[str]] | None = None
    patience_s: float = 3.0
    run: LocalRun = field(init=False)

    def __post_init__(self) -> None:
        self.run = LocalRun(self.profile, list(self.sources), start=self.start, until=self.start,
                            out_dir=self.out_dir, allow_private=True, patience_s=self.patience_s,
                            resolver=self.resolver)
        self.run.setup()
        self._open = True

    @property
    def now(self) -> float:
        return self.run.clock.now()

    @property
    def store(self) -> Any:
        from heed_aws import runtime

        return runtime.store()

    @property
    def operator(self) -> Any:
        """The operator's adapter on the same table (sources, blocks, purges)."""
        from heed.local.runtime import operator_store

        return operator_store()

    @property
    def texts(self) -> Any:
        """The page texts kept (``heed.operator.actions.TextBucket``: what a purge deletes)."""
        from heed_aws.operator_store import S3Texts

        return S3Texts(self._clients()[1], self.run.res.bucket)

    def round(self, t: float, tasks: Sequence[str] | None = None) -> None:
        """Fire the scheduler at ``t`` (the profile's tasks unless named) and drain the queue."""
        self.advance_to(t)
        self.run.fire(t, list(tasks) if tasks else sorted({s.task for s in self.profile.schedules}))
        self.run.drain()

    def advance_to(self, t: float) -> None:
        """Move the clock to ``t``, stopping at each deferred token that comes due before it."""
        self.run.advance_to(t)

    @property
    def marks(self) -> list[float]:
        """Wall times of the clock's jumps (a gap that spans one is simulated, not waited)."""
        return self.run.jumps

    def finish(self) -> Output:
        """Write the run's files, read back everything it kept, and stop the embedded AWS."""
        try:
            texts, stored = self.bucket_texts(), self.stored_text()
            self.run.out.close({"bot": self.profile.name, "rounds": self.run.rounds,
                                "invocations": self.run.invocations, "fetchers_at_once": self.run.most_at_once})
        finally:
            self.close()
        d = self.out_dir
        summary = read_summary(d)
        return Output(_jsonl(d / "requests.jsonl"), _jsonl(d / "items.jsonl"), _jsonl(d / "skips.jsonl"),
                      summary, texts, stored)

    def close(self) -> None:
        if self._open:
            self._open = False
            self.run.close()

    # --- what the stack kept --------------------------------------------------------------------
    def _clients(self) -> tuple[Any, Any]:
        import boto3

        session = boto3.session.Session(region_name=REGION)
        return session.client("dynamodb"), session.client("s3")

    def bucket_texts(self) -> dict[str, list[str]]:
        """Every text version the bucket keeps, by key, oldest first."""
        _, s3 = self._clients()
        bucket = self.run.res.bucket
        out: dict[str, list[tuple[Any, int, str]]] = {}
        for n, v in enumerate(s3.list_object_versions(Bucket=bucket).get("Versions", [])):
            body = s3.get_object(Bucket=bucket, Key=v["Key"], VersionId=v["VersionId"])["Body"].read()
            # Listed newest first; LastModified has whole seconds, so ties keep the listing's order.
            out.setdefault(v["Key"], []).append((v["LastModified"], -n, body.decode("utf-8", "replace")))
        return {k: [text for *_, text in sorted(vs, key=lambda x: (x[0], x[1]))] for k, vs in out.items()}

    def stored_text(self) -> str:
        """Every DynamoDB item (compressed attributes opened) as one text to search."""
        db, _ = self._clients()
        parts = []
        for page in db.get_paginator("scan").paginate(TableName=self.run.res.table_name):
            for item in page["Items"]:
                parts.append(json.dumps({k: _readable(v) for k, v in item.items()}, sort_keys=True,
                                        ensure_ascii=False, default=str))
        return "\n".join(parts)

    def invoke_copies(self, copies: int) -> int:
        """Hand the next work token, and ``copies - 1`` duplicates of it, to fetcher invocations
        running at once (as Lambda may when a token's visibility runs out while its first holder
        is still at work: COMMON-05's host lease must let one through at a time), then drain.
        Returns how many invocations ran at once. The aws stack only (SQS and Lambda)."""
        import threading
        import time as _time

        lr = self.run
        first = lr.sqs.receive_message(QueueUrl=lr.res.queue_url, MaxNumberOfMessages=1,
                                       AttributeNames=["All"])["Messages"]
        lr.watch.received(first)
        for n in range(1, copies):
            # Another message group: the queue hands it out while the first is still held.
            lr.sqs.send_message(QueueUrl=lr.res.queue_url, MessageBody=first[0]["Body"], MessageGroupId=f"copy-{n}",
                                MessageDeduplicationId=f"copy-{n}-{_time.time()}")
        others = lr.sqs.receive_message(QueueUrl=lr.res.queue_url, MaxNumberOfMessages=10,
                                        AttributeNames=["All"]).get("Messages", [])
        lr.watch.received(others)
        threads = [threading.Thread(target=lr.invoke, args=([m],)) for m in first + others]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        lr.drain()
        return len(threads)


def _readable(value: Mapping[str, Any]) -> Any:
    if "B" in value:
        try:
            return zlib.decompress(bytes(value["B"])).decode("utf-8")
        except (zlib.error, UnicodeDecodeError):
            return repr(value["B"])
    return value


@dataclass
class EmbeddedStack(Stack):
    """The same scenario on the embedded engine (heed_embedded), its database a throwaway (a
    simulated clock never touches a state directory)."""

    run: EmbeddedRun = field(init=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        self.run = EmbeddedRun(self.profile, list(self.sources), start=self.start, until=self.start,
                               out_dir=self.out_dir, allow_private=True, patience_s=self.patience_s,
                               resolver=self.resolver)
        self.run.setup()
        self._open = True

    @property
    def store(self) -> Any:
        return self.run.store

    @property
    def operator(self) -> Any:
        """The operator's side of the same database (sources, blocks, purges): one store does both."""
        return self.run.store

    @property
    def texts(self) -> Any:
        return self.run.texts

    def finish(self) -> Output:
        try:
            texts, stored = self.bucket_texts(), self.stored_text()
            self.run._export()
            self.run.out.close({"bot": self.profile.name, "engine": "embedded", "rounds": self.run.rounds,
                                "invocations": self.run.invocations})
        finally:
            self.close()
        d = self.out_dir
        summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
        return Output(_jsonl(d / "requests.jsonl"), _jsonl(d / "items.jsonl"), _jsonl(d / "skips.jsonl"),
                      summary, texts, stored)

    def bucket_texts(self) -> dict[str, list[str]]:
        return self.run.texts.all_versions()

    def stored_text(self) -> str:
        """Every row, as the DynamoDB item it would be (``SqliteStore.dump``), to search."""
        return str(self.run.store.dump())

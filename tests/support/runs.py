"""Runs of the real stack (the scheduler and fetcher handlers on an in-process AWS) on recording sites.

``run_bot`` runs whole rounds, as ``heed local run`` does; ``SteppedRun`` fires rounds and moves
the clock by hand; ``start_cli_run`` runs ``heed local run`` itself in a subprocess (the shipped
numbers, waited out in the background). Each ends in a ``RunOutput``: the run's four output
files, read back, plus what the stack kept."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import yaml

from heed_core.profile import Profile, load_profile_data
from heed_core.work import Source

from heed.conformance.stack import Stack
from heed.demo.web import RecordingServer, RequestRecord
from heed.local.runtime import REGION, LocalRun

from tests.support.web import Web, round_gaps

__all__ = ["Background", "ObservedRun", "RunOutput", "Scenario", "SteppedRun", "at", "derived", "read_jsonl",
           "run_bot", "sim_times", "start_cli_run", "utc"]


# --- time -------------------------------------------------------------------------------------

def at(text: str) -> float:
    """Epoch seconds of an ISO 8601 UTC time, e.g. ``at("2026-12-01T10:00:00Z")`` (a journal
    timestamp too: the run's simulated clock)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> float:
    """Epoch seconds of a UTC wall time (rounds are scheduled in UTC)."""
    return datetime(year, month, day, hour, minute, tzinfo=UTC).timestamp()


def sim_times(requests: Iterable[Mapping[str, Any]]) -> list[float]:
    """The simulated start time of each record of requests.jsonl (the clock the bot lives by)."""
    return [at(r["t_start"]) for r in requests]


# --- profiles ---------------------------------------------------------------------------------

def derived(bot: str, **sections: Any) -> Profile:
    """A built-in bot with some keys replaced (deep merge), e.g. small delays to prove a
    rule's shape in seconds: ``derived("aubebot", politeness={"min_delay_s": 0.2})``."""
    return load_profile_data({"extends": bot, **sections})


# --- the output of a run ------------------------------------------------------------------------

def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """One JSON object a line; a file that is not there holds none (``heed.outputs``, strict)."""
    from heed.outputs import read_jsonl as read

    return read(path)


@dataclass(frozen=True)
class RunOutput:
    """The four output files of a run, read back. ``stored`` is everything the stack kept
    (DynamoDB items and S3 objects) as text, when the run captured it; ``texts`` the page texts
    kept in the bucket (key -> versions, oldest first), ``rounds`` the rounds' simulated times and
    ``round_walls`` the sites' wall clock when each began, for a run that observed them."""

    dir: Path
    summary: dict[str, Any]
    requests: list[dict[str, Any]]
    items: list[dict[str, Any]]
    skips: list[dict[str, Any]]
    stored: str = ""
    texts: dict[str, list[str]] = field(default_factory=dict)
    rounds: list[float] = field(default_factory=list)
    round_walls: list[float] = field(default_factory=list)

    @classmethod
    def read(cls, out_dir: Path, stored: str = "", **observed: Any) -> RunOutput:
        summary = json.loads((out_dir / "summary.json").read_text(encoding="utf-8"))
        return cls(out_dir, summary, read_jsonl(out_dir / "requests.jsonl"), read_jsonl(out_dir / "items.jsonl"),
                   read_jsonl(out_dir / "skips.jsonl"), stored, **observed)

    def skipped(self, reason: str) -> list[dict[str, Any]]:
        return [s for s in self.skips if s.get("reason") == reason]

    def skip_urls(self, reason: str) -> set[str]:
        return {s["url"] for s in self.skipped(reason)}

    def found(self, detail_type: str = "item.found") -> list[dict[str, Any]]:
        return [i for i in self.items if i.get("detail_type") == detail_type]

    def requested(self, purpose: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.requests if purpose is None or r.get("purpose") == purpose]

    def requests_to(self, base: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["url"].startswith(base + "/")]

    def gaps(self, log: Sequence[RequestRecord]) -> list[float]:
        """The gaps a site saw inside each round (``round_gaps``)."""
        return round_gaps(log, self.round_walls)


@dataclass
class Scenario:
    """A finished run and the sites it ran against, by name."""

    sites: dict[str, RecordingServer]
    out: RunOutput


# --- whole rounds -------------------------------------------------------------------------------

RoundHook = Callable[["ObservedRun", float, list[str]], None]


class ObservedRun(LocalRun):
    """``LocalRun`` with a hook before each round (the operator's hand: a stop request, a purge)
    and, after each round, a copy of every page text version kept in the bucket (``texts``)."""

    def __init__(self, *args: Any, on_round: RoundHook | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.on_round = on_round
        self.texts: dict[str, list[str]] = {}
        self.round_times: list[float] = []
        self.round_walls: list[float] = []  # the sites' wall clock when each round began

    def store(self) -> Any:
        from heed_aws import runtime

        return runtime.store()

    def operator(self) -> Any:
        from heed.local.runtime import operator_store

        return operator_store()

    def fire(self, t: float, tasks: list[str]) -> None:
        self.round_times.append(t)
        self.round_walls.append(time.time())
        if self.on_round is not None:
            self.on_round(self, t, tasks)
        super().fire(t, tasks)

    def drain(self) -> int:
        left = super().drain()
        self.texts = self._bucket_texts()
        return left

    def _bucket_texts(self) -> dict[str, list[str]]:
        s3 = boto3.session.Session(region_name=REGION).client("s3")
        versions = s3.list_object_versions(Bucket=self.res.bucket).get("Versions", [])
        out: dict[str, list[tuple[Any, int, str]]] = {}
        for n, v in enumerate(versions):
            body = s3.get_object(Bucket=self.res.bucket, Key=v["Key"], VersionId=v["VersionId"])["Body"].read()
            # S3 lists a key's versions newest first; LastModified has whole seconds, so two
            # versions written within one (rounds a simulated hour apart) keep the listing's order.
            out.setdefault(v["Key"], []).append((v["LastModified"], -n, body.decode("utf-8", "replace")))
        return {k: [t for *_, t in sorted(vs, key=lambda x: (x[0], x[1]))] for k, vs in out.items()}


def run_bot(profile: Profile, sources: Sequence[Source], out_dir: Path, *, start: float, until: float | None = None,
            web: Web | None = None, patience_s: float = 3.0, on_round: RoundHook | None = None) -> RunOutput:
    """Whole rounds through the real scheduler and fetcher handlers on moto: a round at ``start``
    and at each schedule firing up to ``until`` (the clock jumps between rounds, waits inside a
    round are real). ``web`` gives the run its DNS (sites on host names); ``on_round`` acts
    before each round."""
    run = ObservedRun(profile, list(sources), start=start, until=until if until is not None else start,
                      out_dir=out_dir, allow_private=True, patience_s=patience_s,
                      resolver=web.resolver if web is not None else None, on_round=on_round)
    run.run()
    return RunOutput.read(out_dir, texts=dict(run.texts), rounds=list(run.round_times),
                          round_walls=list(run.round_walls))


# --- rounds by hand -------------------------------------------------------------------------------

@dataclass
class SteppedRun(Stack):
    """The stack driven by hand (the conformance command's ``Stack``): ``round(t, tasks)`` fires
    the scheduler at ``t`` and drains; ``advance_to(t)`` moves the clock, letting deferred work
    (retries, gaps) come due on the way. ``finish()`` writes the output files and returns them."""

    _closed: bool = field(default=False, init=False)

    def __enter__(self) -> SteppedRun:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._closed:
            self.finish()

    def invoke_concurrently(self, copies: int, stagger_s: float = 0.0) -> None:
        """Take the next work token and hand it, plus ``copies - 1`` duplicates, to fetcher
        invocations running at once (``stagger_s`` apart), as Lambda does when a token's
        visibility runs out while its first holder is still at work; then drain the queue."""
        lr = self.run
        first = lr.sqs.receive_message(QueueUrl=lr.res.queue_url, MaxNumberOfMessages=1,
                                       AttributeNames=["All"])["Messages"]
        lr.watch.received(first)
        for n in range(1, copies):
            # Another message group: the queue hands it out while the first is still held.
            lr.sqs.send_message(QueueUrl=lr.res.queue_url, MessageBody=first[0]["Body"],
                                MessageGroupId=f"copy-{n}", MessageDeduplicationId=f"copy-{n}-{time.time()}")
        others = lr.sqs.receive_message(QueueUrl=lr.res.queue_url, MaxNumberOfMessages=10,
                                        AttributeNames=["All"]).get("Messages", [])
        lr.watch.received(others)
        threads = []
        for i, msg in enumerate(first + others):
            threads.append(threading.Thread(target=lr.invoke, args=([msg],)))
            threads[-1].start()
            time.sleep(stagger_s if i < copies - 1 else 0)
        for t in threads:
            t.join()
        lr.drain()

    def stored_text(self) -> str:
        """Every DynamoDB item and S3 object of the stack, as one text to search."""
        session = boto3.session.Session(region_name=REGION)
        db, s3 = session.client("dynamodb"), session.client("s3")
        parts: list[str] = []
        for page in db.get_paginator("scan").paginate(TableName=self.run.res.table_name):
            parts += [json.dumps(_readable(item), sort_keys=True, ensure_ascii=False) for item in page["Items"]]
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=self.run.res.bucket):
            for obj in page.get("Contents", []):
                body = s3.get_object(Bucket=self.run.res.bucket, Key=obj["Key"])["Body"].read()
                parts.append(obj["Key"] + "\n" + body.decode("utf-8", "replace"))
        return "\n".join(parts)

    def finish(self, *, capture: bool = False) -> RunOutput:  # type: ignore[override]
        stored = self.stored_text() if capture else ""
        self._closed = True
        self.run.out.close({"bot": self.profile.name, "rounds": self.run.rounds,
                            "invocations": self.run.invocations})
        self.close()
        return RunOutput.read(self.out_dir, stored)


def _readable(item: Mapping[str, Any]) -> dict[str, Any]:
    """A DynamoDB item with its binary attributes (zlib-compressed JSON) opened up to search."""
    out: dict[str, Any] = {}
    for key, value in item.items():
        if "B" in value:
            try:
                out[key] = zlib.decompress(bytes(value["B"])).decode("utf-8")
            except (zlib.error, UnicodeDecodeError):
                out[key] = repr(value["B"])
        else:
            out[key] = value
    return out


# --- shipped profiles, run as a user runs them, in the background ---------------------------------

@dataclass
class Background:
    """``heed local run`` of an untouched built-in profile in a subprocess, started early so the
    real waits of the shipped numbers (SpringStudioBot: 10 s between requests) pass while the
    other tests run (tests/conformance/conftest.py starts it when the tests are collected)."""

    web: Web
    sites: dict[str, RecordingServer]
    workdir: Path
    proc: subprocess.Popen[str]

    def result(self, timeout_s: float = 120.0) -> RunOutput:
        _, stderr = self.proc.communicate(timeout=timeout_s)
        assert self.proc.returncode == 0, stderr
        return RunOutput.read(self.workdir / "out")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()
        self.web.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


def start_cli_run(bot: str, web: Web, sites: dict[str, RecordingServer], sources: list[dict[str, Any]], *,
                  start: str, patience_s: float) -> Background:
    workdir = Path(tempfile.mkdtemp(prefix=f"heed-g1-{bot}-"))
    (workdir / "sources.yaml").write_text(yaml.safe_dump({"sources": sources}), encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "heed.cli", "local", "run", "--bot", bot, "--sources", "sources.yaml",
         "--allow-private", "--out", "out", "--start", start, "--patience", str(patience_s)],
        cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return Background(web, sites, workdir, proc)

"""The bot's product: events on its EventBridge bus (each entry's ``Detail`` the result's CloudEvents
envelope, ``heed_core.envelope``: the contract of every engine), page text versions in its S3 bucket."""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from heed_core.envelope import envelope

from heed_aws.store import translate

_BATCH = 10  # PutEvents takes at most ten entries


class AwsResults:
    """Implements ``heed_core.store.Results``."""

    def __init__(self, *, bot: str, bus_name: str, bucket: str, events_client: Any, s3_client: Any,
                 tap: Callable[[str, dict[str, Any]], None] | None = None,
                 count: Callable[[str], None] | None = None) -> None:
        self.bot = bot
        self.bus = bus_name
        self.bucket = bucket
        self.events = events_client
        self.s3 = s3_client
        self.tap = tap  # the local runtime mirrors every event into items.jsonl
        self.count = count  # metrics: the metric's name (heed_aws.journal.count)

    def emit_many(self, events: Sequence[tuple[str, str, dict[str, Any]]]) -> list[str]:
        """PutEvents in batches of ten; entries the bus refused are returned (by result id) to be
        tried again; a call that fails as a whole raises."""
        failed: list[str] = []
        for start in range(0, len(events), _BATCH):
            batch = list(events[start:start + _BATCH])
            entries = [{"Source": f"heed.{self.bot}", "DetailType": detail_type, "EventBusName": self.bus,
                        "Detail": json.dumps(envelope(detail_type, rid, record), default=str)}
                       for detail_type, rid, record in batch]
            try:
                resp = self.events.put_events(Entries=entries)
            except (ClientError, BotoCoreError) as exc:
                if start == 0:
                    raise translate(exc, "put_events") from exc
                failed += [rid for _, rid, _ in batch]
                continue
            for (detail_type, rid, record), entry in zip(batch, resp.get("Entries") or [{}] * len(batch), strict=False):
                if entry.get("ErrorCode"):
                    failed.append(rid)
                    continue
                if self.count is not None:
                    self.count("Results")
                if self.tap is not None:
                    self.tap(detail_type, record)
        return failed

    def store_text(self, key: str, text: str) -> str:
        try:
            resp = self.s3.put_object(Bucket=self.bucket, Key=key, Body=text.encode("utf-8"),
                                      ContentType="text/plain; charset=utf-8")
        except (ClientError, BotoCoreError) as exc:
            raise translate(exc, f"put_object {key}") from exc
        return str(resp.get("VersionId") or "")

    def load_text(self, key: str) -> str | None:
        try:
            resp = self.s3.get_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise translate(exc, f"get_object {key}") from exc
        except BotoCoreError as exc:
            raise translate(exc, f"get_object {key}") from exc
        body: bytes = resp["Body"].read()
        return body.decode("utf-8", "replace")

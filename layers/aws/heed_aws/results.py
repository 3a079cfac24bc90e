"""The bot's product: events on its EventBridge bus, page text versions in its S3 bucket."""
from __future__ import annotations

import json
from typing import Any, Callable

from botocore.exceptions import ClientError


class ResultsError(RuntimeError):
    pass


class AwsResults:
    def __init__(self, *, bot: str, bus_name: str, bucket: str, events_client: Any, s3_client: Any,
                 tap: Callable[[str, dict[str, Any]], None] | None = None) -> None:
        self.bot = bot
        self.bus = bus_name
        self.bucket = bucket
        self.events = events_client
        self.s3 = s3_client
        self.tap = tap  # the local runtime mirrors every event into items.jsonl

    def emit(self, detail_type: str, record: dict[str, Any]) -> None:
        try:
            resp = self.events.put_events(Entries=[{
                "Source": f"heed.{self.bot}", "DetailType": detail_type, "EventBusName": self.bus,
                "Detail": json.dumps(record, default=str)}])
        except ClientError as exc:
            raise ResultsError("put_events") from exc
        if resp.get("FailedEntryCount"):
            raise ResultsError(f"put_events: {resp['Entries']}")
        from heed_aws.journal import count

        count(f"Results_{detail_type.replace('.', '_')}")
        if self.tap is not None:
            self.tap(detail_type, record)

    def store_text(self, key: str, text: str) -> str:
        try:
            resp = self.s3.put_object(Bucket=self.bucket, Key=key, Body=text.encode("utf-8"),
                                      ContentType="text/plain; charset=utf-8")
        except ClientError as exc:
            raise ResultsError(f"put_object {key}") from exc
        return str(resp.get("VersionId") or "")

    def load_text(self, key: str) -> str | None:
        try:
            resp = self.s3.get_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise ResultsError(f"get_object {key}") from exc
        return resp["Body"].read().decode("utf-8", "replace")

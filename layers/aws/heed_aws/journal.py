"""Every request and every skip as a structured log record with a reason code (+ EMF metrics)."""
from __future__ import annotations

from typing import Any, Callable

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

logger = Logger(service="heed")
metrics = Metrics(namespace="Heed", service="heed")


def count(name: str, value: str | None = None) -> None:
    """One EMF count (requests by status, skips by reason, deferrals and turns by why, results by kind)."""
    metrics.add_metric(name=f"{name}_{value}" if value else name, unit=MetricUnit.Count, value=1)


class LogJournal:
    """Logs in Lambda; ``tap`` lets the local runtime mirror records into jsonl files."""

    def __init__(self, tap: Callable[[str, dict[str, Any]], None] | None = None, *, emit_metrics: bool = True) -> None:
        self.tap = tap
        self.emit_metrics = emit_metrics

    def request(self, record: dict[str, Any]) -> None:
        logger.info("request", extra={"heed": "request", **record})
        if self.emit_metrics:
            count(f"Requests_{record.get('status', record.get('error', 'error'))}")
        if self.tap is not None:
            self.tap("request", record)

    def skip(self, record: dict[str, Any]) -> None:
        logger.info("skip", extra={"heed": "skip", **record})
        if self.emit_metrics:
            count(f"Skips_{record.get('reason', 'unknown')}")
        if self.tap is not None:
            self.tap("skip", record)

"""Every request and every skip as a structured log record with a reason code, and their EMF counts.

Metrics: one namespace per bot (``Heed/<BotName>`` from POWERTOOLS_METRICS_NAMESPACE), one metric
per thing counted (``Requests``, ``Skips``, ``Results``, ``Deferrals``, ``Turns``) and the value in
a dimension. A Powertools ``Metrics`` flush carries one value per dimension name, so a request's
``Status=429`` and the next one's ``Status=200`` cannot share it: each count is its own EMF
document, written at once. Each document lists several dimension sets, so one line feeds every
metric the dashboard and the alarms read:

=========  ==========================================================
metric     dimension sets (each also counted in the total, ``service``)
=========  ==========================================================
Requests   ``Status`` (200, 429, timeout), ``StatusClass`` (2xx..5xx, error), ``Purpose``
Skips      ``Reason``
Results    ``Kind`` (the result's detail type: item.found, source.closed, ...)
Deferrals  ``Reason`` (the turn's why: not_before, robots_fetched, ...)
Turns      ``Outcome`` (ack, defer)
=========  ==========================================================

The total of each metric is the one with the single dimension ``service=heed`` (Powertools
adds it to the first set), the same identity the shared ``metrics`` object flushes with.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit
from aws_lambda_powertools.metrics.functions import is_metrics_disabled

from heed_core.urls import BadUrl, authority

SERVICE = "heed"

logger = Logger(service=SERVICE)

# The dimension that carries a metric's value; count(metric, value) for any other metric is a bug.
DIMENSIONS = {"Requests": "Status", "Skips": "Reason", "Results": "Kind", "Deferrals": "Reason",
              "Turns": "Outcome"}

_MAX_DIMENSION_VALUE = 250  # CloudWatch allows 1024; a code longer than this is not a code


def namespace() -> str:
    """``Heed/<BotName>`` as the template sets it; plain ``Heed`` where nothing says (local runs)."""
    return os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or "Heed"


# The handlers' @metrics.log_metrics flushes what is added here, with the one dimension set
# "service": the identity of each metric's total.
metrics = Metrics(service=SERVICE, namespace=namespace())


def _dimension_text(value: Any) -> str:
    """A CloudWatch dimension value: printable ASCII, non-empty, bounded."""
    text = "".join(c if " " < c < "\x7f" else "_" for c in str(value if value is not None else ""))
    return text[:_MAX_DIMENSION_VALUE] or "unknown"


def status_class(record: dict[str, Any]) -> str:
    """``2xx`` .. ``5xx`` for an answer, ``error`` for none (timeout, refused, reset) or a non-HTTP code."""
    status = record.get("status")
    if isinstance(status, int) and not isinstance(status, bool) and 200 <= status <= 599:
        return f"{status // 100}xx"
    return "error"


def host_of(url: Any) -> str:
    """``scheme://host:port`` of a record's URL (the key a host's politeness is kept under), or ""."""
    try:
        return authority(str(url))
    except BadUrl:
        return ""


def _emit(metric: str, dimensions: dict[str, Any]) -> None:
    """One EMF document: ``metric`` = 1 in the total and in one dimension set per entry
    (nothing at all where metrics are off, as in local runs: the document would not be printed)."""
    if is_metrics_disabled():
        return
    doc = EphemeralMetrics(namespace=namespace(), service=SERVICE)
    doc.add_metric(name=metric, unit=MetricUnit.Count, value=1)
    for name, value in dimensions.items():
        doc.add_dimensions(**{name: _dimension_text(value)})
    doc.flush_metrics()  # prints the document, unless POWERTOOLS_METRICS_DISABLED (local runs)


def count(metric: str, dimension_value: Any = None) -> None:
    """Count one ``metric`` (Results, Deferrals, Turns, ...) with its dimension set to
    ``dimension_value``: ``count("Results", detail_type)``, ``count("Deferrals", turn.why)``,
    ``count("Turns", turn.action)``. Without a value, only the metric's total is counted."""
    if dimension_value is None:
        _emit(metric, {})
        return
    if metric not in DIMENSIONS:
        raise ValueError(f"count: {metric!r} has no dimension (known: {', '.join(sorted(DIMENSIONS))})")
    _emit(metric, {DIMENSIONS[metric]: dimension_value})


class LogJournal:
    """Logs in Lambda; ``tap`` lets the local runtime mirror records into jsonl files.

    A request record: bot, t_start, t_end, method, url, host, status or error, purpose, bytes,
    source. A skip record: bot, url, host, reason, detail, purpose, source, round, t. The
    ``heed`` field (request | skip) is what the saved Logs Insights queries filter on."""

    def __init__(self, tap: Callable[[str, dict[str, Any]], None] | None = None, *, emit_metrics: bool = True) -> None:
        self.tap = tap
        self.emit_metrics = emit_metrics

    def request(self, record: dict[str, Any]) -> None:
        record = {**record, "host": host_of(record.get("url"))}
        logger.info("request", extra={"heed": "request", **record})
        if self.emit_metrics:
            status = record.get("status", record.get("error", "error"))
            _emit("Requests", {"Status": status, "StatusClass": status_class(record),
                               "Purpose": record.get("purpose")})
        if self.tap is not None:
            self.tap("request", record)

    def skip(self, record: dict[str, Any]) -> None:
        record = {**record, "host": host_of(record.get("url"))}
        logger.info("skip", extra={"heed": "skip", **record})
        if self.emit_metrics:
            _emit("Skips", {"Reason": record.get("reason", "unknown")})
        if self.tap is not None:
            self.tap("skip", record)

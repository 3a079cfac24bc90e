"""Every request and every skip as a structured log record with a reason code, and a few counts.

Metrics: one namespace per bot (``Heed/<BotName>`` from POWERTOOLS_METRICS_NAMESPACE), ten
metrics (twelve at most; ten fit CloudWatch's always-free tier), each with the one dimension
``service=heed``, added up over an invocation and written as one EMF document at its end
(``per_invocation``): a custom metric is billed per month whether one document feeds it or a
thousand, and a metric per reason or status code was sixty.
The why of each skip, status and purpose is in the log record; Logs Insights groups them
(the stack's saved queries). A count that stayed 0 in an invocation is not written.

================  ======================================================================
metric            what it counts
================  ======================================================================
Requests          requests that left (each one is also a ``request`` log record)
Impolite          of them, answered 429 or 403 (the sites say: too fast, or unwelcome)
RobotsRequests    of them, robots.txt requests
Skips             URLs not fetched or not kept (each a ``skip`` record with its reason)
Results           results put on the bus (item.found, source.closed, ...)
Turns             host turns
TurnFailures      of them, failed (a busy store, a bug): the token comes back
RecordsReturned   batch records not started for want of time (back at once)
Sources           sources in the scheduler's last full pass (every tick: the heartbeat's "sources exist")
ServiceFaults     calls a service refused for good (AccessDenied...): the stack is misconfigured (alarm)
================  ======================================================================
"""
from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.metrics.functions import is_metrics_disabled

from heed_core.urls import BadUrl, authority

SERVICE = "heed"

logger = Logger(service=SERVICE)

# (Turns less Requests is the turns that waited for the host's slot: the dashboard's deferrals.)
METRICS = ("Requests", "Impolite", "RobotsRequests", "Skips", "Results", "Turns", "TurnFailures",
           "RecordsReturned", "Sources", "ServiceFaults")
_GAUGES = frozenset({"Sources"})  # the value as it is, not added up


def namespace() -> str:
    """``Heed/<BotName>`` as the template sets it; plain ``Heed`` where nothing says (local runs)."""
    return os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or "Heed"


# The handlers' @metrics.log_metrics flushes what is added here, with the one dimension set
# "service", at the end of each invocation.
metrics = Metrics(service=SERVICE, namespace=namespace())

_lock = threading.Lock()  # a batch's turns run on threads
_tally: dict[str, float] = {}
_gauges: dict[str, float] = {}


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


def count(metric: str, n: float = 1) -> None:
    """Add ``n`` to ``metric`` for this invocation (written at its end, by ``per_invocation``);
    a gauge (``Sources``) is set to ``n``. A metric not in ``METRICS`` is a bug."""
    if metric not in METRICS:
        raise ValueError(f"count: {metric!r} is not one of the bot's metrics ({', '.join(METRICS)})")
    with _lock:
        if metric in _GAUGES:
            _gauges[metric] = float(n)
        else:
            _tally[metric] = _tally.get(metric, 0.0) + n


def counted() -> dict[str, float]:
    """What this invocation counted so far (the tests and the local runtime read it)."""
    with _lock:
        return {**{k: float(v) for k, v in _tally.items() if v}, **_gauges}


def per_invocation(handler: Callable[[dict[str, Any], Any], dict[str, Any]]
                   ) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """The handler with its counts started at 0 and added to ``metrics`` at its end (inside
    ``@metrics.log_metrics``, which writes them as one EMF document)."""

    @functools.wraps(handler)
    def run(event: dict[str, Any], context: Any) -> dict[str, Any]:
        with _lock:
            _tally.clear()
            _gauges.clear()
        try:
            return handler(event, context)
        finally:
            if not is_metrics_disabled():  # local runs: nothing to write (and nothing left to pile up)
                for name, value in counted().items():
                    metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)

    return run


class LogJournal:
    """Logs in Lambda; ``tap`` lets the local runtime mirror records into jsonl files.

    A request record: bot, t_start, t_end, method, url, host, status or error, purpose, bytes,
    source. A skip record: bot, url, host, reason, detail, purpose, source, round, t. The
    ``heed`` field (request | skip) is what the saved Logs Insights queries filter on."""

    def __init__(self, tap: Callable[[str, dict[str, Any]], None] | None = None, *, emit_metrics: bool = True) -> None:
        # emit_metrics=False: the records only, no counts (the operator's commands, the tests)
        self.tap = tap
        self.emit_metrics = emit_metrics

    def request(self, record: dict[str, Any]) -> None:
        record = {**record, "host": host_of(record.get("url"))}
        logger.info("request", extra={"heed": "request", **record})
        if self.emit_metrics:
            count("Requests")
            status = record.get("status")
            if status in (429, 403):
                count("Impolite")
            if record.get("purpose") == "robots":
                count("RobotsRequests")
        if self.tap is not None:
            self.tap("request", record)

    def skip(self, record: dict[str, Any]) -> None:
        record = {**record, "host": host_of(record.get("url"))}
        logger.info("skip", extra={"heed": "skip", **record})
        if self.emit_metrics:
            count("Skips")
        if self.tap is not None:
            self.tap("skip", record)

"""X-Ray for the handlers: the SDK loads only in an invocation that Lambda sampled.

Lambda's active tracing decides per invocation and says so in ``_X_AMZN_TRACE_ID``
(``Sampled=1``); the stack's ``XRaySamplingRate`` sets how often. Importing the X-Ray SDK costs
a cold start some 150 ms (its recorder builds an X-Ray client at import), so an unsampled
invocation, nearly all of them at a low rate, never pays it; a sampled one gets Powertools'
Tracer (the handler's segment and every AWS call as a subsegment)."""
from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

__all__ = ["sampled", "traced"]

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]

_tracer: Any = None


def sampled(env: dict[str, str] | os._Environ[str] | None = None) -> bool:
    """Is this invocation traced: tracing on, and Lambda's trace header marked sampled."""
    env = os.environ if env is None else env
    if env.get("POWERTOOLS_TRACE_DISABLED", "").lower() in ("1", "true"):
        return False
    header = env.get("_X_AMZN_TRACE_ID", "")
    return "Sampled=1" in header.split(";")


def traced(handler: Handler) -> Handler:
    """``handler`` under Powertools' ``capture_lambda_handler`` when sampled, as it is otherwise."""

    @functools.wraps(handler)
    def run(event: dict[str, Any], context: Any) -> dict[str, Any]:
        global _tracer
        if not sampled():
            return handler(event, context)
        if _tracer is None:  # once per warm container, at the first sampled invocation
            from aws_lambda_powertools import Tracer

            _tracer = Tracer(service="heed")
        result: dict[str, Any] = _tracer.capture_lambda_handler(handler)(event, context)
        return result

    return run

"""Scheduler: an EventBridge tick starts every round of the profile's schedules that is due."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from heed_aws import runtime
from heed_aws.journal import logger, metrics, per_invocation
from heed_aws.scheduler import tick
from heed_aws.tracing import traced


def _event_time(event: dict[str, Any]) -> float | None:
    raw = event.get("time")
    if not raw:
        return None
    try:
        return datetime.fromisoformat(str(raw).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@per_invocation
@traced
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    profile = runtime.profile()
    logger.append_keys(bot=profile.name)
    # The schedule's firing time, not the (later) start of this invocation, is "now" for due-ness.
    now = _event_time(event) or runtime.clock().now()
    detail = event.get("detail") or {}
    tasks = detail.get("tasks")
    # The pass over the sources goes on while Lambda's remaining time holds a chunk; the next tick resumes it.
    summary = tick(profile, runtime.store(), runtime.queue(), runtime.journal(), now=now,
                   tasks=list(tasks) if tasks else None, resume_only=bool(detail.get("resume")),
                   remaining_s=lambda: context.get_remaining_time_in_millis() / 1000.0)
    logger.info("tick", extra={"heed": "tick", **summary})
    return summary

"""Fetcher: one SQS FIFO batch of host tokens in, a partial batch response out."""
from __future__ import annotations

from typing import Any

from heed_aws import runtime
from heed_aws.journal import logger, metrics, per_invocation
from heed_aws.service import process_batch
from heed_aws.tracing import traced


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@per_invocation
@traced
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    logger.append_keys(bot=runtime.profile().name)
    return process_batch(event.get("Records", []), runtime.crawler(), runtime.queue(), runtime.store(),
                         runtime.results_port(), runtime.journal(), parallel=runtime.parallel_turns(),
                         budget=runtime.budget(context))

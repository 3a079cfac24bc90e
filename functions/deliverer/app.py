"""Deliverer: one SQS FIFO batch of results in, each posted to the operator's webhook, a partial batch response out."""
from __future__ import annotations

import time
from typing import Any

from heed_aws import runtime
from heed_aws.deliverer import process_deliveries
from heed_aws.journal import logger, metrics, per_invocation


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@per_invocation
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return process_deliveries(event.get("Records", []), endpoint=runtime.webhook_endpoint(), post=runtime.poster(),
                              queue=runtime.deliveries(), store=runtime.store(),
                              # A receiver checks a signature's time against its own clock: the wall's.
                              clock=time.time,
                              log=lambda event, fields: logger.warning(event, extra={"heed": event, **fields}))

"""Desk: the site owners' desk behind the info page's CloudFront (a function URL): was this you,
what did you do on my site, stop. One request in, one page out (heed.desk)."""
from __future__ import annotations

from typing import Any

from heed_aws import runtime
from heed_aws.journal import logger

from heed.desk.aws import env_desk, function_url_handler

_app: Any = None


def _desk() -> Any:
    global _app
    if _app is None:
        _app = env_desk(runtime.profile(), runtime.client)
    return _app


@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return function_url_handler(_desk(), event)

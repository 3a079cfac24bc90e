"""Extracts events from page text with a model on Amazon Bedrock (Converse API).

WANNADO-10: extraction only, never training. Bedrock does not use prompts or answers to
train models, and this adapter sends nothing but the page text, its URL and fixed
instructions: no identifiers, no headers, no cookies, no other pages.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from heed_core.extract.events import Event
from heed_core.extract.llm import SYSTEM_PROMPT, build_prompt, parse_events_json

__all__ = ["BedrockExtractor", "ExtractionResult"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ExtractionResult:
    """``error`` is a stable code: the Bedrock error code (e.g. ``ThrottlingException``),
    ``client_error`` for a failure without one, or ``bad_response`` for an answer of the
    wrong shape. Events are empty whenever ``error`` is set."""

    events: tuple[Event, ...]
    error: str | None = None


class BedrockExtractor:
    """``heed_core.extract.llm.Extractor`` on ``bedrock-runtime`` ``converse``. The client
    is created on first use (once per warm Lambda container) unless one is injected."""

    def __init__(
        self, model_id: str, client: Any = None, *, max_tokens: int = 4096, max_page_chars: int = 40_000
    ) -> None:
        self.model_id = model_id
        self._client = client
        self.max_tokens = max_tokens
        self.max_page_chars = max_page_chars
        self.last_error: str | None = None

    @property
    def client(self) -> Any:
        if self._client is None:
            import boto3  # deferred: importing boto3 costs cold-start time

            self._client = boto3.client("bedrock-runtime")
        return self._client

    def request(self, page_text: str, *, url: str) -> dict[str, Any]:
        """The complete Converse request: exactly what leaves for the provider."""
        return {
            "modelId": self.model_id,
            "system": [{"text": SYSTEM_PROMPT}],
            "messages": [
                {"role": "user", "content": [{"text": build_prompt(page_text, url, max_chars=self.max_page_chars)}]}
            ],
            "inferenceConfig": {"maxTokens": self.max_tokens, "temperature": 0.0},
        }

    def extract_result(self, page_text: str, *, url: str) -> ExtractionResult:
        try:
            response = self.client.converse(**self.request(page_text, url=url))
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code") or "client_error")
            logger.warning("bedrock converse failed", extra={"error": code, "url": url, "model_id": self.model_id})
            return ExtractionResult((), code)
        except BotoCoreError as exc:
            logger.warning("bedrock converse failed", extra={"error": type(exc).__name__, "url": url})
            return ExtractionResult((), "client_error")
        try:
            blocks = response["output"]["message"]["content"]
            text = "".join(b.get("text", "") for b in blocks if isinstance(b, dict))
        except (KeyError, TypeError, AttributeError):
            logger.warning("bedrock converse answer had no message", extra={"url": url})
            return ExtractionResult((), "bad_response")
        return ExtractionResult(parse_events_json(text, url))

    def extract(self, page_text: str, *, url: str) -> tuple[Event, ...]:
        result = self.extract_result(page_text, url=url)
        self.last_error = result.error
        return result.events

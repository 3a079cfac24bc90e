"""The three kinds of failure, so callers branch on a type and never on a message.

- ``TransientError``: the world is busy (throttling, a timeout, an AWS 5xx, a lost race on a
  conditional write). The token is hidden and tried again; the work item is not charged.
- ``InputError``: a bad page, a bad URL, an undecodable work item: a skip with a reason.
- ``ConfigError``: a bad profile, sources file or template: one line at start, nothing runs.
Adapters translate library exceptions into these with ``raise ... from exc``."""
from __future__ import annotations

__all__ = ["ConfigError", "HeedError", "InputError", "TransientError"]


class HeedError(Exception):
    """The base of every error Heed raises on purpose."""


class TransientError(HeedError):
    """Retry later; the work item is not at fault (throttling, timeouts, AWS 5xx, races)."""


class InputError(HeedError):
    """The input cannot be used; the caller records a skip with ``reason`` and goes on."""

    def __init__(self, message: str, *, reason: str = "bad_input") -> None:
        super().__init__(message)
        self.reason = reason


class ConfigError(HeedError):
    """A bad profile, sources file or template: refused at start with one line."""

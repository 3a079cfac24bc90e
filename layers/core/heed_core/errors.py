"""One family of failures, so callers branch on a type and never on a message.

- ``TransientError``: the world is busy (throttling, a timeout, an AWS 5xx, a lost race on a
  conditional write). The token is hidden and tried again; the work item is not charged.
- ``InputError``: a bad page, a bad URL, an undecodable work item: a skip with a reason.
- ``ConfigError``: a bad profile, sources file or template: one line at start, nothing runs.
- ``ServiceFault``: a service refuses a call for good (AccessDenied, a validation error): the
  deployment is wrong, not the work. Nothing is charged to a work item; the caller stops what it
  was doing (a drain), raises the alarm and tries again later.
Adapters translate library exceptions into these with ``raise ... from exc``."""
from __future__ import annotations

import re

__all__ = ["ConfigError", "HeedError", "InputError", "ServiceFault", "TransientError", "one_line"]

# Line breaks and the other characters a terminal would act on rather than show.
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(message: str) -> str:
    """``message`` with its line breaks and control characters written as escapes (``\\n``), so a
    message that quotes what a person typed (a key, a value, a file name) stays one line."""
    return _UNPRINTABLE.sub(lambda m: repr(m.group())[1:-1], message)


class HeedError(Exception):
    """The base of every error Heed raises on purpose. ``code`` is stable (logs, ``--json``);
    ``exit_code`` is what the command line exits with when one reaches it (``heed.cli.main``
    maps the family once, for every command): 2 for a person's mistake, 1 otherwise."""

    code = "error"
    exit_code = 1

    def __init__(self, message: str = "") -> None:
        super().__init__(one_line(message))


class TransientError(HeedError):
    """Retry later; the work item is not at fault (throttling, timeouts, AWS 5xx, races)."""

    code = "transient"


class InputError(HeedError):
    """The input cannot be used; the caller records a skip with ``reason`` and goes on."""

    code = "bad_input"
    exit_code = 2

    def __init__(self, message: str, *, reason: str = "bad_input") -> None:
        super().__init__(message)
        self.reason = reason


class ConfigError(HeedError):
    """A bad profile, sources file, state directory, command line or template: one line at
    start (``one_line``), nothing runs."""

    code = "config"
    exit_code = 2


class ServiceFault(HeedError):
    """A call refused for a reason retrying cannot mend soon (permissions, validation): a fault
    of the deployment, never of the work item in hand."""

    code = "service_fault"

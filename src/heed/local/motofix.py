"""Speed fixes for moto, for the local runtime only (AWS itself needs none).

moto builds a queue's full attribute map, three O(n) counts over every message included, each
time any code reads ``Queue.attributes``; sending one FIFO message reads it four times. With a
thousand hidden host tokens that is about 60 ms per message and 0.4 s per receive, so a local
run of a thousand hosts would spend its time inside moto. There is no public seam for this, so
the property is replaced by one that counts only when a count is actually read; semantics are
unchanged. ``tests/unit/test_motofix.py`` fails loudly if a moto upgrade changes what this
relies on (STYLE 8).

And moto intercepts every call made with ``requests`` (for clients that talk to AWS without
botocore), matching it against some thousand URL patterns before letting it through: the
crawler's own requests to the sites paid that on every fetch. Heed talks to AWS only through
boto3, which moto serves through botocore's own event hook, so ``release_requests`` stops that
interception while the embedded AWS runs."""
from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["apply", "release_requests"]

_COUNTS = {
    "ApproximateNumberOfMessages": "approximate_number_of_messages",
    "ApproximateNumberOfMessagesDelayed": "approximate_number_of_messages_delayed",
    "ApproximateNumberOfMessagesNotVisible": "approximate_number_of_messages_not_visible",
}
_applied = False
_original: Any = None  # moto's own property, kept so a test can compare the two


class _LazyAttributes(Mapping[str, Any]):
    """A queue's attributes; the message counts are computed only when read."""

    def __init__(self, queue: Any, fixed: dict[str, Any]) -> None:
        self._queue = queue
        self._fixed = fixed

    def _count(self, name: str) -> Any:
        return getattr(self._queue, _COUNTS[name])

    def __getitem__(self, key: str) -> Any:
        if key in _COUNTS:
            return self._count(key)
        return self._fixed[key]

    def __iter__(self) -> Iterator[str]:
        yield from self._fixed
        yield from _COUNTS

    def __len__(self) -> int:
        return len(self._fixed) + len(_COUNTS)

    def __contains__(self, key: object) -> bool:
        return key in _COUNTS or key in self._fixed

    def copy(self) -> dict[str, Any]:
        return dict(self.items())


def release_requests() -> None:
    """Let the crawler's ``requests`` calls go straight to the sites (call after mock_aws starts)."""
    from moto.core.models import responses_mock

    responses_mock.stop()


def apply() -> None:
    """Install the fix (idempotent)."""
    global _applied, _original
    if _applied:
        return
    import time

    from moto.core.utils import camelcase_to_underscores
    from moto.sqs import models

    # The queue asks the time for every message it looks at (is it visible, delayed?), through
    # a datetime subtraction: the same UTC epoch seconds, read straight from the clock.
    slow_millis, slow_seconds = models.unix_time_millis, models.unix_time
    models.unix_time_millis = lambda dt=None: time.time() * 1000.0 if dt is None else slow_millis(dt)
    models.unix_time = lambda dt=None: time.time() if dt is None else slow_seconds(dt)

    queue_cls = models.Queue
    original = _original = queue_cls.__dict__["attributes"]
    python_name: dict[str, str] = {}

    def attributes(self: Any) -> Mapping[str, Any]:
        fixed: dict[str, Any] = {}
        groups = [self.BASE_ATTRIBUTES]
        if self.fifo_queue:
            groups.append(self.FIFO_ATTRIBUTES)
        if self.kms_master_key_id:
            groups.append(self.KMS_ATTRIBUTES)
        for group in groups:
            for name in group:
                if name not in _COUNTS:
                    attr = python_name.get(name)
                    if attr is None:
                        attr = python_name[name] = camelcase_to_underscores(name)
                    fixed[name] = getattr(self, attr)
        if self.policy:
            fixed["Policy"] = self.policy
        if self.redrive_policy:
            fixed["RedrivePolicy"] = json.dumps(self.redrive_policy)
        for key, value in fixed.items():
            if isinstance(value, bool):
                fixed[key] = str(value).lower()
        return _LazyAttributes(self, fixed)

    attributes.__doc__ = original.__doc__
    queue_cls.attributes = property(attributes)  # type: ignore[assignment]
    _applied = True

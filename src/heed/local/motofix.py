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
interception while the embedded AWS runs.

Per call, moto also spends more than the emulation itself: it lists its response class's
methods with ``inspect`` (about 0.8 ms), draws every request id and receipt handle one random
character at a time, lexes the same condition text on every commit, deep-copies every message it
hands out (with the list of every receipt handle it ever had), and serializes a DynamoDB answer
(a dict already in the wire's shape) by walking the service model member by member, a third of a
state call's time. ``apply`` caches the method list per class and a condition's tokens per text,
draws the same strings in one call, copies a message two levels deep (all it holds), and writes
the item operations' answers with ``json.dumps`` (moto's serializer for anything else). The
answers botocore parses are the same (``tests/unit/test_motofix.py`` compares them call by call).

Sending a FIFO message, moto compares its deduplication id with every message in the queue: a
round of 50,000 host tokens is 1.25 billion comparisons. ``apply`` keeps, per queue, the messages
sent under each id within the deduplication window, and asks only those whether they are still
queued: the same answer (a repeat of a message still in the queue within five minutes is
dropped), found at once.

Last, order: SQS promises none across a FIFO queue's message groups, and moto hands out the
earliest *sent* visible message first. A host's token is sent once and reused between its
requests, so with a thousand hosts the hosts sent first came back ahead of the ones still waiting
for their first turn, every time. ``apply`` hands out the group whose head has waited longest
first (the order sent within a group, FIFO, is kept).

These replace moto's internals, so they hold only for the moto they were tested on: ``apply``
refuses another version in one line (``TESTED``; pyproject.toml pins the same range), and every
replacement is undone when the last run that applied them ends (``undo``): code that runs after
a local run, or beside none, sees moto as it ships."""
from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["FAST_DYNAMODB_OPS", "TESTED", "apply", "release_requests", "undo"]

# The moto releases these fixes were tested on (tests/unit/test_motofix.py); pyproject.toml pins it.
TESTED = ((5, 2, 5), (5, 3, 0))  # from, up to (not included)

# The DynamoDB operations whose answers moto builds as plain dicts of the wire's own shape
# (items, keys, counts, consumed capacity): JSON as they are.
FAST_DYNAMODB_OPS = frozenset({
    "GetItem", "BatchGetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan",
    "BatchWriteItem", "TransactWriteItems", "TransactGetItems",
})

_COUNTS = {
    "ApproximateNumberOfMessages": "approximate_number_of_messages",
    "ApproximateNumberOfMessagesDelayed": "approximate_number_of_messages_delayed",
    "ApproximateNumberOfMessagesNotVisible": "approximate_number_of_messages_not_visible",
}
_applied = 0  # runs that applied the fixes and have not undone them yet
_undo: list[tuple[Any, str, Any]] = []  # (object, attribute, what it held before), in the order set
_ABSENT = object()  # a class attribute that was only inherited
fast_dynamodb_answers = True  # False: moto's own serializer (the tests compare the two)
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


def _set(obj: Any, name: str, value: Any) -> None:
    """Replace ``obj.name`` with ``value``, remembering what was there (``undo`` puts it back; a
    class's attribute it only inherited is taken away again)."""
    before = obj.__dict__.get(name, _ABSENT) if isinstance(obj, type) else getattr(obj, name)
    _undo.append((obj, name, before))
    setattr(obj, name, value)


def check_version() -> None:
    """``ConfigError`` (one line, what to do) unless the installed moto is one the fixes were tested on."""
    from importlib.metadata import version

    from heed_core.errors import ConfigError

    found = version("moto")
    parts = tuple(int(p) for p in re.findall(r"\d+", found)[:3])
    low, high = TESTED
    if not low <= parts < high:
        want = f"moto>={'.'.join(map(str, low))},<{'.'.join(map(str, high[:2]))}"
        raise ConfigError(f"the local runtime was tested on {want}, and moto {found} is installed "
                          f"(pip install '{want}')")


def apply() -> None:
    """Install the fixes (once for every run that asks; ``undo`` when each run ends)."""
    global _applied, _original
    check_version()
    _applied += 1
    if _applied > 1:
        return
    import time

    from moto.core.utils import camelcase_to_underscores
    from moto.sqs import models

    # The queue asks the time for every message it looks at (is it visible, delayed?), through
    # a datetime subtraction: the same UTC epoch seconds, read straight from the clock.
    slow_millis, slow_seconds = models.unix_time_millis, models.unix_time  # type: ignore[attr-defined]
    _set(models, "unix_time_millis", lambda dt=None: time.time() * 1000.0 if dt is None else slow_millis(dt))
    _set(models, "unix_time", lambda dt=None: time.time() if dt is None else slow_seconds(dt))

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
    _set(queue_cls, "attributes", property(attributes))
    _per_call_fixes()


def undo() -> None:
    """One run is over: when it was the last that applied them, moto is put back as it ships."""
    global _applied
    if _applied == 0:
        return
    _applied -= 1
    if _applied:
        return
    while _undo:
        obj, name, value = _undo.pop()
        if value is _ABSENT:
            delattr(obj, name)
        else:
            setattr(obj, name, value)


def _without_none(value: Any) -> Any:
    """``value`` with every ``None`` member of a mapping left out (moto's serializer omits them)."""
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value]
    return value


def _blob(value: Any) -> str:
    """A binary attribute as the wire carries it (base64); anything else JSON cannot hold raises."""
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(type(value).__name__)


def _per_call_fixes() -> None:
    import functools
    import string

    from moto.core import responses
    from moto.dynamodb.responses import DynamoHandler
    from moto.moto_api._internal.moto_random import MotoRandom
    from moto.sqs import models

    # The public methods of a response class do not change while it runs.
    _set(responses, "method_names_from_class",
         functools.lru_cache(maxsize=None)(responses.method_names_from_class))  # type: ignore[attr-defined]

    def get_random_string(self: Any, length: int = 20, include_digits: bool = True, lower_case: bool = False) -> str:
        pool = string.ascii_letters + (string.digits if include_digits else "")
        out = "".join(self.choices(pool, k=length))
        return out.lower() if lower_case else out

    _set(MotoRandom, "get_random_string", get_random_string)
    random = models.random  # type: ignore[attr-defined]
    _set(models, "generate_receipt_handle", lambda: "".join(random.choices(string.ascii_lowercase, k=185)))

    slow_serialized = DynamoHandler.serialized

    def serialized(self: Any, action_result: Any) -> Any:
        result = action_result.result
        if fast_dynamodb_answers and isinstance(result, dict) and self._get_action() in FAST_DYNAMODB_OPS:
            try:
                body = json.dumps(_without_none(result), separators=(",", ":"), default=_blob)
            except (TypeError, ValueError):  # a value JSON cannot hold: moto's own way
                return slow_serialized(self, action_result)
            headers = {"Content-Type": "application/x-amz-json-1.0", **self.response_headers}
            return 200, headers, body
        return slow_serialized(self, action_result)

    _set(DynamoHandler, "serialized", serialized)

    _set(models.Queue, "messages", property(_visible_oldest_first))
    slow_add = models.Queue.add_message

    def add_message(self: Any, message: Any) -> None:
        dedup_id = message.deduplication_id
        if not self.fifo_queue or not dedup_id or self.lambda_event_source_mappings:
            return slow_add(self, message)
        window_ms = models.DEDUPLICATION_TIME_IN_SECONDS * 1000
        index: dict[str, list[Any]] = self.__dict__.setdefault("_heed_dedup", {})
        for earlier in index.get(dedup_id, ()):
            if message.sent_timestamp - earlier.sent_timestamp < window_ms and any(
                    m is earlier for m in self._messages):
                return
        index.setdefault(dedup_id, []).append(message)
        added = self.__dict__["_heed_dedup_added"] = self.__dict__.get("_heed_dedup_added", 0) + 1
        if added % 10_000 == 0:  # forget what has left the window
            for key in list(index):
                index[key] = [m for m in index[key] if message.sent_timestamp - m.sent_timestamp < window_ms]
                if not index[key]:
                    del index[key]
        with self._messages_lock:
            self._messages.append(message)
            self._messages_lock.notify_all()

    add_message.__wrapped__ = slow_add  # type: ignore[attr-defined]  # moto's own (the tests compare the two)
    _set(models.Queue, "add_message", add_message)
    # Every message handed out is deep-copied (so filtering its attributes leaves the queue's
    # own alone), its list of every receipt handle it ever had included: two levels suffice.
    _set(models.Message, "__deepcopy__", _message_copy)

    # A condition's tokens depend on its text alone, and every commit sends the same text.
    from collections import deque

    from moto.dynamodb.comparisons import ConditionExpressionParser

    lex = ConditionExpressionParser._lex_condition_expression
    lexed: dict[str, tuple[Any, ...]] = {}

    def lex_once(self: Any) -> Any:
        text = self.condition_expression
        nodes = lexed.get(text)
        if nodes is None:
            nodes = tuple(lex(self))
            if len(lexed) < 1024:
                lexed[text] = nodes
        return deque(nodes)

    lex_once.__wrapped__ = lex  # type: ignore[attr-defined]  # moto's own (the tests compare the two)
    _set(ConditionExpressionParser, "_lex_condition_expression", lex_once)


def _copied(value: Any, depth: int = 2) -> Any:
    """``value`` with its containers copied ``depth`` levels down."""
    if depth and isinstance(value, dict):
        return {k: _copied(v, depth - 1) for k, v in value.items()}
    if depth and isinstance(value, (list, set)):
        return type(value)(_copied(v, depth - 1) for v in value)
    return value


def _message_copy(message: Any, memo: dict[int, Any]) -> Any:
    """A message as ``copy.deepcopy`` would copy it: its containers and theirs anew, the strings
    and numbers (immutable) shared."""
    new = object.__new__(type(message))
    new.__dict__.update({k: _copied(v) for k, v in message.__dict__.items()})
    memo[id(message)] = new
    return new


def _since(message: Any) -> float:
    """When a message became visible (ms): sent, out of its delay, or its last hide over."""
    return float(max(message.visible_at, message.delayed_until or 0, message.sent_timestamp or 0))


def _visible_oldest_first(queue: Any) -> list[Any]:
    """The visible messages, the group whose head has waited longest first (SQS promises no
    order across groups; moto hands out the earliest *sent*, so with a thousand host tokens the
    hosts sent last waited behind every host sent before, each time those came back). Within a
    group the order stays the order sent (FIFO)."""
    visible = [m for m in queue._messages if m.visible and not m.delayed]
    if not queue.fifo_queue or len(visible) < 2:
        return visible
    head: dict[Any, float] = {}
    for m in visible:
        head.setdefault(m.group_id, _since(m))
    order = {g: i for i, g in enumerate(sorted(head, key=head.__getitem__))}
    return sorted(visible, key=lambda m: order[m.group_id])

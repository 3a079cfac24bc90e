"""The ports to the outside world's state: the crawl's store (DynamoDB), its results (EventBridge
and S3), the token queue (SQS FIFO) and the journal (the structured request and skip log).

A host turn costs the store at most three calls: ``read_host`` (one read of everything about the
host), ``write_host`` (one conditional write: the lease and the commit in one), and, batched over
every turn of an invocation, ``write_drained`` (the URL records and the drain marks)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from heed_core.hoststate import DrainMark, HostRecord, Outbox, TokenOut
from heed_core.work import Source, UrlRecord

__all__ = ["READ_FIELDS", "HostStore", "Journal", "Results", "Tokens"]

# A source's fields that only its reads write (batched with the drain); the others (closed, why)
# are SET on the source itself, where an operator's change cannot be lost to a read.
READ_FIELDS = frozenset({"last_read", "seen_items", "last_status"})


class HostStore(Protocol):
    def read_host(self, host: str, *, aux: Sequence[str] = ()) -> HostRecord:
        """One strongly consistent read: the host's item, the aux items named (``robots``,
        ``tdmrep``), its drain mark and the operator block list entries of the host's name and
        every parent domain. A host never seen reads as version 0."""
        ...

    def write_host(self, host: str, expected_version: int, *, owner: str | None, lease_until: float,
                   state: Mapping[str, Any], outbox: Outbox | None, expires_at: float) -> bool:
        """One conditional write of the host's item as version ``expected_version + 1``; False
        when the item is no longer at ``expected_version`` (another turn won the race)."""
        ...

    def put_aux(self, host: str, kind: str, data: Mapping[str, Any]) -> None:
        """A record too big for the host's item (a long robots.txt), written before the commit
        that points at it (by its ``stamp``)."""
        ...

    def url_records(self, urls: Iterable[str]) -> dict[str, UrlRecord]:
        """What is known of these URLs (batched reads; a URL never recorded is missing)."""
        ...

    def take_quota(self, key: str, taker: str, want: int, limit: int, expires_at: float) -> int:
        """Take up to ``want`` from a counter shared by all hosts (AUBE-10's total), never past
        ``limit``. Idempotent per ``taker``: taking again returns what that taker holds."""
        ...

    def write_drained(self, records: Sequence[UrlRecord], marks: Sequence[tuple[str, DrainMark]],
                      reads: Sequence[tuple[str, Mapping[str, Any]]] = ()) -> None:
        """Batched, idempotent puts of URL records, hosts' drain marks and sources' read-state
        (``READ_FIELDS``: what a read left, written by the one host that reads the source)."""
        ...

    def update_source(self, source_id: str, fields: Mapping[str, Any]) -> None:
        """SET the given fields on a source that still exists (a removed or purged source is
        not brought back); ``last_read`` never moves backwards."""
        ...

    def list_sources(self) -> list[Source]: ...
    def get_source(self, source_id: str) -> Source | None: ...
    def put_source(self, source: Source) -> None: ...
    def get_meta(self, key: str) -> dict[str, Any] | None: ...
    def put_meta(self, key: str, value: dict[str, Any], *, expected_version: int | None = None) -> bool: ...
    def block_domain(self, domain: str, reason: str) -> None: ...


class Journal(Protocol):
    """Where every request and every skip leaves a record with a reason code."""

    def request(self, record: dict[str, Any]) -> None: ...
    def skip(self, record: dict[str, Any]) -> None: ...


class Results(Protocol):
    """The bot's product: events on its bus, page versions in its bucket."""

    def emit_many(self, events: Sequence[tuple[str, str, dict[str, Any]]]) -> list[str]:
        """Put events (detail type, result id, record) on the bus in batches; returns the ids
        of those that could not be put (to try again), raises ``TransientError`` if none could."""
        ...

    def store_text(self, key: str, text: str) -> str:
        """Keep a text; returns the bucket's version id."""
        ...

    def load_text(self, key: str) -> str | None: ...


class Tokens(Protocol):
    """The SQS FIFO queue of work tokens (MessageGroupId = host, deduplication id = token id)."""

    def send(self, tokens: Sequence[TokenOut]) -> None: ...

"""The ports to the outside world's state: the crawl's store (DynamoDB), the operator's view of
it, its results (EventBridge and S3), the token queue (SQS FIFO) and the journal (the structured
request and skip log). Each engine implements them below the core (``heed_aws``, ``heed_embedded``).

A host turn costs the store at most three calls: ``read_host`` (one read of everything about the
host), ``write_host`` (one conditional write: the lease and the commit in one), and, batched over
every turn of an invocation, ``write_drained`` (the URL records and the drain marks). A bot that
caps its requests in flight over all hosts (AUBE-11) adds two around each request: ``take_slot``
and ``release_slot``."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from heed_core.hoststate import DrainMark, HostRecord, Outbox, TokenOut
from heed_core.work import Source, UrlRecord

__all__ = ["READ_FIELDS", "HostStore", "Journal", "OperatorStore", "Results", "TextBucket", "Tokens"]

# A source's fields that only its reads write (batched with the drain); the others (closed, why)
# are SET on the source itself, where an operator's change cannot be lost to a read.
READ_FIELDS = frozenset({"last_read", "seen_items", "last_status"})


class HostStore(Protocol):
    """The crawl's state, by key (``heed_aws.store.DynamoStore``; ``tests/support/memstore.MemoryStore``
    keeps the same rules). Every method raises ``TransientError`` when the service is busy or
    unreachable (the caller retries later; it is never the item's fault) and another ``HeedError``
    for a failure that retrying cannot mend. Values are copies: changing what a read returned
    never changes what is stored."""

    def read_host(self, host: str, *, aux: Sequence[str] = ()) -> HostRecord:
        """One strongly consistent read: the host's item, the aux items named (``robots``,
        ``tdmrep``), its drain mark and the operator block list entries of the host's name and
        every parent domain. A host never seen reads as version 0."""
        ...

    def read_turn_hosts(self, hosts: Sequence[str], *, aux: Sequence[str] = ()) -> dict[str, HostRecord]:
        """``read_host`` for several hosts at once (a fetcher batch's turns), in as few reads as
        the store allows (DynamoDB: one BatchGetItem for up to 20 hosts); every host asked for is
        in the answer."""
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

    def take_slot(self, slots: int, holder: str, until: float, now: float) -> int | None:
        """AUBE-11: one of ``slots`` request slots shared by every host (the profile's
        ``politeness.max_in_flight``), taken for ``holder`` right before its request leaves and
        held until ``until`` (the request's whole deadline: a holder that dies frees its slot by
        then). One conditional write per slot tried; the slot's number, or None when every slot
        is held by another holder until after ``now``. Taking again as the same holder returns
        the slot it holds."""
        ...

    def release_slot(self, slot: int, holder: str) -> None:
        """Free ``slot`` once ``holder``'s request has its answer. A slot that is no longer
        ``holder``'s (it expired and another took it) is left as it is."""
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

    def list_sources(self) -> list[Source]:
        """Every source, ordered by id, each with the read-state its reads left merged in."""
        ...

    def source_page(self, after: str | None, limit: int, *, upto: str | None = None) -> tuple[list[Source], str | None]:
        """The sources ordered by id after the key ``after`` (None: from the first), about
        ``limit`` of them (at least one while any is left), each with its read-state, and the key
        to go on after (None: no source is left). ``upto``: every source after ``after`` up to
        and including that key, whatever their number (a chunk read again)."""
        ...

    def get_source(self, source_id: str) -> Source | None:
        """The source with that id (read-state merged in), or None if there is none."""
        ...

    def put_source(self, source: Source) -> None:
        """Write a source whole (added or replaced; its read-state is kept apart, untouched)."""
        ...

    def get_meta(self, key: str) -> dict[str, Any] | None:
        """The small bookkeeping record ``key`` (the scheduler's last tick, purge tombstones), or None."""
        ...

    def put_meta(self, key: str, value: dict[str, Any], *, expected_version: int | None = None) -> bool:
        """Write the record ``key``. With ``expected_version`` the write is conditional: it
        happens only if the stored record is at that ``version`` (0: there is none yet) and
        returns False otherwise (another writer won); ``value["version"]`` is the new version."""
        ...

    def block_domain(self, domain: str, reason: str) -> None:
        """COMMON-08: put a domain (and so its subdomains) on the operator block list with its
        reason; ``read_host`` of any of its hosts reports it from then on."""
        ...


class Journal(Protocol):
    """Where every request and every skip leaves a record with a reason code."""

    def request(self, record: dict[str, Any]) -> None:
        """Record one HTTP request that left (``t_start``, ``t_end``, ``method``, ``url``,
        ``status`` or ``error``, ``purpose``, ``bytes``, ``source``). Never raises for load."""
        ...

    def skip(self, record: dict[str, Any]) -> None:
        """Record a URL not fetched or not kept: its ``url``, a stable ``reason`` code and a
        ``detail`` a person can read. Never raises for load."""
        ...


class Results(Protocol):
    """The bot's product: events on its bus, page versions in its bucket."""

    def emit_many(self, events: Sequence[tuple[str, str, dict[str, Any]]]) -> list[str]:
        """Put events (detail type, result id, record) on the bus in batches; returns the ids
        of those that could not be put (to try again), raises ``TransientError`` if none could."""
        ...

    def store_text(self, key: str, text: str) -> str:
        """Keep a text as a new version under ``key``; returns the bucket's version id.
        ``TransientError`` when the bucket is busy (nothing is committed before it returns)."""
        ...

    def load_text(self, key: str) -> str | None:
        """The newest text kept under ``key`` (SUBSIDIE-04 compares with it), or None."""
        ...


class Tokens(Protocol):
    """The SQS FIFO queue of work tokens (MessageGroupId = host, deduplication id = token id)."""

    def send(self, tokens: Sequence[TokenOut]) -> None:
        """Send every token (batched), each with its host as message group and its ``tok`` as
        deduplication id, so a token sent twice is delivered once. ``TransientError`` if any
        could not be sent: the caller sends them all again (repeats are deduplicated)."""
        ...


class OperatorStore(Protocol):
    """The operator's view of the crawl's state (``heed.operator.actions`` works on it), by key:
    ``heed_aws.operator_store.DynamoOperatorStore``, ``heed_embedded.store.SqliteStore`` and the
    tests' MemoryStore, held to the same semantics by ``tests/unit/test_store_contract.py``."""

    def read_hosts(self, hosts: Iterable[str]) -> dict[str, HostRecord]:
        """Many hosts' items (no aux items) in batched reads; a host never seen is left out."""
        ...

    def update_host_state(self, host: str, expected_version: int, state: Any) -> bool:
        """An operator's change of a host's state blob (a source closed or reopened there), on the
        version read: False when a turn committed in between (read again and retry)."""
        ...

    def domain_hosts(self, domain: str) -> list[str]:
        """The hosts of ``domain`` and its subdomains, from the index of its registrable domain."""
        ...

    def unindex_hosts(self, domain: str, hosts: Sequence[str]) -> None:
        """Take hosts out of the domain index; the index entry goes when it names none."""
        ...

    def host_items(self, host: str) -> list[tuple[str, str | None]]:
        """Every record of the host (by key): (sort key, the URL of a URL record)."""
        ...

    def delete_host_items(self, host: str, sort_keys: Sequence[str]) -> int:
        """Delete those records of the host; returns how many."""
        ...

    def all_hosts(self) -> list[str]:
        """Every host with a record (a whole scan: only for state kept before the domain index)."""
        ...

    def list_sources(self) -> list[Source]:
        """Every source, ordered by id, each with its read-state merged in."""
        ...

    def get_source(self, source_id: str) -> Source | None:
        """The source with that id, or None."""
        ...

    def put_sources(self, sources: Sequence[Source]) -> None:
        """Write sources whole (added or replaced)."""
        ...

    def update_source_definition(self, source: Source) -> bool:
        """An imported source that exists already: its url, kind and options replaced, what the
        crawl learnt of it kept; False if there is no such source."""
        ...

    def delete_source(self, source_id: str) -> None:
        """The source and its read-state gone."""
        ...

    def reopen_source(self, source_id: str) -> bool:
        """The source's closed fields cleared; False if there is no such source."""
        ...

    def get_meta(self, key: str) -> dict[str, Any] | None:
        """As ``HostStore.get_meta``."""
        ...

    def put_meta(self, key: str, value: dict[str, Any], *, expected_version: int | None = None) -> bool:
        """As ``HostStore.put_meta``."""
        ...

    def unblock_domain(self, domain: str) -> bool:
        """Lift a block; False if the domain was not on the list."""
        ...

    def block_list(self) -> list[tuple[str, str, float | None]]:
        """(domain, reason, when blocked or None) for every block."""
        ...

    def mark_purged(self, domain: str, at: float) -> None:
        """COMMON-08: the purge's tombstone, where every turn reads it with the block list."""
        ...


class TextBucket(Protocol):
    """Where the page texts are kept, versioned (the results bucket; the embedded ``texts`` table)."""

    def versions(self, key: str) -> list[str]:
        """Every version id kept under ``key``."""
        ...

    def delete_version(self, key: str, version_id: str) -> None:
        """Delete one version of ``key`` for good."""
        ...

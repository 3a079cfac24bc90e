"""The operator's commands, on a deployed stack (``--stack``) or a local state directory
(``--state``): ``sources`` (add, import, list, show, remove, reopen), ``block``, ``unblock``,
``blocks``, ``purge``, ``explain``, ``audit`` and ``dlq``, with ``heed operator`` (the old
spelling of block and purge on a table).

- ``actions``: what each change does, on any store with the ``heed_core.store.OperatorStore`` methods
  (DynamoOperatorStore on AWS, the embedded engine's SqliteStore, the tests' MemoryStore): a
  source closed or reopened on its hosts, sources imported, a domain purged (COMMON-08,
  SUBSIDIE-13, PRAHA-09). No command line in it.
- ``targets``: where a command acts (a stack's table and bucket, or a state directory).
- ``sources``, ``blocks``, ``audit``, ``dlq``, ``explain``, ``legacy``: the commands themselves."""
from __future__ import annotations

from typing import Any

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the operator's commands to the `heed` parser's subcommands."""
    from heed.operator import audit, blocks, dlq, sources

    sources.register(subparsers)
    blocks.register(subparsers)
    audit.register(subparsers)
    dlq.register(subparsers)

"""A local state directory, as the commands open it: the embedded engine's (heed_embedded.state:
``heed-state.json``, the SQLite database ``heed.db``, the append-only ``requests.jsonl``).

``heed serve --state DIR`` and ``heed local run --state DIR`` crawl it (one at a time); the
operator commands (sources, block, purge, explain, audit, dlq) read and write it while they do.
A directory of the first format (``table.jsonl`` and ``bucket.jsonl``, written whole at the end
of a run) is migrated the first time it is opened, said in one line."""
from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from heed_embedded.state import FORMAT, EmbeddedState, StateError, open_state

__all__ = ["FORMAT", "EmbeddedState", "StateDirError", "open_local"]

StateDirError = StateError  # a state directory that cannot be used: one line, naming it


@contextmanager
def open_local(path: Path, *, write: bool, bot: str | None = None) -> Iterator[EmbeddedState]:
    """The state directory for the length of a command (made if ``write``; a migration said on
    stderr); with ``bot`` it learns whose state it is, and another bot's is refused."""
    state = open_state(Path(path), create=write)
    try:
        for note in state.notes:
            print(note, file=sys.stderr)
        if bot is not None:
            state.claim_bot(bot)
        yield state
    finally:
        state.close()

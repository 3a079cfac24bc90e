"""The port to the desk's own records: its secret, its rate-limit counters, the proof tokens, the
proven sessions and the record of what site owners asked for. Each engine implements it beside
its crawl state (``heed_embedded.desk.SqliteDeskStore``, ``heed_aws.desk.DynamoDeskStore``);
``tests/unit/test_desk_store.py`` holds them to the same semantics."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from heed_core.desk.proof import ProofToken

__all__ = ["DeskAction", "DeskStore", "Session"]


@dataclass(frozen=True)
class Session:
    """A browser that proved a host: the digest of its session cookie, the host (an authority),
    the scope it opens (name, and port when not the default), and until when."""

    sid: str
    host: str
    name: str
    port: int | None
    expires: float
    proof: str  # how: file | dns


@dataclass(frozen=True)
class DeskAction:
    """What a site owner asked for on the desk and what was done: ``kind`` stop | slow | purge,
    on ``name`` (the proven host), ``at``, by ``client`` (its address), with ``detail`` (what was
    done: the block's reason, the new gap, the purge's counts)."""

    kind: str
    name: str
    at: float
    client: str
    detail: Mapping[str, Any] = field(default_factory=dict)


class DeskStore(Protocol):
    """The desk's records. Values are copies. Every method raises ``TransientError`` when the
    store is busy (the visitor is asked to try again) and another ``HeedError`` for a failure
    retrying cannot mend."""

    def secret(self, fresh: bytes) -> bytes:
        """The desk's secret (CSRF and cookie digests): the one stored, or ``fresh`` stored as it
        when there is none yet (the first writer wins, every caller gets the same)."""
        ...

    def hit(self, key: str, expires: float) -> int:
        """Count one more use of the counter ``key`` (kept until ``expires``); the new count."""
        ...

    def put_token(self, token: ProofToken) -> None:
        """Keep a new token (its ``tid`` is new)."""
        ...

    def get_token(self, tid: str) -> ProofToken | None:
        """The token with digest ``tid``, or None (never given, or gone after it expired)."""
        ...

    def swap_token(self, old: ProofToken, new: ProofToken) -> bool:
        """Replace ``old`` with ``new`` only if the stored token is still ``old`` (its state and
        asks): False when another request changed it first (a replay racing the first use)."""
        ...

    def put_session(self, session: Session) -> None:
        """Keep a proven session."""
        ...

    def get_session(self, sid: str, now: float) -> Session | None:
        """The session with digest ``sid`` that has not ended at ``now``, or None."""
        ...

    def record(self, action: DeskAction) -> None:
        """Keep what a site owner asked for and what was done (the operator's record)."""
        ...

    def actions(self, limit: int = 100) -> list[DeskAction]:
        """The latest actions, newest first."""
        ...

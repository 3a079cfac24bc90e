"""One batch of host tokens, for every engine: receive, group by host, one turn per host, what
became of each token, the hides, the drain. The SQS service (``heed_aws.service``) and the
embedded one (``heed_embedded.service``) are adapters that say what their queue calls a message,
how it is hidden and acknowledged, and where the drain's transaction is.

The rules (``heed_core.batch``): a group's messages are one host's tokens and one turn (the
later tokens' work taken into the host's frontier with the first's, acknowledged only when the
turn wrote it), so a host never has two tokens in flight; a deferred token is hidden for what is
left of its wait, counted from the end of its turn; a token with nothing to drain is hidden at
once, one with an outbox only after the drain. A transient failure (busy, throttled, a lost
race) hides the group for a short backoff and charges nothing, and after a request whose commit
failed not before the gap that request began is over (COMMON-05); a service that refuses for
good (``ServiceFault``) hides it and charges nothing either; any other failure is the work's
own, charged to the item at the head of the host (``MAX_REAL_FAILURES``, then a skip). A token
that cannot be decoded is acknowledged with a skip (it must never loop or block its host).
Nothing here sleeps."""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

from heed_core.batch import Outcome, after_drain, all_back, before_drain, turn_outcomes
from heed_core.crawl import Crawler, TurnResult
from heed_core.drain import drain
from heed_core.errors import InputError, ServiceFault, TransientError
from heed_core.hoststate import HostRecord
from heed_core.store import HostStore, Journal, Results, Tokens
from heed_core.tokens import backoff, decode_token, deferred_wait, with_copies
from heed_core.turn import TokenIn

__all__ = ["MAX_REAL_FAILURES", "BatchObserver", "BatchPorts", "Delivery", "Hide", "process_batch"]

MAX_REAL_FAILURES = 3  # then the work item is recorded as a skip; deferrals never count here


@dataclass(frozen=True)
class Delivery[M]:
    """One message as the queue handed it out: the queue's own handle on it (``msg``), its group
    (the host), its body, how often it was received (this time included) and its id."""

    msg: M
    group: str
    body: str
    receives: int
    message_id: str


@dataclass(frozen=True)
class Hide[M]:
    """A message to hide for ``seconds`` from now; ``chain_s``: what its host's known work may
    still take (``TurnResult.chain_s``, None: not known), for a queue that orders by it."""

    msg: M
    seconds: float
    chain_s: float | None = None
    why: str = ""  # the turn's (``TurnResult.why``): "fetched", "gap", "not_before", ...; "" for a failed turn


class BatchQueue[M](Protocol):
    """The queue's side of a batch: hiding messages (never for less than asked)."""

    def hide_many(self, hides: Sequence[Hide[M]]) -> None:
        """Make each message visible again ``seconds`` from now."""
        ...


class BatchObserver(Protocol):
    """What the batch tells its engine: counts (``turns``, ``transient``, ``failures``,
    ``faults``, ``returned``, ``events``) and trouble, one event name and its fields (``transient``,
    ``service_fault``, ``failure``, ``drain``, ``drain_fault``, ``undrained``, ``snapshots``), with
    the exception where there is one (an engine may log its traceback)."""

    def count(self, what: str, n: int = 1) -> None: ...

    def trouble(self, event: str, fields: Mapping[str, object], exc: BaseException | None = None) -> None: ...


class _Silent:
    def count(self, what: str, n: int = 1) -> None:
        pass

    def trouble(self, event: str, fields: Mapping[str, object], exc: BaseException | None = None) -> None:
        pass


@dataclass(frozen=True)
class BatchPorts[M]:
    """Everything a batch works with. ``drain_scope``: where the drain's writes go together (the
    embedded engine's transaction: all of it or none; nothing on AWS, whose drain marks say what
    left). ``parallel``: groups run side by side (1 keeps AUBE-11's one request at a time).
    ``allows_turn``: asked before each group's turn (Lambda's remaining time); a group not
    started goes back at once, visible now."""

    queue: BatchQueue[M]
    store: HostStore
    results: Results
    tokens: Tokens
    journal: Journal
    observer: BatchObserver = field(default_factory=_Silent)
    drain_scope: Callable[[], contextlib.AbstractContextManager[object]] = contextlib.nullcontext
    parallel: int = 1
    allows_turn: Callable[[], bool] | None = None


class _Rollback(Exception):
    """The drain met a service fault: nothing of it is kept where the drain is one transaction."""


def process_batch[M](deliveries: Sequence[Delivery[M]], crawler: Crawler, ports: BatchPorts[M]) -> list[Outcome[M]]:
    """The batch's groups (each host's turn, ``ports.parallel`` side by side), then the hides of
    the tokens with nothing to drain, the drain of every outbox, and the hides of the rest.
    Returns every message's outcome in the order given: ``failed`` ones stay on the queue
    (hidden), the others are the caller's to acknowledge."""
    groups: dict[str, list[Delivery[M]]] = {}
    for d in deliveries:
        groups.setdefault(d.group, []).append(d)
    decoded = [_decode(g, ports.journal) for g in groups.values()]
    snapshots = _snapshots([tokens[0][1].host for _, tokens in decoded if tokens], crawler, ports)
    if ports.parallel > 1 and len(decoded) > 1:
        with ThreadPoolExecutor(max_workers=min(ports.parallel, len(decoded))) as pool:
            done = list(pool.map(lambda d: _group_turn(d, crawler, snapshots, ports), decoded))
    else:
        done = [_group_turn(d, crawler, snapshots, ports) for d in decoded]
    by_id = {id(o.msg): o for group in done for o in group}
    ordered = [by_id[id(d.msg)] for d in deliveries]
    turns = {id(o.msg): o.hide for o in ordered if isinstance(o.hide, TurnResult)}

    def hides(pairs: list[tuple[M, float]]) -> list[Hide[M]]:
        return [Hide(m, s, t.chain_s, t.why) if (t := turns.get(id(m))) is not None else Hide(m, s)
                for m, s in pairs]

    # A wait counts from the end of its turn: a token is hidden for what is left of it.
    early = before_drain(ordered, crawler.clock.now())
    if early:
        ports.queue.hide_many(hides(early))
    pendings = [o for o in ordered if o.pending is not None]
    if pendings:
        undrained = _drain(pendings, ports)
        late = after_drain(pendings, undrained, crawler.clock.now())
        if late:
            ports.queue.hide_many(hides(late))
    return ordered


type _Decoded[M] = tuple[list[Outcome[M]], list[tuple[M, TokenIn]]]  # acknowledged skips, (message, token)


def _decode[M](group: list[Delivery[M]], journal: Journal) -> _Decoded[M]:
    """A group's messages as tokens; one that cannot be decoded is acknowledged with a skip."""
    out: list[Outcome[M]] = []
    tokens: list[tuple[M, TokenIn]] = []
    for d in group:
        try:
            tokens.append((d.msg, decode_token(d.body, d.receives, d.message_id)))
        except InputError as exc:
            journal.skip({"url": d.body[:300], "reason": exc.reason, "detail": str(exc)})
            out.append(Outcome(d.msg))
    return out, tokens


def _snapshots[M](hosts: list[str], crawler: Crawler, ports: BatchPorts[M]) -> dict[str, HostRecord]:
    """The batch's hosts in one read (each turn's snapshot); a turn whose host is missing here
    reads its own."""
    if len(hosts) < 2:
        return {}  # one host: its turn reads it, one read all the same
    try:
        return ports.store.read_turn_hosts(hosts, aux=crawler.aux)
    except Exception as exc:  # noqa: BLE001 - busy, or one host's item undecodable: each turn finds out alone
        ports.observer.trouble("snapshots", {"error": str(exc)[:300]})
        return {}


def _group_turn[M](decoded: _Decoded[M], crawler: Crawler, snapshots: dict[str, HostRecord],
                   ports: BatchPorts[M]) -> list[Outcome[M]]:
    """One group's tokens in one turn (the later ones' work taken in with the first's)."""
    out, tokens = decoded
    if not tokens:
        return out
    msgs = [m for m, _ in tokens]
    if ports.allows_turn is not None and not ports.allows_turn():
        ports.observer.count("returned", len(tokens))
        return out + all_back(msgs, 0.0)
    (head_msg, head), rest = tokens[0], tokens[1:]
    token = with_copies(head, [t for _, t in rest])
    obs = ports.observer
    obs.count("turns")
    try:
        turn = crawler.host_turn(token, snapshots.get(head.host))
    except TransientError as exc:
        obs.count("transient")
        obs.trouble("transient", {"host": head.host, "error": str(exc)[:500]})
        return out + all_back(msgs, deferred_wait(exc, head.receives, crawler.clock.now()))
    except ServiceFault as exc:
        # The deployment or the machine refuses (AccessDenied, a full disk): its fault, not the work's.
        obs.count("faults")
        obs.trouble("service_fault", {"host": head.host, "error": str(exc)[:500]})
        return out + all_back(msgs, backoff(head.receives))
    except Exception as exc:  # noqa: BLE001 - a real failure: charge the item, the token comes back
        obs.count("failures")
        detail = f"{type(exc).__name__}: {exc}"
        obs.trouble("failure", {"host": head.host, "error": detail[:500]}, exc)
        try:
            crawler.charge_failure(token, MAX_REAL_FAILURES, detail[:300])
        except Exception as again:  # noqa: BLE001 - the store itself is failing: the token comes back
            obs.trouble("failure", {"host": head.host, "error": f"could not count the failure: {again}"[:500]}, again)
        return out + all_back(msgs, backoff(head.receives))
    return out + turn_outcomes(head_msg, rest, head.host, turn)


def _drain[M](pendings: list[Outcome[M]], ports: BatchPorts[M]) -> dict[str, str]:
    """Every outbox of the batch out, within the engine's drain scope; the hosts whose outbox
    did not fully leave, and why (the next turn of each drains what is left first)."""
    outboxes = [o.pending for o in pendings if o.pending is not None]
    obs = ports.observer
    try:
        with ports.drain_scope():
            report = drain(outboxes, ports.store, ports.results, ports.tokens)
            if report.fault:
                obs.count("faults")
                obs.trouble("drain_fault", {"error": report.fault})
                raise _Rollback(report.fault)
    except Exception as exc:  # noqa: BLE001 - nothing of it is lost: each host's next turn drains first
        if not isinstance(exc, _Rollback):
            obs.trouble("drain", {"error": str(exc)[:500], "hosts": sorted({p.host for p in outboxes})}, exc)
        return {p.host: str(exc) for p in outboxes}
    obs.count("events", report.events)
    if report.failed:
        obs.trouble("undrained", {"hosts": sorted(report.failed)})
    return dict(report.failed)

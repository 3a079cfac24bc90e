"""What became of each token of a batch after its host's turn, and when each is hidden: one set of
rules for the SQS batch service (``heed_aws.service``) and the embedded one
(``heed_embedded.service``), whatever their queue calls a message (``R``: an SQS record, an
embedded ``Message``).

A host's turn answers for the first token of its group; the later tokens of the host either had
their work taken into the host's frontier (acknowledged) or wait with the first. A token with
nothing to drain is hidden at once; one with an outbox only after the drain: hidden early, a short
wait could bring it back to another turn while its outbox is still leaving, and drain it twice
(events sent twice). A token whose outbox did not fully leave comes back soon (``REDRAIN_S``),
and its next turn drains what is left first."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from heed_core.crawl import TurnResult
from heed_core.drain import Pending
from heed_core.turn import TokenIn

__all__ = ["REDRAIN_S", "Outcome", "after_drain", "all_back", "before_drain", "turn_outcomes"]

REDRAIN_S = 5.0  # a token whose outbox did not fully leave comes back this soon to drain it


@dataclass
class Outcome[R]:
    """One message: acknowledged or not (``failed``: it stays on the queue), how long it is
    hidden (seconds, or what is left of a deferring turn's wait), the outbox its turn left."""

    msg: R
    failed: bool = False
    hide: float | TurnResult | None = None
    pending: Pending | None = None

    def hidden_for(self, now: float) -> float:
        """A wait counts from the end of its turn: what is left of it at ``now``."""
        return self.hide.left(now) if isinstance(self.hide, TurnResult) else float(self.hide or 0.0)


def all_back[R](msgs: Sequence[R], wait: float) -> list[Outcome[R]]:
    """Every message of a group not acknowledged, each hidden for ``wait`` (a turn that failed)."""
    return [Outcome(m, failed=True, hide=wait) for m in msgs]


def turn_outcomes[R](head: R, rest: Sequence[tuple[R, TokenIn]], host: str, turn: TurnResult) -> list[Outcome[R]]:
    """The outcomes of a host's turn for the group's first message (``head``) and the rest."""
    out = [Outcome(head, failed=True, hide=turn, pending=turn.pending) if turn.action == "defer"
           else Outcome(head, pending=turn.pending)]
    # The later tokens of the host: their work is in the frontier now (committed by the turn), or,
    # when the turn wrote nothing (another turn holds the host), they wait with the first.
    same = [m for m, t in rest if t.host == host]
    out += [Outcome(m) for m in same] if turn.took_also else [Outcome(m, failed=True, hide=turn) for m in same]
    # Another host's token in the group: never expected (the group is the host); kept for FIFO order.
    out += [Outcome(m, failed=True, hide=turn.delay_s) for m, t in rest if t.host != host]
    return out


def before_drain[R](outcomes: Sequence[Outcome[R]], now: float) -> list[tuple[R, float]]:
    """The hides due before the drain: every hidden message whose turn left nothing to drain."""
    return [(o.msg, o.hidden_for(now)) for o in outcomes if o.hide is not None and o.pending is None]


def after_drain[R](outcomes: Sequence[Outcome[R]], undrained: Mapping[str, str], now: float) -> list[tuple[R, float]]:
    """The hides due after the drain: the hidden messages that had an outbox, and the ones whose
    host's outbox did not fully leave (``undrained``), which are then not acknowledged either."""
    late: list[tuple[R, float]] = []
    for o in outcomes:
        if o.pending is None:
            continue
        if o.hide is not None:
            late.append((o.msg, o.hidden_for(now)))  # deferred anyway: its next turn drains what is left first
        elif o.pending.host in undrained and not o.failed:
            o.failed = True  # not acknowledged: it comes back soon, and its turn drains first
            late.append((o.msg, REDRAIN_S))
    return late

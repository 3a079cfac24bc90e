"""A model of the SQS FIFO token queue for pure tests: per host (message group) the tokens in
order; the head is delivered when due, hidden for a deferral, deleted on an ack, and the next
one of the group comes only after it. Outboxes are drained after every turn, as the fetcher's
batch does, so tokens for other hosts arrive as SQS would bring them."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from heed_core.crawl import Crawler, TurnResult
from heed_core.drain import drain
from heed_core.hoststate import TokenOut
from heed_core.ports import FakeClock
from heed_core.turn import TokenIn

from tests.support.memstore import FakeTokens, ListResults, MemoryStore

__all__ = ["FifoSim"]


@dataclass
class FifoSim:
    crawler: Crawler
    store: MemoryStore
    results: ListResults
    tokens: FakeTokens
    clock: FakeClock
    groups: dict[str, list[TokenIn]] = field(default_factory=dict)
    due: dict[str, float] = field(default_factory=dict)
    receives: dict[str, int] = field(default_factory=dict)
    turns: list[tuple[str, TurnResult]] = field(default_factory=list)
    _taken: int = 0

    def send(self, token: TokenOut) -> None:
        group = self.groups.setdefault(token.host, [])
        if not group:
            self.due[token.host] = self.clock.now()
        group.append(TokenIn(token.host, token.tok, token.items))

    def _collect(self) -> None:
        for t in self.tokens.sent[self._taken:]:
            self.send(t)
        self._taken = len(self.tokens.sent)

    def step(self, host: str) -> TurnResult:
        """Deliver the head token of ``host`` now."""
        head = self.groups[host][0]
        self.receives[head.tok] = self.receives.get(head.tok, 0) + 1
        turn = self.crawler.host_turn(replace(head, receives=self.receives[head.tok]))
        self.turns.append((host, turn))
        if turn.pending is not None:
            drain([turn.pending], self.store, self.results, self.tokens)
        now = self.clock.now()
        if turn.action == "defer":
            self.due[host] = now + turn.delay_s
        else:
            self.groups[host].pop(0)
            if self.groups[host]:
                self.due[host] = now
            else:
                del self.groups[host]
                self.due.pop(host, None)
        self._collect()
        return turn

    def play(self, max_turns: int = 300) -> list[TurnResult]:
        """Until no host has a token left (deferred tokens come back when due; the clock jumps)."""
        self._collect()
        played: list[TurnResult] = []
        while self.groups:
            assert len(played) < max_turns, "the queue did not drain"
            host = min(self.groups, key=lambda h: (self.due[h], h))
            at = self.due[host]
            if at > self.clock.now():
                self.clock.advance(at - self.clock.now())
            played.append(self.step(host))
        return played

    def pending_tokens(self) -> dict[str, Any]:
        return {h: [t.tok for t in g] for h, g in self.groups.items()}

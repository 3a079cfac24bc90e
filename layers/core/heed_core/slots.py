"""AUBE-11's request slots: a bot that caps its requests in flight over all hosts
(``politeness.max_in_flight``) makes one only while it holds one of the store's slots.

A slot is taken right before the request and freed right after its answer, a conditional write
each; a turn that finds every slot held comes back in ``SLOT_WAIT_S`` and never sleeps. Apart
from ``crawl.Crawler`` so that the executor keeps the turn's outline (issue 36)."""
from __future__ import annotations

from dataclasses import replace

from heed_core.committer import Committer, TurnResult
from heed_core.errors import TransientError
from heed_core.hoststate import HostView, TokenOut
from heed_core.profile import Profile
from heed_core.settle_turn import ROTATE_AT
from heed_core.store import HostStore
from heed_core.turn import Plan, TokenIn
from heed_core.urls import short_hash

__all__ = ["SLOT_WAIT_S", "RequestSlots"]

SLOT_WAIT_S = 1.0  # a turn that finds every request slot held (AUBE-11) comes back this soon (SQS: whole seconds)


class RequestSlots:
    """The request slots of one bot's turns: ``take`` before the request, ``release`` right after
    its answer (or a turn that never asked), ``wait`` for a turn that found none free."""

    def __init__(self, profile: Profile, store: HostStore, lease_s: float) -> None:
        self.p = profile
        self.store = store
        self.lease_s = lease_s

    def take(self, token: TokenIn, plan: Plan, now: float) -> tuple[int, str] | None:
        """(slot, holder) of the slot this request holds; (-1, "") for a bot without a cap; None
        when every slot is held. A slot is held for the request's whole deadline and the claim
        before it (``lease_s``): a holder that dies frees it then, whatever the clocks say."""
        cap = self.p.politeness.max_in_flight
        if not cap:
            return -1, ""
        assert plan.request is not None
        holder = short_hash(token.owner, plan.request.url, repr(now))
        slot = self.store.take_slot(int(cap), holder, now + self.lease_s + self.p.politeness.clock_skew_margin_s,
                                    now)
        return None if slot is None else (slot, holder)

    def release(self, slot: tuple[int, str]) -> None:
        """The slot freed for the next request; a release the store refuses is left to the slot's
        deadline, never raised."""
        if slot[0] < 0:
            return
        try:
            self.store.release_slot(*slot)
        except TransientError:
            # The slot frees itself at its deadline: a release lost to a busy table holds the next
            # request back a while, and must not cost this answer's commit (the gap it carries).
            pass

    @staticmethod
    def wait(commits: Committer, token: TokenIn, view: HostView, plan: Plan, now: float) -> TurnResult:
        """Every slot is held: the turn comes back in ``SLOT_WAIT_S`` (no sleep: a Lambda never
        sleeps to be polite), having written nothing. A token that came back ``ROTATE_AT`` times
        is replaced instead (its receive count is what sends poison to the DLQ): the plan's state
        and effects are committed with a fresh token for the host, and this one is done."""
        if token.receives < ROTATE_AT:
            return TurnResult("defer", delay_s=SLOT_WAIT_S, why="in_flight_cap", took_also=False)
        fresh = TokenOut(token.host, short_hash(token.tok, "rotate", str(view.version)))
        plan = replace(plan, wait=None, why="in_flight_cap", tokens=[*plan.tokens, fresh])
        return commits.without_request(token, view, plan, now)

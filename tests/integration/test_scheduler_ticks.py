"""Two scheduler ticks at once, on moto: what keeps them apart is the tick record (META/tick),
written only on the version read (a conditional put), not a reserved concurrency of 1 (the
template reserves none: a new account's quota could not hold it).

A second tick is run whole at every point of the first one's work (before each of its calls on
the table and the queue): whichever wins, the round starts once, every source's host has its
token in the queue once (a chunk both sent has the same token ids: SQS keeps one), and the pass
ends once with every source counted."""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from heed_core.profile import load_profile
from heed_core.work import Source

from heed_aws.journal import LogJournal
from heed_aws.operator_store import DynamoOperatorStore
from heed_aws.queue import TokenQueue
from heed_aws.scheduler import FIRST_CHUNK, META_KEY, tick
from heed_aws.store import DynamoStore

from heed.local import motofix

from tests.support.stack import moto_stack

pytestmark = pytest.mark.slow

T = 1_796_018_400.0  # a quarter hour: AubeBot's rate(15 minutes) fires
N_SOURCES = FIRST_CHUNK + 40  # two chunks


class Interleaved:
    """A port whose ``at``-th call (counted over every port sharing ``calls``) first runs ``other``."""

    def __init__(self, port: Any, calls: list[str], at: int, other: Callable[[], Any]) -> None:
        self._port, self._calls, self._at, self._other = port, calls, at, other
        self.seen: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._port, name)
        if not callable(attr) or name.startswith("_"):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self._calls.append(name)
            if len(self._calls) == self._at:
                self.seen.append(self._other())
            return attr(*args, **kwargs)
        return call


def _two_ticks(at: int | None, b_at: float = T) -> tuple[list[str], dict[str, Any], dict[str, Any] | None,
                                                         Counter[str], dict[str, Any]]:
    """Tick A at T, and tick B (at ``b_at``: the same minute's in another invocation, or the next
    minute's while A is slow) run whole at A's ``at``-th call (None: never). Returns A's calls, A's
    and B's answers, the hosts' tokens in the queue and the tick record."""
    with moto_stack("heed-ticks") as (session, res):
        db, sqs = session.client("dynamodb"), session.client("sqs")
        sources = [Source(f"feed-{n:04d}", f"https://h{n}.example/feed.xml", "feed") for n in range(N_SOURCES)]
        DynamoOperatorStore(res.table_name, db).put_sources(sources)
        profile = load_profile("aubebot")
        store, queue = DynamoStore(res.table_name, db), TokenQueue(res.queue_url, sqs)
        tick(profile, store, queue, LogJournal(emit_metrics=False), now=T - 60)  # the minute before: no round

        def b() -> dict[str, Any]:
            return tick(profile, store, queue, LogJournal(emit_metrics=False), now=b_at)

        calls: list[str] = []
        a_store, a_queue = Interleaved(store, calls, at or 0, b), Interleaved(queue, calls, at or 0, b)
        a = tick(profile, a_store, a_queue, LogJournal(emit_metrics=False), now=T)  # type: ignore[arg-type]
        b_out = (a_store.seen + a_queue.seen or [None])[0]
        hosts: Counter[str] = Counter()
        while True:
            got = sqs.receive_message(QueueUrl=res.queue_url, MaxNumberOfMessages=10).get("Messages", [])
            if not got:
                break
            for m in got:
                hosts[json.loads(m["Body"])["host"]] += 1
                sqs.delete_message(QueueUrl=res.queue_url, ReceiptHandle=m["ReceiptHandle"])
        return calls, a, b_out, hosts, store.get_meta(META_KEY) or {}


@pytest.mark.parametrize("b_at", [T, T + 60], ids=["same-minute", "next-minute"])
def test_two_ticks_at_once_start_the_round_once_and_send_each_hosts_token_once(b_at: float) -> None:
    motofix.apply()
    # GIVEN one tick alone: the calls it makes on the table and the queue
    calls, alone, _, hosts, record = _two_ticks(None)
    assert "pass" not in alone and alone["sources"] == N_SOURCES and len(hosts) == N_SOURCES
    print(f"a tick alone: {len(calls)} calls ({Counter(calls)})")
    # WHEN a second tick of the same minute runs whole before each of those calls of the first
    for at in range(1, len(calls) + 1):
        _, a, b, hosts, record = _two_ticks(at, b_at)
        assert b is not None, at
        # THEN one of them started the round (the other lost the record's race, or found it started)
        started = [out["rounds"] for out in (a, b) if out.get("rounds")]
        lost = [out for out in (a, b) if out.get("note") == "another tick won"]
        assert len(started) + len(lost) >= 1, (at, a, b)
        # AND every source's host has its token in the queue once, none twice, none missing
        assert len(hosts) == N_SOURCES and set(hosts.values()) == {1}, (at, a, b, Counter(hosts.values()))
        # AND the pass ended, once, with every source counted
        assert record.get("pass") is None and record.get("sources") == N_SOURCES, (at, record)
        assert record.get("queued") == [], (at, record)

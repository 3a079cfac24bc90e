"""The scheduler at scale, on moto: a round of 50,000 sources completes in ticks that each stay
within their invocation's time, and a tick that dies mid-chunk is resumed with every source's
token sent once (the chunk it claimed is sent again with the same token ids, which SQS drops)."""
from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from heed_core.hoststate import TokenOut
from heed_core.profile import load_profile
from heed_core.work import Source

from heed_aws.journal import LogJournal
from heed_aws.operator_store import DynamoOperatorStore
from heed_aws.queue import TokenQueue
from heed_aws.scheduler import RESERVE_S, tick
from heed_aws.store import DynamoStore

from heed.local import motofix

from tests.support.stack import moto_stack

pytestmark = pytest.mark.slow

N_SOURCES = 50_000
BUDGET_S = 20.0  # each tick's invocation time (Lambda's is 60 s: the test cuts it to see several ticks)
T = 1_796_018_400.0  # a quarter hour: AubeBot's rate(15 minutes) fires


class Died(BaseException):
    """The invocation is killed (a timeout, the sandbox gone): nothing after it runs."""


class CountingQueue(TokenQueue):
    """The real queue port, counting every token it sends; ``die_after`` sends kills the invocation."""

    def __init__(self, url: str, client: Any) -> None:
        super().__init__(url, client)
        self.sent: Counter[str] = Counter()
        self.die_after: int | None = None

    def send(self, tokens: Sequence[TokenOut]) -> None:
        for i in range(0, len(tokens), 10):
            if self.die_after is not None:
                if self.die_after <= 0:
                    self.die_after = None
                    raise Died
                self.die_after -= 1
            batch = tokens[i:i + 10]
            super().send(batch)
            self.sent.update(t.tok for t in batch)


def _queued(session: Any, url: str) -> int:
    attrs = session.client("sqs").get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])
    return sum(int(v) for v in attrs["Attributes"].values())


def test_a_round_of_50000_sources_completes_within_each_ticks_budget_and_resumes_after_a_crash() -> None:
    motofix.apply()
    with moto_stack("heed-scale") as (session, res):
        store = DynamoStore(res.table_name, session.client("dynamodb"))
        queue = CountingQueue(res.queue_url, session.client("sqs"))
        # GIVEN 50,000 feeds, each on a host of its own, some already read once (a read-state item)
        sources = [Source(f"feed-{n:06d}", f"https://h{n}.example/feed.xml", "feed") for n in range(N_SOURCES)]
        DynamoOperatorStore(res.table_name, session.client("dynamodb")).put_sources(sources)
        store.write_drained([], [], [(f"feed-{n:06d}", {"last_read": T - 86400}) for n in range(0, N_SOURCES, 7)])
        profile = load_profile("aubebot")
        # WHEN the scheduler ticks every minute, each tick with BUDGET_S of Lambda time, and the
        # second tick dies in the middle of a chunk (after 30 SendMessageBatch calls of it)
        ticks: list[tuple[float, dict[str, Any]]] = []
        died = 0
        for i in range(14):  # (the next round fires at the 15th)
            t0 = time.monotonic()
            deadline = t0 + BUDGET_S
            if i == 1:
                queue.die_after = 30
            try:
                out = tick(profile, store, queue, LogJournal(emit_metrics=False), now=T + 60 * i,
                           remaining_s=lambda d=deadline: d - time.monotonic())
            except Died:
                died += 1
                ticks.append((time.monotonic() - t0, {"died": True}))
                continue
            ticks.append((time.monotonic() - t0, out))
            if "pass" not in out:
                break
        print("ticks:", [(round(spent, 1), out.get("items"), out.get("chunks")) for spent, out in ticks])
        # THEN the round completed, over several ticks, each inside its budget
        assert died == 1
        assert "pass" not in ticks[-1][1] and ticks[-1][1]["sources"] == N_SOURCES, ticks[-1]
        assert len(ticks) >= 3
        assert max(spent for spent, _ in ticks) <= BUDGET_S, [round(s, 1) for s, _ in ticks]
        assert all(spent <= BUDGET_S - RESERVE_S / 2 for spent, out in ticks if "died" not in out)
        # AND every source's host got exactly one token in the queue: the chunk the dead tick had
        # claimed was sent again with the same ids (SQS dropped the repeats), nothing else twice
        tokens = set(queue.sent)
        repeated = {tok for tok, n in queue.sent.items() if n > 1}
        assert 0 < len(repeated) <= 300  # at most the 30 batches the dead tick sent of its chunk
        assert _queued(session, res.queue_url) == len(tokens) == N_SOURCES
        # the first ticks' work and the resumed chunk's: one round, every host
        sqs = session.client("sqs")
        hosts: Counter[str] = Counter()
        for _ in range(3):
            for m in sqs.receive_message(QueueUrl=res.queue_url, MaxNumberOfMessages=10).get("Messages", []):
                body = json.loads(m["Body"])
                hosts[body["host"]] += 1
                assert len(body["items"]) == 1 and body["items"][0]["u"].startswith(body["host"].removesuffix(":443"))
        assert hosts and set(hosts.values()) == {1}

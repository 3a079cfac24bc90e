"""One batch of the embedded queue's messages as the core's batch (``heed_core.service``).

Here the drain is one transaction: the tokens for other hosts, the source fields, the events and
the drain marks land together or not at all (no crash between an event and its mark can repeat
it); the hides are exact (no whole seconds), each longer by the profile's
``politeness.end_stamp_slack_s``; the tokens whose work is done are deleted."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from heed_core.crawl import Crawler
from heed_core.service import MAX_REAL_FAILURES, BatchPorts, Delivery, Hide
from heed_core.service import process_batch as core_batch
from heed_core.store import Journal

from heed_embedded.crawler import LEAD_WHYS, EmbeddedCrawler
from heed_embedded.db import Database
from heed_embedded.queue import Message, WorkQueue
from heed_embedded.results import SqliteResults
from heed_embedded.store import SqliteStore

__all__ = ["MAX_REAL_FAILURES", "Counts", "process_batch"]

Counts = Callable[[str, int], None]  # (what, how many): turns, failures, transient, faults, events
Log = Callable[[str, dict[str, object]], None]  # (event, fields): the engine's JSON log line


class _Observer:
    def __init__(self, count: Counts, log: Log) -> None:
        self._count, self._log = count, log

    def count(self, what: str, n: int = 1) -> None:
        if n:
            self._count(what, n)

    def trouble(self, event: str, fields: Mapping[str, object], exc: BaseException | None = None) -> None:
        self._log("drain" if event in ("drain_fault", "undrained") else event, dict(fields))


class _Hides:
    """A host's token comes back for the gap its turn measured on this machine's clock; the site
    stamps the request's end a little after the bot does (its log line follows its answer, a few
    ms later under load), so every hide is longer by ``slack``. (SQS rounds a hide up to whole
    seconds, which already covers it: the key is this queue's, whose hides are exact.)"""

    def __init__(self, queue: WorkQueue, slack: float, lead: float = 0.0) -> None:
        self.queue, self.slack, self.lead = queue, slack, lead

    def hide_many(self, hides: Sequence[Hide[Message]]) -> None:
        self.queue.hide([(h.msg.receipt, self._seconds(h), h.chain_s) for h in hides])

    def _seconds(self, h: Hide[Message]) -> float:
        if h.seconds <= 0:
            return h.seconds
        seconds = h.seconds + self.slack
        if self.lead and h.why in LEAD_WHYS and seconds > self.lead:
            seconds -= self.lead  # its turn plans for when the host is due, and holds its request until then
        return seconds


def process_batch(msgs: list[Message], crawler: Crawler, queue: WorkQueue, store: SqliteStore,
                  results: SqliteResults, journal: Journal, db: Database, *,
                  count: Counts = lambda what, n: None, log: Log = lambda event, fields: None) -> dict[str, int]:
    """The core's batch over ``msgs`` (its groups one after the other: the caller runs batches
    side by side), then the acknowledgement of every token whose work is done or handed on.
    Returns how many were acknowledged and hidden."""
    deliveries = [Delivery(m, m.group, m.body, m.receives, m.message_id) for m in msgs]
    lead = crawler.lead_s if isinstance(crawler, EmbeddedCrawler) else 0.0
    ports = BatchPorts(_Hides(queue, crawler.p.politeness.end_stamp_slack_s, lead), store, results, queue, journal,
                       _Observer(count, log), drain_scope=lambda: db.unit("drain"))
    outcomes = core_batch(deliveries, crawler, ports)
    done = [o.msg.receipt for o in outcomes if not o.failed]
    queue.delete(done)
    return {"acknowledged": len(done), "hidden": len(outcomes) - len(done)}

"""The webhook on the AWS engine (issue 33): a crawl of local feed sites by the real handlers on moto,
its results put on the bus, the template's rule taking them to the FIFO delivery queue, and the
deliverer function (functions/deliverer, Lambda's event source mapping played by the local
runtime) posting each to a real receiver that verifies every signature with Standard Webhooks'
reference verifier, through an outage. Then the deliverer's own decisions, one record at a time."""
from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from heed_core.profile import load_profile
from heed_core.webhook import Answer, Endpoint
from heed_core.work import Source

from heed_aws.deliverer import STOP_KEY, process_deliveries

from heed.local.runtime import LocalRun

from tests.support.memstore import MemoryStore
from tests.support.receiver import Receiver
from tests.support.serve import FeedWeb, serve_profile

SECRET = "whsec_" + base64.b64encode(b"aws-engine-webhook-key-32-bytes!").decode()


@pytest.fixture
def web() -> Iterator[FeedWeb]:
    w = FeedWeb(2, 4).start(first_ip=27)
    yield w
    w.stop()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver(SECRET).start()
    yield r
    r.stop()


@pytest.mark.slow
def test_the_results_reach_the_receiver_through_the_rule_the_queue_and_the_deliverer(
        web: FeedWeb, receiver: Receiver, tmp_path: Path) -> None:
    # GIVEN a stack with ResultsWebhookUrl set (its rule, queues and deliverer), and a crawl of two feeds
    profile = load_profile(str(serve_profile(tmp_path / "bot.yaml", 0.2)))
    sources = [Source(f"feed{n}", f"{s.base_url}/feed.xml", "feed") for n, s in enumerate(web.servers)]
    now = time.time()
    run = LocalRun(profile, sources, start=now, until=now, out_dir=tmp_path / "out", allow_private=True,
                   webhook=(receiver.url, SECRET))
    run.setup()
    try:
        run.fire(now, ["feed"])
        run.drain()
        # WHEN the receiver is down (503) for the first 2 s of the deliveries
        receiver.fail_for(2.0)
        run.deliver(timeout_s=60)
    finally:
        run.close()
    items = [json.loads(line) for line in (tmp_path / "out" / "items.jsonl").read_text().splitlines()] \
        if (tmp_path / "out" / "items.jsonl").exists() else run.out.items
    # THEN every result the fetcher put on the bus reached the receiver, each signature verified
    found = {str(i["id"]) for i in items}
    assert len(found) == 2 * 4 * 2  # each feed item and each article
    assert set(receiver.accepted()) == found
    assert receiver.bad_signatures == 0
    assert any(d.status == 503 for d in receiver.deliveries)  # the outage was met and outlasted
    # AND each body is the envelope: its id the webhook-id, its type the result's
    sample = next(d for d in receiver.deliveries if d.status == 204)
    env = json.loads(sample.body)
    assert env["id"] == sample.headers["webhook-id"] and env["type"].startswith("heed.")


# --- the deliverer's decisions ---------------------------------------------------------------------

class _Queue:
    def __init__(self) -> None:
        self.hidden: list[tuple[str, float]] = []
        self.dead: list[tuple[str, str]] = []

    def hide(self, receipt: str, seconds: float) -> None:
        self.hidden.append((receipt, seconds))

    def bury(self, body: str, rid: str, why: str, receives: int) -> None:
        self.dead.append((rid, why))


def _record(rid: str, receives: int = 1) -> dict[str, Any]:
    env = {"specversion": "1.0", "id": rid, "type": "heed.item.found", "source": "/heed/b/sources/s", "data": {}}
    return {"messageId": f"m-{rid}", "receiptHandle": f"h-{rid}",
            "attributes": {"ApproximateReceiveCount": str(receives)},
            "body": json.dumps({"detail-type": "item.found", "source": "heed.b", "detail": env})}


def _poster(answers: Mapping[str, int]) -> Any:
    got: list[str] = []

    def post(url: str, body: bytes, headers: Mapping[str, str]) -> Answer:
        got.append(headers["webhook-id"])
        return Answer(answers.get(headers["webhook-id"], 200))
    post.got = got  # type: ignore[attr-defined]
    return post


ENDPOINT = Endpoint("https://app.example.org/hook", b"k" * 32)


def test_a_failed_record_is_hidden_until_its_next_try_and_holds_the_ones_behind_it() -> None:
    q, post = _Queue(), _poster({"b": 503})
    resp = process_deliveries([_record("a"), _record("b"), _record("c")], endpoint=ENDPOINT, post=post, queue=q,
                              store=MemoryStore(), clock=lambda: 1000.0, rand=lambda: 0.5)
    assert post.got == ["a", "b"]
    assert resp == {"batchItemFailures": [{"itemIdentifier": "m-b"}, {"itemIdentifier": "m-c"}]}
    assert q.hidden == [("h-b", 5.0), ("h-c", 0)]  # its first retry in 5 s; the one behind it back at once


def test_a_record_past_the_schedule_goes_to_the_dead_letters_and_the_next_goes_on() -> None:
    q, post = _Queue(), _poster({"a": 503})
    resp = process_deliveries([_record("a", receives=8), _record("b")], endpoint=ENDPOINT, post=post, queue=q,
                              store=MemoryStore(), clock=lambda: 1000.0)
    assert resp == {"batchItemFailures": []} and post.got == ["a", "b"]
    assert q.dead == [("a", "HTTP 503 after 8 tries")]


def test_410_gone_stops_the_endpoint_for_every_batch_after() -> None:
    store = MemoryStore()
    q, post = _Queue(), _poster({"a": 410})
    process_deliveries([_record("a"), _record("b")], endpoint=ENDPOINT, post=post, queue=q, store=store,
                       clock=lambda: 1000.0)
    assert (store.get_meta(STOP_KEY) or {}).get("url") == ENDPOINT.url
    resp = process_deliveries([_record("c")], endpoint=ENDPOINT, post=post, queue=q, store=store, clock=lambda: 1.0)
    assert post.got == ["a"] and resp == {"batchItemFailures": [{"itemIdentifier": "m-c"}]}


def test_a_message_that_is_no_envelope_is_a_dead_letter_not_a_loop() -> None:
    q, post = _Queue(), _poster({})
    bad = {"messageId": "m-x", "receiptHandle": "h-x", "attributes": {}, "body": "{not json"}
    with pytest.raises(ValueError):
        json.loads(bad["body"])
    resp = process_deliveries([{**bad, "body": json.dumps({"detail": {"no": "envelope"}})}, _record("a")],
                              endpoint=ENDPOINT, post=post, queue=q, store=MemoryStore())
    assert resp == {"batchItemFailures": []} and post.got == ["a"] and q.dead[0][1] == "not a result envelope"

"""Results pushed to an application through a crash and an outage (issue 33): `heed serve --webhook`
over a crawl of local feed sites, posting to a real local receiver that verifies every signature
with Standard Webhooks' reference verifier. Mid-crawl the receiver answers 503 for a while, and
`heed serve` is SIGKILLed twice and started again. Judged from the receiver, `heed events`, and
the sites' logs."""
from __future__ import annotations

import base64
import json
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from tests.support.receiver import Receiver
from tests.support.serve import FeedWeb, Serve, serve_profile

GAP = 0.3
HOSTS, ARTICLES = 3, 8
SECRET = "whsec_" + base64.b64encode(b"heed-test-webhook-key-32-bytes!!").decode()


@pytest.fixture
def web() -> Iterator[FeedWeb]:
    w = FeedWeb(HOSTS, ARTICLES, 0.05).start(first_ip=20)
    yield w
    w.stop()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver(SECRET).start()
    yield r
    r.stop()


def _wait_for(what: str, check: object, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _events(state: Path) -> list[dict[str, object]]:
    run = subprocess.run([sys.executable, "-m", "heed.cli", "events", "--state", str(state), "--from-start", "--json"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return [json.loads(line) for line in run.stdout.splitlines()]


@pytest.mark.slow
def test_every_result_reaches_the_receiver_through_two_sigkills_and_an_outage(
        web: FeedWeb, receiver: Receiver, tmp_path: Path) -> None:
    # GIVEN a bot of three feeds of eight short items (each item's article read once), its webhook
    # to a receiver on this machine, the secret in a file
    bot = serve_profile(tmp_path / "bot.yaml", GAP)
    state = tmp_path / "state"
    (tmp_path / "secret").write_text(SECRET + "\n", encoding="utf-8")
    hook = ["--quiet", "--webhook", receiver.url, "--webhook-secret-file", str(tmp_path / "secret")]
    served: list[Serve] = []
    try:
        # WHEN the crawl starts, and after a few deliveries the receiver answers 503 for 2 s
        first = Serve(bot, state, [*hook, "--sources", str(web.sources_file(tmp_path / "sources.yaml"))]).start(0)
        served.append(first)
        first.wait_started()
        _wait_for("a few deliveries", lambda: len(receiver.accepted()) >= 4)
        receiver.fail_for(2.0)
        time.sleep(0.7)
        # AND heed serve is SIGKILLed, started again, and SIGKILLed again once more was delivered
        first.kill()
        second = Serve(bot, state, hook).start(1)
        served.append(second)
        second.wait_started()
        got = len(receiver.accepted())
        _wait_for("a delivery after the restart", lambda: len(receiver.accepted()) > got)
        second.kill()
        # AND once more, to the end of the round's work and its deliveries
        last = Serve(bot, state, [*hook, "--once", "--patience", "10"]).start(2)
        served.append(last)
        assert last.wait(240) == 0, last.text()[-3000:]
    finally:
        for s in served:
            s.stop_group()

    # THEN the receiver's set of webhook-ids is `heed events --from-start`'s ids
    envelopes = _events(state)
    accepted = receiver.accepted()
    assert set(accepted) == {e["id"] for e in envelopes}
    # AND equals what the sites' logs say was found: each feed item, each article read
    log = web.log()
    articles = {f"http://{r.host}{r.path}" for r in log if r.path.startswith("/a/") and r.status == 200}
    listed = {f"http://{s.host}/a/{i}" for s in web.servers for i in range(ARTICLES)}
    assert {(e["type"], e["subject"]) for e in envelopes} == (
        {("heed.item.found", u) for u in listed} | {("heed.article.read", u) for u in articles})
    assert articles == listed
    # AND the outage was met and outlasted (503s, then the same ids accepted)
    refused = {d.id for d in receiver.deliveries if d.status == 503}
    assert refused and refused <= set(accepted)
    # AND at most one duplicate delivery per kill; no signature failed
    repeats = sum(n - 1 for n in Counter(accepted).values())
    assert repeats <= 2, Counter(accepted).most_common(3)
    assert receiver.bad_signatures == 0
    # AND a delivered body changed by one byte fails the reference verification
    sample = next(d for d in receiver.deliveries if d.status == 204)
    headers = {**sample.headers, "webhook-timestamp": sample.headers["webhook-timestamp"]}
    tampered = sample.body.replace(b'"specversion":"1.0"', b'"specversion":"1.1"')
    assert tampered != sample.body
    with pytest.raises(WebhookVerificationError):
        Webhook(SECRET).verify(tampered, headers)

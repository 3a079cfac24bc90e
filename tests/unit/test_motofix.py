"""The local runtime's moto speed fixes change speed only: this fails loudly when moto changes.

``heed.local.motofix`` replaces moto's ``Queue.attributes`` property with one that counts the
messages only when a count is read, reads the clock directly, and stops moto's interception of
``requests``. Each test pins one thing the fix relies on, so a moto upgrade that moves it breaks
here and not as a silent wrong count in a crawl."""
from __future__ import annotations

import boto3
import pytest
import requests
from moto import mock_aws

from heed.local import motofix

REGION = "eu-west-1"


@pytest.fixture()
def sqs():
    with mock_aws():
        motofix.apply()
        yield boto3.client("sqs", region_name=REGION)


def _queue_model(url: str):
    from moto.sqs.models import sqs_backends

    name = url.rsplit("/", 1)[1]
    for backend in sqs_backends.values():
        for region in backend.values():
            if name in region.queues:
                return region.queues[name]
    raise AssertionError(f"no moto queue named {name}")


def test_moto_still_has_what_the_fix_reads():
    from moto.core.models import responses_mock
    from moto.sqs import models

    assert isinstance(models.Queue.__dict__["attributes"], property)
    for name in ("BASE_ATTRIBUTES", "FIFO_ATTRIBUTES", "KMS_ATTRIBUTES"):
        assert isinstance(getattr(models.Queue, name), list), name
    for name, attr in motofix._COUNTS.items():
        assert name in models.Queue.BASE_ATTRIBUTES, name
        assert isinstance(getattr(models.Queue, attr), property), attr
    assert callable(models.unix_time) and callable(models.unix_time_millis)
    assert hasattr(responses_mock, "stop") and hasattr(responses_mock, "start")


def test_apply_is_idempotent_and_keeps_the_original(sqs):
    from moto.sqs import models

    patched = models.Queue.__dict__["attributes"]
    motofix.apply()
    assert models.Queue.__dict__["attributes"] is patched
    assert motofix._original is not None and motofix._original is not patched


@pytest.mark.parametrize("fifo", [True, False])
def test_the_lazy_map_equals_motos_own(sqs, fifo):
    attrs = {"VisibilityTimeout": "30", "DelaySeconds": "0" if fifo else "5"}
    name = "q.fifo" if fifo else "q"
    if fifo:
        attrs |= {"FifoQueue": "true", "ContentBasedDeduplication": "false"}
    url = sqs.create_queue(QueueName=name, Attributes=attrs)["QueueUrl"]
    extra = {"MessageGroupId": "g"} if fifo else {}
    for i in range(4):
        dedup = {"MessageDeduplicationId": f"m{i}"} if fifo else {}
        sqs.send_message(QueueUrl=url, MessageBody=f"b{i}", **extra, **dedup)
    if fifo:
        sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1)
    queue = _queue_model(url)
    ours = queue.attributes
    theirs = motofix._original.fget(queue)
    assert dict(ours) == dict(theirs)
    assert ours.copy() == dict(theirs)
    assert set(ours) == set(theirs) and len(ours) == len(theirs)
    if fifo:
        assert ours["ApproximateNumberOfMessagesNotVisible"] == 1
        assert ours["ApproximateNumberOfMessages"] == 3
    else:
        assert ours["ApproximateNumberOfMessagesDelayed"] == 4


def test_counts_are_computed_only_when_read(sqs, monkeypatch):
    url = sqs.create_queue(QueueName="lazy")["QueueUrl"]
    queue = _queue_model(url)
    counted: list[str] = []
    cls = type(queue)
    for attr in motofix._COUNTS.values():
        original = getattr(cls, attr)

        def spy(self, _original=original, _attr=attr):
            counted.append(_attr)
            return _original.fget(self)

        monkeypatch.setattr(cls, attr, property(spy))
    attributes = queue.attributes
    assert attributes["VisibilityTimeout"] == 30
    assert "ApproximateNumberOfMessages" in attributes
    assert counted == []
    assert attributes["ApproximateNumberOfMessages"] == 0
    assert counted == ["approximate_number_of_messages"]


def test_get_queue_attributes_through_boto3(sqs):
    url = sqs.create_queue(QueueName="w.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    for i in range(3):
        sqs.send_message(QueueUrl=url, MessageBody="x", MessageGroupId=f"g{i}",
                         MessageDeduplicationId=f"d{i}")
    sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=2)
    got = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert got["ApproximateNumberOfMessages"] == "1"
    assert got["ApproximateNumberOfMessagesNotVisible"] == "2"
    assert got["FifoQueue"] == "true"


def test_release_requests_lets_plain_requests_through():
    import http.server
    import threading

    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the stdlib's name)
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with mock_aws():
            motofix.release_requests()
            from moto.core.models import responses_mock

            calls_before = len(responses_mock.calls)
            got = requests.get(f"http://127.0.0.1:{server.server_port}/", timeout=5)
            assert got.text == "ok"
            assert len(responses_mock.calls) == calls_before
    finally:
        server.shutdown()

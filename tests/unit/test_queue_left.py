"""A queue read as empty only when it is: ``heed.local.harness.queue_left`` (the local runtime's
end of a drain and of the webhook's deliveries; tests/support/artifact_round.py reads the same
way), at the very moment a hidden token turns visible.

moto decides a message's visibility against its clock each time it looks: in one
GetQueueAttributes call it counts the visible messages, then the hidden ones. A token whose hide
ends between the two counts is in neither, and a round that asked then ended with its host's work
left (tests/integration/test_deploy_rehearsal.py's round fell short so, in CI, twice). Here moto's
clock is one that ticks a millisecond each time it is read, so the hide's end falls at every
point of the reads in turn."""
from __future__ import annotations

import itertools
from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from heed.local.harness import queue_left

REGION = "eu-west-1"


class TickingClock:
    """moto's ``unix_time_millis``: a millisecond later at each read."""

    def __init__(self, start: float) -> None:
        self.ticks = itertools.count()
        self.start = start

    def __call__(self, *_: object) -> float:
        return self.start + next(self.ticks)


@pytest.fixture
def hidden_token(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[object, str, object]]:
    with mock_aws():
        sqs = boto3.client("sqs", region_name=REGION)
        url = sqs.create_queue(QueueName="work.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="token", MessageGroupId="h", MessageDeduplicationId="1")
        [msg] = sqs.receive_message(QueueUrl=url)["Messages"]
        sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=msg["ReceiptHandle"], VisibilityTimeout=60)
        from moto.sqs import models

        [queue] = models.sqs_backends["123456789012"][REGION].queues.values()
        [message] = queue._messages
        yield sqs, url, (monkeypatch, models, message.visible_at)


def _at(hidden_token: tuple[object, str, object], offset: int) -> None:
    """moto's clock set ``offset`` ms before the token's hide ends, ticking from there."""
    monkeypatch, models, visible_at = hidden_token[2]  # type: ignore[misc]
    monkeypatch.setattr(models, "unix_time_millis", TickingClock(visible_at - offset))  # type: ignore[attr-defined]


def test_a_token_whose_hide_ends_while_the_queue_is_read_is_counted(
        hidden_token: tuple[object, str, object]) -> None:
    # GIVEN a queue whose one token is hidden; its hide ends at each point of the reads in turn
    sqs, url, _ = hidden_token
    counted, one_call = [], []
    for offset in range(-3, 40):
        _at(hidden_token, offset)
        # WHEN the queue's messages are counted
        counted.append(queue_left(sqs, url))
        # (and, beside it, read as both counts of one call)
        _at(hidden_token, offset)
        attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=[  # type: ignore[attr-defined]
            "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])["Attributes"]
        one_call.append(sum(int(v) for v in attrs.values()))
    # THEN the token is counted, whenever its hide ends (twice when it ends between the two reads:
    # the answer is whether anything is left, never how much)
    assert min(counted) >= 1, counted
    # AND read in one call, moto misses it at some point (the race queue_left keeps out of the
    # answer: if a moto upgrade counts both at one instant, the two-call read is no longer needed)
    assert 0 in one_call, one_call


def test_an_empty_queue_is_empty() -> None:
    with mock_aws():
        sqs = boto3.client("sqs", region_name=REGION)
        url = sqs.create_queue(QueueName="work.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
        assert queue_left(sqs, url) == 0
        sqs.send_message(QueueUrl=url, MessageBody="token", MessageGroupId="h", MessageDeduplicationId="1")
        [msg] = sqs.receive_message(QueueUrl=url)["Messages"]
        assert queue_left(sqs, url) == 1
        sqs.delete_message(QueueUrl=url, ReceiptHandle=msg["ReceiptHandle"])
        assert queue_left(sqs, url) == 0

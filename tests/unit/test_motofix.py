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


def test_moto_still_has_what_the_per_call_fixes_replace():
    from moto.core import responses
    from moto.dynamodb.responses import DynamoHandler
    from moto.moto_api._internal.moto_random import MotoRandom
    from moto.sqs import models

    assert callable(responses.method_names_from_class)
    assert callable(DynamoHandler.serialized) and callable(MotoRandom.get_random_string)
    assert callable(models.generate_receipt_handle)
    assert isinstance(models.Queue.__dict__["messages"], property)
    message = models.Message("id", "body")
    for attr in ("visible_at", "delayed_until", "sent_timestamp", "group_id"):
        assert hasattr(message, attr), attr


def _dynamodb_session(client):
    """Every item operation the fast path answers, on items holding every attribute type."""
    client.create_table(TableName="t", BillingMode="PAY_PER_REQUEST",
                        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                   {"AttributeName": "sk", "KeyType": "RANGE"}],
                        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                              {"AttributeName": "sk", "AttributeType": "S"}])
    item = {"pk": {"S": "h#1"}, "sk": {"S": "HOST"}, "blob": {"B": b"\x00\xffzlib"}, "n": {"N": "1.50"},
            "ok": {"BOOL": True}, "none": {"NULL": True}, "l": {"L": [{"S": "a"}, {"N": "2"}]},
            "m": {"M": {"x": {"S": "y"}, "b": {"B": b"\x01"}}}, "ss": {"SS": ["a", "b"]},
            "ns": {"NS": ["1", "2"]}, "bs": {"BS": [b"\x02", b"\x03"]}, "v": {"N": "1"}}
    key = {"pk": item["pk"], "sk": item["sk"]}
    calls = [
        ("put_item", {"TableName": "t", "Item": item, "ReturnConsumedCapacity": "TOTAL"}),
        ("put_item", {"TableName": "t", "Item": {**item, "v": {"N": "2"}}, "ReturnValues": "ALL_OLD",
                      "ConditionExpression": "v = :v", "ExpressionAttributeValues": {":v": {"N": "1"}}}),
        ("get_item", {"TableName": "t", "Key": key, "ConsistentRead": True}),
        ("get_item", {"TableName": "t", "Key": {"pk": {"S": "none"}, "sk": {"S": "HOST"}}}),
        ("batch_get_item", {"RequestItems": {"t": {"Keys": [key, {"pk": {"S": "x"}, "sk": {"S": "y"}}],
                                                   "ConsistentRead": True}}}),
        ("update_item", {"TableName": "t", "Key": key, "UpdateExpression": "SET #c = if_not_exists(#c, :z) + :one",
                         "ExpressionAttributeNames": {"#c": "c"},
                         "ExpressionAttributeValues": {":z": {"N": "0"}, ":one": {"N": "1"}},
                         "ReturnValues": "ALL_NEW"}),
        ("batch_write_item", {"RequestItems": {"t": [{"PutRequest": {"Item": {**item, "sk": {"S": f"U#{i}"}}}}
                                                     for i in range(3)]}}),
        ("query", {"TableName": "t", "KeyConditionExpression": "pk = :p AND begins_with(sk, :u)",
                   "ExpressionAttributeValues": {":p": {"S": "h#1"}, ":u": {"S": "U#"}}, "Limit": 2}),
        ("scan", {"TableName": "t", "Limit": 2}),
        ("transact_write_items", {"TransactItems": [{"Put": {"TableName": "t", "Item": {**item, "sk": {"S": "T"}}}}]}),
        ("transact_get_items", {"TransactItems": [{"Get": {"TableName": "t", "Key": key}}]}),
        ("delete_item", {"TableName": "t", "Key": key, "ReturnValues": "ALL_OLD"}),
    ]
    out = []
    for name, kwargs in calls:
        resp = getattr(client, name)(**kwargs)
        resp.pop("ResponseMetadata", None)
        out.append((name, resp))
    try:
        client.put_item(TableName="t", Item=item, ConditionExpression="attribute_not_exists(pk)")
    except client.exceptions.ConditionalCheckFailedException as exc:
        out.append(("failed", exc.response["Error"]))
    return out


def test_the_fast_dynamodb_answers_parse_as_motos_own(monkeypatch):
    sessions = []
    answered: list[object] = []
    real = motofix._without_none

    def spy(value):
        answered.append(value)
        return real(value)

    monkeypatch.setattr(motofix, "_without_none", spy)  # the fast path's first step
    for fast in (True, False):
        monkeypatch.setattr(motofix, "fast_dynamodb_answers", fast)
        with mock_aws():
            motofix.apply()
            sessions.append(_dynamodb_session(boto3.client("dynamodb", region_name=REGION)))
    assert len(answered) >= 12  # every item operation took the fast path, in the first session only
    fast, slow = sessions
    assert [name for name, _ in fast] == [name for name, _ in slow]
    for (name, a), (_, b) in zip(fast, slow, strict=True):
        assert a == b, name


def test_a_fifo_queue_hands_out_the_longest_waiting_group_first(sqs):
    url = sqs.create_queue(QueueName="fair.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    for g in ("a", "b", "c"):
        sqs.send_message(QueueUrl=url, MessageBody=f"{g}1", MessageGroupId=g, MessageDeduplicationId=f"{g}1")
    sqs.send_message(QueueUrl=url, MessageBody="a2", MessageGroupId="a", MessageDeduplicationId="a2")

    def bodies(n):
        return [m["Body"] for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=n)["Messages"]]

    first = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1)["Messages"][0]
    assert first["Body"] == "a1"
    import time

    time.sleep(0.01)  # a1 comes back later than b1 and c1 were sent
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=first["ReceiptHandle"], VisibilityTimeout=0)
    time.sleep(0.01)
    # moto alone would give a1 a2 b1 again (the earliest sent); the group that waited longest goes first,
    # and within a group the order sent holds.
    assert bodies(10) == ["b1", "c1", "a1", "a2"]


def test_a_condition_is_lexed_once_per_text_and_as_moto_lexes_it():
    from moto.dynamodb.comparisons import ConditionExpressionParser

    motofix.apply()
    texts = ["v = :v", "attribute_not_exists(pk)", "attribute_not_exists(pk) OR version = :v",
             "#a.b[1] <> :x AND (size(#c) >= :n OR begins_with(sk, :p))", "a BETWEEN :lo AND :hi", "x IN (:a, :b)"]
    for text in texts:
        parser = ConditionExpressionParser(text, {"#a": "a", "#c": "c"}, {})
        first, again = parser._lex_condition_expression(), parser._lex_condition_expression()
        assert list(first) == list(again) and first is not again  # a fresh deque each time: parsing consumes it
        assert list(first) == list(ConditionExpressionParser._lex_condition_expression.__wrapped__(parser))
        assert [n.text for n in first] == [t for t in text.replace("(", " ( ").replace(")", " ) ")
                                           .replace(",", " , ").split()]


def test_a_message_copies_as_a_deep_copy_would(sqs):
    import copy

    from moto.sqs import models

    url = sqs.create_queue(QueueName="copy.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="b", MessageGroupId="g", MessageDeduplicationId="d",
                     MessageAttributes={"k": {"DataType": "String", "StringValue": "v"}})
    for _ in range(2):
        handle = sqs.receive_message(QueueUrl=url, MessageAttributeNames=["All"])["Messages"][0]["ReceiptHandle"]
        sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=0)
    (original,) = _queue_model(url)._messages
    ours = copy.deepcopy(original)
    theirs = copy.copy(original)
    theirs.__dict__ = copy.deepcopy(original.__dict__)  # what deepcopy did before the fix
    assert type(ours) is models.Message and ours is not original
    assert ours.__dict__ == theirs.__dict__ == original.__dict__
    assert len(ours._old_receipt_handles) == 2
    ours.message_attributes["k"]["StringValue"] = "changed"
    ours._old_receipt_handles.append("x")
    ours.message_attributes.clear()
    assert original.message_attributes == {"k": {"DataType": "String", "StringValue": "v"}}
    assert len(original._old_receipt_handles) == 2


def test_fifo_deduplication_drops_what_moto_drops_without_comparing_every_message(sqs):
    # moto's own: a repeat of a message still queued within five minutes is dropped; one whose
    # message was deleted is not (the index answers the same, from the few sent under that id)
    from moto.sqs import models

    assert models.Queue.add_message.__wrapped__ is not models.Queue.add_message
    assert hasattr(models, "DEDUPLICATION_TIME_IN_SECONDS") and hasattr(models.Message("i", "b"), "deduplication_id")
    url = sqs.create_queue(QueueName="dedup.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    for n in range(3):
        sqs.send_message(QueueUrl=url, MessageBody=f"x{n}", MessageGroupId="g", MessageDeduplicationId="same")
    sqs.send_message(QueueUrl=url, MessageBody="y", MessageGroupId="g", MessageDeduplicationId="other")
    queue = _queue_model(url)
    assert [m.body for m in queue._messages] == ["x0", "y"]
    (first,) = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1)["Messages"]
    sqs.delete_message(QueueUrl=url, ReceiptHandle=first["ReceiptHandle"])
    sqs.send_message(QueueUrl=url, MessageBody="x3", MessageGroupId="g", MessageDeduplicationId="same")
    assert [m.body for m in queue._messages] == ["y", "x3"]
    # older than the window: taken again, as moto (and SQS) do
    for m in queue._messages:
        m.sent_timestamp -= (models.DEDUPLICATION_TIME_IN_SECONDS + 1) * 1000
    sqs.send_message(QueueUrl=url, MessageBody="y2", MessageGroupId="g", MessageDeduplicationId="other")
    assert [m.body for m in queue._messages] == ["y", "x3", "y2"]


def test_another_moto_is_refused_in_one_line(monkeypatch) -> None:
    import importlib.metadata

    from heed_core.errors import ConfigError

    monkeypatch.setattr(importlib.metadata, "version", lambda name: "5.3.1" if name == "moto" else "0")
    with pytest.raises(ConfigError, match=r"tested on moto>=5\.2\.5,<5\.3, and moto 5\.3\.1 is installed"):
        motofix.check_version()


def test_undo_puts_moto_back_once_the_last_run_is_over() -> None:
    from moto.dynamodb.responses import DynamoHandler
    from moto.sqs import models

    held = motofix._applied  # what the tests before this one applied: taken back first, given again after
    for _ in range(held):
        motofix.undo()
    try:
        shipped = models.Queue.__dict__["attributes"]
        assert "serialized" not in DynamoHandler.__dict__
        motofix.apply()
        motofix.apply()  # a second run beside the first
        assert models.Queue.__dict__["attributes"] is not shipped and "serialized" in DynamoHandler.__dict__
        motofix.undo()
        assert models.Queue.__dict__["attributes"] is not shipped  # the other run still needs them
        motofix.undo()
        # THEN moto is as it ships: its own property, and no attribute it only inherited left set
        assert models.Queue.__dict__["attributes"] is shipped and motofix._undo == []
        assert "serialized" not in DynamoHandler.__dict__
    finally:
        for _ in range(held):
            motofix.apply()

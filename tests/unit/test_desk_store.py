"""The desk's records hold the same rules on both engines (``heed_core.desk.store.DeskStore``):
SQLite in a state directory, DynamoDB in the stack's table (on moto). The secret is made once,
a counter counts, a token is swapped only from the state it was read in (a replay racing the
first use loses), a session ends, the actions come back newest first."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from heed_core.desk.proof import asked, new_token, used
from heed_core.desk.store import DeskAction, Session

from heed_aws.desk import DynamoDeskStore

from heed_embedded.db import Database
from heed_embedded.desk import SqliteDeskStore

T = 1_796_025_600.0


@pytest.fixture(params=["sqlite", "dynamodb"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        db = Database(tmp_path / "heed.db")
        yield SqliteDeskStore(db)
        db.close()
        return
    with mock_aws():
        client = boto3.client("dynamodb", region_name="eu-west-1")
        client.create_table(TableName="t", BillingMode="PAY_PER_REQUEST",
                            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                       {"AttributeName": "sk", "KeyType": "RANGE"}],
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                                  {"AttributeName": "sk", "AttributeType": "S"}])
        yield DynamoDeskStore("t", client)


def test_the_secret_is_made_once(store: Any) -> None:
    first = store.secret(b"a" * 32)
    assert first == b"a" * 32 and store.secret(b"b" * 32) == first


def test_a_counter_counts_per_key(store: Any) -> None:
    assert [store.hit("k1", T + 60) for _ in range(3)] == [1, 2, 3]
    assert store.hit("k2", T + 60) == 1


def test_a_token_is_swapped_only_from_the_state_it_was_read_in(store: Any) -> None:
    _, token = new_token(bytes(24), "https://example.org:443", "http", "b", T)
    store.put_token(token)
    assert store.get_token(token.tid) == token and store.get_token("nope") is None
    first = asked(token, T + 1)
    assert store.swap_token(token, first)
    assert not store.swap_token(token, asked(token, T + 2))  # read before the first swap: loses
    done = used(first, T + 3)
    assert store.swap_token(first, done) and not store.swap_token(first, used(first, T + 4))  # a replay loses
    assert store.get_token(token.tid) == done


def test_a_session_ends(store: Any) -> None:
    s = Session(sid="abc", host="https://example.org:443", name="example.org", port=None, expires=T + 1800,
                proof="file")
    store.put_session(s)
    assert store.get_session("abc", T) == s
    assert store.get_session("abc", T + 1801) is None and store.get_session("other", T) is None


def test_actions_come_back_newest_first(store: Any) -> None:
    for n, kind in enumerate(("slow", "stop", "remove")):
        store.record(DeskAction(kind=kind, name="example.org", at=T + n, client="192.0.2.1", detail={"n": n}))
    assert [(a.kind, dict(a.detail)) for a in store.actions()] == [("remove", {"n": 2}), ("stop", {"n": 1}),
                                                                  ("slow", {"n": 0})]
    assert len(store.actions(limit=1)) == 1

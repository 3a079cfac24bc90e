"""The HostStore contract: one test class run against every backend (MemoryStore, DynamoStore on moto)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import boto3
import pytest
from moto import mock_aws

from heed.local.resources import create_stack_resources
from heed_aws.store import DynamoStore
from heed_core.hoststate import DrainMark, Outbox, TokenOut
from heed_core.store import HostStore
from heed_core.urls import BadUrl
from heed_core.work import Source, UrlRecord, WorkItem
from tests.support.memstore import MemoryStore

ROOT = Path(__file__).resolve().parents[2]
REGION = "eu-west-1"
T0 = 1_709_625_600.0  # 2024-03-05T08:00:00Z
A = "http://a.example:80"
B = "http://b.example:80"


@pytest.fixture(scope="module")
def dynamo_table() -> Iterator[tuple[Any, str]]:
    """One moto table built from template.yaml for the module; each test starts from it empty."""
    with pytest.MonkeyPatch.context() as mp:
        for var in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
            mp.delenv(var, raising=False)
        with mock_aws():
            session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing",
                                            region_name=REGION)
            stack = create_stack_resources(template_path=ROOT / "template.yaml", bot="aubebot", prefix="t",
                                           session=session, region=REGION)
            yield session.client("dynamodb"), stack.table_name


def _wipe(client: Any, table: str) -> None:
    kwargs: dict[str, Any] = {"TableName": table, "ProjectionExpression": "pk, sk"}
    while True:
        page = client.scan(**kwargs)
        for key in page.get("Items", []):
            client.delete_item(TableName=table, Key=key)
        if "LastEvaluatedKey" not in page:
            return
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


@pytest.fixture(params=["memory", "dynamo"])
def store(request: pytest.FixtureRequest) -> HostStore:
    if request.param == "memory":
        return MemoryStore()
    client, table = request.getfixturevalue("dynamo_table")
    _wipe(client, table)
    return DynamoStore(table, client)



def work(url: str) -> WorkItem:
    return WorkItem(url=url, purpose="feed", task="feed", source_id="s1", source_url=url,
                    round_id="2024-03-05T08:00:00Z/feed", round_start=T0)


def _write(store: HostStore, host: str, expected: int, **kw: object) -> bool:
    args: dict[str, object] = {"owner": None, "lease_until": 0.0, "state": {}, "outbox": None, "expires_at": T0 + 86400}
    args.update(kw)
    return store.write_host(host, expected, **args)  # type: ignore[arg-type]


class TestHostStoreContract:
    # --- the host item: one read, one conditional write -----------------------------------------
    def test_a_host_never_seen_reads_as_version_zero(self, store: HostStore) -> None:
        rec = store.read_host(A, aux=("robots",))
        assert (rec.host, rec.version, rec.owner, rec.lease_until) == (A, 0, None, 0.0)
        assert dict(rec.state) == {} and rec.outbox is None and dict(rec.aux) == {}
        assert rec.drained == DrainMark() and rec.blocked is None

    def test_write_is_conditional_on_the_version_read(self, store: HostStore) -> None:
        outbox = Outbox(version=1, events=(("item.found", "r1", {"url": A + "/1"}),),
                        tokens=(TokenOut(B, "t1", (work(B + "/x"),)),), urls=(UrlRecord(A + "/feed", etag='"v"'),),
                        sources=(("s1", {"last_read": T0}),))
        state = {"pace": {"na": T0 + 1.5, "le": T0}, "q": [work(A + "/feed").to_compact()]}
        assert _write(store, A, 0, owner="m1", lease_until=T0 + 60, state=state, outbox=outbox) is True
        rec = store.read_host(A)
        assert (rec.version, rec.owner, rec.lease_until) == (1, "m1", T0 + 60)
        assert dict(rec.state) == state and rec.outbox == outbox
        # COMMON-05: a turn that read an older version loses the race, whatever it writes
        assert _write(store, A, 0, owner="m2") is False
        assert _write(store, A, 2, owner="m2") is False
        assert _write(store, A, 1) is True
        rec = store.read_host(A)
        assert (rec.version, rec.owner, rec.outbox) == (2, None, None)
        assert store.read_host(B).version == 0  # hosts are apart

    def test_aux_records_are_read_only_when_asked_for(self, store: HostStore) -> None:
        store.put_aux(A, "robots", {"stamp": T0, "rec": {"body_z": "x" * 3000}})
        assert store.read_host(A, aux=("robots",)).aux["robots"] == {"stamp": T0, "rec": {"body_z": "x" * 3000}}
        assert dict(store.read_host(A).aux) == {}
        assert dict(store.read_host(B, aux=("robots",)).aux) == {}

    def test_common_08_block_list_covers_the_domain_and_its_subdomains(self, store: HostStore) -> None:
        store.block_domain("A.Example.", "owner asked by mail, 2024-03-01")
        assert store.read_host(A).blocked == "owner asked by mail, 2024-03-01"
        assert store.read_host("https://a.example:443").blocked == "owner asked by mail, 2024-03-01"
        assert store.read_host("http://news.a.example:8080").blocked == "owner asked by mail, 2024-03-01"
        assert store.read_host("http://a.example.org:80").blocked is None
        assert store.read_host("http://nota.example:80").blocked is None
        assert store.read_host(B).blocked is None

    # --- drains: URL records and marks ------------------------------------------------------------
    def test_url_records_and_drain_marks_round_trip(self, store: HostStore) -> None:
        url = A + "/feed.xml"
        assert store.url_records([url]) == {}
        rec = UrlRecord(url=url, etag='"v1"', last_modified="Tue, 05 Mar 2024 07:00:00 GMT",
                        last_fetched=T0 + 0.25, last_status=200, emitted=("e1", "e2"))
        store.write_drained([rec, UrlRecord(B + "/a", content_hash="h")], [(A, DrainMark(3, ("e9",))), (B, DrainMark(7))])
        assert store.url_records([url, A + "/other", B + "/a"]) == {url: rec, B + "/a": UrlRecord(B + "/a", content_hash="h")}
        assert store.read_host(A).drained == DrainMark(3, ("e9",))
        assert store.read_host(B).drained == DrainMark(7)
        store.write_drained([], [(A, DrainMark(4))])
        assert store.read_host(A).drained == DrainMark(4)
        with pytest.raises(BadUrl):
            store.url_records(["mailto:someone@a.example"])

    # --- caps over all hosts (AUBE-10's total) ------------------------------------------------------
    def test_aube_10_take_quota_never_past_the_limit(self, store: HostStore) -> None:
        assert store.take_quota("art#*#7", "w1", 2, 3, T0 + 900) == 2
        assert store.take_quota("art#*#7", "w2", 2, 3, T0 + 900) == 1  # only what is left
        assert store.take_quota("art#*#7", "w3", 1, 3, T0 + 900) == 0
        assert store.take_quota("art#*#8", "w3", 1, 3, T0 + 900) == 1  # another key counts alone

    def test_take_quota_is_idempotent_per_taker(self, store: HostStore) -> None:
        # A turn taken again after a crash (same taker) never takes twice.
        assert store.take_quota("art#*#7", "w1", 2, 5, T0 + 900) == 2
        assert store.take_quota("art#*#7", "w1", 2, 5, T0 + 900) == 2
        assert store.take_quota("art#*#7", "w2", 5, 5, T0 + 900) == 3

    def test_take_quota_with_limit_zero_refuses(self, store: HostStore) -> None:
        assert store.take_quota("agenda#x#r", "w1", 1, 0, T0 + 60) == 0

    # --- sources ------------------------------------------------------------------------------------
    def test_sources_round_trip_list_and_update(self, store: HostStore) -> None:
        s2 = Source(id="feed-2", url=B + "/rss", kind="feed", options={"write_about": True})
        s1 = Source(id="feed-1", url=A + "/rss", kind="feed")
        store.put_source(s2)
        store.put_source(s1)
        assert store.get_source("feed-2") == s2
        assert store.get_source("nope") is None
        assert store.list_sources() == [s1, s2]
        # PRAHA-07: closing a source changes only the fields named (SET, not a rewrite)
        store.update_source("feed-1", {"closed": True, "closed_reason": "http_403: 403 Forbidden", "closed_at": T0})
        store.update_source("feed-1", {"last_read": T0 + 5, "seen_items": ["a", "b"]})
        assert store.get_source("feed-1") == Source(id="feed-1", url=A + "/rss", kind="feed", closed=True,
                                                    closed_reason="http_403: 403 Forbidden", last_read=T0 + 5,
                                                    seen_items=("a", "b"))
        store.update_source("nope", {"closed": True})  # an unknown (or purged) source is not created
        assert store.get_source("nope") is None

    def test_meta_honours_expected_version(self, store: HostStore) -> None:
        assert store.get_meta("tick") is None
        assert store.put_meta("tick", {"version": 1, "last": T0}, expected_version=0) is True  # absent: any
        assert store.put_meta("tick", {"version": 2, "last": T0 + 60}, expected_version=0) is False
        assert store.get_meta("tick") == {"version": 1, "last": T0}
        assert store.put_meta("tick", {"version": 2, "last": T0 + 60}, expected_version=1) is True
        assert store.get_meta("tick") == {"version": 2, "last": T0 + 60}
        assert store.put_meta("tick", {"version": 9}) is True  # no expectation: a plain write
        assert store.get_meta("tick") == {"version": 9}

"""The Store contract: one test class run against every backend (MemoryStore, DynamoStore on moto)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import boto3
import pytest
from moto import mock_aws

from heed.local.resources import create_stack_resources
from heed_aws.store import DynamoStore
from heed_core.politeness import HostState
from heed_core.store import Store
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
def store(request: pytest.FixtureRequest) -> Store:
    if request.param == "memory":
        return MemoryStore()
    client, table = request.getfixturevalue("dynamo_table")
    _wipe(client, table)
    return DynamoStore(table, client)


def _backend(request: pytest.FixtureRequest) -> str:
    return str(request.node.callspec.params["store"])


def work(url: str, *, round_start: float = T0, depth: int = 0, seq: int = 0, hop: int = 0,
         purpose: str = "feed", **kw: Any) -> WorkItem:
    return WorkItem(url=url, purpose=purpose, task="feed", source_id="feed-1", source_url=url,
                    round_id=f"r{int(round_start)}", round_start=round_start, depth=depth, seq=seq, hop=hop, **kw)


class TestStoreContract:
    # --- caches ---------------------------------------------------------------------------
    def test_cache_entry_reads_as_absent_once_expired(self, store: Store) -> None:
        # GIVEN a robots.txt record cached until T0 + 900
        store.put_cached("robots", A, {"v": 1, "status": 200}, expires_at=T0 + 900)
        # THEN it reads back before expiry, and as absent at and after it (DynamoDB deletes late)
        assert store.get_cached("robots", A, T0) == {"v": 1, "status": 200}
        assert store.get_cached("robots", A, T0 + 899.75) == {"v": 1, "status": 200}
        assert store.get_cached("robots", A, T0 + 900) is None
        assert store.get_cached("robots", A, T0 + 5000) is None

    def test_subsidie_10_cache_is_per_kind_and_per_authority(self, store: Store) -> None:
        store.put_cached("robots", A, {"who": "a"}, expires_at=T0 + 60)
        assert store.get_cached("tdmrep", A, T0) is None
        assert store.get_cached("robots", B, T0) is None
        assert store.get_cached("robots", "http://sub.a.example:80", T0) is None

    def test_cached_data_is_a_copy(self, store: Store) -> None:
        store.put_cached("tdmrep", A, {"status": 200, "body": "[]"}, expires_at=T0 + 60)
        got = store.get_cached("tdmrep", A, T0)
        assert got is not None
        got["status"] = 500
        assert store.get_cached("tdmrep", A, T0) == {"status": 200, "body": "[]"}

    # --- host pacing ----------------------------------------------------------------------
    def test_common_05_acquire_refuses_while_a_lease_is_in_force(self, store: Store) -> None:
        # GIVEN a fresh host WHEN one invocation takes it for 60 s
        assert store.get_host(A) == HostState()
        assert store.acquire_host(A, T0, 60.0) is True
        # THEN a second one is refused until the lease runs out, even without a release
        assert store.acquire_host(A, T0 + 1, 60.0) is False
        assert store.acquire_host(A, T0 + 59.5, 60.0) is False
        assert store.get_host(A).in_flight_until == T0 + 60
        assert store.acquire_host(A, T0 + 60, 60.0) is True
        # and another host is not affected
        assert store.acquire_host(B, T0 + 1, 60.0) is True

    def test_aube_09_release_sets_the_gap_from_the_end_of_the_request(self, store: Store) -> None:
        assert store.acquire_host(A, T0, 60.0)
        store.release_host(A, next_allowed=T0 + 2.25, t_end=T0 + 0.75)
        state = store.get_host(A)
        assert (state.in_flight_until, state.next_allowed, state.last_end) == (0.0, T0 + 2.25, T0 + 0.75)
        assert store.acquire_host(A, T0 + 2.0, 60.0) is False
        assert store.acquire_host(A, T0 + 2.25, 60.0) is True

    def test_spring_05_acquire_refuses_while_the_host_is_stopped(self, store: Store) -> None:
        store.stop_host(A, T0 + 3600, "http_429")
        state = store.get_host(A)
        assert (state.stopped_until, state.stop_reason) == (T0 + 3600, "http_429")
        assert store.acquire_host(A, T0 + 3599, 60.0) is False
        assert store.acquire_host(A, T0 + 3600, 60.0) is True
        # a release after the stop keeps the stop (they are separate facts)
        store.stop_host(B, T0 + 3600, "http_403")
        store.release_host(B, next_allowed=T0 + 10, t_end=T0 + 5)
        assert store.get_host(B).stopped_until == T0 + 3600

    def test_subsidie_11_skipped_round_is_remembered(self, store: Store) -> None:
        store.skip_host_round(A, "2024-03-05T07:00:00Z/subsidy")
        assert store.get_host(A).skip_round == "2024-03-05T07:00:00Z/subsidy"
        assert store.get_host(B).skip_round is None

    # --- the frontier -----------------------------------------------------------------------
    def test_add_work_is_idempotent_even_after_completion(self, store: Store) -> None:
        item = work(A + "/feed.xml")
        assert store.add_work(item) is True
        assert store.add_work(item) is False
        assert store.pending_work(A) == [item]
        store.complete_work(item)
        assert store.pending_work(A) == []
        # the done marker refuses the same work again (an at-least-once redelivery of a follow-up)
        assert store.add_work(item) is False
        assert store.pending_work(A) == []
        # the same URL in another round, or after a redirect hop, is other work
        assert store.add_work(work(A + "/feed.xml", round_start=T0 + 900)) is True
        assert store.add_work(work(A + "/feed.xml", hop=1)) is True

    def test_the_same_work_at_another_place_in_the_frontier_is_added_once(self, store: Store) -> None:
        # Two feeds of one round listing the same article: same work id, other seq/depth.
        from dataclasses import replace

        item = work(A + "/article")
        assert store.add_work(item) is True
        assert store.add_work(replace(item, seq=7)) is False
        assert store.add_work(replace(item, depth=2)) is False
        assert store.pending_work(A) == [item]

    def test_pending_work_comes_in_order_key_order(self, store: Store) -> None:
        # GIVEN work added out of order: an older round, shallower work and lower seq come first
        later_round = work(A + "/a", round_start=T0 + 900)
        deep = work(A + "/b", depth=1)
        seq5 = work(A + "/c", seq=5)
        seq2 = work(A + "/d", seq=2)
        for item in (later_round, deep, seq5, seq2):
            assert store.add_work(item)
        # THEN the frontier reads in that order, and `limit` cuts it
        assert [i.url for i in store.pending_work(A)] == [A + "/d", A + "/c", A + "/b", A + "/a"]
        assert [i.url for i in store.pending_work(A, limit=2)] == [A + "/d", A + "/c"]
        assert store.pending_work(A, limit=1) == [seq2]

    def test_update_work_replaces_the_entry(self, store: Store) -> None:
        item = work(A + "/page", purpose="page", ctx={"title_only": True, "lastmod": None})
        store.add_work(item)
        retried = WorkItem.from_dict({**item.to_dict(), "attempts": 1, "not_before": T0 + 600})
        store.update_work(retried)
        assert store.pending_work(A) == [retried]
        store.complete_work(retried)
        assert store.pending_work(A) == []

    def test_subsidie_10_frontier_is_per_authority(self, store: Store) -> None:
        store.add_work(work(A + "/x"))
        store.add_work(work("http://sub.a.example/x"))
        store.add_work(work("https://a.example/x"))
        assert [i.url for i in store.pending_work(A)] == [A + "/x"]
        assert [i.url for i in store.pending_work("http://sub.a.example:80")] == ["http://sub.a.example/x"]
        assert [i.url for i in store.pending_work("https://a.example:443")] == ["https://a.example/x"]
        assert store.pending_work(B) == []

    # --- URLs and sources -------------------------------------------------------------------
    def test_url_records_round_trip(self, store: Store) -> None:
        url = A + "/feed.xml"
        assert store.get_url(url) is None
        rec = UrlRecord(url=url, etag='"v1"', last_modified="Tue, 05 Mar 2024 07:00:00 GMT",
                        last_fetched=T0 + 0.25, last_status=200, last_work_id="w1")
        store.put_url(rec)
        assert store.get_url(url) == rec
        assert store.get_url(A + "/other") is None
        with pytest.raises(BadUrl):
            store.get_url("mailto:someone@a.example")

    def test_sources_round_trip_list_and_update(self, store: Store) -> None:
        s2 = Source(id="feed-2", url=B + "/rss", kind="feed", options={"write_about": True})
        s1 = Source(id="feed-1", url=A + "/rss", kind="feed")
        store.put_source(s2)
        store.put_source(s1)
        assert store.get_source("feed-2") == s2
        assert store.get_source("nope") is None
        assert store.list_sources() == [s1, s2]
        # PRAHA-07: closing a source changes only the fields named
        store.update_source("feed-1", closed=True, closed_reason="http_403: 403 Forbidden")
        closed = store.get_source("feed-1")
        assert closed == Source(id="feed-1", url=A + "/rss", kind="feed", closed=True,
                                closed_reason="http_403: 403 Forbidden")
        store.update_source("nope", closed=True)  # an unknown source is not created
        assert store.get_source("nope") is None

    # --- caps, results, blocks, meta ---------------------------------------------------------
    def test_aube_10_take_quota_refuses_past_the_limit(self, store: Store) -> None:
        assert [store.take_quota("art#feed-1#7", 3, T0 + 900) for _ in range(5)] == [True, True, True, False, False]
        assert store.take_quota("art#feed-2#7", 3, T0 + 900) is True  # another key counts alone

    def test_take_quota_with_limit_zero_refuses(self, store: Store) -> None:
        assert store.take_quota("agenda#x#r", 0, T0 + 60) is False

    def test_put_result_once_is_true_only_once(self, store: Store) -> None:
        assert store.put_result_once("r1", {"kind": "feed_item", "url": A + "/1"}, T0 + 86400) is True
        assert store.put_result_once("r1", {"kind": "feed_item", "url": A + "/1"}, T0 + 86400) is False
        assert store.put_result_once("r1", {"kind": "other"}, T0 + 86400) is False
        assert store.put_result_once("r2", {"kind": "feed_item"}, T0 + 86400) is True

    def test_common_08_block_list_covers_the_domain_and_its_subdomains(self, store: Store) -> None:
        assert store.blocked(A) is None
        store.block_domain("A.Example.", "owner asked by mail, 2024-03-01")
        assert store.blocked(A) == "owner asked by mail, 2024-03-01"
        assert store.blocked("https://a.example:443") == "owner asked by mail, 2024-03-01"
        assert store.blocked("http://news.a.example:8080") == "owner asked by mail, 2024-03-01"
        assert store.blocked("http://a.example.org:80") is None
        assert store.blocked("http://nota.example:80") is None
        assert store.blocked(B) is None

    def test_meta_honours_expected_version(self, store: Store) -> None:
        assert store.get_meta("tick") is None
        assert store.put_meta("tick", {"version": 1, "last": T0}, expected_version=0) is True  # absent: any
        assert store.put_meta("tick", {"version": 2, "last": T0 + 60}, expected_version=0) is False
        assert store.get_meta("tick") == {"version": 1, "last": T0}
        assert store.put_meta("tick", {"version": 2, "last": T0 + 60}, expected_version=1) is True
        assert store.get_meta("tick") == {"version": 2, "last": T0 + 60}
        assert store.put_meta("tick", {"version": 9}) is True  # no expectation: a plain write
        assert store.get_meta("tick") == {"version": 9}

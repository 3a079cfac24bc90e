"""The HostStore and OperatorStore contracts: one test class run against every backend (MemoryStore,
DynamoStore with DynamoOperatorStore on moto, SqliteStore: the embedded engine's, both in one)."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from heed_core.hoststate import DrainMark, HostView, Outbox, TokenOut
from heed_core.store import HostStore
from heed_core.urls import BadUrl
from heed_core.work import Source, UrlRecord, WorkItem

from heed_aws.operator_store import DynamoOperatorStore
from heed_aws.store import DynamoStore

from heed_embedded.db import Database
from heed_embedded.store import SqliteStore

from tests.support.memstore import MemoryStore
from tests.support.stack import moto_stack

T0 = 1_709_625_600.0  # 2024-03-05T08:00:00Z
A = "http://a.example:80"
B = "http://b.example:80"


@pytest.fixture(scope="module")
def dynamo_table() -> Iterator[tuple[Any, str]]:
    """One moto table built from template.yaml for the module; each test starts from it empty."""
    with moto_stack("t") as (session, stack):
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


@pytest.fixture(params=["memory", "dynamo", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> HostStore:
    if request.param == "memory":
        return MemoryStore()
    if request.param == "sqlite":
        return SqliteStore(Database(tmp_path / "heed.db"))
    client, table = request.getfixturevalue("dynamo_table")
    _wipe(client, table)
    return _DynamoBoth(table, client)


class _DynamoBoth(DynamoStore, DynamoOperatorStore):
    """The crawl's adapter and the operator's on one table, as one object: the contract holds
    both to MemoryStore's semantics (each class alone is what the Lambda and the CLI use)."""



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

    def test_a_batch_of_hosts_reads_as_each_host_alone(self, store: HostStore) -> None:
        outbox = Outbox(version=1, events=(("item.found", "r1", {"url": A + "/1"}),))
        assert _write(store, A, 0, owner="m1", lease_until=T0 + 60, state={"pace": {"na": T0}}, outbox=outbox)
        store.put_aux(A, "robots", {"stamp": T0, "rec": {"body_z": "x"}})
        store.block_domain("b.example", "asked")
        hosts = [f"http://h{i}.example:80" for i in range(30)] + [A, B, A]  # beyond one BatchGetItem's 100 keys
        got = store.read_turn_hosts(hosts, aux=("robots",))
        assert list(got) == list(dict.fromkeys(hosts))
        for host in hosts:
            assert got[host] == store.read_host(host, aux=("robots",)), host
        assert got[A].outbox == outbox and got[A].aux["robots"]["stamp"] == T0 and got[B].blocked == "asked"
        assert store.read_turn_hosts([], aux=("robots",)) == {}

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
        other = UrlRecord(B + "/a", content_hash="h")
        store.write_drained([rec, other], [(A, DrainMark(3, ("e9",))), (B, DrainMark(7))])
        assert store.url_records([url, A + "/other", B + "/a"]) == {url: rec, B + "/a": other}
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

    # --- AUBE-11: requests in flight over all hosts, as slots ----------------------------------------
    def test_aube_11_one_slot_is_one_holders_until_it_is_released(self, store: HostStore) -> None:
        # GIVEN one slot (max_in_flight 1), taken by a request to a.example
        assert store.take_slot(1, "req-a", T0 + 60, T0) == 0
        # WHEN a request to b.example asks while it is held, THEN it gets none
        assert store.take_slot(1, "req-b", T0 + 61, T0 + 1) is None
        # AND the holder asking again holds the same slot (a take repeated is no second slot)
        assert store.take_slot(1, "req-a", T0 + 62, T0 + 2) == 0
        # WHEN another holder releases it, nothing changes; WHEN its holder does, THEN it is free
        store.release_slot(0, "req-b")
        assert store.take_slot(1, "req-b", T0 + 63, T0 + 3) is None
        store.release_slot(0, "req-a")
        assert store.take_slot(1, "req-b", T0 + 64, T0 + 4) == 0

    def test_aube_11_a_slot_whose_holder_died_is_free_once_its_deadline_passed(self, store: HostStore) -> None:
        # GIVEN a slot held until T0 + 60 by a request whose process died (never released)
        assert store.take_slot(1, "dead", T0 + 60, T0) == 0
        # THEN it is held up to its deadline, and free from then on
        assert store.take_slot(1, "next", T0 + 119, T0 + 59) is None
        assert store.take_slot(1, "next", T0 + 120, T0 + 60) == 0
        # AND the dead holder's late release takes nothing from the new one
        store.release_slot(0, "dead")
        assert store.take_slot(1, "third", T0 + 121, T0 + 61) is None

    def test_aube_11_n_slots_hold_n_requests_at_once_over_all_hosts(self, store: HostStore) -> None:
        taken = [store.take_slot(3, f"req-{i}", T0 + 60, T0) for i in range(4)]
        assert sorted(t for t in taken if t is not None) == [0, 1, 2] and taken.count(None) == 1
        store.release_slot(taken[0], "req-0")  # type: ignore[arg-type]
        assert store.take_slot(3, "req-4", T0 + 60, T0 + 1) == taken[0]

    # --- sources ------------------------------------------------------------------------------------
    def test_source_pages_walk_every_source_once_in_id_order_and_a_chunk_reads_again(self, store: HostStore) -> None:
        # GIVEN 7 sources, some with a read-state (its own item in DynamoDB, right after the source)
        sources = [Source(id=f"feed-{n}", url=f"{A}/{n}.xml", kind="feed") for n in range(7)]
        for src in sources:
            store.put_source(src)
        for n in (1, 2, 5, 6):
            store.update_source(f"feed-{n}", {"last_read": T0 + n})
        for limit in (2, 3, 5, 100):
            # WHEN the scheduler walks them page by page
            seen: list[Source] = []
            cuts: list[tuple[str | None, str | None]] = []
            after: str | None = None
            while True:
                page, nxt = store.source_page(after, limit)
                assert page or nxt is None, limit  # a page is never empty while sources are left
                seen += page
                cuts.append((after, nxt))
                if nxt is None:
                    break
                after = nxt
            # THEN each source comes once, in id order, with its read-state merged
            assert [s.id for s in seen] == [s.id for s in sources], limit
            assert [s.last_read for s in seen] == [None, T0 + 1, T0 + 2, None, None, T0 + 5, T0 + 6], limit
            # AND a chunk read again between two cuts holds the same sources as the first time
            for start, end in cuts[:-1]:
                again, done = store.source_page(start, limit, upto=end)
                first, _ = store.source_page(start, limit)
                assert done is None and [s.id for s in again] == [s.id for s in first], (limit, start, end)

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


# --- the operator's calls (heed sources, block, purge): the same semantics on both backends ---------

N = "http://news.a.example:80"
OTHER = "http://a.example.org:80"


class TestOperatorContract:
    def test_common_08_a_hosts_first_write_indexes_it_under_its_registrable_domain(self, store: Any) -> None:
        for host in (A, N, "https://a.example:443", OTHER, B, "http://127.0.0.9:8080"):
            assert _write(store, host, 0) is True
        assert _write(store, A, 1) is True  # later writes add nothing
        assert store.domain_hosts("a.example") == sorted([A, N, "https://a.example:443"])
        assert store.domain_hosts("news.a.example") == [N]  # a subdomain: only what is below it
        assert store.domain_hosts("a.example.org") == [OTHER]
        assert store.domain_hosts("127.0.0.9") == ["http://127.0.0.9:8080"]
        assert store.domain_hosts("nothing.example") == []
        store.unindex_hosts("a.example", [N])
        assert store.domain_hosts("a.example") == sorted([A, "https://a.example:443"])
        store.unindex_hosts("a.example", [A, "https://a.example:443"])
        assert store.domain_hosts("a.example") == [] and store.domain_hosts("b.example") == [B]

    def test_host_items_are_the_whole_partition_and_delete_by_key(self, store: Any) -> None:
        assert _write(store, A, 0, state={"pace": {"na": T0}}) is True
        store.put_aux(A, "robots", {"stamp": T0})
        store.write_drained([UrlRecord(A + "/feed"), UrlRecord(A + "/x"), UrlRecord(B + "/y")], [(A, DrainMark(1))])
        items = store.host_items(A)
        assert sorted(sk for sk, _ in items if not sk.startswith("U#")) == ["AUX#robots", "DRAIN", "HOST"]
        assert sorted(u for sk, u in items if sk.startswith("U#")) == [A + "/feed", A + "/x"]
        assert store.delete_host_items(A, [sk for sk, _ in items]) == 5
        assert store.host_items(A) == [] and store.read_host(A).version == 0
        assert store.get_url(B + "/y") is not None  # another host is untouched
        assert B in store.all_hosts() and A not in store.all_hosts()

    def test_update_host_state_is_conditional_and_keeps_the_lease_and_outbox(self, store: Any) -> None:
        outbox = Outbox(version=1, sources=(("s1", {"last_read": T0}),))
        assert _write(store, A, 0, owner="m1", lease_until=T0 + 60, state={"cls": {"s1": "x"}}, outbox=outbox)
        assert store.update_host_state(A, 0, {"cls": {}}) is False  # a turn committed meanwhile
        assert store.update_host_state(A, 1, {"pace": {"na": T0}}) is True
        rec = store.read_host(A)
        assert (rec.version, rec.owner, rec.lease_until, rec.outbox) == (2, "m1", T0 + 60, outbox)
        assert dict(rec.state) == {"pace": {"na": T0}}
        assert store.update_host_state(B, 0, {}) is False  # never creates a host
        assert store.read_host(B).version == 0

    def test_read_hosts_in_one_batch(self, store: Any) -> None:
        assert _write(store, A, 0, state={"cls": {"s1": "why"}})
        store.block_domain("a.example", "asked")
        got = store.read_hosts([A, B, A])
        assert list(got) == [A] and got[A].version == 1 and dict(got[A].state) == {"cls": {"s1": "why"}}
        assert got[A].blocked == "asked"

    def test_source_details_definition_update_reopen_and_delete(self, store: Any) -> None:
        store.put_sources([Source(id="f1", url=A + "/rss", kind="feed"), Source(id="f2", url=B + "/rss", kind="feed")])
        store.update_source("f1", {"closed": True, "closed_reason": "http_403: 403 Forbidden", "closed_at": T0})
        store.write_drained([], [], [("f1", {"last_read": T0 + 5, "seen_items": ["a"], "last_status": 403})])
        details = dict((s.id, (s, extra)) for s, extra in store.source_details())
        src, extra = details["f1"]
        assert (src.closed, src.closed_reason, src.last_read, src.seen_items) == (True, "http_403: 403 Forbidden",
                                                                                  T0 + 5, ("a",))
        assert extra == {"closed_at": T0, "last_status": 403}
        assert details["f2"][1] == {"closed_at": None, "last_status": None}
        # an import of a changed definition keeps what the crawl learnt
        atom = Source(id="f1", url=A + "/atom", kind="feed", options={"write_about": True})
        assert store.update_source_definition(atom)
        assert store.update_source_definition(Source(id="nope", url=A, kind="feed")) is False
        src = store.get_source("f1")
        assert (src.url, dict(src.options), src.closed, src.last_read) == (A + "/atom", {"write_about": True}, True,
                                                                           T0 + 5)
        assert store.reopen_source("f1") is True and store.reopen_source("nope") is False
        src, extra = dict((s.id, (s, e)) for s, e in store.source_details())["f1"]
        assert (src.closed, src.closed_reason, extra["closed_at"]) == (False, None, None)
        store.delete_source("f1")
        assert store.get_source("f1") is None and [s.id for s in store.list_sources()] == ["f2"]

    def test_common_08_blocks_remember_when_and_lift(self, store: Any) -> None:
        store.block("A.example.", "mail of 2024-03-01", T0)
        store.block_domain("b.example", "old style")
        assert store.block_list() == [("a.example", "mail of 2024-03-01", T0), ("b.example", "old style", None)]
        assert store.read_host(N).blocked == "mail of 2024-03-01"
        assert store.unblock_domain("a.example") is True and store.unblock_domain("a.example") is False
        assert store.read_host(N).blocked is None
        assert store.block_list() == [("b.example", "old style", None)]


class TestOperatorOnBothStores:
    """heed.operator.actions's functions, on either backend."""

    def test_common_08_purge_deletes_the_domain_by_key_and_nothing_else(self, store: Any) -> None:
        from heed.operator.actions import last_purges, purge_domain

        for host in (A, N, B):
            assert _write(store, host, 0, state={"q": [work(host + "/feed").to_compact()]})
            store.put_aux(host, "robots", {"stamp": T0})
        store.write_drained([UrlRecord(A + "/1"), UrlRecord(N + "/2"), UrlRecord(B + "/3")], [(A, DrainMark(1))])
        store.put_sources([Source(id="a", url=A + "/rss", kind="feed"), Source(id="b", url=B + "/rss", kind="feed")])
        store.write_drained([], [], [("a", {"last_read": T0})])
        dry = purge_domain(store, "a.example", dry_run=True, record=True, now=T0)
        assert (dry.state_items, dry.url_records, dry.sources, dry.hosts) == (7, 2, 1, (A, N))
        assert store.get_url(A + "/1") is not None and last_purges(store, "a.example") == []
        report = purge_domain(store, "a.example", record=True, now=T0)
        assert (report.state_items, report.url_records, report.sources) == (7, 2, 1)
        assert store.host_items(A) == [] and store.host_items(N) == [] and store.domain_hosts("a.example") == []
        assert [s.id for s in store.list_sources()] == ["b"]
        assert len(store.host_items(B)) == 3 and store.get_url(B + "/3") is not None
        assert store.domain_hosts("b.example") == [B]
        # run again: nothing left to delete, and both purges are on record
        again = purge_domain(store, "a.example", record=True, now=T0 + 60)
        assert (again.state_items, again.sources) == (0, 0)
        assert [(p["at"], p["state_items"]) for p in last_purges(store, "a.example")] == [(T0, 7), (T0 + 60, 0)]

    def test_common_08_purge_scan_finds_hosts_stored_before_the_index(self, store: Any) -> None:
        from heed.operator.actions import purge_domain

        assert _write(store, N, 0) and _write(store, B, 0)
        store.unindex_hosts("a.example", [N])  # as if written before the domain index existed
        assert purge_domain(store, "a.example", now=T0).hosts == ()
        report = purge_domain(store, "a.example", scan=True, now=T0)
        assert report.hosts == (N,) and store.read_host(N).version == 0 and store.read_host(B).version == 1

    def test_praha_09_reopen_and_remove_change_the_source_and_its_hosts(self, store: Any) -> None:
        from heed.operator.actions import import_sources, remove_source, reopen_source

        state = {"pace": {"na": T0, "le": T0, "su": T0 + 3600, "sr": "http_403"},
                 "cls": {"f1": "http_403: 403 Forbidden", "f9": "x"}}
        assert _write(store, A, 0, state=state)
        store.put_source(Source(id="f1", url=A + "/rss", kind="feed"))
        store.update_source("f1", {"closed": True, "closed_reason": "http_403: 403 Forbidden", "closed_at": T0})
        done = reopen_source(store, "f1", T0 + 10)
        assert done and done["hosts_cleared"] == [A] and done["stops_lifted"] == [A]
        view = HostView.from_record(store.read_host(A))
        assert view.closed == {"f9": "x"} and view.pacing.stopped_until == 0.0
        assert store.get_source("f1").closed is False
        assert reopen_source(store, "nope", T0) is None
        gone = remove_source(store, "f1", T0 + 20)
        assert gone and gone["hosts_closed"] == [A] and store.get_source("f1") is None
        assert HostView.from_record(store.read_host(A)).closed["f1"] == "removed by the operator"
        # added again: the removal mark goes
        report = import_sources(store, [Source(id="f1", url=A + "/rss", kind="feed")], T0 + 30)
        assert report.added == ["f1"] and report.hosts_cleared == [A]
        assert "f1" not in HostView.from_record(store.read_host(A)).closed
        again = import_sources(store, [Source(id="f1", url=A + "/rss", kind="feed")], T0 + 40)
        assert (again.added, again.unchanged) == ([], ["f1"])

"""Operator tools on a bot's state: sources added, imported, removed and reopened; domains
blocked and purged (COMMON-08, SUBSIDIE-13, PRAHA-09). Every call is by key.

The functions work on any store with ``heed_core.store.OperatorStore``'s methods (DynamoStore, and the tests'
MemoryStore, which the store contract holds to the same semantics). A change to a host's state
(a source closed or reopened there) is a read-modify-write on the host item's version, retried
when a host turn commits in between, so neither the turn's commit nor the operator's is lost."""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from heed_core.errors import TransientError
from heed_core.hoststate import HostRecord, HostView
from heed_core.store import OperatorStore, TextBucket
from heed_core.tasks import stored_keys
from heed_core.urls import BadUrl, authority, in_domain
from heed_core.work import Source

from heed_aws.domains import registrable_domain

__all__ = ["ImportReport", "OperatorStore", "PurgeReport", "TurnWait", "close_on_hosts", "entry_hosts",
           "import_sources", "list_blocks", "purge_domain", "remove_source", "reopen_source", "set_floor", "unblock"]

HOST_TTL_S = 30 * 86400.0  # as the crawl writes a host's item (heed_core.crawl.HOST_ITEM_TTL_S)
RACE_TRIES = 8
MAX_CLAIM_S = 900.0  # a claim for a request never outlasts a Lambda invocation (15 minutes)
POLL_S = 0.1
REMOVED = "removed by the operator"
Progress = Callable[[int, int, str], None]  # (done, total, what)


# --- host state: a source closed or reopened on its hosts --------------------------------------

def entry_hosts(source: Source) -> list[str]:
    """The hosts a source's rounds start on: its URL's, and those of the sitemaps it names."""
    urls = [source.url, *[u for u in (source.options.get("sitemaps") or []) if isinstance(u, str)]]
    out: list[str] = []
    for url in urls:
        try:
            host = authority(url)
        except BadUrl:
            continue
        if host not in out:
            out.append(host)
    return out


def _in_flight(rec: HostRecord, now: float) -> bool:
    """A turn may be between its claim and its commit: the host is owned, the lease is a claim's
    (short), and the gap allowed a request (COMMON-05: none can be in flight while it runs)."""
    pace = (rec.state.get("pace") or {})
    return bool(rec.owner) and now < rec.lease_until <= now + MAX_CLAIM_S and float(pace.get("na", 0.0)) <= now


@dataclass
class TurnWait:
    """How long an operator's change waits for a turn in flight to commit (0: not at all)."""

    max_s: float = 0.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic


def _change_host(store: OperatorStore, host: str, change: Callable[[HostView], bool], now: float,
                 wait: TurnWait | None = None) -> bool:
    """Apply ``change`` to the host's view and write it on the version read; True if written.
    A host never seen is left alone (no work is queued there). With ``wait``, a turn that may
    have a request in flight is let commit first: the operator's write would make its commit
    lose, and the request's pacing with it (the turn is redone; COMMON-05 counts from the
    request that was lost). The write lands in the gap after a commit."""
    wait = wait or TurnWait()
    start = wait.clock()
    for _ in range(RACE_TRIES):
        rec = store.read_hosts([host]).get(host)
        while rec is not None and wait.max_s > 0 and _in_flight(rec, now + wait.clock() - start):
            if wait.clock() - start > wait.max_s:
                raise TransientError(f"{host}: a turn held it for {wait.max_s:g} s; try again")
            wait.sleep(POLL_S)
            rec = store.read_hosts([host]).get(host)
        if rec is None:
            return False
        view = HostView.from_record(rec)
        if not change(view):
            return False
        if store.update_host_state(host, rec.version, view.state_blob(now + wait.clock() - start)):
            return True
    raise TransientError(f"{host}: its item kept changing ({RACE_TRIES} tries); try again")


PURGE_WAIT_S = 40.0  # a purge waits this long for a turn in flight, and for its drain (DRAIN_LEASE_S)


def _wait_for_the_drain(store: OperatorStore, host: str, now: float, wait: TurnWait) -> None:
    """Until no turn of ``host`` is in flight or draining what it committed: a drain that began
    before the purge would write the host's drain mark and URL records after it."""
    start = wait.clock()
    while True:
        rec = store.read_hosts([host]).get(host)
        at = now + wait.clock() - start
        if rec is None:
            return
        view = HostView.from_record(rec)
        if not (_in_flight(rec, at) or (view.undrained() and view.drain_until > at)):
            return
        if wait.clock() - start > wait.max_s:
            raise TransientError(f"{host}: a turn held it for {wait.max_s:g} s; try again")
        wait.sleep(POLL_S)


def close_on_hosts(store: OperatorStore, source_id: str, hosts: Iterable[str], reason: str, now: float,
                   wait: TurnWait | None = None) -> list[str]:
    """PRAHA-09: mark the source closed on these hosts, so work already queued there stops."""
    def close(view: HostView) -> bool:
        if view.closed.get(source_id) == reason:
            return False
        view.closed[source_id] = reason
        return True
    return [h for h in hosts if _change_host(store, h, close, now, wait)]


def clear_on_hosts(store: OperatorStore, source_id: str, hosts: Iterable[str], now: float,
                   *, lift_stop: bool = True, wait: TurnWait | None = None) -> tuple[list[str], list[str]]:
    """Clear the source's closed mark on these hosts; where the host was stopped by the very
    answer that closed the source (PRAHA-07: a 403 closes it and stops the host for the day),
    the stop is lifted too. Returns (hosts cleared, hosts whose stop was lifted)."""
    lifted: list[str] = []

    def clear(view: HostView) -> bool:
        why = view.closed.pop(source_id, None)
        if why is None:
            return False
        pace = view.pacing
        if lift_stop and pace.stopped_until > now and pace.stop_reason and why.startswith(f"{pace.stop_reason}:"):
            view.pacing = replace(pace, stopped_until=0.0, stop_reason=None)
            lifted.append(view.host)
        return True
    cleared = [h for h in hosts if _change_host(store, h, clear, now, wait)]
    return cleared, [h for h in lifted if h in cleared]


def set_floor(store: OperatorStore, hosts: Iterable[str], floor_s: float, now: float,
              wait: TurnWait | None = None) -> list[str]:
    """A slower pace for these hosts alone (a site owner asked on the desk): no gap below
    ``floor_s`` from their next request on (``heed_core.politeness``: a floor under the bot's own
    gap, never faster); 0 lifts it. Returns the hosts whose state changed (a host never seen has
    no state to change)."""
    def floor(view: HostView) -> bool:
        if view.pacing.floor_s == floor_s:
            return False
        view.pacing = replace(view.pacing, floor_s=floor_s)
        return True
    return [h for h in hosts if _change_host(store, h, floor, now, wait)]


def _hosts_of(store: OperatorStore, source: Source) -> list[str]:
    """Where a source may be closed: its entry hosts and every indexed host of their domains."""
    hosts = entry_hosts(source)
    for host in list(hosts):
        hosts += [h for h in store.domain_hosts(registrable_domain(host)) if h not in hosts]
    return hosts


def reopen_source(store: OperatorStore, source_id: str, now: float,
                  wait: TurnWait | None = None) -> dict[str, Any] | None:
    """The source fetches again in the next round: its closed fields cleared, and its closed
    mark on the hosts it runs on. None if there is no such source."""
    src = store.get_source(source_id)
    if src is None:
        return None
    cleared, lifted = clear_on_hosts(store, source_id, _hosts_of(store, src), now, wait=wait)
    store.reopen_source(source_id)
    return {"source": source_id, "url": src.url, "was_closed": src.closed, "closed_reason": src.closed_reason,
            "hosts_cleared": cleared, "stops_lifted": lifted}


def remove_source(store: OperatorStore, source_id: str, now: float,
                  wait: TurnWait | None = None) -> dict[str, Any] | None:
    """PRAHA-09: a source removed by hand: closed on its hosts (queued work stops), then deleted
    with its read-state. None if there is no such source."""
    src = store.get_source(source_id)
    if src is None:
        return None
    closed = close_on_hosts(store, source_id, entry_hosts(src), REMOVED, now, wait)
    store.delete_source(source_id)
    return {"source": source_id, "url": src.url, "hosts_closed": closed}


@dataclass
class ImportReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    hosts_cleared: list[str] = field(default_factory=list)  # a removed source added again

    def counts(self) -> dict[str, int]:
        return {"added": len(self.added), "updated": len(self.updated), "unchanged": len(self.unchanged)}


def import_sources(store: OperatorStore, sources: Sequence[Source], now: float, *,
                   progress: Progress | None = None, chunk: int = 25, wait: TurnWait | None = None) -> ImportReport:
    """Add sources, idempotently: a new one is put, one whose url, kind or options changed is
    updated keeping what the crawl learnt of it (last read, closed, seen items), an unchanged
    one is left alone. A source removed before and added again is cleared of its removal mark."""
    report = ImportReport()
    known = {s.id: s for s in store.list_sources()}
    new: list[Source] = []
    changed: list[Source] = []
    for src in sources:
        old = known.get(src.id)
        if old is None:
            new.append(src)
        elif (old.url, old.kind, dict(old.options)) != (src.url, src.kind, dict(src.options)):
            changed.append(src)
        else:
            report.unchanged.append(src.id)
    total = len(new) + len(changed)
    done = 0
    for start in range(0, len(new), chunk):
        part = new[start:start + chunk]
        store.put_sources(part)
        report.added += [s.id for s in part]
        done += len(part)
        if progress:
            progress(done, total, "sources written")
    for src in changed:
        store.update_source_definition(src)
        report.updated.append(src.id)
        done += 1
        if progress and (done % chunk == 0 or done == total):
            progress(done, total, "sources written")
    if new:
        # Batched reads of the new sources' entry hosts: only a host that holds a removal mark is written.
        by_host: dict[str, list[str]] = {}
        for src in new:
            for host in entry_hosts(src):
                by_host.setdefault(host, []).append(src.id)
        hosts = list(by_host)
        for start in range(0, len(hosts), 50):
            for host, rec in store.read_hosts(hosts[start:start + 50]).items():
                closed = (rec.state.get("cls") or {})
                ids = [i for i in by_host[host] if str(closed.get(i, "")).startswith(REMOVED)]
                for sid in ids:
                    cleared, _ = clear_on_hosts(store, sid, [host], now, lift_stop=False, wait=wait)
                    report.hosts_cleared += cleared
    return report


# --- purge: everything stored from a domain ---------------------------------------------------

@dataclass(frozen=True)
class PurgeReport:
    domain: str
    # items of the domain's host partitions: host state, robots/tdmrep caches, drain marks, URL records
    state_items: int
    sources: int
    results: int  # events already on the bus are the consumers' (never counted here)
    objects: int  # page text versions in the bucket
    hosts: tuple[str, ...] = ()
    url_records: int = 0
    dry_run: bool = False
    at: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["hosts"] = list(self.hosts)
        return d


def purge_key(domain: str) -> str:
    return f"PURGE#{domain.lower().strip('.')}"


def purge_domain(store: OperatorStore, domain: str, *, s3: Any = None, bucket: str | None = None,
                 texts: TextBucket | None = None, keep_block: bool = True, dry_run: bool = False,
                 scan: bool = False, record: bool = False, now: float = 0.0,
                 progress: Progress | None = None, wait: TurnWait | None = None) -> PurgeReport:
    """COMMON-08 / SUBSIDIE-13: delete everything stored from ``domain`` and its subdomains: each
    host's partition (host state with its frontier, robots.txt and tdmrep.json caches, drain
    marks, URL records), the domain's sources and their read-state, and the page texts kept in
    the bucket (every version). The hosts come from the domain index (by key); ``scan`` also
    Scans the table, for hosts written before the index existed. Nothing of another domain is
    touched. The block list entry stays (the stop holds). A purge mark goes first where every turn
    reads it (work made before ``now`` for the domain is dropped, never stored again), and each
    host is deleted only once no turn is between its claim and its commit, or draining what it
    committed (``wait``: how long to wait for that; then ``TransientError``, try again). ``record`` writes a tombstone
    (``META`` / ``PURGE#<domain>``: when, and what was deleted), so a purge is auditable; run
    again, it finds nothing and records that too. ``dry_run`` counts and deletes nothing."""
    name = domain.lower().strip(".")
    if texts is None and s3 is not None and bucket:
        from heed_aws.operator_store import S3Texts  # the deployed stack's bucket: not on serve's path

        texts = S3Texts(s3, bucket)
    if not dry_run:
        # First the tombstone every turn reads with its host (the block list's item): work made
        # before it stores nothing again, wherever it is queued (COMMON-08: a purge stays purged).
        store.mark_purged(name, now or time.time())
    sources = [s for s in store.list_sources() if in_domain(s.url, [name])]
    hosts = list(store.domain_hosts(name))
    if scan:
        hosts += [h for h in store.all_hosts() if in_domain(h, [name])]
    for src in sources:
        hosts += [h for h in entry_hosts(src) if in_domain(h, [name])]
    hosts = sorted(set(hosts))
    state = records = objects = 0
    keys: set[str] = set()
    for i, host in enumerate(hosts):
        if not dry_run:
            _wait_for_the_drain(store, host, now or time.time(), wait or TurnWait(max_s=PURGE_WAIT_S))
        items = store.host_items(host)
        for sk, url in items:
            if sk.startswith("U#"):
                records += 1
                if url:
                    keys |= set(stored_keys(url))
        state += len(items)
        if items and not dry_run:
            store.delete_host_items(host, [sk for sk, _ in items])
        if progress:
            progress(i + 1, len(hosts), f"hosts ({state} items)")
    if texts is not None:
        ordered = sorted(keys)
        for i, key in enumerate(ordered):
            versions = texts.versions(key)
            objects += len(versions)
            if not dry_run:
                for version in versions:
                    texts.delete_version(key, version)
            if progress and ((i + 1) % 50 == 0 or i + 1 == len(ordered)):
                progress(i + 1, len(ordered), f"page texts ({objects} versions)")
    if not dry_run:
        for src in sources:
            store.delete_source(src.id)
        store.unindex_hosts(name, hosts)
        if not keep_block:
            store.unblock_domain(name)
    report = PurgeReport(name, state, len(sources), 0, objects, tuple(hosts), records, dry_run, now)
    if record and not dry_run:
        _tombstone(store, report)
    return report


def _tombstone(store: OperatorStore, report: PurgeReport) -> None:
    entry = {k: v for k, v in report.to_dict().items() if k not in ("domain", "hosts", "dry_run", "results")}
    entry["hosts"] = len(report.hosts)
    for _ in range(RACE_TRIES):
        old = store.get_meta(purge_key(report.domain))
        version = int(old["version"]) if old else 0
        value = {"domain": report.domain, "version": version + 1,
                 "purges": [*((old or {}).get("purges") or [])[-49:], entry]}
        if store.put_meta(purge_key(report.domain), value, expected_version=version if old else 0):
            return
    raise TransientError(f"purge record of {report.domain} kept changing; try again")


def last_purges(store: OperatorStore, domain: str) -> list[dict[str, Any]]:
    """The tombstone's entries: every purge of the domain (the last 50), oldest first."""
    meta = store.get_meta(purge_key(domain))
    return list((meta or {}).get("purges") or [])


# --- blocks --------------------------------------------------------------------------------------

def list_blocks(store: OperatorStore) -> list[tuple[str, str]]:
    """(domain, reason) of every block (``heed operator blocks``, the old spelling of ``heed blocks``)."""
    return [(domain, reason) for domain, reason, _ in store.block_list()]


def unblock(store: OperatorStore, domain: str) -> None:
    """Lift a block (``heed operator unblock``); a domain not on the list is no error."""
    store.unblock_domain(domain)

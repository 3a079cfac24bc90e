"""The settle step of a host turn: one answer settled into the turn's copy of the host view.

``Settler.settle`` turns the request's answer into what the turn writes and what leaves the host
(``Commit``): the pure settlements (``settle``, ``robots_step``, ``admit``) with the inputs they
ask for fetched once and kept for the turn (``Inputs``: kept texts, an extractor's answer, URL
records, global caps), so an answer settled again on a fresher snapshot (a commit that lost its
race) costs no second read or write. Apart from ``crawl.Crawler`` so that the executor keeps the
turn's outline and this the detail of what an answer means (issue 36)."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from heed_core import admit as admission
from heed_core import politeness
from heed_core.extract.events import Event
from heed_core.extract.subsidy import main_text
from heed_core.hoststate import INLINE_AUX_BYTES, HostView, Outbox, TokenOut
from heed_core.ports import Clock, FetchResult
from heed_core.profile import Profile
from heed_core.robots_step import answer_token, settle_robots
from heed_core.settle import Settled, close_source, settle_item, stop_host
from heed_core.store import HostStore, Results
from heed_core.tasks import Candidate, text_version
from heed_core.turn import Plan, SkipRec, TokenIn, tdmrep_body
from heed_core.urls import short_hash
from heed_core.work import UrlRecord, WorkItem

__all__ = ["ROTATE_AT", "Commit", "Inputs", "Settler", "next_wait"]

ROTATE_AT = 40  # receives of one token before it is replaced (the queue's maxReceiveCount is far above)


@dataclass
class Inputs:
    """What a turn fetched to settle its answer, kept for the turn: settled again on a fresher
    snapshot (a commit that lost its race), the answer costs no second read or write."""

    texts: dict[str, str | None] = field(default_factory=dict)  # kept texts loaded, by key
    extracted: tuple[Event, ...] | None = None
    stored: dict[str, str] = field(default_factory=dict)  # texts kept this turn: key -> version id
    records: dict[str, UrlRecord | None] = field(default_factory=dict)  # URL records asked for
    granted: dict[str, int] = field(default_factory=dict)  # global caps taken (idempotent per taker)


@dataclass
class Commit:
    """One settled answer, ready to write: the host view, its outbox, who holds the host after it
    and until when, the aux records to put first and the skips to journal once it landed."""

    view: HostView
    outbox: Outbox
    owner: str | None
    lease: float
    aux: list[tuple[str, dict[str, Any]]]
    skips: list[SkipRec]
    wait: float | None
    more: bool
    rotate: bool
    wake: set[str]
    at: float = 0.0  # the clock time ``wait`` counts from


class Settler:
    """The settle step of ``crawl.Crawler``'s turn: the answer to the plan's one request, settled
    into a copy of the host view. It reads the store only for what the settlement asks (URL
    records, global caps) and writes only the texts to keep, before the commit that points at
    them; the host's item is the committer's (``committer.Committer``)."""

    def __init__(self, profile: Profile, store: HostStore, results: Results, clock: Clock, lease_s: float,
                 extractor: Any = None) -> None:
        self.p = profile
        self.store = store
        self.results = results
        self.clock = clock
        self.lease_s = lease_s
        self.extractor = extractor

    def settle(self, token: TokenIn, plan: Plan, v: HostView, version: int, result: FetchResult,
               inputs: Inputs) -> Commit:
        """The answer settled into ``v`` (a copy of the plan's view): what to write and what
        leaves. Pure but for the inputs it fetches once (``inputs``) and the texts it keeps."""
        item = plan.item
        assert item is not None
        now = self.clock.now()
        t_end = result.t_end or now
        events = list(plan.events)
        sources = list(plan.sources)
        skips: list[SkipRec] = []
        aux = list(plan.aux)
        tokens = list(plan.tokens)
        urls: list[UrlRecord] = []
        outgoing: list[WorkItem] = []
        if plan.role == "robots":
            # The gap after robots.txt; settle_robots lengthens it to a Crawl-delay now known.
            v.pacing = politeness.after_request(v.pacing, self.p.politeness, t_end, self.p.politeness.min_delay_s)
            answer = settle_robots(self.p, v, result, plan.hops, item.round_start, now)
            if answer.aux is not None:
                aux.append(("robots", answer.aux))
            if answer.stop is not None:
                until, reason = answer.stop
                stop_host(v, until, reason)
                if answer.stop_action == "close_source":
                    extra = Settled()
                    close_source(self.p, v, item.source_id, result.url, reason, answer.detail, now, extra)
                    events += extra.events
                    sources += extra.sources
        elif plan.role == "hop":
            # COMMON-06: another host's robots.txt hop, made here under this host's gap; the answer
            # goes back to that host as work of its own.
            v.frontier = [i for i in v.frontier if i.work_id != item.work_id]
            v.pacing = politeness.after_request(v.pacing, self.p.politeness, t_end, plan.delay)
            tokens.append(answer_token(item, result))
        elif plan.role == "tdmrep":
            body = result.body if result.status == 200 else b""
            ttl = self.p.robots.cache_ttl_s
            text = body.decode("utf-8", "replace")
            rec: dict[str, Any] = {"status": result.status, "body": text}
            v.tdmrep = {"exp": t_end + ttl, "stamp": t_end, "rec": rec}
            if len(text) > INLINE_AUX_BYTES:
                aux.append(("tdmrep", {"stamp": t_end, "rec": rec}))
                v.tdmrep["rec"] = None
            # PRAHA-06: the gap after this request is the host's effective delay (Crawl-delay included).
            v.pacing = politeness.after_request(v.pacing, self.p.politeness, t_end, plan.delay)
        else:
            first_records = v.nurl == 0  # no URL of this host was ever recorded before this turn
            settled = self._settle_item(v, item, result, plan, now, inputs)
            skips += [SkipRec.of(item, url, code, detail) for url, code, detail in settled.skips]
            admitted, refused = self._admit(v, item, settled.candidates, now, first_records, inputs)
            skips += [SkipRec.of(item, url, code, detail) for url, code, detail in refused]
            for follow in admitted:
                if follow.host == v.host:
                    v.frontier.append(follow)
                else:
                    outgoing.append(follow)
            for key, text in settled.texts_out:
                if key not in inputs.stored:
                    inputs.stored[key] = self.results.store_text(key, text)
            events += [(t, rid, _bind_versions(r, inputs.stored)) for t, rid, r in settled.events]
            sources += settled.sources
            if settled.url_record is not None:
                urls.append(settled.url_record)
        tokens += _group_tokens(outgoing, item)
        more = bool(v.frontier)
        rotate = more and token.receives >= ROTATE_AT
        if rotate:
            # Replace a token that came back many times (its receive count is what sends poison
            # to the DLQ): the fresh one claims the host when it arrives.
            tokens.append(TokenOut(v.host, short_hash(token.tok, "rotate", str(version))))
        outbox = Outbox(version=version + 1, events=tuple(events), tokens=tuple(tokens), urls=tuple(urls),
                        sources=tuple(sources))
        # The owner is hidden for the gap measured on this machine's clock, the one that stamped
        # t_end: a duration, which no skew shortens, so without the margin (Plan.credit).
        # The wait counts from this moment (``Commit.at``), not from the commit's end: the gap's
        # end is a time on this clock, and a wait for the write lock is no part of it.
        at = self.clock.now()
        wait = next_wait(v, at, self.p.politeness.clock_skew_margin_s) if more else None
        owner = token.owner if more and not rotate else None
        return Commit(view=v, outbox=outbox, owner=owner, lease=at + (wait or 0.0) + self.lease_s,
                      aux=aux, skips=skips, wait=wait, more=more, rotate=rotate,
                      wake={t.host for t in tokens if t.host != v.host}, at=at)

    def _settle_item(self, v: HostView, item: WorkItem, result: FetchResult, plan: Plan, now: float,
                     inputs: Inputs) -> Settled:
        if self.extractor is None:
            inputs.extracted = ()
        tdm = tdmrep_body(v)
        for _ in range(3):
            settled = settle_item(self.p, v, item, result, plan.delay, now, texts=inputs.texts, tdmrep_body=tdm,
                                  extracted=inputs.extracted, robots=plan.robots)
            if not settled.needs_texts and not settled.needs_extract:
                return settled
            for key in settled.needs_texts:
                inputs.texts[key] = self.results.load_text(key)
            if settled.needs_extract:
                inputs.extracted = tuple(self.extractor.extract(main_text(result.body), url=item.url)) \
                    if self.extractor is not None else ()
        raise RuntimeError(f"settling {item.url} kept asking for inputs")

    def _admit(self, v: HostView, item: WorkItem, candidates: list[Candidate], now: float,
               host_has_no_records: bool, inputs: Inputs) -> tuple[list[WorkItem], list[tuple[str, str, str]]]:
        if not candidates:
            return [], []
        # The store is asked only about URLs that can have a record: a host with no record yet
        # (its first round) has none to find.
        ask = [c.item.url for c in candidates
               if c.needs_record and not (c.item.host == v.host and host_has_no_records)
               and c.item.url not in inputs.records]
        if ask:
            found = self.store.url_records(ask)
            inputs.records.update({url: found.get(url) for url in ask})
        records = {url: rec for url, rec in inputs.records.items() if rec is not None}
        pending = admission.admit(candidates, records, v, now)
        granted: dict[str, int] = {}
        for key, (cap, want) in pending.wants.items():
            if key not in inputs.granted:  # idempotent per taker: a second take would return the same
                inputs.granted[key] = self.store.take_quota(key, taker=item.work_id, want=want, limit=cap.limit,
                                                            expires_at=cap.expires_at)
            granted[key] = inputs.granted[key]
        return admission.finalize(pending, granted, v, now)


def next_wait(v: HostView, now: float, credit_s: float = 0.0) -> float:
    """How long until the host's next request may leave: its gap (less ``credit_s``) or its
    soonest work's ``not_before``, whichever is later."""
    soonest = min(i.not_before for i in v.frontier)
    return max(0.0, max(v.pacing.next_allowed - credit_s, soonest) - now)


def _bind_versions(record: dict[str, Any], versions: dict[str, str]) -> dict[str, Any]:
    out = dict(record)
    for k, value in record.items():
        if isinstance(value, str) and value.startswith(text_version("")):
            out[k] = versions.get(value[len(text_version("")):], "")
    return out


def _group_tokens(items: list[WorkItem], parent: WorkItem) -> list[TokenOut]:
    """Follow-ups for other hosts, one token per host. The id names the parent's work and the
    host, so the same follow-ups sent again (a repeated drain) are taken in once."""
    by_host: dict[str, list[WorkItem]] = defaultdict(list)
    for i in items:
        by_host[i.host].append(i)
    return [TokenOut(h, short_hash(parent.work_id, "follow", h), tuple(group)) for h, group in sorted(by_host.items())]

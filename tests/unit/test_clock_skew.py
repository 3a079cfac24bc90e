"""COMMON-05 across machines: a host's next allowed request is written by the clock of the Lambda host
that made the last request and read by the clock of whichever host makes the next one. Every gap a
turn writes carries ``politeness.clock_skew_margin_s``, so a skew up to it never shortens a gap.

Two crawlers share one store and one network; one machine's clock runs 300 ms behind the other's.
The turns alternate so that the request after each one is always made by the other machine, and the
gaps are measured where a site measures them: on the network's (true) clock. Two ways a host's next
turn comes: a fresh token (the next round's, a follow-up), which reads the gap another clock wrote
and needs the margin; and the host's owner token back from the hide its own turn set (a duration
SQS keeps in true time), which has kept the gap already and does not wait the margin again."""
from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import pairwise

import pytest

from heed_core.crawl import Crawler
from heed_core.ports import FakeClock, FetchRequest, FetchResult
from heed_core.profile import Profile, load_profile, load_profile_data
from heed_core.rounds import Round, entry_items, round_id, round_tokens
from heed_core.work import Source

from tests.support.fifo import FifoSim
from tests.support.memstore import FakeTokens, FakeTransport, ListJournal, ListResults, MemoryStore, Reply

T0 = 1_796_112_000.0  # 2026-12-02T08:00:00Z
SITE = "https://news.example"
SKEW = 0.3  # how far one machine's clock runs behind the other's
GAP = 1.5  # AubeBot's promised gap (AUBE-09), end of one request to the start of the next


@dataclass
class MachineClock:
    """One machine's view of the true time: ``offset`` seconds off it."""

    true: FakeClock
    offset: float

    def now(self) -> float:
        return self.true.now() + self.offset


@dataclass
class MachineTransport:
    """One machine's way to the shared network: the site answers on the true clock (and logs it
    there), and this machine stamps the answer with its own clock, as RequestsTransport does."""

    network: FakeTransport
    offset: float

    def fetch(self, request: FetchRequest) -> FetchResult:
        result = self.network.fetch(request)
        return replace(result, t_start=result.t_start + self.offset, t_end=result.t_end + self.offset)


def _feed(items: int) -> bytes:
    body = "".join(f"<item><title>N{i}</title><link>{SITE}/n/{i}</link><description>Breve.</description></item>"
                   for i in range(items))
    return f'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>{body}</channel></rss>'.encode()


@dataclass
class TwoMachines:
    """Two crawlers on one store and one network, one clock ``SKEW`` behind the other, and the
    queue (FifoSim, on the true clock: SQS keeps a hidden token's wait in true time)."""

    true: FakeClock
    network: FakeTransport
    machines: list[Crawler]
    sim: FifoSim
    store: MemoryStore

    @classmethod
    def start(cls, profile: Profile) -> TwoMachines:
        true = FakeClock(T0)
        network = FakeTransport(true)
        network.script(SITE + "/robots.txt", Reply(200, {"Content-Type": "text/plain"}, b"User-agent: *\nAllow: /\n"))
        store, journal, results, tokens = MemoryStore(), ListJournal(), ListResults(), FakeTokens()
        machines = [Crawler(profile, store, MachineTransport(network, offset), journal, results,
                            MachineClock(true, offset), tokens=tokens) for offset in (-SKEW, 0.0)]
        return cls(true, network, machines, FifoSim(machines[0], store, results, tokens, true), store)

    def gaps(self) -> list[float]:
        """The gaps the site saw, end of one request to the start of the next, on the true clock."""
        sent = self.network.sent()
        return [b.result.t_start - a.result.t_end for a, b in pairwise(sent)]


def owner_round_on_two_machines(profile: Profile) -> list[float]:
    """One AubeBot round (robots.txt, the feed, four articles) on one token, the host's owner:
    after each request its turn hides it for the gap, and it comes back to the *other* machine."""
    m = TwoMachines.start(profile)
    m.network.script(SITE + "/feed.xml", Reply(200, {"Content-Type": "application/rss+xml"}, _feed(4), duration=0.4))
    for i in range(4):
        m.network.script(f"{SITE}/n/{i}", Reply(200, {"Content-Type": "text/html"},
                                                b"<html><title>N</title><main><p>Testo.</p></main></html>"))
    src = Source(id="feed", url=SITE + "/feed.xml", kind="feed")
    m.store.put_source(src)
    items, _ = entry_items(profile, Round(round_id(T0, "feed"), T0, "feed"), [src], T0)
    for token in round_tokens(items):
        m.sim.send(token)
    turn = 0
    while m.sim.groups:
        assert turn < 200, "the queue did not drain"
        host = min(m.sim.groups, key=lambda h: (m.sim.due[h], h))
        if m.sim.due[host] > m.true.now():
            m.true.advance(m.sim.due[host] - m.true.now())
        if m.sim.step(host).requests:
            m.sim.crawler = m.machines[(m.machines.index(m.sim.crawler) + 1) % 2]
        turn += 1
    assert [e.request.purpose for e in m.network.sent()] == ["robots", "feed"] + ["article"] * 4
    return m.gaps()


def fresh_tokens_on_two_machines(profile: Profile, feeds: int = 5) -> list[float]:
    """Five feeds of one host, each brought by its own token that arrives the moment the one
    before it is done (as the next round's token or a follow-up from another host does), the
    tokens taken by the two machines in turn: each reads the gap the other machine wrote."""
    m = TwoMachines.start(profile)
    for n in range(feeds):
        m.network.script(f"{SITE}/feed{n}.xml", Reply(200, {"Content-Type": "application/rss+xml"}, _feed(0)))
        src = Source(id=f"feed{n}", url=f"{SITE}/feed{n}.xml", kind="feed")
        m.store.put_source(src)
        m.sim.crawler = m.machines[n % 2]
        start = m.true.now()
        items, _ = entry_items(profile, Round(round_id(start, "feed"), start, "feed"), [src], start)
        for token in round_tokens(items):
            m.sim.send(token)
        m.sim.play()
    assert [e.request.purpose for e in m.network.sent()] == ["robots"] + ["feed"] * feeds
    return m.gaps()


def aube(margin: float) -> Profile:
    # AubeBot's shipped pacing and article cap, its clock-skew margin set to ``margin``.
    return load_profile_data({"extends": "aubebot", "politeness": {"clock_skew_margin_s": margin}})


def test_common_05_aube_09_a_skew_up_to_the_margin_never_shortens_a_gap() -> None:
    # GIVEN two machines 300 ms apart, and a margin of 300 ms
    # WHEN fresh tokens of one host go to the two machines in turn
    gaps = fresh_tokens_on_two_machines(aube(SKEW))
    # THEN the site saw every gap at least as long as promised, whichever clock wrote it
    assert min(gaps) >= GAP - 1e-6, gaps


def test_common_05_without_the_margin_the_skew_shortens_the_gap() -> None:
    # GIVEN the same two machines and no margin
    gaps = fresh_tokens_on_two_machines(aube(0.0))
    # THEN a gap written by the machine that runs behind, read by the one ahead, is 300 ms short
    assert min(gaps) == pytest.approx(GAP - SKEW, abs=1e-6), gaps


def test_common_05_the_owner_tokens_own_hide_keeps_the_gap_and_the_margin_costs_it_nothing() -> None:
    # GIVEN the two machines, and one token that owns the host for a whole round
    # WHEN it comes back to the other machine after each request, with and without a margin
    with_margin, without = owner_round_on_two_machines(aube(SKEW)), owner_round_on_two_machines(aube(0.0))
    # THEN every gap is kept either way (the hide is a duration on the clock that stamped the
    # request's end), and the margin adds nothing to them: the owner does not wait it again
    assert min(with_margin) >= GAP - 1e-6, with_margin
    assert with_margin == pytest.approx(without, abs=1e-6)
    # and a gap is longer than promised only where the machine it came back to runs behind
    assert sorted({round(g, 3) for g in with_margin}) == [GAP, GAP + SKEW]


def test_the_shipped_bots_carry_a_margin_and_a_bad_one_is_refused() -> None:
    from heed_core.profile import BUILTIN_BOTS, ProfileError

    assert all(load_profile(bot).politeness.clock_skew_margin_s == 0.1 for bot in BUILTIN_BOTS)
    with pytest.raises(ProfileError, match="politeness.clock_skew_margin_s"):
        aube(-0.1)

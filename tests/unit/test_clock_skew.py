"""COMMON-05 across machines: a host's next allowed request is written by the clock of the Lambda host
that made the last request and read by the clock of whichever host makes the next one. Every gap a
turn writes carries ``politeness.clock_skew_margin_s``, so a skew up to it never shortens a gap.

Two crawlers share one store and one network; one machine's clock runs 300 ms behind the other's.
The turns alternate so that the request after each one is always made by the other machine, and the
gaps are measured where a site measures them: on the network's (true) clock."""
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


def _feed() -> bytes:
    items = "".join(f"<item><title>N{i}</title><link>{SITE}/n/{i}</link><description>Breve.</description></item>"
                    for i in range(4))
    return f'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>{items}</channel></rss>'.encode()


def crawl_on_two_machines(profile: Profile) -> list[float]:
    """Play one AubeBot round (robots.txt, the feed, four articles) with the turns alternating
    between a machine on the true clock and one ``SKEW`` behind it: after every turn that made a
    request, the other machine takes the host's next turn, at once. The gaps the site saw, on the
    true clock."""
    true = FakeClock(T0)
    network = FakeTransport(true)
    network.script(SITE + "/robots.txt", Reply(200, {"Content-Type": "text/plain"}, b"User-agent: *\nAllow: /\n"))
    network.script(SITE + "/feed.xml", Reply(200, {"Content-Type": "application/rss+xml"}, _feed(), duration=0.4))
    for i in range(4):
        network.script(f"{SITE}/n/{i}", Reply(200, {"Content-Type": "text/html"},
                                              b"<html><title>N</title><main><p>Testo.</p></main></html>"))
    store, journal, results, tokens = MemoryStore(), ListJournal(), ListResults(), FakeTokens()
    machines = [Crawler(profile, store, MachineTransport(network, offset), journal, results,
                        MachineClock(true, offset), tokens=tokens) for offset in (-SKEW, 0.0)]
    sim = FifoSim(machines[0], store, results, tokens, true)
    src = Source(id="feed", url=SITE + "/feed.xml", kind="feed")
    store.put_source(src)
    items, _ = entry_items(profile, Round(round_id(T0, "feed"), T0, "feed"), [src], T0)
    for token in round_tokens(items):
        sim.send(token)
    turn = 0
    while sim.groups:
        assert turn < 200, "the queue did not drain"
        host = min(sim.groups, key=lambda h: (sim.due[h], h))
        if sim.due[host] > true.now():
            true.advance(sim.due[host] - true.now())
        if sim.step(host).requests:
            # The host's next turn is the other machine's, and it comes at once (as a fresh token
            # for the host does, a follow-up or the next round): what holds the next request back
            # is only the gap this machine wrote, read against the other machine's clock.
            sim.crawler = machines[(machines.index(sim.crawler) + 1) % 2]
            if host in sim.groups:
                sim.due[host] = true.now()
        turn += 1
    sent = network.sent()
    assert [e.request.purpose for e in sent] == ["robots", "feed"] + ["article"] * 4
    return [b.result.t_start - a.result.t_end for a, b in pairwise(sent)]


def aube(margin: float) -> Profile:
    # AubeBot's shipped pacing and article cap, its clock-skew margin set to ``margin``.
    return load_profile_data({"extends": "aubebot", "politeness": {"clock_skew_margin_s": margin}})


def test_common_05_aube_09_a_skew_up_to_the_margin_never_shortens_a_gap() -> None:
    # GIVEN two machines 300 ms apart, and a margin of 300 ms
    # WHEN they take turns at one host
    gaps = crawl_on_two_machines(aube(SKEW))
    # THEN the site saw every gap at least as long as promised, whichever clock wrote it
    assert min(gaps) >= GAP - 1e-9, gaps


def test_common_05_without_the_margin_the_skew_shortens_the_gap() -> None:
    # GIVEN the same two machines and no margin
    gaps = crawl_on_two_machines(aube(0.0))
    # THEN a gap written by the machine that runs behind, read by the one ahead, is 300 ms short
    assert min(gaps) == pytest.approx(GAP - SKEW), gaps


def test_the_shipped_bots_carry_a_margin_and_a_bad_one_is_refused() -> None:
    from heed_core.profile import BUILTIN_BOTS, ProfileError

    assert all(load_profile(bot).politeness.clock_skew_margin_s == 0.1 for bot in BUILTIN_BOTS)
    with pytest.raises(ProfileError, match="politeness.clock_skew_margin_s"):
        aube(-0.1)

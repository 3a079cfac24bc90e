"""`heed serve` killed with SIGKILL at random moments and restarted each time (issue 21), judged
from the sites' logs, the skips journal and the events table: every page requested at most twice,
the second time only when a kill came while its first request was in flight (each kill repeats at
most the requests it cut: one per turn at work); a page whose second request a kill cut as well
is given up, a skip with reason ``interrupted_twice``, never asked a third time; every event
delivered exactly once; every gap kept, across every restart; nothing lost but such a recorded
give-up (every other article read)."""
from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from heed.demo.web import RequestRecord

from tests.support.serve import FeedWeb, Serve, events, gaps, serve_profile, state_log

GAP = 0.3
HOSTS, ARTICLES = 4, 30
LATENCY = 0.25  # an article answers this late: a kill often lands inside a request
KILLS = 20
SLACK = 0.3  # a request's commit follows its end this closely
LAG = 0.1  # a worker dies this soon after the serving process (PR_SET_PDEATHSIG): a request it began then is cut


@pytest.fixture
def web() -> Iterator[FeedWeb]:
    w = FeedWeb(HOSTS, ARTICLES, LATENCY).start()
    yield w
    w.stop()


@pytest.mark.slow
def test_sigkill_at_20_random_moments_asks_no_page_thrice_loses_nothing_and_keeps_every_gap(
        web: FeedWeb, tmp_path: Path) -> None:
    # GIVEN a state directory with four feeds of thirty short items (an article each, read once ever)
    bot = serve_profile(tmp_path / "bot.yaml", GAP)
    state = tmp_path / "state"
    sources = web.sources_file(tmp_path / "sources.yaml")
    rng = random.Random(21)
    kills: list[float] = []
    served: list[Serve] = []
    try:
        # WHEN heed serve is killed (SIGKILL, its workers with it) at 20 random moments of the crawl
        # and started again after each
        for n in range(KILLS):
            s = Serve(bot, state, ["--quiet", *(["--sources", str(sources)] if n == 0 else [])]).start(n)
            served.append(s)
            s.wait_started()
            time.sleep(rng.uniform(0.2, 1.4))
            kills.append(s.kill())
        # AND once more, to the end of the round's work
        last = Serve(bot, state, ["--quiet", "--once", "--patience", "3"]).start(KILLS)
        served.append(last)
        assert last.wait(180) == 0, last.text()[-3000:]
    finally:
        for s in served:
            s.stop_group()
    log = web.log()
    given_up = {str(r["url"]).removeprefix("http://") for r in state_log(state, "skips")
                if r.get("reason") == "interrupted_twice"}
    # THEN no page was requested more than twice
    per_url = Counter(f"{r.host}{r.path}" for r in log)
    assert max(per_url.values()) <= 2, {u: n for u, n in per_url.items() if n > 2}
    # AND every article of every feed was asked for: nothing was lost
    pages = {f"{s.host}/a/{i}" for s in web.servers for i in range(ARTICLES)}
    assert pages <= set(per_url), sorted(pages - set(per_url))[:10]
    # AND a page was requested a second time only for a kill that came while its first request
    # was in flight (between the request's start and its commit): each kill repeats at most the
    # requests it cut
    for url in [u for u, n in per_url.items() if n > 1]:
        asked = sorted((r for r in log if f"{r.host}{r.path}" == url), key=lambda r: r.t_start)
        cut = [r for r in asked[:-1] if _cut(r, kills)]
        assert len(cut) == len(asked) - 1, (url, [(r.t_start, r.t_end) for r in asked],
                                            [round(k - r.t_end, 3) for r in asked for k in kills
                                             if r.t_start - 1 <= k <= r.t_end + 3])
    repeats = sum(n - 1 for n in per_url.values())
    assert repeats <= KILLS * HOSTS, repeats  # (a kill cuts at most one request per host: one in flight each)
    # AND a page given up (interrupted_twice) was asked exactly twice, each request cut by a kill
    for url in given_up:
        asked = [r for r in log if f"{r.host}{r.path}" == url]
        assert len(asked) == 2 and all(_cut(r, kills) for r in asked), (url, [(r.t_start, r.t_end) for r in asked])
    # AND every event was delivered exactly once (an item.found per item, an article.read per
    # article not given up)
    found = events(state)
    ids = Counter(e["id"] for e in found)
    assert max(ids.values()) == 1, [i for i, n in ids.items() if n > 1]
    assert Counter(e["detail_type"] for e in found) == {"item.found": HOSTS * ARTICLES,
                                                        "article.read": HOSTS * ARTICLES - len(given_up & pages)}
    # AND no site saw two requests closer than the gap, across every restart
    seen = gaps(log)
    assert all(g >= GAP - 0.005 for gs in seen.values() for g in gs), {h: min(gs) for h, gs in seen.items()}
    # AND the kills came while there was work to do: restarts handed back the tokens a killed process
    # held (a kill while every host waited for its gap held none)
    resumed = sum(1 for s in served[1:] for e in s.lines() if e.get("event") == "resumed")
    assert resumed >= KILLS // 4, resumed
    # AND the export of the events table (events.jsonl) holds each event once, however the kills fell
    exported = [e["id"] for e in _jsonl(state / "events.jsonl")]
    assert sorted(exported) == sorted(ids)
    twice = Counter(n for n in per_url.values() if n > 1)
    print(f"kill test: {KILLS} kills, {resumed} restarts handed back held tokens, {len(log)} requests for "
          f"{len(per_url)} URLs, asked again: {dict(sorted(twice.items()))} (times asked: pages), "
          f"{len(given_up)} given up (interrupted_twice), {len(found)} events once each, "
          f"min gap {min(g for gs in seen.values() for g in gs):.3f} s")


def _cut(r: RequestRecord, kills: list[float]) -> bool:
    """Whether a kill came while the request was in flight (from its start to its commit), or
    just before it began (in a worker that had not died yet)."""
    return any(r.t_start - LAG <= k <= r.t_end + SLACK for k in kills)


def _jsonl(path: Path) -> list[dict[str, object]]:
    import json

    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]

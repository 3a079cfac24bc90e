"""bench/ceiling_side.py: the ceiling makes the requests a polite crawl of the fixture web makes,
no more and no fewer, and the bound bench.py prints from its rate is ideal / (requests / rate),
never above 1. (The smoke bench of `make test` runs it end to end against the fixture web.)"""
from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

from ceiling_side import _parse, crawl_urls  # noqa: E402

from bench import SIZES, ceiling_bound, ceiling_line  # noqa: E402

from fixture_web import PORT, article, feed, make_hosts, robots  # noqa: E402


@pytest.mark.parametrize(("size", "expected"), [("smoke", 48), ("200x10", 1960), ("1000x5", 4800),
                                                ("10000x3", 28000)])
def test_the_ceiling_makes_the_requests_of_a_polite_crawl(size: str, expected: int) -> None:
    # GIVEN a size of the bench (the figures both crawlers are seen making by the sites)
    hosts_n, pages, delay = SIZES[size]
    # WHEN the ceiling lists what it requests
    urls = crawl_urls(hosts_n, pages, delay)
    # THEN as many as a polite crawl makes, each once, none robots.txt disallows
    assert len(urls) == expected
    assert len(set(urls)) == len(urls)
    assert not [u for u in urls if "/private/" in u]
    per_host = Counter(u.split("/")[2] for u in urls)
    for h in make_hosts(hosts_n, pages, delay):
        assert per_host[f"{h.ip}:{PORT}"] == pages - (1 if h.disallows and h.articles else 0)
    # AND breadth first: every robots.txt before any feed, every feed before any article
    kinds = ["robots" if u.endswith("/robots.txt") else "feed" if u.endswith("/feed.xml") else "article"
             for u in urls]
    assert kinds == sorted(kinds, key=["robots", "feed", "article"].index)


def test_the_bound_is_the_ideal_over_the_shortest_span_the_rate_allows() -> None:
    site = {"ideal_s": 8.06}
    # 28,000 requests at 1,000 a second take at least 28 s: at most 8.06 / 28
    assert ceiling_bound({"requests": 28000, "rate": 1000.0, "site": site}) == pytest.approx(8.06 / 28)
    # a rate that leaves the span to the gaps bounds nothing
    assert ceiling_bound({"requests": 4800, "rate": 1229.0, "site": {"ideal_s": 16.1}}) == 1.0
    assert ceiling_bound({"requests": 10, "rate": 0.0, "site": site}) == 0.0


def test_the_parsed_ceiling_parses_each_answer_with_the_package_a_crawler_needs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import ceiling_side

    # GIVEN the fixture's robots.txt, feed and article of a host, and the three parsers watched
    h = make_hosts(4, 5, 2.0)[3]
    seen: list[str] = []
    for module, name, attr in ((ceiling_side.protego.Protego, "protego", "parse"),
                               (ceiling_side.feedparser, "feedparser", "parse"),
                               (ceiling_side.lxml.html, "lxml", "fromstring")):
        real = getattr(module, attr)
        monkeypatch.setattr(module, attr, lambda body, real=real, name=name: (seen.append(name), real(body))[1])
    base = f"http://{h.ip}:{PORT}"
    # WHEN the ceiling parses each answer
    _parse(f"{base}/robots.txt", robots(h))
    _parse(f"{base}/feed.xml", feed(h))
    _parse(f"{base}/a/0", article(h, "/a/0"))
    # THEN each by its own package, and the line bench.py prints names them
    assert seen == ["protego", "feedparser", "lxml"]
    c = {"requests": 4800, "rate": 800.0, "wall_s": 6.0, "cpu_s": 9.6, "processes": 2, "threads": 16,
         "parsed": True, "site": {"ideal_s": 16.1}}
    assert "protego, the feed by feedparser, an article by lxml" in ceiling_line(c)
    assert "a crawler on Heed's packages spans at least 6.0 s" in ceiling_line(c)
    assert "no parsing" in ceiling_line({**c, "parsed": False})

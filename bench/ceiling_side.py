"""The ceiling of this machine: the requests a polite crawl of the fixture web makes (robots.txt,
the feed, the articles robots.txt allows: the same URLs, as many), made as fast as `requests` can
make them here, with no gap, no parsing and no state. Two processes of 16 threads (heed serve's
default shape), a session per thread; the fixture answers every request on a fresh connection
(Connection: close), as it does for the crawlers.

Any crawler built on `requests` makes the same requests and does more for each, on the same two
cores the fixture web shares: it cannot go faster than this, so its span is at least
``requests / rate`` and its efficiency at most ``ideal / (requests / rate)`` (bench.py prints it).

With ``--parse`` (``bench/run --side parsed-ceiling``) each answer is also parsed by the package a
crawler of the fixture web cannot do without (robots.txt by protego, the feed by feedparser, an
article by lxml): the highest efficiency a crawler on Heed's fixed packages can reach here.

Prints one JSON object: requests made, wall and CPU seconds (this process and its workers)."""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import feedparser
import lxml.html
import protego
import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fixture_web import PORT, add_size_arguments, make_hosts  # noqa: E402

PROCESSES, THREADS = 2, 16


def crawl_urls(hosts_n: int, pages: int, delay: float) -> list[str]:
    """What a polite crawl requests, breadth first: every robots.txt, every feed, the articles."""
    hosts = make_hosts(hosts_n, pages, delay)
    urls = [f"http://{h.ip}:{PORT}/robots.txt" for h in hosts]
    urls += [f"http://{h.ip}:{PORT}/feed.xml" for h in hosts]
    for i in range(max(h.articles for h in hosts) if hosts else 0):
        # A disallowing host's last link is /private/secret, which robots.txt keeps a crawler from.
        urls += [f"http://{h.ip}:{PORT}/a/{i}" for h in hosts if i < h.articles - (1 if h.disallows else 0)]
    return urls


def _parse(url: str, body: bytes) -> None:
    """The parse a crawler makes of the fixture's answer at ``url`` (what Heed's packages do)."""
    if url.endswith("/robots.txt"):
        protego.Protego.parse(body.decode("utf-8"))
    elif url.endswith("/feed.xml"):
        feedparser.parse(body)
    else:
        lxml.html.fromstring(body)


def _worker(urls: list[str], parse: bool = False) -> None:
    local = threading.local()

    def get(url: str) -> int:
        s = getattr(local, "s", None)
        if s is None:
            s = local.s = requests.Session()
        r = s.get(url, timeout=30, headers={"User-Agent": "BenchCeiling/1.0"})
        body = r.content
        if parse:
            _parse(url, body)
        return r.status_code

    with ThreadPoolExecutor(THREADS) as pool:
        bad = [u for u, code in zip(urls, pool.map(get, urls), strict=True) if code != 200]
    if bad:
        raise SystemExit(f"ceiling: {len(bad)} requests not answered 200, e.g. {bad[0]}")


def main() -> None:
    ap = argparse.ArgumentParser()
    add_size_arguments(ap)
    ap.add_argument("--parse", action="store_true", help="parse each answer too (protego, feedparser, lxml)")
    args = ap.parse_args()
    urls = crawl_urls(args.hosts, args.pages, args.delay)
    ctx = multiprocessing.get_context("fork")
    me0, kids0 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    procs = [ctx.Process(target=_worker, args=(urls[k::PROCESSES], args.parse)) for k in range(PROCESSES)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    wall = time.monotonic() - t0
    if any(p.exitcode for p in procs):
        raise SystemExit("ceiling: a worker failed")
    me1, kids1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = sum(b.ru_utime - a.ru_utime + b.ru_stime - a.ru_stime for a, b in ((me0, me1), (kids0, kids1)))
    print(json.dumps({"requests": len(urls), "wall_s": wall, "cpu_s": cpu, "rate": len(urls) / wall,
                      "processes": PROCESSES, "threads": THREADS, "cores": os.cpu_count(), "parsed": args.parse,
                      "rss_mb": max(me1.ru_maxrss, kids1.ru_maxrss) / 1024}))


if __name__ == "__main__":
    main()

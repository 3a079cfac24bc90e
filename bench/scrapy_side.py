"""The same work through Scrapy 2.x, configured as a careful user would (ROBOTSTXT_OBEY,
DOWNLOAD_DELAY = d, RANDOMIZE_DOWNLOAD_DELAY off, CONCURRENT_REQUESTS_PER_DOMAIN = 1) for a
broad crawl (Scrapy's advice: raise CONCURRENT_REQUESTS; here one request at once per host, up
to 1,000, so slow sites do not hold the others back).
Prints one JSON object: CPU seconds and peak RSS of this process for the crawl."""
from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scrapy  # noqa: E402
from scrapy.crawler import CrawlerProcess  # noqa: E402

from fixture_web import PORT, add_size_arguments, make_hosts  # noqa: E402


class FeedSpider(scrapy.Spider):
    name = "bench"

    def __init__(self, feeds: list[str], **kw: object) -> None:
        super().__init__(**kw)
        self.start_urls = feeds

    def parse(self, response):  # type: ignore[no-untyped-def]
        for link in response.xpath("//item/link/text()").getall():
            yield response.follow(link.strip(), self.parse_article)

    def parse_article(self, response):  # type: ignore[no-untyped-def]
        yield {"url": response.url, "title": response.css("title::text").get()}


def main() -> None:
    ap = argparse.ArgumentParser()
    add_size_arguments(ap)
    args = ap.parse_args()
    hosts = make_hosts(args.hosts, args.pages, args.delay)
    feeds = [f"http://{h.ip}:{PORT}/feed.xml" for h in hosts]
    process = CrawlerProcess(settings={
        "ROBOTSTXT_OBEY": True, "DOWNLOAD_DELAY": args.delay, "RANDOMIZE_DOWNLOAD_DELAY": False,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1, "CONCURRENT_REQUESTS": max(16, min(1000, args.hosts)),
        "USER_AGENT": "BenchBot/1.0 (+https://example.org/bench)",
        "LOG_LEVEL": "ERROR", "TELNETCONSOLE_ENABLED": False, "COOKIES_ENABLED": False,
        "RETRY_ENABLED": False, "ITEM_PIPELINES": {},
    })
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    wall0 = time.monotonic()
    process.crawl(FeedSpider, feeds=feeds)
    process.start()
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"wall_s": time.monotonic() - wall0,
                      "cpu_s": (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime),
                      "rss_mb": cpu1.ru_maxrss / 1024}))


if __name__ == "__main__":
    main()

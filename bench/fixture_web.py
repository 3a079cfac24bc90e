"""A fixture web of many hosts in one process, logging every request from the site's side.

    python bench/fixture_web.py --hosts 200 --pages 10 --delay 1 --latency 0.02 --log /tmp/web.jsonl

Each host listens on its own loopback address (127.77.x.y:8080) and serves robots.txt (every
fourth host asks for a Crawl-delay of 2 x delay, every fifth disallows /private/), a feed
(/feed.xml) whose items link the host's article pages (short summaries, so a feed reader opens
them), and those pages, each answered ``latency`` seconds late. Commands on stdin: ``dump``
writes the log (one JSON object a line: host, path, t_start, t_end, status) and empties it;
``quit`` stops. ``ready <n>`` on stdout once every host listens."""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import dataclass
from email.utils import formatdate

PORT = 8080


def host_ip(i: int) -> str:
    return f"127.77.{i // 250}.{i % 250 + 1}"


@dataclass(frozen=True)
class Host:
    index: int
    ip: str
    pages: int  # requests a polite crawler makes here: robots.txt, the feed, pages - 2 articles
    crawl_delay: float | None
    disallows: bool

    @property
    def articles(self) -> int:
        return max(0, self.pages - 2)


def add_size_arguments(ap: argparse.ArgumentParser) -> None:
    """The options every side of the bench takes: the size of the fixture web it crawls."""
    ap.add_argument("--hosts", type=int, required=True)
    ap.add_argument("--pages", type=int, required=True)
    ap.add_argument("--delay", type=float, required=True)


def make_hosts(n: int, pages: int, delay: float) -> list[Host]:
    return [Host(i, host_ip(i), pages, 2 * delay if i % 4 == 3 else None, i % 5 == 4) for i in range(n)]


def robots(h: Host) -> bytes:
    text = "User-agent: *\n"
    text += "Disallow: /private/\n" if h.disallows else "Allow: /\n"
    if h.crawl_delay:
        text += f"Crawl-delay: {h.crawl_delay:g}\n"
    return text.encode()


def feed(h: Host) -> bytes:
    base = f"http://{h.ip}:{PORT}"
    links = [f"/a/{i}" for i in range(h.articles)]
    if h.disallows and links:
        links[-1] = "/private/secret"  # the crawler must leave this one out
    items = "".join(
        f"<item><title>Story {i} on host {h.index}</title><link>{base}{path}</link><guid>{base}{path}</guid>"
        f"<description>Short news {i}.</description><pubDate>{formatdate(1796025600 + i, usegmt=True)}</pubDate></item>"
        for i, path in enumerate(links))
    return (f'<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Host {h.index}</title>'
            f"<link>{base}/</link><description>bench</description>{items}</channel></rss>").encode()


def article(h: Host, path: str) -> bytes:
    body = "".join(f"<p>Paragraph {n} of {path} on host {h.index}. " + "Lorem ipsum dolor sit amet. " * 6 + "</p>"
                   for n in range(6))
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{path} on {h.index}</title></head>"
            f"<body><main><article><h1>{path}</h1>{body}</article></main></body></html>").encode()


class Web:
    def __init__(self, hosts: list[Host], latency: float) -> None:
        self.hosts = {h.ip: h for h in hosts}
        self.latency = latency
        self.log: list[dict[str, object]] = []

    def answer(self, h: Host, path: str) -> tuple[int, str, bytes]:
        if path == "/robots.txt":
            return 200, "text/plain; charset=utf-8", robots(h)
        if path == "/feed.xml":
            return 200, "application/rss+xml; charset=utf-8", feed(h)
        if path.startswith(("/a/", "/private/")):
            return 200, "text/html; charset=utf-8", article(h, path)
        return 404, "text/plain", b"not found"

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        ip = writer.get_extra_info("sockname")[0]
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        t_start = time.time()
        parts = head.split(b"\r\n", 1)[0].split()
        path = parts[1].decode("latin-1") if len(parts) > 1 else "/"
        if self.latency:
            await asyncio.sleep(self.latency)
        status, ctype, body = self.answer(self.hosts[ip], path)
        reason = {200: "OK", 404: "Not Found"}[status]
        writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
                     "Connection: close\r\n\r\n".encode("latin-1") + body)
        try:
            await writer.drain()
        except ConnectionError:
            pass
        writer.close()
        self.log.append({"host": ip, "path": path, "t_start": t_start, "t_end": time.time(), "status": status})


async def main_async(args: argparse.Namespace) -> None:
    hosts = make_hosts(args.hosts, args.pages, args.delay)
    web = Web(hosts, args.latency)
    servers = [await asyncio.start_server(web.handle, h.ip, PORT, backlog=64) for h in hosts]
    print(f"ready {len(servers)}", flush=True)
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        cmd = line.strip()
        if cmd == "dump":
            with open(args.log, "w", encoding="utf-8") as f:
                for rec in web.log:
                    f.write(json.dumps(rec) + "\n")
            web.log = []
            print("dumped", flush=True)
        elif cmd in ("quit", ""):
            break
    for s in servers:
        s.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    add_size_arguments(ap)
    ap.add_argument("--latency", type=float, default=0.02)
    ap.add_argument("--log", required=True)
    asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    main()

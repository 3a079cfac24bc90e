"""A fixture web of many hosts in one process, logging every request from the site's side.

    python bench/fixture_web.py --hosts 200 --pages 10 --delay 1 --latency 0.02 --log /tmp/web.jsonl
    python bench/fixture_web.py --hosts 1000 --pages 5 --delay 2 --latency-mix --log /tmp/web.jsonl

Each host listens on its own loopback address (127.77.x.y:8080) and serves robots.txt (every
fourth host asks for a Crawl-delay of 2 x delay, every fifth disallows /private/), a feed
(/feed.xml) whose items link the host's article pages (short summaries, so a feed reader opens
them), and those pages. Every answer of a host comes its latency late: ``--latency S`` for every
host, or ``--latency-mix``, the real web's spread (``MIX``: 1 host in 20 at 4 s, 1 in 7 at
1.5 s, the rest 0.1-0.3 s), each host's drawn from ``--seed`` and its index, so every process
that builds the hosts (the bench, the fixture) gives each host the same latency. Commands on
stdin: ``dump`` writes the log (one JSON object a line: host, path, t_start, t_end, status) and
empties it; ``quit`` stops. ``ready <n>`` on stdout once every host listens."""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from dataclasses import dataclass
from email.utils import formatdate

PORT = 8080
BASE_LATENCY_S = 0.02  # what a host answers in when no latency is asked for (loopback plus a little)
# The real web's spread of answer times: (share of hosts, latency or its range), drawn per host.
MIX: tuple[tuple[float, float | tuple[float, float]], ...] = ((1 / 20, 4.0), (1 / 7, 1.5), (1.0, (0.1, 0.3)))


def host_ip(i: int) -> str:
    return f"127.77.{i // 250}.{i % 250 + 1}"


@dataclass(frozen=True)
class Host:
    index: int
    ip: str
    pages: int  # requests a polite crawler makes here: robots.txt, the feed, pages - 2 articles
    crawl_delay: float | None
    disallows: bool
    latency: float = BASE_LATENCY_S  # seconds every answer of this host takes

    @property
    def articles(self) -> int:
        return max(0, self.pages - 2)

    @property
    def polite_requests(self) -> int:
        """What a polite crawler asks of this host: robots.txt, the feed, the articles robots.txt allows."""
        return 2 + self.articles - (1 if self.disallows and self.articles else 0)

    def required_gap(self, delay: float) -> float:
        """The end-to-start gap its requests must keep: the delay, or its Crawl-delay when longer."""
        return max(delay, self.crawl_delay or 0.0)

    def ideal_span(self, delay: float) -> float:
        """The shortest a polite crawl of this host can take: its answers' latencies, and between
        them the required gaps, each counted from the end of one request to the start of the next."""
        n = self.polite_requests
        return n * self.latency + (n - 1) * self.required_gap(delay)


def add_size_arguments(ap: argparse.ArgumentParser) -> None:
    """The options every side of the bench takes: the size of the fixture web it crawls."""
    ap.add_argument("--hosts", type=int, required=True)
    ap.add_argument("--pages", type=int, required=True)
    ap.add_argument("--delay", type=float, required=True)


def add_latency_arguments(ap: argparse.ArgumentParser) -> None:
    """How long the fixture's sites take to answer (the fixture web and the bench take these)."""
    ap.add_argument("--latency", type=float, default=None, metavar="S",
                    help=f"every site answers S seconds late (default {BASE_LATENCY_S:g})")
    ap.add_argument("--latency-mix", action="store_true",
                    help="a mix of latencies as the real web has: 1 site in 20 at 4 s, 1 in 7 at 1.5 s, "
                         "the rest 0.1-0.3 s, each site's drawn from --seed")
    ap.add_argument("--seed", type=int, default=1, help="the seed of --latency-mix (default 1)")


def host_latency(i: int, latency: float | None = None, mix: bool = False, seed: int = 1) -> float:
    """Host ``i``'s latency: ``latency`` for every host, or its draw from ``MIX`` (``seed`` and
    ``i`` alone decide it, the same in every process)."""
    if not mix:
        return BASE_LATENCY_S if latency is None else latency
    u = random.Random(f"{seed}:{i}")
    x = u.random()
    for share, value in MIX:
        if x < share:
            return round(u.uniform(*value), 3) if isinstance(value, tuple) else value
        x -= share
    raise AssertionError("MIX's shares add up to more than 1")


def make_hosts(n: int, pages: int, delay: float, latency: float | None = None, mix: bool = False,
               seed: int = 1) -> list[Host]:
    return [Host(i, host_ip(i), pages, 2 * delay if i % 4 == 3 else None, i % 5 == 4,
                 host_latency(i, latency, mix, seed)) for i in range(n)]


def describe_latency(hosts: list[Host]) -> str:
    """The latencies of ``hosts`` in a few words (for a report's header)."""
    lat = sorted(h.latency for h in hosts)
    if not lat or lat[0] == lat[-1]:
        return f"latency {lat[0] * 1000 if lat else 0:.0f} ms"
    slow = {v: sum(1 for x in lat if x == v) for v in (4.0, 1.5)}
    return (f"latency mix: {slow[4.0]} hosts at 4 s, {slow[1.5]} at 1.5 s, the rest {lat[0]:.1f}-"
            f"{max(x for x in lat if x < 1.5):.1f} s (mean {sum(lat) / len(lat):.2f} s)")


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
    def __init__(self, hosts: list[Host]) -> None:
        self.hosts = {h.ip: h for h in hosts}
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
        host = self.hosts[ip]
        if host.latency:
            await asyncio.sleep(host.latency)
        status, ctype, body = self.answer(host, path)
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
    hosts = make_hosts(args.hosts, args.pages, args.delay, args.latency, args.latency_mix, args.seed)
    web = Web(hosts)
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
    add_latency_arguments(ap)
    ap.add_argument("--log", required=True)
    asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    main()

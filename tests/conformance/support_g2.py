"""Helper G2's test support: small recording sites, runs of the real stack on them, and what both sides saw.

Every site is a ``RecordingServer`` on 127.0.0.140-179 (G2's range); a site may have a host name
(resolved by the run's resolver) and more than one address (PRAHA-07: "no other addresses").
A run is the lead's ``LocalRun`` with two observation points: a hook before each round (to act
as the operator, e.g. a stop request) and, after each round, the page texts kept in the bucket.
"""
from __future__ import annotations

import html
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

from heed_core.profile import Profile
from heed_core.work import Source

from heed.demo.web import RecordingServer, RequestRecord, Route, Site
from heed.local.runtime import REGION, LocalRun

__all__ = [
    "G2_IPS", "ObservedRun", "RunOutput", "Web", "at", "gaps", "html_page", "in_flight_overlaps",
    "round_gaps", "rss", "run_bot", "sim_time", "sitemap", "text",
]

G2_IPS = tuple(f"127.0.0.{n}" for n in range(140, 180))
TEXT = "text/plain; charset=utf-8"


# --- time ---------------------------------------------------------------------------------------
def at(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> float:
    """Epoch seconds of a UTC wall time (rounds are scheduled in UTC)."""
    return datetime(year, month, day, hour, minute, tzinfo=UTC).timestamp()


def sim_time(iso: str) -> float:
    """A journal timestamp (the run's simulated clock) as epoch seconds."""
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


# --- what a site serves -------------------------------------------------------------------------
def text(body: str, **kw: Any) -> Route:
    return Route(body=body, content_type=TEXT, **kw)


def html_page(title: str, body: str = "", head: str = "") -> str:
    return (f"<!doctype html><html lang=\"nl\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"{head}</head><body><main>{body}</main></body></html>")


def rss(base: str, items: Sequence[Mapping[str, str]], title: str = "Zprávy") -> str:
    """An RSS 2.0 feed; each item has title, path (joined to ``base``), date (RFC 822) and summary."""
    out = []
    for it in items:
        link = base + it["path"]
        summary = html.escape(it.get("summary", ""))
        out.append(f"<item><title>{html.escape(it['title'])}</title><link>{link}</link><guid>{link}</guid>"
                   f"<pubDate>{it['date']}</pubDate><description>{summary}</description></item>")
    return (f'<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>{html.escape(title)}</title>'
            f"<link>{base}/</link>{''.join(out)}</channel></rss>")


def sitemap(base: str, paths: Sequence[str]) -> str:
    urls = "".join(f"<url><loc>{html.escape(base + p)}</loc></url>" for p in paths)
    return ('<?xml version="1.0" encoding="UTF-8"?>'
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>')


# --- the sites ----------------------------------------------------------------------------------
class _PortServer(RecordingServer):
    """A RecordingServer on a given port: the second address of a site must share its port."""

    def __init__(self, site: Site, ip: str, port: int) -> None:
        self._wanted_port = port
        super().__init__(site, ip)

    def server_bind(self) -> None:
        self.server_address = (self.server_address[0], self._wanted_port)
        super().server_bind()


@dataclass
class _Host:
    name: str
    servers: list[RecordingServer]
    base: str


@dataclass
class Web:
    """Recording sites by name. ``add`` starts one and returns its base URL; ``routes`` receives
    that base so bodies can carry absolute links (feeds, sitemaps) to the site itself."""

    hosts: dict[str, _Host] = field(default_factory=dict)
    _names: dict[str, list[str]] = field(default_factory=dict)

    def add(self, name: str, ips: str | Sequence[str], routes: Callable[[str], Mapping[str, Route]],
            *, hostname: str | None = None, fallback: Route | None = None) -> str:
        addresses = [ips] if isinstance(ips, str) else list(ips)
        if not all(ip in G2_IPS for ip in addresses):
            raise ValueError(f"{addresses}: helper G2 uses 127.0.0.140-179 only")
        if len(addresses) > 1 and hostname is None:
            raise ValueError("a site with several addresses needs a host name")
        site = Site(name=name, routes={}, fallback=fallback)
        first = RecordingServer(site, ip=addresses[0])
        servers = [first] + [_PortServer(site, ip, first.port) for ip in addresses[1:]]
        base = f"http://{hostname}:{first.port}" if hostname else first.base_url
        for server in servers:
            for path, route in routes(base).items():
                server.set_route(path, route)
            server.start()
        if hostname:
            self._names[hostname.lower()] = addresses
        self.hosts[name] = _Host(name, servers, base)
        return base

    def base(self, name: str) -> str:
        return self.hosts[name].base

    def set_route(self, name: str, path: str, route: Route | None) -> None:
        for server in self.hosts[name].servers:
            server.set_route(path, route)

    def log(self, name: str) -> list[RequestRecord]:
        """Every request the site got, over all its addresses, oldest first."""
        return sorted((r for s in self.hosts[name].servers for r in s.log()), key=lambda r: r.t_start)

    def log_by_address(self, name: str) -> dict[str, list[RequestRecord]]:
        return {s.ip: s.log() for s in self.hosts[name].servers}

    def paths(self, name: str) -> list[str]:
        return [r.path for r in self.log(name)]

    def all_logs(self) -> list[RequestRecord]:
        return sorted((r for h in self.hosts.values() for s in h.servers for r in s.log()), key=lambda r: r.t_start)

    def resolver(self, host: str, port: int) -> list[str]:
        """The run's DNS: only the names added here exist."""
        addresses = self._names.get(host.lower().rstrip("."))
        if addresses is None:
            raise OSError(f"no such host {host!r}")
        return list(addresses)

    def stop(self) -> None:
        for h in self.hosts.values():
            for s in h.servers:
                s.stop()
        self.hosts.clear()


def gaps(log: Sequence[RequestRecord]) -> list[float]:
    """Seconds from the end of each request to the start of the next (AUBE-09's measure)."""
    return [b.t_start - a.t_end for a, b in pairwise(log)]


def round_gaps(log: Sequence[RequestRecord], round_walls: Sequence[float]) -> list[float]:
    """``gaps`` inside each round only: between rounds the run's clock jumps (hours of simulated
    time pass in no real time), so the site's wall clock cannot measure those gaps."""
    out: list[float] = []
    for i, start in enumerate(round_walls):
        end = round_walls[i + 1] if i + 1 < len(round_walls) else float("inf")
        out += gaps([r for r in log if start <= r.t_start < end])
    return out


def in_flight_overlaps(log: Sequence[RequestRecord]) -> list[tuple[str, str]]:
    """Pairs of requests one site had in flight at the same time (COMMON-05)."""
    ordered = sorted(log, key=lambda r: r.t_start)
    return [(a.path, b.path) for a, b in pairwise(ordered) if b.t_start < a.t_end]


# --- runs of the real stack ---------------------------------------------------------------------
RoundHook = Callable[["ObservedRun", float, list[str]], None]


class ObservedRun(LocalRun):
    """``LocalRun`` with a hook before each round (the operator's hand) and, after each round,
    a copy of every page text version kept in the bucket (``texts``: key -> versions, oldest first)."""

    def __init__(self, *args: Any, on_round: RoundHook | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.on_round = on_round
        self.texts: dict[str, list[str]] = {}
        self.round_times: list[float] = []
        self.round_walls: list[float] = []  # the sites' wall clock when each round began

    def store(self) -> Any:
        from heed_aws import runtime

        return runtime.store()

    def fire(self, t: float, tasks: list[str]) -> None:
        self.round_times.append(t)
        self.round_walls.append(time.time())
        if self.on_round is not None:
            self.on_round(self, t, tasks)
        super().fire(t, tasks)

    def drain(self) -> int:
        left = super().drain()
        self.texts = self._bucket_texts()
        return left

    def _bucket_texts(self) -> dict[str, list[str]]:
        import boto3

        s3 = boto3.session.Session(region_name=REGION).client("s3")
        versions = s3.list_object_versions(Bucket=self.res.bucket).get("Versions", [])
        out: dict[str, list[tuple[Any, int, str]]] = {}
        for n, v in enumerate(versions):
            body = s3.get_object(Bucket=self.res.bucket, Key=v["Key"], VersionId=v["VersionId"])["Body"].read()
            # S3 lists a key's versions newest first; LastModified has whole seconds, so two
            # versions written within one (rounds a simulated hour apart) keep the listing's order.
            out.setdefault(v["Key"], []).append((v["LastModified"], -n, body.decode("utf-8", "replace")))
        return {k: [t for *_, t in sorted(vs, key=lambda x: (x[0], x[1]))] for k, vs in out.items()}


@dataclass(frozen=True)
class RunOutput:
    """The four output files of a run, parsed, plus the bucket's page texts and the round times."""

    dir: Path
    summary: dict[str, Any]
    requests: list[dict[str, Any]]
    items: list[dict[str, Any]]
    skips: list[dict[str, Any]]
    texts: dict[str, list[str]]
    rounds: list[float]
    round_walls: list[float]

    def gaps(self, log: Sequence[RequestRecord]) -> list[float]:
        return round_gaps(log, self.round_walls)

    def skipped(self, reason: str) -> list[dict[str, Any]]:
        return [s for s in self.skips if s.get("reason") == reason]

    def items_of(self, detail_type: str) -> list[dict[str, Any]]:
        return [i for i in self.items if i["detail_type"] == detail_type]

    def requests_to(self, base: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["url"].startswith(base + "/")]

    def skip_urls(self, reason: str) -> set[str]:
        return {s["url"] for s in self.skipped(reason)}


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def run_bot(profile: Profile, sources: list[Source], out_dir: Path, *, start: float, until: float | None = None,
            web: Web | None = None, patience_s: float = 3.0, on_round: RoundHook | None = None) -> RunOutput:
    """Run ``profile`` over ``sources`` through the real scheduler and fetcher handlers on moto:
    a round at ``start`` and at each schedule firing up to ``until`` (clock jumps between rounds,
    waits inside a round are real)."""
    run = ObservedRun(profile, sources, start=start, until=until if until is not None else start, out_dir=out_dir,
                      allow_private=True, patience_s=patience_s,
                      resolver=web.resolver if web is not None else None, on_round=on_round)
    run.run()
    summary = json.loads((out_dir / "summary.json").read_text(encoding="utf-8"))
    return RunOutput(dir=out_dir, summary=summary, requests=_jsonl(out_dir / "requests.jsonl"),
                     items=_jsonl(out_dir / "items.jsonl"), skips=_jsonl(out_dir / "skips.jsonl"),
                     texts=dict(run.texts), rounds=list(run.round_times),
                     round_walls=list(run.round_walls))

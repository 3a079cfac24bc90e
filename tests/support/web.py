"""Recording sites for the suites that prove a promise from the sites' side, and what they saw.

Every site is a ``RecordingServer`` (``heed.demo.web``) on a loopback address of its own: the
conformance suites take 127.0.0.100-179 (``site()`` hands out 100-138 in turn, 139 is kept for
the block-list test, ``add()`` takes the addresses it is given from 140-179), the faults suite
180-199, the demo web 127.0.0.10 upward. A site added with ``add()`` may have a host name
(resolved by ``Web.resolver``, the run's DNS) and more than one address (PRAHA-07: "no other
addresses"); its routes are built from its base URL, so bodies can carry absolute links."""
from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from urllib.parse import urlsplit

from heed.demo.web import RecordingServer, RequestRecord, Route, Site

__all__ = ["BLOCK_IP", "G1_IPS", "G2_IPS", "Web", "gaps", "overlaps", "path_of", "round_gaps"]

G1_IPS = tuple(f"127.0.0.{n}" for n in range(100, 140))
G2_IPS = tuple(f"127.0.0.{n}" for n in range(140, 180))
# The last of G1's addresses is kept for the operator block-list test: a block names a domain,
# whatever the port, so no other site may share it.
BLOCK_IP = G1_IPS[-1]
_next_ip = itertools.cycle(G1_IPS[:-1])


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
    """Recording sites; ``stop()`` stops them all.

    ``site(name, routes)`` starts a site on the next free address and returns its server (its
    routes may name ``{{base}}``); ``add(name, ips, routes_of)`` starts one on the addresses
    given, optionally under a host name, and returns its base URL (``routes_of(base)`` builds
    the routes). Either way ``log(name)`` is what that site saw, ``log()`` what every site saw."""

    servers: list[RecordingServer] = field(default_factory=list)
    hosts: dict[str, _Host] = field(default_factory=dict)
    _names: dict[str, list[str]] = field(default_factory=dict)

    def site(self, name: str, routes: Mapping[str, Route], fallback: Route | None = None,
             ip: str | None = None) -> RecordingServer:
        server = RecordingServer(Site(name=name, routes=routes, fallback=fallback), ip=ip or next(_next_ip))
        self.servers.append(server)
        self.hosts.setdefault(name, _Host(name, [server], server.base_url))
        return server.start()

    def add(self, name: str, ips: str | Sequence[str], routes: Callable[[str], Mapping[str, Route]],
            *, hostname: str | None = None, fallback: Route | None = None) -> str:
        addresses = [ips] if isinstance(ips, str) else list(ips)
        if not all(ip in G2_IPS for ip in addresses):
            raise ValueError(f"{addresses}: sites on addresses of their own use 127.0.0.140-179 only")
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
        self.servers += servers
        return base

    def base(self, name: str) -> str:
        return self.hosts[name].base

    def set_route(self, name: str, path: str, route: Route | None) -> None:
        for server in self.hosts[name].servers:
            server.set_route(path, route)

    def log(self, name: str | None = None) -> list[RequestRecord]:
        """Every request the site ``name`` got over all its addresses (every site's, without a
        name), oldest first."""
        servers = self.servers if name is None else self.hosts[name].servers
        return sorted((r for s in servers for r in s.log()), key=lambda r: r.t_start)

    def log_by_address(self, name: str) -> dict[str, list[RequestRecord]]:
        return {s.ip: s.log() for s in self.hosts[name].servers}

    def paths(self, name: str) -> list[str]:
        return [r.path for r in self.log(name)]

    def resolver(self, host: str, port: int) -> list[str]:
        """The run's DNS: only the names added here exist."""
        addresses = self._names.get(host.lower().rstrip("."))
        if addresses is None:
            raise OSError(f"no such host {host!r}")
        return list(addresses)

    def stop(self) -> None:
        for server in self.servers:
            server.stop()
        self.servers.clear()
        self.hosts.clear()


# --- what the sites saw -------------------------------------------------------------------------

def path_of(url: str) -> str:
    """The request target of ``url`` as a site logs it: path and query."""
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


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


def overlaps(log: Sequence[RequestRecord]) -> list[tuple[RequestRecord, RequestRecord]]:
    """Pairs of requests that were in flight at the same time (COMMON-05)."""
    ordered = sorted(log, key=lambda r: r.t_start)
    return [(a, b) for a, b in pairwise(ordered) if b.t_start < a.t_end]

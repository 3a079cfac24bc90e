"""Decides which URLs the crawler may open and which IP addresses it may connect to (SSRF guard)."""
from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

import idna

__all__ = ["Target", "is_public_address", "parse_target"]

_IP = ipaddress.IPv4Address | ipaddress.IPv6Address

# Listed explicitly, not only through the ``ipaddress`` flags, because those flags have
# changed between Python releases (e.g. 100.64.0.0/10 and 224.0.0.0/4 are "global" to 3.11).
_BLOCKED_V4 = tuple(
    ipaddress.IPv4Network(n)
    for n in (
        "0.0.0.0/8",  # "this network", unspecified
        "10.0.0.0/8",  # RFC 1918
        "100.64.0.0/10",  # CGNAT shared space (RFC 6598)
        "127.0.0.0/8",  # loopback
        "169.254.0.0/16",  # link-local, incl. the cloud metadata service 169.254.169.254
        "172.16.0.0/12",  # RFC 1918
        "192.0.0.0/24",  # IETF protocol assignments
        "192.0.2.0/24",  # TEST-NET-1
        "192.88.99.0/24",  # deprecated 6to4 relay anycast
        "192.168.0.0/16",  # RFC 1918
        "198.18.0.0/15",  # benchmarking
        "198.51.100.0/24",  # TEST-NET-2
        "203.0.113.0/24",  # TEST-NET-3
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved, incl. broadcast 255.255.255.255
    )
)
_BLOCKED_V6 = tuple(
    ipaddress.IPv6Network(n)
    for n in (
        "::/8",  # unspecified, loopback, IPv4-compatible and other reserved space
        "64:ff9b:1::/48",  # local-use NAT64
        "100::/64",  # discard-only
        "2001::/23",  # IETF protocol assignments, incl. Teredo
        "2001:db8::/32",  # documentation
        "3fff::/20",  # documentation
        "fc00::/7",  # unique local
        "fe80::/10",  # link-local
        "fec0::/10",  # deprecated site-local
        "ff00::/8",  # multicast
    )
)
# Addresses that carry an IPv4 address inside: they are as public as the address they carry.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")

_HOST_CHARS = re.compile(r"^[a-z0-9_.-]+$")


def is_public_address(ip: str) -> bool:
    """True only for a globally routable unicast address; anything unparsable is not public."""
    try:
        addr = ipaddress.ip_address(ip)
    except (ValueError, TypeError):
        return False
    return _is_public(addr)


def _is_public(addr: _IP) -> bool:
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.scope_id:
            return False  # a zone index only makes sense on a local link
        if addr.ipv4_mapped is not None:
            return _is_public(addr.ipv4_mapped)
        if addr in _NAT64:
            return _is_public(ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF))
        if addr.sixtofour is not None and not _is_public(addr.sixtofour):
            return False
        if any(addr in net for net in _BLOCKED_V6) or addr.is_site_local:
            return False
    elif any(addr in net for net in _BLOCKED_V4):
        return False
    if (
        addr.is_private
        or addr.is_loopback
        or addr.is_link_local
        or addr.is_multicast
        or addr.is_reserved
        or addr.is_unspecified
    ):
        return False
    return addr.is_global


@dataclass(frozen=True)
class Target:
    """Where a URL points: scheme, ASCII host (IDNA, no brackets), port."""

    scheme: str
    host: str
    port: int
    is_ip: bool


def parse_target(url: str) -> Target | None:
    """The http(s) target of ``url``, or None when the crawler must not open it:
    another scheme, no host, credentials in the URL (COMMON-04: no login), a bad port."""
    if not isinstance(url, str) or any(ord(c) < 0x20 or c == "\x7f" for c in url):
        return None
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        return None
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        return None
    host = (parts.hostname or "").rstrip(".")
    if not host:
        return None
    if port is None:
        port = 443 if scheme == "https" else 80
    if port == 0:
        return None
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        return Target(scheme, literal.compressed, port, True)
    if "[" in parts.netloc or ":" in host:
        return None  # a bracketed host that is not an IP literal
    if not host.isascii():
        try:
            host = idna.encode(host, uts46=True).decode("ascii")
        except UnicodeError:  # idna.IDNAError is one
            return None
    if not _HOST_CHARS.match(host):
        return None
    return Target(scheme, host, port, False)

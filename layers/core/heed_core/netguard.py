"""Decides which URLs the crawler may open and which IP addresses it may connect to (SSRF guard)."""
from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

import idna

__all__ = ["Target", "is_local_name", "is_public_address", "parse_target"]

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
_DIGITS = {10: frozenset("0123456789"), 8: frozenset("01234567"), 16: frozenset("0123456789abcdefABCDEF")}


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
        if addr.sixtofour is not None:
            # 6to4 (2002::/16) carries its IPv4 address too (3.13's is_global says no to all of it).
            return _is_public(addr.sixtofour)
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


def is_local_name(host: str) -> bool:
    """True for ``localhost`` and every name under ``.localhost``: RFC 6761 6.3 has them mean
    this machine whatever DNS says, so they are refused without asking DNS."""
    name = host.lower().rstrip(".")
    return name == "localhost" or name.endswith(".localhost")


def _ipv4_part(part: str) -> int | None:
    # WHATWG URL "IPv4 number parser": 0x/0X hex, a leading 0 octal, else decimal.
    radix = 10
    if part[:2] in ("0x", "0X"):
        part, radix = part[2:], 16
    elif len(part) > 1 and part[0] == "0":
        part, radix = part[1:], 8
    if not part:
        return 0
    if not set(part) <= _DIGITS[radix]:
        return None
    return int(part, radix)


def _ends_in_number(host: str) -> bool:
    last = host.split(".")[-1]
    return bool(last) and (last.isascii() and last.isdigit() or _ipv4_part(last) is not None)


def _whatwg_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The address browsers (and inet_aton) read in ``2130706433``, ``0177.0.0.1``, ``0x7f.1``,
    ``127.1``; None when the host ends in a number but is no IPv4 address (an invalid URL)."""
    parts = host.split(".")
    if len(parts) > 4 or any(not p for p in parts):
        return None
    numbers = [_ipv4_part(p) for p in parts]
    if any(n is None for n in numbers):
        return None
    *head, last = [n for n in numbers if n is not None]
    if any(n > 255 for n in head) or last >= 256 ** (4 - len(head)):
        return None
    value = last
    for i, n in enumerate(head):
        value += n << (8 * (3 - i))
    return ipaddress.IPv4Address(value)


@dataclass(frozen=True)
class Target:
    """Where a URL points: scheme, ASCII host (IDNA, no brackets), port."""

    scheme: str
    host: str
    port: int
    is_ip: bool


def parse_target(url: str) -> Target | None:
    """The http(s) target of ``url``, or None when the crawler must not open it:
    another scheme, no host, credentials in the URL (COMMON-04: no login), a bad port.

    A host is read the way a browser reads it (WHATWG URL): international names are mapped
    with IDNA/UTS 46 first, then a host ending in a number is an IPv4 address in any of its
    spellings, so ``http://2130706433/`` or ``http://１２７.０.０.１/`` is ``127.0.0.1``
    (``is_ip``) and never a name handed to a resolver."""
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
    if _ends_in_number(host):
        v4 = _whatwg_ipv4(host)
        return None if v4 is None else Target(scheme, v4.compressed, port, True)
    if not _HOST_CHARS.match(host):
        return None
    return Target(scheme, host, port, False)

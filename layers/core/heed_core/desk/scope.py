"""Decides what a site owner names: a host, as they type it (``example.org``, ``example.org:8080``,
``https://www.example.org/``), as the bot knows it (an authority: scheme, name and port), and
which of the bot's records belong to it. What the desk shows after a proof is the proven host's
alone."""
from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from heed_core.urls import BadUrl, authority

__all__ = ["Scope", "parse_scope"]

_LABEL = re.compile(r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?")
_DEFAULT = {"http": 80, "https": 443}


@dataclass(frozen=True)
class Scope:
    """A host as a site owner proves it: the authority the proof is read from, and the host
    name (with a port only when it is not the scheme's default) whose records it opens."""

    host: str  # scheme://name:port
    name: str
    port: int | None  # None: the default ports (80 and 443): the name's sites

    def covers(self, url: str) -> bool:
        """Whether ``url`` (or an authority) is on this host: the same name, the same port if one."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            return False
        if (parts.hostname or "").lower() != self.name.strip("[]"):
            return False
        scheme = parts.scheme.lower()
        if scheme not in _DEFAULT:
            return False
        actual = port if port is not None else _DEFAULT[scheme]
        return actual in _DEFAULT.values() if self.port is None else actual == self.port

    @property
    def shown(self) -> str:
        return self.name if self.port is None else f"{self.name}:{self.port}"


def parse_scope(text: str) -> Scope | None:
    """The host ``text`` names (https unless it says http), or None when it names none."""
    raw = text.strip()
    if not raw or len(raw) > 300 or any(c.isspace() for c in raw):
        return None
    url = raw if "://" in raw else "https://" + raw
    try:
        parts = urlsplit(url)
        if parts.username is not None or parts.password is not None or parts.scheme.lower() not in _DEFAULT:
            return None
        authority(url)  # raises for what the crawl could never fetch
        port = parts.port
    except (BadUrl, ValueError):
        return None
    name = (parts.hostname or "").lower().rstrip(".")
    try:
        ip = ipaddress.ip_address(name)
        name = f"[{ip.compressed}]" if ip.version == 6 else ip.compressed
    except ValueError:
        try:
            name = name.encode("idna").decode("ascii")
        except UnicodeError:
            return None
        if not name or not all(_LABEL.fullmatch(label) for label in name.split(".")):
            return None
    scheme = parts.scheme.lower()
    if port is not None and port == _DEFAULT[scheme]:
        port = None
    # The authority as the crawl keys it: the name in its ASCII (IDNA) form.
    host = f"{scheme}://{name}:{port if port is not None else _DEFAULT[scheme]}"
    return Scope(host=host, name=name, port=port)

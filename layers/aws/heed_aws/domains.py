"""Which registrable domain a host belongs to: the key the table indexes a domain's hosts under
(COMMON-08, SUBSIDIE-13: everything stored from a domain is found by key)."""
from __future__ import annotations

import ipaddress
from typing import Any

from heed_core.urls import host_name

__all__ = ["registrable_domain"]

_psl: Any = None


def registrable_domain(host: str) -> str:
    """The domain a host is indexed under: its registrable domain by the public suffix list
    (news.example.co.uk -> example.co.uk), an IP address itself, a name that is a public suffix
    itself (localhost) itself. ``host`` is an authority, a URL or a bare name."""
    global _psl
    name = host_name(host) if "://" in host else host.lower()
    name = name.strip(".").strip("[]")
    try:
        return ipaddress.ip_address(name).compressed
    except ValueError:
        pass
    if _psl is None:
        from publicsuffixlist import PublicSuffixList  # parsed once (about 50 ms), offline

        _psl = PublicSuffixList()
    return str(_psl.privatesuffix(name) or name)

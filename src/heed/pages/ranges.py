"""COMMON-09 / WANNADO-02: the egress addresses as JSON, in the shape of googlebot.json, which
site owners' tooling already parses: {"creationTime": ..., "prefixes": [{"ipv4Prefix": ...}]}."""
from __future__ import annotations

import ipaddress
import json
from datetime import UTC, datetime

from heed_core.profile import Profile


def ranges(p: Profile, created: datetime) -> dict[str, object]:
    prefixes: list[dict[str, str]] = []
    for text in p.egress.ips:
        net = ipaddress.ip_network(text, strict=True)
        prefixes.append({"ipv4Prefix" if net.version == 4 else "ipv6Prefix": net.with_prefixlen})
    stamp = created.astimezone(UTC).replace(tzinfo=None)
    # googlebot.json writes UTC with microseconds and no offset: 2024-05-13T15:46:02.000000
    return {"creationTime": stamp.strftime("%Y-%m-%dT%H:%M:%S.%f"), "prefixes": prefixes}


def ranges_json(p: Profile, created: datetime) -> str:
    return json.dumps(ranges(p, created), indent=2) + "\n"

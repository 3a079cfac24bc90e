"""Decides, for one log line a site owner pasted, whether the request was ours and why.

Four checks, each yes, no or not asked: the address is in the bot's published egress list
(COMMON-09), the User-Agent is the bot's byte for byte (COMMON-01), we made a request to that
host for that path within a minute of that time (our own request log), and, where the site
owner pasted one, the Web Bot Auth signature is valid. A line is ours only when every check
asked says yes. A verdict says yes or no and which check decided: never what else the bot did,
and never another host's data."""
from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from heed_core.desk.loglines import LogLine

__all__ = ["NEAR_S", "Check", "CheckName", "Verdict", "judge", "near_request", "target_of"]

NEAR_S = 60.0  # "within a minute of that time", either way (a log stamps the arrival, we the start)
CheckName = Literal["address", "user_agent", "request", "signature"]


@dataclass(frozen=True)
class Check:
    """One check of a line: ``ok`` True or False, None when it could not be asked (the bot
    publishes no addresses, no signature was pasted, the line names no User-Agent)."""

    name: CheckName
    ok: bool | None


@dataclass(frozen=True)
class Verdict:
    line: LogLine
    ours: bool
    checks: tuple[Check, ...]

    def check(self, name: CheckName) -> Check | None:
        return next((c for c in self.checks if c.name == name), None)


def _in_egress(ip: str, egress: Sequence[str]) -> bool | None:
    if not egress:
        return None
    addr = ipaddress.ip_address(ip)
    for text in egress:
        net = ipaddress.ip_network(text, strict=False)
        if addr.version == net.version and addr in net:
            return True
    return False


def target_of(url: str) -> str:
    """A request's target as a site's log shows it: the path and the query of the URL we sent."""
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def near_request(line: LogLine, requests: Iterable[tuple[float, str]], window_s: float = NEAR_S) -> bool:
    """Whether one of ``requests`` (start time, URL; the host's, as our log has them) asked for
    the line's target within ``window_s`` of the line's time."""
    return any(abs(t - line.t) <= window_s and target_of(url) == line.target for t, url in requests)


def judge(line: LogLine, *, egress: Sequence[str], user_agent: str, requests: Iterable[tuple[float, str]],
          signature: bool | None = None) -> Verdict:
    """The verdict on ``line``: ``egress`` the bot's published prefixes, ``user_agent`` its exact
    User-Agent, ``requests`` our requests to the line's host around its time (start, URL),
    ``signature`` whether a signature pasted with the line is valid (None: none pasted)."""
    checks = (
        Check("address", _in_egress(line.ip, egress)),
        Check("user_agent", None if line.user_agent is None else line.user_agent == user_agent),
        Check("request", near_request(line, requests)),
        Check("signature", signature),
    )
    asked = [c.ok for c in checks if c.ok is not None]
    # Ours only if every check asked says so, and our log has the request: an address and a
    # User-Agent alone can be ours on a request we never made (another bot on a shared address).
    ours = all(asked) and checks[2].ok is True and (checks[1].ok is not None or checks[0].ok is not None)
    return Verdict(line, ours, checks)

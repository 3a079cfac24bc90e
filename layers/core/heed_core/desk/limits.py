"""Decides how often a client (an address) and a host may ask the desk for something: fixed
windows, counted by the desk's store. Each action has a limit per client and, where it touches a
site, per host, so no one can use the desk to make the bot knock on a site more often, nor read
the bot's log faster than a person would."""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LIMITS", "Limit", "window"]


@dataclass(frozen=True)
class Limit:
    """At most ``count`` times in ``per_s`` seconds."""

    count: int
    per_s: float


# What the desk allows, by action and by whom ("client": one address; "host": one site).
LIMITS: dict[tuple[str, str], Limit] = {
    ("page", "client"): Limit(600, 3600.0),  # any request to the desk at all
    ("lines", "client"): Limit(30, 3600.0),  # "was this you?" pastes
    ("lines", "host"): Limit(120, 3600.0),
    ("token", "client"): Limit(10, 3600.0),  # proof tokens given
    ("token", "host"): Limit(20, 3600.0),
    ("check", "client"): Limit(60, 3600.0),  # a proof checked (most only look: a fetch is asked once)
    ("fetch", "host"): Limit(6, 3600.0),  # proof files fetched from one host: six polite requests an hour
    ("host", "client"): Limit(120, 3600.0),  # a proven host's audit, explain, kept
    ("action", "host"): Limit(12, 86400.0),  # stop, slow down, remove
}


def window(action: str, who: str, key: str, now: float) -> tuple[str, Limit, float]:
    """The counter to take for ``action`` by ``who`` (``key``: the address or the host) at
    ``now``: its name, its limit, and when its window ends (the counter may go then)."""
    limit = LIMITS[(action, who)]
    start = int(now // limit.per_s)
    return f"{action}|{who}|{key}|{start}", limit, (start + 1) * limit.per_s

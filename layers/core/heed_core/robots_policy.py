"""What a robots.txt fetch result means for a host: obey its rules, allow all, deny all or skip the host."""
from __future__ import annotations

import base64
import binascii
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from heed_core.errors import InputError
from heed_core.robots import MAX_ROBOTS_BYTES, RobotsTxt, parse_robots

__all__ = [
    "RobotsCacheError",
    "RobotsFetchPolicy",
    "RobotsOutcome",
    "robots_from_response",
]

Kind = Literal["parsed", "allow_all", "deny_all", "skip_host"]
Reason = Literal[
    "robots_ok", "robots_missing", "robots_forbidden", "robots_server_error", "robots_unreachable"
]

_CHOICES: dict[str, tuple[str, ...]] = {
    "on_401_403": ("allow", "deny"),
    "on_4xx": ("allow", "deny"),
    "on_5xx": ("deny", "skip_host"),
    "on_unreachable": ("deny", "skip_host"),
}
_CACHE_VERSION = 1


class RobotsCacheError(InputError, ValueError):
    """A cached robots.txt record that cannot be rebuilt; treat it as a cache miss."""

    def __init__(self, message: str = "") -> None:
        super().__init__(message, reason="bad_robots_cache")


@dataclass(frozen=True)
class RobotsFetchPolicy:
    """A bot's promise about unreadable robots.txt. Defaults are RFC 9309 2.3.1."""

    on_401_403: Literal["allow", "deny"] = "allow"
    on_4xx: Literal["allow", "deny"] = "allow"
    on_5xx: Literal["deny", "skip_host"] = "deny"
    on_unreachable: Literal["deny", "skip_host"] = "deny"

    def __post_init__(self) -> None:
        for key, choices in _CHOICES.items():
            value = getattr(self, key)
            if value not in choices:
                raise ValueError(f"robots.{key} must be one of {choices}, not {value!r}")

    @classmethod
    def of(cls, rules: Any) -> RobotsFetchPolicy:
        """The policy a profile's typed ``robots`` section (``profile_keys.RobotsRules``) states."""
        return cls(**{key: getattr(rules, key) for key in _CHOICES})

    @classmethod
    def from_mapping(cls, section: Mapping[str, Any]) -> RobotsFetchPolicy:
        """Build from a profile's `robots` section. Keys not starting with `on_` belong to
        other modules and are ignored; an unknown `on_*` key is a typo and is refused."""
        if not isinstance(section, Mapping):
            raise ValueError(f"robots section must be a mapping, not {type(section).__name__}")
        for key in section:
            if str(key).startswith("on_") and key not in _CHOICES:
                raise ValueError(f"robots.{key} is not a known setting ({sorted(_CHOICES)})")
        return cls(**{key: section[key] for key in _CHOICES if key in section})


@dataclass(frozen=True)
class RobotsOutcome:
    """The decision for a host, plus the raw response it came from (to cache and rebuild)."""

    kind: Kind
    robots: RobotsTxt | None  # None only for skip_host
    reason: Reason
    status: int | None = None
    error: str | None = None
    body: bytes = field(default=b"", repr=False)

    def to_dict(self) -> dict[str, Any]:
        """A small JSON-able record. Only a 2xx body matters, and it is zlib-compressed
        because a DynamoDB item holds at most 400 KB."""
        body = self.body[: MAX_ROBOTS_BYTES + 1] if self.status and 200 <= self.status < 300 else b""
        return {
            "v": _CACHE_VERSION,
            "status": self.status,
            "error": self.error,
            "body_z": base64.b64encode(zlib.compress(body, 9)).decode("ascii"),
            "reason": self.reason,  # for people reading the table; rebuilt, not trusted
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], policy: RobotsFetchPolicy) -> RobotsOutcome:
        """Rebuild under the bot's *current* policy, so a profile change applies to cached hosts."""
        try:
            if data["v"] != _CACHE_VERSION:
                raise RobotsCacheError(f"unknown robots cache version {data['v']!r}")
            status, error = data["status"], data["error"]
            if status is not None and (type(status) is not int or not 100 <= status <= 599):
                raise RobotsCacheError(f"bad cached status {status!r}")
            if error is not None and not isinstance(error, str):
                raise RobotsCacheError(f"bad cached error {error!r}")
            inflater = zlib.decompressobj()
            body = inflater.decompress(base64.b64decode(data["body_z"], validate=True),
                                       MAX_ROBOTS_BYTES + 1)
        except (KeyError, TypeError, binascii.Error, zlib.error) as exc:
            raise RobotsCacheError(f"unreadable robots cache record: {exc!r}") from exc
        return robots_from_response(status, error, body, policy)


def _decide(
    choice: str, label: str, reason: Reason, status: int | None, error: str | None
) -> RobotsOutcome:
    if choice == "allow":
        robots = RobotsTxt.allow_all(f"(robots.txt {label}: allow all)")
        return RobotsOutcome("allow_all", robots, reason, status, error)
    if choice == "deny":
        robots = RobotsTxt.disallow_all(f"(robots.txt {label}: deny all)")
        return RobotsOutcome("deny_all", robots, reason, status, error)
    return RobotsOutcome("skip_host", None, reason, status, error)


def robots_from_response(
    status: int | None, error: str | None, body: bytes, policy: RobotsFetchPolicy
) -> RobotsOutcome:
    """RFC 9309 2.3.1 with each bot's promise on top. Redirects are followed by the caller
    (up to 5 hops, each a new request); a 3xx that still arrives here counts as unreachable."""
    if status is not None and 200 <= status < 300:
        # An HTML error page or garbage served as 200 yields no rules: allow (RFC 9309 2.3.1.1).
        return RobotsOutcome("parsed", parse_robots(body), "robots_ok", status, error, body)
    if status in (401, 403):
        # SPRING-10 refuses to crawl on 401/403; RFC 9309 (and SUBSIDIE-11) read it as allow-all.
        return _decide(policy.on_401_403, str(status), "robots_forbidden", status, error)
    if status == 429:
        # "Too many requests" is the server asking us to back off, not "no robots.txt":
        # read it as a server error, like Google does (stricter reading, cf. SPRING-05).
        return _decide(policy.on_5xx, "429", "robots_server_error", status, error)
    if status is not None and 400 <= status < 500:
        return _decide(policy.on_4xx, str(status), "robots_missing", status, error)
    if status is not None and 500 <= status < 600:
        # SPRING-10 / WANNADO-04: nothing is fetched; SUBSIDIE-11: skip the host this round.
        return _decide(policy.on_5xx, str(status), "robots_server_error", status, error)
    label = f"{status} not followed" if status is not None else f"unreachable ({error or 'no response'})"
    return _decide(policy.on_unreachable, label, "robots_unreachable", status, error)

"""Decides whether a text-and-data-mining reservation (TDMRep) forbids keeping a page's text.

PRAHA-03: a reservation may come from ``/.well-known/tdmrep.json``, a ``tdm-reservation``
response header or a ``<meta name="tdm-reservation">`` tag. They are read in that order,
each later one overriding the earlier ones (W3C TDMRep Community Group report).
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from .signals import DEFAULT_MAX_BYTES, Page, meta_values, parse_html

__all__ = [
    "TdmDecision",
    "TdmRepError",
    "TdmRule",
    "TdmRules",
    "parse_tdmrep_json",
    "reservation",
]

Headers = Iterable[tuple[str, str]]

TDMREP_MAX_BYTES = 512 * 1024
MAX_RULES = 10_000

SOURCE_FILE = "tdmrep.json"
SOURCE_HEADER = "header"
SOURCE_META = "meta"

_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_PCT = re.compile(r"%([0-9A-Fa-f]{2})")


def _canonical(path: str) -> str:
    """Decode percent-escapes of unreserved characters and upper-case the rest, so that
    ``/%7Euser`` and ``/~user`` compare equal (TDMRep reuses robots.txt matching)."""

    def fix(m: re.Match[str]) -> str:
        ch = chr(int(m.group(1), 16))
        return ch if ch in _UNRESERVED else "%" + m.group(1).upper()

    return _PCT.sub(fix, path)


def _compile(location: str) -> re.Pattern[str]:
    anchored = location.endswith("$")
    body = location[:-1] if anchored else location
    parts = [re.escape(_canonical(p)) for p in body.split("*")]
    return re.compile(".*".join(parts) + (r"\Z" if anchored else ""), re.DOTALL)


def _value(raw: object) -> int | None:
    """1 or 0; anything else is a protocol error, which the report says means unset."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw if raw in (0, 1) else None
    if isinstance(raw, str) and raw.strip() in ("0", "1"):
        return int(raw.strip())
    return None


def _path_of(path_or_url: str) -> str:
    if "://" in path_or_url:
        parts = urlsplit(path_or_url)
        path = parts.path or "/"
        return path + ("?" + parts.query if parts.query else "")
    return path_or_url or "/"


@dataclass(frozen=True)
class TdmRule:
    location: str
    reservation: int
    policy: str | None
    pattern: re.Pattern[str]

    def matches(self, path: str) -> bool:
        return self.pattern.match(_canonical(_path_of(path))) is not None


@dataclass(frozen=True)
class TdmRules:
    """The rules of one host's tdmrep.json, in file order. ``skipped`` counts entries
    that were not usable rules (wrong shape, missing location, invalid reservation)."""

    rules: tuple[TdmRule, ...]
    skipped: int = 0

    def match(self, path: str) -> TdmRule | None:
        """The FIRST rule whose location matches (the report: the most specific match
        is the first in sequence); matching is case-sensitive."""
        for rule in self.rules:
            if rule.matches(path):
                return rule
        return None

    def lookup(self, path: str) -> int | None:
        rule = self.match(path)
        return rule.reservation if rule is not None else None


@dataclass(frozen=True)
class TdmRepError:
    """Why a tdmrep.json could not be used: ``too_large``, ``empty``, ``malformed_json``,
    ``not_a_list``. The caller treats the file as absent (the header and meta still count)."""

    error: str


def parse_tdmrep_json(body: bytes, *, max_bytes: int = TDMREP_MAX_BYTES) -> TdmRules | TdmRepError:
    if len(body) > max_bytes:
        return TdmRepError("too_large")
    if not body.strip():
        return TdmRepError("empty")
    try:
        data = json.loads(body.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return TdmRepError("malformed_json")
    if not isinstance(data, list):
        return TdmRepError("not_a_list")
    rules: list[TdmRule] = []
    skipped = 0
    for entry in data[:MAX_RULES]:
        rule = _rule(entry)
        if rule is None:
            skipped += 1
        else:
            rules.append(rule)
    skipped += max(0, len(data) - MAX_RULES)
    return TdmRules(tuple(rules), skipped)


def _rule(entry: object) -> TdmRule | None:
    # An unusable entry is skipped rather than read as "unset": a later, broader rule
    # that does reserve then still applies (the stricter reading).
    if not isinstance(entry, dict):
        return None
    location = entry.get("location")
    value = _value(entry.get("tdm-reservation"))
    if not isinstance(location, str) or not location.strip() or value is None:
        return None
    location = location.strip()
    if "://" in location:
        location = _path_of(location)
    elif not location.startswith(("/", "*")):
        location = "/" + location
    policy = entry.get("tdm-policy")
    return TdmRule(location, value, policy if isinstance(policy, str) and policy.strip() else None, _compile(location))


@dataclass(frozen=True)
class TdmDecision:
    """``reserved`` is True only for an effective value of 1. ``source`` says which
    technique decided (``tdmrep.json``, ``header``, ``meta``) or None when nothing was
    declared; ``error`` is set when the body was too large to look for a meta tag."""

    reserved: bool
    source: str | None
    policy: str | None
    error: str | None = None


def _layer(values: list[str], policies: list[str]) -> tuple[int, str | None] | None:
    parsed = [v for v in (_value(x) for x in values) if v is not None]
    if not parsed:
        # An absent or invalid value never resets an earlier technique's answer.
        return None
    # Two declarations in one place that disagree: the reservation wins (stricter reading).
    value = 1 if 1 in parsed else 0
    policy = next((p.strip() for p in policies if p.strip()), None)
    return value, policy


def reservation(
    rules: TdmRules | TdmRepError | None,
    path: str,
    headers: Headers,
    body: bytes | None,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    page: Page | None = None,
) -> TdmDecision:
    """``page``: the body's parse, shared with the turn's other readers (only read here)."""
    value: int | None = None
    source: str | None = None
    policy: str | None = None

    if isinstance(rules, TdmRules):
        rule = rules.match(path)
        if rule is not None:
            value, source, policy = rule.reservation, SOURCE_FILE, rule.policy

    hdrs = list(headers)
    got = _layer(
        [v for k, v in hdrs if k.strip().lower() == "tdm-reservation"],
        [v for k, v in hdrs if k.strip().lower() == "tdm-policy"],
    )
    if got is not None:
        (value, policy), source = got, SOURCE_HEADER

    error = None
    if body:
        if len(body) > max_bytes:
            error = "too_large"
        else:
            root = page.root() if page is not None else parse_html(body, max_bytes=max_bytes)
            got = _layer(meta_values(root, "tdm-reservation"), meta_values(root, "tdm-policy"))
            if got is not None:
                (value, policy), source = got, SOURCE_META

    return TdmDecision(reserved=value == 1, source=source, policy=policy, error=error)

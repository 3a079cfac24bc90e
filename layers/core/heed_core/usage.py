"""Decides whether a page's text may be kept, given the site's AI usage preferences (AIPREF) and
what the bot declares it does with what it reads (its profile's ``usage`` list).

Preferences come from ``Content-Usage`` lines in robots.txt (draft-ietf-aipref-attach section 3:
the token's group, the longest matching path; lines tied on length all apply) and from the
``Content-Usage`` response header (section 2). Both use the vocabulary of draft-ietf-aipref-vocab:
an RFC 9651 dictionary of ``train-ai``, ``ai-use`` and ``search``, each ``y`` or ``n``; unknown keys,
parameters and values are ignored, a dictionary that does not parse states nothing (section 6).
Several statements combine most restrictively (vocab 5.1): one ``n`` for a declared use refuses.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import http_sf

from heed_core.robots import RobotsTxt

__all__ = ["REFUSED", "USES", "Statement", "UsageDecision", "decide", "explain", "parse_preferences",
           "statements"]

# draft-ietf-aipref-vocab, "Usage Category Labels" (case sensitive).
USES = ("train-ai", "ai-use", "search")
REFUSED = "usage_refused"  # the skip reason, like tdm_reserved for TDMRep
HEADER = "content-usage"

Headers = Iterable[tuple[str, str]]


@dataclass(frozen=True)
class Statement:
    """One statement of preference and where a site owner can find it."""

    source: str  # "robots.txt" or "header"
    text: str  # the line or the header value, as sent
    preferences: Mapping[str, bool] = field(default_factory=dict)  # use -> allowed; absent: unknown
    line: int | None = None
    group: str | None = None

    def where(self) -> str:
        if self.source == "robots.txt":
            return f'robots.txt line {self.line} "{self.text}" (group {self.group})'
        return f'Content-Usage header "{self.text}"'


@dataclass(frozen=True)
class UsageDecision:
    """``keep`` False only with ``reason == "usage_refused"``, the refused ``use`` and the
    ``statement`` that refused it; ``detail`` names the rule in words."""

    keep: bool
    reason: str | None
    detail: str
    use: str | None = None
    statement: Statement | None = None


def parse_preferences(value: str | bytes) -> dict[str, bool]:
    """vocab section 6.4: ``y`` allows, ``n`` disallows, anything else (absent, not a Token, another
    Token, a parse failure such as an upper-case key) leaves that use unknown."""
    raw = value.encode("utf-8", "replace") if isinstance(value, str) else value
    try:
        parsed = cast(dict[str, Any], http_sf.parse(raw, tltype="dictionary"))
    except http_sf.StructuredFieldError:
        return {}
    out: dict[str, bool] = {}
    for use in USES:
        item = parsed.get(use)
        if item is not None and isinstance(item[0], http_sf.Token) and str(item[0]) in ("y", "n"):
            out[use] = str(item[0]) == "y"
    return out


def statements(robots: RobotsTxt | None, url: str, token: str, headers: Headers) -> list[Statement]:
    """Every statement that applies to ``url``: the winning robots.txt line(s), then the header."""
    found: list[Statement] = []
    lines = robots.usage_lines(url, token) if robots is not None else ()
    for line in lines:
        if line.specificity != lines[0].specificity:
            break  # the longest match wins; lines tied with it all apply (attach 3.1)
        found.append(Statement("robots.txt", f"Content-Usage: {line.path} {line.preference}",
                               parse_preferences(line.preference), line.line, line.group))
    values = [v for k, v in headers if k.strip().lower() == HEADER]
    if values:
        # RFC 9110 5.3: field lines of one name are one field value, joined with commas.
        value = ", ".join(values)
        found.append(Statement("header", value, parse_preferences(value.encode("latin-1", "replace"))))
    return found


def _check_uses(uses: Sequence[str]) -> None:
    unknown = [u for u in uses if u not in USES]
    if unknown:
        raise ValueError(f"unknown declared use(s) {unknown} (known: {', '.join(USES)})")


def decide(
    uses: Sequence[str], *, robots: RobotsTxt | None, url: str, token: str, headers: Headers
) -> UsageDecision:
    """May the text of ``url`` be kept by a bot that declares ``uses``? Refused when any statement
    says ``n`` to a declared use; a bot declaring none of the uses a statement names is unaffected.
    ``robots`` is the robots.txt that was current when the page was fetched (attach 3.3)."""
    _check_uses(uses)
    found = statements(robots, url, token, headers)
    for use in uses:
        for statement in found:
            if statement.preferences.get(use) is False:
                return UsageDecision(False, REFUSED, f"{use}=n by {statement.where()}", use, statement)
    if not uses:
        return UsageDecision(True, None, "the profile declares no use")
    allowed = [u for u in uses if any(s.preferences.get(u) for s in found)]
    if allowed:
        return UsageDecision(True, None, f"allowed: {', '.join(allowed)}; the rest unknown")
    return UsageDecision(True, None, "no preference stated for the declared uses")


def _word(allowed: bool | None) -> str:
    return "unknown" if allowed is None else "y" if allowed else "n"


def explain(
    uses: Sequence[str], *, robots: RobotsTxt | None, url: str, token: str, headers: Headers
) -> dict[str, Any]:
    """The decision as a JSON-able dict: each declared use with its outcome and the statements
    (rule and line) behind it, and every statement that applies to the URL."""
    decision = decide(uses, robots=robots, url=url, token=token, headers=headers)
    found = statements(robots, url, token, headers)
    per_use: dict[str, Any] = {}
    for use in uses:
        said = [(s, s.preferences[use]) for s in found if use in s.preferences]
        outcome = None if not said else all(v for _, v in said)
        per_use[use] = {"preference": _word(outcome), "by": [f"{_word(v)} from {s.where()}" for s, v in said]}
    return {
        "keep": decision.keep,
        "reason": decision.reason,
        "detail": decision.detail,
        "declared": list(uses),
        "uses": per_use,
        "statements": [{"source": s.source, "text": s.text, "line": s.line, "group": s.group,
                        "preferences": {u: _word(v) for u, v in s.preferences.items()}} for s in found],
    }

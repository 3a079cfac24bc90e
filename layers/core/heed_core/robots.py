"""robots.txt per RFC 9309: which group binds a crawler token, and whether it may fetch a URL."""
from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MAX_ROBOTS_BYTES",
    "RobotsTxt",
    "UsageLine",
    "Verdict",
    "effective_delay",
    "explain",
    "parse_robots",
    "path_to_match",
    "product_token",
]

# RFC 9309 2.5: crawlers must parse at least the first 500 KiB; we parse exactly that.
MAX_ROBOTS_BYTES = 500 * 1024
_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
# Signatures of files that are sometimes served as robots.txt by mistake: gzip, zip, PNG, GIF,
# JPEG, PDF. Their bytes can hold accidental "Disallow" text, but never the owner's rules.
_BINARY_MAGIC = (b"\x1f\x8b", b"PK\x03\x04", b"\x89PNG", b"GIF8", b"\xff\xd8\xff", b"%PDF-")
_NOT_TEXT_CHARS = re.compile(r"[\x00-\x08\x0e-\x1f\ufffd]")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# RFC 9309 2.2.1 allows letters, "_" and "-"; digits are kept too because real tokens carry them.
_TOKEN = re.compile(r"[A-Za-z0-9_-]*")
_DIRECTIVES = {
    "user-agent": "user-agent", "useragent": "user-agent", "user agent": "user-agent",
    "allow": "allow",
    # Misspellings of Disallow are read as Disallow: the owner's intent is plain, and the
    # stricter reading wins (PROMISES.md preface). Allow gets no such generosity.
    "disallow": "disallow", "dissallow": "disallow", "dissalow": "disallow",
    "disalow": "disallow", "diasllow": "disallow", "disallaw": "disallow",
    "crawl-delay": "crawl-delay", "crawl delay": "crawl-delay", "crawldelay": "crawl-delay",
    "sitemap": "sitemap", "site-map": "sitemap",
    "content-usage": "content-usage",  # draft-ietf-aipref-attach 3 (issue 13)
}
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# "[" and "]" are escaped too: they cannot stand in a path (RFC 3986 3.3), so every request carries
# them as %5B / %5D (heed_core.urls, requests), and a rule written with them means those requests.
_PLAIN = re.compile(r"[A-Za-z0-9\-._~:/?@!$&'()*+,;=]*")
_TO_FIX = re.compile(r"%([0-9A-Fa-f]{2})|%|[^A-Za-z0-9\-._~:/?#@!$&'()*+,;=]")
_ABSOLUTE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?]*")
_DELAY = re.compile(r"\+?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


@dataclass(frozen=True)
class Verdict:
    """The answer for one URL, with the evidence a site owner can check in their file."""

    allowed: bool
    group: str | None
    rule: str | None
    line: int | None
    crawl_delay: float | None


@dataclass(frozen=True)
class UsageLine:
    """A Content-Usage line that matches a URL (draft-ietf-aipref-attach 3): the owner's
    preference text, unparsed (``heed_core.usage`` reads the vocabulary), and where it was."""

    group: str
    path: str  # as written
    preference: str
    line: int
    specificity: int


@dataclass(frozen=True)
class _Rule:
    allow: bool
    pattern: str  # as written, for explanations
    line: int
    norm: str  # normalised, "$" anchor removed
    anchored: bool

    @property
    def specificity(self) -> int:
        # RFC 9309 2.2.2: the most specific match is the one with the most octets.
        return len(self.norm) + self.anchored

    def text(self) -> str:
        return f"{'Allow' if self.allow else 'Disallow'}: {self.pattern}"

    def matches(self, path: str) -> bool:
        if "*" not in self.norm:
            return path == self.norm if self.anchored else path.startswith(self.norm)
        first, *middle, last = self.norm.split("*")
        if not path.startswith(first):
            return False
        pos = len(first)
        # Leftmost placement of each literal piece is optimal for "*"-only patterns,
        # so this never backtracks (stress files carry long wildcard rules).
        for part in middle:
            found = path.find(part, pos)
            if found < 0:
                return False
            pos = found + len(part)
        if self.anchored:
            return len(path) - len(last) >= pos and path.endswith(last)
        return path.find(last, pos) >= 0


@dataclass(frozen=True)
class _Group:
    name: str
    rules: tuple[_Rule, ...]  # most specific first, Allow before Disallow, then by line
    crawl_delay: float | None
    usage: tuple[tuple[_Rule, str], ...] = ()  # Content-Usage (path rule, preference), in file order


@dataclass(frozen=True)
class RobotsTxt:
    """A parsed robots.txt, or a fixed answer chosen by the status policy."""

    groups: Mapping[str, _Group] = field(default_factory=dict, hash=False, repr=False)
    sitemaps: tuple[str, ...] = ()
    truncated: bool = False
    fixed: tuple[bool, str] | None = None  # (allowed, reason) for allow_all / disallow_all
    not_text: bool = False  # NUL bytes, a binary format's signature, or mostly undecodable

    @classmethod
    def allow_all(cls, reason: str = "(allow all)") -> RobotsTxt:
        return cls(fixed=(True, reason))

    @classmethod
    def disallow_all(cls, reason: str = "(deny all)") -> RobotsTxt:
        return cls(fixed=(False, reason))

    def group_for(self, token: str) -> _Group | None:
        """COMMON-03 / WANNADO-04: the group naming the product token, else `*`, else none."""
        name = product_token(token).lower()
        return self.groups.get(name) if name in self.groups else self.groups.get("*")

    def crawl_delay(self, token: str) -> float | None:
        group = self.group_for(token)
        return None if self.fixed is not None or group is None else group.crawl_delay

    def verdict(self, url: str, token: str) -> Verdict:
        if self.fixed is not None:
            return Verdict(self.fixed[0], None, self.fixed[1], None, None)
        group = self.group_for(token)
        name, delay = (group.name, group.crawl_delay) if group else (None, None)
        path = path_to_match(url)
        if path.partition("?")[0] == "/robots.txt":
            # RFC 9309 2.2.2: /robots.txt itself is implicitly allowed.
            return Verdict(True, name, "(/robots.txt is always allowed)", None, delay)
        for rule in group.rules if group else ():
            if rule.matches(path):
                return Verdict(rule.allow, name, rule.text(), rule.line, delay)
        return Verdict(True, name, None, None, delay)

    def usage_lines(self, url: str, token: str) -> tuple[UsageLine, ...]:
        """Every Content-Usage line of the token's group that matches ``url`` by the Allow/Disallow
        path rules (draft-ietf-aipref-attach 3.1), most specific first, then by line."""
        group = None if self.fixed is not None else self.group_for(token)
        if group is None or not group.usage:
            return ()
        path = path_to_match(url)
        found = [UsageLine(group.name, rule.pattern, pref, rule.line, rule.specificity)
                 for rule, pref in group.usage if rule.matches(path)]
        return tuple(sorted(found, key=lambda u: (-u.specificity, u.line)))


_PRODUCT = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)/[0-9]")
# Product tokens every browser-like User-Agent carries; a crawler's own token is another one.
_GENERIC_PRODUCTS = frozenset({"mozilla", "applewebkit", "chrome", "chromium", "safari", "gecko", "firefox",
                               "version", "mobile", "edg", "edge", "opr", "khtml", "like", "compatible"})


def token_of_agent(agent: str) -> str:
    """The robots.txt token a User-Agent string names: the string itself when it is a bare token,
    else its first product that is not a browser's (``Mozilla/5.0 (compatible; MyAube/0.1; +...)``
    is ``MyAube``), else its first product."""
    text = agent.strip()
    if _TOKEN.fullmatch(text):
        return text
    products = [m.group(1) for m in _PRODUCT.finditer(text)]
    own = [p for p in products if p.lower() not in _GENERIC_PRODUCTS]
    return (own or products or [product_token(text)])[0]


def product_token(agent: str) -> str:
    """`SpringStudioBot/1.0 (+https://...)` -> `SpringStudioBot`; `Foo Bar` -> `Foo`."""
    match = _TOKEN.match(agent.strip())
    return match.group(0) if match else ""


def _normalise(text: str) -> str:
    """RFC 9309 2.2.2: one spelling per path. Escapes of unreserved characters are decoded,
    other escapes upper-cased, non-ASCII and unsafe characters percent-encoded as UTF-8."""
    if _PLAIN.fullmatch(text):
        return text

    def fix(m: re.Match[str]) -> str:
        if m.group(1):
            char = chr(int(m.group(1), 16))
            return char if char in _UNRESERVED else "%" + m.group(1).upper()
        if m.group(0) == "%":
            return "%25"
        return "".join(f"%{b:02X}" for b in m.group(0).encode("utf-8", "surrogatepass"))

    return _TO_FIX.sub(fix, text)


def path_to_match(url: str) -> str:
    """The normalised path and query of a URL (or of a bare path); scheme, host and
    fragment never take part in matching."""
    url = url.partition("#")[0]
    absolute = _ABSOLUTE.match(url)
    rest = url[absolute.end():] if absolute else url
    # RFC 9309 2.2.3: in a rule "*" and "$" are special, so an owner who means them literally
    # writes %2A / %24; a literal one in the URL is compared in that spelling.
    return _literal_specials(_normalise(rest if rest.startswith("/") else "/" + rest))


def _literal_specials(text: str) -> str:
    return text.replace("*", "%2A").replace("$", "%24") if "*" in text or "$" in text else text


def _make_rule(allow: bool, value: str, line: int) -> _Rule:
    anchored = value.endswith("$")
    core = value[:-1] if anchored else value
    if not core.startswith(("/", "*")):
        # A rule written as a full URL or without its leading slash: read it as the path the
        # owner meant rather than as a pattern that can never match (stricter reading).
        absolute = _ABSOLUTE.match(core)
        core = core[absolute.end():] if absolute else core
        core = core if core.startswith("/") else "/" + core
    # A "$" anywhere but at the end is a literal character (RFC 9309 2.2.3), spelled as in the URL.
    norm = re.sub(r"\*+", "*", _normalise(core)).replace("$", "%24")
    return _Rule(allow, value, line, norm, anchored)


def _usage_rule(value: str, line: int) -> tuple[_Rule, str] | None:
    """``Content-Usage: [path] usage-pref``: the path runs to the first SP or HTAB; a value that
    does not start with a path applies to the whole site."""
    if value.startswith(("/", "*")):
        path, _, pref = value.replace("\t", " ").partition(" ")
    else:
        path, pref = "/", value
    pref = pref.strip()
    return (_make_rule(False, path, line), pref) if pref else None


def _parse_delay(value: str) -> float | None:
    """Crawl-delay seconds; garbage, negative and NaN are ignored, huge values kept (capped later)."""
    if not _DELAY.fullmatch(value):
        return None
    return min(float(value), sys.float_info.max)


def _directive(line: str) -> tuple[str, str] | None:
    text = line.partition("#")[0].strip()
    if not text:
        return None
    key, colon, value = text.partition(":")
    if colon and (name := _DIRECTIVES.get(" ".join(key.split()).lower())):
        return name, value.strip()
    # A missing colon ("disallow /") is a common mistake whose meaning is plain.
    words = text.split(maxsplit=2)
    if len(words) >= 2 and (name := _DIRECTIVES.get(f"{words[0]} {words[1]}".lower())):
        return name, words[2] if len(words) == 3 else ""
    if (name := _DIRECTIVES.get(words[0].lower())) and len(words) >= 2:
        return name, text[len(words[0]):].strip()
    return None


def _looks_binary(text: str) -> bool:
    """A NUL, or more than one character in twenty a control character or undecodable."""
    if "\x00" in text:
        return True
    return len(_NOT_TEXT_CHARS.findall(text)) * 20 > len(text) > 0


def _agent_key(value: str) -> str:
    if value == "*" or value.startswith(("* ", "*\t")):
        return "*"
    return product_token(value).lower()


def parse_robots(body: bytes, *, max_bytes: int = MAX_ROBOTS_BYTES) -> RobotsTxt:
    """Parse a robots.txt body. Never raises: unreadable lines are skipped."""
    truncated = False
    if len(body) >= max_bytes:
        # RFC 9309 2.5. A line cut in half could turn "Allow: /a/b" into "Allow: /a", so a
        # partial last line is dropped. A body of exactly max_bytes may already be a
        # transport's cut, so it gets the same treatment.
        head = body[:max_bytes]
        whole = head.endswith((b"\n", b"\r")) or body[max_bytes:max_bytes + 1] in (b"\n", b"\r")
        if not whole:
            head = head[: max(head.rfind(b"\n"), head.rfind(b"\r")) + 1]
        truncated, body = len(body) > max_bytes or not whole, head
    if body.startswith(_UTF16_BOMS):
        # RFC 9309 2.3 asks for UTF-8, but a file saved as UTF-16 still says what its owner
        # meant (crawler-commons reads it too); read as UTF-8 it would be no rules at all.
        text = body.decode("utf-16", "replace")
    else:
        for bom in (_BOM, _BOM[:2], _BOM[:1]):  # a BOM, or what is left of a damaged one
            if body.startswith(bom):
                body = body[len(bom):]
                break
        text = body.decode("utf-8", "replace")
    not_text = body.startswith(_BINARY_MAGIC) or _looks_binary(text)

    rules: dict[str, list[_Rule]] = {}
    delays: dict[str, list[float]] = {}
    usages: dict[str, list[tuple[_Rule, str]]] = {}
    sitemaps: dict[str, None] = {}  # ordered, without repeats
    agents: list[str] = []  # the group being built
    delay_agents: list[str] = []  # the user-agent lines a Crawl-delay line would belong to
    in_members = False  # a rule was seen since the last user-agent line
    after_delay = False  # the last directive was a Crawl-delay line
    for number, line in enumerate(_LINE_BREAK.split(text), start=1):
        parsed = _directive(line)
        if parsed is None:
            continue
        name, value = parsed
        if name == "sitemap":
            if value:
                sitemaps.setdefault(value)
        elif name == "user-agent":
            if in_members:  # RFC 9309 2.1: a user-agent line after rules starts a new group
                agents, delay_agents, in_members = [], [], False
            elif after_delay:
                delay_agents = []
            after_delay = False
            key = _agent_key(value)
            for names in (agents, delay_agents):
                if key not in names:
                    names.append(key)
            rules.setdefault(key, [])  # an empty group still binds its agent
            delays.setdefault(key, [])
            usages.setdefault(key, [])
        elif not agents:
            continue  # members before any user-agent line belong to no group
        elif name == "crawl-delay":
            # RFC 9309 2.2.4: a record other than Allow/Disallow must not end the group, so
            # "User-agent: a / Crawl-delay: 1 / User-agent: b / Disallow: /" is one group of a
            # and b (Google's reference parser, crawler-commons). The delay itself belongs to the
            # user-agent lines just above it, as crawler-commons reads it and as the owner meant.
            after_delay = True
            delay = _parse_delay(value)
            if delay is not None:
                for key in delay_agents:
                    delays[key].append(delay)
        elif name == "content-usage":
            # Issue 13: the attach draft makes this a rule of the group, but here it is read as if
            # the line were absent for grouping (like Crawl-delay), so Allow, Disallow and
            # Crawl-delay mean exactly what they meant before Content-Usage was known.
            usage = _usage_rule(value, number)
            if usage is not None:
                for key in agents:
                    usages[key].append(usage)
        else:
            in_members, after_delay = True, False  # RFC 9309 2.1: a rule ends the user-agent lines
            if value:  # "Disallow:" with no path is no rule at all
                rule = _make_rule(name == "allow", value, number)
                for key in agents:
                    rules[key].append(rule)

    # RFC 9309 2.2.1: several groups for one agent are merged into one. Of several
    # Crawl-delay values the largest is kept: the stricter reading wins.
    groups = {
        key: _Group(
            key,
            tuple(sorted(found, key=lambda r: (-r.specificity, not r.allow, r.line))),
            max(delays[key], default=None),
            tuple(usages[key]),
        )
        for key, found in rules.items()
        if key
    }
    return RobotsTxt(groups, tuple(sitemaps), truncated, not_text=not_text)


def effective_delay(min_delay_s: float, crawl_delay: float | None, cap_s: float) -> float:
    """COMMON-05: the bot's own gap, raised by Crawl-delay up to the bot's cap
    (SPRING-08: 10 s / 60 s, SUBSIDIE-07: cap 30 s, AUBE-04/09: 1.5 s / 10 s)."""
    if crawl_delay is None:
        return min_delay_s
    return max(min_delay_s, min(crawl_delay, cap_s))


def explain(
    robots: RobotsTxt, url: str, token: str, *, min_delay_s: float, cap_s: float
) -> dict[str, Any]:
    """The verdict as a JSON-able dict, with the gap that will actually be kept."""
    v = robots.verdict(url, token)
    return {
        "allowed": v.allowed,
        "group": v.group,
        "rule": v.rule,
        "line": v.line,
        "crawl_delay": v.crawl_delay,
        "effective_delay": effective_delay(min_delay_s, v.crawl_delay, cap_s),
    }

"""Decides what a pasted log line says: who asked (the address), when, for what, as whom.

A line is the Common or Combined Log Format (Apache's and nginx's defaults, with or without a
virtual host in front) or typed in by hand as ``ADDRESS TIME PATH USER-AGENT`` (the time in ISO
8601; UTC when it names no zone). Each line comes back read or refused with a reason; a paste
too big is refused whole, before any of it is read (``too_big``)."""
from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

__all__ = ["MAX_BYTES", "MAX_LINE_CHARS", "MAX_LINES", "BadLine", "LogLine", "PasteTooBig", "parse_paste",
           "too_big"]

MAX_LINES = 500  # lines in one paste: far more than "a few log lines", far less than a whole log
MAX_BYTES = 256 * 1024  # a paste's bytes (a form of this size is read; a bigger body is refused unread)
MAX_LINE_CHARS = 8192  # one line (a long User-Agent and query fit)

# Apache's %h %l %u %t "%r" %>s %b ["%{Referer}i" "%{User-agent}i"], optionally after %v (vhost).
_CLF = re.compile(
    r'^(?:(?P<vhost>[^\s\[\]"]+)\s+)??(?P<ip>[0-9A-Fa-f:.]+)\s+\S+\s+(?:\S+|"[^"]*")\s+\[(?P<time>[^\]]+)\]\s+'
    r'"(?P<request>(?:[^"\\]|\\.)*)"\s+(?P<status>\d{3}|-)\s+(?P<size>\d+|-)'
    r'(?:\s+"(?P<referer>(?:[^"\\]|\\.)*)"\s+"(?P<ua>(?:[^"\\]|\\.)*)")?.*$')
# Typed by hand: address, an ISO 8601 time, a path, the rest is the User-Agent (quoted or not).
_TYPED = re.compile(
    r'^(?P<ip>[0-9A-Fa-f:.\[\]]+)\s+(?P<time>\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?'
    r'(?:\s?(?:Z|[+-]\d{2}:?\d{2}))?)\s+(?P<path>\S+)(?:\s+(?P<ua>.+?))?\s*$')
_ESCAPE = re.compile(r'\\(x[0-9A-Fa-f]{2}|.)')


@dataclass(frozen=True)
class LogLine:
    """One request as a site's log shows it: its line number in the paste, the address, the time
    (epoch seconds), the method, the request target (path and query as the log has it) and the
    User-Agent (None: the line has none, as the Common Log Format)."""

    n: int
    raw: str
    ip: str
    t: float
    method: str
    target: str
    user_agent: str | None


@dataclass(frozen=True)
class BadLine:
    """A line that says nothing we can judge, and why (``reason``: a stable code)."""

    n: int
    raw: str
    reason: str  # too_long | not_a_log_line | bad_address | bad_time


class PasteTooBig(ValueError):
    """A paste over the limits: refused whole, in one line."""


def too_big(length: int | None) -> bool:
    """Whether a body of ``length`` bytes is refused before a byte of it is read."""
    return length is not None and length > MAX_BYTES


def _unescape(text: str) -> str:
    """Apache's and nginx's escapes in a quoted field (``\\"``, ``\\\\``, ``\\xhh``) undone: the
    User-Agent as it was sent."""
    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        if code.startswith("x") and len(code) == 3:
            return chr(int(code[1:], 16))
        return code
    return _ESCAPE.sub(one, text)


def _address(text: str) -> str | None:
    try:
        return ipaddress.ip_address(text.strip("[]")).compressed
    except ValueError:
        return None


def _clf_time(text: str) -> float | None:
    try:
        return datetime.strptime(text.strip(), "%d/%b/%Y:%H:%M:%S %z").timestamp()
    except ValueError:
        return None


def _iso_time(text: str) -> float | None:
    norm = text.strip().replace(",", ".")
    norm = re.sub(r"\s(?=[Z+-]\d{0,2})", "", norm).replace("Z", "+00:00")
    try:
        dt = datetime.fromisoformat(norm)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def _target(request: str) -> tuple[str, str] | None:
    parts = request.split(" ")
    if len(parts) < 2 or not parts[0].isalpha():
        return None
    target = parts[1]
    if "://" in target:  # the absolute form (a proxy's log): its path and query
        rest = target.split("://", 1)[1]
        target = "/" + rest.split("/", 1)[1] if "/" in rest else "/"
    return parts[0].upper(), target


def parse_line(n: int, raw: str) -> LogLine | BadLine:
    """Line ``n`` of a paste, read, or refused with a reason."""
    line = raw.strip()
    if len(line) > MAX_LINE_CHARS:
        return BadLine(n, line[:200], "too_long")
    m = _CLF.match(line)
    if m is not None:
        ip = _address(m["ip"])
        if ip is None:
            return BadLine(n, line, "bad_address")
        t = _clf_time(m["time"])
        if t is None:
            return BadLine(n, line, "bad_time")
        request = _target(_unescape(m["request"]))
        if request is None:
            return BadLine(n, line, "not_a_log_line")
        ua = _unescape(m["ua"]) if m["ua"] is not None else None
        return LogLine(n, line, ip, t, request[0], request[1], None if ua in (None, "-") else ua)
    m = _TYPED.match(line)
    if m is not None:
        ip = _address(m["ip"])
        if ip is None:
            return BadLine(n, line, "bad_address")
        t = _iso_time(m["time"])
        if t is None:
            return BadLine(n, line, "bad_time")
        ua = m["ua"]
        if ua is not None and len(ua) >= 2 and ua[0] == ua[-1] == '"':
            ua = _unescape(ua[1:-1])
        path = m["path"]
        if not path.startswith("/") and "://" not in path:
            return BadLine(n, line, "not_a_log_line")
        request = _target(f"GET {path}")
        assert request is not None
        return LogLine(n, line, ip, t, "GET", request[1], ua)
    return BadLine(n, line, "not_a_log_line")


def parse_paste(text: str) -> list[LogLine | BadLine]:
    """Every non-empty line of a paste, in order, each read or refused. ``PasteTooBig`` when the
    paste is over ``MAX_BYTES`` or ``MAX_LINES`` lines: nothing of it is read."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise PasteTooBig(f"more than {MAX_BYTES // 1024} KB")
    lines: Sequence[str] = [x for x in text.splitlines() if x.strip()]
    if len(lines) > MAX_LINES:
        raise PasteTooBig(f"more than {MAX_LINES} lines")
    return [parse_line(i + 1, raw) for i, raw in enumerate(lines)]

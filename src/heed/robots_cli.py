"""`heed robots check ROBOTS_FILE URL --agent TOKEN|USER-AGENT`: what a robots.txt file says of a
URL for a crawler, as the crawler reads it (heed_core.robots, RFC 9309).

Exit 0: allowed; 1: disallowed; 2: the question cannot be answered (a file that cannot be read
or is no robots.txt at all, a URL or agent that is no such thing), said in one line on stderr."""
from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

from heed_core.errors import ConfigError
from heed_core.robots import MAX_ROBOTS_BYTES, parse_robots, token_of_agent
from heed_core.urls import BadUrl, authority

__all__ = ["check", "cmd_robots_check"]

_HTML = re.compile(rb"^(?:\xef\xbb\xbf)?\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.I | re.S)


def check(robots_file: str, url: str, agent: str) -> tuple[dict[str, Any], int]:
    """(the answer as a JSON object, exit code 0 allowed / 1 disallowed); ``ConfigError`` for a
    question that cannot be answered."""
    token = token_of_agent(agent)
    if not token:
        raise ConfigError(f"--agent: {agent!r} names no product token (e.g. MyBot, or its User-Agent)")
    if not url.startswith("/"):
        try:
            authority(url)
        except BadUrl as exc:
            raise ConfigError(f"{url!r} is not an absolute http(s) URL or a /path") from exc
    try:
        with open(robots_file, "rb") as handle:
            body = handle.read(MAX_ROBOTS_BYTES + 1)  # one byte more tells parse_robots to cut
    except OSError as exc:
        raise ConfigError(f"{robots_file}: cannot read ({exc.strerror or exc})") from exc
    # A file that is no robots.txt is no evidence of what the owner allows: no answer, not an allow.
    if _HTML.match(body[:4096]):
        raise ConfigError(f"{robots_file}: an HTML page, not a robots.txt (a crawler reads no rules from it: "
                          "it would fetch everything; check the file the site really serves)")
    robots = parse_robots(body)
    if robots.not_text:
        raise ConfigError(f"{robots_file}: not text (binary or undecodable): no rules can be read from it")
    v = robots.verdict(url, token)
    out: dict[str, Any] = {"allowed": v.allowed, "token": token, "group": v.group, "rule": v.rule, "line": v.line,
                           "crawl_delay": v.crawl_delay, "truncated": robots.truncated}
    if robots.truncated:
        out["warning"] = (f"the file is larger than {MAX_ROBOTS_BYTES // 1024} KiB: only the whole lines "
                          "before that limit were read (RFC 9309 2.5)")
    return out, 0 if v.allowed else 1


def cmd_robots_check(args: argparse.Namespace) -> int:
    result, code = check(args.robots_file, args.url, args.agent)
    if token_of_agent(args.agent) != args.agent.strip():
        # A whole User-Agent string: say which token of it robots.txt was asked about.
        print(f"heed robots check: read as the token {result['token']!r} (from {args.agent!r})", file=sys.stderr)
    if result.get("warning"):
        print(f"heed robots check: warning: {result['warning']}", file=sys.stderr)
    print(json.dumps(result, ensure_ascii=False))
    return code

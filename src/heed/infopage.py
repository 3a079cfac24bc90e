"""A bot's public info page and /crawler/ips.json, generated from its profile (never typed twice)."""
from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from heed_core.profile import Profile

_ROBOTS_FAIL = {"allow": "we read it as no restrictions", "deny": "we fetch nothing",
                "skip_host": "we skip your site for this round"}
_STOP = {"stop_host_today": "we stop fetching from your site for the rest of the day",
         "close_source": "we stop and mark the source as closed; we do not come back on our own"}


def _secs(x: Any) -> str:
    x = float(x)
    if x >= 86400 and x % 86400 == 0:
        return f"{int(x // 86400)} day(s)"
    if x >= 3600 and x % 3600 == 0:
        return f"{int(x // 3600)} hour(s)"
    if x >= 60 and x % 60 == 0:
        return f"{int(x // 60)} minute(s)"
    return f"{x:g} seconds"


def facts(p: Profile) -> list[str]:
    """Every promise the profile makes, one sentence each, numbers read from the profile."""
    out = [
        f"User-Agent: {p.user_agent}. Never a browser string.",
        f"robots.txt: we obey the group naming {p.robots_token} (case-insensitive), otherwise '*', "
        "per RFC 9309: the longest matching rule wins, Allow wins a tie, '*' and '$' work.",
        f"We read robots.txt before anything else on a host and reuse it for at most "
        f"{_secs(p.get('robots.cache_ttl_s'))}.",
        f"robots.txt answering 401/403: {_ROBOTS_FAIL[p.get('robots.on_401_403')]}; other 4xx: "
        f"{_ROBOTS_FAIL[p.get('robots.on_4xx')]}; 5xx: {_ROBOTS_FAIL[p.get('robots.on_5xx')]}; "
        f"unreachable: {_ROBOTS_FAIL[p.get('robots.on_unreachable')]}.",
        f"At least {_secs(p.get('politeness.min_delay_s'))} between two requests to one host, counted from "
        f"the end of one to the start of the next; a longer Crawl-delay is honoured up to "
        f"{_secs(p.get('politeness.crawl_delay_cap_s'))}. Never two requests at once to one host.",
        "GET only, with conditional requests (If-None-Match, If-Modified-Since). No cookies, no forms, "
        "no logins, no JavaScript." if p.get("conditional_requests") else "GET only. No cookies, no forms, no logins.",
        f"On 429: {_STOP[p.get('responses.on_429')]}. On 403: {_STOP[p.get('responses.on_403')]}. "
        f"On a challenge page: {_STOP[p.get('responses.on_challenge')]}.",
        f"On a server error we retry at most {p.get('responses.retries_per_day')} more time(s) the same day.",
        f"A redirect is a new request, checked against robots.txt and paced like any other "
        f"(at most {p.get('redirects.max_hops')} hops).",
    ]
    spacing = float(p.get("politeness.round_spacing_s"))
    if spacing:
        jitter = float(p.get("politeness.round_spacing_jitter_s") or 0)
        out.append(f"In a scheduled round, {_secs(spacing)} to {_secs(spacing + jitter)} between two pages of one site.")
    if p.get("politeness.max_in_flight"):
        out.append(f"At most {p.get('politeness.max_in_flight')} request(s) in flight over all sites together.")
    for s in p.schedules:
        out.append(f"Schedule: {s.task} at {s.expression} (UTC).")
    out.append("A stop request by mail is honoured without any robots.txt change; on request we delete "
               f"everything stored from your domain. Contact: {p.get('contact')}.")
    return out


def render_info_page(p: Profile) -> str:
    items = "\n".join(f"  <li>{html.escape(f)}</li>" for f in facts(p))
    block = html.escape(f"User-agent: {p.robots_token}\nDisallow: /")
    ips = p.get("egress.ips") or []
    ip_part = (f"<h2>Addresses</h2>\n<p>{', '.join(html.escape(i) for i in ips)} "
               f"(also as <a href=\"ips.json\">ips.json</a>)</p>\n") if ips else ""
    return (f"<!doctype html>\n<html lang=\"{html.escape(p.get('language'))}\">\n<head><meta charset=\"utf-8\">"
            f"<title>{html.escape(p.robots_token)}</title></head>\n<body>\n<h1>{html.escape(p.robots_token)}</h1>\n"
            f"<ul>\n{items}\n</ul>\n{ip_part}<h2>Keep us out</h2>\n<pre>{block}</pre>\n</body>\n</html>\n")


def ips_json(p: Profile) -> str:
    """WANNADO-02: the egress list, machine-readable."""
    return json.dumps({"user_agent": p.user_agent, "reverse_dns": p.get("egress.reverse_dns"),
                       "prefixes": list(p.get("egress.ips") or [])}, indent=2) + "\n"


def write_info_page(p: Profile, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "index.html"]
    paths[0].write_text(render_info_page(p), encoding="utf-8")
    if p.get("egress.ips"):
        paths.append(out / "ips.json")
        paths[1].write_text(ips_json(p), encoding="utf-8")
    return paths

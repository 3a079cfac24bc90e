"""Every key of a bot profile, once: its type, its default, its check and what it means.

A section is a frozen dataclass; `profile_schema.build()` reads a mapping into it. Defaults live
here and nowhere else (numbers a bot promises on its info page live in that bot's YAML file), but
for the options of each source kind (`tasks.<kind>`), which live in the kind's room
(heed_core.kinds.<kind>).
"""
from __future__ import annotations

import difflib
import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from heed_core.profile_schema import ProfileError, key, unknown
from heed_core.schedule import ScheduleError, parse_expression

# --- checks that the type alone cannot say -----------------------------------------------------

def pattern(regex: str, what: str) -> Any:
    compiled = re.compile(regex)
    return lambda v: None if compiled.fullmatch(v) else f"{v!r} is not valid (must be {what})"


def http_url(v: str) -> str | None:
    return None if re.fullmatch(r"https?://[^\s/]+(/\S*)?", v) else f"{v!r} is not valid (must be an http(s) URL)"


def _network(v: str) -> str | None:
    try:
        ipaddress.ip_network(v, strict=True)
    except ValueError:
        return f"{v!r} is not valid (must be an IPv4 or IPv6 prefix such as 192.0.2.1/32)"
    return None


def _expression(v: str) -> str | None:
    try:
        parse_expression(v)
    except ScheduleError as exc:
        return str(exc)
    return None


_NAME = r"[a-z0-9][a-z0-9-]{0,40}"
_TOKEN = r"[A-Za-z_-]+"  # RFC 9309 2.2.1: product token characters
_HOST = r"(?=.{1,253}$)([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}"
_PATH = r"/[A-Za-z0-9._~/%-]*"
Stop = Literal["stop_host_today", "close_source"]


# --- the sections ------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class Politeness:
    min_delay_s: float = key(ge=0,
                             doc="at least this between two requests to one host, end of one to start of the next")
    crawl_delay_cap_s: float = key(ge=0, doc="a longer robots.txt Crawl-delay is honoured up to this")
    round_spacing_s: float = key(0, ge=0, doc="in a round, at least this between two pages of one site")
    round_spacing_jitter_s: float = key(0, ge=0, doc="plus up to this much more, spread per page")
    max_in_flight: int | None = key(None, ge=1,
                                    doc="requests at once over all hosts (null: no cap; one per host always)")
    clock_skew_margin_s: float = key(0.1, ge=0, doc="added to every gap written: the next request's earliest "
                                                    "start is written by one machine's clock and read by another's")
    end_stamp_slack_s: float = key(0.02, ge=0,
                                   doc="added to every hide of a host's token on the embedded engine's queue (exact "
                                       "to the ms): a site stamps a request's end a few ms after the bot does; SQS "
                                       "rounds every hide up to whole seconds, which already covers it")


@dataclass(frozen=True, kw_only=True)
class RobotsRules:
    cache_ttl_s: float = key(86400, ge=1, doc="robots.txt is reused this long (RFC 9309 2.4: at most 24 hours)")
    on_401_403: Literal["allow", "deny"] = key("allow", doc="robots.txt answers 401/403 (RFC 9309 2.3.1.3: allow)")
    on_4xx: Literal["allow", "deny"] = key("allow", doc="robots.txt answers another 4xx")
    on_5xx: Literal["deny", "skip_host"] = key("deny", doc="robots.txt answers 5xx or 429 (RFC 9309 2.3.1.4: deny)")
    on_unreachable: Literal["deny", "skip_host"] = key("deny", doc="robots.txt cannot be reached")
    max_bytes: int = key(512000, ge=1024, doc="bytes of robots.txt parsed (RFC 9309 2.5: at least 500 KiB)")
    max_redirects: int = key(5, ge=0, doc="redirect hops followed for robots.txt (RFC 9309 2.3.1.2)")


@dataclass(frozen=True, kw_only=True)
class Responses:
    on_429: Stop = key("stop_host_today", doc="429 Too Many Requests")
    on_403: Stop = key("stop_host_today", doc="403 Forbidden")
    on_challenge: Stop = key("stop_host_today", doc="a bot challenge page")
    retries_per_day: int = key(1, ge=0, doc="more tries of a 5xx or network error, the same UTC day")
    retry_backoff_s: float = key(300, ge=0, doc="first wait before a retry, doubled each time")


def _param_name(v: str) -> str | None:
    if re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+\*?", v):
        return None
    return f"{v!r} is not valid (must be a query parameter name, or a prefix ending in '*' such as utm_*)"


@dataclass(frozen=True, kw_only=True)
class Urls:
    strip_params: tuple[str, ...] | None = key(
        None, check=_param_name, what="a list of parameter names (a trailing * is a prefix)",
        doc="query parameters removed from every link before it is requested, added to the built-in "
            "tracking list (utm_*, fbclid, gclid, ...); [] removes none")

    def stripped(self, builtin: tuple[str, ...]) -> tuple[str, ...]:
        """The parameters removed: the built-in list plus this profile's, or none for []."""
        if self.strip_params is None:
            return builtin
        if not self.strip_params:
            return ()
        return tuple(dict.fromkeys(builtin + tuple(p.lower() for p in self.strip_params)))


@dataclass(frozen=True, kw_only=True)
class Redirects:
    max_hops: int = key(5, ge=0, doc="redirects followed in a row, each its own checked request")


_DEFAULT_CAPS = {"default": 5242880, "feed": 10485760, "sitemap": 10485760, "robots": 512000,
                 "icon": 1048576, "tdmrep": 65536}


@dataclass(frozen=True, kw_only=True)
class Fetch:
    connect_timeout_s: float = key(5, gt=0, doc="TCP and TLS connect timeout")
    read_timeout_s: float = key(15, gt=0, doc="timeout between two reads")
    total_deadline_s: float = key(30, gt=0, doc="whole request deadline")
    max_bytes: Mapping[str, int] = key(factory=lambda: dict(_DEFAULT_CAPS), ge=1024, keys_of="purposes",
                                       doc="body cap per purpose; `default` for the others")


@dataclass(frozen=True, kw_only=True)
class Egress:
    ips: tuple[str, ...] = key((), check=_network, doc="the fixed addresses requests come from (CIDR prefixes)")
    reverse_dns: str | None = key(None, check=pattern(_HOST, "a host name"),
                                  doc="the PTR name of those addresses (forward-confirmed)")
    ips_json_path: str | None = key(None, check=pattern(_PATH + r"\.json", "a path like /crawler/ips.json"),
                                    doc="where the addresses are published as JSON, on the info page's host")


@dataclass(frozen=True, kw_only=True)
class Operator:
    blocked_domains: tuple[str, ...] = key((), check=pattern(r"[^\s/]+", "a domain"),
                                           doc="domains (and their subdomains) never fetched")
    alarm_email: str | None = key(None, check=pattern(r"[^@\s]+@[^@\s]+\.[^@\s]+", "one e-mail address"),
                                  doc="who the stack's alarms are mailed to (default: contact, if an e-mail address)")


@dataclass(frozen=True, kw_only=True)
class Schedule:
    expression: str = key(check=_expression, doc="EventBridge rate(...) or cron(...), UTC")
    task: str = key(choices="task_kinds", doc="the task kind it starts")


@dataclass(frozen=True, kw_only=True)
class PageTexts:
    """The words of the info page that are not numbers, in one language."""

    lead: str = key(doc="first paragraph: who knocks and what this page is for")
    about: tuple[str, ...] = key(nonempty=True, doc="who we are and why we come, one paragraph each")
    operator: str = key(doc="who runs the bot")
    keeps: tuple[str, ...] = key(nonempty=True, doc="what we keep and why")
    title: str | None = key(None, doc="the page title (default: the bot's token and 'our crawler')")
    origin: str | None = key(None, doc="where requests come from, in words")
    fetches: tuple[str, ...] = key((), doc="what we fetch, beyond what the tasks say")
    never: tuple[str, ...] = key((), doc="what we never do, beyond what every Heed bot never does")
    third_parties: tuple[str, ...] = key((), doc="services that fetch or process for us")
    published: tuple[str, ...] = key((), doc="what is published from the site's content")
    removal: str | None = key(None, doc="more on removal requests")
    contact_note: str | None = key(None, doc="more on writing to us")
    example_path: str | None = key(None, check=pattern(_PATH, "a path starting with /"),
                                   doc="the path in the 'close a part' robots.txt example")


@dataclass(frozen=True, kw_only=True)
class InfoPage:
    texts: Mapping[str, PageTexts] = key(doc="the words of the page, in the bot's language and in en")
    sentences: Mapping[str, Any] | None = key(
        None, what="a mapping of a page language to its sentences file (a path beside the profile)",
        doc="the page's sentences in a language Heed has none for (heed new-bot writes the file to translate)")
    privacy_url: str | None = key(None, check=http_url, doc="the operator's privacy statement")


# --- identity and usage (signed requests, AIPREF) -----------------------------------------------

_SECRET = r"(secretsmanager:.+|ssm:/.+|arn:aws[a-z-]*:(secretsmanager|ssm):.+)"


def _key_ref(v: str) -> str | None:
    # The private key never goes in a profile: only where it is.
    if "PRIVATE KEY" in v or "\n" in v:
        return "names where the key is; the private key itself never goes in a profile"
    return None


@dataclass(frozen=True, kw_only=True)
class WebBotAuth:
    enabled: bool = key(False, doc="sign every request (Web Bot Auth on RFC 9421 HTTP Message Signatures)")
    key_file: str | None = key(None, check=_key_ref, doc="the Ed25519 private key's PEM file (local runs)")
    key_secret: str | None = key(None, check=lambda v: _key_ref(v) or pattern(
        _SECRET, "secretsmanager:NAME, ssm:/NAME or a Secrets Manager or SSM ARN")(v),
        doc="where the private key is on AWS (Secrets Manager or an SSM SecureString)")
    signature_agent: str | None = key(None, check=pattern(r"https://[^\s/?#]+(/[^\s#]*)?", "an https URL"),
                                      doc="the key directory's URL (the Signature-Agent header)")
    lifetime_s: float = key(60, ge=1, doc="how long a signature is valid")


@dataclass(frozen=True, kw_only=True)
class Identity:
    web_bot_auth: WebBotAuth = key(factory=WebBotAuth, doc="signed requests, off by default")


USES = ("train-ai", "ai-use", "search")  # draft-ietf-aipref-vocab's labels


def _use(v: str) -> str | None:
    if v in USES:
        return None
    close = difflib.get_close_matches(v, USES, n=1, cutoff=0.6)
    return f"{v!r} is not a use ({'did you mean ' + close[0] + '?' if close else 'known: ' + ', '.join(USES)})"


@dataclass(frozen=True, kw_only=True)
class Spec:
    """The whole profile, typed. `Profile` wraps it with the merged mapping."""

    name: str = key(check=pattern(_NAME, "a lower-case name of letters, digits and '-'"))
    user_agent: str = key(doc="exact User-Agent: product token/version (+info_url)")
    robots_token: str = key(check=pattern(_TOKEN, "a product token of letters, '_' and '-' (RFC 9309 2.2.1)"))
    info_url: str = key(check=http_url, doc="the public page about the bot")
    contact: str = key(doc="an e-mail address or a contact page URL")
    language: str = key("en", check=pattern(r"[a-z]{2,3}(-[A-Za-z0-9]{2,8})*", "a language code"))
    description: str | None = key(None)
    politeness: Politeness = key()
    robots: RobotsRules = key(factory=RobotsRules)
    responses: Responses = key(factory=Responses)
    redirects: Redirects = key(factory=Redirects)
    urls: Urls = key(factory=Urls, doc="how links are made canonical")
    conditional_requests: bool = key(True, doc="send If-None-Match / If-Modified-Since")
    fetch: Fetch = key(factory=Fetch)
    egress: Egress = key(factory=Egress)
    operator: Operator = key(factory=Operator)
    schedules: tuple[Schedule, ...] = key((), what="a list of {expression, task}")
    tasks: Mapping[str, Any] = key(factory=dict, sections="tasks",
                                   doc="each source kind's options (heed_core.kinds), by its name")
    info_page: InfoPage | None = key(None, doc="the words of the public info page")
    identity: Identity = key(factory=Identity, doc="how the bot proves who it is")
    usage: tuple[str, ...] = key((), check=_use, what=f"a list of uses: {', '.join(USES)}", own=True,
                                 doc="what the bot does with what it reads (AIPREF vocabulary)")
    desk: bool = key(False, doc="a site owners' desk beside the info page (/desk/ on its host): was this you, what "
                                "did you do here, stop (heed serve --desk; the Desk stack parameter)")


# --- cross-key rules ---------------------------------------------------------------------------

def cross_check(spec: Spec) -> None:
    """Rules between keys, after each key passed its own check (a kind's own: its room's ``check``)."""
    wba = spec.identity.web_bot_auth
    if wba.lifetime_s > 86400:
        raise ProfileError(f"identity.web_bot_auth.lifetime_s: {wba.lifetime_s!r} is not valid "
                           "(must be 1 to 86400 seconds)")
    if wba.enabled and not wba.signature_agent:
        raise ProfileError("identity.web_bot_auth.signature_agent: missing (required when enabled)")
    if wba.enabled and not (wba.key_file or wba.key_secret):
        raise ProfileError("identity.web_bot_auth: enabled, but neither key_file (local) nor key_secret (AWS) says "
                           "where the private key is")
    if len(set(spec.usage)) != len(spec.usage):
        raise ProfileError("usage: a use is listed twice")
    ua_token = re.split(r"[/\s]", spec.user_agent, maxsplit=1)[0]
    if ua_token.lower() != spec.robots_token.lower():
        # COMMON-01: the UA's product token is what robots.txt groups name; a longer token
        # ("AubeBotX" for "AubeBot") would be a different bot to the site owner.
        raise ProfileError(f"user_agent: its product token {ua_token!r} is not the robots_token {spec.robots_token!r}")
    if "+" + spec.info_url not in spec.user_agent:
        raise ProfileError("user_agent: must carry the info_url (COMMON-01: '+' info URL)")
    if spec.egress.ips_json_path and not spec.egress.ips:
        raise ProfileError("egress.ips_json_path: set, but egress.ips is empty (nothing to publish)")
    if spec.info_page is not None:
        wanted = [spec.language] + (["en"] if spec.language != "en" else [])
        for lang in wanted:
            if lang not in spec.info_page.texts:
                raise ProfileError(f"info_page.texts.{lang}: missing (the page is written in {' and '.join(wanted)})")
        for part in ("texts", "sentences"):
            for lang in getattr(spec.info_page, part) or {}:
                if lang not in wanted:
                    raise unknown(f"info_page.{part}.{lang}", lang, wanted, "language (the page is written in "
                                  f"{' and '.join(wanted)})")

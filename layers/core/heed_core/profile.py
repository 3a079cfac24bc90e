"""Bot profiles: every key, its default and its check in one place; load, merge (`extends:`),
validate, and hand out typed, frozen sections (`profile.politeness.min_delay_s`)."""
from __future__ import annotations

import copy
import dataclasses
import ipaddress
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar, Literal, Mapping

import yaml

from heed_core.profile_schema import ProfileError, build, describe, fields_of, key, unknown
from heed_core.work import PURPOSES

__all__ = ["BUILTIN_BOTS", "TASK_KINDS", "Profile", "ProfileError", "Schedule", "deep_merge",
           "key_reference", "load_profile", "load_profile_data", "validate"]

BUILTIN_BOTS = ("springstudiobot", "praha-x", "wannadobot", "subsidieupdate", "aubebot")
TASK_KINDS = ("feed", "page", "sitemap", "site_check", "subsidy", "agenda")
_MAX_EXTENDS_DEPTH = 8


# --- checks that the type alone cannot say -----------------------------------------------------

def _pattern(regex: str, what: str) -> Any:
    compiled = re.compile(regex)
    return lambda v: None if compiled.fullmatch(v) else f"{v!r} is not valid (must be {what})"


def _http_url(v: str) -> str | None:
    return None if re.fullmatch(r"https?://[^\s/]+(/\S*)?", v) else f"{v!r} is not valid (must be an http(s) URL)"


def _network(v: str) -> str | None:
    try:
        ipaddress.ip_network(v, strict=True)
    except ValueError:
        return f"{v!r} is not valid (must be an IPv4 or IPv6 prefix such as 192.0.2.1/32)"
    return None


def _expression(v: str) -> str | None:
    from heed_core.schedule import ScheduleError, parse_expression

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
    min_delay_s: float = key(ge=0, doc="at least this between two requests to one host, end of one to start of the next")
    crawl_delay_cap_s: float = key(ge=0, doc="a longer robots.txt Crawl-delay is honoured up to this")
    round_spacing_s: float = key(0, ge=0, doc="in a round, at least this between two pages of one site")
    round_spacing_jitter_s: float = key(0, ge=0, doc="plus up to this much more, spread per page")
    max_in_flight: int | None = key(None, ge=1, doc="requests at once over all hosts (null: no cap; one per host always)")


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
    max_bytes: Mapping[str, int] = key(factory=lambda: dict(_DEFAULT_CAPS), ge=1024, keys=("default",) + PURPOSES,
                                       doc="body cap per purpose; `default` for the others")


@dataclass(frozen=True, kw_only=True)
class Egress:
    ips: tuple[str, ...] = key((), check=_network, doc="the fixed addresses requests come from (CIDR prefixes)")
    reverse_dns: str | None = key(None, check=_pattern(_HOST, "a host name"),
                                  doc="the PTR name of those addresses (forward-confirmed)")
    ips_json_path: str | None = key(None, check=_pattern(_PATH + r"\.json", "a path like /crawler/ips.json"),
                                    doc="where the addresses are published as JSON, on the info page's host")


@dataclass(frozen=True, kw_only=True)
class Operator:
    blocked_domains: tuple[str, ...] = key((), check=_pattern(r"[^\s/]+", "a domain"),
                                           doc="domains (and their subdomains) never fetched")


@dataclass(frozen=True, kw_only=True)
class Schedule:
    expression: str = key(check=_expression, doc="EventBridge rate(...) or cron(...), UTC")
    task: Literal["feed", "page", "sitemap", "site_check", "subsidy", "agenda"] = key(doc="the task kind it starts")


@dataclass(frozen=True, kw_only=True)
class ArticleFollowup:
    mode: Literal["short_summary", "selected"] = key(doc="short_summary: when the feed summary is short; selected: sources marked write_about")
    summary_shorter_than: int = key(0, ge=0, doc="short_summary: a summary shorter than this many characters")
    once_ever: bool = key(False, doc="an article page is read once, never again")
    per_source_per_window: int | None = key(None, ge=0, doc="article pages per source per window")
    total_per_window: int | None = key(None, ge=0, doc="article pages over all sources per window")
    window_s: float = key(0, ge=0, doc="the window of both caps (0: no caps)")
    keep_text: bool = key(True, doc="keep the article text (false: read, not kept)")
    respect_tdmrep: bool = key(False, doc="a TDMRep reservation means the text is not kept")


@dataclass(frozen=True, kw_only=True)
class FeedTask:
    max_items: int = key(40, ge=1, doc="items read per feed read")
    min_read_interval_s: float = key(0, ge=0, doc="at most one read per source this often")
    keep_summary: bool = key(False, doc="keep each item's summary")
    summary_max_chars: int = key(500, ge=0, doc="characters of summary kept")
    article_followup: ArticleFollowup | None = key(None, doc="when the linked article page is opened (absent: never)")


@dataclass(frozen=True, kw_only=True)
class PageTask:
    max_pages_per_source_per_round: int = key(1, ge=1, doc="listing pages per source per round")


@dataclass(frozen=True, kw_only=True)
class SitemapTask:
    pass


@dataclass(frozen=True, kw_only=True)
class SiteCheckTask:
    min_interval_s: float = key(0, ge=0, doc="at most one check per site this often")


@dataclass(frozen=True, kw_only=True)
class SubsidyTask:
    topic_patterns: tuple[str, ...] = key((), doc="a sitemap URL is followed only if its path has one of these")
    max_pages_per_host_per_round: int = key(5, ge=1, doc="pages per host per round")
    diff_summary_max_chars: int = key(300, ge=1, doc="characters of the change summary")


@dataclass(frozen=True, kw_only=True)
class AgendaTask:
    start: Literal["sitemap"] = key("sitemap", doc="where a round starts")
    follow_patterns: tuple[str, ...] = key((), doc="a sitemap URL is followed only if its path has one of these")
    max_pages_per_site_per_round: int = key(20, ge=1, doc="agenda pages per site per round")
    extractor: Literal["structured", "bedrock"] = key("structured", doc="structured data only, or a language model where it is missing")
    bedrock_model_id: str | None = key(None, doc="the model of the bedrock extractor")
    render_endpoint: str | None = key(None, check=_http_url, doc="render service for sources marked render: true")


@dataclass(frozen=True, kw_only=True)
class SitemapFallback:
    enabled: bool = key(False, doc="a page without items leads to its site's sitemap.xml")
    max_child_sitemaps: int = key(2, ge=0, doc="child sitemaps read per source and round")
    max_new_pages: int = key(5, ge=0, doc="new pages whose title is fetched per source and round")
    title_refetch_after_s: float = key(604800, ge=0, doc="a title is not fetched again within this")


@dataclass(frozen=True, kw_only=True)
class Tasks:
    _unknown_noun: ClassVar[str] = "task kind"
    feed: FeedTask | None = key(None, null_is_default=True)
    page: PageTask | None = key(None, null_is_default=True)
    sitemap: SitemapTask | None = key(None, null_is_default=True)
    site_check: SiteCheckTask | None = key(None, null_is_default=True)
    subsidy: SubsidyTask | None = key(None, null_is_default=True)
    agenda: AgendaTask | None = key(None, null_is_default=True)
    sitemap_fallback: SitemapFallback | None = key(None, null_is_default=True)


_TASK_TYPES: dict[str, type] = {"feed": FeedTask, "page": PageTask, "sitemap": SitemapTask,
                                "site_check": SiteCheckTask, "subsidy": SubsidyTask, "agenda": AgendaTask,
                                "sitemap_fallback": SitemapFallback}


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
    example_path: str | None = key(None, check=_pattern(_PATH, "a path starting with /"),
                                   doc="the path in the 'close a part' robots.txt example")


@dataclass(frozen=True, kw_only=True)
class InfoPage:
    texts: Mapping[str, PageTexts] = key(doc="the words of the page, in the bot's language and in en")
    privacy_url: str | None = key(None, check=_http_url, doc="the operator's privacy statement")


@dataclass(frozen=True, kw_only=True)
class Spec:
    """The whole profile, typed. `Profile` wraps it with the merged mapping."""

    name: str = key(check=_pattern(_NAME, "a lower-case name of letters, digits and '-'"))
    user_agent: str = key(doc="exact User-Agent: product token/version (+info_url)")
    robots_token: str = key(check=_pattern(_TOKEN, "a product token of letters, '_' and '-' (RFC 9309 2.2.1)"))
    info_url: str = key(check=_http_url, doc="the public page about the bot")
    contact: str = key(doc="an e-mail address or a contact page URL")
    language: str = key("en", check=_pattern(r"[a-z]{2,3}(-[A-Za-z0-9]{2,8})*", "a language code"))
    description: str | None = key(None)
    politeness: Politeness = key()
    robots: RobotsRules = key(factory=RobotsRules)
    responses: Responses = key(factory=Responses)
    redirects: Redirects = key(factory=Redirects)
    conditional_requests: bool = key(True, doc="send If-None-Match / If-Modified-Since")
    fetch: Fetch = key(factory=Fetch)
    egress: Egress = key(factory=Egress)
    operator: Operator = key(factory=Operator)
    schedules: tuple[Schedule, ...] = key((), what="a list of {expression, task}")
    tasks: Tasks = key(factory=Tasks)
    info_page: InfoPage | None = key(None, doc="the words of the public info page")


# --- cross-key rules ---------------------------------------------------------------------------

def _cross_check(spec: Spec) -> None:
    ua_token = re.split(r"[/\s]", spec.user_agent, maxsplit=1)[0]
    if ua_token.lower() != spec.robots_token.lower():
        # COMMON-01: the UA's product token is what robots.txt groups name; a longer token
        # ("AubeBotX" for "AubeBot") would be a different bot to the site owner.
        raise ProfileError(f"user_agent: its product token {ua_token!r} is not the robots_token {spec.robots_token!r}")
    if "+" + spec.info_url not in spec.user_agent:
        raise ProfileError("user_agent: must carry the info_url (COMMON-01: '+' info URL)")
    follow = spec.tasks.feed.article_followup if spec.tasks.feed else None
    if follow is not None:
        where = "tasks.feed.article_followup"
        if follow.window_s > 0:
            for cap in ("per_source_per_window", "total_per_window"):
                if getattr(follow, cap) is None:
                    raise ProfileError(f"{where}.{cap}: missing (window_s is set, so both caps are needed)")
        elif follow.per_source_per_window is not None or follow.total_per_window is not None:
            raise ProfileError(f"{where}.window_s: {follow.window_s:g} is not valid (the per-window caps need a window > 0)")
        if follow.mode == "short_summary" and follow.summary_shorter_than <= 0:
            raise ProfileError(f"{where}.summary_shorter_than: missing (mode short_summary needs a length > 0)")
    agenda = spec.tasks.agenda
    if agenda is not None and agenda.extractor == "bedrock" and not agenda.bedrock_model_id:
        raise ProfileError("tasks.agenda.bedrock_model_id: missing (extractor: bedrock needs a model)")
    if spec.egress.ips_json_path and not spec.egress.ips:
        raise ProfileError("egress.ips_json_path: set, but egress.ips is empty (nothing to publish)")
    if spec.info_page is not None:
        wanted = [spec.language] + (["en"] if spec.language != "en" else [])
        for lang in wanted:
            if lang not in spec.info_page.texts:
                raise ProfileError(f"info_page.texts.{lang}: missing (the page is written in {' and '.join(wanted)})")
        for lang in spec.info_page.texts:
            if lang not in wanted:
                raise unknown(f"info_page.texts.{lang}", lang, wanted, "language (the page is written in "
                              f"{' and '.join(wanted)})")


def _typed(data: Mapping[str, Any]) -> tuple[Spec, dict[str, Any]]:
    """The typed profile and the merged mapping with every default filled in."""
    spec, plain = build(Spec, data)
    _cross_check(spec)
    # Every task kind that runs (scheduled or configured) gets its defaults written into the
    # mapping too, so `profile.task(kind)` and the typed section can never disagree. Title-only
    # page fetches (page and sitemap tasks) read sitemap_fallback.title_refetch_after_s.
    kinds = [k for k in TASK_KINDS if getattr(spec.tasks, k) is not None or any(s.task == k for s in spec.schedules)]
    if {"page", "sitemap"} & set(kinds):
        kinds.append("sitemap_fallback")
    filled = {}
    for kind in kinds:
        if getattr(spec.tasks, kind) is None:
            section, section_plain = build(_TASK_TYPES[kind], {}, f"tasks.{kind}")
            filled[kind] = section
            plain["tasks"][kind] = section_plain
    if filled:
        spec = dataclasses.replace(spec, tasks=dataclasses.replace(spec.tasks, **filled))
    return spec, plain


# --- the profile -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Profile:
    """A validated bot profile. ``data`` is the merged mapping with every default filled in;
    the typed sections (``politeness``, ``robots``, ``feed``, ...) are built from it once."""

    data: Mapping[str, Any]
    spec: Spec = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "spec", _typed(self.data)[0])

    def get(self, dotted: str, default: Any = None) -> Any:
        node: Any = self.data
        for part in dotted.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return default
            node = node[part]
        return node

    def task(self, kind: str) -> Mapping[str, Any]:
        return self.data.get("tasks", {}).get(kind, {}) or {}

    def max_bytes(self, purpose: str) -> int:
        caps = self.spec.fetch.max_bytes
        return int(caps.get(purpose, caps["default"]))

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def user_agent(self) -> str:
        return self.spec.user_agent

    @property
    def robots_token(self) -> str:
        return self.spec.robots_token

    @property
    def info_url(self) -> str:
        return self.spec.info_url

    @property
    def contact(self) -> str:
        return self.spec.contact

    @property
    def language(self) -> str:
        return self.spec.language

    @property
    def schedules(self) -> tuple[Schedule, ...]:
        return self.spec.schedules

    @property
    def conditional_requests(self) -> bool:
        return self.spec.conditional_requests

    @property
    def politeness(self) -> Politeness:
        return self.spec.politeness

    @property
    def robots(self) -> RobotsRules:
        return self.spec.robots

    @property
    def responses(self) -> Responses:
        return self.spec.responses

    @property
    def redirects(self) -> Redirects:
        return self.spec.redirects

    @property
    def fetch(self) -> Fetch:
        return self.spec.fetch

    @property
    def egress(self) -> Egress:
        return self.spec.egress

    @property
    def operator(self) -> Operator:
        return self.spec.operator

    @property
    def tasks(self) -> Tasks:
        """Each task kind's options; None for a kind this bot does not run."""
        return self.spec.tasks

    @property
    def info_page(self) -> InfoPage | None:
        return self.spec.info_page

    @property
    def task_kinds(self) -> tuple[str, ...]:
        """The task kinds this bot runs (scheduled or configured), in TASK_KINDS order."""
        return tuple(k for k in TASK_KINDS if getattr(self.spec.tasks, k) is not None)

    # A kind the bot does not run reads as its defaults, as task(kind) reads as {}.
    @property
    def feed(self) -> FeedTask:
        return self.spec.tasks.feed or FeedTask()

    @property
    def page(self) -> PageTask:
        return self.spec.tasks.page or PageTask()

    @property
    def sitemap(self) -> SitemapTask:
        return self.spec.tasks.sitemap or SitemapTask()

    @property
    def site_check(self) -> SiteCheckTask:
        return self.spec.tasks.site_check or SiteCheckTask()

    @property
    def subsidy(self) -> SubsidyTask:
        return self.spec.tasks.subsidy or SubsidyTask()

    @property
    def agenda(self) -> AgendaTask:
        return self.spec.tasks.agenda or AgendaTask()

    @property
    def sitemap_fallback(self) -> SitemapFallback:
        return self.spec.tasks.sitemap_fallback or SitemapFallback()


def key_reference() -> list[tuple[str, str, Any, str]]:
    """(dotted key, what it must be, default or MISSING, doc) of every key: for the README."""
    out: list[tuple[str, str, Any, str]] = []

    def walk(cls: type, prefix: str) -> None:
        for name, tp, meta, default in fields_of(cls):
            dotted = f"{prefix}{name}"
            args = [a for a in getattr(tp, "__args__", ()) if a is not type(None)]
            inner = args[0] if len(args) == 1 and type(None) in tp.__args__ else tp
            if dataclasses.is_dataclass(inner):
                walk(inner, f"{dotted}.")  # type: ignore[arg-type]
            elif name == "texts":
                walk(PageTexts, f"{dotted}.<lang>.")
            else:
                out.append((dotted, describe(tp, meta, name), default, meta.doc))

    walk(Spec, "")
    return out


# --- loading -----------------------------------------------------------------------------------

def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Mappings merge key by key; anything else (lists included) is replaced."""
    out = copy.deepcopy(dict(base))
    for k, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = deep_merge(out[k], value)
        else:
            out[k] = copy.deepcopy(value)
    return out


# libyaml when it is there: ten times faster, and a profile is read at every cold start.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _read_yaml(text: str, where: str) -> dict[str, Any]:
    try:
        data = yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise ProfileError(f"{where}: not valid YAML{at}") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ProfileError(f"{where}: a profile must be a mapping of keys, got {type(data).__name__}")
    return data


def _builtin_text(name: str) -> str:
    return resources.files("heed_core.profiles").joinpath(f"{name}.yaml").read_text(encoding="utf-8")


def _raw(ref: str, base_dir: Path | None, depth: int) -> dict[str, Any]:
    """The merged-but-unvalidated mapping of a built-in name or a file path."""
    if depth > _MAX_EXTENDS_DEPTH:
        raise ProfileError(f"extends: chain deeper than {_MAX_EXTENDS_DEPTH} (a cycle?)")
    if ref in BUILTIN_BOTS:
        data = _read_yaml(_builtin_text(ref), ref)
        here: Path | None = None
        where = ref
    else:
        path = Path(ref)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        if not path.is_file():
            known = ", ".join(BUILTIN_BOTS)
            raise ProfileError(f"{ref}: no such profile file and not a built-in bot ({known})")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ProfileError(f"{path}: cannot read the profile ({type(exc).__name__})") from exc
        data = _read_yaml(text, str(path))
        here = path.parent
        where = str(path)
    parent = data.pop("extends", None)
    if parent is None:
        return data
    if not isinstance(parent, str):
        raise ProfileError(f"{where}: extends: must be a built-in name or a path")
    return deep_merge(_raw(parent, here, depth + 1), data)


def validate(data: Mapping[str, Any]) -> Profile:
    """The profile of a merged mapping, or one ProfileError naming the first bad key."""
    _, plain = _typed(data)
    return Profile(data=plain)


def load_profile(ref: str) -> Profile:
    """A built-in bot name or a path to a YAML profile (which may `extends:` a built-in)."""
    return validate(_raw(ref, Path.cwd(), 0))


def load_profile_data(data: Mapping[str, Any]) -> Profile:
    """A profile given as a mapping (tests); `extends:` resolves like in a file."""
    data = dict(data)
    parent = data.pop("extends", None)
    if parent is not None and not isinstance(parent, str):
        raise ProfileError("extends: must be a built-in name or a path")
    base = _raw(parent, Path.cwd(), 1) if parent else {}
    return validate(deep_merge(base, data))

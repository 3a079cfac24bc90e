"""Bot profiles: load, merge (`extends:`), validate, and hand out typed, frozen sections
(`profile.politeness.min_delay_s`), which is how the crawler reads them. The merged mapping
(`profile.data`, `profile.get("a.b")`) is for what shows a profile whole (`heed profile show`,
the info page's key table, the hash a stack runs under): the core reads no dotted key."""
from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from heed_core.profile_keys import (
    TASK_TYPES,
    AgendaTask,
    ArticleFollowup,
    Egress,
    FeedTask,
    Fetch,
    Identity,
    InfoPage,
    Operator,
    PageTask,
    PageTexts,
    Politeness,
    Redirects,
    Responses,
    RobotsRules,
    Schedule,
    SiteCheckTask,
    SitemapFallback,
    SitemapTask,
    Spec,
    SubsidyTask,
    Tasks,
    Urls,
    cross_check,
)
from heed_core.profile_schema import ProfileError, build, describe, fields_of
from heed_core.robots_policy import RobotsFetchPolicy
from heed_core.urls import TRACKING_PARAMS
from heed_core.work import TASK_KINDS

__all__ = ["BUILTIN_BOTS", "TASK_KINDS", "AgendaTask", "ArticleFollowup", "Egress", "Fetch", "FeedTask", "InfoPage",
           "Operator", "PageTask", "PageTexts", "Politeness", "Profile", "ProfileError", "Redirects", "Responses",
           "RobotsRules", "Schedule", "SiteCheckTask", "SitemapFallback", "SitemapTask", "Spec", "SubsidyTask",
           "Tasks", "Urls", "builtin_base", "builtin_text", "deep_merge", "extends_chain", "key_reference",
           "load_profile", "load_profile_data", "sentence_files", "validate"]

BUILTIN_BOTS = ("springstudiobot", "praha-x", "wannadobot", "subsidieupdate", "aubebot")
_MAX_EXTENDS_DEPTH = 8


def _typed(data: Mapping[str, Any]) -> tuple[Spec, dict[str, Any]]:
    """The typed profile and the merged mapping with every default filled in."""
    spec, plain = build(Spec, data)
    cross_check(spec)
    # Every task kind that runs (scheduled or configured) gets its defaults written into the
    # mapping too, so `profile.task(kind)` and the typed section can never disagree. Title-only
    # page fetches (page and sitemap tasks) read sitemap_fallback.title_refetch_after_s.
    kinds: list[str] = [k for k in TASK_KINDS
                        if getattr(spec.tasks, k) is not None or any(s.task == k for s in spec.schedules)]
    if {"page", "sitemap"} & set(kinds):
        kinds.append("sitemap_fallback")
    filled = {}
    for kind in kinds:
        if getattr(spec.tasks, kind) is None:
            section, section_plain = build(TASK_TYPES[kind], {}, f"tasks.{kind}")
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
    def robots_policy(self) -> RobotsFetchPolicy:
        """How this bot reads a robots.txt that cannot be read (``robots.on_*``), built once."""
        policy: RobotsFetchPolicy | None = self.__dict__.get("_robots_policy")
        if policy is None:
            policy = RobotsFetchPolicy.of(self.spec.robots)
            object.__setattr__(self, "_robots_policy", policy)
        return policy

    @property
    def strip_params(self) -> tuple[str, ...]:
        """The query parameters every link loses on its way to canonical (``urls.canonical``)."""
        return self.spec.urls.stripped(TRACKING_PARAMS)

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
    def identity(self) -> Identity:
        return self.spec.identity

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


def builtin_text(name: str) -> str:
    """A built-in bot's YAML file as shipped (its comments, its keys in their order)."""
    return resources.files("heed_core.profiles").joinpath(f"{name}.yaml").read_text(encoding="utf-8")


def _layers(ref: str, base_dir: Path | None, depth: int) -> list[tuple[str, dict[str, Any], Path | None]]:
    """(where, unmerged mapping, its folder) of a built-in name or a file path and of every
    profile it extends, the root first; `extends:` taken out."""
    if depth > _MAX_EXTENDS_DEPTH:
        raise ProfileError(f"extends: chain deeper than {_MAX_EXTENDS_DEPTH} (a cycle?)")
    if ref in BUILTIN_BOTS:
        data = _read_yaml(builtin_text(ref), ref)
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
        return [(where, data, here)]
    if not isinstance(parent, str):
        raise ProfileError(f"{where}: extends: must be a built-in name or a path")
    return _layers(parent, here, depth + 1) + [(where, data, here)]


def _extend(base: Mapping[str, Any], child: Mapping[str, Any]) -> dict[str, Any]:
    """``child`` over the profile it extends: keys merge (deep_merge), except the info page's
    texts and sentences, which a child that writes either replaces whole. They are a bot's own
    words: never someone else's sentences mixed in with the child's, and the child may change
    language."""
    out = deep_merge(base, child)
    page = child.get("info_page")
    if isinstance(page, Mapping) and ("texts" in page or "sentences" in page) and isinstance(
            out.get("info_page"), dict):
        for part in ("texts", "sentences"):
            out["info_page"].pop(part, None)
            if part in page:
                out["info_page"][part] = copy.deepcopy(page[part])
    return out


def _named_sentences(data: Mapping[str, Any], here: Path | None) -> dict[str, Path]:
    page = data.get("info_page")
    named = page.get("sentences") if isinstance(page, Mapping) else None
    if not isinstance(named, Mapping):
        return {}
    return {str(lang): (here or Path.cwd()) / ref for lang, ref in named.items() if isinstance(ref, str)}


def _read_sentences(data: dict[str, Any], here: Path | None) -> None:
    """The sentences files a profile names, read into it in their place: a profile is whole
    without them (the layer a stack carries, the hash it runs under, include the words)."""
    for lang, path in _named_sentences(data, here).items():
        where = f"info_page.sentences.{lang}"
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise ProfileError(f"{where}: no such file {path} (the page's sentences in {lang})") from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise ProfileError(f"{where}: cannot read {path} ({type(exc).__name__})") from exc
        data["info_page"]["sentences"][lang] = _read_yaml(text, str(path))


def _raw(ref: str, base_dir: Path | None, depth: int) -> dict[str, Any]:
    """The merged-but-unvalidated mapping of a built-in name or a file path."""
    merged: dict[str, Any] = {}
    for _, data, here in _layers(ref, base_dir, depth):
        _read_sentences(data, here)
        merged = _extend(merged, data)
    return merged


def extends_chain(ref: str) -> tuple[str, ...]:
    """What ``ref`` is built from, itself first: a file, the files it extends and, at the root,
    the built-in bot if there is one (``("my.yaml", "aubebot")``). ``ProfileError`` as at load."""
    return tuple(where for where, _, _ in reversed(_layers(ref, Path.cwd(), 0)))


def sentence_files(ref: str) -> dict[str, Path]:
    """The files the profile ``ref`` takes its page's sentences from (``info_page.sentences.<lang>:
    a path``, relative to the profile file that names it), by language; what its merged profile
    holds in their place."""
    files: dict[str, Path] = {}
    for _, data, here in _layers(ref, Path.cwd(), 0):
        page = data.get("info_page")
        if isinstance(page, Mapping) and ("texts" in page or "sentences" in page):
            files = _named_sentences(data, here)  # a child that writes the page's words writes them all
    return files


def builtin_base(ref: str) -> str | None:
    """The built-in bot a profile file extends (through other files or not); None for a
    built-in itself and for a file that extends none."""
    chain = extends_chain(ref)
    return chain[-1] if len(chain) > 1 and chain[-1] in BUILTIN_BOTS else None


def validate(data: Mapping[str, Any]) -> Profile:
    """The profile of a merged mapping, or one ProfileError naming the first bad key."""
    _, plain = _typed(data)
    return Profile(data=plain)


def load_profile(ref: str) -> Profile:
    """A built-in bot name or a path to a YAML profile (which may `extends:` a built-in)."""
    return validate(_raw(ref, Path.cwd(), 0))


def load_profile_data(data: Mapping[str, Any]) -> Profile:
    """A profile given as a mapping (tests); `extends:` resolves like in a file."""
    own = copy.deepcopy(dict(data))
    parent = own.pop("extends", None)
    if parent is not None and not isinstance(parent, str):
        raise ProfileError("extends: must be a built-in name or a path")
    base = _raw(parent, Path.cwd(), 1) if parent else {}
    _read_sentences(own, None)  # a mapping's sentences: files named from the current folder
    return validate(_extend(base, own))

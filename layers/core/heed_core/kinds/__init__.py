"""The source kinds, by name: one room each (heed_core.kinds.<kind>, a ``Kind``), and the registry
the rest of the house asks (the profile's schema, rounds, tasks, settle, the turn, the sources
files, the info page, the runtimes) instead of naming a kind.

    from heed_core import kinds
    kinds.get("feed").entries(entry)       # a room by its name
    kinds.names()                          # ("feed", "page", "sitemap", "site_check", "subsidy", "agenda")
    kinds.register(MyKind())               # one more (a test's toy kind, a kind of one's own)

The built-in kinds are registered here, in the order the info page and every listing shows them.
A kind registered later is known to this process only: the processes a run starts (heed serve's
workers, a Lambda function) know the built-in ones."""
from __future__ import annotations

from heed_core.kinds import agenda, feed, page, site_check, sitemap, subsidy
from heed_core.kinds.base import Entry, Kind, SourceField
from heed_core.profile_schema import Tables
from heed_core.typed_profile import Profile
from heed_core.work import TURN_PURPOSES, WorkItem

__all__ = ["Entry", "Kind", "SourceField", "cadence_s", "extractor_model", "find", "get", "is_spaced", "names",
           "purposes", "reads_tdmrep", "register", "render_endpoint", "running", "stored_keys", "tables",
           "unknown_work", "unregister"]

_KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> None:
    """Add ``kind`` under its name. A name already taken, or a section (``tasks.<name>``) another
    kind declares with a different dataclass, is refused (``ValueError``)."""
    if kind.name in _KINDS:
        raise ValueError(f"a source kind named {kind.name!r} is registered already")
    own = {kind.name: kind.section, **kind.extra_sections}
    for other in _KINDS.values():
        theirs = {other.name: other.section, **other.extra_sections}
        for name, cls in own.items():
            if name in theirs and theirs[name] is not cls:
                raise ValueError(f"tasks.{name}: {kind.name!r} and {other.name!r} declare it differently")
    _KINDS[kind.name] = kind


def unregister(name: str) -> None:
    """Take a kind out (what a test registered); a name not registered is left alone."""
    _KINDS.pop(name, None)


def find(name: str) -> Kind | None:
    return _KINDS.get(name)


def get(name: str) -> Kind:
    """The kind named ``name`` (``KeyError`` for a name no kind has)."""
    return _KINDS[name]


def names() -> tuple[str, ...]:
    return tuple(_KINDS)


def running(profile: Profile) -> tuple[Kind, ...]:
    """The kinds ``profile`` runs (scheduled or configured), in the registry's order."""
    return tuple(k for k in _KINDS.values() if k.name in profile.task_kinds)


def purposes() -> tuple[str, ...]:
    """Every purpose a request may have: robots.txt, the kinds' own (each once), tdmrep.json."""
    owned = [p for k in _KINDS.values() for p in k.handlers]
    return tuple(dict.fromkeys([TURN_PURPOSES[0], *owned, *TURN_PURPOSES[1:]]))


def tables() -> Tables:
    """What the profile's schema takes from the kinds: their names (a schedule's task), the
    purposes (fetch.max_bytes), their sections (tasks.<name>: each kind's own, then the others
    they read)."""
    sections = {k.name: k.section for k in _KINDS.values()}
    for k in _KINDS.values():
        sections.update({n: c for n, c in k.extra_sections.items() if n not in sections})
    return Tables(names={"task_kinds": names(), "purposes": purposes()}, sections={"tasks": sections})


def unknown_work(item: WorkItem) -> str | None:
    """Why a work item cannot be worked (a kind or a purpose nobody registered), or None."""
    kind = _KINDS.get(item.task)
    if kind is None:
        return f"unknown task kind {item.task!r}"
    if item.purpose not in kind.handlers and item.purpose not in TURN_PURPOSES:
        return f"unknown purpose {item.purpose!r} for a {item.task} source"
    return None


def is_spaced(item: WorkItem) -> bool:
    """Whether the item's request is spaced by the round spacing (WANNADO-05): the pages a round
    is about, as its kind says, not robots.txt or sitemaps."""
    kind = _KINDS.get(item.task)
    return kind is not None and item.purpose in kind.spaced


def cadence_s(profile: Profile, name: str) -> float:
    """A source's own cadence (AUBE-08's feeds, PRAHA-04's site checks), 0 for a kind without one."""
    kind = _KINDS.get(name)
    return kind.cadence_s(profile) if kind is not None else 0.0


def reads_tdmrep(profile: Profile) -> bool:
    """Whether any work of the bot needs its hosts' tdmrep.json (PRAHA-03)."""
    return any(k.reads_tdmrep(profile) for k in running(profile))


def render_endpoint(profile: Profile) -> str | None:
    """The render service the bot's pages go through where a source asks (WANNADO-09), or None."""
    return next((url for k in _KINDS.values() if (url := k.render_endpoint(profile))), None)


def extractor_model(profile: Profile) -> str | None:
    """The language model that reads the bot's pages where structured data is missing, or None."""
    return next((m for k in _KINDS.values() if (m := k.extractor_model(profile))), None)


def stored_keys(url: str) -> list[str]:
    """Every bucket key a URL's texts may be kept under, by any kind (COMMON-08: delete on request)."""
    return list(dict.fromkeys(key for k in _KINDS.values() for key in k.stored_keys(url)))


for _kind in (feed.KIND, page.KIND, sitemap.KIND, site_check.KIND, subsidy.KIND, agenda.KIND):
    register(_kind)

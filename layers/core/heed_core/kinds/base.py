"""The shape of a source kind's room (``Kind``): what its work is for, where its rounds start, what
its answers mean, what its sources and profile section hold, and what its page says.

A kind is one module under heed_core.kinds that makes one ``Kind`` (a subclass naming what it
has; every hook has a default that does nothing) and the registry (heed_core.kinds) names it.
The rest of the house asks the registry and never names a kind."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from heed_core.kinds.handling import Handler, TaskInput, TaskOutput
from heed_core.kinds.sayings import Sayings
from heed_core.netguard import parse_target
from heed_core.typed_profile import Profile
from heed_core.urls import BadUrl, authority, canonical
from heed_core.work import Source, UrlRecord, WorkItem

__all__ = ["Entry", "Kind", "SourceField", "flag", "url_list", "url_problem"]


def url_problem(url: Any) -> str | None:
    """Why ``url`` cannot be a source's address (or a sitemap it names), or None."""
    if not isinstance(url, str):
        return f"{url!r} is not a URL (must be a string)"
    if any(c.isspace() for c in url):
        return f"{url!r} contains a space or other whitespace (remove it, or write %20 inside a path)"
    try:
        authority(url)
    except BadUrl as exc:
        return str(exc)
    if parse_target(url) is None:
        return (f"{url!r} cannot be fetched (it needs http or https, a valid host and port, "
                "and no user:password@)")
    try:
        canonical(url)
    except BadUrl:
        return f"{url!r} is not a URL a browser could open (the URL Standard cannot parse it)"
    return None


@dataclass(frozen=True)
class SourceField:
    """An option a source of the kind may carry (``Source.options``), with its check (None when
    the value is fine, else the reason) and how a CSV cell spells it (``flag``: true/false,
    ``urls``: URLs split on spaces or '|', ``text``: as written)."""

    check: Callable[[Any], str | None]
    cell: str = "text"
    doc: str = ""


def _is_bool(value: Any) -> str | None:
    return None if isinstance(value, bool) else "must be true or false"


def _is_url_list(value: Any) -> str | None:
    if not isinstance(value, list) or not value:
        return "must be a non-empty list of http(s) URLs"
    for i, url in enumerate(value):
        problem = url_problem(url)
        if problem:
            return f"[{i}]: {problem}"
    return None


def flag(doc: str) -> SourceField:
    """A true/false option."""
    return SourceField(_is_bool, "flag", doc)


def url_list(doc: str) -> SourceField:
    """A non-empty list of http(s) URLs."""
    return SourceField(_is_url_list, "urls", doc)


@dataclass
class Entry:
    """One source's start in a round: the bot, the source, its own first request (``item``: its
    canonical URL with the kind's ``entry_purpose``, its options in ``ctx["opts"]``), what is known
    of URLs (validators), the URLs the round's sources entered already (one read per round however
    many sources share one: a kind adds what it enters) and the reasons it sits out (``skips``)."""

    profile: Profile
    source: Source
    item: WorkItem
    records: Mapping[str, UrlRecord]
    taken: set[str] = field(default_factory=set)
    skips: list[tuple[str, str]] = field(default_factory=list)


class Kind:
    """A source kind. A subclass sets the class attributes and overrides the hooks it needs."""

    name: ClassVar[str]
    section: ClassVar[type]  # tasks.<name>: a frozen dataclass of key()-declared options
    entry_purpose: ClassVar[str]  # the purpose of a source's own first request
    handlers: ClassVar[Mapping[str, Handler]]  # purpose -> what a good answer means (the purposes it owns)
    extra_sections: ClassVar[Mapping[str, type]] = {}  # other tasks.* sections it reads, filled when it runs
    fields: ClassVar[Mapping[str, SourceField]] = {}  # a source's options
    spaced: ClassVar[frozenset[str]] = frozenset()  # purposes spaced by the round spacing (WANNADO-05)
    read_on_304: ClassVar[frozenset[str]] = frozenset()  # purposes whose 304 is read from the kept copy
    keeps_seen_items: ClassVar[bool] = False  # its source remembers the items it reported (seen_items)

    # --- its profile section ---------------------------------------------------------------------
    def check(self, options: Any) -> None:
        """Rules between the keys of its configured section (``ProfileError``)."""

    def options(self, profile: Profile) -> Any:
        """Its section of ``profile`` (the defaults when the bot does not run it)."""
        return profile.section(self.name, self.section)

    # --- rounds ------------------------------------------------------------------------------------
    def cadence_s(self, profile: Profile) -> float:
        """A source's own cadence (AUBE-08, PRAHA-04): a round's read waits for it; 0: none."""
        return 0.0

    def entries(self, entry: Entry) -> list[WorkItem]:
        """The first work of a source in a round (default: its own first request)."""
        return [entry.item]

    def status_url(self, source: Source) -> str:
        """The URL whose record says how the source's last read went (its first request's)."""
        return source.url

    # --- answers -----------------------------------------------------------------------------------
    def handle(self, inp: TaskInput) -> TaskOutput:
        """A response worth reading (2xx, or a 304 read from the kept copy)."""
        handler = self.handlers.get(inp.item.purpose)
        if handler is None:
            return TaskOutput(skips=[(inp.item.url, "unknown_purpose", inp.item.purpose)])
        return handler(inp)

    def handle_failure(self, inp: TaskInput, code: str, detail: str) -> TaskOutput:
        """An answer (or none) that gives up on the item: the skip, and what the kind reports of it."""
        return TaskOutput(skips=[(inp.item.url, code, detail)])

    def may_bring(self, profile: Profile, item: WorkItem) -> int:
        """The most requests the item's answer can still add to its host's work this round, as the
        profile's caps bound them (an upper bound for ordering work, never a cap); 0: none."""
        return 0

    def refusal(self, profile: Profile, item: WorkItem, recent: list[Any] | None, now: float) -> tuple[str, str] | None:
        """(reason, detail) when the kind's own promises say the item is not fetched now (read once,
        a cadence), after the operator's, the site's and the host's (heed_core.refusals); None: go on."""
        return None

    def read_once(self, profile: Profile, item: WorkItem) -> bool:
        """True for work whose URL is read once ever (AUBE-03, PRAHA-05), redirects included."""
        return False

    def reads_tdmrep(self, profile: Profile, item: WorkItem | None = None) -> bool:
        """True when the item (or, with None, any of the kind's work) needs its host's tdmrep.json."""
        return False

    def stored_keys(self, url: str) -> list[str]:
        """The bucket keys the kind may keep a URL's texts under (COMMON-08: delete on request)."""
        return []

    # --- outside services --------------------------------------------------------------------------
    def render_endpoint(self, profile: Profile) -> str | None:
        """The render service its pages go through when a source asks (WANNADO-09), or None."""
        return None

    def extractor_model(self, profile: Profile) -> str | None:
        """The language model that reads its pages where structured data is missing, or None."""
        return None

    # --- the info page -----------------------------------------------------------------------------
    def says(self, profile: Profile) -> Sayings:
        """What the bot's info page says of this kind's work (sentence keys of the language data)."""
        return Sayings()

"""The sitemap kind: a sitemap (and its children, a few per round) whose pages' titles are results."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from heed_core.kinds.base import Kind
from heed_core.kinds.handling import TaskInput, TaskOutput
from heed_core.kinds.sayings import Duration, Sayings, say
from heed_core.kinds.walk import (
    SitemapFallback,
    fallback,
    read_sitemap,
    read_title,
    sitemap_key,
    title_refusal,
    title_rule,
)
from heed_core.typed_profile import Profile
from heed_core.work import WorkItem

__all__ = ["KIND", "SitemapTask"]


@dataclass(frozen=True, kw_only=True)
class SitemapTask:
    pass


def _sitemap(inp: TaskInput) -> TaskOutput:
    return read_sitemap(inp, title_rule)


class Sitemap(Kind):
    name = "sitemap"
    section = SitemapTask
    entry_purpose = "sitemap"
    handlers = {"sitemap": _sitemap, "page": read_title}
    extra_sections = {"sitemap_fallback": SitemapFallback}  # its titles' refetch week
    spaced = frozenset({"page"})
    read_on_304 = frozenset({"sitemap"})

    def stored_keys(self, url: str) -> list[str]:
        return [sitemap_key(url)]

    def refusal(self, profile: Profile, item: WorkItem, recent: list[Any] | None, now: float) -> tuple[str, str] | None:
        return title_refusal(profile, item, recent, now)

    def says(self, profile: Profile) -> Sayings:
        week = fallback(profile).title_refetch_after_s
        return Sayings(fetched=(say("f_title_refetch", d=Duration(week), d_dat=Duration(week, dative=True)),
                                say("f_sitemap")))


KIND = Sitemap()

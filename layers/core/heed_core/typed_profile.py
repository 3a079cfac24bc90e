"""A validated bot profile as the crawler reads it: typed, frozen sections (`profile.politeness.
min_delay_s`), each source kind's options by its name (`profile.section("feed", FeedTask)`).

Made only by heed_core.profile (load, merge, validate), which the kinds' rooms sit below: a kind
reads the profile through this class and never imports the loader."""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from heed_core.profile_keys import (
    Egress,
    Fetch,
    Identity,
    InfoPage,
    Operator,
    Politeness,
    Redirects,
    Responses,
    RobotsRules,
    Schedule,
    Spec,
)
from heed_core.robots_policy import RobotsFetchPolicy
from heed_core.urls import TRACKING_PARAMS

__all__ = ["Profile"]

S = TypeVar("S")


@dataclass(frozen=True)
class Profile:
    """A validated bot profile. ``data`` is the merged mapping with every default filled in;
    ``spec`` the typed sections built from it once; ``sections`` every kind's options known to
    the registry (the bot's own, or the defaults of a kind it does not run); ``task_kinds`` the
    kinds it runs (scheduled or configured), in the registry's order."""

    data: Mapping[str, Any]
    spec: Spec = dataclasses.field(repr=False, compare=False)
    sections: Mapping[str, Any] = dataclasses.field(default_factory=dict, repr=False, compare=False)
    task_kinds: tuple[str, ...] = dataclasses.field(default=(), compare=False)

    def get(self, dotted: str, default: Any = None) -> Any:
        node: Any = self.data
        for part in dotted.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return default
            node = node[part]
        return node

    def task(self, kind: str) -> Mapping[str, Any]:
        return self.data.get("tasks", {}).get(kind, {}) or {}

    def section(self, name: str, cls: type[S]) -> S:
        """The options of ``tasks.<name>`` as ``cls`` (its kind's dataclass): the bot's own, or
        ``cls``'s defaults for a kind the bot does not run."""
        got = self.sections.get(name)
        if got is None:
            return cls()
        if not isinstance(got, cls):
            raise TypeError(f"tasks.{name} is a {type(got).__name__}, not a {cls.__name__}")
        return got

    def max_bytes(self, purpose: str) -> int:
        caps = self.spec.fetch.max_bytes
        return int(caps.get(purpose, caps["default"]))

    # The two kinds' options that code outside the kinds' rooms still reads by name (crawl.Crawler:
    # feed's TDMRep, the embedded engine: agenda's render service and extractor) until it asks
    # heed_core.kinds (reads_tdmrep, render_endpoint, extractor_model) as the rest of the house does.
    @property
    def feed(self) -> Any:
        return self.sections["feed"]

    @property
    def agenda(self) -> Any:
        return self.sections["agenda"]

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
    def info_page(self) -> InfoPage | None:
        return self.spec.info_page

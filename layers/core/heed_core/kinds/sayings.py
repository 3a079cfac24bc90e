"""What a kind says on the bot's info page, as data: sentence keys of the language data with the
profile's values, which the page's renderer (heed.pages) puts in the page's words.

A value is a plain string, or a number the renderer words in the page's language: ``Count``
("40 items"), ``Duration`` ("15 minutes"), ``Every`` ("once every 15 minutes"), ``Quoted``
("“agenda” or “tickets”")."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["Count", "Duration", "Every", "Quoted", "Say", "Sayings", "Value", "say"]


@dataclass(frozen=True)
class Count:
    """``n`` of a counted thing (a noun of the language data: item, character, page, ...)."""

    n: int
    noun: str


@dataclass(frozen=True)
class Duration:
    """A length of time; ``dative``: after a preposition that asks it (German)."""

    seconds: float
    dative: bool = False


@dataclass(frozen=True)
class Every:
    """How often at most: "once every 15 minutes", "once a day"."""

    seconds: float


@dataclass(frozen=True)
class Quoted:
    """Words each in quotes, joined by the language's "or"."""

    words: tuple[str, ...]


Value = str | Count | Duration | Every | Quoted


@dataclass(frozen=True)
class Say:
    """One sentence: its key in the language data and the values of its blanks."""

    key: str
    values: Mapping[str, Value] = field(default_factory=dict)


def say(key: str, **values: Value) -> Say:
    return Say(key, values)


@dataclass(frozen=True)
class Sayings:
    """A kind's sentences by the page's place for them: what is fetched and kept, what the usage
    paragraph adds, how often a source is read (``cadence``), the caps of a round (``caps``) and of
    follow-ups over a window (``follow_caps``). A sentence two kinds say is said once. The flags:
    the kind never extracts a paywalled page (``paywall_checked``), honours noindex and nofollow
    (``reads_meta_robots``); ``outside_services``: its keys that send pages to an outside service,
    which the page's third parties must name."""

    fetched: tuple[Say, ...] = ()
    kept: tuple[Say, ...] = ()
    usage: tuple[Say, ...] = ()
    cadence: tuple[Say, ...] = ()
    caps: tuple[Say, ...] = ()
    follow_caps: tuple[Say, ...] = ()
    paywall_checked: bool = False
    reads_meta_robots: bool = False
    outside_services: tuple[str, ...] = ()

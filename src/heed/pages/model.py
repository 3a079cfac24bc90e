"""The info page as data: sections of paragraphs, lists, facts and code, with inline code and links.

Text is never HTML here: templates are filled with `fmt()`, which keeps code and links as
objects, so the renderer escapes every character exactly once.
"""
from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Code:
    text: str


@dataclass(frozen=True)
class Link:
    text: str
    href: str


@dataclass(frozen=True)
class Strong:
    text: str


Inline = str | Code | Link | Strong
Text = tuple[Inline, ...]


@dataclass(frozen=True)
class Para:
    text: Text


@dataclass(frozen=True)
class Items:
    items: tuple[Text, ...]


@dataclass(frozen=True)
class Pre:
    """A block to copy as it is (robots.txt lines, a command)."""

    text: str


@dataclass(frozen=True)
class Facts:
    """Label and value pairs (a <dl>); a value may be several lines."""

    rows: tuple[tuple[str, tuple[Text, ...]], ...]


@dataclass(frozen=True)
class Sub:
    heading: str
    blocks: tuple[Any, ...]


Block = Para | Items | Pre | Facts | Sub


@dataclass(frozen=True)
class Section:
    id: str
    heading: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Alternate:
    lang: str
    name: str  # the language's own name, for the switch link
    href: str  # where the page in that language is published (a path on the info host)
    url: str  # the same, absolute


@dataclass(frozen=True)
class Page:
    lang: str
    title: str
    lead: Text
    sections: tuple[Section, ...]
    footer: Text
    url: str  # where this page is published
    switch_label: str
    toc_label: str
    alternates: tuple[Alternate, ...]  # the other language(s)
    client_ranges: str | None = None  # ips.json, for <link rel="client-ranges">


_FORMATTER = string.Formatter()


def fmt(template: str, **values: Any) -> Text:
    """`template` with `{name}` filled in; str values are text, Code/Link/Strong stay objects."""
    out: list[Inline] = []
    for literal, field, spec, _conv in _FORMATTER.parse(template):
        if literal:
            out.append(literal)
        if field is None:
            continue
        if field not in values:
            raise KeyError(f"template {template!r} needs {{{field}}}")
        value = values[field]
        if isinstance(value, (Code, Link, Strong)):
            out.append(value)
        elif isinstance(value, tuple):
            out.extend(value)
        else:
            out.append(format(value, spec or ""))
    return tuple(out)


def plain(text: Text) -> str:
    """The words of a text without markup (tests, <title>)."""
    return "".join(p if isinstance(p, str) else p.text for p in text)

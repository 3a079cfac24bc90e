"""A page language: its name, the words of its numbers and its sentences, read from one data file.

The built-in languages are the files in ``heed/pages/languages/`` (``en.yaml``, ``de.yaml``, ...):
a new language is a file, not code. A bot in any other language carries its own file in its
profile (``info_page.sentences.<tag>`` names it; `heed new-bot` writes one to translate). Every
file has English's keys, and no sentence may use a ``{placeholder}`` the renderer does not give
it; ``problems`` says what a file still lacks, one line a key, and ``of`` refuses a file that
lacks anything.
"""
from __future__ import annotations

import re
import string
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from heed_core.profile import Profile, ProfileError
from heed_core.profile_schema import MARK, unknown

from heed.pages.words import Words

__all__ = ["REFERENCE", "Language", "built_in", "canonical_tag", "name_of", "of", "problems", "shipped", "to_translate"]

REFERENCE = "en"  # the language every other file is held to, and the one every page has beside its own
_WEEKDAYS = ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")  # 1 = Sunday
_UNITS = ("second", "minute", "hour", "day", "week")
_SAID_IN_WORDS = re.compile(rf"({'|'.join(_UNITS)})_[0-9]+")  # every.hour_1: "every hour"
_OPTIONAL = ("words.units_dat",)  # German alone: the units after a preposition that takes the dative
_FORMATTER = string.Formatter()


@dataclass(frozen=True)
class Language:
    """What the renderer needs of a language: its ``tag`` (BCP 47), its ``name`` in itself,
    ``words`` for numbers, durations and schedules, and ``sentences`` by key."""

    tag: str
    name: str
    words: Words
    sentences: Mapping[str, str]
    desk: Mapping[str, str]  # the site owners' desk's words (heed.desk), where the bot has one


# --- the files ------------------------------------------------------------------------------------

def _folder() -> Any:
    return resources.files("heed.pages").joinpath("languages")


@cache
def built_in() -> tuple[str, ...]:
    """The tags of the languages Heed ships a file for (its own folder is the registry)."""
    return tuple(sorted(p.name.removesuffix(".yaml") for p in _folder().iterdir() if p.name.endswith(".yaml")))


@cache
def _data(tag: str) -> Mapping[str, Any]:
    text = _folder().joinpath(f"{tag}.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    if not isinstance(data, dict):  # pragma: no cover - a shipped file is tested
        raise ProfileError(f"heed/pages/languages/{tag}.yaml: not a mapping")
    return data


def name_of(tag: str) -> str:
    """The language's own name where Heed has its file, else its tag."""
    return str(_data(tag)["name"]) if tag in built_in() else tag


# --- what a file must hold --------------------------------------------------------------------------

def leaves(value: Any, at: str = "") -> Iterator[tuple[str, Any]]:
    """Every leaf of a nested mapping or list, with its dotted path (``words.every.hour_24``, ``a[2]``)."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from leaves(v, f"{at}.{k}" if at else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from leaves(v, f"{at}[{i}]")
    else:
        yield at, value


def _group(at: str) -> str:
    """``words.every.hour_24`` -> ``words.every``: where a key said in words belongs."""
    return at.rsplit(".", 1)[0]


def _fields(text: str) -> set[str]:
    try:
        return {f for _, f, _, _ in _FORMATTER.parse(text) if f is not None}
    except ValueError:
        return {"{"}  # an unbalanced brace: never one of the placeholders


@cache
def _reference() -> tuple[dict[str, Any], dict[str, set[str]], dict[str, set[str]]]:
    """English's leaves, and the placeholders each key (and each group of keys said in words)
    may use: those of every shipped language, which the page tests render."""
    english = dict(leaves(_data(REFERENCE), ""))
    by_key: dict[str, set[str]] = {}
    by_group: dict[str, set[str]] = {}
    for tag in built_in():
        for at, v in leaves(_data(tag), ""):
            if isinstance(v, str):
                by_key.setdefault(at, set()).update(_fields(v))
                by_group.setdefault(_group(at), set()).update(_fields(v))
    return english, by_key, by_group


def _optional(at: str) -> bool:
    group, _, name = at.rpartition(".")
    return at.startswith(tuple(o + "." for o in _OPTIONAL)) or (
        group in ("words.every", "words.once_every") and bool(_SAID_IN_WORDS.fullmatch(name)))


def _allowed(at: str) -> set[str]:
    _, by_key, by_group = _reference()
    if at in by_key:
        return by_key[at]
    if at.startswith("words.units_dat."):
        return set()
    return by_group.get(_group(at), set())


def _shape(at: str, value: Any) -> str | None:
    """What is wrong with the type of a leaf, by English's (a pair of words, a flag, a sentence)."""
    english, _, _ = _reference()
    ref = english.get(at) if not at.startswith("words.units_dat.") else english.get(at.replace("units_dat", "units"))
    if isinstance(ref, bool):
        return None if isinstance(value, bool) else "must be true or false"
    return None if isinstance(value, str) and value.strip() else "must be a non-empty string"


def problems(data: Any, *, desk: bool = False) -> list[tuple[str, str]]:
    """(key, what is wrong) of each key of a language file that keeps its page from being made:
    still marked WRITE ME (to translate from English), missing, unknown, of the wrong shape,
    or with a placeholder the sentence is not given. Empty when the file is complete. The
    desk's words (``desk.*``) count only for a bot that has a desk (``desk``)."""
    if not isinstance(data, Mapping):
        return [("", "must be a mapping of name, words and sentences")]
    english, _, _ = _reference()
    mine = dict(leaves(data, ""))
    if not desk:
        english = {k: v for k, v in english.items() if not k.startswith("desk.")}
        mine = {k: v for k, v in mine.items() if not k.startswith("desk.")}
    out: list[tuple[str, str]] = []
    for at, value in mine.items():
        ref_at = at.replace("words.units_dat.", "words.units.", 1)
        if ref_at not in english and not _optional(at):
            parent, _, name = at.rpartition(".")
            siblings = [k.rpartition(".")[2] for k in english if k.rpartition(".")[0] == parent]
            out.append((at, str(unknown(at, name, siblings or [k for k in english if "." not in k])).split(": ", 1)[1]))
            continue
        if isinstance(value, str) and MARK.lower() in value.lower():
            said = english.get(ref_at)
            out.append((at, f"still to translate (in English: {said})" if isinstance(said, str) else "still to write"))
            continue
        shape = _shape(at, value)
        if shape:
            out.append((at, shape))
            continue
        if isinstance(value, str):
            extra = sorted(_fields(value) - _allowed(at))
            if extra:
                known = ", ".join("{" + f + "}" for f in sorted(_allowed(at))) or "none"
                out.append((at, f"{{{extra[0]}}} is not a placeholder of this sentence (it has: {known})"))
    for at, said in english.items():
        if at not in mine and not _optional(at):
            out.append((at, f"missing (in English: {said})" if isinstance(said, str) else "missing"))
    return out


# --- a language for the renderer ----------------------------------------------------------------

def _pair(v: Any) -> tuple[str, str]:
    return str(v[0]), str(v[1])


def _build(tag: str, data: Mapping[str, Any]) -> Language:
    w = data["words"]
    units = {k: _pair(v) for k, v in w["units"].items()}
    words = Words(
        decimal=w["decimal"], conj=w["conj"], disj=w["disj"], units=units,
        units_dat={**units, **{k: _pair(v) for k, v in (w.get("units_dat") or {}).items()}},
        nouns={k: _pair(v) for k, v in w["nouns"].items()},
        singular_for_fractions=bool(w["singular_for_fractions"]),
        weekdays={i: w["weekdays"][day] for i, day in enumerate(_WEEKDAYS, 1)},
        every=dict(w["every"]), once_every=dict(w["once_every"]), schedule=dict(w["schedule"]),
        hour_list=w["hour_list"], time_list=w["time_list"])
    return Language(tag=tag, name=str(data["name"]), words=words, sentences=dict(data["sentences"]),
                    desk={str(k): str(v) for k, v in (data.get("desk") or {}).items()})


@cache
def shipped(tag: str) -> Language:
    """Heed's own file for ``tag`` (one of ``built_in()``)."""
    return _build(tag, _data(tag))


def of(p: Profile, tag: str) -> Language:
    """The language ``tag`` of ``p``'s page: the file its profile carries for it
    (``info_page.sentences.<tag>``), else Heed's own. ``ProfileError`` in one line when there is
    neither, or the profile's file still lacks something (heed profile check lists it all)."""
    own = (p.info_page.sentences or {}).get(tag) if p.info_page is not None else None
    if own is None:
        if tag not in built_in():
            raise ProfileError(f"language: {tag!r} has no info-page sentences (Heed has {', '.join(built_in())}; "
                               f"heed new-bot NAME --language {tag} writes a file to translate)")
        return shipped(tag)
    found = problems(own, desk=p.spec.desk)
    if found:
        at, what = found[0]
        more = f" and {len(found) - 1} more" if len(found) > 1 else ""
        raise ProfileError(f"info_page.sentences.{tag}: {at}: {what}{more} (heed profile check lists them)")
    return _build(tag, own)


# --- a file to translate ----------------------------------------------------------------------------

# A BCP 47 tag (RFC 5646 2.1) as Heed takes it: a language of 2 or 3 letters (and its extended
# subtags), then a script, a region and variants; no extensions or private use.
_TAG = re.compile(r"(?P<lang>[a-z]{2,3}(?:-[a-z]{3}){0,3})(?:-(?P<script>[a-z]{4}))?"
                  r"(?:-(?P<region>[a-z]{2}|[0-9]{3}))?(?P<variants>(?:-(?:[a-z0-9]{5,8}|[0-9][a-z0-9]{3}))*)",
                  re.IGNORECASE)


def canonical_tag(text: str) -> str | None:
    """``text`` as a BCP 47 tag in its canonical case (``pt-br`` -> ``pt-BR``, ``ZH-hant`` ->
    ``zh-Hant``), or None when it is not one Heed takes."""
    m = _TAG.fullmatch(text)
    if m is None:
        return None
    parts = [m["lang"].lower()]
    if m["script"]:
        parts.append(m["script"].title())
    if m["region"]:
        parts.append(m["region"].upper())
    return "-".join(parts) + m["variants"].lower()


_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def to_translate(tag: str) -> str:
    """English's file as one to translate into ``tag``: every word and sentence marked
    ``WRITE ME: `` before the English it stands for, the comments kept."""
    english = _folder().joinpath(f"{REFERENCE}.yaml").read_text(encoding="utf-8")
    body = english[english.index("\nname:") + 1:]
    lines = []
    for line in body.splitlines():
        head, sep, comment = line.partition("  #")
        if not head.lstrip().startswith("#"):
            head = _STRING.sub(lambda m: f'"{MARK}: {m.group(1)}"', head)
        lines.append(head + sep + comment)
    intro = [
        f"# The sentences of this bot's info page in {tag}, to translate from English: each value marked",
        f'# "{MARK}: " is to write in {tag}, in place of the English after the mark. A {{name}} in a',
        "# sentence is filled in from the profile: keep each one the English sentence has (and none",
        "# other). `heed profile check` lists what is left, one line a key, and `heed info-page` makes the",
        "# page once nothing is. This file has the shape of Heed's own (heed/pages/languages/*.yaml): a",
        "# finished one can be added there as a built-in language.",
    ]
    return "\n".join(intro + lines) + "\n"

"""Bot profiles: load, merge (`extends:`), validate, and hand out typed, frozen sections
(`profile.politeness.min_delay_s`), which is how the crawler reads them. The merged mapping
(`profile.data`, `profile.get("a.b")`) is for what shows a profile whole (`heed profile show`,
the info page's key table, the hash a stack runs under): the core reads no dotted key. Each
source kind's options (`tasks.<kind>`) are its room's (heed_core.kinds), asked of the registry."""
from __future__ import annotations

import copy
import dataclasses
import types
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from heed_core import kinds
from heed_core.profile_keys import (
    Egress,
    Fetch,
    InfoPage,
    Operator,
    PageTexts,
    Politeness,
    Redirects,
    Responses,
    RobotsRules,
    Schedule,
    Spec,
    Urls,
    cross_check,
)
from heed_core.profile_schema import ProfileError, build, describe, fields_of
from heed_core.typed_profile import Profile

__all__ = ["BUILTIN_BOTS", "Egress", "Fetch", "InfoPage", "Operator", "PageTexts", "Politeness", "Profile",
           "ProfileError", "Redirects", "Responses", "RobotsRules", "Schedule", "Spec", "Urls", "builtin_base",
           "builtin_text", "deep_merge", "extends_chain", "key_reference", "load_profile", "load_profile_data",
           "sentence_files", "validate"]

BUILTIN_BOTS = ("springstudiobot", "praha-x", "wannadobot", "subsidieupdate", "aubebot")
_MAX_EXTENDS_DEPTH = 8


def _typed(data: Mapping[str, Any]) -> tuple[Profile, dict[str, Any]]:
    """The typed profile and the merged mapping with every default filled in."""
    tables = kinds.tables()
    spec, plain = build(Spec, data, tables=tables)
    cross_check(spec)
    for name, options in spec.tasks.items():
        kind = kinds.find(name)
        if kind is not None:
            kind.check(options)  # the rules between a kind's own keys
    # Every task kind that runs (scheduled or configured) gets its defaults written into the
    # mapping too, so `profile.task(kind)` and the typed section can never disagree; and so do
    # the other sections it reads (title-only page fetches of the page and sitemap kinds read
    # sitemap_fallback.title_refetch_after_s).
    scheduled = {s.task for s in spec.schedules}
    running = [k for k in kinds.names() if k in spec.tasks or k in scheduled]
    wanted = {k: kinds.get(k).section for k in running}
    for k in running:
        wanted.update({n: c for n, c in kinds.get(k).extra_sections.items() if n not in wanted})
    typed = dict(spec.tasks)
    for name, cls in wanted.items():
        if typed.get(name) is None:
            typed[name], plain["tasks"][name] = build(cls, {}, f"tasks.{name}", tables)
    spec = dataclasses.replace(spec, tasks=types.MappingProxyType(typed))
    every = tables.sections["tasks"]
    sections = types.MappingProxyType({name: typed.get(name) or cls() for name, cls in every.items()})
    return Profile(data=plain, spec=spec, sections=sections, task_kinds=tuple(running)), plain


def key_reference() -> list[tuple[str, str, Any, str]]:
    """(dotted key, what it must be, default or MISSING, doc) of every key: for the README."""
    out: list[tuple[str, str, Any, str]] = []
    tables = kinds.tables()

    def walk(cls: type, prefix: str) -> None:
        for name, tp, meta, default in fields_of(cls):
            dotted = f"{prefix}{name}"
            args = [a for a in getattr(tp, "__args__", ()) if a is not type(None)]
            inner = args[0] if len(args) == 1 and type(None) in tp.__args__ else tp
            if dataclasses.is_dataclass(inner):
                walk(inner, f"{dotted}.")  # type: ignore[arg-type]
            elif name == "texts":
                walk(PageTexts, f"{dotted}.<lang>.")
            elif meta.sections is not None:
                for section, section_cls in tables.sections[meta.sections].items():
                    walk(section_cls, f"{dotted}.{section}.")
            else:
                out.append((dotted, describe(tp, meta, name, tables), default, meta.doc))

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
    # Typed from the mapping it shows (every default written in it), as a stack reads it back.
    return _typed(plain)[0]


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

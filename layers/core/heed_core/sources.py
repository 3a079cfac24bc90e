"""The sources of a bot as files: a `--sources` YAML file, a CSV file, a listing's JSON lines (what
`heed sources list --json` prints), or one source given on the command line, read into Source
records with one clear error per mistake: one set of checks for every way in. What a source of
each kind may carry (its options and their checks) is its kind's room's (``Kind.fields``)."""
from __future__ import annotations

import csv
import difflib
import json
from pathlib import Path
from typing import Any

import yaml

from heed_core import kinds
from heed_core.errors import ConfigError
from heed_core.kinds.base import url_problem
from heed_core.profile import Profile
from heed_core.urls import canonical
from heed_core.work import Source

__all__ = ["SourcesError", "load_source_file", "load_sources", "load_sources_csv", "load_sources_jsonl",
           "source_from_mapping"]


class SourcesError(ConfigError, ValueError):
    """A sources file that cannot be used. The message names the entry, the key and the reason,
    on one line (what the file holds is shown escaped)."""

    code = "bad_sources"


_COMMON = ("id", "url", "kind")


def _options(kind: str) -> dict[str, Any]:
    """The options a source of ``kind`` takes, by name (its room's fields)."""
    return dict(kinds.get(kind).fields)


def _owners(option: str) -> list[str]:
    """The kinds whose sources take ``option``."""
    return sorted(k for k in kinds.names() if option in kinds.get(k).fields)


def _suggest(word: str, known: list[str]) -> str:
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else f"one of {', '.join(known)}"


def _check_option(where: str, kind: str, key: Any, value: Any, sep: str = ".") -> None:
    if not isinstance(key, str):
        raise SourcesError(f"{where}: {key!r} is not an option name")
    known = _options(kind)
    if key in known:
        problem = known[key].check(value)
        if problem:
            raise SourcesError(f"{where}{sep}{key}: {problem}")
        return
    elsewhere = _owners(key)
    if elsewhere:
        raise SourcesError(f"{where}{sep}{key}: not an option of kind {kind!r} "
                           f"(only {' and '.join(elsewhere)} sources take it)")
    everything = sorted(set(_COMMON) | {k for name in kinds.names() for k in kinds.get(name).fields})
    close = difflib.get_close_matches(key, everything, n=1, cutoff=0.6)
    if close and (close[0] in known or close[0] in _COMMON):
        hint = f"did you mean {close[0]!r}?"
    elif close:
        owners = " and ".join(_owners(close[0]))
        hint = f"did you mean {close[0]!r}? only {owners} sources take it"
    elif known:
        hint = f"known: {', '.join(sorted(known))}"
    else:
        hint = f"kind {kind!r} takes no options"
    raise SourcesError(f"{where}{sep}{key}: unknown option for kind {kind!r} ({hint})")


def load_sources(path: Path, profile: Profile) -> list[Source]:
    text = _text(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise SourcesError(f"{path}: not valid YAML{where}") from exc
    if not isinstance(data, dict):
        raise SourcesError(f"{path}: expected a mapping with a 'sources' list")
    for key in data:
        if key != "sources":
            raise SourcesError(f"{path}: {key}: unknown key ({_suggest(str(key), ['sources'])})")
    if not isinstance(data.get("sources"), list):
        raise SourcesError(f"{path}: expected a mapping with a 'sources' list")
    if not data["sources"]:
        raise SourcesError(f"{path}: sources: the list is empty (nothing to crawl)")
    out: list[Source] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(data["sources"]):
        where = f"{path}: sources[{i}]"
        src = source_from_mapping(raw, profile, where)
        if src.id in seen:
            if raw.get("id") is None:
                raise SourcesError(f"{where}: the same url and kind as sources[{seen[src.id]}]")
            raise SourcesError(f"{where}.id: {src.id!r} is used twice (also by sources[{seen[src.id]}])")
        seen[src.id] = i
        out.append(src)
    return out


def source_from_mapping(raw: Any, profile: Profile, where: str, sep: str = ".") -> Source:
    """One source (``{url, kind, id?, <options of its kind>}``) checked as a sources file's
    entry is; ``where`` starts every message (``FILE: sources[3]``, ``--kind``...)."""
    scheduled = {s.task for s in profile.schedules}
    if not isinstance(raw, dict):
        raise SourcesError(f"{where}: must be a mapping with url and kind")
    url, kind = raw.get("url"), raw.get("kind")
    if url is None:
        raise SourcesError(f"{where}{sep}url: missing")
    problem = url_problem(url)
    if problem:
        raise SourcesError(f"{where}{sep}url: {problem}")
    # One source, one URL: the spelling the bot requests (two spellings of a feed are one source).
    url = canonical(url, profile.strip_params)
    known_kinds = list(kinds.names())
    if kind is None:
        raise SourcesError(f"{where}{sep}kind: missing (one of {', '.join(known_kinds)})")
    if kind not in known_kinds:
        hint = _suggest(str(kind), known_kinds)
        raise SourcesError(f"{where}{sep}kind: {kind!r} is not a kind of source ({hint})")
    if kind not in scheduled:
        raise SourcesError(f"{where}{sep}kind: {profile.name} has no schedule for {kind!r} "
                           f"(it runs: {', '.join(sorted(scheduled)) or 'nothing'})")
    for key, value in raw.items():
        if key not in _COMMON:
            _check_option(where, kind, key, value, sep)
    given = raw.get("id")
    if given is not None and (isinstance(given, bool) or not isinstance(given, str | int)
                              or not str(given).strip()):
        raise SourcesError(f"{where}{sep}id: {given!r} is not valid (must be a non-empty string)")
    sid = str(given).strip() if given is not None else Source.make_id(url, kind)
    options: dict[str, Any] = {k: v for k, v in raw.items() if k not in _COMMON}
    return Source(id=sid, url=url, kind=kind, options=options)


_TRUE = {"true", "yes", "1", "y"}
_FALSE = {"false", "no", "0", "n"}


def _cells(spelling: str) -> set[str]:
    """The options (of any kind) a CSV cell spells so: ``flag`` or ``urls``."""
    return {k for name in kinds.names() for k, f in kinds.get(name).fields.items() if f.cell == spelling}


def _csv_cell(column: str, text: str) -> Any:
    """A CSV cell as the option's type: true/false for a flag, a list (split on spaces or |)."""
    if column in _cells("flag") and text.lower() in _TRUE | _FALSE:
        return text.lower() in _TRUE
    if column in _cells("urls"):
        return [part for part in text.replace("|", " ").split() if part]
    return text


def _text(path: Path, encoding: str = "utf-8") -> str:
    """A sources file's text; one line (``SourcesError``) when it cannot be read as UTF-8."""
    try:
        return path.read_text(encoding=encoding)
    except OSError as exc:
        raise SourcesError(f"{path}: cannot read ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise SourcesError(f"{path}: not UTF-8 text") from exc


def load_sources_csv(path: Path, profile: Profile) -> list[Source]:
    """A CSV file with a header row: ``url,kind`` and optionally ``id`` and the kinds' options
    (``write_about``, ``render``: true/false; ``sitemaps``: URLs separated by spaces or ``|``).
    An empty cell is no value."""
    text = _text(path, "utf-8-sig")
    try:
        rows = list(csv.reader(text.splitlines()))
    except csv.Error as exc:
        raise SourcesError(f"{path}: not valid CSV ({exc})") from exc
    if not rows or not any(cell.strip() for cell in rows[0]):
        raise SourcesError(f"{path}: empty (a CSV file starts with a header row: url,kind,...)")
    header = [cell.strip().lower() for cell in rows[0]]
    for column in ("url", "kind"):
        if column not in header:
            raise SourcesError(f"{path}: line 1: no {column!r} column (the header names url, kind and options)")
    out: list[Source] = []
    seen: dict[str, int] = {}
    for number, row in enumerate(rows[1:], 2):
        if not any(cell.strip() for cell in row):
            continue
        where = f"{path}: line {number}"
        if len(row) > len(header):
            raise SourcesError(f"{where}: {len(row)} cells for {len(header)} columns")
        # A short row leaves its last columns out (a row longer than the header was refused above).
        cells = zip(header, row, strict=False)
        raw = {column: _csv_cell(column, cell.strip()) for column, cell in cells if cell.strip()}
        src = source_from_mapping(raw, profile, where, ", column ")
        if src.id in seen:
            what = "id" if "id" in raw else "url and kind"
            raise SourcesError(f"{where}: the same {what} as line {seen[src.id]}")
        seen[src.id] = number
        out.append(src)
    if not out:
        raise SourcesError(f"{path}: no sources under the header (nothing to crawl)")
    return out


# What `heed sources list --json` says of a source beside its definition: the crawl's, not the file's.
_LISTED = frozenset({"last_read", "last_status", "next_due", "closed", "closed_reason", "closed_since",
                     "items_found", "hosts"})


def load_sources_jsonl(path: Path, profile: Profile) -> list[Source]:
    """One JSON object a line, as `heed sources list --json` prints them (``id``, ``url``, ``kind``,
    ``options``, and what the crawl learnt, which an import leaves to the crawl): a listing imports
    back unchanged."""
    text = _text(path)
    out: list[Source] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SourcesError(f"{where}: not a JSON object ({exc.msg})") from exc
        if not isinstance(obj, dict):
            raise SourcesError(f"{where}: not a JSON object")
        options = obj.get("options") or {}
        if not isinstance(options, dict):
            raise SourcesError(f"{where}: options: must be an object")
        raw = {k: v for k, v in obj.items() if k not in _LISTED and k != "options"}
        src = source_from_mapping({**raw, **options}, profile, where)
        if src.id in seen:
            raise SourcesError(f"{where}: the same id as line {seen[src.id]}")
        seen[src.id] = number
        out.append(src)
    if not out:
        raise SourcesError(f"{path}: no sources in it (one JSON object a line, as sources list --json prints)")
    return out


def _is_jsonl(path: Path) -> bool:
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return True
    try:
        with path.open(encoding="utf-8") as f:
            first = next((line for line in f if line.strip()), "")
        return isinstance(json.loads(first), dict) and "url" in json.loads(first)
    except (OSError, UnicodeDecodeError, ValueError):
        return False


def load_source_file(path: Path, profile: Profile) -> list[Source]:
    """A sources file: ``.csv`` is CSV; one JSON object a line (``.jsonl``, or what `heed sources
    list --json` printed) is a listing; anything else the YAML of ``--sources``."""
    if path.suffix.lower() == ".csv":
        return load_sources_csv(path, profile)
    if _is_jsonl(path):
        return load_sources_jsonl(path, profile)
    return load_sources(path, profile)

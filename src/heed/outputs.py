"""A run's output folder (``heed local run --out DIR``), read in one place: ``requests.jsonl``,
``items.jsonl`` and ``skips.jsonl`` (one JSON object a line) and ``summary.json``.

Every command and test that looks at a run's records reads them here, with one rule for what is
not a record: a blank line is none, the last line of a file a killed run left half-written is
none, and any other line that is not a JSON object is the caller's ``strict`` choice: an error
naming the file and line (``OutputError``, exit 2: the folder is not a heed run's output), or
left out (``strict=False``: explain looks through whatever is there)."""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from heed_core.errors import ConfigError

__all__ = ["RECORDS", "OutputError", "read_jsonl", "read_records", "read_summary"]

RECORDS = ("requests", "items", "skips")  # the record files, each <name>.jsonl


class OutputError(ConfigError):
    """A file of a run's output that cannot be read as one."""

    code = "bad_output"


def read_jsonl(path: Path, *, strict: bool = True) -> list[dict[str, Any]]:
    """The JSON objects of ``path``, one a line; a file that is not there holds none."""
    if not path.is_file():
        return []
    try:
        text = path.read_text(encoding="utf-8", errors="strict" if strict else "replace")
    except (OSError, UnicodeDecodeError) as exc:
        raise OutputError(f"{path}: cannot read ({type(exc).__name__})") from exc
    lines = text.split("\n")
    torn = len(lines) - 1 if lines[-1].strip() else -1  # the last line, without its newline
    out: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            rec = None
        if isinstance(rec, dict):
            out.append(rec)
        elif number - 1 != torn and strict:
            raise OutputError(f"{path}:{number}: not a JSON record (is this a heed run's output?)")
    return out


def read_records(out_dir: Path, names: Iterable[str] = RECORDS, *,
                 strict: bool = True) -> Iterator[tuple[str, dict[str, Any]]]:
    """(``request`` | ``item`` | ``skip``, the record) of every record file of a run's folder, in
    the order of ``names``; a file a run stopped early did not write holds none."""
    for name in names:
        for rec in read_jsonl(Path(out_dir) / f"{name}.jsonl", strict=strict):
            yield name[:-1], rec


def read_summary(out_dir: Path) -> dict[str, Any]:
    """``summary.json``, or {} when the run ended before writing it."""
    path = Path(out_dir) / "summary.json"
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise OutputError(f"{path}: not a run's summary ({type(exc).__name__})") from exc
    if not isinstance(data, dict):
        raise OutputError(f"{path}: not a run's summary")
    return data

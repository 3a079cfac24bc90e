"""Where the tests find test data copied from other projects (feedparser's feeds, Google's and
crawler-commons' robots.txt files, schema.org's examples, sitemap parsers' fixtures, the WPT URL
cases): in ``../shared`` beside the clone, never in the repo. ``../shared/vendored/<name>/`` holds
the folders the repo once carried (same layout), ``../shared/peer-data/<name>/`` the richer peer
corpora. CI has ``../shared``; a fresh clone does not, and the tests that need it skip, saying so
in one line. What the project wrote about that data (expectations, refusal lists, baselines)
stays in ``tests/fixtures``."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
VENDORED = SHARED / "vendored"
PEER_DATA = SHARED / "peer-data"


def find_corpus(*names: str) -> Path | None:
    """The first of ``vendored/<name>``, ``peer-data/<name>`` under ../shared that exists (a folder
    or a file), trying each name in turn; None when there is none."""
    for name in names:
        for where in (VENDORED, PEER_DATA):
            path = where / name
            if path.exists():
                return path
    return None


def absent(*names: str) -> str:
    """The one-line reason a test skips when none of ``names`` is beside this clone."""
    return (f"corpus {' or '.join(names)} is not here: other projects' test data is read from "
            f"{VENDORED}/ or {PEER_DATA}/ (beside CI's clone), never from the repo")


def corpus(*names: str) -> Path:
    """The corpus ``names[0]`` (e.g. ``"feedparser"``, ``"sitemaps/usp"``), or the first other name
    that exists; the calling test is skipped, with the reason, where ../shared holds none of them."""
    path = find_corpus(*names)
    if path is None:
        pytest.skip(absent(*names))
    return path

"""Issue 36, the executor small: no non-test file over ~450 lines, no class over ~150 lines in the
turn. A file that grows past it is split into cohesive modules (the old import path kept by a
re-export); the turn's executor keeps its outline and its steps live beside it."""
from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAX_FILE_LINES = 450
MAX_TURN_CLASS_LINES = 150
TURN_FILES = ("layers/core/heed_core/crawl.py", "layers/core/heed_core/turn.py")


def _tracked_python() -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: no list of tracked files")
    return [p for p in out.stdout.splitlines() if not p.startswith("tests/")]


def test_no_non_test_file_is_over_450_lines() -> None:
    big = []
    for rel in _tracked_python():
        path = ROOT / rel
        if path.is_file():
            n = len(path.read_text(encoding="utf-8").splitlines())
            if n > MAX_FILE_LINES:
                big.append(f"{rel}: {n} lines")
    assert not big, "split into cohesive modules (issue 36):\n" + "\n".join(big)


@pytest.mark.parametrize("rel", TURN_FILES)
def test_no_class_of_the_turn_is_over_150_lines(rel: str) -> None:
    tree = ast.parse((ROOT / rel).read_text(encoding="utf-8"))
    big = [f"{rel}: class {node.name}: {node.end_lineno - node.lineno + 1} lines"  # type: ignore[operator]
           for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
           and node.end_lineno - node.lineno + 1 > MAX_TURN_CLASS_LINES]  # type: ignore[operator]
    assert not big, "the executor keeps the turn's outline; its steps live beside it (issue 36):\n" + "\n".join(big)

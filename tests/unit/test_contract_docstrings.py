"""STYLE 3: the core's ports and the host turn say their contract. Every public class, function and
method of these modules has a docstring (what it takes, returns, raises, guarantees)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "layers/core/heed_core"
CONTRACTS = ("store.py", "ports.py", "turn.py", "crawl.py", "settle.py", "admit.py", "drain.py", "hoststate.py",
             "refusals.py", "robots_step.py", "settle_turn.py", "committer.py", "slots.py")


def undocumented(path: Path) -> list[str]:
    """The public names of a module (top level, and the public methods of its public classes)
    that have no docstring."""
    missing: list[str] = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) or node.name.startswith("_"):
            continue
        if not ast.get_docstring(node):
            missing.append(node.name)
        if isinstance(node, ast.ClassDef):
            missing += [f"{node.name}.{m.name}" for m in node.body
                        if isinstance(m, ast.FunctionDef) and not m.name.startswith("_") and not ast.get_docstring(m)]
    return missing


@pytest.mark.parametrize("module", CONTRACTS)
def test_style_3_every_public_name_of_the_ports_and_the_turn_says_its_contract(module: str) -> None:
    assert undocumented(CORE / module) == []

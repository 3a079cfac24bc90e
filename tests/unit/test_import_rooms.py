"""STYLE 10: no cycles. The rooms are ordered heed_core < heed_aws, heed_embedded < heed (functions/
wire on top): a lower room never imports a higher one, not even inside a function, the two rooms
beside each other never import each other (the embedded engine stands on the core alone: no AWS
code, no boto3, no moto on its path), and no module reaches itself through its imports. Every
import statement counts (top level, in a function, under TYPE_CHECKING), read from the source, so
an import that would only run later cannot hide a cycle."""
from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ROOMS = (("heed_core", ROOT / "layers/core/heed_core"), ("heed_aws", ROOT / "layers/aws/heed_aws"),
         ("heed_embedded", ROOT / "src/heed_embedded"), ("heed", ROOT / "src/heed"))
RANK = {"heed_core": 0, "heed_aws": 1, "heed_embedded": 1, "heed": 2}
# What the pure core never imports (STYLE 2: I/O at the edges), and what no room imports at all:
# protego is the test suite's robots.txt oracle, never the crawler's parser (README, robots.txt).
NOT_IN_CORE = ("boto3", "botocore", "aws_lambda_powertools", "aws_xray_sdk", "moto", "publicsuffixlist")
NOT_IN_EMBEDDED = ("boto3", "botocore", "aws_lambda_powertools", "aws_xray_sdk", "moto")
NOWHERE = ("protego",)


def modules(rooms: Iterable[tuple[str, Path]]) -> dict[str, Path]:
    """Every module of the rooms by dotted name (a package by its name, for its __init__.py)."""
    out: dict[str, Path] = {}
    for name, root in rooms:
        for path in sorted(root.rglob("*.py")):
            parts = [name, *path.relative_to(root).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _imported(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The dotted names an import statement asks for (``from a import b`` may name module a.b)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, base] if base else package)
    return [base] + [f"{base}.{a.name}" for a in node.names]


def import_graph(mods: Mapping[str, Path]) -> dict[str, dict[str, int]]:
    """module -> {module of the rooms it imports: the line of the first such import}. An import
    of one's own parent package is left out: Python has imported it before the module anyway."""
    graph: dict[str, dict[str, int]] = {}
    for module, path in mods.items():
        deps: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for name in _imported(module, path, node):
                while name and name not in mods:
                    name = name.rpartition(".")[0]
                if name and name != module and not module.startswith(name + "."):
                    deps.setdefault(name, node.lineno)
        graph[module] = deps
    return graph


def external_imports(mods: Mapping[str, Path]) -> dict[str, set[str]]:
    """module -> the top-level names of what it imports from outside the rooms."""
    out: dict[str, set[str]] = {}
    for module, path in mods.items():
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names.add(node.module.split(".")[0])
        out[module] = names
    return out


def cycles(graph: Mapping[str, Mapping[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            nxt = next((w for w in edges if w in graph), None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def upward(graph: Mapping[str, Mapping[str, int]]) -> list[str]:
    """Imports from a lower room into a higher one, or between two rooms of one rank, as 'module:line -> module'."""
    return [f"{m}:{line} -> {d}" for m, deps in sorted(graph.items()) for d, line in sorted(deps.items())
            if RANK[d.split(".")[0]] > RANK[m.split(".")[0]]
            or (RANK[d.split(".")[0]] == RANK[m.split(".")[0]] and d.split(".")[0] != m.split(".")[0])]


@pytest.fixture(scope="module")
def graph() -> dict[str, dict[str, int]]:
    return import_graph(modules(ROOMS))


def test_style_10_no_room_imports_a_higher_room(graph: dict[str, dict[str, int]]) -> None:
    # GIVEN every import of heed_core, heed_aws, heed_embedded and heed, function-local ones included
    # THEN none goes up or sideways: the core knows nothing of AWS or the CLI, the AWS layer and the
    # embedded engine nothing of the CLI or of each other
    assert upward(graph) == []


def test_style_10_no_import_cycles(graph: dict[str, dict[str, int]]) -> None:
    assert cycles(graph) == []


def test_style_2_the_core_imports_no_aws_and_nothing_imports_protego() -> None:
    mods = modules(ROOMS)
    ext = external_imports(mods)
    core = {m: sorted(names & set(NOT_IN_CORE)) for m, names in ext.items() if m.split(".")[0] == "heed_core"}
    assert {m: n for m, n in core.items() if n} == {}
    embedded = {m: sorted(names & set(NOT_IN_EMBEDDED)) for m, names in ext.items()
                if m.split(".")[0] == "heed_embedded"}
    assert {m: n for m, n in embedded.items() if n} == {}
    assert {m: sorted(n & set(NOWHERE)) for m, n in ext.items() if n & set(NOWHERE)} == {}


# --- the checker itself: it must see what it is there to see -------------------------------------------

def _room(tmp: Path, name: str, files: Mapping[str, str]) -> tuple[str, Path]:
    root = tmp / name
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return name, root


def test_checker_finds_a_cycle_hidden_in_a_function(tmp_path: Path) -> None:
    # GIVEN a.py importing b at the top and b.py importing a only inside a function
    room = _room(tmp_path, "heed_core", {"__init__.py": "", "a.py": "from heed_core import b\n",
                                         "b.py": "def f():\n    from heed_core.a import x\n    return x\n"})
    # THEN the checker reports the cycle
    assert cycles(import_graph(modules([room]))) == [["heed_core.a", "heed_core.b"]]


def test_checker_finds_a_relative_cycle_and_an_upward_import(tmp_path: Path) -> None:
    core = _room(tmp_path, "heed_core", {"__init__.py": "", "x.py": "from . import y\n",
                                         "y.py": "from .x import thing\n",
                                         "z.py": "def g():\n    import heed_aws.store\n"})
    aws = _room(tmp_path, "heed_aws", {"__init__.py": "", "store.py": "import heed_core.x\n"})
    graph = import_graph(modules([core, aws]))
    assert cycles(graph) == [["heed_core.x", "heed_core.y"]]
    assert upward(graph) == ["heed_core.z:2 -> heed_aws.store"]


def test_checker_leaves_out_a_modules_own_parent_package(tmp_path: Path) -> None:
    # A package's __init__ re-exporting its submodule is no cycle: the parent is always imported first.
    room = _room(tmp_path, "heed_core", {"__init__.py": "", "pkg/__init__.py": "from heed_core.pkg.m import f\n",
                                         "pkg/m.py": "import heed_core.pkg\ndef f():\n    pass\n"})
    assert cycles(import_graph(modules([room]))) == []


def test_checker_finds_an_import_between_the_rooms_beside_each_other(tmp_path: Path) -> None:
    # GIVEN the embedded engine reaching into the AWS layer (only inside a function)
    aws = _room(tmp_path, "heed_aws", {"__init__.py": "", "store.py": "X = 1\n"})
    emb = _room(tmp_path, "heed_embedded", {"__init__.py": "", "engine.py": "def f():\n    import heed_aws.store\n"})
    # THEN the checker names it
    assert upward(import_graph(modules([aws, emb]))) == ["heed_embedded.engine:2 -> heed_aws.store"]


def test_heed_serve_loads_no_aws_package_in_its_process(tmp_path: Path) -> None:
    """The issue's "no moto and no boto3 on this path", for the process a user starts: `heed
    serve` builds the whole command line (every command's parser), so a module of the AWS side
    imported at the top of an operator command would load boto3 (some 150 ms) into the embedded
    engine. Python's own import log of a real `heed serve --once` names every module it loaded."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "heed.cli", "serve", "--bot", "aubebot",
                           "--state", str(tmp_path / "state"), "--once", "--quiet"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    loaded = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert len(loaded) > 100  # the log is there: the check below cannot pass on an empty one
    assert "heed_embedded.engine" in loaded
    aws = sorted(m for m in loaded if m.split(".")[0] in NOT_IN_EMBEDDED)
    assert aws == [], aws

"""The house's rooms (issue 36): the imports of layers/ and src/, lazy ones inside functions
included, show no circle and no arrow up. The core (heed_core) imports no engine and no command;
an engine (heed_aws, heed_embedded) imports the core and no other engine and no command; the
commands (heed) import all below them. A package's __init__ counts as a module of its own (importing
a module of a package runs its __init__ first)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROOMS = {"heed_core": ROOT / "layers/core/heed_core", "heed_aws": ROOT / "layers/aws/heed_aws",
         "heed_embedded": ROOT / "src/heed_embedded", "heed": ROOT / "src/heed"}
LEVEL = {"heed_core": 0, "heed_aws": 1, "heed_embedded": 1, "heed": 2}


def _modules() -> dict[str, Path]:
    out = {}
    for pkg, root in ROOMS.items():
        for f in root.rglob("*.py"):
            parts = [p for p in f.relative_to(root).with_suffix("").parts if p != "__init__"]
            out[".".join([pkg, *parts])] = f
    return out


def _graph() -> dict[str, set[str]]:
    mods = _modules()

    def resolve(name: str) -> str | None:
        while name:
            if name in mods:
                return name
            name = name.rsplit(".", 1)[0] if "." in name else ""
        return None

    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, f in mods.items():
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):  # every import, at any depth
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            else:
                continue
            for n in names:
                target = resolve(n)
                if target is not None and target != m:
                    edges[m].add(target)
    return edges


def test_no_room_imports_one_above_it_or_beside_it() -> None:
    up = sorted(f"{a} -> {b}" for a, bs in _graph().items() for b in bs
                if LEVEL[b.split(".")[0]] > LEVEL[a.split(".")[0]]
                or (LEVEL[a.split(".")[0]] == LEVEL[b.split(".")[0]] == 1 and a.split(".")[0] != b.split(".")[0]))
    assert not up, "\n".join(up)


def test_no_import_circle_lazy_imports_included() -> None:
    edges = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    assert not circles, circles

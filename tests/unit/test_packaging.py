"""The wheel ships every package of the code: pyproject.toml lists each folder that holds Python
modules (a package left out installs, and then fails to import outside the checkout)."""
from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_folder_is_listed_in_pyproject() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    listed = set(config["packages"])
    wanted = set()
    for name, folder in config["package-dir"].items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base)
            wanted.add(".".join([name, *rel.parts]))
        for module in base.rglob("*.py"):  # a folder of modules without __init__.py is a package too
            rel = module.parent.relative_to(base)
            if "__pycache__" not in rel.parts:
                wanted.add(".".join([name, *rel.parts]))
    assert sorted(wanted - listed) == []

"""A copy of the project (what `heed deploy` and `sam build` read) in a folder of a test's own, so
a deploy can write its samconfig.toml and profile layer without touching the checkout.

The production template may name an architecture whose binary wheels cannot load on this
machine (arm64 on an x86_64 runner): the copy's template and its layers' makefiles (``ARCH``) name
this machine's instead, and nothing else changes, so its `sam build` is the real one and its
artifact can be run here."""
from __future__ import annotations

import platform
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# README.md too: the template's Metadata (AWS::ServerlessRepo::Application ReadmeUrl) makes `sam deploy` upload it;
# src/ too: the desk's function is built from the heed package (functions/desk/Makefile).
COPIED = (".python-version", "samconfig.toml", "README.md", "functions", "layers", "src")

__all__ = ["ROOT", "host_architecture", "project_copy", "sam"]


def host_architecture() -> str:
    """This machine's architecture in Lambda's words."""
    return "arm64" if platform.machine().lower() in ("aarch64", "arm64") else "x86_64"


def sam() -> Path:
    return ROOT / ".venv-tools" / "bin" / "sam"


def project_copy(dst: Path) -> Path:
    """template.yaml (on this machine's architecture), samconfig.toml, README.md, functions/,
    layers/ and src/ under ``dst``; no generated profile, no bytecode."""
    dst.mkdir(parents=True, exist_ok=True)
    def ignore(folder: str, names: list[str]) -> set[str]:
        generated = {n for n in names if n.endswith(".json")} if Path(folder).name == "heed-profiles" else set()
        return generated | {n for n in names if n == "__pycache__" or n.endswith(".pyc")}

    for name in COPIED:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dst / name, ignore=ignore)
        else:
            shutil.copy2(src, dst / name)
    text = (ROOT / "template.yaml").read_text(encoding="utf-8")
    (dst / "template.yaml").write_text(re.sub(r"\b(arm64|x86_64)\b", host_architecture(), text), encoding="utf-8")
    # The layers' makefiles install the wheels of the template's architecture (ARCH): this machine's.
    wheel_arch = "aarch64" if host_architecture() == "arm64" else "x86_64"
    for makefile in (dst / "layers").glob("*/Makefile"):
        recipe = makefile.read_text(encoding="utf-8")
        makefile.write_text(re.sub(r"^(ARCH\s*\?=\s*)\S+", rf"\g<1>{wheel_arch}", recipe, flags=re.M), encoding="utf-8")
    return dst

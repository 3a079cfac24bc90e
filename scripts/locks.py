#!/usr/bin/env python3.13
"""The locks (`make lock` writes them with uv): each names every package of a layer or a venv at one
version with the hashes of its files. This says whether they hold what they promise, and what a
`make lock` moved.

    scripts/locks.py check                          # every lock: pinned, hashed, up to date with its
                                                    # inputs, the layers and the venv at one version
    scripts/locks.py changes BEFORE_DIR LOCK...     # what moved in each LOCK since its copy in BEFORE_DIR

tests/unit/test_locks.py runs the same checks, and holds the installed venvs to their locks.
"""
from __future__ import annotations

import sys
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib.metadata import distributions
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
CORE_LOCK = "layers/core/requirements.lock"
AWS_LOCK = "layers/aws/requirements.lock"
DEV_LOCK = "requirements/dev.lock"
TOOLS_LOCK = "requirements/tools.lock"
# What ships in a function (both layers land in one /opt/python) and what the suite runs on: one
# version of each package across them. The tools venv (SAM CLI) is apart on purpose: its pins clash.
SHARED = (CORE_LOCK, AWS_LOCK, DEV_LOCK)
# The project's own name: installed editable on top of the venv's lock, never in it.
PROJECT = "heed"


@dataclass(frozen=True)
class Entry:
    """One package of a lock: a pin, the marker under which it installs, the hashes of its files."""
    name: str        # canonical (PEP 503)
    version: str
    marker: str | None
    hashes: tuple[str, ...]
    text: str        # the requirement as written, without its hashes


@dataclass(frozen=True)
class Lock:
    path: str
    entries: tuple[Entry, ...]
    faults: tuple[str, ...]  # lines that are no pin (a range, a URL, an option other than --hash)

    def versions(self, name: str) -> set[str]:
        return {e.version for e in self.entries if e.name == name}

    def names(self) -> set[str]:
        return {e.name for e in self.entries}


def _logical_lines(text: str) -> Iterable[str]:
    """A requirements file's lines as pip reads them: comments dropped, continuations joined."""
    pending = ""
    for raw in text.splitlines():
        line = "" if raw.lstrip().startswith("#") else raw.split(" #", 1)[0].rstrip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = (pending + line).strip()
        pending = ""
        if line:
            yield line
    if pending.strip():
        yield pending.strip()


def parse_lock(text: str, path: str) -> Lock:
    entries: list[Entry] = []
    faults: list[str] = []
    for line in _logical_lines(text):
        words = line.split()
        hashes = tuple(w.removeprefix("--hash=") for w in words if w.startswith("--hash="))
        rest = " ".join(w for w in words if not w.startswith("--hash="))
        try:
            req = Requirement(rest)
        except InvalidRequirement:
            faults.append(f"{path}: {rest!r} is no requirement")
            continue
        specs = list(req.specifier)
        if len(specs) != 1 or specs[0].operator != "==" or "*" in specs[0].version:
            faults.append(f"{path}: {rest!r} is not pinned with ==")
            continue
        entries.append(Entry(canonicalize_name(req.name), specs[0].version,
                             str(req.marker) if req.marker else None, hashes, rest))
    return Lock(path, tuple(entries), tuple(faults))


def read_lock(path: str, root: Path = ROOT) -> Lock:
    return parse_lock((root / path).read_text(encoding="utf-8"), path)


def unhashed(lock: Lock) -> list[str]:
    """Each line of the lock that pip could not check: no pin, or a pin without a sha256 of its files."""
    out = list(lock.faults)
    for e in lock.entries:
        if not e.hashes:
            out.append(f"{lock.path}: {e.name} {e.version} has no --hash")
        elif any(not h.startswith("sha256:") or len(h) != len("sha256:") + 64 for h in e.hashes):
            out.append(f"{lock.path}: {e.name} {e.version} has a hash that is no sha256")
    return out


def drift(locks: Iterable[Lock]) -> list[str]:
    """Each package that the locks name at more than one version, with the version in each lock."""
    locks = list(locks)
    out = []
    for name in sorted(set().union(*(lock.names() for lock in locks))):
        seen = {lock.path: sorted(lock.versions(name), key=Version) for lock in locks if name in lock.names()}
        if len({v for vs in seen.values() for v in vs}) > 1:
            out.append(f"{name}: " + ", ".join(f"{' and '.join(vs)} in {path}" for path, vs in seen.items()))
    return out


def input_requirements(path: str, root: Path = ROOT) -> list[Requirement]:
    """A requirements file's requirements (an input of `make lock`: no options, no hashes)."""
    return [Requirement(line) for line in _logical_lines((root / path).read_text(encoding="utf-8"))]


def project_requirements(root: Path = ROOT) -> list[Requirement]:
    """What pyproject.toml asks of the venv: the dependencies, the dev extra, the build backend."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    names = [*project["project"]["dependencies"], *project["project"]["optional-dependencies"]["dev"],
             *project["build-system"]["requires"]]
    return [Requirement(n) for n in names]


def inputs(root: Path = ROOT) -> dict[str, tuple[str, list[Requirement]]]:
    """Each lock and what `make lock` resolves it from: where that is said, and the requirements."""
    return {
        CORE_LOCK: ("layers/core/requirements.txt", input_requirements("layers/core/requirements.txt", root)),
        AWS_LOCK: ("layers/aws/requirements.txt", input_requirements("layers/aws/requirements.txt", root)),
        DEV_LOCK: ("pyproject.toml or requirements/dev.in",
                   project_requirements(root) + input_requirements("requirements/dev.in", root)),
        TOOLS_LOCK: ("requirements/tools.in", input_requirements("requirements/tools.in", root)),
    }


def stale(lock: Lock, wanted: Iterable[Requirement], source: str) -> list[str]:
    """Each input the lock does not hold at a version the input allows: the lock predates an edit."""
    out = []
    for req in wanted:
        name = canonicalize_name(req.name)
        versions = lock.versions(name)
        if not versions:
            out.append(f"{lock.path}: {name} is not in it, {source} asks for {req} (make lock)")
        elif not any(req.specifier.contains(v, prereleases=True) for v in versions):
            out.append(f"{lock.path}: {name} {' and '.join(sorted(versions))}, {source} asks for {req} (make lock)")
    return out


def venv_differs(lock: Lock, installed: Mapping[str, str], *, project: str | None = None) -> list[str]:
    """Where an installed venv (canonical name -> version) is not its lock: a package at another
    version, one the lock names that is missing, one installed that the lock does not name."""
    out = []
    here = [e for e in lock.entries if e.marker is None or Marker(e.marker).evaluate()]
    for e in here:
        got = installed.get(e.name)
        if got is None:
            out.append(f"{e.name} {e.version} is locked in {lock.path}, not installed")
        elif Version(got) != Version(e.version):
            out.append(f"{e.name} {got} is installed, {lock.path} locks {e.version}")
    extra = set(installed) - {e.name for e in here} - ({canonicalize_name(project)} if project else set())
    for name in sorted(extra):
        out.append(f"{name} {installed[name]} is installed, {lock.path} does not name it "
                   "(make clean install puts the venv back as locked)")
    return out


def installed_in(site_packages: Iterable[Path]) -> dict[str, str]:
    """The distributions installed in these folders: canonical name -> version."""
    found = distributions(path=[str(p) for p in site_packages])
    return {canonicalize_name(d.metadata["Name"]): d.version for d in found}


def check(root: Path = ROOT) -> list[str]:
    """Every fault of the lock files themselves (not of an installed venv), one line each."""
    locks = {path: read_lock(path, root) for path in (*SHARED, TOOLS_LOCK)}
    out = [f for lock in locks.values() for f in unhashed(lock)]
    for path, (source, wanted) in inputs(root).items():
        out += stale(locks[path], wanted, source)
    out += drift(locks[p] for p in SHARED)
    return out


def changes(before: Lock | None, after: Lock) -> list[str]:
    """What moved in a lock, one package a line: a version, a package come or gone, files of a version."""
    if before is None:
        return [f"+ {e.name} {e.version}" for e in after.entries]
    old = {(e.name, e.marker): e for e in before.entries}
    new = {(e.name, e.marker): e for e in after.entries}
    out = []
    for key in sorted(old.keys() | new.keys(), key=lambda k: (k[0], k[1] or "")):
        o, n = old.get(key), new.get(key)
        if o and not n:
            out.append(f"- {o.text}")
        elif n and not o:
            out.append(f"+ {n.text}")
        elif o and n and o.version != n.version:
            out.append(f"  {n.name} {o.version} -> {n.version}")
        elif o and n and set(o.hashes) != set(n.hashes):
            out.append(f"  {n.name} {n.version}: its files changed "
                       f"(+{len(set(n.hashes) - set(o.hashes))} -{len(set(o.hashes) - set(n.hashes))} hashes)")
    return out


def main(argv: list[str]) -> int:
    if argv[:1] == ["check"] and len(argv) == 1:
        faults = check()
        for fault in faults:
            print(f"locks: {fault}", file=sys.stderr)
        if not faults:
            print("locks: every lock pinned and hashed and up to date with its inputs; "
                  "the layers and the venv at one version")
        return 1 if faults else 0
    if argv[:1] == ["changes"] and len(argv) >= 3:
        before_dir = Path(argv[1])
        for path in argv[2:]:
            old = before_dir / path
            moved = changes(parse_lock(old.read_text(encoding="utf-8"), path) if old.is_file() else None,
                            read_lock(path))
            print(f"{path}: " + ("unchanged" if not moved else f"{len(moved)} changed"))
            for line in moved:
                print(f"    {line}")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

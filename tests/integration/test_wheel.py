"""Packaging: a wheel built from the project installs in a fresh venv and `heed demo` runs from it.

The local runtime reads template.yaml and functions/<name>/app.py, which live at the top of the
checkout; setup.py copies them into the wheel (heed/_stack). Here the project is copied as a
fresh checkout would be, built the way a release is (`python -m build`: an sdist, then the
wheel from the sdist), installed with pip into a new venv (dependencies from the package
index, at the versions of the venv's lock: a release out since does not change the test), and run
from a folder outside any checkout. That venv is a VPS's runtime-only install (issue 34): no test
or dev package in it, it prints the bot's systemd unit and serves a round of two local sites.
`make wheel-check` runs this file alone.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
# What a fresh clone would not have: local venvs, caches, earlier builds and outputs.
_NOT_IN_A_CLONE = shutil.ignore_patterns(".venv*", ".git", "build", "dist", "*.egg-info", "__pycache__",
                                         ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis",
                                         "heed-out", ".aws-sam")


def _run(args: list[str | Path], *, cwd: Path, timeout: float, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=env)
    assert proc.returncode == 0, f"{args}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _locked_versions(path: Path) -> Path:
    """requirements/dev.lock as pip constraints: its pins without their hashes (a hash in a
    constraint would switch pip to hash-checking the wheel built here too)."""
    pins = [line.removesuffix("\\").strip() for line in (ROOT / "requirements" / "dev.lock").read_text(
        encoding="utf-8").splitlines() if line[:1].isalnum()]
    path.write_text("\n".join(pins) + "\n", encoding="utf-8")
    return path


def _outside_env() -> dict[str, str]:
    """The environment of a user's shell: nothing pointing into this checkout."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(ROOT)))
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with nothing but the wheel (and its dependencies) installed; its bin/."""
    base = tmp_path_factory.mktemp("wheel")
    source = base / "heed-src"
    shutil.copytree(ROOT, source, ignore=_NOT_IN_A_CLONE)
    constraints = _locked_versions(base / "constraints.txt")
    # build's isolated environment takes the lock's setuptools and wheel too (PIP_CONSTRAINT)
    _run([sys.executable, "-m", "build", "--outdir", base / "dist", source], cwd=base, timeout=600,
         env={**os.environ, "PIP_CONSTRAINT": str(constraints)})
    [wheel] = sorted((base / "dist").glob("heed-*.whl"))
    _run([sys.executable, "-m", "venv", base / "venv"], cwd=base, timeout=300)
    bin_dir = base / "venv" / "bin"
    _run([bin_dir / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-c", constraints,
          wheel], cwd=base, timeout=1800, env=_outside_env())
    return bin_dir


def test_the_wheel_runs_heed_demo_from_outside_the_checkout(installed: Path, tmp_path: Path) -> None:
    # GIVEN the installed wheel and a folder that is no checkout
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # WHEN a user runs the demo there
    proc = _run([installed / "heed", "demo", "--bot", "aubebot", "--out", tmp_path / "out"], cwd=elsewhere,
                timeout=300, env=_outside_env())
    # THEN it ran AubeBot's round against the demo web and wrote its output
    assert "Traceback" not in proc.stderr
    assert "The demo sites saw" in proc.stdout
    summary = json.loads((tmp_path / "out" / "aubebot" / "summary.json").read_text(encoding="utf-8"))
    assert summary["bot"] == "aubebot" and summary["requests"] > 0 and summary["rounds"] == 1


def test_the_wheel_runs_its_own_code_and_its_own_copy_of_the_stack(installed: Path, tmp_path: Path) -> None:
    code = ("import heed_core, heed, heed.local.runtime as r; "
            "print(heed_core.__file__); print(heed.__file__); print(r.ROOT)")
    proc = _run([installed / "python", "-c", code], cwd=tmp_path, timeout=60, env=_outside_env())
    core, heed, root = (Path(line) for line in proc.stdout.splitlines())
    venv = installed.parent.resolve()
    for path in (core, heed, root):
        assert venv in path.resolve().parents, path
    # the copies are the checkout's files, byte for byte
    shipped = sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                     if p.is_file() and "__pycache__" not in p.parts)  # pip byte-compiles app.py
    expected = ["template.yaml", "bench/cost-inputs.json",
                *(p.relative_to(ROOT).as_posix() for p in ROOT.glob("functions/*/app.py"))]
    assert shipped == sorted(expected) and "functions/fetcher/app.py" in shipped
    for name in shipped:
        assert (root / name).read_bytes() == (ROOT / name).read_bytes(), name


def test_the_wheel_ships_the_words_of_the_info_page(installed: Path, tmp_path: Path) -> None:
    # GIVEN the installed wheel: the page's languages are data files (heed/pages/languages), package data
    _run([installed / "heed", "info-page", "aubebot", "--out", tmp_path / "site"], cwd=tmp_path, timeout=120,
         env=_outside_env())
    page = (tmp_path / "site" / "aube.news" / "robot" / "index.html").read_text(encoding="utf-8")
    assert '<html lang="it">' in page and "Le richieste partono una alla volta" in page
    # AND a bot in a language Heed has no words for gets English's file to translate
    _run([installed / "heed", "new-bot", "mybot", "--language", "fr", "--extends", "aubebot"], cwd=tmp_path,
         timeout=120, env=_outside_env())
    assert 'h_fetch: "WRITE ME: What we fetch"' in (tmp_path / "mybot.fr.yaml").read_text(encoding="utf-8")


def test_the_wheel_knows_its_version(installed: Path, tmp_path: Path) -> None:
    proc = _run([installed / "heed", "--version"], cwd=tmp_path, timeout=60, env=_outside_env())
    assert proc.stdout.strip() == "heed 0.1.0"


# --- a VPS install (issue 34): the wheel alone, no test or dev extras, runs a bot as a service ------

_DEV_ONLY = ("pytest", "hypothesis", "mypy", "ruff", "build", "cfn-lint", "flask", "protego", "standardwebhooks")


def test_the_wheel_brings_no_test_or_dev_package(installed: Path, tmp_path: Path) -> None:
    code = ("import importlib.metadata as m, json; "
            "print(json.dumps(sorted({d.metadata['Name'].lower() for d in m.distributions()})))")
    names = set(json.loads(_run([installed / "python", "-c", code], cwd=tmp_path, timeout=60,
                                env=_outside_env()).stdout))
    assert "heed" in names and "lxml" in names
    assert names.isdisjoint(_DEV_ONLY), sorted(names & set(_DEV_ONLY))


def test_a_runtime_only_install_prints_its_unit_and_serves_a_bot(installed: Path, tmp_path: Path) -> None:
    from tests.support.serve import FeedWeb, serve_profile

    # GIVEN the wheel installed alone, a profile of one's own where the README puts it, and two sites
    etc = tmp_path / "etc" / "heed"
    etc.mkdir(parents=True)
    profile = serve_profile(etc / "mybot.yaml", 0.1)
    web = FeedWeb(hosts=2, articles=2).start(first_ip=25)
    state = tmp_path / "var" / "lib" / "heed" / "mybot"
    try:
        # WHEN the installed heed prints the bot's systemd unit
        unit = _run([installed / "heed", "service", "unit", "--bot", profile, "--state", "/var/lib/heed/mybot"],
                    cwd=tmp_path, timeout=60, env=_outside_env()).stdout
        # THEN it runs that very heed, by its absolute path
        heed = (installed / "heed").resolve()
        assert f"\nExecStart={heed} serve --bot {profile} --state /var/lib/heed/mybot --grace 10\n" in unit
        analyze = shutil.which("systemd-analyze")
        if analyze is not None:
            (tmp_path / "heed-mybot.service").write_text(unit, encoding="utf-8")
            check = subprocess.run([analyze, "verify", "--man=no", "--generators=no", tmp_path / "heed-mybot.service"],
                                   capture_output=True, text=True, timeout=60)
            assert check.returncode == 0 and not check.stderr.strip(), check.stderr
        # WHEN that heed serves a round from a folder that is no checkout
        proc = _run([installed / "heed", "serve", "--bot", profile, "--state", state, "--sources",
                     web.sources_file(tmp_path / "sources.yaml"), "--once", "--allow-private", "--patience", "3"],
                    cwd=tmp_path, timeout=300, env=_outside_env())
        asked = sorted((r.host, r.path) for r in web.log())
    finally:
        web.stop()
    # THEN it read every page of both sites, and the operator commands answer from its state
    assert "Traceback" not in proc.stderr
    assert asked == sorted((s.host, p) for s in web.servers for p in ("/robots.txt", "/feed.xml", "/a/0", "/a/1"))
    listed = _run([installed / "heed", "sources", "list", "--state", state, "--json"], cwd=tmp_path, timeout=60,
                  env=_outside_env()).stdout
    assert len(listed.splitlines()) == 2

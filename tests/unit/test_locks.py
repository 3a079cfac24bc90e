"""The locks (`make lock`, scripts/locks.py): every package each layer and venv installs at one version
with the hashes of its files; the layers and the venv the tests run in at the same version of every
package they share (what is tested is what is deployed); each installed venv exactly its lock. No
network: these read the files and the installed distributions."""
from __future__ import annotations

import re
import shutil
import sys
import sysconfig
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import locks  # noqa: E402


def _moved(tmp_path: Path, path: str, package: str, version: str) -> Path:
    """A copy of the locks and their inputs with one package's version changed in the lock ``path``."""
    inputs = ("pyproject.toml", "layers/core/requirements.txt", "layers/aws/requirements.txt",
              "requirements/dev.in", "requirements/tools.in")
    for name in (*locks.SHARED, locks.TOOLS_LOCK, *inputs):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    text = (tmp_path / path).read_text(encoding="utf-8")
    text, n = re.subn(rf"^{re.escape(package)}==\S+", f"{package}=={version}", text, flags=re.M)
    assert n == 1, f"{package} is not in {path}"
    (tmp_path / path).write_text(text, encoding="utf-8")
    return tmp_path


def test_every_lock_line_is_a_pin_with_the_hashes_of_its_files() -> None:
    for path in (*locks.SHARED, locks.TOOLS_LOCK):
        lock = locks.read_lock(path)
        assert len(lock.entries) >= 10, path
        assert locks.unhashed(lock) == []


def test_the_layers_and_the_venv_lock_the_same_version_of_every_package_they_share() -> None:
    core, aws, dev = (locks.read_lock(p) for p in locks.SHARED)
    # THEN whatever a layer ships, the venv the tests run in holds at the same version
    assert core.names() | aws.names() <= dev.names()
    assert locks.drift([core, aws, dev]) == []
    # (the transitive packages too: the ones that floated before the locks)
    for name in ("botocore", "urllib3", "certifi", "s3transfer", "idna"):
        assert name in core.names() | aws.names(), name


def test_each_lock_holds_what_its_inputs_ask_for() -> None:
    # GIVEN the inputs make lock resolves (requirements.txt, pyproject.toml, requirements/*.in)
    for path, (source, wanted) in locks.inputs().items():
        # THEN each lock is newer than any edit of them: every input at a version it allows
        assert locks.stale(locks.read_lock(path), wanted, source) == [], path
    assert locks.check() == []


def test_the_venv_the_tests_run_in_is_its_lock() -> None:
    # GIVEN the venv running this test (make install synced it from requirements/dev.lock)
    paths = {Path(sysconfig.get_paths()["purelib"]), Path(sysconfig.get_paths()["platlib"])}
    installed = locks.installed_in(paths)
    assert "pytest" in installed
    # THEN each package is at its locked version, none missing, none the lock does not name
    assert locks.venv_differs(locks.read_lock(locks.DEV_LOCK), installed, project=locks.PROJECT) == []


def test_the_tools_venv_is_its_lock() -> None:
    sites = sorted((ROOT / ".venv-tools").glob("lib/python*/site-packages"))
    if not sites:
        pytest.skip(".venv-tools is not installed here (make tools)")
    installed = locks.installed_in(sites)
    assert "aws-sam-cli" in installed
    assert locks.venv_differs(locks.read_lock(locks.TOOLS_LOCK), installed) == []


# The checks themselves: each names what is wrong.

def test_a_layer_lock_with_a_version_moved_is_named(tmp_path: Path) -> None:
    # GIVEN the locks with botocore moved in the AWS layer's lock alone
    dev = locks.read_lock(locks.DEV_LOCK)
    [was] = dev.versions("botocore")
    root = _moved(tmp_path, locks.AWS_LOCK, "botocore", "1.0.0")
    # WHEN the locks are checked
    faults = locks.drift(locks.read_lock(p, root) for p in locks.SHARED)
    # THEN the check names the package and both versions, with the lock of each
    assert faults == [f"botocore: 1.0.0 in {locks.AWS_LOCK}, {was} in {locks.DEV_LOCK}"]
    assert faults[0] in locks.check(root)


def test_a_venv_lock_with_a_version_moved_is_named(tmp_path: Path) -> None:
    # GIVEN the venv's lock with urllib3 (shipped by both layers) moved
    root = _moved(tmp_path, locks.DEV_LOCK, "urllib3", "1.26.0")
    faults = locks.drift(locks.read_lock(p, root) for p in locks.SHARED)
    assert len(faults) == 1 and faults[0].startswith("urllib3: ") and f"1.26.0 in {locks.DEV_LOCK}" in faults[0]


def test_a_lock_line_without_its_hashes_is_named() -> None:
    # GIVEN a lock whose requests line lost its hashes, and one with a range instead of a pin
    text = ("idna==3.10 \\\n    --hash=sha256:" + "a" * 64 + "\n    # via requests\n"
            "requests==2.32.3\n    # via -r requirements.txt\n"
            "urllib3>=2 \\\n    --hash=sha256:" + "b" * 64 + "\n")
    lock = locks.parse_lock(text, "x.lock")
    # THEN each is named
    assert locks.unhashed(lock) == ["x.lock: 'urllib3>=2' is not pinned with ==",
                                    "x.lock: requests 2.32.3 has no --hash"]


def test_a_venv_that_differs_from_its_lock_is_named() -> None:
    # GIVEN a lock and a venv with one package at another version, one missing, one not locked
    text = "".join(f"{n}=={v} \\\n    --hash=sha256:{'c' * 64}\n" for n, v in
                   (("botocore", "1.40.1"), ("idna", "3.10"), ("six", "1.17.0")))
    text += f"pywin32==311 ; sys_platform == 'win32' \\\n    --hash=sha256:{'d' * 64}\n"
    lock = locks.parse_lock(text, "dev.lock")
    installed = {"botocore": "1.40.2", "six": "1.17.0", "flask": "3.1.0", "heed": "0.1.0"}
    # THEN each difference is named (pywin32's marker leaves it out here; the project is not locked)
    assert locks.venv_differs(lock, installed, project="heed") == [
        "botocore 1.40.2 is installed, dev.lock locks 1.40.1",
        "idna 3.10 is locked in dev.lock, not installed",
        "flask 3.1.0 is installed, dev.lock does not name it (make clean install puts the venv back as locked)",
    ]


def test_a_lock_older_than_its_inputs_is_named() -> None:
    lock = locks.parse_lock(f"requests==2.32.3 \\\n    --hash=sha256:{'e' * 64}\n", "x.lock")
    assert locks.stale(lock, [Requirement("requests>=2.33"), Requirement("idna")], "x.txt") == [
        "x.lock: requests 2.32.3, x.txt asks for requests>=2.33 (make lock)",
        "x.lock: idna is not in it, x.txt asks for idna (make lock)",
    ]


def test_make_lock_says_what_moved() -> None:
    h = "--hash=sha256:"
    before = locks.parse_lock(f"a==1 {h}{'1' * 64}\nb==1 {h}{'2' * 64}\nc==1 {h}{'3' * 64}\n", "x.lock")
    after = locks.parse_lock(f"a==2 {h}{'1' * 64}\nb==1 {h}{'4' * 64}\nd==1 {h}{'5' * 64}\n", "x.lock")
    assert locks.changes(before, after) == ["  a 1 -> 2", "  b 1: its files changed (+1 -1 hashes)", "- c==1",
                                            "+ d==1"]
    assert locks.changes(before, before) == []


def test_every_install_checks_the_hashes_of_its_lock() -> None:
    # The venvs: synced from their locks with hash checking; nothing resolved at install time.
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "UV_SYNC    := $(UV) pip sync --quiet --require-hashes" in makefile
    assert "$(UV_SYNC) --python $(VENV)/bin/python $(DEV_LOCK)" in makefile
    assert "$(UV_SYNC) --python $(TOOLS)/bin/python $(TOOLS_LOCK)" in makefile
    assert "--require-hashes --no-deps --only-binary=:all: -r $(VENV)/uv.txt" in makefile
    # The layers: pip with --require-hashes --no-deps from the layer's lock (test_template.py holds the rest).
    for layer in ("core", "aws"):
        recipe = (ROOT / "layers" / layer / "Makefile").read_text(encoding="utf-8")
        assert '--require-hashes --no-deps --target "$(ARTIFACTS_DIR)/python" -r "$(HERE)requirements.lock"' in recipe

"""What `heed service unit` forbids, heed serve does without (issue 34): its MemoryDenyWriteExecute=yes
holds for Python, lxml, SQLite and cryptography at work. The unit's rule is applied here as the
kernel applies it (prctl PR_SET_MDWE, Linux 6.3+, which systemd 254+ sets for that key; older
systemd enforces the same rule with a seccomp filter): no memory both writable and executable, none
made executable later; kept across fork and exec, so the workers run under it too."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.serve import FeedWeb, serve_profile

# Sets the rule, then runs the command given after it.
_MDWE = ("import ctypes, os, sys\n"
         "libc = ctypes.CDLL(None, use_errno=True)\n"
         "if libc.prctl(65, 1, 0, 0, 0) != 0:  # PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN\n"
         "    sys.exit(f'no PR_SET_MDWE: {os.strerror(ctypes.get_errno())}')\n"
         "os.execv(sys.argv[1], sys.argv[1:])\n")
_PROBE = ("import ctypes, mmap\n"
          "print(ctypes.CDLL(None).prctl(66, 0, 0, 0, 0))  # PR_GET_MDWE\n"
          "try:\n"
          "    mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)\n"
          "    print('allowed')\n"
          "except OSError:\n"
          "    print('refused')\n")


def _under_mdwe(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _MDWE, *argv], capture_output=True, text=True, timeout=timeout)


def test_heed_serve_crawls_with_no_writable_executable_memory(tmp_path: Path) -> None:
    probe = _under_mdwe([sys.executable, "-c", _PROBE], 60)
    if probe.returncode != 0:
        pytest.skip(f"this kernel cannot enforce it: {probe.stderr.strip()}")
    # GIVEN the rule in force (a process under it cannot map memory writable and executable)
    assert probe.stdout.split() == ["1", "refused"], probe.stdout
    web = FeedWeb(hosts=2, articles=3).start()
    try:
        # WHEN heed serve, two processes, runs a round of two feeds under it
        proc = _under_mdwe([sys.executable, "-m", "heed.cli", "serve", "--bot", str(serve_profile(
            tmp_path / "bot.yaml", 0.1)), "--state", str(tmp_path / "state"), "--sources",
            str(web.sources_file(tmp_path / "s.yaml")), "--once", "--allow-private", "--workers", "2",
            "--patience", "3"], 120)
        asked = sorted((r.host, r.path) for r in web.log())
    finally:
        web.stop()
    # THEN it read every page, with nothing refused
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert [line for line in lines if line["level"] != "info"] == []
    want = sorted((s.host, p) for s in web.servers for p in ("/robots.txt", "/feed.xml", "/a/0", "/a/1", "/a/2"))
    assert asked == want

"""Identity is never inherited by accident, but a local run of a profile being written goes on
(issue 19): `heed local run` of a profile that extends a bot and keeps its identity warns once,
then crawls, as that bot, against a local site."""
from __future__ import annotations

from pathlib import Path

import pytest

from heed_core.profile import load_profile

from heed.cli import main
from heed.conformance.sites import Sites, robots, rss
from heed.demo.web import Route


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_local_run_of_a_derived_profile_warns_once_and_goes_on(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "aube-slow.yaml"
    mine.write_text("extends: aubebot\npoliteness:\n  min_delay_s: 0.2\n", encoding="utf-8")
    web = Sites()
    base = web.add("feed", {"/robots.txt": robots("User-agent: *\nAllow: /\n"),
                            "/feed.xml": Route(body=rss([{"title": "Lunga", "link": "{{base}}/a",
                                                          "summary": "x" * 700}]), content_type="application/rss+xml")})
    sources = tmp_path / "sources.yaml"
    sources.write_text(f"sources:\n  - {{url: '{base}/feed.xml', kind: feed}}\n", encoding="utf-8")
    try:
        code, out, err = run(capsys, "local", "run", "--bot", str(mine), "--sources", str(sources), "--allow-private",
                             "--out", str(tmp_path / "out"), "--patience", "1")
        log = web.log("feed")
    finally:
        web.stop()
    assert code == 0, err
    assert err.count("heed: warning:") == 1 and f"{mine}: identity inherited from aubebot" in err
    assert [r.path for r in log] == ["/robots.txt", "/feed.xml"]  # and the run went on, as AubeBot
    assert {r.header("User-Agent") for r in log} == {load_profile("aubebot").user_agent}

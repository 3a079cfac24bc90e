"""`heed local run --state DIR`: the state kept between runs (conditional GETs, seen URLs, blocks), in the
embedded engine's database."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from heed_embedded.state import open_state

from heed.cli import main
from heed.demo.web import RecordingServer, Route, Site

from tests.support.serve import state_log


def _gemeente(ip: str) -> RecordingServer:
    page = ("<html><head><title>{n}</title></head><body><main><h1>Subsidie {n}</h1>"
            "<p>Bedrag: EUR 500. Aanvragen kan tot 1 december.</p></main></body></html>")
    urls = "".join(f"<url><loc>{{{{base}}}}/subsidies/{n}/</loc></url>" for n in ("a", "b"))
    site = Site(name="gemeente", routes={
        "/robots.txt": Route(body="User-agent: *\nAllow: /\n", content_type="text/plain"),
        "/sitemap.xml": Route(body=f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                                   f'{urls}</urlset>', content_type="application/xml", conditional=True),
        **{f"/subsidies/{n}/": Route(body=page.format(n=n), conditional=True) for n in ("a", "b")}})
    return RecordingServer(site, ip=ip).start()


@pytest.fixture
def site():
    server = _gemeente("127.0.0.61")
    yield server
    server.stop()


def _files(tmp_path: Path, server: RecordingServer) -> tuple[str, str]:
    bot = tmp_path / "bot.yaml"
    bot.write_text("extends: subsidieupdate\npoliteness:\n  min_delay_s: 0.1\n")
    sources = tmp_path / "sources.yaml"
    sources.write_text(yaml.safe_dump({"sources": [{"url": server.base_url + "/", "kind": "subsidy", "id": "g"}]}))
    return str(bot), str(sources)


def _run(capsys: pytest.CaptureFixture[str], tmp_path: Path, bot: str, sources: str | None, out: str) -> int:
    argv = ["local", "run", "--bot", bot, "--state", str(tmp_path / "state"), "--out", str(tmp_path / out),
            "--allow-private", "--patience", "3"]
    if sources:
        argv += ["--sources", sources]
    code = main(argv)
    capsys.readouterr()
    return code


def test_wannado_07_subsidie_04_a_second_run_on_the_same_state_costs_the_site_304s(
        site: RecordingServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bot, sources = _files(tmp_path, site)
    # GIVEN a first run that read robots.txt, the sitemap and both pages
    assert _run(capsys, tmp_path, bot, sources, "out1") == 0
    assert sorted(r.path for r in site.log()) == ["/robots.txt", "/sitemap.xml", "/subsidies/a/", "/subsidies/b/"]
    assert (tmp_path / "state" / "heed.db").is_file() and len(state_log(tmp_path / "state", "requests")) == 4
    site.reset_log()
    # WHEN the same sources run again on the same state
    assert _run(capsys, tmp_path, bot, sources, "out2") == 0
    # THEN every request is conditional and the site answers 304 (robots.txt is still cached)
    log = site.log()
    assert sorted(r.path for r in log) == ["/sitemap.xml", "/subsidies/a/", "/subsidies/b/"]
    assert all(r.header("If-None-Match") and r.header("If-Modified-Since") for r in log), log
    assert [r.status for r in log] == [304, 304, 304]


def test_a_run_on_the_state_crawls_the_sources_kept_there(site: RecordingServer, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    bot, sources = _files(tmp_path, site)
    assert _run(capsys, tmp_path, bot, sources, "out1") == 0
    site.reset_log()
    assert _run(capsys, tmp_path, bot, None, "out2") == 0  # no --sources: those of the state
    assert [r.status for r in site.log()] == [304, 304, 304]
    assert json.loads((tmp_path / "state" / "heed-state.json").read_text())["format"] == 2
    state = open_state(tmp_path / "state", create=False)
    manifest = state.manifest
    state.close()
    assert manifest["bot"] == "subsidieupdate" and manifest["last_out"] == str((tmp_path / "out2").resolve())


def test_a_state_of_another_bot_is_refused_in_one_line(site: RecordingServer, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    bot, sources = _files(tmp_path, site)
    assert _run(capsys, tmp_path, bot, sources, "out1") == 0
    code = main(["local", "run", "--bot", "aubebot", "--state", str(tmp_path / "state")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == (f"heed local run: --state: {tmp_path / 'state'} holds the state of subsidieupdate, "
                           "not aubebot")

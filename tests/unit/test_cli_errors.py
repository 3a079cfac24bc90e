"""User mistakes at the `heed` command: one line, a non-zero exit, never a traceback (issue 12).

Each case runs ``main([...])`` in-process (capsys), or a subprocess where the mistake lives
outside Python (a closed pipe). Nothing here starts a crawl: every mistake is caught first.
"""
from __future__ import annotations

import errno
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from heed.cli import main

from tests.support.stack import without_aws

FEED = "https://news.example/feed.xml"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse: usage errors and --version
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def sources(tmp_path: Path, text: str) -> str:
    path = tmp_path / "sources.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def good_sources(tmp_path: Path) -> str:
    return sources(tmp_path, f"sources:\n  - url: {FEED}\n    kind: feed\n")


# --- the command itself -------------------------------------------------------------------------


def test_version_is_one_line_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--version")
    assert code == 0 and err == ""
    assert one_line(out) == "heed 0.1.0"


def test_an_unknown_command_ends_in_one_error_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "crawl")
    assert code == 2
    line = one_line(err)
    assert line.startswith("heed: argument command: invalid choice: 'crawl'")
    assert line.endswith("(see heed --help)")


@pytest.mark.parametrize("argv, line", [
    ([], "heed: the following arguments are required: command (see heed --help)"),
    (["local"], "heed local: the following arguments are required: local_command (see heed local --help)"),
    (["local", "run", "--bot", "aubebot"],
     "heed local run: --sources is required (or --state DIR, to crawl the sources kept there)"),
    (["robots", "check", "robots.txt", "/"],
     "heed robots check: the following arguments are required: --agent (see heed robots check --help)"),
    (["samconfig", "--check", "--write"],
     "heed samconfig: argument --write: not allowed with argument --check (see heed samconfig --help)"),
    (["demo", "--colour"], "heed demo: unrecognized arguments: --colour (see heed demo --help)"),
])
def test_a_usage_mistake_is_one_line_with_a_pointer_to_help(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                            line: str) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert one_line(err) == line


# --- --out ---------------------------------------------------------------------------------------


def test_local_run_out_naming_an_existing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("x")
    code, out, err = run(capsys, "local", "run", "--bot", "aubebot", "--sources", good_sources(tmp_path),
                         "--out", str(tmp_path / "taken"))
    assert (code, out) == (2, "")
    assert one_line(err) == f"heed local run: --out: {tmp_path / 'taken'} is a file, not a folder"


def test_demo_out_naming_an_existing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("x")
    code, out, err = run(capsys, "demo", "--bot", "aubebot", "--out", str(tmp_path / "taken"))
    assert (code, out) == (2, "")
    assert one_line(err) == f"heed demo: --out: {tmp_path / 'taken'} is a file, not a folder"


def test_demo_out_below_an_existing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # was: NotADirectoryError from mkdir of <out>/sources
    (tmp_path / "taken").write_text("x")
    code, _, err = run(capsys, "demo", "--bot", "aubebot", "--out", str(tmp_path / "taken" / "demo"))
    assert code == 2
    assert one_line(err) == f"heed demo: --out: cannot write to {tmp_path / 'taken' / 'demo'} (Not a directory)"


@pytest.mark.parametrize("command", [["demo", "--bot", "aubebot"], ["local", "run", "--bot", "aubebot"]])
def test_out_on_a_read_only_file_system(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch, command: list[str]) -> None:
    # GIVEN a file system that refuses every new folder (as a read-only mount does, even for root)
    def read_only(self: Path, *args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EROFS, "Read-only file system", str(self))

    monkeypatch.setattr(Path, "mkdir", read_only)
    if command[0] == "local":
        command = [*command, "--sources", good_sources(tmp_path)]
    code, out, err = run(capsys, *command, "--out", str(tmp_path / "out"))
    assert (code, out) == (2, "")
    prog = " ".join(command[:2]) if command[0] == "local" else command[0]
    assert one_line(err) == f"heed {prog}: --out: cannot write to {tmp_path / 'out'} (Read-only file system)"


def test_an_existing_folder_that_refuses_writes(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # mkdir of an existing folder succeeds; the write probe is what finds it read-only
    import tempfile

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "NamedTemporaryFile", refuse)
    code, _, err = run(capsys, "demo", "--bot", "aubebot", "--out", str(tmp_path))
    assert code == 2
    assert one_line(err) == f"heed demo: --out: cannot write to {tmp_path} (Read-only file system)"


def test_a_file_system_error_in_the_middle_of_a_run_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import heed.demo.run

    def full(*args: Any, **kwargs: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "aubebot" / "requests.jsonl"))

    monkeypatch.setattr(heed.demo.run, "run_demo", full)
    code, _, err = run(capsys, "demo", "--bot", "aubebot", "--out", str(tmp_path))
    assert code == 1
    assert one_line(err) == f"heed demo: {tmp_path / 'aubebot' / 'requests.jsonl'}: No space left on device"


def test_samconfig_write_where_it_cannot(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def read_only(self: Path, *args: Any, **kwargs: Any) -> int:
        raise OSError(errno.EROFS, "Read-only file system", str(self))

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(Path, "write_text", read_only)
    code, out, err = run(capsys, "samconfig", "--write")
    assert (code, out) == (1, "")
    assert one_line(err) == "heed samconfig: samconfig.toml: Read-only file system"


def test_samconfig_check_outside_the_checkout(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "samconfig", "--check")
    assert code == 1
    assert one_line(err) == ("samconfig.toml: cannot read (No such file or directory); "
                             "run `heed samconfig --write`")


# --- a closed pipe -------------------------------------------------------------------------------


def test_profile_show_into_a_pipe_closed_early_is_quiet(tmp_path: Path) -> None:
    # `heed profile show aubebot | head`: the reader leaves before the output is written
    proc = subprocess.Popen([sys.executable, "-m", "heed.cli", "profile", "show", "aubebot"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert proc.returncode == 141  # 128 + SIGPIPE, as a shell reports it for cat
    assert err == ""


# --- explain ---------------------------------------------------------------------------------------


def _run_output(tmp_path: Path) -> Path:
    out = tmp_path / "run"
    out.mkdir()
    (out / "requests.jsonl").write_text(json.dumps({"url": FEED, "status": 200}) + "\n")
    (out / "skips.jsonl").write_text("")
    (out / "items.jsonl").write_text("")
    return out


def test_explain_a_url_never_seen_says_so_in_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = _run_output(tmp_path)
    code, stdout, err = run(capsys, "explain", "https://elsewhere.example/", "--out", str(out))
    assert (code, stdout) == (1, "")
    assert one_line(err) == f"heed explain: no request, skip or result of https://elsewhere.example/ in {out}"


def test_explain_a_prefix_never_seen_says_so_in_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = _run_output(tmp_path)
    code, _, err = run(capsys, "explain", "https://elsewhere.example/", "--prefix", "--out", str(out))
    assert code == 1
    assert "URL starting with https://elsewhere.example/" in one_line(err)


def test_explain_a_url_seen_prints_its_records(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, stdout, err = run(capsys, "explain", FEED, "--out", str(_run_output(tmp_path)))
    assert (code, err) == (0, "")
    assert json.loads(stdout) == {"record": "request", "url": FEED, "status": 200}


def test_explain_where_no_run_wrote(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "explain", FEED, "--out", str(tmp_path / "nothing"))
    assert code == 2
    assert "no requests.jsonl here" in one_line(err)


def test_explain_a_run_stopped_before_writing_every_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = _run_output(tmp_path)
    (out / "items.jsonl").unlink()
    code, stdout, err = run(capsys, "explain", FEED, "--out", str(out))
    assert (code, err) == (0, "") and stdout


def test_explain_a_file_that_is_not_a_run_output(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = _run_output(tmp_path)
    (out / "skips.jsonl").write_text("this is not json\n")
    code, _, err = run(capsys, "explain", FEED, "--out", str(out))
    assert code == 2
    assert one_line(err) == f"heed explain: {out / 'skips.jsonl'}:1: not a JSON record (is this a heed run's output?)"


# --- local run: times and numbers ----------------------------------------------------------------


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "soon"])
def test_local_run_patience_must_be_seconds(capsys: pytest.CaptureFixture[str], tmp_path: Path, value: str) -> None:
    code, _, err = run(capsys, "local", "run", "--bot", "aubebot", "--sources", good_sources(tmp_path),
                       "--patience", value)
    assert code == 2
    assert one_line(err) == (f"heed local run: argument --patience: {value!r} is not a number of "
                             "seconds >= 0 (see heed local run --help)")


def test_local_run_until_before_start(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "local", "run", "--bot", "aubebot", "--sources", good_sources(tmp_path),
                       "--start", "2026-11-30T06:00:00Z", "--until", "2026-11-29T06:00:00Z")
    assert code == 2
    assert one_line(err) == "heed local run: --until is before --start"


@pytest.mark.parametrize("flag", ["--start", "--until"])
def test_local_run_times_must_be_iso_8601(capsys: pytest.CaptureFixture[str], tmp_path: Path, flag: str) -> None:
    code, _, err = run(capsys, "local", "run", "--bot", "aubebot", "--sources", good_sources(tmp_path),
                       flag, "2026-13-01")
    assert code == 2
    assert one_line(err).startswith(f"heed local run: {flag}: '2026-13-01' is not an ISO 8601 time")


def test_local_run_unknown_bot(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "local", "run", "--bot", "aubebto", "--sources", good_sources(tmp_path))
    assert code == 2
    assert one_line(err).startswith("heed local run: aubebto: no such profile file and not a built-in bot")


# --- local run: the sources file -----------------------------------------------------------------

SOURCE_MISTAKES = [
    # (bot, sources YAML, the one line after "heed local run: <file>: ")
    pytest.param("praha-x", "sources:\n  - {url: 'https://praha.example/rss', kind: feed, write_abuot: true}\n",
                 "sources[0].write_abuot: unknown option for kind 'feed' (did you mean 'write_about'?)",
                 id="misspelled-option"),
    pytest.param("wannadobot", "sources:\n  - {url: 'https://venue.example/', kind: agenda, rendr: true}\n",
                 "sources[0].rendr: unknown option for kind 'agenda' (did you mean 'render'?)",
                 id="misspelled-agenda-option"),
    pytest.param("subsidieupdate", "sources:\n  - {url: 'https://gemeente.example/', kind: subsidy, sitemap: [x]}\n",
                 "sources[0].sitemap: unknown option for kind 'subsidy' (did you mean 'sitemaps'?)",
                 id="singular-sitemaps"),
    pytest.param("aubebot", "sources:\n  - {url: 'https://news.example/feed', kind: feed, rendr: true}\n",
                 "sources[0].rendr: unknown option for kind 'feed' (did you mean 'render'? only agenda sources "
                 "take it)", id="misspelled-option-of-another-kind"),
    pytest.param("aubebot", "sources:\n  - {url: 'https://news.example/feed', kind: feed, render: true}\n",
                 "sources[0].render: not an option of kind 'feed' (only agenda sources take it)",
                 id="option-of-another-kind"),
    pytest.param("aubebot", "sources:\n  - {url: 'https://news.example/feed', kind: feed, colour: blue}\n",
                 "sources[0].colour: unknown option for kind 'feed' (known: write_about)", id="unknown-option"),
    pytest.param("springstudiobot", "sources:\n  - {url: 'https://news.example/', kind: page, write_about: true}\n",
                 "sources[0].write_about: not an option of kind 'page' (only feed sources take it)",
                 id="page-takes-no-options"),
    pytest.param("aubebot", "sources:\n  - {url: 'https://news.example/feed', kind: feed, urll: x}\n",
                 "sources[0].urll: unknown option for kind 'feed' (did you mean 'url'?)", id="misspelled-url-key"),
    pytest.param("praha-x", "sources:\n  - {url: 'https://praha.example/rss', kind: feed, write_about: 'yes please'}\n",
                 "sources[0].write_about: must be true or false", id="option-not-a-bool"),
    pytest.param("wannadobot", "sources:\n  - {url: 'https://venue.example/', kind: agenda, sitemaps: "
                 "'https://venue.example/s.xml'}\n",
                 "sources[0].sitemaps: must be a non-empty list of http(s) URLs", id="sitemaps-not-a-list"),
    pytest.param("wannadobot", "sources:\n  - {url: 'https://venue.example/', kind: agenda, sitemaps: "
                 "['https://venue.example/a b.xml']}\n",
                 "sources[0].sitemaps: [0]: 'https://venue.example/a b.xml' contains a space or other whitespace "
                 "(remove it, or write %20 inside a path)", id="sitemap-url-with-a-space"),
    pytest.param("aubebot", "sources:\n  - {url: 'https://news .example/feed', kind: feed}\n",
                 "sources[0].url: 'https://news .example/feed' contains a space or other whitespace "
                 "(remove it, or write %20 inside a path)", id="url-with-a-space-in-the-host"),
    pytest.param("aubebot", "sources:\n  - {url: 'https://news.example/my feed.xml', kind: feed}\n",
                 "sources[0].url: 'https://news.example/my feed.xml' contains a space or other whitespace "
                 "(remove it, or write %20 inside a path)", id="url-with-a-space-in-the-path"),
    pytest.param("aubebot", "sources:\n  - {url: \"https://news.example/feed\\t\", kind: feed}\n",
                 "sources[0].url: 'https://news.example/feed\\t' contains a space or other whitespace "
                 "(remove it, or write %20 inside a path)", id="url-with-a-tab"),
    pytest.param("aubebot", "sources:\n  - {url: 'https://me:secret@news.example/feed', kind: feed}\n",
                 "sources[0].url: 'https://me:secret@news.example/feed' cannot be fetched (it needs http or "
                 "https, a valid host and port, and no user:password@)", id="url-with-credentials"),
    pytest.param("aubebot", "sources:\n  - {url: 'ftp://news.example/feed', kind: feed}\n",
                 "sources[0].url: not an absolute http(s) URL: 'ftp://news.example/feed'", id="url-not-http"),
    pytest.param("aubebot", "sources:\n  - {url: 42, kind: feed}\n",
                 "sources[0].url: 42 is not a URL (must be a string)", id="url-not-a-string"),
    pytest.param("aubebot", "sources:\n  - {kind: feed}\n", "sources[0].url: missing", id="url-missing"),
    pytest.param("aubebot", "sources:\n  - {url: 'https://news.example/feed'}\n",
                 "sources[0].kind: missing (one of feed, page, sitemap, site_check, subsidy, agenda)",
                 id="kind-missing"),
    pytest.param("aubebot", "sources:\n  - {url: 'https://news.example/feed', kind: fede}\n",
                 "sources[0].kind: 'fede' is not a kind of source (did you mean 'feed'?)", id="kind-misspelled"),
    pytest.param("aubebot", "sources:\n  - {url: 'https://news.example/', kind: agenda}\n",
                 "sources[0].kind: aubebot has no schedule for 'agenda' (it runs: feed)", id="kind-not-scheduled"),
    pytest.param("aubebot", "sources:\n  - {url: 'https://news.example/feed', kind: feed, id: ''}\n",
                 "sources[0].id: '' is not valid (must be a non-empty string)", id="id-empty"),
    pytest.param("aubebot", "sources:\n  - {url: 'https://a.example/feed', kind: feed, id: x}\n"
                 "  - {url: 'https://b.example/feed', kind: feed, id: x}\n",
                 "sources[1].id: 'x' is used twice (also by sources[0])", id="id-twice"),
    pytest.param("aubebot", "sources:\n  - {url: 'https://a.example/feed', kind: feed}\n"
                 "  - {url: 'https://a.example/feed', kind: feed}\n",
                 "sources[1]: the same url and kind as sources[0]", id="source-twice"),
    pytest.param("aubebot", "source:\n  - {url: 'https://a.example/feed', kind: feed}\n",
                 "source: unknown key (did you mean 'sources'?)", id="top-level-misspelled"),
    pytest.param("aubebot", "sources: []\n", "sources: the list is empty (nothing to crawl)", id="empty"),
    pytest.param("aubebot", "sources:\n  - https://a.example/feed\n",
                 "sources[0]: must be a mapping with url and kind", id="entry-not-a-mapping"),
    pytest.param("aubebot", "sources: [\n", "not valid YAML (line 2)", id="not-yaml"),
    pytest.param("aubebot", "- url: https://a.example/feed\n", "expected a mapping with a 'sources' list",
                 id="a-bare-list"),
]


@pytest.mark.parametrize("bot, text, line", SOURCE_MISTAKES)
def test_local_run_sources_mistake_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                               bot: str, text: str, line: str) -> None:
    path = sources(tmp_path, text)
    code, out, err = run(capsys, "local", "run", "--bot", bot, "--sources", path, "--out", str(tmp_path / "out"))
    assert (code, out) == (2, "")
    assert one_line(err) == f"heed local run: {path}: {line}"
    assert not (tmp_path / "out").exists()  # nothing started


def test_local_run_a_sitemap_source_is_its_own_sitemap(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # rounds.py reads `sitemaps` of subsidy and agenda sources only: on a sitemap source it would be ignored
    bot = tmp_path / "bot.yaml"
    bot.write_text('extends: springstudiobot\nschedules:\n  - {expression: "cron(0 6 * * ? *)", task: sitemap}\n')
    path = sources(tmp_path, "sources:\n  - {url: 'https://news.example/sitemap.xml', kind: sitemap, "
                             "sitemaps: ['https://news.example/other.xml']}\n")
    code, _, err = run(capsys, "local", "run", "--bot", str(bot), "--sources", path)
    assert code == 2
    assert one_line(err) == (f"heed local run: {path}: sources[0].sitemaps: not an option of kind 'sitemap' "
                             "(only agenda and subsidy sources take it)")


def test_local_run_sources_file_missing_or_a_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for path, why in ((tmp_path / "missing.yaml", "No such file or directory"), (tmp_path, "Is a directory")):
        code, _, err = run(capsys, "local", "run", "--bot", "aubebot", "--sources", str(path))
        assert code == 2
        assert one_line(err) == f"heed local run: {path}: cannot read ({why})"


def test_local_run_sources_not_utf8(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("sources:\n  - {url: 'https://caf\xe9.example/', kind: feed}\n".encode("latin-1"))
    code, _, err = run(capsys, "local", "run", "--bot", "aubebot", "--sources", str(path))
    assert code == 2
    assert one_line(err) == f"heed local run: {path}: not UTF-8 text"


def test_every_documented_source_option_is_accepted(tmp_path: Path) -> None:
    from heed_core.profile import load_profile
    from heed_core.sources import load_sources

    feed_only = Path(sources(tmp_path, "sources:\n  - {url: 'https://praha.example/rss', kind: feed, "
                                       "write_about: true, id: praha-1}\n"))
    [src] = load_sources(feed_only, load_profile("praha-x"))
    assert (src.id, dict(src.options)) == ("praha-1", {"write_about": True})
    agenda = Path(sources(tmp_path, "sources:\n  - {url: 'https://venue.example/', kind: agenda, render: true,"
                                    " sitemaps: ['https://venue.example/s.xml']}\n"))
    [src] = load_sources(agenda, load_profile("wannadobot"))
    assert dict(src.options) == {"render": True, "sitemaps": ["https://venue.example/s.xml"]}
    subsidy = Path(sources(tmp_path, "sources:\n  - {url: 'https://gemeente.example/', kind: subsidy,"
                                     " sitemaps: ['https://gemeente.example/sitemap.xml']}\n"))
    [src] = load_sources(subsidy, load_profile("subsidieupdate"))
    assert dict(src.options) == {"sitemaps": ["https://gemeente.example/sitemap.xml"]}


# --- demo, robots, profile, operator -------------------------------------------------------------


def test_demo_unknown_bot_suggests_the_close_one(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "demo", "--bot", "aubebto", "--out", str(tmp_path))
    assert code == 2
    assert one_line(err) == "heed demo: --bot: unknown bot 'aubebto' (did you mean 'aubebot'?)"


def test_robots_check_a_url_that_is_not_one(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    robots = tmp_path / "robots.txt"
    robots.write_text("User-agent: *\nDisallow: /\n")
    code, out, err = run(capsys, "robots", "check", str(robots), "not a url", "--agent", "AubeBot")
    assert (code, out) == (2, "")  # a mistake is a line on stderr, never an answer on stdout
    assert one_line(err) == "heed robots check: 'not a url' is not an absolute http(s) URL or a /path"


def test_robots_check_a_path_and_a_url_still_work(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    robots = tmp_path / "robots.txt"
    robots.write_text("User-agent: *\nDisallow: /private\n")
    for url in ("/private/x", "https://site.example/private/x"):
        code, out, _ = run(capsys, "robots", "check", str(robots), url, "--agent", "AubeBot")
        assert code == 1 and json.loads(out)["allowed"] is False


def test_robots_check_a_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "robots", "check", str(tmp_path / "none.txt"), "/", "--agent", "AubeBot")
    assert (code, out) == (2, "")
    assert one_line(err).startswith(f"heed robots check: {tmp_path / 'none.txt'}: cannot read")


def test_robots_check_says_which_token_a_user_agent_was_read_as(capsys: pytest.CaptureFixture[str],
                                                                tmp_path: Path) -> None:
    robots = tmp_path / "robots.txt"
    robots.write_text("User-agent: *\nDisallow: /\n\nUser-agent: myaube\nAllow: /\n")
    agent = "Mozilla/5.0 (compatible; MyAube/0.1; +https://my.example/bot)"
    code, out, err = run(capsys, "robots", "check", str(robots), "/x", "--agent", agent)
    assert code == 0 and json.loads(out)["group"] == "myaube"
    assert err == f"heed robots check: read as the token 'MyAube' (from {agent!r})\n"


def test_profile_show_unknown_bot(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "profile", "show", "aubebto")
    assert (code, out) == (2, "")
    assert one_line(err).startswith("heed profile show: aubebto: no such profile file and not a built-in bot")


def test_profile_show_a_bad_profile_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "bot.yaml"
    path.write_text("extends: aubebot\npoliteness: [1, 2\n")
    code, _, err = run(capsys, "profile", "show", str(path))
    assert code == 2
    assert one_line(err).startswith("heed profile show:")


@pytest.fixture
def no_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No region, no credentials, no config files, no instance metadata: a laptop without AWS set up."""
    return without_aws(monkeypatch, tmp_path)


def test_operator_without_a_region(capsys: pytest.CaptureFixture[str], no_aws: pytest.MonkeyPatch) -> None:
    code, _, err = run(capsys, "operator", "--table", "heed-state", "blocks")
    assert code == 2
    assert one_line(err) == "heed operator blocks: no AWS region (give --region or set AWS_REGION)"


def test_operator_without_credentials(capsys: pytest.CaptureFixture[str], no_aws: pytest.MonkeyPatch) -> None:
    code, _, err = run(capsys, "operator", "--table", "heed-state", "--region", "eu-west-1", "blocks")
    assert code == 2
    assert one_line(err) == "heed operator blocks: no AWS credentials (configure them as for the AWS CLI)"


@pytest.mark.parametrize("command", [["blocks"], ["block", "example.com"], ["unblock", "example.com"],
                                     ["purge", "example.com"]])
def test_operator_on_a_table_that_does_not_exist(capsys: pytest.CaptureFixture[str], no_aws: pytest.MonkeyPatch,
                                                 command: list[str]) -> None:
    from moto import mock_aws

    no_aws.setenv("AWS_ACCESS_KEY_ID", "testing")
    no_aws.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        code, _, err = run(capsys, "operator", "--table", "no-such-table", "--region", "eu-west-1", *command)
    assert code == 2
    line = one_line(err)
    assert line.startswith(f"heed operator {command[0]}: table no-such-table: ResourceNotFoundException"), line


@pytest.mark.parametrize("domain", ["https://example.com/", "example.com/path", "ex ample.com", "", ".",
                                    "user@example.com", "example.com:8080"])
@pytest.mark.parametrize("command", ["block", "unblock", "purge"])
def test_operator_names_a_domain_not_a_url(capsys: pytest.CaptureFixture[str], command: str, domain: str) -> None:
    code, _, err = run(capsys, "operator", "--table", "heed-state", "--region", "eu-west-1", command, domain)
    assert code == 2
    assert one_line(err) == (f"heed operator {command}: {domain!r} is not a domain name (e.g. example.com, "
                             "without http:// or a path)")

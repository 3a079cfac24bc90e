"""Every command the README shows is one Heed has (issue 36: a README that is a door, kept true).

Each `heed ...` line of the README's shell blocks is parsed by `heed`'s own parser as written, and
each `heed ...` it names inline (`heed events --state DIR [--consumer NAME] ...`) names a command
that exists and only options that command takes; the `make` targets it names exist. The steps of
"Your own bot" run for real in an empty directory, as a newcomer types them."""
from __future__ import annotations

import argparse
import json
import re
import shlex
from pathlib import Path

import pytest

from heed.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def _shell_commands() -> list[list[str]]:
    """Each `heed` command of the README's shell blocks, as its words after `heed`."""
    found: list[list[str]] = []
    for block in _blocks("sh"):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split(" #", 1)[0]
            for part in re.split(r"&&|;|\|", line):
                words = shlex.split(part.split(">", 1)[0])
                if words[:1] == ["sudo"]:  # sudo -u heed CMD
                    words = words[3:]
                if words and (words[0] == "heed" or words[0].endswith("/bin/heed")):
                    found.append(words[1:])
    return found


def _inline_commands() -> list[str]:
    """Each `heed ...` code span of the README's prose (a command's shape, with its metavariables)."""
    prose = re.sub(r"```.*?```", "", README, flags=re.S)
    return re.findall(r"`(heed [^`]+)`", prose)


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _leaf(words: list[str]) -> tuple[argparse.ArgumentParser, list[str], list[str]]:
    """The command's own parser, the words that named it, and the rest."""
    parser, path = build_parser(), []
    while words and words[0] in _subparsers(parser):
        parser = _subparsers(parser)[words[0]]
        path.append(words.pop(0))
    return parser, path, words


def _unknown_options(parser: argparse.ArgumentParser, rest: list[str]) -> list[str]:
    """The options among ``rest`` that ``parser`` does not take, as written (argparse would
    complete an abbreviation)."""
    return sorted({w.split("=", 1)[0] for w in rest if w.startswith("--")} - set(parser._option_string_actions))


def test_the_readme_shows_commands_at_all() -> None:
    # a test of nothing passes: the README's blocks and spans are found
    assert len(_shell_commands()) >= 8 and len(_inline_commands()) >= 20


@pytest.mark.parametrize("words", _shell_commands(), ids=lambda w: " ".join(w[:2]))
def test_each_shell_command_of_the_readme_parses_as_written(words: list[str]) -> None:
    parser = build_parser()
    try:
        parser.parse_args(words)
    except SystemExit as exc:
        pytest.fail(f"README: `heed {' '.join(words)}` does not parse (exit {exc.code})")
    leaf, path, rest = _leaf(list(words))
    assert not _unknown_options(leaf, rest), f"heed {' '.join(path)}: {_unknown_options(leaf, rest)}"


@pytest.mark.parametrize("span", _inline_commands())
def test_each_command_the_readme_names_exists_with_the_options_it_shows(span: str) -> None:
    text = span.replace("|", " ").replace("[", " ").replace("]", " ").replace("...", " ")
    words = [w for w in text.split()[1:] if w]
    parser, path, rest = _leaf(list(words))
    assert path, f"README: `{span}` names no command of heed"
    # `heed block|unblock HOST`: each alternative of the command is a command too
    siblings = _subparsers(_leaf(path[:-1])[0]) | _subparsers(parser)
    for alt in re.findall(r"\b([a-z-]+)\|([a-z-]+)\b", span.split("--")[0]):
        for name in set(alt) - set(path):
            assert name in siblings, f"README: `{span}`: no command {name}"
    unknown = _unknown_options(parser, rest)
    assert not unknown, f"README: `{span}`: heed {' '.join(path)} takes no {unknown}"


def test_each_make_target_the_readme_names_exists() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][a-z-]*):", makefile, flags=re.M))
    named = set(re.findall(r"`make ([a-z][a-z-]*)", README))
    named |= {line.split()[1] for block in _blocks("sh") for line in block.splitlines() if line.startswith("make ")}
    assert named and named <= targets, sorted(named - targets)
    assert (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().endswith("make test")


def _fill_in(directory: Path) -> None:
    """What the user writes between `profile check` and `info-page`: every WRITE ME, here the
    English text after the mark kept as the translation, the URLs and address their own."""
    for path in directory.glob("mybot*.yaml"):
        text = path.read_text(encoding="utf-8").replace("write-me.invalid", "bot.example.org")
        text = re.sub(r'"WRITE ME: an e-mail[^"]*"', '"crawler@bot.example.org"', text)
        text = re.sub(r'"WRITE ME: a list of uses[^"]*"', "[]", text)
        path.write_text(text.replace("WRITE ME: ", ""), encoding="utf-8")


def test_your_own_bot_as_the_readme_shows_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN an empty directory WHEN a newcomer types the README's own-bot steps (all but the
    # conformance run, which the conformance suites run for the bots and an own one)
    monkeypatch.chdir(tmp_path)
    steps = {w[0]: w for w in _shell_commands() if w and w[0] in ("new-bot", "profile", "info-page")}
    assert list(steps) == ["new-bot", "profile", "info-page"]
    assert main(steps["new-bot"]) == 0
    assert (tmp_path / "mybot.yaml").is_file()
    capsys.readouterr()
    # THEN the check names what is still to write, one line each, and the page waits for it
    assert main(steps["profile"]) == 1
    out = capsys.readouterr().out
    assert "still to write" in out and "to write before it is published" in out
    assert main(steps["info-page"]) == 2
    assert "still to write" in capsys.readouterr().err
    # WHEN every WRITE ME is written THEN the check says ready and the page is made where the
    # README says, in the bot's language and English
    _fill_in(tmp_path)
    assert main(steps["profile"]) == 0, capsys.readouterr()
    capsys.readouterr()
    assert main(steps["info-page"]) == 0, capsys.readouterr().err
    pages = {p.relative_to(tmp_path / "site").as_posix() for p in (tmp_path / "site").rglob("*.html")}
    assert len(pages) >= 2, pages
    capsys.readouterr()
    assert main(["profile", "check", "mybot.yaml", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ready"] is True

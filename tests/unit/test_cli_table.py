"""Every command behaves the same (issue 23): a typical mistake of each is one line on stderr,
``heed CMD: what is wrong (what to do)``, exit 2, nothing on stdout, no traceback."""
from __future__ import annotations

from pathlib import Path

import pytest

from heed.cli import main

NOT_A_BOT = "no such profile file and not a built-in bot"

# (argv, with {tmp} for a scratch folder) -> (the command's name, a part of the message)
MISTAKES = [
    (["local", "run", "--bot", "aubebot"], "local run", "--sources is required"),
    (["local", "run", "--bot", "aubebto", "--sources", "{tmp}/s.yaml"], "local run", NOT_A_BOT),
    (["demo", "--bot", "nope"], "demo", "unknown bot 'nope'"),
    (["robots", "check", "{tmp}/robots.txt", "https://a.example/"], "robots check", "--agent"),
    (["explain", "https://a.example/", "--out", "{tmp}"], "explain", "no requests.jsonl here"),
    (["info-page", "aubebto"], "info-page", NOT_A_BOT),
    (["info-page", "aubebot", "--out", "/proc/heed-nowhere"], "info-page", "--out: cannot write to /proc"),
    (["conformance", "--bot", "nosuch.yaml"], "conformance", NOT_A_BOT),
    (["conformance", "--bot", "aubebot", "--rule", "AUBE-99"], "conformance", "--rule: no rule 'AUBE-99'"),
    (["profile", "show", "aubebto"], "profile show", NOT_A_BOT),
    (["profile", "check", "nosuch.yaml"], "profile check", NOT_A_BOT),
    (["samconfig", "--check", "--write"], "samconfig", "not allowed with argument --check"),
    (["sources", "list", "--state", "{tmp}/none", "--bot", "aubebot"], "sources list", "not a heed state directory"),
    (["sources", "add", "https://a.example/f", "--kind", "fede", "--state", "{tmp}/st", "--bot", "aubebot"],
     "sources add", "'fede' is not a kind of source (did you mean 'feed'?)"),
    (["block", "https://", "--state", "{tmp}/st"], "block", "is not a host or domain"),
    (["audit", "--host", "a b", "--out", "{tmp}"], "audit", "--host: 'a b' is not a host name"),
    (["dlq", "list"], "dlq list", "one of the arguments --stack --state --queue-url is required"),
    (["dlq", "list", "--state", "{tmp}/none"], "dlq list", "not a heed state directory"),
    (["dlq", "redrive", "--state", "{tmp}/none"], "dlq redrive", "not a heed state directory"),
    (["audit", "--host", "a.example", "--state", "{tmp}/none"], "audit", "not a heed state directory"),
    (["serve", "--bot", "aubebto", "--state", "{tmp}/st"], "serve", NOT_A_BOT),
    (["serve", "--bot", "aubebot"], "serve", "the following arguments are required: --state"),
    (["serve", "--bot", "aubebot", "--state", "{tmp}/s.yaml"], "serve", "is a file, not a folder"),
    (["serve", "--bot", "aubebot", "--state", "{tmp}/st", "--workers", "-1"], "serve", "is not a whole number"),
    (["serve", "--bot", "aubebot", "--state", "{tmp}/st", "--sync", "off"], "serve", "invalid choice: 'off'"),
    (["serve", "--bot", "aubebot", "--state", "{tmp}/st", "--sources", "{tmp}/nosuch.yaml"], "serve", "nosuch.yaml"),
    (["service", "unit", "--bot", "aubebto", "--state", "/var/lib/heed/x"], "service unit", NOT_A_BOT),
    (["service", "unit", "--bot", "s.yaml", "--state", "/var/lib/heed/x"], "service unit", "is a relative path"),
    (["service", "unit", "--bot", "aubebot", "--state", "/var/lib/heed/x", "--user", "Heed"], "service unit",
     "'Heed' is not a user name"),
    (["new-bot", "Bad", "--language", "it"], "new-bot", "'Bad' is not a bot name"),
    (["deploy", "--bot", "nosuch.yaml", "--stack", "s", "--dry-run"], "deploy", ""),
    (["cost", "--bot", "aubebto", "--pages-per-month", "10"], "cost", NOT_A_BOT),
    (["identity", "keygen"], "identity keygen", "--out"),
    (["operator", "--table", "t", "--region", "eu-west-1", "block", "https://x.example/y"], "operator block",
     "is not a domain name"),
]


@pytest.mark.parametrize("argv, command, says", MISTAKES, ids=[" ".join(a[:2]) for a, *_ in MISTAKES])
def test_every_command_tells_a_mistake_the_same_way(argv: list[str], command: str, says: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text("sources: []\n", encoding="utf-8")
    (tmp_path / "robots.txt").write_text("User-agent: *\nDisallow: /\n", encoding="utf-8")
    code = main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    out, err = capsys.readouterr()
    assert (code, out) == (2, ""), (code, out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"heed {command}: ") and says in err, err
    assert ": error:" not in err  # one way to say it: heed CMD: what is wrong


# --- --json everywhere ----------------------------------------------------------------------------

def _leaves(parser: object, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], object]]:
    import argparse

    assert isinstance(parser, argparse.ArgumentParser)
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [(path, parser)]
    return [leaf for a in subs for name, sp in a.choices.items() for leaf in _leaves(sp, (*path, name))]


def test_every_command_takes_json() -> None:
    # A script reads every command's answer the same way: --json on each (issue 23).
    import argparse

    from heed.cli import _name_leaves, build_parser

    parser = build_parser()
    _name_leaves(parser)
    leaves = _leaves(parser)
    assert len(leaves) > 30
    missing = [" ".join(path) for path, p in leaves
               if isinstance(p, argparse.ArgumentParser)
               and not any("--json" in a.option_strings for a in p._actions)]
    assert not missing


@pytest.mark.parametrize("argv", [
    ["profile", "check", "aubebot", "--json"],
    ["robots", "check", "{tmp}/robots.txt", "https://a.example/x", "--agent", "MyBot", "--json"],
    ["new-bot", "mybot", "--language", "nl", "--out", "{tmp}/mybot.yaml", "--json"],
    ["info-page", "aubebot", "--out", "{tmp}/info", "--json"],
])
def test_a_json_answer_is_one_object_on_stdout(argv: list[str], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    import json

    (tmp_path / "robots.txt").write_text("User-agent: *\nDisallow: /x\n", encoding="utf-8")
    code = main([a.format(tmp=tmp_path) for a in argv])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    [line] = out.splitlines()
    assert isinstance(json.loads(line), dict)

"""The `heed` command: local runs, the demo, robots checks, deployment config."""
from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import NoReturn

from heed_core.errors import ConfigError, HeedError

from heed.argtypes import seconds

# A user mistake: one clear line, exit 2, no traceback. Every command's errors are of Heed's one
# family (heed_core.errors): ``main`` tells them all the same way, ``heed CMD: what is wrong``.
UsageError = ConfigError


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage mistake told in one line (the usage is one --help away)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("heed")
    except PackageNotFoundError:  # run from a checkout without installing
        from heed_core import __version__

        return __version__


def _out_dir(text: str, flag: str = "--out") -> Path:
    """A folder the run can write to, made if missing; a clear line when it cannot be."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag}: {text} is a file, not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".heed-write-check-"):
            pass
    except OSError as exc:
        raise UsageError(f"{flag}: cannot write to {text} ({exc.strerror or exc})") from exc
    return path


def _time(text: str | None, name: str) -> float | None:
    if text is None:
        return None
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise UsageError(f"{name}: {text!r} is not an ISO 8601 time (e.g. 2026-11-30T06:00:00Z)") from exc
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def _progress(line: str) -> None:
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K" + line[:160])
        sys.stderr.flush()


def cmd_local_run(args: argparse.Namespace) -> int:
    from heed_core.errors import ConfigError
    from heed_core.profile import ProfileError, load_profile
    from heed_core.sources import SourcesError, load_source_file

    from heed.local.report import human_report
    from heed.state_dir import StateDirError

    start = _time(args.start, "--start") or datetime.now(UTC).timestamp()
    until = _time(args.until, "--until") or start
    if until < start:
        raise UsageError("--until is before --start")
    if args.sources is None and args.state is None:
        raise UsageError("--sources is required (or --state DIR, to crawl the sources kept there)")
    from heed.engines import check_state_run

    refused = check_state_run(args, start, until)  # a state directory: the embedded engine, on the wall clock
    if refused:
        raise UsageError(refused)
    from heed.botcheck import warn_identity

    try:
        profile = load_profile(args.bot)
        sources = load_source_file(Path(args.sources), profile) if args.sources is not None else []
    except (ProfileError, SourcesError) as exc:
        raise UsageError(str(exc)) from exc
    out = _out_dir(args.out)
    warn_identity(args.bot, profile)  # a run of a profile being written goes on; sites see whose name it is
    try:
        if args.engine == "aws":
            from heed.local.runtime import LocalRun

            summary = LocalRun(profile, sources, start=start, until=until, out_dir=out,
                               allow_private=args.allow_private, progress=_progress, patience_s=args.patience).run()
        else:
            from heed.local.embedded import run_embedded

            summary = run_embedded(args, profile, sources, start, until, out, _progress)
    except (ConfigError, StateDirError) as exc:  # e.g. signing switched on without a key file
        raise UsageError(str(exc)) from exc
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K")
    if args.json:
        print(json.dumps({"out": str(args.out), **summary}, ensure_ascii=False))
        return 0
    print(human_report(Path(args.out), summary))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from heed_core.profile import BUILTIN_BOTS

    from heed.demo.run import run_demo

    for bot in args.bot or ():
        if bot not in BUILTIN_BOTS:
            raise UsageError(f"--bot: unknown bot {bot!r} ({_close(bot, BUILTIN_BOTS)})")
    bots = list(dict.fromkeys(args.bot)) if args.bot else None
    return run_demo(_out_dir(args.out), bots=bots, progress=_progress, as_json=args.json)


def _close(word: str, known: Sequence[str]) -> str:
    match = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f"did you mean {match[0]!r}?" if match else f"known: {', '.join(known)}"


def cmd_samconfig(args: argparse.Namespace) -> int:
    from heed import samconfig

    # A ProfileError or SamconfigError (exit 2) is told here, by main, as for every command.
    return samconfig.run(argparse.Namespace(check=args.check, write=args.write, bot=args.bot, stack=args.stack,
                                            json=args.json, path=Path("samconfig.toml")))


def cmd_profile_show(args: argparse.Namespace) -> int:
    from heed_core.profile import ProfileError, load_profile

    try:
        profile = load_profile(args.bot)
    except ProfileError as exc:
        raise UsageError(str(exc)) from exc
    print(json.dumps(profile.data, indent=2, ensure_ascii=False))
    return 0


def cmd_info_page(args: argparse.Namespace) -> int:
    from heed_core.profile import ProfileError, load_profile

    from heed.botcheck import refusal
    from heed.infopage import write_info_page

    try:
        profile = load_profile(args.bot)
        problem = refusal(args.bot, profile)
        if problem:  # a page that says someone else's name, or WRITE ME, must not reach the web
            raise UsageError(problem)
        out = _out_dir(args.out)  # a folder that cannot be written to: one line naming --out, exit 2
        paths = write_info_page(profile, out, langs=tuple(args.lang) if args.lang else None)
    except ProfileError as exc:
        raise UsageError(str(exc)) from exc
    if args.json:
        print(json.dumps({"bot": profile.name, "files": [str(p) for p in paths]}))
        return 0
    for path in paths:
        print(path)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="heed", description="Heed: a serverless, polite web crawler.")
    parser.add_argument("--version", action="version", version=f"heed {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    local = sub.add_parser("local", help="run a bot's rounds on this machine against real sites (the embedded "
                                         "engine, or the Lambda handlers on moto with --engine aws)")
    local_sub = local.add_subparsers(dest="local_command", required=True)
    run = local_sub.add_parser("run", help="run a bot's rounds against real sites (or the demo web)")
    run.add_argument("--bot", required=True, help="a built-in bot name or a profile file")
    run.add_argument("--sources", help="YAML with sources: [{url, kind, ...}] (required unless --state)")
    run.add_argument("--start", help="ISO 8601 time of the first round (default: now)")
    run.add_argument("--until", help="ISO 8601 end of the simulated time (default: --start: one round)")
    run.add_argument("--allow-private", action="store_true",
                     help="let the fetcher reach loopback/private addresses (tests, the demo web)")
    run.add_argument("--out", default="heed-out", help="output folder (default ./heed-out)")
    run.add_argument("--patience", type=seconds, default=None,
                     help="seconds to wait in real time for deferred work before ending a round")
    run.add_argument("--json", action="store_true", help="the run's summary as one JSON object, not the report")
    run.add_argument("--state", metavar="DIR",
                     help="keep the crawl's state in DIR (the embedded engine's database) between runs: a second "
                          "run sends conditional GETs, remembers seen URLs, honours blocks and sources added there")
    from heed.engines import add_engine_argument

    add_engine_argument(run)
    run.set_defaults(func=cmd_local_run)

    demo = sub.add_parser("demo", help="all five bots, one round each, on the bundled demo web")
    demo.add_argument("--out", default="heed-out/demo", help="output folder (default ./heed-out/demo)")
    demo.add_argument("--bot", action="append", help="only this bot (repeatable)")
    demo.add_argument("--json", action="store_true",
                      help="each bot's run summary and what the sites saw, as JSON lines (no report)")
    demo.set_defaults(func=cmd_demo)

    robots = sub.add_parser("robots", help="robots.txt tools")
    robots_sub = robots.add_subparsers(dest="robots_command", required=True)
    check = robots_sub.add_parser("check", help="is URL allowed for TOKEN by ROBOTS_FILE? (exit 0 yes, 1 no, 2 error)")
    check.add_argument("robots_file")
    check.add_argument("url")
    check.add_argument("--agent", required=True, help="the product token (or a full User-Agent)")
    check.add_argument("--json", action="store_true", help="the answer as one JSON object (what it prints anyway)")
    from heed.robots_cli import cmd_robots_check

    check.set_defaults(func=cmd_robots_check)

    sam = sub.add_parser("samconfig", help="samconfig.toml from the bot profiles")
    group = sam.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true", help="exit 1 if samconfig.toml is out of date")
    group.add_argument("--write", action="store_true", help="rewrite samconfig.toml")
    sam.add_argument("--bot", metavar="NAME|FILE", help="add or update this bot's environment (with --write)")
    sam.add_argument("--stack", metavar="STACK", help="--bot: its stack's name (default: as before, or heed-NAME)")
    sam.add_argument("--json", action="store_true", help="--check, --write: what was found or written, as JSON")
    sam.set_defaults(func=cmd_samconfig)

    info = sub.add_parser("info-page", help="the bot's public info page, in its language and English, "
                                             "and its ips.json, from its profile")
    info.add_argument("bot", help="a built-in bot name or a profile file")
    info.add_argument("--lang", action="append", metavar="LL",
                      help="only the page in this language (the bot's or en; repeatable; default both)")
    info.add_argument("--out", default="heed-out/info",
                      help="output folder, laid out as the info host publishes it (default ./heed-out/info)")
    info.add_argument("--json", action="store_true", help="the files written, as one JSON object")
    info.set_defaults(func=cmd_info_page)

    prof = sub.add_parser("profile", help="bot profiles")
    prof_sub = prof.add_subparsers(dest="profile_command", required=True)
    show = prof_sub.add_parser("show", help="print a profile after extends: and defaults")
    show.add_argument("bot")
    show.add_argument("--json", action="store_true", help="as JSON (what it prints anyway)")
    show.set_defaults(func=cmd_profile_show)
    from heed import ownbot

    pcheck = prof_sub.add_parser("check", help="what a profile still has to write (WRITE ME, its base bot's "
                                               "identity, its page's sentences): exit 0 when nothing, 1 with a line "
                                               "each; a number looser than its base bot's promise is a warning line "
                                               "naming the rule, whatever the exit code")
    pcheck.add_argument("bot", metavar="FILE")
    pcheck.add_argument("--json", action="store_true",
                        help="one JSON object: ready or not, what is left to write, the warnings, the profile's "
                             "sha256")
    pcheck.set_defaults(func=ownbot.cmd_profile_check)

    from heed import cost, deploy, egress, events_cli, identity_cli, operator, serve_cli, service_cli, state_cli
    from heed.conformance import command as conformance
    from heed.operator import explain, legacy

    legacy.register(sub)
    explain.register(sub)

    ownbot.register(sub)
    deploy.register(sub)
    egress.register(sub)
    serve_cli.register(sub)
    service_cli.register(sub)
    events_cli.register(sub)
    state_cli.register(sub)
    operator.register(sub)
    identity_cli.register(sub)
    conformance.register(sub)
    cost.register(sub)
    from heed.desk import cli as desk_cli

    desk_cli.register(sub)
    return parser


def _quiet_stdout() -> None:
    # The reader of our output is gone: later writes (and the flush at exit) go nowhere.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is no real file (a test's capture)
        pass


def _name_leaves(parser: argparse.ArgumentParser) -> None:
    """Every command's parser names itself (``heed sources add``) in what it parses: the prefix of
    its errors."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                sub.set_defaults(command_name=sub.prog)
                _name_leaves(sub)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    _name_leaves(parser)
    try:
        args, extra = parser.parse_known_args(argv)
    except SystemExit as exc:  # a usage mistake (told already, in one line), --help, --version
        return int(exc.code) if isinstance(exc.code, int) else 2
    prog = str(getattr(args, "command_name", "heed"))
    if extra:  # told by the command they were given to, not by `heed`
        print(f"{prog}: unrecognized arguments: {' '.join(extra)} (see {prog} --help)", file=sys.stderr)
        return 2
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # a closed pipe shows here, not after main has returned
        return code
    except HeedError as exc:
        # Heed's one family of errors, told once for every command: 2 for a mistake, 1 otherwise.
        print(f"{prog}: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:
        # `heed profile show aubebot | head`: the reader had enough; quiet, as cat is.
        _quiet_stdout()
        return 141  # 128 + SIGPIPE, what a shell reports for cat in the same place
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        # The file system said no in the middle of a run (disk full, a folder turned read-only).
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"{prog}: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

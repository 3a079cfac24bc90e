"""The `heed` command: local runs, the demo, robots checks, deployment config."""
from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence


class UsageError(Exception):
    """A user mistake: one clear line, exit 2, no traceback."""


def _time(text: str | None, name: str) -> float | None:
    if text is None:
        return None
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise UsageError(f"{name}: {text!r} is not an ISO 8601 time (e.g. 2026-11-30T06:00:00Z)") from exc
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


def _progress(line: str) -> None:
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K" + line[:160])
        sys.stderr.flush()


def cmd_local_run(args: argparse.Namespace) -> int:
    from heed_core.profile import ProfileError, load_profile

    from heed.local.report import human_report
    from heed.local.runtime import LocalRun
    from heed.local.sources import SourcesError, load_sources

    start = _time(args.start, "--start") or datetime.now(timezone.utc).timestamp()
    until = _time(args.until, "--until") or start
    if until < start:
        raise UsageError("--until is before --start")
    try:
        profile = load_profile(args.bot)
        sources = load_sources(Path(args.sources), profile)
    except (ProfileError, SourcesError) as exc:
        raise UsageError(str(exc)) from exc
    run = LocalRun(profile, sources, start=start, until=until, out_dir=Path(args.out),
                   allow_private=args.allow_private, progress=_progress, patience_s=args.patience)
    summary = run.run()
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K")
    print(human_report(Path(args.out), summary))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from heed.demo.run import run_demo

    return run_demo(Path(args.out), bots=args.bot or None, progress=_progress)


def cmd_robots_check(args: argparse.Namespace) -> int:
    from heed_core.robots import check_command

    result, code = check_command(args.robots_file, args.url, args.agent)
    print(json.dumps(result, ensure_ascii=False))
    return code


def cmd_samconfig(args: argparse.Namespace) -> int:
    from heed import samconfig

    argv = ["--check"] if args.check else ["--write"] if args.write else []
    return int(samconfig.main(argv) or 0)


def cmd_profile_show(args: argparse.Namespace) -> int:
    from heed_core.profile import ProfileError, load_profile

    try:
        profile = load_profile(args.bot)
    except ProfileError as exc:
        raise UsageError(str(exc)) from exc
    print(json.dumps(profile.data, indent=2, ensure_ascii=False))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="heed", description="Heed: a serverless, polite web crawler.")
    sub = parser.add_subparsers(dest="command", required=True)

    local = sub.add_parser("local", help="run the whole stack on this machine (moto + real HTTP)")
    local_sub = local.add_subparsers(dest="local_command", required=True)
    run = local_sub.add_parser("run", help="run a bot's rounds against real sites (or the demo web)")
    run.add_argument("--bot", required=True, help="a built-in bot name or a profile file")
    run.add_argument("--sources", required=True, help="YAML with sources: [{url, kind, ...}]")
    run.add_argument("--start", help="ISO 8601 time of the first round (default: now)")
    run.add_argument("--until", help="ISO 8601 end of the simulated time (default: --start: one round)")
    run.add_argument("--allow-private", action="store_true",
                     help="let the fetcher reach loopback/private addresses (tests, the demo web)")
    run.add_argument("--out", default="heed-out", help="output folder (default ./heed-out)")
    run.add_argument("--patience", type=float, default=None,
                     help="seconds to wait in real time for deferred work before ending a round")
    run.set_defaults(func=cmd_local_run)

    demo = sub.add_parser("demo", help="all five bots, one round each, on the bundled demo web")
    demo.add_argument("--out", default="heed-out/demo", help="output folder (default ./heed-out/demo)")
    demo.add_argument("--bot", action="append", help="only this bot (repeatable)")
    demo.set_defaults(func=cmd_demo)

    robots = sub.add_parser("robots", help="robots.txt tools")
    robots_sub = robots.add_subparsers(dest="robots_command", required=True)
    check = robots_sub.add_parser("check", help="is URL allowed for TOKEN by ROBOTS_FILE? (exit 0 yes, 1 no, 2 error)")
    check.add_argument("robots_file")
    check.add_argument("url")
    check.add_argument("--agent", required=True, help="the product token (or a full User-Agent)")
    check.set_defaults(func=cmd_robots_check)

    sam = sub.add_parser("samconfig", help="samconfig.toml from the bot profiles")
    group = sam.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true", help="exit 1 if samconfig.toml is out of date")
    group.add_argument("--write", action="store_true", help="rewrite samconfig.toml")
    sam.set_defaults(func=cmd_samconfig)

    prof = sub.add_parser("profile", help="bot profiles")
    prof_sub = prof.add_subparsers(dest="profile_command", required=True)
    show = prof_sub.add_parser("show", help="print a profile after extends: and defaults")
    show.add_argument("bot")
    show.set_defaults(func=cmd_profile_show)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except UsageError as exc:
        print(f"heed: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("heed: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

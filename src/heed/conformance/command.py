"""`heed conformance --bot BOT|PROFILE [--rule ID]... [--json] [--engine embedded|aws]`: the promise suite
for one bot, on either engine.

``register(subparsers)`` adds the command to the `heed` parser. Exit 0 when every rule holds,
1 when one does not (or could not be proven), 2 for a mistake in the command or the profile
(one line on stderr)."""
from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from heed_core.errors import ConfigError

if TYPE_CHECKING:  # `heed --help` should not load the stack
    from heed.conformance.model import Rule
    from heed.conformance.runner import Report

__all__ = ["base_bot", "register", "run", "select"]


def register(subparsers: Any) -> None:
    """Add ``conformance`` to the `heed` parser's subcommands."""
    p = subparsers.add_parser(
        "conformance", help="prove a bot's public promises (PROMISES.md) against local recording sites",
        description="Runs the bot's rules (COMMON-01.. and its own) through the real handlers against sites on "
                    "127.0.0.x that log every request, and prints what each site saw. A profile file must "
                    "extends: a built-in bot, whose promises it keeps. Long waits run scaled, and the real "
                    "numbers are checked on the profile. Exit 0 when every rule holds, 1 when one does not.")
    p.add_argument("--bot", required=True, metavar="BOT|PROFILE", help="a built-in bot name or a profile file")
    p.add_argument("--rule", action="append", metavar="ID",
                   help="only this rule, e.g. AUBE-09, or a family, e.g. COMMON (repeatable)")
    p.add_argument("--json", action="store_true", help="one JSON document instead of the table")
    p.add_argument("--engine", choices=("embedded", "aws"), default="aws",
                   help="what runs the scenarios: aws (default: the real Lambda handlers on an in-process AWS, as "
                        "deployed) or embedded (the engine of heed serve, on SQLite)")
    p.set_defaults(func=cmd_conformance)


def base_bot(ref: str) -> str:
    """The built-in bot a profile (a name, or a file that ``extends:`` one) is checked against."""
    from heed_core.profile import BUILTIN_BOTS, ProfileError, builtin_base

    if ref in BUILTIN_BOTS:
        return ref
    try:
        base = builtin_base(ref)
    except ProfileError as exc:
        raise ConfigError(str(exc)) from exc
    if base is None:
        raise ConfigError(f"{ref}: does not extends: a built-in bot ({', '.join(BUILTIN_BOTS)}); conformance "
                       "checks a bot's public promises, so the profile must keep one's")
    return base


def select(rules: Sequence[Rule], wanted: Sequence[str] | None) -> list[Rule]:
    """The rules named (an id, or a family such as AUBE), in catalogue order."""
    if not wanted:
        return list(rules)
    ids = [r.id for r in rules]
    families = sorted({i.split("-")[0] for i in ids})
    chosen: set[str] = set()
    for w in wanted:
        key = w.strip().upper()
        if key in ids:
            chosen.add(key)
        elif key in families:
            chosen.update(i for i in ids if i.startswith(key + "-"))
        else:
            close = difflib.get_close_matches(key, ids + families, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]}?" if close else f"this bot's rules: {ids[0]}..{ids[-1]}"
            raise ConfigError(f"--rule: no rule {w!r} for this bot ({hint})")
    return [r for r in rules if r.id in chosen]


def run(ref: str, rule_ids: Sequence[str] | None = None,
        progress: Callable[[str], None] | None = None, engine: str = "aws") -> Report:
    """Check ``ref``'s profile against its bot's promises; the report of every rule chosen."""
    from heed_core.profile import ProfileError, load_profile

    from heed.botcheck import warn_identity
    from heed.conformance.catalogue import catalogue
    from heed.conformance.runner import judge

    bot = base_bot(ref)
    try:
        profile = load_profile(ref)
    except ProfileError as exc:
        raise ConfigError(str(exc)) from exc
    warn_identity(ref, profile)
    rules, scenarios = catalogue(bot)
    return judge(bot, ref, profile, select(rules, rule_ids), scenarios, progress, engine=engine)


def _progress(line: str) -> None:
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K" + line[:150])
        sys.stderr.flush()


def cmd_conformance(args: argparse.Namespace) -> int:
    from heed.conformance.report import as_json, as_table

    report = run(args.bot, args.rule, _progress, engine=args.engine)
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K")
    print(as_json(report) if args.json else as_table(report))
    return 0 if report.passed else 1

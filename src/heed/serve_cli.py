"""`heed serve --bot NAME|FILE --state DIR`: the bot on one machine, for months (heed_embedded.serve).

``register(subparsers)`` adds the command. Every mistake is one line on stderr and exit 2; a
run stopped by SIGTERM or SIGINT exits 0 once its requests in flight are committed."""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heed.argtypes import count, seconds

if TYPE_CHECKING:
    from heed_core.profile import Profile

__all__ = ["GRACE_S", "cmd_serve", "open_embedded", "register"]

GRACE_S = 10.0  # --grace's default: how long requests in flight may take to finish after SIGTERM


def register(subparsers: Any) -> None:
    """Adds `heed serve` to the `heed` command's subparsers."""
    p = subparsers.add_parser(
        "serve", help="run a bot on this machine for as long as it runs: its schedules on the wall clock, its "
                      "state in DIR (SQLite), every core at work",
        description="Runs the bot's schedules on the wall clock against real sites, its whole state in one SQLite "
                    "database in DIR (durable at every commit: killed at any moment it loses nothing committed and "
                    "repeats at most the request in flight). SIGTERM finishes the requests in flight and stops; a "
                    "restart resumes pending work at once. JSON log lines on stdout, progress on stderr. The "
                    "operator commands (sources, block, purge, explain, audit, dlq) act on DIR while it runs.")
    p.add_argument("--bot", required=True, metavar="NAME|FILE", help="a built-in bot name or a profile file")
    p.add_argument("--state", required=True, metavar="DIR", help="the state directory (made if missing)")
    p.add_argument("--sources", metavar="FILE", help="add these sources first (YAML or CSV; idempotent)")
    p.add_argument("--once", action="store_true", help="one round of every task now, then exit when no work "
                                                       "is left within --patience")
    p.add_argument("--workers", type=count, default=0, metavar="N",
                   help="processes crawling side by side (default: two per core, as memory allows)")
    p.add_argument("--threads", type=count, default=0, metavar="N", help="requests at once in each process, "
                   "fixed (default: as many as the hosts due and the sites' answer times ask for, within the "
                   "machine's memory and file descriptors); the profile's politeness.max_in_flight caps the total")
    p.add_argument("--patience", type=seconds, default=None, metavar="S",
                   help="--once: seconds to wait for deferred work before ending (default: the profile's gaps)")
    p.add_argument("--grace", type=seconds, default=GRACE_S, metavar="S",
                   help=f"on SIGTERM, how long requests in flight may take to finish (default {GRACE_S:g})")
    p.add_argument("--allow-private", action="store_true",
                   help="let the fetcher reach loopback/private addresses (tests, the demo web)")
    p.add_argument("--quiet", action="store_true", help="no log line per request and skip (rounds and trouble only)")
    p.add_argument("--json", action="store_true", help="JSON log lines on stdout (what it prints anyway)")
    p.add_argument("--webhook", metavar="URL",
                   help="post every result to URL as a signed CloudEvents envelope (Standard Webhooks; https, or "
                        "http to this machine); at least once, in commit order per source, retried for a day")
    p.add_argument("--webhook-secret-file", metavar="FILE",
                   help="the webhook's signing secret: a file holding whsec_ and base64 (Standard Webhooks)")
    p.add_argument("--settings", metavar="FILE",
                   help="this installation's own settings (YAML: webhook.url, webhook.secret_file), never "
                        "published with the profile; the flags win over it")
    p.add_argument("--desk", metavar="HOST:PORT",
                   help="serve the site owners' desk there too (off by default; desk.listen in --settings): /desk/, "
                        "behind the info host's TLS proxy; `desk: false` in --settings keeps it off")
    p.add_argument("--keep-requests", metavar="DURATION",
                   help="how long the request and skip log is kept (default 400d: a site owner's log line a year "
                        "old still has its answer; 12h, 30m, 90s work too); pruned while it serves")
    p.add_argument("--sync", choices=["full", "normal"], default="full",
                   help="full (default): every commit on disk before it returns, a power cut loses nothing "
                        "committed; normal: a commit survives the process (SIGKILL, a crash) but a power cut may "
                        "undo the last ones; fewer waits for the disk")
    p.set_defaults(func=cmd_serve)


def default_patience(profile: Profile) -> float:
    """Every gap a round needs fits in it (``heed_core.politeness.patience``, as ``heed local run``'s)."""
    from heed_core.politeness import patience

    return patience(profile.politeness)


def open_embedded(path: Path, *, create: bool, bot: str | None = None, synchronous: str = "FULL") -> Any:
    """The embedded state directory at ``path`` (``heed_embedded.state``), its notes (a migration)
    said on stderr; ``bot``: the directory learns whose it is, another bot's is refused."""
    from heed_embedded.state import open_state

    state = open_state(path, create=create, synchronous=synchronous)
    for note in state.notes:
        print(note, file=sys.stderr)
    if bot is not None:
        try:
            state.claim_bot(bot)
        except Exception:
            state.close()
            raise
    return state


def cmd_serve(args: argparse.Namespace) -> int:
    from heed_core.profile import load_profile
    from heed_core.sources import load_source_file

    from heed_embedded.memory import limit_arenas
    from heed_embedded.serve import ServeOptions, serve

    from heed.botcheck import warn_identity
    from heed.operator.actions import import_sources

    # Every mistake (a profile, a sources file, a state directory) is a HeedError: heed.cli.main
    # tells it in one line, `heed serve: ...`, exit 2; the database refusing (a full disk) exit 1.
    from heed.settings import load_settings, reachable, webhook_endpoint

    limit_arenas()  # before any thread: a process that runs for months keeps its heap to a few arenas
    profile = load_profile(args.bot)
    sources = load_source_file(Path(args.sources), profile) if args.sources else None
    settings = load_settings(args.settings)
    from heed_embedded.retention import Retention, parse_duration

    keep = Retention.from_settings(settings.retention, "--settings: retention")
    if args.keep_requests is not None:
        keep = dataclasses.replace(keep, requests_s=parse_duration(args.keep_requests, "--keep-requests"))
    webhook = webhook_endpoint(args.webhook or settings.webhook_url,
                               args.webhook_secret_file or settings.webhook_secret_file)
    if webhook is not None:
        reachable(webhook.url)  # a typo told now, not a day of retries later
    desk_at = desk_address(args.desk, settings, profile)
    state = open_embedded(Path(args.state), create=True, bot=profile.name, synchronous=args.sync.upper())
    warn_identity(args.bot, profile)
    desk = None
    try:
        with state.serve_lock():
            if desk_at is not None:
                from heed.desk.cli import start_desk

                desk = start_desk(profile, state.db, desk_at, settings, allow_private=args.allow_private)
            if sources:
                report = import_sources(state_store(state), sources, time.time())
                counts = report.counts()
                print(f"heed: sources from {args.sources}: {counts['added']} added, {counts['updated']} updated, "
                      f"{counts['unchanged']} unchanged", file=sys.stderr)
            patience = args.patience if args.patience is not None else default_patience(profile)
            opts = ServeOptions(once=args.once, workers=args.workers, threads=args.threads,
                                patience_s=patience, allow_private=args.allow_private, quiet=args.quiet,
                                grace_s=args.grace, synchronous=args.sync.upper())
            summary = serve(profile, state, opts, webhook=webhook, retention=keep)
            if summary.get("cut"):
                # Turns past the grace: their tokens come back at the next start. Out now, the
                # database left open under them (closed, their thread would print a traceback).
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(0)
    finally:
        if desk is not None:
            desk.stop()
        state.close()
    return 0


def desk_address(flag: str | None, settings: Any, profile: Profile) -> tuple[str, int] | None:
    """Where ``heed serve`` serves the desk: ``--desk``, else the settings' desk.listen when the
    desk is on (the settings' ``desk.enabled``, else the profile's ``desk``); None: no desk.
    ``--desk`` where the settings turn the desk off is a mistake, said in one line."""
    from heed_core.errors import ConfigError

    from heed.desk.server import parse_listen

    enabled = settings.desk_enabled if settings.desk_enabled is not None else profile.spec.desk
    if flag is not None:
        if settings.desk_enabled is False:
            raise ConfigError("--desk: the settings turn the desk off (desk.enabled: false in --settings)")
        return parse_listen(flag)
    if settings.desk_listen and enabled:
        return parse_listen(settings.desk_listen, "--settings: desk.listen")
    return None


def state_store(state: Any) -> Any:
    """The crawl's store on an open embedded state directory."""
    from heed_embedded.store import SqliteStore

    return SqliteStore(state.db)

"""`heed desk --state DIR`: the site owners' desk alone on a state directory (while `heed serve`
crawls it, or not: a proof file is then read at its next start), and ``start_desk``, which
``heed serve --desk HOST:PORT`` runs beside the crawl. ``--actions`` lists what site owners
asked for instead (stop, slow down, remove), newest first."""
from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from heed_core.errors import ConfigError
from heed_core.profile import Profile

__all__ = ["cmd_desk", "register", "start_desk"]


def _resolver(text: str | None) -> tuple[str, int] | None:
    if not text:
        return None
    from heed.desk.server import parse_listen

    return parse_listen(text, "--settings: desk.resolver")


def start_desk(profile: Profile, db: Any, address: tuple[str, int], settings: Any, *,
               allow_private: bool = False, quiet: bool = False) -> Any:
    """The desk of ``profile`` on a state's database, served at ``address`` in a thread of its
    own; its actions are log lines on stdout (``desk_action``). Returns the running server."""
    from heed_embedded.serve import JsonLog

    from heed.desk.embedded import embedded_desk
    from heed.desk.server import DeskServer
    from heed.desk.web import DeskApp

    log = JsonLog(profile.name)
    desk = embedded_desk(profile, db, log=log, allow_private=allow_private, resolver=_resolver(settings.desk_resolver))
    server = DeskServer(DeskApp(desk, forwarded=settings.desk_forwarded), address).start()
    log("desk", {"url": server.url, "detail": "the site owners' desk"})
    if not quiet:
        print(f"heed: the desk answers at {server.url}", file=sys.stderr)
    return server


def register(subparsers: Any) -> None:
    """Adds `heed desk` to the `heed` command's subparsers."""
    p = subparsers.add_parser(
        "desk", help="the site owners' desk on a state directory: was this you, what did you do here, stop",
        description="Serves the site owners' desk of a state directory's bot (the one `heed serve --desk` serves "
                    "beside the crawl): pasted log lines judged, a proof of control of a host read by the bot, "
                    "then that host's audit, explain, and stop, slow down or remove. --actions lists what site "
                    "owners asked for instead.")
    p.add_argument("--state", required=True, metavar="DIR", help="the state directory (heed serve --state DIR)")
    p.add_argument("--bot", metavar="NAME|FILE", help="the bot's profile (default: the one the state ran with)")
    p.add_argument("--listen", metavar="HOST:PORT", help="where to listen (default: desk.listen, else 127.0.0.1:8080)")
    p.add_argument("--settings", metavar="FILE", help="the installation's settings (desk.*)")
    p.add_argument("--allow-private", action="store_true", help="hosts on private addresses may be proven (tests)")
    p.add_argument("--actions", action="store_true", help="list what site owners asked for, newest first, and exit")
    p.add_argument("--json", action="store_true", help="--actions: one JSON object a line")
    p.set_defaults(func=cmd_desk)


def cmd_desk(args: argparse.Namespace, *, stop: threading.Event | None = None) -> int:
    from heed_embedded.desk import SqliteDeskStore

    from heed.desk.server import parse_listen
    from heed.operator.targets import Target, profile_of
    from heed.settings import load_settings
    from heed.state_dir import open_local

    settings = load_settings(args.settings)
    with open_local(Path(args.state), write=False) as state:
        target = Target(None, None, state.bot, f"state {args.state}", state, state.get("profile"))
        profile = profile_of(target, args.bot)
        if args.actions:
            for a in SqliteDeskStore(state.db).actions(1000):
                when = datetime.fromtimestamp(a.at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                if args.json:
                    print(json.dumps({"kind": a.kind, "host": a.name, "at": when, "client": a.client,
                                      "detail": dict(a.detail)}, ensure_ascii=False))
                else:
                    print(f"{when}  {a.kind:6}  {a.name}  from {a.client}  {json.dumps(dict(a.detail))}")
            return 0
        if settings.desk_enabled is False:
            raise ConfigError("the settings turn the desk off (desk.enabled: false in --settings)")
        address = parse_listen(args.listen or settings.desk_listen or "127.0.0.1:8080", "--listen")
        server = start_desk(profile, state.db, address, settings, allow_private=args.allow_private)
        done = stop or threading.Event()
        if threading.current_thread() is threading.main_thread():
            for s in (signal.SIGTERM, signal.SIGINT):
                signal.signal(s, lambda *_: done.set())
        try:
            done.wait()
        finally:
            server.stop()
    return 0

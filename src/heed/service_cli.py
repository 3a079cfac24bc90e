"""`heed service unit --bot FILE --state DIR [--user heed]`: a hardened systemd unit for `heed serve`.

Printed on stdout, to be saved as /etc/systemd/system/heed-<bot>.service. The service runs as a
user of its own and sees the file system read-only but for its state directory: under /var/lib
(/var/lib/heed/<bot>) it is the unit's ``StateDirectory=`` (heed/<bot>), made by systemd and owned
by that user; elsewhere the operator makes it. It gets no privileges, no devices, no kernel knobs,
no address families but IPv4, IPv6 and Unix sockets, and ``--grace`` plus a margin to stop before
systemd kills it. Every path in it is absolute: the installed `heed` this was run with, the
profile, the settings. Every mistake is one line, exit 2."""
from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from heed_core.errors import ConfigError

from heed.argtypes import seconds

__all__ = ["Unit", "checked", "register", "render"]

STOP_MARGIN_S = 15  # after the grace: the workers joined, the last events exported, the database closed
STATE_ROOT = PurePosixPath("/var/lib")  # where systemd's StateDirectory= lives
_HOMES = (PurePosixPath("/home"), PurePosixPath("/root"), PurePosixPath("/run/user"))  # what ProtectHome= hides
# A user name as systemd takes it without a warning (its strict rules, useradd's portable names).
_USER = re.compile(r"[a-z_][a-z0-9_-]{0,30}")
# A path the unit can name as it is: nothing systemd reads as a specifier (%), a variable ($), a
# quote, an escape or a separator.
_PATH = re.compile(r"(/[A-Za-z0-9._@+,=:-]+)+")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
CREDENTIAL = "webhook-secret"  # the secret's name among the unit's credentials (LoadCredential=)


class ServiceError(ConfigError):
    code = "service"


@dataclass(frozen=True)
class Unit:
    """What the unit says, every value checked: the bot, who runs it, with which command line."""

    bot: str  # the profile's name: the unit is heed-<bot>.service
    user: str
    heed: PurePosixPath  # the installed `heed`
    python: PurePosixPath  # the Python installation it runs on (its interpreter and standard library)
    profile: str  # a built-in name or an absolute path
    state: PurePosixPath
    grace_s: float
    quiet: bool = False
    webhook: str | None = None
    secret: PurePosixPath | None = None
    settings: PurePosixPath | None = None

    @property
    def name(self) -> str:
        return f"heed-{self.bot}.service"


def register(subparsers: Any) -> None:
    """Adds `heed service unit` to the `heed` command's subparsers."""
    from heed.serve_cli import GRACE_S

    p = subparsers.add_parser("service", help="run heed serve as a system service (systemd)")
    sub = p.add_subparsers(dest="service_command", required=True)
    u = sub.add_parser("unit", help="print a hardened systemd unit that runs heed serve for a bot",
                       description=(__doc__ or "").split("\n\n", 1)[1])
    u.add_argument("--bot", required=True, metavar="FILE",
                   help="the bot's profile file by its absolute path (e.g. /etc/heed/mybot.yaml), or a built-in name")
    u.add_argument("--state", required=True, metavar="DIR",
                   help="its state directory by its absolute path (e.g. /var/lib/heed/mybot: systemd makes it)")
    u.add_argument("--user", default="heed", help="the user it runs as (default heed; never root)")
    u.add_argument("--grace", type=seconds, default=GRACE_S, metavar="S",
                   help=f"heed serve --grace (default {GRACE_S:g}); systemd waits this and {STOP_MARGIN_S} s more "
                        "before it kills")
    u.add_argument("--quiet", action="store_true", help="heed serve --quiet: no journal line per request and skip")
    u.add_argument("--webhook", metavar="URL", help="heed serve --webhook URL")
    u.add_argument("--webhook-secret-file", metavar="FILE",
                   help="the webhook's secret by its absolute path: systemd reads it and hands it over "
                        "(LoadCredential=), so it may stay root's alone")
    u.add_argument("--settings", metavar="FILE", help="heed serve --settings FILE, by its absolute path")
    u.add_argument("--json", action="store_true", help="one JSON object: the unit's name, where it goes, its text")
    u.set_defaults(func=cmd_service_unit)


def _absolute(text: str, flag: str, *, file: bool) -> PurePosixPath:
    path = PurePosixPath(text)
    if not path.is_absolute():
        raise ServiceError(f"{flag}: {text} is a relative path; a unit names an absolute one (systemd starts it "
                           "in /)")
    if not _PATH.fullmatch(text.rstrip("/")) or ".." in path.parts or str(path) != text.rstrip("/"):
        raise ServiceError(f"{flag}: {text!r}: a unit names it plainly (no .. or //, spaces, quotes, % or $)")
    if file and not Path(path).is_file():
        raise ServiceError(f"{flag}: {text}: no such file")
    return path


def _under(path: PurePosixPath, roots: tuple[PurePosixPath, ...]) -> bool:
    return any(path == r or r in path.parents for r in roots)


def _heed_command() -> PurePosixPath:
    """The installed `heed` this runs as: argv[0] when it is that command, else the one beside this
    Python (``python -m heed.cli`` in a venv), else the one on PATH."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    found = shutil.which("heed")
    for c in (argv0 if argv0 is not None and argv0.name == "heed" else None, Path(sys.executable).parent / "heed",
              Path(found) if found else None):
        if c is not None and c.is_file():
            path = c.resolve()
            if not _PATH.fullmatch(str(path)):
                raise ServiceError(f"the heed command is at {str(path)!r}, which a unit cannot name plainly "
                                   "(install heed where its path has no spaces, quotes, % or $)")
            return PurePosixPath(path)
    raise ServiceError("cannot find the installed heed command (run heed service unit with the heed that will serve)")


def checked(args: argparse.Namespace) -> Unit:
    """The unit ``args`` ask for, every value checked: ``ConfigError`` (one line) at the first that
    is wrong."""
    from heed_core.profile import BUILTIN_BOTS, load_profile

    from heed.settings import load_settings

    if args.bot not in BUILTIN_BOTS and "/" not in args.bot and not Path(args.bot).exists():
        load_profile(args.bot)  # a name that is no built-in bot: one line, with the closest built-in
    profile_ref = args.bot if args.bot in BUILTIN_BOTS else str(_absolute(args.bot, "--bot", file=True))
    profile = load_profile(profile_ref)  # a profile that does not load: its own one line
    if not _NAME.fullmatch(profile.name):
        raise ServiceError(f"--bot: the bot's name {profile.name!r} cannot name a unit (letters, digits, . _ -)")
    if not _USER.fullmatch(args.user) or args.user.isdigit():
        raise ServiceError(f"--user: {args.user!r} is not a user name (lowercase letters, digits, _ and -, at most "
                           "31, not all digits)")
    if args.user == "root":
        raise ServiceError("--user: root: the bot runs as a user of its own (default heed)")
    state = _absolute(args.state, "--state", file=False)
    if _under(state, _HOMES):
        raise ServiceError(f"--state: {state} is under {', '.join(map(str, _HOMES))}, which the unit hides "
                           f"(ProtectHome=): use /var/lib/heed/{profile.name}")
    if state == STATE_ROOT or Path(state).is_file():
        raise ServiceError(f"--state: {state} is not a folder of one bot's state (e.g. /var/lib/heed/{profile.name})")
    settings = _absolute(args.settings, "--settings", file=True) if args.settings else None
    if settings is not None:
        load_settings(str(settings))  # a settings file that does not load: its own one line
    secret = _absolute(args.webhook_secret_file, "--webhook-secret-file", file=True) \
        if args.webhook_secret_file else None
    if args.webhook is not None:
        from heed_core.webhook import check_url

        check_url(args.webhook, "--webhook")
        if any(c in "%$\\\"'" or c.isspace() for c in args.webhook):
            raise ServiceError("--webhook: a URL with %, $, a quote or a space: put it in --settings FILE "
                               "(webhook.url)")
        if secret is None and settings is None:
            raise ServiceError("--webhook without --webhook-secret-file (or --settings): every delivery is signed")
    elif secret is not None:
        raise ServiceError("--webhook-secret-file without --webhook: say where to post")
    return Unit(bot=profile.name, user=args.user, heed=_heed_command(),
                python=PurePosixPath(Path(sys.base_prefix).resolve()), profile=profile_ref, state=state,
                grace_s=args.grace, quiet=args.quiet, webhook=args.webhook, secret=secret, settings=settings)


def render(unit: Unit) -> str:
    """The unit file's text."""
    stop_s = math.ceil(unit.grace_s) + STOP_MARGIN_S
    serve = [str(unit.heed), "serve", "--bot", unit.profile, "--state", str(unit.state), "--grace", f"{unit.grace_s:g}"]
    if unit.quiet:
        serve.append("--quiet")
    if unit.webhook:
        serve += ["--webhook", unit.webhook]
    if unit.secret is not None:
        serve += ["--webhook-secret-file", "${CREDENTIALS_DIRECTORY}/" + CREDENTIAL]
    if unit.settings is not None:
        serve += ["--settings", str(unit.settings)]
    profile = PurePosixPath(unit.profile) if unit.profile.startswith("/") else None
    read = [unit.python, unit.heed, unit.settings, profile]
    in_home = [str(p) for p in read if p is not None and _under(p, _HOMES)]
    lines = [
        f"# /etc/systemd/system/{unit.name}: heed serve for {unit.bot}, as `heed service unit` wrote it",
        "[Unit]",
        f"Description=Heed: {unit.bot} (heed serve)",
        "After=network-online.target",
        "Wants=network-online.target",
        "",
        "[Service]",
        "Type=exec",
        f"User={unit.user}",
        f"Group={unit.user}",
        "ExecStart=" + " ".join(serve),
        "Environment=PYTHONUNBUFFERED=1",
        "# SIGTERM to the serving process alone: it stops its workers and finishes the requests in flight",
        f"# within --grace ({unit.grace_s:g} s), then exits 0; what is left after {stop_s} s is killed (SIGKILL loses",
        "# nothing committed: the next start takes the cut requests back)",
        "KillSignal=SIGTERM",
        "KillMode=mixed",
        f"TimeoutStopSec={stop_s}",
        "# restarted after a crash, a kill or a failing disk (exit 1); a mistake in the profile or the state",
        "# (exit 2) waits for the operator, its one line in the journal; a stop asked for (exit 0) stays stopped",
        "Restart=on-failure",
        "RestartSec=10",
        "RestartPreventExitStatus=2",
    ]
    if STATE_ROOT in unit.state.parents:
        lines += [f"# its state: {unit.state}, made by systemd, owned by {unit.user}",
                  f"StateDirectory={unit.state.relative_to(STATE_ROOT)}",
                  "StateDirectoryMode=0750"]
    else:
        lines += [f"# its state: {unit.state}, made first: "
                  f"install -d -o {unit.user} -g {unit.user} -m 0750 {unit.state}"]
    lines.append(f"ReadWritePaths={unit.state}")
    if unit.secret is not None:
        lines += [f"# the webhook's secret, read by systemd and handed over: {unit.secret} may stay root's alone",
                  f"LoadCredential={CREDENTIAL}:{unit.secret}"]
    lines += ["# nothing else written, nothing gained: outbound HTTP and its state are all it needs",
              "ProtectSystem=strict"]
    lines += [f"# read-only, not hidden: it reads {', '.join(in_home)}", "ProtectHome=read-only"] if in_home \
        else ["ProtectHome=yes"]
    lines += [
        "PrivateTmp=yes",
        "PrivateDevices=yes",
        "PrivateMounts=yes",
        "NoNewPrivileges=yes",
        "CapabilityBoundingSet=",
        "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
        "RestrictNamespaces=yes",
        "RestrictRealtime=yes",
        "RestrictSUIDSGID=yes",
        "LockPersonality=yes",
        "MemoryDenyWriteExecute=yes",
        "ProtectKernelTunables=yes",
        "ProtectKernelModules=yes",
        "ProtectKernelLogs=yes",
        "ProtectControlGroups=yes",
        "ProtectClock=yes",
        "ProtectHostname=yes",
        "ProtectProc=invisible",
        "RemoveIPC=yes",
        "SystemCallArchitectures=native",
        "SystemCallFilter=@system-service",
        "SystemCallFilter=~@privileged @resources",
        "SystemCallErrorNumber=EPERM",
        "UMask=0027",
        "",
        "[Install]",
        "WantedBy=multi-user.target",
    ]
    return "\n".join(lines) + "\n"


def cmd_service_unit(args: argparse.Namespace) -> int:
    from heed_core.profile import load_profile

    from heed.botcheck import warn_identity

    unit = checked(args)
    warn_identity(args.bot, load_profile(unit.profile))  # its base bot's identity: said on stderr, not refused
    text = render(unit)
    if args.json:
        print(json.dumps({"name": unit.name, "path": f"/etc/systemd/system/{unit.name}", "unit": text},
                         ensure_ascii=False))
    else:
        sys.stdout.write(text)
    return 0

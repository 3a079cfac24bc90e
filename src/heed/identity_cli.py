"""`heed identity`: make a Web Bot Auth key, show a bot's key directory, check a captured request.

``register(subparsers)`` adds the command group to the `heed` parser. Each command returns its
exit code and reports a user mistake as one line on stderr (exit 2), never a traceback.

``heed identity verify`` reads one captured request as JSON on stdin::

    {"method": "GET",                                  # optional, default GET
     "url": "https://www.example.nl/subsidies",        # or "authority": "www.example.nl[:port]"
     "headers": {"Signature-Agent": "sig1=\\"https://...\\"",
                 "Signature-Input": "sig1=(...);...",
                 "Signature": "sig1=:...:"}}           # or a list of [name, value] pairs

and says ``valid: ...`` (exit 0) or ``invalid (REASON): ...`` (exit 1). Signatures live 60 s by
default, so a request captured earlier is checked ``--at`` the time it was received.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from heed_core.errors import ConfigError

__all__ = ["register"]

EPILOG_VERIFY = """stdin: {"url": "https://host/path" | "authority": "host[:port]", "method": "GET",
 "headers": {"Signature-Agent": ..., "Signature-Input": ..., "Signature": ...}}
exit: 0 valid, 1 invalid, 2 a mistake in the command or its input"""


def register(subparsers: Any) -> None:
    """Add ``identity keygen|show|verify`` to the `heed` parser's subcommands."""
    identity = subparsers.add_parser("identity", help="Web Bot Auth: signing key, key directory, verification")
    sub = identity.add_subparsers(dest="identity_command", required=True)

    keygen = sub.add_parser("keygen", help="write a new Ed25519 private key (PEM, mode 0600; never overwrites)")
    keygen.add_argument("--out", required=True, metavar="KEYFILE", help="where to write the key")
    keygen.add_argument("--json", action="store_true", help="the key id and public JWK as JSON (printed anyway)")
    keygen.set_defaults(func=_guarded(cmd_keygen))

    show = sub.add_parser("show", help="print the bot's key directory (JWKS) as it is served")
    show.add_argument("--bot", required=True, metavar="BOT|PROFILE", help="a built-in bot name or a profile file")
    show.add_argument("--json", action="store_true", help="the JWKS (what it prints anyway)")
    show.set_defaults(func=_guarded(cmd_show))

    verify = sub.add_parser("verify", help="is a captured request (JSON on stdin) validly signed by the bot?",
                            epilog=EPILOG_VERIFY, formatter_class=argparse.RawDescriptionHelpFormatter)
    verify.add_argument("--bot", required=True, metavar="BOT|PROFILE", help="a built-in bot name or a profile file")
    verify.add_argument("--directory", metavar="JWKS_FILE",
                        help="check against this published key directory instead of the bot's key")
    verify.add_argument("--at", metavar="TIME", help="check as of this time (ISO 8601 or epoch seconds; default now)")
    verify.add_argument("--json", action="store_true", help="the verdict as one JSON object")
    verify.set_defaults(func=_guarded(cmd_verify))


def _guarded(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        from heed_core.identity.keys import IdentityError
        from heed_core.profile import ProfileError

        try:
            return command(args)
        except (IdentityError, ProfileError) as exc:
            raise ConfigError(str(exc)) from exc  # heed.cli.main tells it: heed identity ...: what

    run.__doc__ = command.__doc__
    return run


def cmd_keygen(args: argparse.Namespace) -> int:
    """Write a new key; print its key id (what sites will see as ``keyid``)."""
    from heed_core.identity.keys import public_jwk, write_new_key_file

    key = write_new_key_file(args.out)
    jwk = public_jwk(key)
    print(json.dumps({"key_file": str(args.out), "keyid": jwk["kid"], "jwk": jwk}))
    return 0


def _settings(ref: str) -> Any:
    from heed_core.identity.settings import WebBotAuthSettings
    from heed_core.profile import load_profile

    profile = load_profile(ref)
    settings = WebBotAuthSettings.from_profile(profile)
    if not settings.has_key:
        raise ConfigError(f"{profile.name}: identity.web_bot_auth has neither key_file nor key_secret "
                       "(make a key with: heed identity keygen --out KEYFILE)")
    return settings


def _bot_key(settings: Any) -> Any:
    from heed_core.identity.keys import read_key_file

    if settings.key_file:
        return read_key_file(settings.key_file)
    from heed_aws.secrets import SecretUnavailable, load_private_key

    try:
        return load_private_key(settings.key_secret)
    except SecretUnavailable as exc:
        raise ConfigError(f"{exc} (try again later)") from exc


def cmd_show(args: argparse.Namespace) -> int:
    """Print the directory body exactly as served (its Content-Digest is over these bytes)."""
    from heed_core.identity.directory import key_directory

    print(key_directory([_bot_key(_settings(args.bot))]).decode("ascii"))
    return 0


def _when(text: str | None) -> float:
    if text is None:
        from heed_core.ports import SystemClock

        return SystemClock().now()
    try:
        return float(text)
    except ValueError:
        pass
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ConfigError(f"--at: {text!r} is not an ISO 8601 time or epoch seconds") from exc
    return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp()


def _captured(text: str) -> tuple[str, str, list[tuple[str, str]]]:
    if not text.strip():
        raise ConfigError("stdin is empty: give the captured request as JSON "
                       '({"authority": ..., "headers": {...}}; see heed identity verify --help)')
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"stdin is not JSON ({exc.msg} at line {exc.lineno})") from exc
    if not isinstance(data, dict):
        raise ConfigError("stdin must be a JSON object with authority (or url) and headers")
    method = data.get("method", "GET")
    url, authority = data.get("url"), data.get("authority")
    if not isinstance(method, str) or not method.isalpha():
        raise ConfigError(f"method: {method!r} is not an HTTP method")
    if isinstance(url, str) and url.startswith(("https://", "http://")):
        pass
    elif url is None and isinstance(authority, str) and authority and "/" not in authority:
        url = f"https://{authority}/"
    else:
        raise ConfigError('stdin needs "authority" (host[:port]) or "url" (an http(s) URL)')
    headers = data.get("headers")
    pairs = list(headers.items()) if isinstance(headers, dict) else headers
    if not isinstance(pairs, list) or not all(
            isinstance(p, (list, tuple)) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in pairs):
        raise ConfigError('"headers" must be an object of strings or a list of [name, value] pairs')
    return method.upper(), url, [(k, v) for k, v in pairs]


def cmd_verify(args: argparse.Namespace) -> int:
    """valid (0) or invalid (1) and why; the key is the bot's own or that of a published directory."""
    from heed_core.identity.directory import key_directory
    from heed_core.identity.verify import directory_keys, verify_request

    if args.directory:
        from heed_core.identity.settings import WebBotAuthSettings
        from heed_core.profile import load_profile

        expect = WebBotAuthSettings.from_profile(load_profile(args.bot)).signature_agent
        try:
            body = Path(args.directory).read_bytes()
        except OSError as exc:
            raise ConfigError(f"{args.directory}: cannot read ({exc.strerror or type(exc).__name__})") from exc
        keys = directory_keys(body)
    else:
        settings = _settings(args.bot)
        expect = settings.signature_agent
        keys = directory_keys(key_directory([_bot_key(settings)]))
    now = _when(args.at)
    method, url, headers = _captured(sys.stdin.read())
    result = verify_request(method=method, url=url, headers=headers, keys=keys, now=now, expect_agent=expect)
    if args.json:
        print(json.dumps({"valid": result.valid, "reason": None if result.valid else result.reason,
                          "detail": result.detail}))
    elif result.valid:
        print(f"valid: {result.detail}")
    else:
        print(f"invalid ({result.reason}): {result.detail}")
    return 0 if result.valid else 1

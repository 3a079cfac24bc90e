"""Where an operator command acts: a deployed stack (``--stack NAME``: its outputs and BotName
parameter from CloudFormation; region and credentials the usual AWS way) or a local state
directory (``--state DIR``, crawled by ``heed serve --state DIR`` or ``heed local run --state
DIR``, perhaps at this very moment). Both give a store with the same semantics (DynamoStore on
the stack's table, SqliteStore on the directory's database, where every write is committed as
it is made), so a command is one piece of code for both; every way it can go wrong is one line
(``run``)."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heed.awsstack import Aws, CommandError, add_aws_arguments, aws_errors, describe_stack, output
from heed.state_dir import EmbeddedState, StateDirError, open_local

__all__ = ["Target", "add_target_arguments", "open_target", "profile_of", "run"]


def add_target_arguments(parser: argparse.ArgumentParser, *, out: bool = False) -> None:
    where = parser.add_mutually_exclusive_group(required=not out)
    where.add_argument("--stack", metavar="NAME", help="a deployed bot's stack (its StateTableName and "
                                                       "ResultsBucketName outputs)")
    where.add_argument("--state", metavar="DIR", help="a local state directory (heed serve --state DIR; it may be "
                                                      "running)")
    if out:
        where.add_argument("--out", metavar="DIR", help="a heed local run --out folder (its records only)")
    add_aws_arguments(parser)


@dataclass
class Target:
    store: Any  # heed_aws.operator_store.DynamoOperatorStore, or heed_embedded.store.SqliteStore
    texts: Any  # heed_aws.operator_store.S3Texts (None when the stack names no bucket), or SqliteTexts
    bot: str | None
    where: str
    local: EmbeddedState | None = None
    profile_data: dict[str, Any] | None = None  # a state directory keeps the profile it ran with
    writable: bool = False  # opened to write (a command that only reads writes nothing, not even the bot)

    def changed(self) -> None:
        """The command wrote something (both stores commit each write as it is made: nothing to save)."""


def _describe(aws: Aws, stack: str) -> tuple[dict[str, str], dict[str, str]]:
    found = describe_stack(aws, stack)
    outputs = {o["OutputKey"]: o["OutputValue"] for o in found.get("Outputs", [])}
    params = {p["ParameterKey"]: p.get("ParameterValue", "") for p in found.get("Parameters", [])}
    return outputs, params


@contextmanager
def open_target(args: argparse.Namespace, aws: Aws, *, write: bool) -> Iterator[Target]:
    from heed_aws.operator_store import DynamoOperatorStore, S3Texts

    if getattr(args, "state", None) is not None:
        if args.region or args.profile:
            raise CommandError("--region and --profile go with --stack, not --state")
        from heed_embedded.store import SqliteStore, SqliteTexts

        with open_local(Path(args.state), write=write) as st:
            yield Target(SqliteStore(st.db), SqliteTexts(st.db), st.bot, f"state {args.state}", st, st.get("profile"),
                         writable=write)
        return
    outputs, params = _describe(aws, args.stack)
    table = output(outputs, "StateTableName", args.stack)
    bucket = outputs.get("ResultsBucketName")
    texts = S3Texts(aws.client("s3"), bucket) if bucket else None
    yield Target(DynamoOperatorStore(table, aws.client("dynamodb")), texts, params.get("BotName") or None,
                 f"stack {args.stack}")


def profile_of(target: Target, bot: str | None) -> Any:
    """The bot's profile: ``--bot`` if given (a name or a file), else the one the target names."""
    from heed_core.profile import BUILTIN_BOTS, load_profile, load_profile_data

    if bot:
        profile = load_profile(bot)
        if target.bot and target.bot != profile.name:
            where = f"--state: {target.local.path}" if target.local is not None else f"stack {target.where[6:]!r}"
            raise CommandError(f"{where} holds the state of {target.bot}, not {profile.name}")
        if target.local is not None and not target.bot:
            if target.writable:
                target.local.claim_bot(profile.name)  # a new state directory learns its bot
            target.bot = profile.name
        return profile
    if target.profile_data:
        return load_profile_data(target.profile_data)
    if target.bot in BUILTIN_BOTS:
        return load_profile(target.bot)
    if target.bot:  # a bot of its own: its profile is a file here, not in the stack
        raise CommandError(f"{target.where} runs {target.bot}, a bot of its own: give --bot FILE (its profile)")
    raise CommandError(f"which bot? {target.where} does not say: give --bot NAME")


def run(what: str, command: Callable[[], int]) -> int:
    """Every user mistake and every refusal one line on stderr, exit 2 (``aws_errors``), with
    Heed's own kinds of error translated to the botocore error behind them."""
    from heed_core.errors import HeedError
    from heed_core.profile import ProfileError
    from heed_core.sources import SourcesError

    def inner() -> int:
        try:
            return command()
        except CommandError:
            raise
        except (StateDirError, ProfileError, SourcesError) as exc:
            raise CommandError(str(exc)) from exc
        except HeedError as exc:
            from botocore.exceptions import BotoCoreError, ClientError

            cause = exc.__cause__
            if isinstance(cause, (ClientError, BotoCoreError)):
                raise cause from None
            raise CommandError(str(exc)) from exc
    try:
        return aws_errors(what, inner)
    except KeyboardInterrupt:
        print(f"heed {what}: interrupted", file=sys.stderr)
        return 130

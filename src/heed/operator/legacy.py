"""``heed operator --table T block|unblock|blocks|purge``: the first spelling of the block list and
purges, on a deployed table by name (``heed block``, ``blocks``, ``purge`` with ``--stack`` are
the commands to use; this one stays for the scripts that call it)."""
from __future__ import annotations

import argparse
import json
import time
from typing import Any

from heed_core.errors import ConfigError as UsageError

__all__ = ["register"]


def register(sub: Any) -> None:
    op = sub.add_parser("operator", help="a deployed bot's state: block list and purges (COMMON-08)")
    op.add_argument("--table", required=True, help="the stack's StateTableName output")
    op.add_argument("--region", help="AWS region (default: from the environment)")
    op_sub = op.add_subparsers(dest="operator_command", required=True)
    for name, text in (("block", "stop fetching from DOMAIN and its subdomains, robots.txt or not"),
                       ("unblock", "lift a block"), ("purge", "delete everything stored from DOMAIN")):
        cmd = op_sub.add_parser(name, help=text)
        cmd.add_argument("domain")
        if name == "block":
            cmd.add_argument("--reason", default="stop requested by the site owner")
        if name == "purge":
            cmd.add_argument("--bucket", help="the stack's ResultsBucketName output (page texts)")
        cmd.add_argument("--json", action="store_true", help="JSON lines (what it prints anyway)")
        cmd.set_defaults(func=cmd_operator)
    blocks = op_sub.add_parser("blocks", help="list the block list")
    blocks.add_argument("--json", action="store_true", help="JSON lines (what it prints anyway)")
    blocks.set_defaults(func=cmd_operator)


def _operator_store(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    import boto3

    from heed_aws.operator_store import DynamoOperatorStore

    session = boto3.session.Session(region_name=args.region) if args.region else boto3.session.Session()
    return DynamoOperatorStore(args.table, session.client("dynamodb")), session


def _domain(text: str) -> str:
    """COMMON-08: a block or purge names a domain (example.com), never a URL."""
    from heed_core.netguard import parse_target

    name = text.strip().lower().rstrip(".")
    if not name or any(c in name for c in "/:@?#") or any(c.isspace() for c in name) \
            or parse_target(f"http://{name}/") is None:
        raise UsageError(f"{text!r} is not a domain name (e.g. example.com, without http:// or a path)")
    return text


def cmd_operator(args: argparse.Namespace) -> int:
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, NoRegionError

    from heed_core.errors import HeedError

    from heed_aws.store import StoreError

    if getattr(args, "domain", None) is not None:
        _domain(args.domain)
    try:
        return _operator(args)
    except NoRegionError as exc:
        raise UsageError("no AWS region (give --region or set AWS_REGION)") from exc
    except NoCredentialsError as exc:
        raise UsageError("no AWS credentials (configure them as for the AWS CLI)") from exc
    except (StoreError, ClientError) as exc:
        cause = exc if isinstance(exc, ClientError) else exc.__cause__
        if isinstance(cause, ClientError):
            err: dict[str, Any] = cause.response.get("Error", {})
            raise UsageError(f"table {args.table}: {err.get('Code')}: {err.get('Message')}") from exc
        raise UsageError(f"table {args.table}: {exc}") from exc
    except BotoCoreError as exc:
        raise UsageError(f"{exc}") from exc
    except HeedError as exc:  # the store's own kinds of error, from the botocore error behind them
        cause = exc.__cause__
        if isinstance(cause, NoCredentialsError):
            raise UsageError("no AWS credentials (configure them as for the AWS CLI)") from exc
        if isinstance(cause, NoRegionError):
            raise UsageError("no AWS region (give --region or set AWS_REGION)") from exc
        if isinstance(cause, ClientError):
            err = cause.response.get("Error", {})
            raise UsageError(f"table {args.table}: {err.get('Code')}: {err.get('Message')}") from exc
        raise UsageError(f"{exc}") from exc


def _operator(args: argparse.Namespace) -> int:
    from heed.operator import actions as operator

    store, session = _operator_store(args)
    if args.operator_command == "block":
        store.block(args.domain, args.reason, time.time())
        print(json.dumps({"blocked": args.domain.lower().strip("."), "reason": args.reason}))
    elif args.operator_command == "unblock":
        operator.unblock(store, args.domain)
        print(json.dumps({"unblocked": args.domain.lower().strip(".")}))
    elif args.operator_command == "blocks":
        for domain, reason in operator.list_blocks(store):
            print(json.dumps({"domain": domain, "reason": reason}))
    elif args.operator_command == "purge":
        s3 = session.client("s3") if args.bucket else None
        report = operator.purge_domain(store, args.domain, s3=s3, bucket=args.bucket, record=True, now=time.time())
        print(json.dumps(report.__dict__))
    return 0

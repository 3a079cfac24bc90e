"""A deployed bot's stack, as the operator commands (audit, dlq) reach it: a session, its outputs, AWS's "no" in
one line."""
from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from heed_core.errors import ConfigError


class CommandError(ConfigError):
    """A user mistake, or AWS refusing: told in one line, exit 2, no traceback."""

    code = "command"


def add_aws_arguments(parser: Any) -> None:
    """--region and --profile, as the AWS CLI spells them."""
    parser.add_argument("--region", metavar="R", help="AWS region (default: from the environment or the profile)")
    parser.add_argument("--profile", metavar="P", help="AWS named profile (default: from the environment)")


@dataclass
class Aws:
    """boto3 clients from one session; tests hand in a session (moto) or clients (Stubber)."""

    region: str | None = None
    profile: str | None = None
    session: Any = None
    clients: dict[str, Any] = field(default_factory=dict)

    def client(self, service: str) -> Any:
        if service not in self.clients:
            # boto3 is imported here, not with the module: every command's parser imports this
            # one, and `heed serve` (the embedded engine, no AWS on its path) would pay 150 ms.
            import boto3
            from botocore.exceptions import NoRegionError, ProfileNotFound

            if self.session is None:
                try:
                    self.session = boto3.session.Session(profile_name=self.profile, region_name=self.region)
                except ProfileNotFound as exc:
                    raise CommandError(f"no AWS profile named {self.profile!r} (see ~/.aws/config)") from exc
            try:
                self.clients[service] = self.session.client(service)
            except NoRegionError as exc:
                raise CommandError("no AWS region: give --region or set AWS_REGION") from exc
        return self.clients[service]

    def where(self) -> str:
        region = self.region or (self.session.region_name if self.session is not None else None)
        return f" in {region}" if region else ""


def describe_stack(aws: Aws, stack: str) -> dict[str, Any]:
    """The stack as CloudFormation describes it; an unknown stack is a CommandError naming it."""
    from botocore.exceptions import ClientError

    try:
        stacks = aws.client("cloudformation").describe_stacks(StackName=stack)["Stacks"]
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ValidationError":
            raise CommandError(f"no stack named {stack!r}{aws.where()} "
                               "(deployed with sam deploy --config-env <bot>?)") from exc
        raise
    if not stacks:
        raise CommandError(f"no stack named {stack!r}{aws.where()}")
    return dict(stacks[0])


def stack_outputs(aws: Aws, stack: str) -> dict[str, str]:
    """The stack's outputs by key; an unknown stack is a CommandError naming it."""
    return {o["OutputKey"]: o["OutputValue"] for o in describe_stack(aws, stack).get("Outputs", [])}


def output(outputs: dict[str, str], key: str, stack: str) -> str:
    if key not in outputs:
        raise CommandError(f"stack {stack!r} has no output {key} (deployed from an older template? redeploy it)")
    return outputs[key]


def aws_errors(what: str, run: Callable[[], int]) -> int:
    """Run a command; every way AWS or the user can say no becomes one line on stderr and exit 2."""
    from botocore.exceptions import (
        BotoCoreError,
        ClientError,
        EndpointConnectionError,
        NoCredentialsError,
        NoRegionError,
    )

    try:
        return run()
    except CommandError as exc:
        message = str(exc)
    except NoRegionError:
        message = "no AWS region: give --region or set AWS_REGION"
    except NoCredentialsError:
        message = "no AWS credentials (configure them as for the AWS CLI, or give --profile)"
    except EndpointConnectionError as exc:
        message = f"cannot reach AWS ({exc})"
    except ClientError as exc:
        err: dict[str, Any] = exc.response.get("Error", {})
        message = f"AWS refused: {err.get('Code')}: {err.get('Message')}"
    except BotoCoreError as exc:
        message = f"AWS: {exc}"
    print(f"heed {what}: {message}", file=sys.stderr)
    return 2

"""A deployed stack as the operator commands see it (``--stack NAME``), on the moto resources of a
LocalRun: CloudFormation's answer for the stack's outputs and BotName, the run's own clients."""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import boto3
from botocore.exceptions import ClientError
from moto import mock_aws

from heed.awsstack import Aws
from heed.cli import build_parser, main
from heed.local.resources import StackResources, create_stack_resources

ROOT = Path(__file__).resolve().parents[2]
REGION = "eu-west-1"

STACK = "heed-test"

# Every way botocore finds a region or credentials without being told.
_AWS_ENVIRONMENT = ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ACCESS_KEY_ID",
                    "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                    "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN")


def without_aws(monkeypatch: Any, tmp_path: Path) -> Any:
    """No region, no credentials, no config files, no instance metadata: a laptop without AWS set
    up (for the ``no_aws`` fixtures). Returns ``monkeypatch``, to set some of it back."""
    for name in _AWS_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return monkeypatch


def run_command(capsys: Any, *argv: str, aws: Any = None) -> tuple[int, str, str]:
    """One ``heed`` command in-process: on a stack through the given clients (``aws``), else as a
    user runs it. The exit code, stdout and stderr."""
    if aws is None:
        code = main(list(argv))
    else:
        args = build_parser().parse_args(list(argv))
        code = args.func(args, aws=aws)
    out, err = capsys.readouterr()
    return code, out, err


@contextmanager
def moto_stack(prefix: str, bot: str = "aubebot") -> Iterator[tuple[boto3.session.Session, StackResources]]:
    """The stack's resources built from template.yaml on an embedded moto, with test credentials
    (none of the caller's AWS profile is used): the session and what was created."""
    saved = {v: os.environ.pop(v) for v in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE") if v in os.environ}
    try:
        with mock_aws():
            session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing",
                                            region_name=REGION)
            yield session, create_stack_resources(template_path=ROOT / "template.yaml", bot=bot, prefix=prefix,
                                                  session=session, region=REGION)
    finally:
        os.environ.update(saved)


class FakeCloudFormation:
    """describe_stacks for one stack (moto's CloudFormation needs packages the project lacks)."""

    def __init__(self, outputs: dict[str, str], parameters: dict[str, str]) -> None:
        self.outputs = outputs
        self.parameters = parameters

    def describe_stacks(self, StackName: str) -> dict[str, Any]:  # noqa: N803 - boto3's spelling
        if StackName != STACK:
            error = {"Code": "ValidationError", "Message": f"Stack with id {StackName} does not exist"}
            raise ClientError({"Error": error}, "DescribeStacks")
        return {"Stacks": [{"StackName": STACK,
                            "Outputs": [{"OutputKey": k, "OutputValue": v} for k, v in self.outputs.items()],
                            "Parameters": [{"ParameterKey": k, "ParameterValue": v}
                                           for k, v in self.parameters.items()]}]}


def stack_aws(run: Any) -> Aws:
    """An Aws for ``--stack heed-test`` on a set-up LocalRun: its table and bucket, its locked clients
    (the fetcher may be running in another thread)."""
    from heed_aws import runtime

    cfn = FakeCloudFormation({"StateTableName": run.res.table_name, "ResultsBucketName": run.res.bucket,
                              "WorkQueueUrl": run.res.queue_url}, {"BotName": run.profile.name})
    return Aws(region="eu-west-1", clients={"cloudformation": cfn, "dynamodb": runtime._client("dynamodb"),
                                            "s3": runtime._client("s3")})

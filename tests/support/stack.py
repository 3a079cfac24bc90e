"""A deployed stack as the operator commands see it (``--stack NAME``), on the moto resources of a
LocalRun: CloudFormation's answer for the stack's outputs and BotName, the run's own clients."""
from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from heed.awsstack import Aws

STACK = "heed-test"


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

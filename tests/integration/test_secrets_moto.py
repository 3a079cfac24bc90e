"""Issue 13 on AWS: the Web Bot Auth key comes from Secrets Manager or an SSM SecureString (moto)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from heed_core.identity.keys import IdentityError, generate_private_pem, thumbprint

from heed_aws.secrets import SecretUnavailable, load_private_key, parse_key_secret

REGION = "eu-west-1"


@pytest.fixture()
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                        ("AWS_DEFAULT_REGION", REGION)):
        monkeypatch.setenv(name, value)
    with mock_aws():
        yield {"secretsmanager": boto3.client("secretsmanager", region_name=REGION),
               "ssm": boto3.client("ssm", region_name=REGION)}


def test_key_from_a_secrets_manager_secret(aws: dict[str, Any]) -> None:
    pem = generate_private_pem()
    arn = aws["secretsmanager"].create_secret(Name="heed/aube/web-bot-auth", SecretString=pem.decode())["ARN"]
    by_name = load_private_key("secretsmanager:heed/aube/web-bot-auth", secretsmanager=aws["secretsmanager"])
    by_arn = load_private_key(arn, secretsmanager=aws["secretsmanager"])
    assert thumbprint(by_name) == thumbprint(by_arn)


def test_key_from_an_ssm_securestring_and_never_from_a_plain_string(aws: dict[str, Any]) -> None:
    pem = generate_private_pem().decode()
    aws["ssm"].put_parameter(Name="/heed/aube/key", Value=pem, Type="SecureString")
    aws["ssm"].put_parameter(Name="/heed/aube/clear", Value=pem, Type="String")
    assert load_private_key("ssm:/heed/aube/key", ssm=aws["ssm"])
    with pytest.raises(IdentityError, match="the private key must be a SecureString"):
        load_private_key("ssm:/heed/aube/clear", ssm=aws["ssm"])


def test_missing_or_wrong_content_is_one_clear_line(aws: dict[str, Any]) -> None:
    with pytest.raises(IdentityError, match=r"^key_secret ssm:/nope: ParameterNotFound$"):
        load_private_key("ssm:/nope", ssm=aws["ssm"])
    with pytest.raises(IdentityError, match="ResourceNotFoundException"):
        load_private_key("secretsmanager:nope", secretsmanager=aws["secretsmanager"])
    aws["secretsmanager"].create_secret(Name="junk", SecretString="hunter2")
    with pytest.raises(IdentityError, match="is not a PEM private key") as caught:
        load_private_key("secretsmanager:junk", secretsmanager=aws["secretsmanager"])
    assert "hunter2" not in str(caught.value)


def test_throttling_is_transient_not_a_config_error() -> None:
    class Throttled:
        def get_parameter(self, **kw: Any) -> Any:
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, "GetParameter")

    with pytest.raises(SecretUnavailable, match="ThrottlingException"):
        load_private_key("ssm:/heed/key", ssm=Throttled())


@pytest.mark.parametrize("ref", ["heed/key", "ssm:heed", "secretsmanager:", "arn:aws:s3:::bucket/key"])
def test_a_reference_of_no_known_form_is_refused(ref: str) -> None:
    with pytest.raises(IdentityError):
        parse_key_secret(ref)

"""Loads the bot's Web Bot Auth private key on AWS: a Secrets Manager secret or an SSM SecureString,
named by the profile's ``identity.web_bot_auth.key_secret``. The key is never in a profile, a
template or an environment variable; only its name is."""
from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, NoRegionError
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from heed_core.errors import TransientError
from heed_core.identity.keys import IdentityError, private_key_from_pem

__all__ = ["SecretUnavailable", "load_private_key", "parse_key_secret"]

# Error codes that will not go away by retrying: a configuration mistake, reported in one line.
_FINAL = frozenset({
    "ResourceNotFoundException", "AccessDeniedException", "DecryptionFailure", "InvalidRequestException",
    "InvalidParameterException", "ParameterNotFound", "ParameterVersionNotFound", "InvalidKeyId",
    "UnrecognizedClientException", "ValidationException",
})


class SecretUnavailable(TransientError, RuntimeError):
    """Throttling, a service error or the network: try again later; says nothing of the key."""

    code = "secret_unavailable"


def parse_key_secret(ref: str) -> tuple[str, str]:
    """``("secretsmanager" | "ssm", id)`` from ``secretsmanager:NAME``, ``ssm:/NAME`` or an ARN of
    either service (an ARN is passed on whole, so another account's secret works too)."""
    if ref.startswith("secretsmanager:") and len(ref) > len("secretsmanager:"):
        return "secretsmanager", ref.removeprefix("secretsmanager:")
    if ref.startswith("ssm:/") and len(ref) > len("ssm:/"):
        return "ssm", ref.removeprefix("ssm:")
    parts = ref.split(":", 5)
    if len(parts) == 6 and parts[0] == "arn" and parts[2] in ("secretsmanager", "ssm"):
        return parts[2], ref
    raise IdentityError(f"key_secret {ref!r}: must be secretsmanager:NAME, ssm:/NAME, or an ARN of either")


def _client(service: str, client: Any) -> Any:
    if client is not None:
        return client
    import boto3  # deferred: only bots that sign need it

    return boto3.client(service)


def load_private_key(ref: str, *, secretsmanager: Any = None, ssm: Any = None) -> Ed25519PrivateKey:
    """The Ed25519 key ``ref`` names. ``IdentityError`` for what a person must fix (missing, no
    access, not a SecureString, not an Ed25519 PEM); ``SecretUnavailable`` for what may pass."""
    service, ident = parse_key_secret(ref)
    try:
        if service == "secretsmanager":
            answer = _client("secretsmanager", secretsmanager).get_secret_value(SecretId=ident)
            pem = answer.get("SecretBinary") or str(answer.get("SecretString") or "").encode("utf-8")
        else:
            parameter = _client("ssm", ssm).get_parameter(Name=ident, WithDecryption=True)["Parameter"]
            if parameter.get("Type") != "SecureString":
                # A String parameter is stored and shown in clear: not a place for a private key.
                raise IdentityError(f"key_secret {ref}: is an SSM {parameter.get('Type')} parameter; the private "
                                    "key must be a SecureString")
            pem = str(parameter.get("Value") or "").encode("utf-8")
    except ClientError as exc:
        code = str(exc.response.get("Error", {}).get("Code", ""))
        if code in _FINAL:
            raise IdentityError(f"key_secret {ref}: {code}") from exc
        raise SecretUnavailable(f"key_secret {ref}: {code or 'client error'}") from exc
    except (NoCredentialsError, NoRegionError) as exc:
        raise IdentityError(f"key_secret {ref}: no AWS credentials or region ({type(exc).__name__})") from exc
    except BotoCoreError as exc:
        raise SecretUnavailable(f"key_secret {ref}: {type(exc).__name__}") from exc
    return private_key_from_pem(pem, where=f"key_secret {ref}")

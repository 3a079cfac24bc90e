"""Custom resource: the egress IP's reverse DNS name is set on create/update and reset on delete (WANNADO-02)."""
from __future__ import annotations

import json
import logging
import re
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError

logger = logging.getLogger(__name__)

Sender = Callable[[str, bytes], None]

_ALLOCATION_ID = re.compile(r"^eipalloc-[0-9a-f]{8,32}$")
_DOMAIN_NAME = re.compile(r"^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")
# The EIP is gone already (stack delete after a manual release): nothing left to reset.
_GONE_CODES = frozenset({"InvalidAllocationID.NotFound", "InvalidAddress.NotFound"})
_REPLY_TIMEOUT_S = 15.0

_ec2_client: Any = None


class BadRequest(ValueError):
    """The custom resource event cannot be acted on (missing or malformed property)."""


@dataclass(frozen=True)
class Outcome:
    status: str  # "SUCCESS" or "FAILED"
    physical_id: str
    reason: str = ""
    data: Mapping[str, str] | None = None


def _ec2() -> Any:
    global _ec2_client
    if _ec2_client is None:  # once per warm container
        _ec2_client = boto3.client("ec2")
    return _ec2_client


def build_reply_request(url: str, body: bytes) -> urllib.request.Request:
    """The PUT that CloudFormation's pre-signed S3 response URL expects."""
    # The URL is signed without a content type: urllib must not add its form default.
    return urllib.request.Request(
        url, data=body, method="PUT", headers={"Content-Type": "", "Content-Length": str(len(body))}
    )


def send_reply(url: str, body: bytes) -> None:
    with urllib.request.urlopen(build_reply_request(url, body), timeout=_REPLY_TIMEOUT_S) as resp:
        resp.read()


def _physical_id(allocation_id: str) -> str:
    # The id names the address: a replaced EIP yields a new id, so CloudFormation sends a Delete
    # for the old one and its PTR record is reset.
    return f"reverse-dns:{allocation_id}"


def _allocation_id(props: Mapping[str, Any]) -> str:
    value = props.get("AllocationId")
    if not isinstance(value, str) or not _ALLOCATION_ID.match(value):
        raise BadRequest(f"AllocationId must look like eipalloc-..., got {value!r}")
    return value


def _domain_name(props: Mapping[str, Any]) -> str:
    value = props.get("DomainName")
    if not isinstance(value, str) or not _DOMAIN_NAME.match(value.rstrip(".")):
        raise BadRequest(f"DomainName must be a lower-case DNS name, got {value!r}")
    return value.rstrip(".")


def apply(event: Mapping[str, Any], ec2: Any) -> Outcome:
    """Do what the event asks; every failure becomes a FAILED outcome, never an exception."""
    request_type = event.get("RequestType")
    props = event.get("ResourceProperties") or {}
    fallback_id = str(event.get("PhysicalResourceId") or "reverse-dns:unknown")
    try:
        if not isinstance(props, Mapping):
            raise BadRequest("ResourceProperties must be a mapping")
        if request_type in ("Create", "Update"):
            allocation_id = _allocation_id(props)
            fallback_id = _physical_id(allocation_id)
            domain = _domain_name(props)
            ec2.modify_address_attribute(AllocationId=allocation_id, DomainName=domain)
            return Outcome("SUCCESS", fallback_id, data={"DomainName": domain})
        if request_type == "Delete":
            try:
                allocation_id = _allocation_id(props)
            except BadRequest:
                # A Create that failed on its input left nothing behind; failing here would
                # only wedge the stack in DELETE_FAILED.
                return Outcome("SUCCESS", fallback_id, reason="nothing to reset")
            try:
                ec2.reset_address_attribute(AllocationId=allocation_id, Attribute="domain-name")
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") not in _GONE_CODES:
                    raise
            return Outcome("SUCCESS", fallback_id)
        raise BadRequest(f"unknown RequestType {request_type!r}")
    except BadRequest as exc:
        return Outcome("FAILED", fallback_id, reason=str(exc))
    except ClientError as exc:
        error = exc.response.get("Error", {})
        return Outcome("FAILED", fallback_id, reason=f"EC2 {error.get('Code', '?')}: {error.get('Message', '')}")
    except BotoCoreError as exc:
        return Outcome("FAILED", fallback_id, reason=f"EC2 unreachable: {type(exc).__name__}")


def reply_body(event: Mapping[str, Any], outcome: Outcome, log_stream: str) -> bytes:
    reason = outcome.reason or "see CloudWatch Logs"
    if log_stream:
        reason = f"{reason} (log stream {log_stream})"
    body: dict[str, Any] = {
        "Status": outcome.status,
        "Reason": reason[:3000],
        "PhysicalResourceId": outcome.physical_id,
        "StackId": event.get("StackId", ""),
        "RequestId": event.get("RequestId", ""),
        "LogicalResourceId": event.get("LogicalResourceId", ""),
        "NoEcho": False,
    }
    if outcome.data:
        body["Data"] = dict(outcome.data)
    return json.dumps(body).encode("utf-8")


def handler(event: Mapping[str, Any], context: Any, *, ec2: Any = None, send: Sender | None = None) -> dict[str, str]:
    """Lambda entry point. Always replies to the ResponseURL, so a stack never waits for a timeout."""
    try:
        client = ec2 if ec2 is not None else _ec2()
    except BotoCoreError as exc:  # no region or credentials: still reply, never leave the stack waiting
        client = None
        outcome = Outcome("FAILED", str(event.get("PhysicalResourceId") or "reverse-dns:unknown"),
                          reason=f"no EC2 client: {type(exc).__name__}")
    if client is not None:
        outcome = apply(event, client)
    logger.info("reverse dns %s: %s %s", event.get("RequestType"), outcome.status, outcome.reason)
    url = event.get("ResponseURL")
    if isinstance(url, str) and url:
        # A failed reply raises: Lambda retries the asynchronous invocation, and every step is idempotent.
        (send or send_reply)(url, reply_body(event, outcome, getattr(context, "log_stream_name", "") or ""))
    else:
        logger.error("no ResponseURL in the event: CloudFormation cannot be told the outcome")
    return {"Status": outcome.status, "PhysicalResourceId": outcome.physical_id}

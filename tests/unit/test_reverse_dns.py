"""The reverse-DNS custom resource (WANNADO-02): EC2 calls per request type, and always a reply to CloudFormation."""
from __future__ import annotations

import importlib.util
import json
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

APP = Path(__file__).resolve().parents[2] / "functions" / "reverse_dns" / "app.py"
ALLOC = "eipalloc-0123456789abcdef0"
URL = "https://cfn-response.example/stack/ReverseDns?X-Amz-Signature=abc"
CONTEXT = SimpleNamespace(log_stream_name="2026/11/30/[$LATEST]abc")


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("heed_reverse_dns_app", APP)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


app = _load()


class Replies:
    """An injected sender: records what would be PUT to the ResponseURL."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, url: str, body: bytes) -> None:
        self.sent.append((url, json.loads(body)))

    @property
    def only(self) -> dict[str, Any]:
        assert len(self.sent) == 1 and self.sent[0][0] == URL
        return self.sent[0][1]


@pytest.fixture()
def ec2() -> Iterator[tuple[Any, Stubber]]:
    client = boto3.client("ec2", region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(client) as stub:
        yield client, stub
        stub.assert_no_pending_responses()


def _event(request_type: str, **props: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "RequestType": request_type, "ResponseURL": URL, "StackId": "arn:aws:cloudformation:eu-west-1:1:stack/s/x",
        "RequestId": "req-1", "LogicalResourceId": "ReverseDns", "ResourceType": "Custom::ReverseDns",
        "ResourceProperties": {"ServiceToken": "arn:aws:lambda:eu-west-1:1:function:f", **props},
    }
    if request_type != "Create":
        event["PhysicalResourceId"] = f"reverse-dns:{ALLOC}"
    return event


def test_wannado_02_create_sets_the_ptr_name_on_the_egress_ip(ec2: tuple[Any, Stubber]) -> None:
    # GIVEN EC2 expects exactly this allocation and name
    client, stub = ec2
    stub.add_response("modify_address_attribute", {}, {"AllocationId": ALLOC, "DomainName": "crawler.wannado.nl"})
    replies = Replies()
    # WHEN CloudFormation creates the resource
    result = app.handler(_event("Create", AllocationId=ALLOC, DomainName="crawler.wannado.nl"), CONTEXT,
                         ec2=client, send=replies)
    # THEN SUCCESS is reported with an id naming the address, and the request is echoed back
    reply = replies.only
    assert reply["Status"] == "SUCCESS" == result["Status"]
    assert reply["PhysicalResourceId"] == f"reverse-dns:{ALLOC}"
    assert (reply["StackId"], reply["RequestId"], reply["LogicalResourceId"]) == \
        ("arn:aws:cloudformation:eu-west-1:1:stack/s/x", "req-1", "ReverseDns")
    assert reply["Data"] == {"DomainName": "crawler.wannado.nl"}


def test_update_sets_the_new_name_and_keeps_the_id(ec2: tuple[Any, Stubber]) -> None:
    client, stub = ec2
    stub.add_response("modify_address_attribute", {}, {"AllocationId": ALLOC, "DomainName": "bot.wannado.nl"})
    replies = Replies()
    app.handler(_event("Update", AllocationId=ALLOC, DomainName="bot.wannado.nl."), CONTEXT, ec2=client, send=replies)
    assert replies.only["Status"] == "SUCCESS"
    assert replies.only["PhysicalResourceId"] == f"reverse-dns:{ALLOC}"


def test_delete_resets_the_domain_name_attribute(ec2: tuple[Any, Stubber]) -> None:
    client, stub = ec2
    stub.add_response("reset_address_attribute", {}, {"AllocationId": ALLOC, "Attribute": "domain-name"})
    replies = Replies()
    app.handler(_event("Delete", AllocationId=ALLOC, DomainName="crawler.wannado.nl"), CONTEXT,
                ec2=client, send=replies)
    assert replies.only["Status"] == "SUCCESS"
    assert replies.only["PhysicalResourceId"] == f"reverse-dns:{ALLOC}"


def test_an_ec2_error_is_reported_failed_not_left_hanging(ec2: tuple[Any, Stubber]) -> None:
    # GIVEN EC2 refuses (no forward record for the name yet)
    client, stub = ec2
    stub.add_client_error("modify_address_attribute", service_error_code="InvalidParameterValue",
                          service_message="forward record missing", http_status_code=400)
    replies = Replies()
    # WHEN the handler runs THEN it returns normally and FAILED reaches the ResponseURL
    result = app.handler(_event("Create", AllocationId=ALLOC, DomainName="crawler.wannado.nl"), CONTEXT,
                         ec2=client, send=replies)
    assert replies.only["Status"] == "FAILED" == result["Status"]
    assert "InvalidParameterValue" in replies.only["Reason"]
    assert CONTEXT.log_stream_name in replies.only["Reason"]


def test_delete_of_a_released_address_succeeds(ec2: tuple[Any, Stubber]) -> None:
    client, stub = ec2
    stub.add_client_error("reset_address_attribute", service_error_code="InvalidAllocationID.NotFound",
                          http_status_code=400)
    replies = Replies()
    app.handler(_event("Delete", AllocationId=ALLOC), CONTEXT, ec2=client, send=replies)
    assert replies.only["Status"] == "SUCCESS"


def test_delete_refused_by_ec2_is_failed(ec2: tuple[Any, Stubber]) -> None:
    client, stub = ec2
    stub.add_client_error("reset_address_attribute", service_error_code="UnauthorizedOperation",
                          http_status_code=403)
    replies = Replies()
    app.handler(_event("Delete", AllocationId=ALLOC), CONTEXT, ec2=client, send=replies)
    assert replies.only["Status"] == "FAILED"


class NoCalls:
    """An EC2 stand-in without methods: any call is an AttributeError the handler does not catch."""


@pytest.mark.parametrize("props", [{}, {"AllocationId": "not-an-id", "DomainName": "a.example"},
                                   {"AllocationId": ALLOC}, {"AllocationId": ALLOC, "DomainName": "Not A Name"}])
def test_bad_properties_fail_without_calling_ec2(props: dict[str, Any]) -> None:
    replies = Replies()
    result = app.handler(_event("Create", **props), CONTEXT, ec2=NoCalls(), send=replies)
    assert result["Status"] == "FAILED" == replies.only["Status"]


def test_delete_after_a_failed_create_does_not_wedge_the_stack() -> None:
    # A Create that failed on its input sends a Delete without a usable AllocationId.
    replies = Replies()
    app.handler(_event("Delete", AllocationId="bogus"), CONTEXT, ec2=NoCalls(), send=replies)
    assert replies.only["Status"] == "SUCCESS"


def test_unknown_request_type_is_failed() -> None:
    replies = Replies()
    app.handler(_event("Rename", AllocationId=ALLOC, DomainName="a.example"), CONTEXT, ec2=NoCalls(), send=replies)
    assert replies.only["Status"] == "FAILED"


def test_a_reply_that_cannot_be_sent_raises_so_lambda_retries(ec2: tuple[Any, Stubber]) -> None:
    client, stub = ec2
    stub.add_response("modify_address_attribute", {}, {"AllocationId": ALLOC, "DomainName": "a.example"})

    def broken(url: str, body: bytes) -> None:
        raise OSError("connection refused")

    with pytest.raises(OSError):
        app.handler(_event("Create", AllocationId=ALLOC, DomainName="a.example"), CONTEXT, ec2=client, send=broken)


def test_reply_is_a_put_without_content_type() -> None:
    # The pre-signed S3 URL is signed for an empty content type: urllib must not add its form default.
    request = app.build_reply_request(URL, b'{"Status": "SUCCESS"}')
    opener = urllib.request.build_opener()
    https = next(h for h in opener.handlers if isinstance(h, urllib.request.HTTPSHandler))
    https.do_request_(request)  # what urlopen does to a request before it sends it
    assert request.get_method() == "PUT"
    assert request.get_header("Content-type") == ""
    assert request.get_header("Content-length") == "21"
    assert request.data == b'{"Status": "SUCCESS"}'

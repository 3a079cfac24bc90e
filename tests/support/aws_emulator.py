"""A local emulator of the AWS APIs `heed deploy` calls: moto's server, in a process of its own on
127.0.0.1, behind a small WSGI middleware that does what CloudFormation does and moto does not.

SAM CLI and boto3 reach it through ``AWS_ENDPOINT_URL`` and dummy credentials (``Emulator.env``).
The middleware runs in the same process as moto's backends, so it reads what moto holds (a
template SAM uploaded to S3, a stack's template) without a call over the wire. What it adds:

- the SAM transform: a template that declares ``Transform: AWS::Serverless-2016-10-31`` is
  translated with ``aws-sam-translator`` on CreateChangeSet, CreateStack and UpdateStack, as
  CloudFormation does (moto has no transform), with the parameters of the call;
- the accommodations of tests/support/moto_gaps.py, each a place where moto's CloudFormation
  differs from AWS's (named there, each with a test that fails when a moto upgrade changes it);
- Lambda's GetAccountSettings (moto has none), from moto's own concurrency knob
  ``MOTO_LAMBDA_CONCURRENCY_QUOTA`` (the one its PutFunctionConcurrency enforces) and the
  functions' reserved concurrency;
- ``GET /heed-emulator/report?stack=NAME``: for a stack, each resource of its translated template
  whose condition holds, and those the emulator could not create, with why (JSON).

Run as a program (``python -m tests.support.aws_emulator PORT`` in the checkout) it serves until
killed; ``running_emulator`` starts one on a free port and stops it (the fixtures in the tests)."""
from __future__ import annotations

import io
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlencode, urlsplit

from tests.support.moto_gaps import ACCOUNT  # moto's default account: dummy credentials map to it

ROOT = Path(__file__).resolve().parents[2]
SAM_TRANSFORM = "AWS::Serverless-2016-10-31"
_REGION_IN_SCOPE = re.compile(r"Credential=[^/]+/\d{8}/([a-z0-9-]+)/")
_TEMPLATE_ACTIONS = ("CreateChangeSet", "CreateStack", "UpdateStack")

__all__ = ["ACCOUNT", "Emulator", "running_emulator"]

StartResponse = Callable[..., Any]


# --- the emulator as the tests see it ----------------------------------------------------------

@dataclass(frozen=True)
class Emulator:
    """A running emulator: its URL, and the environment that points SAM CLI and boto3 at it."""

    url: str
    process: subprocess.Popen[bytes]

    def env(self, region: str = "eu-west-1") -> dict[str, str]:
        """AWS_ENDPOINT_URL and dummy credentials: every SDK call goes to the emulator."""
        return {"AWS_ENDPOINT_URL": self.url, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": region, "AWS_REGION": region,
                "SAM_CLI_TELEMETRY": "0", "AWS_EC2_METADATA_DISABLED": "true"}

    def session(self, region: str = "eu-west-1") -> Any:
        """A boto3 session whose clients talk to the emulator."""
        import boto3

        session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing",
                                        aws_session_token="testing", region_name=region)
        return _EndpointSession(session, self.url)

    def like_a_new_account(self, region: str = "eu-west-1") -> None:
        """What a new AWS account has that moto's does not: the default VPC's internet gateway (moto
        makes the default VPC and its subnets, no gateway; AWS attaches one). Counted by the quotas.
        (The NAT instance's image, NatImageId, is AWS's public SSM parameter
        /aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-arm64: moto ships it for
        every region, as AWS has it in every account, so nothing is made for it here.)"""
        ec2 = self.session(region).client("ec2")
        default = ec2.describe_vpcs(Filters=[{"Name": "is-default", "Values": ["true"]}])["Vpcs"][0]["VpcId"]
        attached = ec2.describe_internet_gateways(Filters=[{"Name": "attachment.vpc-id", "Values": [default]}])
        if not attached["InternetGateways"]:
            igw = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
            ec2.attach_internet_gateway(InternetGatewayId=igw, VpcId=default)

    def report(self, stack: str) -> dict[str, Any]:
        """What the emulator knows of ``stack``: ``expected`` (its translated template's resources
        whose condition holds) and ``not_created`` ({logical id: why})."""
        import urllib.request

        with urllib.request.urlopen(f"{self.url}/heed-emulator/report?stack={stack}", timeout=30) as answer:
            return dict(json.loads(answer.read()))


@dataclass(frozen=True)
class _EndpointSession:
    """A boto3 session whose clients all take the emulator's URL as their endpoint."""

    session: Any
    url: str

    def client(self, service: str, **kwargs: Any) -> Any:
        return self.session.client(service, endpoint_url=self.url, **kwargs)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running_emulator(log: Path, env: Mapping[str, str] | None = None) -> Iterator[Emulator]:
    """An emulator in a subprocess on a free port of 127.0.0.1 (its output in ``log``), stopped
    on the way out; ``env`` adds to its environment (MOTO_LAMBDA_CONCURRENCY_QUOTA)."""
    port = _free_port()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    environment.update(env or {})
    with log.open("wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "tests.support.aws_emulator", str(port)], cwd=ROOT,
                                   env=environment, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the AWS emulator exited ({process.returncode}): {log.read_text()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError as exc:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the AWS emulator did not listen in 60 s: {log.read_text()[-2000:]}") from exc
                time.sleep(0.1)
        yield Emulator(url, process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# --- inside the emulator's process ---------------------------------------------------------------

class _Stacks:
    """What the middleware learnt of each stack: its translated template, what it left out."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.templates: dict[str, tuple[str, dict[str, Any]]] = {}  # stack -> (region, translated template)
        self.not_created: dict[str, dict[str, str]] = {}



class Middleware:
    """moto's WSGI app with what CloudFormation does and moto does not (see the module's docstring)."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app
        self.stacks = _Stacks()

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path, method = environ.get("PATH_INFO", ""), environ.get("REQUEST_METHOD", "")
        if path == "/heed-emulator/report":
            stack = parse_qs(environ.get("QUERY_STRING", "")).get("stack", [""])[0]
            return self._json(start_response, self._report(stack))
        if method == "GET" and re.fullmatch(r"/2016-08-19/account-settings/?", path):
            from tests.support.moto_gaps import lambda_account_settings

            return self._json(start_response, lambda_account_settings(_region(environ)))
        if method != "POST" or "x-www-form-urlencoded" not in environ.get("CONTENT_TYPE", ""):
            return self.app(environ, start_response)
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        form = dict(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
        action = form.get("Action", "")
        if action in _TEMPLATE_ACTIONS:
            form = self._transformed(form, _region(environ))
            body = urlencode(form).encode("utf-8")
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        if action == "CreateChangeSet":
            from tests.support.moto_gaps import after_create_change_set

            answer = list(self.app(environ, start_response))
            after_create_change_set(form, _region(environ))
            return answer
        if action not in ("ExecuteChangeSet", "CreateStack", "UpdateStack"):
            return self.app(environ, start_response)
        from tests.support.moto_gaps import after_execute

        answer = list(self.app(environ, start_response))
        after_execute(form, _region(environ))
        return answer

    def _transformed(self, form: dict[str, str], region: str) -> dict[str, str]:
        from tests.support import moto_gaps

        text = form.get("TemplateBody") or _s3_text(form.get("TemplateURL", ""))
        template = _parse(text)
        stack = form.get("StackName", "")
        if template.get("Transform") == SAM_TRANSFORM:
            template = _translate(template, _parameters(form), region)
        accommodated, left_out = moto_gaps.accommodate(template, stack)
        with self.stacks.lock:
            self.stacks.templates[stack] = (region, template)
            self.stacks.not_created[stack] = dict(left_out)
        form = {k: v for k, v in form.items() if k != "TemplateURL"}
        form["TemplateBody"] = json.dumps(accommodated, default=str)
        return form

    def _report(self, stack: str) -> dict[str, Any]:
        from tests.support.moto_gaps import condition_holds

        if stack not in self.stacks.templates:
            return {"stack": stack, "known": False}
        region, template = self.stacks.templates[stack]  # as translated, before any accommodation
        with self.stacks.lock:
            left_out = dict(self.stacks.not_created.get(stack, {}))

        def holds(part: str, lid: str) -> bool:
            return condition_holds(region, stack, template.get(part, {}).get(lid, {}).get("Condition"))

        expected = sorted(lid for lid in template.get("Resources", {}) if holds("Resources", lid))
        def kept(lid: str) -> bool:  # "Outputs.X" is an output, anything else a resource
            part, _, name = lid.rpartition(".")
            return holds(part or "Resources", name)

        not_created = {lid: why for lid, why in left_out.items() if kept(lid)}
        return {"stack": stack, "known": True, "expected": expected, "not_created": not_created}

    @staticmethod
    def _json(start_response: StartResponse, doc: Mapping[str, Any]) -> list[bytes]:
        data = json.dumps(doc).encode("utf-8")
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
        return [data]


def _region(environ: Mapping[str, Any]) -> str:
    found = _REGION_IN_SCOPE.search(environ.get("HTTP_AUTHORIZATION", ""))
    return found.group(1) if found else "us-east-1"


def _parameters(form: Mapping[str, str]) -> dict[str, str]:
    """Parameters.member.N.ParameterKey/ParameterValue of a CloudFormation call, as a dict."""
    out, n = {}, 1
    while f"Parameters.member.{n}.ParameterKey" in form:
        out[form[f"Parameters.member.{n}.ParameterKey"]] = form.get(f"Parameters.member.{n}.ParameterValue", "")
        n += 1
    return out


def _s3_text(url: str) -> str:
    """The object a TemplateURL names, read from moto's S3 backend (path or virtual-host style)."""
    from moto.s3.models import s3_backends

    parts = urlsplit(url)
    path = parts.path.lstrip("/")
    host_bucket = re.match(r"([^.]+)\.s3[.-]", parts.hostname or "")
    bucket, key = (host_bucket.group(1), path) if host_bucket else tuple(path.split("/", 1))
    obj = s3_backends[ACCOUNT]["aws"].get_object(bucket, key)
    return bytes(obj.value).decode("utf-8")


def _parse(text: str) -> dict[str, Any]:
    from heed.local.resources import parse_template

    return parse_template(text, "the template sent")


class _ManagedPolicies:
    """The managed policies SAM attaches by name, offline (CloudFormation's transform asks IAM)."""

    def load(self) -> dict[str, str]:
        names = ("AWSLambdaBasicExecutionRole", "AWSXrayWriteOnlyAccess", "AWSLambdaVPCAccessExecutionRole",
                 "AWSLambdaSQSQueueExecutionRole", "AmazonS3ReadOnlyAccess")
        return {name: f"arn:aws:iam::aws:policy/service-role/{name}" for name in names}


def _translate(template: dict[str, Any], parameters: Mapping[str, str], region: str) -> dict[str, Any]:
    import boto3
    from samtranslator.parser.parser import Parser
    from samtranslator.translator.translator import Translator

    translator = Translator(None, Parser(), boto_session=boto3.session.Session(region_name=region))
    return translator.translate(template, dict(parameters),  # type: ignore[no-any-return]
                                get_managed_policy_map=_ManagedPolicies().load)


def serve(port: int) -> None:
    """moto's server app behind the middleware, on 127.0.0.1:``port``, until killed."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import make_server

    from tests.support import moto_gaps

    moto_gaps.apply()
    app = Middleware(DomainDispatcherApplication(create_backend_app))
    server = make_server("127.0.0.1", port, app, threaded=True, request_handler=MotoRequestHandler)
    print(f"AWS emulator on http://127.0.0.1:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    serve(int(sys.argv[1]))

"""Web Bot Auth wired into both runtimes: on AWS the key comes once per warm container from the
secret or parameter the stack names; locally from the profile's key file. Either way every
request the crawler's transport sends carries the signature, on the system clock."""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from heed_core.errors import ConfigError, TransientError
from heed_core.identity.directory import key_directory
from heed_core.identity.keys import generate_private_pem, private_key_from_pem, thumbprint, write_new_key_file
from heed_core.identity.verify import directory_keys, verify_request
from heed_core.ports import FakeClock, FetchRequest
from heed_core.profile import Profile, load_profile_data

from heed_aws import runtime

from heed.local.runtime import LocalRun, local_signer

AGENT = "https://aube.news/.well-known/http-message-signatures-directory"
PEM = generate_private_pem()
KEY = private_key_from_pem(PEM)


def signing(**wba: Any) -> Profile:
    return load_profile_data({"extends": "aubebot", "identity": {"web_bot_auth": {
        "enabled": True, "signature_agent": AGENT, **wba}}})


# --- AWS: the key from Secrets Manager or SSM, read once -------------------------------------------
class FakeSecrets:
    """A secretsmanager and ssm client in one: answers from ``values``, counts the reads, can be
    made to throttle."""

    def __init__(self, values: dict[str, str], throttle: int = 0) -> None:
        self.values, self.throttle, self.reads = values, throttle, []

    def _read(self, ident: str, op: str) -> str:
        self.reads.append(ident)
        if self.throttle:
            self.throttle -= 1
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, op)
        if ident not in self.values:
            code = "ParameterNotFound" if op == "GetParameter" else "ResourceNotFoundException"
            raise ClientError({"Error": {"Code": code, "Message": "no"}}, op)
        return self.values[ident]

    def get_secret_value(self, SecretId: str) -> dict[str, Any]:  # noqa: N803 - boto3's names
        return {"SecretString": self._read(SecretId, "GetSecretValue")}

    def get_parameter(self, Name: str, WithDecryption: bool) -> dict[str, Any]:  # noqa: N803
        assert WithDecryption
        return {"Parameter": {"Type": "SecureString", "Value": self._read(Name, "GetParameter")}}


class FakeSession:
    def __init__(self, secrets: FakeSecrets) -> None:
        self.secrets, self.clients = secrets, []

    def client(self, name: str, **_: Any) -> Any:
        self.clients.append(name)
        return self.secrets


@pytest.fixture(autouse=True)
def _fresh_runtime() -> Iterator[None]:
    yield
    runtime.configure()


def configure(profile: Profile, secrets: FakeSecrets, **env: str) -> FakeSession:
    session = FakeSession(secrets)
    runtime.configure(profile=profile, session=session, env=env, allow_private=True)
    return session


@pytest.mark.parametrize(("ref", "ident"), [("secretsmanager:heed/aube/web-bot-auth", "heed/aube/web-bot-auth"),
                                            ("ssm:/heed/aube/web-bot-auth", "/heed/aube/web-bot-auth")])
def test_the_key_the_stack_names_is_read_once_per_warm_container(ref: str, ident: str) -> None:
    # GIVEN a signing profile and the stack's key reference in the environment (template.yaml)
    secrets = FakeSecrets({ident: PEM.decode()})
    session = configure(signing(key_secret="secretsmanager:other"), secrets, **{runtime.KEY_ENV: ref})
    # WHEN the signer is asked for many times (every invocation of a warm container)
    first = runtime.signer()
    assert all(runtime.signer() is first for _ in range(5))
    # THEN the named key was read once, from the named service only, and it signs with its key id
    assert secrets.reads == [ident] and session.clients == [ref.split(":")[0]]
    assert first is not None and first.keyid == thumbprint(KEY)


def test_without_the_stack_variable_the_profiles_key_secret_is_used() -> None:
    secrets = FakeSecrets({"/heed/aube/key": PEM.decode()})
    configure(signing(key_secret="ssm:/heed/aube/key"), secrets)
    assert runtime.signer().keyid == thumbprint(KEY)  # type: ignore[union-attr]


def test_a_bot_that_does_not_sign_reads_no_secret() -> None:
    secrets = FakeSecrets({})
    session = configure(load_profile_data({"extends": "aubebot"}), secrets)
    assert runtime.signer() is None and session.clients == [] and secrets.reads == []


def test_throttling_is_transient_and_not_cached() -> None:
    # GIVEN Secrets Manager throttling the first read
    secrets = FakeSecrets({"k": PEM.decode()}, throttle=1)
    configure(signing(key_secret="secretsmanager:k"), secrets)
    # THEN that invocation fails as transient (its batch comes back) and the next one signs
    with pytest.raises(TransientError, match="ThrottlingException"):
        runtime.signer()
    assert runtime.signer() is not None


def test_a_missing_key_is_a_config_error_in_one_line() -> None:
    configure(signing(key_secret="secretsmanager:gone"), FakeSecrets({}))
    with pytest.raises(ConfigError, match=r"^key_secret secretsmanager:gone: ResourceNotFoundException$"):
        runtime.signer()


# --- the transport signs every request, robots.txt included -------------------------------------------
class Recorder(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[tuple[float, str, dict[str, str]]] = []


class _Handler(BaseHTTPRequestHandler):
    server: Recorder

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.server.seen.append((time.time(), self.path, dict(self.headers.items())))
        body = b"User-agent: *\nAllow: /\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture()
def recorder() -> Iterator[Recorder]:
    server = Recorder()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_the_crawlers_transport_signs_on_the_system_clock(recorder: Recorder) -> None:
    # GIVEN the AWS wiring of a signing bot, on a simulated clock a year behind
    stack = {"HEED_TABLE": "t", "HEED_QUEUE_URL": "q", "HEED_BUS_NAME": "b", "HEED_BUCKET": "s3"}
    runtime.configure(profile=signing(key_secret="secretsmanager:k"), session=FakeSession(FakeSecrets(
        {"k": PEM.decode()})), env=stack, allow_private=True, clock=FakeClock(time.time() - 365 * 86400))
    transport = runtime.crawler().transport
    # WHEN it sends robots.txt and a page
    base = f"http://127.0.0.1:{recorder.server_address[1]}"
    for path, purpose in (("/robots.txt", "robots"), ("/feed.xml", "feed")):
        assert transport.fetch(FetchRequest(url=base + path, purpose=purpose, max_bytes=10_000)).status == 200
    # THEN the site sees both signed, valid now by its own clock against the bot's directory
    keys = directory_keys(key_directory([KEY]))
    assert [p for _, p, _ in recorder.seen] == ["/robots.txt", "/feed.xml"]
    for t, path, headers in recorder.seen:
        check = verify_request(method="GET", url=base + path, headers=headers, keys=keys, now=t, expect_agent=AGENT)
        assert check.reason == "valid", check


# --- local runs: the key file --------------------------------------------------------------------------
def test_local_runs_sign_with_the_key_file(tmp_path: Path) -> None:
    key = write_new_key_file(tmp_path / "bot.pem")
    signer = local_signer(signing(key_file=str(tmp_path / "bot.pem")))
    assert signer is not None and signer.keyid == thumbprint(key)
    assert local_signer(load_profile_data({"extends": "aubebot"})) is None


def test_local_run_refuses_a_signing_profile_without_a_key_file_before_it_starts(tmp_path: Path) -> None:
    # GIVEN a profile that signs with a key on AWS only
    profile = signing(key_secret="ssm:/heed/aube/key")
    # WHEN a local run is set up THEN it is refused in one line, and nothing was written
    with pytest.raises(ConfigError) as caught:
        LocalRun(profile, [], start=0, until=0, out_dir=tmp_path / "out", allow_private=True)
    assert str(caught.value) == ("aubebot: identity.web_bot_auth is enabled but has no key_file: a local run signs "
                                 "with a key file (key_secret is for AWS; make one with: heed identity keygen "
                                 "--out KEYFILE)")
    assert not (tmp_path / "out").exists()


def test_a_key_file_others_can_read_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bot.pem"
    write_new_key_file(path)
    os.chmod(path, 0o644)
    with pytest.raises(ConfigError, match=r"^identity\.web_bot_auth\.key_file: .*lets other users read the private "
                                          r"key; run: chmod 600 ") as caught:
        local_signer(signing(key_file=str(path)))
    assert "\n" not in str(caught.value)

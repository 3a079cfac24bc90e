"""Issue 13 seen from the sites: an https server on 127.0.0.4 checks every request RequestsTransport
sends with a Web Bot Auth signer, against the key directory the bot publishes, with a verifier of
its own (the RFC 9421 signature base built here by hand, Ed25519 checked with ``cryptography``),
and Heed's verifier besides. Nothing leaves loopback."""
from __future__ import annotations

import base64
import http.client
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import http_sf
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from heed_core.adapters import RequestsTransport
from heed_core.identity.directory import DIRECTORY_PATH, MEDIA_TYPE, signed_directory
from heed_core.identity.keys import generate_private_pem, private_key_from_pem
from heed_core.identity.signing import WebBotAuthSigner
from heed_core.identity.verify import directory_keys, verify_directory, verify_request
from heed_core.ports import FakeClock, FetchRequest

HOST_IP = "127.0.0.4"
UA = "AubeBot/0.1 (+https://aube.news/robot; collecte RSS polie)"
ALLOWED_HEADERS = {"host", "user-agent", "accept-encoding", "accept", "signature", "signature-input",
                   "signature-agent"}


# --- an independent verifier: RFC 9421 section 2.5 and 3.2, by hand ----------------------------


def _b64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def independent_check(headers: dict[str, str], directory_body: bytes, now: float) -> str:
    """'ok' or why not. Written from the RFCs, sharing no code with heed_core.identity."""
    lower = {k.lower(): v for k, v in headers.items()}
    if not {"signature", "signature-input", "signature-agent"} <= set(lower):
        return "unsigned"
    label, _, inner = lower["signature-input"].partition("=")
    components, params = http_sf.parse(lower["signature-input"].encode(), tltype="dictionary")[label]
    if params.get("tag") != "web-bot-auth" or params.get("alg") != "ed25519":
        return "wrong tag or alg"
    if not params["created"] <= now <= params["expires"]:
        return "outside its lifetime"
    agents = http_sf.parse(lower["signature-agent"].encode(), tltype="dictionary")
    lines = []
    for name, item_params in components:
        if name == "@authority":
            lines.append(f'"@authority": {lower["host"].lower()}')
        elif name == "signature-agent" and set(item_params) == {"key"}:
            member = agents[item_params["key"]]
            lines.append(f'"signature-agent";key="{item_params["key"]}": {http_sf.ser(member)}')
        else:
            return f"unexpected component {name}"
    lines.append(f'"@signature-params": {inner}')  # the member's serialisation as sent
    base = "\n".join(lines).encode("ascii")
    jwks = {k["kid"]: k for k in json.loads(directory_body)["keys"]}
    if params["keyid"] not in jwks:
        return "unknown keyid"
    public = Ed25519PublicKey.from_public_bytes(_b64url(jwks[params["keyid"]]["x"]))
    signature = http_sf.parse(lower["signature"].encode(), tltype="dictionary")[label][0]
    try:
        public.verify(signature, base)
    except InvalidSignature:
        return "bad signature"
    return "ok"


# --- the site ---------------------------------------------------------------------------------


class Site(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, tls: ssl.SSLContext, now: float) -> None:
        super().__init__((HOST_IP, 0), Handler)
        self.socket = tls.wrap_socket(self.socket, server_side=True)
        self.now = now
        self.directory: Any = None  # the DirectoryDocument the bot publishes at bot.test
        self.published = b""  # the directory as the site fetched it from the Signature-Agent URL
        self.seen: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    @property
    def port(self) -> int:
        return int(self.server_address[1])


class Handler(BaseHTTPRequestHandler):
    server: Site

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        site = self.server
        headers = dict(self.headers.items())
        host = (self.headers.get("Host") or "").split(":")[0]
        doc = site.directory
        if site.published:  # requests before the site resolved the directory are its own fetch
            record = {"host": host, "path": self.path, "names": [k.lower() for k in self.headers],
                      "independent": independent_check(headers, site.published, site.now),
                      "heed": verify_request(method="GET", url=f"https://{self.headers['Host']}{self.path}",
                                             headers=headers, keys=directory_keys(site.published), now=site.now,
                                             expect_agent=doc.url).reason}
            with site.lock:
                site.seen.append(record)
        if host == "bot.test" and self.path == DIRECTORY_PATH:
            self.reply(200, doc.body, doc.headers)
        elif self.path == "/robots.txt":
            self.reply(200, b"User-agent: *\nAllow: /\nContent-Usage: / train-ai=n\n", {"Content-Type": "text/plain"})
        elif self.path == "/moved":
            self.reply(301, b"", {"Location": "/feed.xml"})
        else:
            self.reply(200, b"<rss/>", {"Content-Type": "application/rss+xml"})

    def reply(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key, leaf_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Heed identity test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(1).not_valid_before(now - datetime.timedelta(days=1))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "site.test")]))
            .issuer_name(ca_name).public_key(leaf_key.public_key()).serial_number(2)
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("site.test"), x509.DNSName("bot.test")]),
                           critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    folder = tmp_path_factory.mktemp("identity-tls")
    pem = serialization.Encoding.PEM
    (folder / "ca.pem").write_bytes(ca.public_bytes(pem))
    (folder / "leaf.pem").write_bytes(leaf.public_bytes(pem))
    (folder / "leaf.key").write_bytes(leaf_key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                                             serialization.NoEncryption()))
    return folder / "ca.pem", folder / "leaf.pem", folder / "leaf.key"


@pytest.fixture()
def site(tls_files: tuple[Path, Path, Path]) -> Iterator[Site]:
    _, cert, key = tls_files
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    server = Site(context, now=float(int(time.time())))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def raw_get(site: Site, ca: Path, host: str, path: str,
            headers: dict[str, str]) -> tuple[int, list[tuple[str, str]], bytes]:
    """A GET that is not the bot's: http.client over TLS to ``host`` (SNI and Host) at 127.0.0.4."""
    context = ssl.create_default_context(cafile=str(ca))
    conn = http.client.HTTPConnection(HOST_IP, site.port, timeout=5)
    conn.sock = context.wrap_socket(socket.create_connection((HOST_IP, site.port), timeout=5), server_hostname=host)
    conn.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
    conn.putheader("Host", f"{host}:{site.port}")
    for name, value in headers.items():
        conn.putheader(name, value)
    conn.endheaders()
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, response.getheaders(), body


def resolve_directory(site: Site, ca: Path, agent: str) -> bytes:
    """What a site does before trusting a Signature-Agent: fetch it, check type and signature."""
    status, headers, body = raw_get(site, ca, "bot.test", DIRECTORY_PATH, {"Accept": MEDIA_TYPE})
    assert status == 200 and dict(headers)["Content-Type"] == MEDIA_TYPE
    assert verify_directory(url=agent, headers=headers, body=body, now=site.now).valid
    return body


def bot(site: Site, ca: Path) -> tuple[RequestsTransport, WebBotAuthSigner]:
    key = private_key_from_pem(generate_private_pem())
    clock = FakeClock(site.now)
    agent = f"https://bot.test:{site.port}{DIRECTORY_PATH}"
    site.directory = signed_directory([key], url=agent, now=clock.now())
    site.published = resolve_directory(site, ca, agent)
    signer = WebBotAuthSigner(key, signature_agent=agent, clock=clock)
    transport = RequestsTransport(user_agent=UA, clock=clock, allow_private=True, connect_timeout_s=2,
                                  read_timeout_s=2, total_deadline_s=5, resolver=lambda host, port: [HOST_IP],
                                  ca_certs=str(ca), signer=signer)
    return transport, signer


def fetch(t: RequestsTransport, url: str, purpose: str = "feed") -> Any:
    return t.fetch(FetchRequest(url=url, purpose=purpose, max_bytes=100_000))


# --- the tests --------------------------------------------------------------------------------


def test_every_request_the_bot_sends_is_signed_and_verifies_at_the_site(
    site: Site, tls_files: tuple[Path, Path, Path]
) -> None:
    # GIVEN a bot with a key, its directory published at bot.test, and a site at site.test
    transport, _ = bot(site, tls_files[0])
    base = f"https://site.test:{site.port}"
    # WHEN it reads robots.txt, a feed, follows a redirect as a new request, and a page
    results = [fetch(transport, f"{base}/robots.txt", "robots"), fetch(transport, f"{base}/feed.xml"),
               fetch(transport, f"{base}/moved"), fetch(transport, f"{base}/feed.xml"),
               fetch(transport, f"{base}/article?id=7&x=%C3%A9", "article")]
    assert [r.status for r in results] == [200, 200, 301, 200, 200]
    # THEN the site saw every request signed, valid for both verifiers: 0 unsigned, 0 invalid
    assert len(site.seen) == 5
    assert [s["independent"] for s in site.seen] == ["ok"] * 5
    assert [s["heed"] for s in site.seen] == ["valid"] * 5
    # AND still exactly one User-Agent and nothing but the signature headers added
    for seen in site.seen:
        assert seen["names"].count("user-agent") == 1
        assert set(seen["names"]) <= ALLOWED_HEADERS


def test_the_directory_is_served_with_its_type_and_its_own_signature_verifies(
    site: Site, tls_files: tuple[Path, Path, Path]
) -> None:
    transport, signer = bot(site, tls_files[0])
    # WHEN a verifier (here the bot's own transport, signed too) fetches the Signature-Agent URL
    result = fetch(transport, signer.signature_agent, "page")
    # THEN it is the JWKS with the draft's media type, and its response signature verifies
    assert result.status == 200
    assert result.header("Content-Type") == MEDIA_TYPE
    assert json.loads(result.body)["keys"][0]["kid"] == signer.keyid
    check = verify_directory(url=signer.signature_agent, headers=result.headers, body=result.body, now=site.now)
    assert (check.valid, check.reason, list(check.keys)) == (True, "valid", [signer.keyid])
    assert site.seen[0]["heed"] == "valid"  # the directory request itself was signed


def test_a_request_with_a_tampered_header_fails_at_the_site(site: Site, tls_files: tuple[Path, Path, Path]) -> None:
    ca = tls_files[0]
    transport, signer = bot(site, ca)
    base = f"https://site.test:{site.port}"
    fetch(transport, f"{base}/feed.xml")
    # GIVEN the signature headers of a request the bot really sent
    sent = signer.signature_headers("GET", f"{base}/feed.xml")
    # WHEN an impostor replays them with its own Signature-Agent
    tampered = {**sent, "Signature-Agent": 'sig1="https://impostor.example/.well-known/http-message-signatures-directory"'}
    raw_get(site, ca, "site.test", "/feed.xml", {"User-Agent": UA, **tampered})
    # THEN both verifiers refuse exactly that one
    assert [s["independent"] for s in site.seen] == ["ok", "bad signature"]
    assert [s["heed"] for s in site.seen] == ["valid", "agent_mismatch"]


def test_without_a_signer_nothing_is_added(site: Site, tls_files: tuple[Path, Path, Path]) -> None:
    bot(site, tls_files[0])  # publishes a directory for the site's checks
    plain = RequestsTransport(user_agent=UA, clock=FakeClock(site.now), allow_private=True,
                              resolver=lambda host, port: [HOST_IP], ca_certs=str(tls_files[0]))
    assert fetch(plain, f"https://site.test:{site.port}/feed.xml").status == 200
    assert site.seen[0]["independent"] == "unsigned" and site.seen[0]["heed"] == "unsigned"

"""Issue 13, Web Bot Auth: keys, request signatures, the key directory and the verifier, against
the published vectors (RFC 7638, RFC 8037 A.3, draft-ietf-webbotauth-httpsig-protocol test vectors)."""
from __future__ import annotations

import json

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from heed_core.identity.directory import MEDIA_TYPE, directory_url, key_directory, signed_directory
from heed_core.identity.keys import (
    IdentityError,
    generate_private_pem,
    private_key_from_pem,
    public_jwk,
    thumbprint,
)
from heed_core.identity.settings import WebBotAuthSettings
from heed_core.identity.signing import SigningError, WebBotAuthSigner
from heed_core.identity.verify import directory_keys, verify_directory, verify_request
from heed_core.ports import FakeClock

# RFC 9421 B.1.4 "test-key-ed25519": the key the draft's Ed25519 test vectors are made with.
# A published test key: never for production (the draft says verifiers should reject it).
RFC9421_ED25519 = b"""-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF
-----END PRIVATE KEY-----
"""
VECTOR_KEYID = "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"
VECTOR_NONCE = "n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA=="
AGENT = "https://bot.example/.well-known/http-message-signatures-directory"
NOW = 1_800_000_000.0


@pytest.fixture()
def key():
    return private_key_from_pem(generate_private_pem())


def signer_for(key, clock=None, **kw):
    return WebBotAuthSigner(key, signature_agent=AGENT, clock=clock or FakeClock(NOW), **kw)


# --- keys -------------------------------------------------------------------------------------


def test_rfc8037_a3_thumbprint_of_the_example_okp_key():
    jwk = {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}
    assert thumbprint(jwk) == "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"


def test_keyid_of_the_rfc9421_test_key_is_the_drafts():
    key = private_key_from_pem(RFC9421_ED25519)
    jwk = public_jwk(key)
    assert jwk["x"] == "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"
    assert jwk["kid"] == thumbprint(key) == VECTOR_KEYID
    assert set(jwk) == {"kty", "crv", "x", "kid", "use"}  # public members only


def test_other_key_types_and_garbage_are_refused_in_one_line():
    rsa_pem = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    with pytest.raises(IdentityError, match="not an Ed25519 key"):
        private_key_from_pem(rsa_pem)
    with pytest.raises(IdentityError, match="not a PEM private key"):
        private_key_from_pem(b"hello")
    encrypted = private_key_from_pem(generate_private_pem()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"pw"))
    with pytest.raises(IdentityError, match="encrypted"):
        private_key_from_pem(encrypted)


# --- request signatures -----------------------------------------------------------------------


def test_draft_ed25519_vector_is_reproduced_bit_for_bit():
    # GIVEN the draft's "Signature-Agent Included Present on the Request" Ed25519 vector
    key = private_key_from_pem(RFC9421_ED25519)
    signer = WebBotAuthSigner(key, signature_agent="https://signature-agent.test", clock=FakeClock(1735689600),
                              lifetime_s=4889289600 - 1735689600, label="sig2", agent_key="agent2",
                              nonce=lambda: VECTOR_NONCE, max_lifetime_s=float("inf"))
    # WHEN a GET to example.com is signed
    headers = signer.signature_headers("GET", "https://example.com/")
    # THEN every header is the vector's
    assert headers["Signature-Agent"] == 'agent2="https://signature-agent.test"'
    assert headers["Signature-Input"] == (
        'sig2=("@authority" "signature-agent";key="agent2");created=1735689600'
        f';keyid="{VECTOR_KEYID}";alg="ed25519";expires=4889289600;nonce="{VECTOR_NONCE}";tag="web-bot-auth"')
    assert headers["Signature"] == (
        "sig2=:RdNFx5Bj6au3YgAMQL/RzmUlZE8QZLIaXGRpw985hWnwPfMxT228NMk6ehRS1PSl4e8PhbNZACSanGdhEwYCCg==:")


def test_signature_has_the_drafts_components_and_parameters_from_the_injected_clock(key):
    clock = FakeClock(NOW + 0.75)
    headers = signer_for(key, clock).signature_headers("GET", "https://www.example.nl/robots.txt")
    assert set(headers) == {"Signature-Agent", "Signature-Input", "Signature"}
    assert headers["Signature-Agent"] == f'sig1="{AGENT}"'  # the dictionary form, not a bare string
    sig_input = headers["Signature-Input"]
    assert sig_input.startswith('sig1=("@authority" "signature-agent";key="sig1");')
    assert f"created={int(NOW)};" in sig_input and f"expires={int(NOW) + 60};" in sig_input
    assert f'keyid="{thumbprint(key)}"' in sig_input
    assert 'alg="ed25519"' in sig_input and 'tag="web-bot-auth"' in sig_input and ';nonce="' in sig_input
    clock.advance(10)
    assert f"created={int(NOW) + 10};" in signer_for(key, clock).signature_headers("GET", "https://a.example/")[
        "Signature-Input"]


def test_lifetime_is_the_profiles_and_every_nonce_is_fresh(key):
    settings = WebBotAuthSettings(enabled=True, key_file="k.pem", signature_agent=AGENT, lifetime_s=300)
    signer = WebBotAuthSigner.from_settings(settings, key, FakeClock(NOW))
    first, second = (signer.signature_headers("GET", "https://a.example/")["Signature-Input"] for _ in range(2))
    assert f"expires={int(NOW) + 300};" in first
    nonce = lambda s: s.split(';nonce="')[1].split('"')[0]  # noqa: E731
    assert nonce(first) != nonce(second)


@pytest.mark.parametrize("agent", ["http://bot.example/", "bot.example", "https://", "https://bot.example/#x", 42])
def test_signature_agent_must_be_an_https_url(key, agent):
    with pytest.raises(IdentityError):
        WebBotAuthSigner(key, signature_agent=agent, clock=FakeClock(NOW))


def test_a_url_the_library_cannot_sign_is_a_signing_error(key):
    with pytest.raises(SigningError):
        signer_for(key).signature_headers("GET", "https://a.example/a b")


# --- verification -----------------------------------------------------------------------------


def test_signed_request_verifies_against_the_directory(key):
    headers = signer_for(key).signature_headers("GET", "https://www.example.nl:8443/x")
    keys = directory_keys(key_directory([key]))
    v = verify_request(method="GET", url="https://www.example.nl:8443/other?q=1", headers=headers, keys=keys,
                       now=NOW + 30, expect_agent=AGENT)
    assert (v.valid, v.reason, v.keyid, v.agent) == (True, "valid", thumbprint(key), AGENT)


@pytest.mark.parametrize("tamper, reason", [
    (lambda h: h.update({"Signature-Agent": 'sig1="https://impostor.example/"'}), "bad_signature"),
    (lambda h: h.update({"Signature": h["Signature"][:10] + ("A" if h["Signature"][10] != "A" else "B")
                         + h["Signature"][11:]}), "bad_signature"),
    (lambda h: h.update({"Signature-Input": h["Signature-Input"].replace(f"created={int(NOW)}",
                                                                         f"created={int(NOW) - 1}")}), "bad_signature"),
    (lambda h: h.update({"Signature-Agent": f'"{AGENT}"'}), "bad_signature_agent"),
    (lambda h: h.update({"Signature-Agent": f'other="{AGENT}"'}), "bad_signature_agent"),
    (lambda h: h.update({"Signature-Input": h["Signature-Input"].replace('"web-bot-auth"', '"x"')}),
     "no_web_bot_auth_signature"),
    (lambda h: h.pop("Signature"), "unsigned"),
])
def test_a_tampered_header_fails(key, tamper, reason):
    headers = signer_for(key).signature_headers("GET", "https://www.example.nl/x")
    tamper(headers)
    v = verify_request(method="GET", url="https://www.example.nl/x", headers=headers,
                       keys=directory_keys(key_directory([key])), now=NOW)
    assert (v.valid, v.reason) == (False, reason), v.detail


def test_another_authority_expired_unknown_key_and_wrong_agent_fail(key):
    headers = signer_for(key).signature_headers("GET", "https://www.example.nl/x")
    keys = directory_keys(key_directory([key]))
    other = directory_keys(key_directory([private_key_from_pem(generate_private_pem())]))
    check = lambda **kw: verify_request(**{"method": "GET", "url": "https://www.example.nl/x",  # noqa: E731
                                           "headers": headers, "keys": keys, "now": NOW, **kw}).reason
    assert check(url="https://evil.example/x") == "bad_signature"
    assert check(now=NOW + 61 + 5) == "expired"
    assert check(now=NOW - 6) == "not_yet_valid"
    assert check(keys=other) == "unknown_key"
    assert check(expect_agent="https://someone.else/") == "agent_mismatch"


# --- the key directory ------------------------------------------------------------------------


def test_directory_is_a_jwks_served_with_the_drafts_type_and_its_own_signature_verifies(key):
    url = directory_url("https://bot.example")
    assert url == "https://bot.example/.well-known/http-message-signatures-directory"
    doc = signed_directory([key], url=url, now=NOW)
    assert json.loads(doc.body) == {"keys": [public_jwk(key)]}
    assert doc.headers["Content-Type"] == MEDIA_TYPE
    assert doc.headers["Content-Digest"].startswith("sha-256=:")
    assert 'tag="http-message-signatures-directory"' in doc.headers["Signature-Input"]
    assert doc.headers["Signature-Input"].startswith('binding=("@authority";req "content-digest");')
    check = verify_directory(url=url, headers=doc.headers, body=doc.body, now=NOW + 86400)
    assert (check.valid, check.reason, list(check.keys)) == (True, "valid", [thumbprint(key)])


def test_directory_copied_elsewhere_or_altered_does_not_verify(key):
    url = directory_url("https://bot.example")
    doc = signed_directory([key], url=url, now=NOW)
    elsewhere = "https://mirror.example/.well-known/http-message-signatures-directory"
    assert verify_directory(url=elsewhere, headers=doc.headers, body=doc.body, now=NOW).reason == "bad_signature"
    swapped = key_directory([private_key_from_pem(generate_private_pem())])
    assert verify_directory(url=url, headers=doc.headers, body=swapped, now=NOW).reason == "unsigned_key"
    plain = {**doc.headers, "Content-Type": "application/json"}
    assert verify_directory(url=url, headers=plain, body=doc.body, now=NOW).reason == "wrong_content_type"


def test_two_keys_each_sign_the_directory(key):
    other = private_key_from_pem(generate_private_pem())
    url = directory_url("https://bot.example/")
    doc = signed_directory([key, other], url=url, now=NOW)
    check = verify_directory(url=url, headers=doc.headers, body=doc.body, now=NOW)
    assert check.valid and set(check.keys) == {thumbprint(key), thumbprint(other)}


def test_drafts_signed_directory_vector_verifies():
    body = (b'{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U",'
            b'"x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","use":"sig"}]}')
    headers = {
        "Content-Type": MEDIA_TYPE,
        "Content-Digest": "sha-256=:CADMT2aBdV/rqQr/NIru64ERQkCobVvllA4V0fLFDu0=:",
        "Signature-Input": 'binding=("@authority";req "content-digest");created=1735689600;expires=4889289600'
                           f';keyid="{VECTOR_KEYID}";tag="http-message-signatures-directory"',
        "Signature": "binding=:l6P8R67tm3kujAxbHWio7ll01qrEZ0dKD/WWlGhNYEmTnFZM8Wt0VQ9zqGfvo7T/"
                     "UMkBxsigzChM1Gpz7gOVBg==:",
    }
    url = "https://signature-agent.test/.well-known/http-message-signatures-directory"
    assert verify_directory(url=url, headers=headers, body=body, now=NOW).valid
    altered = body.replace(b'"use":"sig"', b'"use":"enc"')  # same key, other bytes: the digest breaks
    assert verify_directory(url=url, headers=headers, body=altered, now=NOW).reason == "bad_signature"


def test_a_kid_that_is_not_the_thumbprint_is_refused(key):
    jwk = {**public_jwk(key), "kid": "mine"}
    with pytest.raises(IdentityError, match="not its thumbprint"):
        directory_keys(json.dumps({"keys": [jwk]}).encode())

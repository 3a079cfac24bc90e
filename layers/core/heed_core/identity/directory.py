"""The bot's key directory: a JWKS at the well-known URI, signed by each of its keys.

draft-ietf-webbotauth-httpsig-protocol, "Directory Format" and "Validating the Domain Binding":
the body is a JWK Set served as ``application/http-message-signatures-directory+json``; one RFC 9421
response signature per key covers ``"@authority";req`` and ``content-digest`` (RFC 9530), with
``created``, ``expires``, ``keyid`` and ``tag="http-message-signatures-directory"``.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import urlsplit, urlunsplit

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from http_message_signatures import HTTPMessageSignaturesException, HTTPMessageSigner, MappingKeyResolver, algorithms

from heed_core.identity.keys import IdentityError, public_jwk, thumbprint
from heed_core.identity.signing import check_signature_agent

__all__ = [
    "DIRECTORY_PATH",
    "DIRECTORY_TAG",
    "MEDIA_TYPE",
    "DirectoryDocument",
    "directory_url",
    "info_sentence",
    "key_directory",
    "signed_directory",
]

DIRECTORY_PATH = "/.well-known/http-message-signatures-directory"
MEDIA_TYPE = "application/http-message-signatures-directory+json"
DIRECTORY_TAG = "http-message-signatures-directory"
# The draft's deployment guidance: a short ``expires`` on the directory's own signature buys no
# faster revocation and costs availability, so it outlives any republication interval.
DEFAULT_DIRECTORY_LIFETIME_S = 30 * 86400
CACHE_CONTROL = "max-age=86400"  # as in the draft's example; verifiers refresh at most daily


@dataclass
class _Request:
    method: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class _Response:
    # http-message-signatures treats an object with ``status_code`` as a response and resolves
    # ``;req`` components from its ``request``.
    status_code: int
    headers: dict[str, str]
    request: _Request


def directory_url(signature_agent: str) -> str:
    """Where the directory is fetched. A Signature-Agent that is a bare origin (the draft's test
    vectors, earlier revisions) means its well-known URI; a URL with a path is the directory itself
    (the current draft: verifiers fetch the member value as sent)."""
    check_signature_agent(signature_agent)
    parts = urlsplit(signature_agent)
    if parts.path in ("", "/") and not parts.query:
        return urlunsplit((parts.scheme, parts.netloc, DIRECTORY_PATH, "", ""))
    return signature_agent


def key_directory(keys: Sequence[Ed25519PrivateKey | Ed25519PublicKey]) -> bytes:
    """The JWKS body, compact and deterministic (the Content-Digest is computed over these bytes)."""
    if not keys:
        raise IdentityError("a key directory needs at least one key")
    jwks = [public_jwk(k) for k in keys]
    if len({j["kid"] for j in jwks}) != len(jwks):
        raise IdentityError("the same key appears twice in the directory")
    return json.dumps({"keys": jwks}, separators=(",", ":")).encode("ascii")


@dataclass(frozen=True)
class DirectoryDocument:
    """What to serve at ``url``: exactly ``body``, with exactly ``headers``."""

    url: str
    body: bytes
    headers: dict[str, str]


def signed_directory(
    keys: Sequence[Ed25519PrivateKey],
    *,
    url: str,
    now: float,
    lifetime_s: float = DEFAULT_DIRECTORY_LIFETIME_S,
) -> DirectoryDocument:
    """The directory at ``url`` (see ``directory_url``), signed at ``now`` by every key in it,
    each signature proving possession of one key and binding the set to ``url``'s authority."""
    check_signature_agent(url, "directory url")
    body = key_directory(keys)
    created = int(now)
    expires = created + int(lifetime_s)
    response = _Response(200, {"Content-Type": MEDIA_TYPE, "Cache-Control": CACHE_CONTROL}, _Request("GET", url))
    private = {thumbprint(k): k for k in keys}
    signer = HTTPMessageSigner(signature_algorithm=algorithms.ED25519,
                               key_resolver=MappingKeyResolver(public_keys={}, private_keys=private))
    for n, keyid in enumerate(private):
        try:
            signer.sign(
                response,
                key_id=keyid,
                created=datetime.fromtimestamp(created, UTC),
                expires=datetime.fromtimestamp(expires, UTC),
                label="binding" if n == 0 else f"binding{n + 1}",
                tag=DIRECTORY_TAG,
                include_alg=False,  # as in the draft's example: alg follows from the JWK
                covered_component_ids=('"@authority";req', "content-digest"),
                body=body,
                use_existing_digest=n > 0,
                append_if_signature_exists=n > 0,
            )
        except HTTPMessageSignaturesException as exc:
            raise IdentityError(f"cannot sign the key directory for {url}: {exc}") from exc
    return DirectoryDocument(url=url, body=body, headers=dict(response.headers))


def info_sentence(signature_agent: str, keyids: Sequence[str]) -> str:
    """One sentence for the bot's info page (the page generator calls it; numbers from the key)."""
    ids = ", ".join(keyids)
    return (f"Every request we send, robots.txt included, carries an HTTP message signature (Web Bot Auth, "
            f"RFC 9421) with Signature-Agent {signature_agent} and key id {ids}; our public keys are at "
            f"{directory_url(signature_agent)}. A request that names us without a valid signature is not ours.")

"""Signs each outgoing request as Web Bot Auth asks (draft-ietf-webbotauth-httpsig-protocol on RFC 9421).

The signature base and the header syntax come from ``http-message-signatures`` (RFC 9421) and
``http-sf`` (RFC 9651); this module only chooses what the draft requires: the covered components
``("@authority" "signature-agent";key="sig1")``, ``created``/``expires`` from the injected clock,
``keyid`` = the RFC 7638 thumbprint, ``alg="ed25519"``, ``tag="web-bot-auth"`` and a fresh nonce.
"""
from __future__ import annotations

import base64
import math
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol
from urllib.parse import urlsplit

import http_sf
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from http_message_signatures import HTTPMessageSignaturesException, HTTPMessageSigner, MappingKeyResolver, algorithms

from heed_core.identity.keys import IdentityError, thumbprint
from heed_core.identity.settings import DEFAULT_LIFETIME_S, MAX_LIFETIME_S, WebBotAuthSettings
from heed_core.ports import Clock

__all__ = ["TAG", "RequestSigner", "SigningError", "WebBotAuthSigner", "check_signature_agent"]

TAG = "web-bot-auth"
NONCE_BYTES = 64  # as in the draft's test vectors


class SigningError(IdentityError):
    """A request that cannot be signed. It must then not be sent at all: an unsigned request
    from a signing bot is exactly what an impostor's looks like."""

    code = "signing"


class RequestSigner(Protocol):
    """What ``RequestsTransport(signer=...)`` calls just before it sends a request."""

    def signature_headers(self, method: str, url: str) -> Mapping[str, str]:
        """The headers to add (``Signature-Agent``, ``Signature-Input``, ``Signature``).
        Raises ``SigningError`` (a ``ValueError``) when the request cannot be signed."""
        ...


@dataclass
class _Outgoing:
    # The message shape http-message-signatures resolves components from (method, url, headers).
    method: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)


def check_signature_agent(url: object, where: str = "signature_agent") -> str:
    """The draft: a Signature-Agent member is a String holding an absolute https URI."""
    if not isinstance(url, str) or not url.isascii() or not url.isprintable() or " " in url:
        raise IdentityError(f"{where}: {url!r} is not a plain ASCII URL")
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname or parts.fragment or parts.username or parts.password:
        raise IdentityError(f"{where}: {url!r} must be an https URL of the bot's key directory, "
                            "e.g. https://example.org/.well-known/http-message-signatures-directory")
    return url


def _random_nonce() -> str:
    return base64.b64encode(secrets.token_bytes(NONCE_BYTES)).decode("ascii")


class WebBotAuthSigner:
    """Signs requests with one Ed25519 key. Time comes only from ``clock`` (the core never
    reads it); the nonce from ``nonce`` (random by default, fixed in tests)."""

    def __init__(
        self,
        key: Ed25519PrivateKey,
        *,
        signature_agent: str,
        clock: Clock,
        lifetime_s: float = DEFAULT_LIFETIME_S,
        label: str = "sig1",
        agent_key: str | None = None,
        nonce: Callable[[], str] = _random_nonce,
        max_lifetime_s: float = MAX_LIFETIME_S,
    ) -> None:
        if not isinstance(key, Ed25519PrivateKey):
            raise IdentityError("the signing key must be an Ed25519 private key")
        if not 1 <= lifetime_s <= max_lifetime_s:
            raise IdentityError(f"lifetime_s: {lifetime_s!r} must be between 1 and {max_lifetime_s:g} seconds")
        self.signature_agent = check_signature_agent(signature_agent)
        self.keyid = thumbprint(key)
        self.label = label
        self._agent_key = agent_key or label
        self._clock = clock
        self._lifetime = int(math.ceil(lifetime_s))
        self._nonce = nonce
        try:
            # RFC 9651 3.2: a Dictionary whose member is a String; http-sf quotes and escapes it.
            self._agent_header = http_sf.ser({self._agent_key: (self.signature_agent, {})})
        except (TypeError, ValueError) as exc:
            raise IdentityError(f"label {self._agent_key!r} is not a structured-field dictionary key") from exc
        # The draft's minimum, and what its test vectors cover: the authority and our own
        # Signature-Agent member (so the member can be neither swapped nor relabelled).
        self.covered = ("@authority", f'"signature-agent";key="{self._agent_key}"')
        self._signer = HTTPMessageSigner(
            signature_algorithm=algorithms.ED25519,
            key_resolver=MappingKeyResolver(public_keys={}, private_keys={self.keyid: key}),
        )

    @classmethod
    def from_settings(cls, settings: WebBotAuthSettings, key: Ed25519PrivateKey, clock: Clock) -> WebBotAuthSigner:
        """The signer a profile asks for; ``key`` was loaded from ``settings.key_file`` or ``key_secret``."""
        if not settings.signature_agent:
            raise IdentityError("identity.web_bot_auth.signature_agent: missing")
        return cls(key, signature_agent=settings.signature_agent, clock=clock, lifetime_s=settings.lifetime_s)

    def signature_headers(self, method: str, url: str) -> dict[str, str]:
        created = int(math.floor(self._clock.now()))
        message = _Outgoing(method, url, {"Signature-Agent": self._agent_header})
        try:
            self._signer.sign(
                message,
                key_id=self.keyid,
                created=datetime.fromtimestamp(created, UTC),
                expires=datetime.fromtimestamp(created + self._lifetime, UTC),
                nonce=self._nonce(),
                label=self.label,
                tag=TAG,
                include_alg=True,
                covered_component_ids=self.covered,
            )
        except (HTTPMessageSignaturesException, ValueError, TypeError) as exc:
            raise SigningError(f"cannot sign a request to {url!r}: {exc}") from exc
        return dict(message.headers)

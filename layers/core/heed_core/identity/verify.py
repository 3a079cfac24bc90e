"""Checks Web Bot Auth signatures as a site would: a request against a key directory, and the
directory's own response signature, both at a given time (never the wall clock).

Every refusal has a stable ``reason`` code; the cryptography and the RFC 9421 signature base are
``http-message-signatures``'s. Reasons: ``unsigned``, ``malformed``, ``no_web_bot_auth_signature``,
``agent_not_covered``, ``authority_not_covered``, ``bad_signature_agent``, ``agent_mismatch``,
``unknown_key``, ``not_yet_valid``, ``expired``, ``bad_signature``; for a directory also
``wrong_content_type``, ``malformed_directory``, ``unsigned_key``, ``digest_not_covered``.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

import http_sf
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from http_message_signatures import (
    HTTPMessageSignaturesException,
    HTTPMessageVerifier,
    InvalidSignature,
    MappingKeyResolver,
    algorithms,
)

from heed_core.identity.directory import DIRECTORY_TAG, MEDIA_TYPE
from heed_core.identity.keys import IdentityError, public_key_from_jwk, thumbprint
from heed_core.identity.signing import TAG, check_signature_agent

__all__ = ["DirectoryCheck", "Verification", "directory_keys", "verify_directory", "verify_request"]

Headers = Mapping[str, str] | Iterable[tuple[str, str]]
SKEW_S = 5  # clock skew tolerated either way, as http-message-signatures does by default
MAX_DIRECTORY_KEYS = 64  # the draft's SSRF advice: bound the key count


@dataclass(frozen=True)
class Verification:
    """``valid`` with ``reason == "valid"``, or the first reason it is not."""

    valid: bool
    reason: str
    detail: str
    keyid: str | None = None
    agent: str | None = None
    label: str | None = None
    expires: int | None = None


@dataclass(frozen=True)
class DirectoryCheck:
    valid: bool
    reason: str
    detail: str
    keys: Mapping[str, Ed25519PublicKey] = field(default_factory=dict)


@dataclass
class _Request:
    method: str
    url: str
    headers: dict[str, str]


@dataclass
class _Response:
    status_code: int
    headers: dict[str, str]
    request: _Request


class _Verifier(HTTPMessageVerifier):
    def validate_created_and_expires(self, sig_input: Any, max_age: Any = None) -> None:
        # The library compares with datetime.now(); Heed's time is injected (STYLE.md 6), and
        # created/expires were already checked against it, with reasons of our own, before this.
        return None


def _combined(headers: Headers) -> dict[str, str]:
    """One value per field name, repeated lines joined with ", " (RFC 9110 5.3), first spelling kept."""
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    out: dict[str, str] = {}
    names: dict[str, str] = {}
    for name, value in pairs:
        if not isinstance(name, str) or not isinstance(value, str):
            raise IdentityError("header names and values must be strings")
        key = names.setdefault(name.lower(), name)
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def _get(headers: Mapping[str, str], name: str) -> str | None:
    return next((v for k, v in headers.items() if k.lower() == name), None)


def _dictionary(value: str) -> dict[str, Any]:
    return cast(dict[str, Any], http_sf.parse(value.encode("latin-1"), tltype="dictionary"))


def _no(reason: str, detail: str, **kw: Any) -> Verification:
    return Verification(False, reason, detail, **kw)


def directory_keys(body: bytes) -> dict[str, Ed25519PublicKey]:
    """The Ed25519 keys of a JWKS, by RFC 7638 thumbprint. A ``kid`` must equal the thumbprint
    (the draft, for the well-known URI); entries of other types are ignored; none usable is an error."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise IdentityError("the key directory is not JSON") from exc
    entries = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise IdentityError('the key directory has no "keys" list (a JWK Set, RFC 7517 section 5)')
    keys: dict[str, Ed25519PublicKey] = {}
    for entry in entries[:MAX_DIRECTORY_KEYS]:
        if not isinstance(entry, dict) or entry.get("kty") != "OKP" or entry.get("crv") != "Ed25519":
            continue
        key = public_key_from_jwk(entry)
        keyid = thumbprint(entry)
        if "kid" in entry and entry["kid"] != keyid:
            raise IdentityError(f"directory key {entry['kid']!r} has a kid that is not its thumbprint {keyid}")
        keys[keyid] = key
    if not keys:
        raise IdentityError("the key directory holds no Ed25519 key")
    return keys


def _time_problem(params: Mapping[str, Any], now: float) -> tuple[str, str] | None:
    created, expires = params.get("created"), params.get("expires")
    if type(created) is not int or type(expires) is not int:
        return "malformed", "the draft requires integer created and expires parameters"
    if expires <= created:
        return "malformed", f"expires ({expires}) is not after created ({created})"
    if created > now + SKEW_S:
        return "not_yet_valid", f"created {_iso(created)} is in the future (now {_iso(now)})"
    if expires < now - SKEW_S:
        return "expired", f"expired at {_iso(expires)} (now {_iso(now)})"
    return None


def _mismatch(what: str, exc: Exception) -> str:
    why = f" ({exc})" if str(exc) else ""
    return f"{what} does not verify{why}: a covered value differs from what the key signed"


def _iso(t: float) -> str:
    return datetime.fromtimestamp(int(t), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def verify_request(
    *,
    method: str,
    url: str,
    headers: Headers,
    keys: Mapping[str, Ed25519PublicKey],
    now: float,
    expect_agent: str | None = None,
) -> Verification:
    """Is this request signed per Web Bot Auth by one of ``keys`` (thumbprint -> key), and does it
    name ``expect_agent`` (when given) as its Signature-Agent? ``url`` gives ``@authority``."""
    try:
        fields = _combined(headers)
    except IdentityError as exc:
        return _no("malformed", str(exc))
    sig_input, signature, agent_field = (_get(fields, n) for n in ("signature-input", "signature", "signature-agent"))
    if sig_input is None or signature is None:
        return _no("unsigned", "no Signature-Input and Signature headers")
    try:
        inputs = _dictionary(sig_input)
    except (http_sf.StructuredFieldError, UnicodeEncodeError) as exc:
        return _no("malformed", f"Signature-Input is not a structured-field dictionary ({exc})")
    ours = [(label, member) for label, member in inputs.items()
            if isinstance(member[0], list) and member[1].get("tag") == TAG]
    if not ours:
        return _no("no_web_bot_auth_signature", f'no Signature-Input member has tag="{TAG}"')
    # Of several web-bot-auth signatures (e.g. a remote browser's), ours is the one with our key.
    label, (components, params) = next(((lb, m) for lb, m in ours if m[1].get("keyid") in keys), ours[0])
    keyid = params.get("keyid")
    if not isinstance(keyid, str):
        return _no("malformed", f"signature {label} has no keyid", label=label)
    if params.get("alg", "ed25519") != "ed25519":
        return _no("malformed", f"signature {label} has alg={params.get('alg')!r}, not ed25519", label=label)
    names = [(item, item_params) for item, item_params in components]
    if not any(item in ("@authority", "@target-uri") and not p for item, p in names):
        return _no("authority_not_covered", f"signature {label} covers neither @authority nor @target-uri", label=label)
    agent_keys = [p.get("key") for item, p in names if item == "signature-agent" and isinstance(p.get("key"), str)]
    if not agent_keys:
        return _no("agent_not_covered", f'signature {label} does not cover a "signature-agent";key=... member',
                   label=label)
    agent_key = agent_keys[0]
    if agent_field is None:
        return _no("bad_signature_agent", "no Signature-Agent header", label=label)
    try:
        agents = _dictionary(agent_field)
    except (http_sf.StructuredFieldError, UnicodeEncodeError):
        return _no("bad_signature_agent", "Signature-Agent is not a dictionary (the legacy bare-string form is "
                   "not what this bot sends)", label=label)
    member = agents.get(agent_key)
    if member is None or not isinstance(member[0], str) or member[1]:
        return _no("bad_signature_agent", f"Signature-Agent has no plain string member {agent_key!r}", label=label)
    agent = member[0]
    try:
        check_signature_agent(agent, "Signature-Agent")
    except IdentityError as exc:
        return _no("bad_signature_agent", str(exc), label=label)
    if expect_agent is not None and agent != expect_agent:
        return _no("agent_mismatch", f"Signature-Agent is {agent}, not {expect_agent}", agent=agent, label=label)
    problem = _time_problem(params, now)
    if problem:
        return _no(*problem, keyid=keyid, agent=agent, label=label)
    if keyid not in keys:
        return _no("unknown_key", f"keyid {keyid} is not in the key directory", keyid=keyid, agent=agent, label=label)
    verifier = _Verifier(signature_algorithm=algorithms.ED25519,
                         key_resolver=MappingKeyResolver(public_keys={keyid: keys[keyid]}, private_keys={}))
    try:
        verifier.verify(_Request(method.upper(), url, fields), max_age=None, expect_tag=TAG, expect_label=label)
    except InvalidSignature as exc:
        return _no("bad_signature", _mismatch(f"signature {label}", exc), keyid=keyid, agent=agent, label=label)
    except HTTPMessageSignaturesException as exc:
        return _no("malformed", f"signature {label} cannot be checked: {exc}", keyid=keyid, agent=agent, label=label)
    return Verification(True, "valid", f"signed with key {keyid} for {agent}, valid until {_iso(params['expires'])}",
                        keyid=keyid, agent=agent, label=label, expires=params["expires"])


def verify_directory(*, url: str, headers: Headers, body: bytes, now: float) -> DirectoryCheck:
    """Is this the directory served at ``url`` with the draft's media type, every key in it proving
    possession with a response signature over ``"@authority";req`` and ``content-digest``?"""
    try:
        fields = _combined(headers)
    except IdentityError as exc:
        return DirectoryCheck(False, "malformed", str(exc))
    ctype = (_get(fields, "content-type") or "").split(";")[0].strip().lower()
    if ctype != MEDIA_TYPE:
        return DirectoryCheck(False, "wrong_content_type", f"Content-Type is {ctype or 'missing'!r}, not {MEDIA_TYPE}")
    try:
        keys = directory_keys(body)
    except IdentityError as exc:
        return DirectoryCheck(False, "malformed_directory", str(exc))
    sig_input = _get(fields, "signature-input")
    if sig_input is None or _get(fields, "signature") is None:
        return DirectoryCheck(False, "unsigned_key", "the directory response carries no signature", keys)
    try:
        inputs = _dictionary(sig_input)
    except (http_sf.StructuredFieldError, UnicodeEncodeError) as exc:
        return DirectoryCheck(False, "malformed", f"Signature-Input is not a structured-field dictionary ({exc})", keys)
    signed = {m[1].get("keyid"): (label, m) for label, m in inputs.items()
              if isinstance(m[0], list) and m[1].get("tag") == DIRECTORY_TAG}
    for keyid in keys:
        if keyid not in signed:
            return DirectoryCheck(False, "unsigned_key", f"key {keyid} has no {DIRECTORY_TAG} signature", keys)
        label, (components, params) = signed[keyid]
        covered = {(item, tuple(sorted(p))) for item, p in components}
        if ("@authority", ("req",)) not in covered:
            return DirectoryCheck(False, "authority_not_covered", f'signature {label} does not cover "@authority";req',
                                  keys)
        if ("content-digest", ()) not in covered:
            return DirectoryCheck(False, "digest_not_covered", f"signature {label} does not cover content-digest", keys)
        problem = _time_problem(params, now)
        if problem:
            return DirectoryCheck(False, problem[0], f"signature {label}: {problem[1]}", keys)
    verifier = _Verifier(signature_algorithm=algorithms.ED25519,
                         key_resolver=MappingKeyResolver(public_keys=dict(keys), private_keys={}))
    response = _Response(200, fields, _Request("GET", url, {}))
    try:
        # body= makes the library check Content-Digest against these bytes (RFC 9530).
        verifier.verify(response, max_age=None, expect_tag=DIRECTORY_TAG, body=body)
    except InvalidSignature as exc:
        return DirectoryCheck(False, "bad_signature", _mismatch("the directory signature", exc), keys)
    except HTTPMessageSignaturesException as exc:
        return DirectoryCheck(False, "malformed", f"the directory signature cannot be checked: {exc}", keys)
    return DirectoryCheck(True, "valid", f"{len(keys)} key(s), each signed for {url}", keys)

"""Ed25519 keys for Web Bot Auth: PEM in and out, the public JWK and its RFC 7638 thumbprint."""
from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from heed_core.errors import ConfigError

__all__ = [
    "IdentityError",
    "generate_private_pem",
    "private_key_from_pem",
    "public_jwk",
    "public_key_from_jwk",
    "read_key_file",
    "thumbprint",
    "write_new_key_file",
]

MAX_KEY_FILE_BYTES = 16 * 1024  # an Ed25519 PEM is 119 bytes; anything this large is not one


class IdentityError(ConfigError, ValueError):
    """A key, an identity setting or a captured request that cannot be used. The message is
    one line a person can act on; it never contains key material."""

    code = "identity"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def generate_private_pem() -> bytes:
    """A new Ed25519 private key as unencrypted PKCS#8 PEM (what `heed identity keygen` writes)."""
    return Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def private_key_from_pem(pem: bytes, *, where: str = "the key") -> Ed25519PrivateKey:
    """Parse a PKCS#8 PEM Ed25519 private key. Other key types, encrypted keys and garbage are
    refused: the draft's ``keyid`` and our directory are defined for Ed25519 only."""
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except TypeError as exc:  # cryptography's word for "this key is encrypted"
        raise IdentityError(f"{where} is encrypted: Heed needs an unencrypted PKCS#8 PEM (file mode 0600)") from exc
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise IdentityError(f"{where} is not a PEM private key (make one with: heed identity keygen)") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise IdentityError(f"{where} is a {type(key).__name__.removeprefix('_')}, not an Ed25519 key")
    return key


def public_jwk(key: Ed25519PublicKey | Ed25519PrivateKey) -> dict[str, str]:
    """RFC 8037 section 2: an OKP JWK, with ``kid`` set to the thumbprint as the draft asks of a
    directory at the well-known URI."""
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    x = _b64url(public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))
    jwk = {"kty": "OKP", "crv": "Ed25519", "x": x}
    return {**jwk, "kid": thumbprint(jwk), "use": "sig"}


def thumbprint(key: Mapping[str, Any] | Ed25519PublicKey | Ed25519PrivateKey) -> str:
    """RFC 7638 JWK SHA-256 thumbprint, base64url: the SHA-256 of the required members
    (RFC 8037 A.3 for OKP: crv, kty, x) in lexicographic order, without whitespace."""
    if not isinstance(key, Mapping):
        key = public_jwk(key)
    try:
        required = {name: key[name] for name in ("crv", "kty", "x")}
    except KeyError as exc:
        raise IdentityError(f"JWK has no {exc.args[0]!r} member") from exc
    if not all(isinstance(v, str) for v in required.values()):
        raise IdentityError("JWK members crv, kty and x must be strings")
    canonical = json.dumps(required, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return _b64url(hashlib.sha256(canonical.encode("utf-8")).digest())


def public_key_from_jwk(jwk: Mapping[str, Any]) -> Ed25519PublicKey:
    """The Ed25519 public key of an OKP JWK; anything else is refused."""
    if jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519" or not isinstance(jwk.get("x"), str):
        raise IdentityError("not an Ed25519 OKP JWK (kty OKP, crv Ed25519, x)")
    try:
        raw = _b64url_decode(jwk["x"])
        return Ed25519PublicKey.from_public_bytes(raw)
    except ValueError as exc:
        raise IdentityError("JWK x is not a 32-byte base64url Ed25519 public key") from exc


def read_key_file(path: str | Path) -> Ed25519PrivateKey:
    """Load ``identity.web_bot_auth.key_file``. Refused when missing, unreadable, or readable by
    group or others (as ssh does): a private key other users can read is no proof of identity."""
    where = str(path)
    path = Path(path).expanduser()
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise IdentityError(f"{where}: not a regular file")
        if info.st_size > MAX_KEY_FILE_BYTES:
            raise IdentityError(f"{where}: {info.st_size} bytes, too large for an Ed25519 PEM key")
        if os.name == "posix" and info.st_mode & 0o077:
            raise IdentityError(f"{where}: mode {stat.S_IMODE(info.st_mode):04o} lets other users read the "
                                f"private key; run: chmod 600 {where}")
        pem = path.read_bytes()
    except FileNotFoundError as exc:
        raise IdentityError(f"{where}: no such key file (make one with: heed identity keygen --out {where})") from exc
    except OSError as exc:
        raise IdentityError(f"{where}: cannot read the key file ({exc.strerror or type(exc).__name__})") from exc
    return private_key_from_pem(pem, where=where)


def write_new_key_file(path: str | Path) -> Ed25519PrivateKey:
    """Create ``path`` with a new key, mode 0600. Never overwrites: an existing file (or a
    dangling link) is an error, so a published key is never lost by a typo."""
    where = str(path)
    pem = generate_private_pem()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(Path(path).expanduser(), flags, 0o600)
    except FileExistsError as exc:
        raise IdentityError(f"{where} exists: refusing to overwrite a key (choose another --out)") from exc
    except OSError as exc:
        raise IdentityError(f"{where}: cannot create the key file ({exc.strerror or type(exc).__name__})") from exc
    try:
        os.fchmod(fd, 0o600)  # the umask may have removed bits from 0600, never added any
        os.write(fd, pem)
    except OSError as exc:
        os.close(fd)
        os.unlink(Path(path).expanduser())  # no half-written key left behind to refuse next time
        raise IdentityError(f"{where}: cannot write the key file ({exc.strerror or type(exc).__name__})") from exc
    os.close(fd)
    return private_key_from_pem(pem, where=where)

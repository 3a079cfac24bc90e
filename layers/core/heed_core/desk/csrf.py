"""Decides whether a form came from the desk's own page: its hidden token is the HMAC of the
browser's desk cookie under the desk's secret (a synchronizer token that needs no table). A form
posted from elsewhere has neither the cookie (``SameSite=Strict``) nor a token that matches it."""
from __future__ import annotations

import hashlib
import hmac

__all__ = ["csrf_ok", "csrf_token", "cookie_digest"]


def csrf_token(secret: bytes, cookie: str) -> str:
    """The form token of the browser whose desk cookie is ``cookie``."""
    return hmac.new(secret, b"csrf\x00" + cookie.encode("utf-8"), hashlib.sha256).hexdigest()


def csrf_ok(secret: bytes, cookie: str | None, given: str | None) -> bool:
    """True when ``given`` is the form token of ``cookie`` (compared in constant time)."""
    if not cookie or not given:
        return False
    return hmac.compare_digest(csrf_token(secret, cookie), given)


def cookie_digest(secret: bytes, cookie: str) -> str:
    """What the desk keeps of a browser's cookie (a token's claimant, a session's key): never
    the cookie itself."""
    return hmac.new(secret, b"who\x00" + cookie.encode("utf-8"), hashlib.sha256).hexdigest()

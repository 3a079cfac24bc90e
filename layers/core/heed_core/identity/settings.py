"""The profile's ``identity.web_bot_auth`` section as typed data; every default lives here."""
from __future__ import annotations

from dataclasses import dataclass

from heed_core.profile import Profile

__all__ = ["DEFAULT_LIFETIME_S", "MAX_LIFETIME_S", "WebBotAuthSettings"]

# The brief's default; draft-ietf-webbotauth-httpsig-protocol recommends ``expires`` no more than
# 24 hours after ``created`` (Generating HTTP Message Signature), and a short life bounds replay.
DEFAULT_LIFETIME_S = 60
MAX_LIFETIME_S = 86400


@dataclass(frozen=True)
class WebBotAuthSettings:
    """Signed requests, off by default. The private key is named, never held: ``key_file`` is a
    path used locally, ``key_secret`` a Secrets Manager secret or SSM SecureString used on AWS
    (``secretsmanager:NAME``, ``ssm:/NAME`` or either service's ARN)."""

    enabled: bool = False
    key_file: str | None = None
    key_secret: str | None = None
    signature_agent: str | None = None
    lifetime_s: float = DEFAULT_LIFETIME_S

    @classmethod
    def from_profile(cls, profile: Profile) -> WebBotAuthSettings:
        """Read a profile that ``heed_core.profile.validate`` accepted."""
        wba = profile.spec.identity.web_bot_auth
        return cls(enabled=wba.enabled, key_file=wba.key_file, key_secret=wba.key_secret,
                   signature_agent=wba.signature_agent, lifetime_s=wba.lifetime_s)

    @property
    def has_key(self) -> bool:
        return bool(self.key_file or self.key_secret)

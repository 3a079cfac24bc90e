"""Web Bot Auth (issue 13): a bot proves who it is by signing every request (RFC 9421).

``keys`` loads and describes the Ed25519 key, ``signing`` signs outgoing requests, ``directory``
builds the signed key directory a site fetches, ``verify`` checks both as a site would, and
``settings`` reads the profile's ``identity.web_bot_auth`` section. The private key is never in a
profile or a template: a file locally, Secrets Manager or SSM on AWS (``heed_aws.secrets``).
"""
from heed_core.identity.keys import IdentityError
from heed_core.identity.settings import WebBotAuthSettings

__all__ = ["IdentityError", "WebBotAuthSettings"]

"""A deployment's own settings, beside the bot's public profile: what the operator chooses for one
installation and never publishes (where results are pushed, with which secret). A YAML file given
to ``heed serve --settings FILE``; the command line's flags win over it.

```yaml
webhook:
  url: https://app.example.org/heed        # https, or http to a receiver on this machine
  secret_file: /etc/heed/webhook-secret    # one line: whsec_ and base64 (Standard Webhooks)
retention:                                 # how long the state keeps what grows (heed_embedded.retention)
  requests: 400d                           # the request and skip log (heed serve --keep-requests)
  events: 400d
  dead_letters: 14d
  text_versions: 30d
desk:                                      # the site owners' desk (heed.desk); `desk: false` turns it off here
  enabled: true                            # whatever the profile's desk says, for this installation
  listen: 127.0.0.1:8080                   # heed serve --desk; behind the info host's proxy at /desk/
  forwarded: true                          # that proxy sets X-Forwarded-For (and -Proto): the client's address
  resolver: 127.0.0.53:53                  # DNS TXT proofs are asked of this resolver (none: file proofs only)
```

Every mistake is one line naming the key (``SettingsError``, exit 2); the secret itself is never
repeated in one."""
from __future__ import annotations

import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from heed_core.errors import ConfigError
from heed_core.webhook import Endpoint, WebhookError, check_url, parse_secret

__all__ = ["Settings", "SettingsError", "load_settings", "reachable", "webhook_endpoint"]

_KEYS = {"webhook": {"url", "secret_file"}, "retention": {"requests", "events", "dead_letters", "text_versions"},
         "desk": {"enabled", "listen", "forwarded", "resolver"}}


class SettingsError(ConfigError):
    code = "settings"


@dataclass(frozen=True)
class Settings:
    webhook_url: str | None = None
    webhook_secret_file: str | None = None
    retention: dict[str, str] = field(default_factory=dict)
    desk_enabled: bool | None = None  # None: as the profile says
    desk_listen: str | None = None
    desk_forwarded: bool = False
    desk_resolver: str | None = None


def load_settings(path: str | None) -> Settings:
    """The settings file at ``path`` (None: none), checked key by key."""
    if path is None:
        return Settings()
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"--settings: cannot read {path} ({getattr(exc, 'strerror', None) or exc})") from exc
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise SettingsError(f"--settings: {path} is not YAML{where}") from exc
    if not isinstance(data, dict):
        raise SettingsError(f"--settings: {path} is not a mapping of settings")
    if isinstance(data.get("desk"), bool):
        data["desk"] = {"enabled": data["desk"]}  # `desk: true|false` is short for desk.enabled
    for key, value in data.items():
        if key not in _KEYS:
            raise SettingsError(f"--settings: {path}: unknown key {key!r} (known: {', '.join(sorted(_KEYS))})")
        if not isinstance(value, dict):
            raise SettingsError(f"--settings: {path}: {key}: a mapping of {', '.join(sorted(_KEYS[key]))}")
        for sub in value:
            if sub not in _KEYS[key]:
                raise SettingsError(f"--settings: {path}: unknown key {key}.{sub} "
                                    f"(known: {', '.join(sorted(_KEYS[key]))})")
    hook = data.get("webhook") or {}
    for sub in ("url", "secret_file"):
        if sub in hook and not isinstance(hook[sub], str):
            raise SettingsError(f"--settings: {path}: webhook.{sub}: a string")
    secret = hook.get("secret_file")
    if secret is not None and not Path(secret).is_absolute():
        secret = str(Path(path).resolve().parent / secret)  # relative to the settings file
    keep = {k: str(v) for k, v in (data.get("retention") or {}).items()}
    desk = data.get("desk") or {}
    for sub, kind in (("enabled", bool), ("forwarded", bool), ("listen", str), ("resolver", str)):
        if sub in desk and not isinstance(desk[sub], kind):
            raise SettingsError(f"--settings: {path}: desk.{sub}: {'true or false' if kind is bool else 'HOST:PORT'}")
    return Settings(webhook_url=hook.get("url"), webhook_secret_file=secret, retention=keep,
                    desk_enabled=desk.get("enabled"), desk_listen=desk.get("listen"),
                    desk_forwarded=bool(desk.get("forwarded", False)), desk_resolver=desk.get("resolver"))


def webhook_endpoint(url: str | None, secret_file: str | None, *, url_flag: str = "--webhook",
                     secret_flag: str = "--webhook-secret-file") -> Endpoint | None:
    """The endpoint the settings and flags name (None: no webhook). A URL without a secret, a
    secret without a URL, a URL that is not one, or a secret that is not one: one line each."""
    if url is None and secret_file is None:
        return None
    if url is None:
        raise WebhookError(f"{secret_flag} without {url_flag}: say where to post")
    if secret_file is None:
        raise WebhookError(f"{url_flag} without {secret_flag}: every delivery is signed (a file holding "
                           "whsec_ and base64)")
    check_url(url, url_flag)
    try:
        text = Path(secret_file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise WebhookError(f"{secret_flag}: cannot read {secret_file} "
                           f"({getattr(exc, 'strerror', None) or type(exc).__name__})") from exc
    return Endpoint(url, parse_secret(text, f"{secret_flag} {secret_file}"))


def reachable(url: str, timeout_s: float = 5.0) -> None:
    """A TCP connection to the URL's host and port, or ``WebhookError`` saying why not (a name
    that does not resolve, a port nobody listens on): a typo is told at start, not a day later."""
    parts = urlsplit(url)
    host, port = parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except socket.gaierror as exc:
        raise WebhookError(f"--webhook: {host} does not resolve ({exc.strerror or exc})") from exc
    except OSError as exc:
        raise WebhookError(f"--webhook: cannot reach {parts.scheme}://{host}:{port} "
                           f"({exc.strerror or type(exc).__name__})") from exc


def as_dict(settings: Settings) -> dict[str, Any]:
    return {"webhook": {"url": settings.webhook_url, "secret_file": settings.webhook_secret_file}}

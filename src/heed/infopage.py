"""A bot's public info page (in its language and in English), its ips.json and, for a bot that
signs its requests, its signed key directory, generated from its profile (and its key), so the
page cannot promise what the profile does not do (never typed twice)."""
from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from heed_core.identity.directory import DirectoryDocument, directory_url, signed_directory
from heed_core.identity.keys import IdentityError, read_key_file
from heed_core.identity.settings import WebBotAuthSettings
from heed_core.profile import Profile, ProfileError

from heed.pages.content import Signing, build_page, page_languages, page_path
from heed.pages.model import Facts, Items, Para, Sub, plain
from heed.pages.ranges import ranges_json
from heed.pages.render import render

__all__ = ["METADATA_SUFFIX", "SIGNED_HEADERS", "Signing", "facts", "ips_json", "page_languages",
           "render_info_page", "signing_key", "write_info_page", "write_key_directory"]

# The key directory's signature travels in response headers, which a static host (an S3 object)
# keeps as metadata: the sidecar next to the directory holds them for `aws s3 cp --metadata`.
METADATA_SUFFIX = ".s3-metadata.json"
SIGNED_HEADERS = ("Signature", "Signature-Input", "Content-Digest")


def signing_key(p: Profile) -> Any:
    """The Ed25519 key of a bot that signs (its ``key_file``, else its ``key_secret`` on AWS), or
    None. A key that cannot be read is a ``ProfileError`` in one line."""
    settings = WebBotAuthSettings.from_profile(p)
    return _signing_key(settings) if settings.enabled else None


def _signing(p: Profile, key: Any) -> Signing | None:
    if key is None or not p.identity.web_bot_auth.enabled:
        return None
    from heed_core.identity.directory import directory_url
    from heed_core.identity.keys import thumbprint

    agent = str(p.identity.web_bot_auth.signature_agent)
    return Signing(agent=agent, directory=directory_url(agent), keyids=(thumbprint(key),))


def _page(p: Profile, lang: str | None, key: Any) -> Any:
    if key is None and p.identity.web_bot_auth.enabled:
        key = signing_key(p)
    return build_page(p, lang or p.language, _signing(p, key))


def render_info_page(p: Profile, lang: str | None = None, *, key: Any = None) -> str:
    """The page as one HTML5 document, in `lang` (default: the bot's language). A bot that signs
    names its key id: from ``key``, else from the key its profile names."""
    return render(_page(p, lang, key))


def facts(p: Profile, lang: str | None = None, *, key: Any = None) -> list[str]:
    """Every sentence of the page, as plain text, in page order (for tests and review)."""
    page = _page(p, lang, key)
    out = [page.title, plain(page.lead)]

    def walk(block: object) -> None:
        if isinstance(block, Para):
            out.append(plain(block.text))
        elif isinstance(block, Items):
            out.extend(plain(t) for t in block.items)
        elif isinstance(block, Facts):
            for label, values in block.rows:
                out.append(label + ": " + " ".join(plain(v) for v in values))
        elif isinstance(block, Sub):
            out.append(block.heading)
            for inner in block.blocks:
                walk(inner)

    for section in page.sections:
        out.append(section.heading)
        for block in section.blocks:
            walk(block)
    return out


def _created() -> datetime:
    # Reproducible builds: SOURCE_DATE_EPOCH fixes the creationTime of ips.json.
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        return datetime.fromtimestamp(int(epoch), tz=UTC)
    return datetime.now(UTC)


def ips_json(p: Profile, created: datetime | None = None) -> str:
    """WANNADO-02: the egress list, machine-readable (googlebot.json's shape)."""
    return ranges_json(p, created or _created())


def _signing_key(settings: WebBotAuthSettings) -> Any:
    try:
        if settings.key_file:
            return read_key_file(settings.key_file)
        from heed_aws.secrets import SecretUnavailable, load_private_key

        try:
            return load_private_key(str(settings.key_secret))
        except SecretUnavailable as exc:
            raise ProfileError(f"identity.web_bot_auth.key_secret: {exc} (try again later)") from exc
    except IdentityError as exc:
        raise ProfileError(f"identity.web_bot_auth: {exc}") from exc


def key_directory_document(p: Profile, created: datetime | None = None) -> DirectoryDocument | None:
    """The signed key directory to publish at the Signature-Agent URL, or None when the bot does
    not sign its requests. Its signature expires (30 days): publish it again before then."""
    settings = WebBotAuthSettings.from_profile(p)
    if not (settings.enabled and settings.signature_agent):
        return None
    return signed_directory([_signing_key(settings)], url=directory_url(settings.signature_agent),
                            now=(created or _created()).timestamp())


def _file_for(out: Path, host: str, url_path: str) -> Path:
    rel = url_path.strip("/")
    if not url_path.endswith((".html", ".json")):
        rel = f"{rel}/index.html" if rel else "index.html"
    return out / host / rel


def write_key_directory(p: Profile, key: Any, out: Path, *, now: float | None = None) -> list[Path]:
    """Web Bot Auth: the signed key directory where the Signature-Agent says it is, as its host
    publishes it (``out/<host>/.well-known/http-message-signatures-directory``), and beside it
    the headers it must be served with (``....headers.json``: its media type and its own
    signature). Signed at ``now`` (default: the real time; the signature outlives a republication,
    see ``heed_core.identity.directory``)."""
    from heed_core.identity.directory import directory_url, signed_directory

    url = directory_url(str(p.identity.web_bot_auth.signature_agent))
    when = datetime.now(UTC).timestamp() if now is None else now
    doc = signed_directory([key], url=url, now=when)
    parts = urlsplit(url)
    path = out / parts.netloc / parts.path.lstrip("/")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(doc.body)
    headers = path.with_name(path.name + ".headers.json")
    headers.write_text(json.dumps(doc.headers, indent=2) + "\n", encoding="utf-8")
    meta = path.with_name(path.name + METADATA_SUFFIX)
    meta.write_text(json.dumps({k.lower(): v for k, v in doc.headers.items() if k in SIGNED_HEADERS}, indent=2)
                    + "\n", encoding="utf-8")
    return [path, headers, meta]


def write_info_page(p: Profile, out: Path, *, langs: tuple[str, ...] | None = None,
                    created: datetime | None = None) -> list[Path]:
    """Write the pages (and ips.json, and a signing bot's key directory) under `out` as the hosts
    publish them: `out/<host>/<info path>/index.html` (bot's language), `.../index.en.html`,
    `out/<host>/<ips path>`, `out/<directory host>/<directory path>` (see write_key_directory)."""
    chosen = langs or page_languages(p)
    for lang in chosen:
        if lang not in page_languages(p):
            raise ProfileError(f"--lang: {lang!r} is not a page language of {p.name} "
                               f"({', '.join(page_languages(p))})")
    key = signing_key(p)  # read once: the pages name its id, the directory publishes it
    host = urlsplit(p.info_url).netloc
    paths = []
    for lang in chosen:
        path = _file_for(out, host, page_path(p, lang))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_info_page(p, lang, key=key), encoding="utf-8")
        paths.append(path)
    if p.egress.ips and p.egress.ips_json_path:
        path = _file_for(out, host, p.egress.ips_json_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(ips_json(p, created), encoding="utf-8")
        paths.append(path)
    if key is not None:
        paths += write_key_directory(p, key, out, now=created.timestamp() if created else None)
    return paths

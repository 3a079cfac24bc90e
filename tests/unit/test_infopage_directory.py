"""`heed info-page` writes the Web Bot Auth key directory too, laid out as the info host serves it:
the body at the Signature-Agent URL's path, its signature headers beside it for the upload."""
from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from heed_core.identity.directory import DIRECTORY_PATH, MEDIA_TYPE
from heed_core.identity.keys import write_new_key_file
from heed_core.identity.verify import verify_directory
from heed_core.profile import ProfileError, load_profile, load_profile_data

from heed import cli
from heed.infopage import METADATA_SUFFIX, write_info_page

from tests.support.bots import own_identity

CREATED = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)


def _signing(key_file: Path, agent: str = "https://aube.news") -> dict:
    return {"extends": "aubebot", "identity": {"web_bot_auth": {
        "enabled": True, "key_file": str(key_file), "signature_agent": agent}}}


def test_a_signing_bot_gets_its_key_directory_and_the_headers_to_serve_it_with(tmp_path: Path) -> None:
    # GIVEN AubeBot signing its requests, its Signature-Agent the bare origin of its info host
    key = tmp_path / "key.pem"
    write_new_key_file(key)
    out = tmp_path / "site"
    # WHEN the info page is written
    paths = write_info_page(load_profile_data(_signing(key)), out, created=CREATED)
    # THEN the directory sits at the well-known path of that host, next to the pages
    body_path = out / "aube.news" / DIRECTORY_PATH.lstrip("/")
    meta_path = body_path.with_name(body_path.name + METADATA_SUFFIX)
    assert [p.relative_to(out).as_posix() for p in paths] == [
        "aube.news/robot/index.html", "aube.news/robot/index.en.html",
        "aube.news/.well-known/http-message-signatures-directory",
        "aube.news/.well-known/http-message-signatures-directory.headers.json",
        "aube.news/.well-known/http-message-signatures-directory" + METADATA_SUFFIX]
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    assert set(meta) == {"signature", "signature-input", "content-digest"}
    # AND served as they say (the media type, those headers), it verifies as a site checks it
    check = verify_directory(url="https://aube.news" + DIRECTORY_PATH, headers={"Content-Type": MEDIA_TYPE, **meta},
                             body=body_path.read_bytes(), now=CREATED.timestamp() + 3600)
    assert check.valid, check.detail
    assert json.loads(body_path.read_bytes())["keys"][0]["kty"] == "OKP"


def test_a_bot_that_does_not_sign_publishes_no_directory(tmp_path: Path) -> None:
    paths = write_info_page(load_profile("aubebot"), tmp_path, created=CREATED)
    assert not [p for p in paths if ".well-known" in p.as_posix()]


def test_an_unreadable_key_is_one_line_naming_the_section(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    profile = tmp_path / "bot.yaml"
    # (a bot of its own: the CLI publishes no page under AubeBot's name for a profile that extends it)
    profile.write_text(json.dumps({**_signing(tmp_path / "missing.pem"), **own_identity("aubebot")}), encoding="utf-8")
    with pytest.raises(ProfileError, match=r"^identity\.web_bot_auth: "):
        write_info_page(load_profile(str(profile)), tmp_path / "out")
    assert cli.main(["info-page", str(profile), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("heed info-page: identity.web_bot_auth: ") and len(err.splitlines()) == 1

"""The info page says what the bot does with what it reads (its declared AIPREF uses) and, for a
bot that signs its requests, how a site checks one: the directory URL, the key id and, beside it,
the address route (reverse DNS or ips.json). `heed info-page` publishes the signed directory too."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from heed_core.identity.directory import DIRECTORY_PATH
from heed_core.identity.keys import thumbprint, write_new_key_file
from heed_core.identity.verify import verify_directory
from heed_core.profile import BUILTIN_BOTS, Profile, ProfileError, load_profile, load_profile_data

from heed import cli
from heed.infopage import facts, render_info_page, write_info_page
from heed.pages.content import page_languages
from heed.pages.language import shipped

from tests.support.bots import own_identity

MODULES = {tag: shipped(tag) for tag in ("en", "nb", "de", "nl", "it")}
en, de = MODULES["en"], MODULES["de"]
PAGES = [(bot, lang) for bot in BUILTIN_BOTS for lang in page_languages(load_profile(bot))]


def text(p: Profile, lang: str, **kw: Any) -> str:
    return "\n".join(facts(p, lang, **kw))


# --- declared uses ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("bot", "lang"), PAGES)
def test_the_page_names_the_declared_uses_and_what_a_refusal_does(bot: str, lang: str) -> None:
    p = load_profile(bot)
    phrases = MODULES[lang].sentences
    page, words = render_info_page(p, lang), text(p, lang)
    # THEN each declared use is on the page, as code, with its sentence
    for use in p.spec.usage:
        assert f'<code translate="no">{use}</code>' in page
    key = {"search": "u_search", "ai-use": "u_ai_use", "train-ai": "u_train_ai"}
    for use, phrase in key.items():
        said = phrases[phrase].format(label=use) in words
        assert said == (use in p.spec.usage), (use, lang)
    # AND none of the five trains: train-ai is among the uses it names as not made
    assert "train-ai" not in p.spec.usage
    assert phrases["usage_not"].split("{")[0] in words and "train-ai" in words
    assert phrases["usage_refused"] in words
    assert phrases["robots_usage"] in words
    assert f"User-agent: *\nContent-Usage: / {p.spec.usage[-1]}=n</code>" in page


def test_spring_says_it_hands_nothing_to_an_ai_system() -> None:
    words = text(load_profile("springstudiobot"), "en")
    assert "We do not use it for ai-use or train-ai." in words


def test_praha_04_the_site_check_under_a_refusal_is_on_the_page() -> None:
    assert de.sentences["usage_site_check"] in text(load_profile("praha-x"), "de")
    assert en.sentences["usage_site_check"] not in text(load_profile("aubebot"), "en")  # no site check


def test_a_bot_that_declares_no_use_says_nothing_of_uses() -> None:
    p = load_profile_data({"extends": "aubebot", "usage": []})
    assert en.sentences["h_usage"] not in text(p, "en") and "Content-Usage" not in render_info_page(p, "en")


# --- signed requests -------------------------------------------------------------------------------
AGENT = "https://wannado.nl/.well-known/http-message-signatures-directory"


@pytest.fixture()
def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "bot.pem"
    write_new_key_file(path)
    return path


def signing(bot: str, key_file: Path, **extra: Any) -> Profile:
    return load_profile_data({"extends": bot, "identity": {"web_bot_auth": {
        "enabled": True, "key_file": str(key_file), "signature_agent": AGENT}}, **extra})


@pytest.mark.parametrize("lang", ["nl", "en"])
def test_a_signing_bot_says_how_to_verify_with_the_directory_the_key_id_and_the_address(
        key_file: Path, lang: str) -> None:
    # GIVEN WannadoBot signing with a key (and its published addresses with reverse DNS)
    p = signing("wannadobot", key_file)
    from heed_core.identity.keys import read_key_file

    keyid = thumbprint(read_key_file(key_file))
    page, words = render_info_page(p, lang), text(p, lang)
    # THEN the page names the directory (a link), the Signature-Agent and the key id
    assert f'<a href="{AGENT}">{AGENT}</a>' in page
    assert f'<code translate="no">{keyid}</code>' in page
    phrases = MODULES[lang].sentences
    assert phrases["sig_verify"].format(agent=AGENT, keyid=keyid, directory=AGENT) in words
    # AND the address route beside it: reverse DNS, shown above it
    assert phrases["sig_or_rdns"] in words
    assert words.index(phrases["verify"]) < words.index(phrases["sig_or_rdns"])


def test_without_reverse_dns_the_route_is_ips_json(key_file: Path) -> None:
    p = signing("wannadobot", key_file, egress={"reverse_dns": None})
    words = text(p, "en")
    assert en.sentences["sig_or_ips"].format(link="/crawler/ips.json") in words
    assert en.sentences["sig_or_rdns"] not in words


def test_without_published_addresses_no_route_is_promised(key_file: Path) -> None:
    words = text(signing("aubebot", key_file), "en")
    assert "Web Bot Auth" in words
    assert en.sentences["sig_or_rdns"] not in words and "ips.json" not in words


def test_a_bot_that_does_not_sign_says_nothing_of_signatures() -> None:
    for bot, lang in PAGES:
        assert "Web Bot Auth" not in text(load_profile(bot), lang), bot


def test_a_signing_page_without_its_key_is_refused(tmp_path: Path) -> None:
    p = signing("aubebot", tmp_path / "absent.pem")
    with pytest.raises(ProfileError, match=r"^identity\.web_bot_auth: .*absent\.pem: no such key file"):
        render_info_page(p)


# --- the directory, published beside the page -------------------------------------------------------
def test_info_page_writes_the_signed_directory_that_verifies(key_file: Path, tmp_path: Path) -> None:
    # GIVEN a signing WannadoBot WHEN its pages are written
    p = signing("wannadobot", key_file)
    out = tmp_path / "site"
    paths = write_info_page(p, out)
    body_path = out / "wannado.nl" / DIRECTORY_PATH.lstrip("/")
    headers_path = body_path.with_name(body_path.name + ".headers.json")
    assert paths[-3:-1] == [body_path, headers_path]  # (the last: the same headers as S3 object metadata)
    # THEN the directory is there, with the headers it must be served with, and it verifies now
    body, headers = body_path.read_bytes(), json.loads(headers_path.read_text(encoding="utf-8"))
    check = verify_directory(url=AGENT, headers=headers, body=body, now=time.time())
    assert check.valid, check
    # AND its key is the one the page names
    from heed_core.identity.keys import read_key_file

    (kid,) = check.keys
    assert kid == thumbprint(read_key_file(key_file))
    assert kid in (out / "wannado.nl" / "crawler" / "index.html").read_text(encoding="utf-8")


def test_the_cli_writes_a_signing_bots_directory_and_a_bad_key_is_one_line(
        key_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bot = tmp_path / "bot.yaml"
    bot.write_text(json.dumps({**own_identity("aubebot"), "identity": {"web_bot_auth": {
        "enabled": True, "key_file": str(key_file),
        "signature_agent": "https://aube.news/.well-known/http-message-signatures-directory"}}}), encoding="utf-8")
    assert cli.main(["info-page", str(bot), "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out.split()
    assert printed[-3:] == [str(tmp_path / "out" / "aube.news" / ".well-known" / name) for name in (
        "http-message-signatures-directory", "http-message-signatures-directory.headers.json",
        "http-message-signatures-directory.s3-metadata.json")]
    # WHEN the key is readable by others THEN one line, exit 2
    key_file.chmod(0o644)
    assert cli.main(["info-page", str(bot), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("heed info-page: identity.web_bot_auth: ") and "chmod 600" in err and err.count("\n") == 1

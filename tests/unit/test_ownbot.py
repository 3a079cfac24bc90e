"""A bot of its own (issue 19): `heed new-bot` writes a profile to fill in, `heed profile check`
says what is left, and an identity is never inherited by accident (info-page refuses it; local
run and conformance warn once and go on)."""
from __future__ import annotations

from pathlib import Path

import pytest

from heed_core.bundle import content_hash
from heed_core.profile import BUILTIN_BOTS, load_profile, load_profile_data

from heed.botcheck import identity_problem, inherited_identity, unwritten
from heed.cli import main
from heed.conformance.catalogue import catalogue
from heed.conformance.model import Proof
from heed.ownbot import new_bot_text, robots_token_for

from tests.support.bots import own_identity, written


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err



def broken_numbers(profile_ref: str, base: str) -> list[str]:
    rules, _ = catalogue(base)
    out = []
    profile = load_profile(profile_ref)
    for rule in rules:
        proof = Proof()
        for number in rule.numbers:
            number.judge(profile, proof)
        if not proof.ok:
            out.append(rule.id)
    return out


# --- new-bot --------------------------------------------------------------------------------------

def test_new_bot_writes_a_profile_to_fill_in_and_profile_check_lists_what_is_left(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    # GIVEN a new bot, Italian, on AubeBot's numbers
    code, out, _ = run(capsys, "new-bot", "mybot", "--language", "it", "--extends", "aubebot")
    assert code == 0 and out.strip() == "wrote mybot.yaml: fill in every WRITE ME, then: heed profile check mybot.yaml"
    text = Path("mybot.yaml").read_text(encoding="utf-8")
    # THEN it extends AubeBot, and each number says which promise it keeps
    assert "\nextends: aubebot\n" in text
    assert "  min_delay_s: 1.5  # COMMON-05, AUBE-09\n" in text
    assert "# AUBE-09: At least 1500 ms from the end of one request to a host to the start of the next.\n" in text
    assert "      per_source_per_window: 5  # AUBE-10\n" in text
    assert "#   AUBE-07: Takes none of the site's images." in text  # a promise no number makes
    # AND its identity is its own: a name, a token, a user agent carrying the info URL
    profile = load_profile("mybot.yaml")
    assert (profile.name, profile.robots_token, profile.language) == ("mybot", "Mybot", "it")
    assert profile.user_agent == "Mybot/0.1 (+https://write-me.invalid/mybot)" and identity_problem(
        "mybot.yaml", profile) is None
    # AND profile check lists every value still to write, one a line, exit 1
    code, out, _ = run(capsys, "profile", "check", "mybot.yaml")
    keys = [line.split(": ")[1] for line in out.splitlines()[:-1]]
    assert code == 1 and keys == [
        "user_agent", "info_url", "contact", *[f"info_page.texts.{lang}.{k}" for lang in ("it", "en")
                                                for k in ("lead", "about[0]", "operator", "keeps[0]")], "usage"]
    assert "mybot.yaml: info_page.texts.it.operator: still to write (who runs the bot (in Italiano))" in out
    assert out.splitlines()[-1] == "mybot.yaml: 12 to write before it is published or deployed"
    # WHEN every WRITE ME is written THEN it is ready, with its content hash
    Path("mybot.yaml").write_text(written(text), encoding="utf-8")
    code, out, _ = run(capsys, "profile", "check", "mybot.yaml")
    sha = content_hash(load_profile("mybot.yaml"))
    assert (code, out) == (0, f"mybot.yaml: ready: mybot, its own identity, every sentence written (sha256 {sha})\n")


@pytest.mark.parametrize("base", BUILTIN_BOTS)
@pytest.mark.parametrize("language", ["en", "de"])
def test_a_new_bot_once_written_keeps_every_number_its_base_promises(base: str, language: str, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "my-bot.yaml"
    path.write_text(written(new_bot_text("my-bot", language, base), "my-bot"), encoding="utf-8")
    code, out, _ = run(capsys, "profile", "check", str(path))
    assert code == 0, out
    # THEN every number its base promises holds on it, but WannadoBot's published addresses, which are
    # WannadoBot's own: a new bot has its addresses after its first deploy (WANNADO-02)
    assert broken_numbers(str(path), base) == (["WANNADO-02"] if base == "wannadobot" else [])
    profile = load_profile(str(path))
    assert profile.egress.ips == () and profile.egress.reverse_dns is None
    assert inherited_identity(profile, load_profile(base)) == []
    # AND its page can be written
    code, _, err = run(capsys, "info-page", str(path), "--out", str(tmp_path / "site"))
    assert code == 0, err
    assert (tmp_path / "site" / "bots.example.org" / "my-bot" / "index.html").is_file()


def test_new_bot_defaults_to_the_most_careful_base(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run(capsys, "new-bot", "careful", "--language", "nb", "--out", str(tmp_path / "c.yaml"))
    assert code == 0
    profile = load_profile(str(tmp_path / "c.yaml"))
    assert "\nextends: springstudiobot\n" in (tmp_path / "c.yaml").read_text(encoding="utf-8")
    assert profile.politeness.min_delay_s == 10 and profile.robots.on_401_403 == "deny"


@pytest.mark.parametrize(("argv", "message"), [
    (["aubebot", "--language", "it"], "NAME: 'aubebot' is a built-in bot's name; a bot of your own needs its own"),
    (["My_Bot", "--language", "en"], "NAME: 'My_Bot' is not a bot name (lower-case letters, digits and '-', up to 41)"),
    (["b42", "--language", "french"], "--language: 'french' is not a BCP 47 language tag"),
    (["b42", "--language", "pt_BR"], "--language: 'pt_BR' is not a BCP 47 language tag"),
    (["b42", "--language", "en", "--extends", "googlebot"], "--extends: 'googlebot' is not a built-in bot"),
    (["42", "--language", "en"], "NAME: '42' has no letter to make its robots.txt product token from"),
])
def test_new_bot_mistakes_are_one_line(argv: list[str], message: str, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "new-bot", *argv)
    assert (code, out) == (2, "") and err.startswith(f"heed new-bot: {message}") and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_new_bot_never_overwrites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "mine.yaml"
    out.write_text("mine\n", encoding="utf-8")
    code, _, err = run(capsys, "new-bot", "mine", "--language", "en", "--out", str(out))
    assert code == 2 and err == f"heed new-bot: --out: {out} exists (give another --out, or remove it)\n"
    assert out.read_text(encoding="utf-8") == "mine\n"


def test_robots_tokens_are_made_of_the_name_letters() -> None:
    assert [robots_token_for(n) for n in ("mybot", "my-bot", "news42", "a-b-c")] == ["Mybot", "MyBot", "News", "ABC"]


# --- identity is never inherited by accident ------------------------------------------------------

def test_info_page_of_a_derived_profile_without_its_identity_exits_2_naming_the_keys(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a profile that extends AubeBot and changes only a number
    mine = tmp_path / "mybot.yaml"
    mine.write_text("extends: aubebot\npoliteness:\n  min_delay_s: 3\n", encoding="utf-8")
    # WHEN its page is asked for THEN one line names every identity key it still takes from AubeBot
    code, out, err = run(capsys, "info-page", str(mine), "--out", str(tmp_path / "site"))
    assert (code, out) == (2, "")
    assert err == (f"heed info-page: {mine}: identity inherited from aubebot: name, user_agent, robots_token, "
                   "info_url, contact, info_page.texts (a bot of its own sets its own; heed new-bot NAME --language LL "
                   "--extends aubebot writes them to fill in)\n")
    assert not (tmp_path / "site").exists()  # nothing under AubeBot's name was written


def test_a_sentence_copied_from_the_base_is_still_the_bases(tmp_path: Path) -> None:
    mine = own_identity("aubebot")
    mine["info_page"]["texts"]["en"]["operator"] = load_profile("aubebot").data["info_page"]["texts"]["en"]["operator"]
    mine["contact"] = "robot@aube.news"
    profile = load_profile_data(mine)
    assert inherited_identity(profile, load_profile("aubebot")) == ["contact", "info_page.texts.en.operator"]


def test_a_bots_published_addresses_are_its_own() -> None:
    # WannadoBot's addresses and reverse DNS name are WannadoBot's: a bot that keeps them says it is WannadoBot
    profile = load_profile_data(own_identity("wannadobot"))
    assert inherited_identity(profile, load_profile("wannadobot")) == ["egress.ips", "egress.reverse_dns"]
    ours = load_profile_data({**own_identity("wannadobot"), "egress": {"ips": ["192.0.2.7/32"], "reverse_dns": None,
                                                                       "ips_json_path": None}})
    assert inherited_identity(ours, load_profile("wannadobot")) == []


def test_info_page_refuses_a_page_still_marked_write_me(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mybot.yaml"
    path.write_text(new_bot_text("mybot", "en", "aubebot"), encoding="utf-8")
    code, _, err = run(capsys, "info-page", str(path), "--out", str(tmp_path / "site"))
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"heed info-page: {path}: still to write: user_agent, info_url, contact, "
                          "info_page.texts.en.lead, info_page.texts.en.about[0], ")
    assert [k for k, _ in unwritten(load_profile(str(path)))][-2:] == ["info_page.texts.en.keeps[0]", "usage"]


def test_conformance_of_a_derived_profile_warns_once_and_goes_on(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "aube-slow.yaml"
    mine.write_text("extends: aubebot\npoliteness:\n  min_delay_s: 3\n", encoding="utf-8")
    code, out, err = run(capsys, "conformance", "--bot", str(mine), "--rule", "COMMON-09")
    assert code == 0 and "exit 0: every rule holds" in out
    assert err.count("\n") == 1 and err.startswith(f"heed: warning: {mine}: identity inherited from aubebot: name,")
    assert err.rstrip().endswith("sites would see 'AubeBot/0.1 (+https://aube.news/robot; collecte RSS polie)'")


def test_a_built_in_bot_and_a_bot_of_its_own_have_no_identity_problem() -> None:
    assert identity_problem("aubebot", load_profile("aubebot")) is None
    assert inherited_identity(load_profile_data(own_identity("praha-x")), load_profile("praha-x")) == []


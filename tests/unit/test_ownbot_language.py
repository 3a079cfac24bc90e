"""A bot of its own in any language, declaring what it says of itself (issue 36): the page's
sentences are a data file per language, a language Heed has none for is a file `heed new-bot`
writes to translate and `heed profile check` lists line by line; the AIPREF uses are written,
never inherited; a number looser than the base bot's promise is a warning naming the rule."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from heed_core.bundle import bundle_text, content_hash, load_deployed
from heed_core.profile import ProfileError, load_profile, load_profile_data

from heed.cli import main
from heed.infopage import facts, render_info_page
from heed.pages.language import REFERENCE, built_in, problems, shipped, to_translate
from heed.pages.words import Words

from tests.support.bots import own_identity, translated, written

ROOT = Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _english_leaves(*, desk: bool = False) -> list[str]:
    """English's keys, the desk's words (``desk.*``) only when asked: only a bot with a desk needs them."""
    def walk(value: object, at: str) -> list[str]:
        if isinstance(value, dict):
            return [k for key, v in value.items() for k in walk(v, f"{at}.{key}" if at else str(key))]
        if isinstance(value, list):
            return [k for i, v in enumerate(value) for k in walk(v, f"{at}[{i}]")]
        return [at] if isinstance(value, str) else []

    leaves = walk(yaml.safe_load((ROOT / "src/heed/pages/languages/en.yaml").read_text(encoding="utf-8")), "")
    return [k for k in leaves if desk or not k.startswith("desk.")]


@pytest.fixture
def french(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Path:
    """`heed new-bot mybot --language fr --extends aubebot` in an empty folder."""
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "new-bot", "mybot", "--language", "fr", "--extends", "aubebot")
    assert (code, out) == (0, "wrote mybot.yaml and mybot.fr.yaml (the page's sentences, to translate): fill in "
                              "every WRITE ME, then: heed profile check mybot.yaml\n")
    return tmp_path


def _write_all(folder: Path) -> None:
    """What a user writes: the profile's WRITE ME values, and every sentence in "French"."""
    (folder / "mybot.yaml").write_text(written((folder / "mybot.yaml").read_text(encoding="utf-8")),
                                       encoding="utf-8")
    text = translated((folder / "mybot.fr.yaml").read_text(encoding="utf-8"), "fr")
    text = text.replace('name: "[fr] English"', 'name: "Français"').replace('decimal: "[fr] ."', 'decimal: ","')
    (folder / "mybot.fr.yaml").write_text(text, encoding="utf-8")


# --- pages as data ------------------------------------------------------------------------------------

def test_each_built_in_language_is_one_data_file_and_no_module() -> None:
    # GIVEN the pages' room THEN its languages are data files read by one renderer, no module per language
    assert built_in() == ("de", "en", "it", "nb", "nl")
    modules = sorted(p.name for p in (ROOT / "src/heed/pages").glob("*.py"))
    assert not set(modules) & {f"{tag}.py" for tag in built_in()}, modules
    for tag in built_in():
        # AND each is complete: every key English has, no placeholder a sentence is not given
        assert problems(yaml.safe_load((ROOT / f"src/heed/pages/languages/{tag}.yaml").read_text("utf-8"))) == []
        assert isinstance(shipped(tag).words, Words)


def test_the_file_to_translate_is_englishs_with_every_value_marked() -> None:
    data = yaml.safe_load(to_translate("fr"))
    found = problems(data)
    # every word and sentence of English, each one line, each still to translate with the English beside it
    assert [at for at, _ in found] == _english_leaves()
    assert all(what.startswith("still to translate (in English: ") for _, what in found)
    assert ("sentences.h_who", "still to translate (in English: Who we are and why we come)") in found


def test_a_sentences_file_with_a_mistake_says_which_key_one_line_each() -> None:
    data = yaml.safe_load(translated(to_translate("fr"), "fr"))
    data["sentences"]["h_whoo"] = data["sentences"].pop("h_who")
    data["sentences"]["min_delay"] = "Au moins {delay} entre deux requêtes."
    del data["words"]["nouns"]["page"]
    assert problems(data) == [
        ("sentences.min_delay", "{delay} is not a placeholder of this sentence (it has: {d})"),
        ("sentences.h_whoo", "unknown key (did you mean h_who?)"),
        ("words.nouns.page[0]", "missing (in English: page)"),
        ("words.nouns.page[1]", "missing (in English: pages)"),
        ("sentences.h_who", "missing (in English: Who we are and why we come)"),
    ]


# --- a sixth language: new-bot, profile check, info-page ---------------------------------------------

def test_new_bot_in_french_lists_each_sentence_to_write_then_makes_a_french_page(
        french: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN the profile and, beside it, the sentences to translate, named by the profile
    profile_text = (french / "mybot.yaml").read_text(encoding="utf-8")
    assert '\n  sentences:\n    fr: "mybot.fr.yaml"\n' in profile_text
    to_write = [line for line in (french / "mybot.fr.yaml").read_text(encoding="utf-8").splitlines()
                if not line.startswith("#")]
    # (the desk's words too: the file holds every key English has, for the day the bot has a desk)
    assert sum(line.count('"WRITE ME: ') for line in to_write) == len(_english_leaves(desk=True))
    # WHEN profile check is asked THEN it lists each French sentence to write, one line each, exit 1
    code, out, _ = run(capsys, "profile", "check", "mybot.yaml")
    lines = out.splitlines()
    french_lines = [line for line in lines if line.startswith("mybot.fr.yaml: ")]
    assert code == 1 and [line.split(": ")[1] for line in french_lines] == _english_leaves()
    assert "mybot.fr.yaml: sentences.h_fetch: still to translate (in English: What we fetch)" in french_lines
    assert lines[-1] == f"mybot.yaml: {12 + len(_english_leaves())} to write before it is published or deployed"
    # AND info-page refuses, in one line naming the file
    code, _, err = run(capsys, "info-page", "mybot.yaml", "--out", "site")
    assert code == 2 and err.count("\n") == 1
    assert f"{len(_english_leaves())} sentences in mybot.fr.yaml (heed profile check" in err
    # WHEN everything is written (programmatically here) THEN the profile is ready
    _write_all(french)
    code, out, _ = run(capsys, "profile", "check", "mybot.yaml")
    assert code == 0 and out.startswith("mybot.yaml: ready: mybot, its own identity, every sentence written"), out
    # AND info-page makes a French page (and the English one beside it), each naming the other
    code, out, err = run(capsys, "info-page", "mybot.yaml", "--out", "site")
    assert code == 0, err
    page = french / "site/bots.example.org/mybot/index.html"
    assert out.split() == [str(Path("site/bots.example.org/mybot/index.html")),
                           str(Path("site/bots.example.org/mybot/index.en.html"))]
    html = page.read_text(encoding="utf-8")
    assert '<html lang="fr">' in html and '<section id="fetch" lang="fr"' in html
    assert "<h2 id=\"fetch-h\">[fr] What we fetch</h2>" in html
    assert "[fr] At least 1,5 [fr] seconds (1500 ms) between two requests" in html  # its own decimal mark
    english = (french / "site/bots.example.org/mybot/index.en.html").read_text(encoding="utf-8")
    assert '<html lang="en">' in english and 'hreflang="fr" lang="fr">Français</a>' in english
    assert "<h2 id=\"fetch-h\">What we fetch</h2>" in english


def test_the_sentences_travel_with_the_profile_the_stack_carries(french: Path) -> None:
    # GIVEN a French bot, written
    _write_all(french)
    profile = load_profile("mybot.yaml")
    # WHEN heed deploy packages it into the profile layer (heed_core.bundle) and a function loads it
    layer = french / "layer"
    layer.mkdir()
    (layer / "mybot.json").write_text(bundle_text(profile), encoding="utf-8")
    deployed = load_deployed("mybot", str(layer), content_hash(profile))
    # THEN the file alone holds the French sentences (no mybot.fr.yaml beside it), under the same hash
    assert deployed.info_page is not None and deployed.info_page.sentences["fr"]["sentences"]["h_fetch"] == \
        "[fr] What we fetch"
    assert render_info_page(deployed, "fr") == render_info_page(profile, "fr")
    # AND the hash the stack runs under covers the words: a changed sentence is another profile
    text = (french / "mybot.fr.yaml").read_text(encoding="utf-8").replace("[fr] What we fetch", "[fr] Ce que")
    (french / "mybot.fr.yaml").write_text(text, encoding="utf-8")
    assert content_hash(load_profile("mybot.yaml")) != content_hash(profile)


def test_heed_deploy_refuses_a_bot_whose_sentences_are_still_to_write(french: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from heed.deploy import DeployError, load

    (french / "mybot.yaml").write_text(written((french / "mybot.yaml").read_text(encoding="utf-8")),
                                       encoding="utf-8")
    with pytest.raises(DeployError, match=rf"^mybot\.fr\.yaml: {len(_english_leaves())} sentences of the info "
                                          r"page still to write \(heed profile check mybot\.yaml lists them\)$"):
        load("mybot.yaml")


def test_a_sentences_file_the_profile_names_must_be_there(tmp_path: Path) -> None:
    profile = tmp_path / "b.yaml"
    profile.write_text(yaml.safe_dump({**own_identity("aubebot"), "language": "fr", "info_page": {
        "sentences": {"fr": "b.fr.yaml"}, "texts": {"fr": own_identity("aubebot")["info_page"]["texts"]["it"],
                                                    "en": own_identity("aubebot")["info_page"]["texts"]["en"]}}}))
    with pytest.raises(ProfileError, match=r"^info_page\.sentences\.fr: no such file .*b\.fr\.yaml \(the page's "):
        load_profile(str(profile))


def test_sentences_in_a_language_the_page_is_not_in_are_refused() -> None:
    mine = own_identity("aubebot")
    mine["info_page"]["sentences"] = {"fr": yaml.safe_load(to_translate("fr"))}
    with pytest.raises(ProfileError, match=r"^info_page\.sentences\.fr: unknown language"):
        load_profile_data(mine)


@pytest.mark.parametrize(("given", "tag"), [("pt-BR", "pt-BR"), ("pt-br", "pt-BR"), ("zh-hant-tw", "zh-Hant-TW"),
                                             ("es-419", "es-419"), ("sr-Latn", "sr-Latn")])
def test_any_bcp_47_tag_is_a_language_for_new_bot(given: str, tag: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "new-bot", "mybot", "--language", given, "--out", str(tmp_path / "mybot.yaml"),
                       "--json")
    assert code == 0
    said = json.loads(out)
    assert said["language"] == tag and said["sentences"] == str(tmp_path / f"mybot.{tag}.yaml")
    profile = load_profile(str(tmp_path / "mybot.yaml"))
    assert profile.language == tag and profile.info_page is not None and set(profile.info_page.sentences) == {tag}


def test_a_language_heed_has_sentences_for_gets_no_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run(capsys, "new-bot", "mybot", "--language", "nl", "--out", str(tmp_path / "mybot.yaml"))
    assert code == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["mybot.yaml"]
    assert "sentences:" not in (tmp_path / "mybot.yaml").read_text(encoding="utf-8")


def test_new_bot_never_overwrites_the_sentences_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "mybot.fr.yaml").write_text("mine\n", encoding="utf-8")
    code, _, err = run(capsys, "new-bot", "mybot", "--language", "fr", "--out", str(tmp_path / "mybot.yaml"))
    assert code == 2 and err == (f"heed new-bot: --out: {tmp_path / 'mybot.fr.yaml'} exists (give another --out, "
                                 "or remove it)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mybot.fr.yaml"]


def test_a_built_in_language_has_no_page_in_a_language_without_a_file() -> None:
    with pytest.raises(ProfileError, match=r"^language: 'fr' has no info-page sentences \(Heed has de, en, it, "):
        render_info_page(load_profile_data({**own_identity("aubebot"), "language": "fr", "info_page": {
            "texts": {"fr": own_identity("aubebot")["info_page"]["texts"]["it"],
                      REFERENCE: own_identity("aubebot")["info_page"]["texts"]["en"]}}}))


# --- AIPREF: declared, never inherited ------------------------------------------------------------

def test_aipref_usage_is_to_write_in_a_new_profile(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    # GIVEN a new bot on AubeBot, which declares search and ai-use
    assert run(capsys, "new-bot", "mybot", "--language", "it", "--extends", "aubebot")[0] == 0
    text = Path("mybot.yaml").read_text(encoding="utf-8")
    # THEN its usage is to write, naming AubeBot's as AubeBot's, and read as none declared until then
    assert '\nusage: "WRITE ME: a list of uses: train-ai, ai-use, search ([] for none)"\n' in text
    assert '(aubebot declares ["search", "ai-use"]: aubebot\'s, not yours)' in re.sub(r"\n# ", " ", text)
    assert load_profile("mybot.yaml").spec.usage == ()
    code, out, _ = run(capsys, "profile", "check", "mybot.yaml")
    assert code == 1 and "mybot.yaml: usage: still to write (a list of uses: train-ai, ai-use, search ([] for none))" \
        in out.splitlines()
    # AND with everything else written, info-page and deploy still refuse, naming usage
    to_write = next(line for line in text.splitlines() if line.startswith("usage: "))
    rest = written(text.replace(to_write, "usage: []")).replace("usage: []", to_write)
    Path("mybot.yaml").write_text(rest, encoding="utf-8")
    code, _, err = run(capsys, "info-page", "mybot.yaml", "--out", "site")
    assert code == 2 and err == ("heed info-page: mybot.yaml: still to write: usage (heed profile check mybot.yaml "
                                 "says what each is)\n")
    from heed.deploy import DeployError, load

    with pytest.raises(DeployError, match=r"^mybot\.yaml: usage: still to write \(a list of uses"):
        load("mybot.yaml")
    # WHEN the user chooses search alone THEN the page says search and not AubeBot's ai-use
    Path("mybot.yaml").write_text(rest.replace(to_write, 'usage: ["search"]'), encoding="utf-8")
    said = "\n".join(facts(load_profile("mybot.yaml"), "en"))
    assert "search: we point people to your page" in said and "ai-use: an AI system works" not in said
    assert "We do not use it for ai-use or train-ai." in said


def test_only_a_key_the_schema_declares_own_may_be_left_to_write() -> None:
    with pytest.raises(ProfileError, match=r"^politeness\.min_delay_s: 'WRITE ME: a gap' is not valid"):
        load_profile_data({**own_identity("aubebot"), "politeness": {"min_delay_s": "WRITE ME: a gap"}})


# --- a number looser than the base's promise: a warning naming the rule ---------------------------

def test_profile_check_warns_of_a_looser_in_flight_limit_and_a_shorter_gap_naming_the_rules(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "new-bot", "mybot", "--language", "it", "--extends", "aubebot")[0] == 0
    text = written(Path("mybot.yaml").read_text(encoding="utf-8"))
    # GIVEN a profile ready but for two numbers: two requests in flight, 1 s between requests to a host
    text = text.replace("  max_in_flight: 1  # AUBE-11", "  max_in_flight: 2")
    text = text.replace("  min_delay_s: 1.5  # COMMON-05, AUBE-09", "  min_delay_s: 1.0")
    Path("mybot.yaml").write_text(text, encoding="utf-8")
    # WHEN profile check is asked THEN each key is one warning naming AubeBot's rule ids, and it is ready: exit 0
    code, out, _ = run(capsys, "profile", "check", "mybot.yaml")
    sha = content_hash(load_profile("mybot.yaml"))
    out_lines = out.splitlines()
    assert code == 0 and out_lines == [
        "mybot.yaml: warning: politeness.min_delay_s = 1.0, promised >= 1.5: breaks aubebot's promises COMMON-05, "
        "AUBE-09 (heed deploy stops at it unless --force)",
        "mybot.yaml: warning: politeness.max_in_flight = 2, promised == 1: breaks aubebot's promise AUBE-11 "
        "(heed deploy stops at it unless --force)",
        f"mybot.yaml: ready: mybot, its own identity, every sentence written (sha256 {sha}), 2 warnings above"]
    code, out, _ = run(capsys, "profile", "check", "mybot.yaml", "--json")
    said = json.loads(out)
    assert code == 0 and said["ready"] and said["warnings"] == out_lines[:2]
    # AND heed deploy, judging the same numbers, stops at the same rules (before any scenario)
    from heed.deploy import PromiseBroken, conformance_gate

    with pytest.raises(PromiseBroken, match=r"^conformance: COMMON-05, AUBE-09, AUBE-11 broken \(COMMON-05: NOT "
                                            r"profile: politeness\.min_delay_s = 1\.0 >= 1\.5; AUBE-09: "):
        conformance_gate("mybot.yaml", load_profile("mybot.yaml"), None)


def test_a_looser_schedule_and_cap_are_warnings_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mybot.yaml"
    text = written(new_bot_text_for("subsidieupdate"))
    text = text.replace('"cron(0 7,9,11,13,15 ? * MON-FRI *)"', '"cron(0 7,8,9,10,11,12,13,14,15 ? * MON-FRI *)"')
    text = text.replace("max_pages_per_host_per_round: 6", "max_pages_per_host_per_round: 9")
    path.write_text(text, encoding="utf-8")
    code, out, _ = run(capsys, "profile", "check", str(path))
    warnings = [line for line in out.splitlines() if ": warning: " in line]
    # one rule binds both (SUBSIDIE-02: five rounds a working day, a handful of pages a round): a line each key
    assert code == 0 and [w.split(": warning: ")[1].split(" ")[0] for w in warnings] == [
        "schedules", "tasks.subsidy.max_pages_per_host_per_round"], out
    assert all(w.endswith("breaks subsidieupdate's promise SUBSIDIE-02 (heed deploy stops at it unless --force)")
               for w in warnings)
    assert "Mon 9 Tue 9 Wed 9 Thu 9 Fri 9 Sat 1 Sun 1, promised subsidy 5-5 a working day, 1-1 a weekend day" \
        in warnings[0]
    assert "tasks.subsidy.max_pages_per_host_per_round = 9, promised <= 6:" in warnings[1]


def new_bot_text_for(base: str) -> str:
    from heed.ownbot import new_bot_text

    return new_bot_text("mybot", "nl", base)


def test_a_built_in_bot_and_a_bot_as_strict_as_its_base_have_no_warning(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "profile", "check", "aubebot")[1].splitlines()[-1].startswith("aubebot: ready: aubebot")
    path = tmp_path / "mybot.yaml"
    path.write_text(written(new_bot_text_for("aubebot")).replace("  min_delay_s: 1.5", "  min_delay_s: 3"),
                    encoding="utf-8")
    code, out, _ = run(capsys, "profile", "check", str(path))
    assert code == 0 and ": warning: " not in out


def test_a_profile_file_carries_the_sentences_of_a_language_heed_has_none_for(tmp_path: Path) -> None:
    # GIVEN a bot in French, its profile naming the file of French sentences beside it
    mine = own_identity("aubebot")
    texts = mine["info_page"]["texts"]
    mine.update(language="fr", info_page={"sentences": {"fr": "ownbot.fr.yaml"},
                                          "texts": {"fr": texts["it"], "en": texts["en"]}})
    (tmp_path / "ownbot.yaml").write_text(yaml.safe_dump(mine, allow_unicode=True), encoding="utf-8")
    (tmp_path / "ownbot.fr.yaml").write_text(translated(to_translate("fr"), "fr"), encoding="utf-8")
    # WHEN it is loaded THEN the profile holds the sentences themselves, and its French page is made of them
    p = load_profile(str(tmp_path / "ownbot.yaml"))
    assert p.info_page is not None and p.info_page.sentences["fr"]["sentences"]["h_fetch"] == "[fr] What we fetch"
    page = render_info_page(p, "fr")
    assert '<html lang="fr">' in page and '<h2 id="fetch-h">[fr] What we fetch</h2>' in page

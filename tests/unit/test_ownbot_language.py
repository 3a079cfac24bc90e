"""A bot of its own in any language, declaring what it says of itself (issue 36): the page's
sentences are a data file per language, a language Heed has none for is a file `heed new-bot`
writes to translate and `heed profile check` lists line by line; the AIPREF uses are written,
never inherited; a number looser than the base bot's promise is a warning naming the rule."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from heed_core.profile import ProfileError, load_profile, load_profile_data

from heed.cli import main
from heed.infopage import render_info_page
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


def _english_leaves() -> list[str]:
    def walk(value: object, at: str) -> list[str]:
        if isinstance(value, dict):
            return [k for key, v in value.items() for k in walk(v, f"{at}.{key}" if at else str(key))]
        if isinstance(value, list):
            return [k for i, v in enumerate(value) for k in walk(v, f"{at}[{i}]")]
        return [at] if isinstance(value, str) else []

    return walk(yaml.safe_load((ROOT / "src/heed/pages/languages/en.yaml").read_text(encoding="utf-8")), "")


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


# --- a language without a file ------------------------------------------------------------------


def test_sentences_in_a_language_the_page_is_not_in_are_refused() -> None:
    mine = own_identity("aubebot")
    mine["info_page"]["sentences"] = {"fr": yaml.safe_load(to_translate("fr"))}
    with pytest.raises(ProfileError, match=r"^info_page\.sentences\.fr: unknown language"):
        load_profile_data(mine)


def test_a_built_in_language_has_no_page_in_a_language_without_a_file() -> None:
    with pytest.raises(ProfileError, match=r"^language: 'fr' has no info-page sentences \(Heed has de, en, it, "):
        render_info_page(load_profile_data({**own_identity("aubebot"), "language": "fr", "info_page": {
            "texts": {"fr": own_identity("aubebot")["info_page"]["texts"]["it"],
                      REFERENCE: own_identity("aubebot")["info_page"]["texts"]["en"]}}}))


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

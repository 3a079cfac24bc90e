"""The desk's words and pages (issue 37): every built-in language has the desk's sentences, each
with the placeholders its page gives it; the info page of a bot with a desk links to it in both
its languages (and a bot without one is unchanged); a bot of its own in a language Heed has no
words for lists the desk's sentences to write only once it has a desk."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from heed_core.profile import BUILTIN_BOTS, load_profile

from heed.cli import main
from heed.infopage import render_info_page
from heed.pages.language import built_in, shipped

from tests.support.bots import translated


def _desk_bot(tmp_path: Path, base: str) -> Path:
    path = tmp_path / f"{base}-desk.yaml"
    path.write_text(yaml.safe_dump({"extends": base, "desk": True}), encoding="utf-8")
    return path


@pytest.mark.parametrize("tag", built_in())
def test_every_language_has_the_desks_words(tag: str) -> None:
    english = shipped("en").desk
    mine = shipped(tag).desk
    assert set(mine) == set(english)
    for key, text in mine.items():
        wanted = set(re.findall(r"\{(\w+)\}", english[key]))
        assert set(re.findall(r"\{(\w+)\}", text)) == wanted, (tag, key)


@pytest.mark.parametrize("bot", BUILTIN_BOTS)
def test_the_info_page_of_a_bot_with_a_desk_links_to_it(bot: str, tmp_path: Path) -> None:
    p = load_profile(str(_desk_bot(tmp_path, bot)))
    origin = "/".join(p.info_url.split("/")[:3])
    mine = render_info_page(p, p.language)
    assert f'<a href="{origin}/desk/">{origin}/desk/</a>' in mine
    if p.language != "en":
        assert f'<a href="{origin}/desk/en/">' in render_info_page(p, "en")
    # and without one, nothing of it
    assert "/desk/" not in render_info_page(load_profile(bot), load_profile(bot).language)


def test_a_bot_of_its_own_writes_the_desks_sentences_once_it_has_a_desk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["new-bot", "mybot", "--language", "fr", "--extends", "aubebot"]) == 0
    french = Path("mybot.fr.yaml")
    text = translated(french.read_text(encoding="utf-8"), "fr")
    # every sentence of the page written, the desk's left as new-bot wrote them (WRITE ME)
    data = yaml.safe_load(text)
    data["desk"] = yaml.safe_load(french.read_text(encoding="utf-8"))["desk"]
    french.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    capsys.readouterr()
    main(["profile", "check", "mybot.yaml"])
    off = [line for line in capsys.readouterr().out.splitlines() if line.startswith("mybot.fr.yaml: desk.")]
    assert off == []  # no desk: nothing of it to write
    profile = yaml.safe_load(Path("mybot.yaml").read_text(encoding="utf-8"))
    profile["desk"] = True
    Path("mybot.yaml").write_text(yaml.safe_dump(profile, allow_unicode=True), encoding="utf-8")
    main(["profile", "check", "mybot.yaml"])
    on = [line for line in capsys.readouterr().out.splitlines() if line.startswith("mybot.fr.yaml: desk.")]
    assert len(on) == len(shipped("en").desk)
    assert "mybot.fr.yaml: desk.h_lines: still to translate (in English: Was this you?)" in on

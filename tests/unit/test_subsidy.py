"""SUBSIDIE-04: only a real change of the main text counts; SUBSIDIE-12: a short summary of it."""
from __future__ import annotations

from pathlib import Path

import pytest

from heed_core.extract.subsidy import content_hash, diff_summary, main_text, normalise

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "subsidy"
V1 = (FIXTURES / "gemeente_isolatie_v1.html").read_bytes()
V2 = (FIXTURES / "gemeente_isolatie_v2_only_widget.html").read_bytes()
V3 = (FIXTURES / "gemeente_isolatie_v3_amount_changed.html").read_bytes()


def test_subsidie_04_main_text_keeps_content_and_drops_page_furniture():
    text = main_text(V1)
    assert text.startswith("Subsidie isolatie eigen woning\n")
    assert "De subsidie bedraagt maximaal € 2.500 per woning." in text
    assert "U bent eigenaar en bewoner van de woning." in text
    for furniture in ("cookies", "Hoofdmenu", "Ondernemen", "Kruimelpad", "Postbus 100", "Zie ook",
                      "Was deze informatie nuttig", "dataLayer", "authenticity_token", "Zoeken"):
        assert furniture not in text


def test_subsidie_04_only_the_visit_widget_changed_hashes_equal():
    # GIVEN two versions differing only in "Laatst bezocht op", "x minuten geleden", tokens
    assert V1 != V2
    # THEN their content hashes are equal, so the revisit stops there
    assert content_hash(main_text(V1)) == content_hash(main_text(V2))


def test_subsidie_04_changed_subsidy_amount_hashes_differently():
    assert content_hash(main_text(V2)) != content_hash(main_text(V3))


def test_subsidie_12_summary_names_the_old_and_new_amount():
    summary = diff_summary(main_text(V2), main_text(V3))
    assert summary.splitlines() == [
        "- De subsidie bedraagt maximaal € 2.500 per woning.",
        "+ De subsidie bedraagt maximaal € 3.000 per woning.",
    ]


def test_subsidie_12_no_change_no_summary():
    assert diff_summary(main_text(V1), main_text(V2)) == ""


def test_subsidie_12_summary_is_short():
    old = "\n".join(f"Regel {i} over de voorwaarden van de regeling." for i in range(50))
    new = "\n".join(f"Regel {i} over de nieuwe voorwaarden van de regeling." for i in range(50))
    summary = diff_summary(old, new, max_chars=120)
    assert 0 < len(summary) <= 120
    assert summary.endswith("…")


def test_subsidie_12_added_sentence_is_reported():
    old = "Aanvragen kan tot 1 juli. Het budget is € 100.000."
    new = "Aanvragen kan tot 1 juli. Let op: het budget is bijna op. Het budget is € 100.000."
    assert diff_summary(old, new) == "+ Let op: het budget is bijna op."


@pytest.mark.parametrize(
    "widget",
    [
        "Laatst bezocht op 12-11-2026 14:03",
        "laatst gewijzigd op: 3 november 2026",
        "Laatst gewijzigd op donderdag 12 november 2026 om 14.03 uur",
        "Geraadpleegd op 12/11/2026, 14:03 uur",
        "Last visited: 2026-11-12T14:03:00Z",
        "Last visited on November 12, 2026",
    ],
)
def test_subsidie_04_volatile_date_widgets_are_removed(widget):
    assert normalise(f"Subsidie voor groene daken.\n{widget}") == "Subsidie voor groene daken."


def test_subsidie_04_relative_times_session_ids_and_csrf_tokens_are_removed():
    a = normalise("Budget 5 minuten geleden bijgewerkt. Link: /wonen;jsessionid=8F3A2C91D0B7 csrf_token=abc123def456")
    b = normalise("Budget 12 minuten geleden bijgewerkt. Link: /wonen;jsessionid=11C0DE22AB33 csrf_token=zzz999yyy888")
    assert a == b
    assert "geleden" not in a and "8F3A" not in a and "abc123" not in a


def test_subsidie_04_amount_after_a_widget_date_is_not_taken_for_a_time():
    # "12.000" must not be read as the time 12.00 and swallowed with the widget
    a = normalise("Laatst gewijzigd op 12-11-2026 12.000 euro beschikbaar")
    b = normalise("Laatst gewijzigd op 12-11-2026 15.000 euro beschikbaar")
    assert a != b
    assert "12.000 euro" in a


def test_subsidie_04_real_dates_in_content_stay():
    text = "De regeling geldt van 1 januari 2026 tot en met 31 december 2027."
    assert normalise(text) == text


def test_subsidie_04_whitespace_does_not_count_and_normalise_is_idempotent():
    a = "  Subsidie\u00a0isolatie \n\n\t eigen   woning\r\n"
    assert normalise(a) == "Subsidie isolatie\neigen woning"
    for text in (a, main_text(V1), main_text(V3)):
        assert normalise(normalise(text)) == normalise(text)
    assert content_hash(a) == content_hash("Subsidie isolatie\neigen woning")


def test_subsidie_04_main_text_falls_back_to_body_and_keeps_article_header():
    body = (b"<html><body><header>Gemeente</header><nav>menu</nav>"
            b"<article><header><h1>Subsidie dakgroen</h1></header><p>Maximaal 500 euro.</p>"
            b"<footer>Bijgewerkt</footer></article><footer>Postbus</footer></body></html>")
    assert main_text(body) == "Subsidie dakgroen\nMaximaal 500 euro.\nBijgewerkt"
    body = (b"<html><body><header>Gemeente</header><div><p>Regeling A.</p><p>Regeling B.</p></div>"
            b"<footer>Postbus</footer></body></html>")
    assert main_text(body) == "Regeling A.\nRegeling B."


def test_subsidie_04_hidden_elements_do_not_count():
    body = b'<main><p>Zichtbaar.</p><div hidden>sessie 1</div><p style="display: none">sessie 2</p></main>'
    assert main_text(body) == "Zichtbaar."


def test_subsidie_04_bad_or_oversized_input_gives_empty_text():
    assert main_text(V1, max_bytes=100) == ""
    assert main_text(b"") == ""
    assert main_text(b"\x00\x00\x00") == ""
    assert content_hash("") == content_hash("   \n ")


def test_subsidie_04_control_characters_in_a_page_do_not_crash():
    body = b"<html><body><nav>m\x0b</nav>\x0b<main><p>Regeling\x01 A.</p></main></body></html>"
    assert main_text(body) == "Regeling A."


def test_subsidie_04_normalise_is_idempotent_when_removals_meet():
    for text in ("Laatst bezocht op Last visited 1-1-2026 12-11-2026 Einde.",
                 "Link jsessionid=ABCDEF123 laatst 5 minuten geleden",
                 "csrf_token:Laatst bezocht op csrf_token: november"):
        once = normalise(text)
        assert normalise(once) == once
    assert normalise("Laatst bezocht op Last visited 1-1-2026 12-11-2026 Einde.") == "Einde."

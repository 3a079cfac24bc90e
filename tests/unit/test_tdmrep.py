"""PRAHA-03: a TDMRep reservation (well-known file, header, meta tag) means the article text is not kept."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from heed_core.extract.tdmrep import TdmRepError, TdmRules, parse_tdmrep_json, reservation

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "signals"


def rules_of(entries: list[dict[str, object]]) -> TdmRules:
    parsed = parse_tdmrep_json(json.dumps(entries).encode())
    assert isinstance(parsed, TdmRules)
    return parsed


def meta(content: str) -> bytes:
    return f'<html><head><meta name="tdm-reservation" content="{content}"></head><body>x</body></html>'.encode()


@pytest.fixture()
def site_rules() -> TdmRules:
    parsed = parse_tdmrep_json((FIXTURES / "tdmrep.json").read_bytes())
    assert isinstance(parsed, TdmRules)
    return parsed


def test_praha_03_well_known_file_rules_in_order(site_rules):
    assert site_rules.lookup("/zpravy/2026/11/most.html") == 1
    assert site_rules.lookup("/zpravy/archiv/2019/x.html") == 0
    assert site_rules.lookup("/kontakt") == 0
    assert site_rules.match("/zpravy/a").policy == "https://nieuws.example.cz/.well-known/tdm-policy.json"


def test_praha_03_first_matching_rule_wins_not_the_longest():
    rules = rules_of([
        {"location": "/*", "tdm-reservation": 0},
        {"location": "/clanky/*", "tdm-reservation": 1},
    ])
    assert rules.lookup("/clanky/x") == 0


def test_praha_03_dollar_anchors_the_end(site_rules):
    assert site_rules.match("/tiskove-zpravy").reservation == 1
    # "/tiskove-zpravy/2026" is not the anchored path, so the catch-all answers
    assert site_rules.lookup("/tiskove-zpravy/2026") == 0


def test_praha_03_matching_is_case_sensitive():
    rules = rules_of([{"location": "/Zpravy/*", "tdm-reservation": 1}])
    assert rules.lookup("/Zpravy/a") == 1
    assert rules.lookup("/zpravy/a") is None


def test_praha_03_wildcard_in_the_middle_and_percent_encoding():
    rules = rules_of([{"location": "/%7Eredakce/*/clanek", "tdm-reservation": 1}])
    assert rules.lookup("/~redakce/2026/clanek-1") == 1
    assert rules.lookup("https://example.cz/%7eredakce/x/clanek?id=1") == 1
    assert rules.lookup("/redakce/2026/clanek") is None


def test_praha_03_unusable_entries_are_skipped_so_a_later_rule_still_applies():
    rules = rules_of([
        {"location": "/clanky/*", "tdm-reservation": 2},
        {"location": "/clanky/*", "tdm-reservation": True},
        {"tdm-reservation": 1},
        "not an object",
        {"location": "/*", "tdm-reservation": "1"},
    ])
    assert rules.skipped == 4
    assert rules.lookup("/clanky/x") == 1


@pytest.mark.parametrize(
    ("body", "error"),
    [(b"", "empty"), (b"{not json", "malformed_json"), (b'{"location": "/"}', "not_a_list"),
     (b"[" * 100_000, "malformed_json")],
)
def test_praha_03_broken_well_known_file_is_an_error_value(body, error):
    assert parse_tdmrep_json(body, max_bytes=10**6) == TdmRepError(error)


def test_praha_03_oversized_well_known_file_is_refused():
    assert parse_tdmrep_json(b"[" + b" " * 100 + b"]", max_bytes=50) == TdmRepError("too_large")


def test_praha_03_header_overrides_file(site_rules):
    d = reservation(site_rules, "/kontakt", (("TDM-Reservation", "1"), ("tdm-policy", "https://x.cz/p")), None)
    assert (d.reserved, d.source, d.policy) == (True, "header", "https://x.cz/p")
    d = reservation(site_rules, "/zpravy/a", (("tdm-reservation", "0"),), None)
    assert (d.reserved, d.source) == (False, "header")


def test_praha_03_meta_overrides_header_and_file(site_rules):
    d = reservation(site_rules, "/kontakt", (("tdm-reservation", "0"),), meta("1"))
    assert (d.reserved, d.source) == (True, "meta")
    d = reservation(site_rules, "/zpravy/a", (("tdm-reservation", "1"),), meta("0"))
    assert (d.reserved, d.source) == (False, "meta")


def test_praha_03_absent_or_invalid_value_never_resets_an_earlier_one(site_rules):
    # GIVEN the file reserves /zpravy/ and a header/meta that carry no valid value
    d = reservation(site_rules, "/zpravy/a", (("tdm-reservation", "yes"),), meta("2"))
    # THEN the file's reservation stands
    assert (d.reserved, d.source) == (True, "tdmrep.json")
    d = reservation(None, "/a", (("tdm-reservation", "1"),), b"<html><body>no meta</body></html>")
    assert (d.reserved, d.source) == (True, "header")


def test_praha_03_nothing_declared_means_not_reserved():
    d = reservation(None, "/a", (("Content-Type", "text/html"),), b"<html><body>x</body></html>")
    assert (d.reserved, d.source, d.policy) == (False, None, None)


def test_praha_03_broken_file_counts_as_absent_header_still_counts():
    d = reservation(TdmRepError("malformed_json"), "/a", (("tdm-reservation", " 1 "),), None)
    assert (d.reserved, d.source) == (True, "header")


def test_praha_03_conflicting_repeated_headers_reserve():
    d = reservation(None, "/a", (("tdm-reservation", "0"), ("tdm-reservation", "1")), None)
    assert d.reserved is True


def test_praha_03_oversized_body_reports_error_keeps_earlier_answer():
    d = reservation(None, "/a", (("tdm-reservation", "1"),), meta("0") + b" " * 500, max_bytes=100)
    assert (d.reserved, d.source, d.error) == (True, "header", "too_large")

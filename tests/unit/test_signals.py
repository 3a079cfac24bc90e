"""SUBSIDIE-09: noindex/nofollow from robots meta tags and X-Robots-Tag headers."""
from __future__ import annotations

from pathlib import Path

from heed_core.extract.signals import parse_html, robots_directives

TOKEN = "SubsidieUpdate"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "signals"


def page(head: str) -> bytes:
    return f"<!DOCTYPE html><html><head>{head}</head><body><p>Subsidie</p></body></html>".encode()


def test_subsidie_09_meta_robots_noindex_alone():
    # GIVEN a page whose robots meta says noindex
    # WHEN its directives are read
    d = robots_directives((), page('<meta name="robots" content="noindex">'), TOKEN)
    # THEN it is not stored, but its links may still be followed
    assert (d.noindex, d.nofollow) == (True, False)
    assert d.sources == ("meta-robots:noindex",)


def test_subsidie_09_meta_named_after_our_token_case_insensitive():
    d = robots_directives((), page('<META NAME="subsidieupdate" CONTENT="NoFollow">'), TOKEN)
    assert (d.noindex, d.nofollow) == (False, True)


def test_subsidie_09_meta_for_another_crawler_does_not_apply():
    d = robots_directives((), page('<meta name="googlebot" content="noindex, nofollow">'), TOKEN)
    assert (d.noindex, d.nofollow) == (False, False)
    assert d.sources == ()


def test_subsidie_09_none_means_noindex_and_nofollow():
    d = robots_directives((), page('<meta name="robots" content="none">'), TOKEN)
    assert (d.noindex, d.nofollow) == (True, True)


def test_subsidie_09_meta_tags_combine():
    body = page('<meta name="robots" content="noarchive, nofollow"><meta name="SubsidieUpdate" content="noindex">')
    d = robots_directives((), body, TOKEN)
    assert (d.noindex, d.nofollow) == (True, True)


def test_subsidie_09_unscoped_header_applies():
    d = robots_directives((("X-Robots-Tag", "noindex, nofollow"),), None, TOKEN)
    assert (d.noindex, d.nofollow) == (True, True)
    assert "x-robots-tag:noindex" in d.sources


def test_subsidie_09_header_scoped_to_other_bot_does_not_apply():
    d = robots_directives((("X-Robots-Tag", "otherbot: noindex"),), None, TOKEN)
    assert (d.noindex, d.nofollow) == (False, False)


def test_subsidie_09_header_scoped_to_us_applies():
    d = robots_directives((("x-robots-tag", "subsidieupdate: nofollow"),), None, TOKEN)
    assert (d.noindex, d.nofollow) == (False, True)


def test_subsidie_09_token_with_version_matches_scoped_header():
    d = robots_directives((("X-Robots-Tag", "SubsidieUpdate: noindex"),), None, "SubsidieUpdate/1.0")
    assert d.noindex is True


def test_subsidie_09_longer_agent_name_is_another_agent():
    d = robots_directives((("X-Robots-Tag", "SubsidieUpdateBeta: noindex"),), None, TOKEN)
    assert d.noindex is False


def test_subsidie_09_repeated_headers_are_read_separately():
    # GIVEN one header scoped to another bot and a second, unscoped one
    headers = (("X-Robots-Tag", "otherbot: noindex"), ("X-Robots-Tag", "nofollow"))
    # WHEN read (joining them with a comma would scope "nofollow" to otherbot too)
    d = robots_directives(headers, None, TOKEN)
    # THEN only the unscoped directive applies
    assert (d.noindex, d.nofollow) == (False, True)


def test_subsidie_09_agent_scope_switches_inside_one_header():
    d = robots_directives((("X-Robots-Tag", "otherbot: noindex, subsidieupdate: nofollow"),), None, TOKEN)
    assert (d.noindex, d.nofollow) == (False, True)


def test_subsidie_09_valued_directive_is_not_mistaken_for_an_agent():
    headers = (("X-Robots-Tag", "unavailable_after: 25 Jun 2027 15:00:00 PST, noindex"),)
    d = robots_directives(headers, None, TOKEN)
    assert d.noindex is True


def test_subsidie_09_header_and_meta_both_count():
    d = robots_directives((("X-Robots-Tag", "noindex"),), page('<meta name="robots" content="nofollow">'), TOKEN)
    assert (d.noindex, d.nofollow) == (True, True)


def test_subsidie_09_fixture_challenge_page_carries_meta_noindex():
    body = (FIXTURES / "cloudflare_just_a_moment.html").read_bytes()
    d = robots_directives((), body, TOKEN)
    assert (d.noindex, d.nofollow) == (True, True)


def test_subsidie_09_oversized_body_reports_error_but_keeps_header_answer():
    body = page('<meta name="robots" content="nofollow">') + b" " * 2000
    d = robots_directives((("X-Robots-Tag", "noindex"),), body, TOKEN, max_bytes=1000)
    assert d.error == "too_large"
    assert (d.noindex, d.nofollow) == (True, False)


def test_subsidie_09_bad_input_never_raises():
    for body in (b"", b"\x00\xff\xfe garbage <<<", b"<meta name=robots content=>", "\u00e9".encode("utf-16")):
        d = robots_directives((("X-Robots-Tag", ""), ("X-Robots-Tag", ":::")), body, TOKEN)
        assert (d.noindex, d.nofollow) == (False, False)


def test_parse_html_refuses_oversized_and_empty_input():
    assert parse_html(b"<p>x</p>" * 10, max_bytes=20) is None
    assert parse_html(b"   ") is None
    assert parse_html(b"<p>ok</p>") is not None


def test_parse_html_reads_utf8_without_declaration():
    root = parse_html("<p>Gemeente Súdwest-Fryslân</p>".encode())
    assert root is not None
    assert "Súdwest-Fryslân" in root.text_content()

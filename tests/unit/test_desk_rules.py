"""The desk's rules (issue 37), pure: a pasted log line read, a verdict on it, a proof token's
life (bound to its host, its browser and its time, used once), the rate-limit windows, the CSRF
token and what a site owner names. No store, no network, no clock."""
from __future__ import annotations

from datetime import UTC, datetime

import pytest

from heed_core.desk import csrf
from heed_core.desk.limits import LIMITS, window
from heed_core.desk.loglines import MAX_LINES, BadLine, LogLine, PasteTooBig, parse_line, parse_paste, too_big
from heed_core.desk.proof import (
    TOKEN_TTL_S,
    asked,
    dns_name,
    judge_dns,
    judge_http,
    new_token,
    proof_digest,
    proof_url,
    proof_work,
    used,
)
from heed_core.desk.scope import parse_scope
from heed_core.desk.verdicts import judge
from heed_core.work import UrlRecord

UA = "AubeBot/0.1 (+https://aube.news/robot; collecte RSS polie)"
T = datetime(2026, 12, 1, 10, 0, 3, tzinfo=UTC).timestamp()


def _line(text: str) -> LogLine:
    found = parse_line(1, text)
    assert isinstance(found, LogLine), found
    return found


# --- log lines --------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    f'203.0.113.9 - - [01/Dec/2026:10:00:03 +0000] "GET /feed.xml?x=1 HTTP/1.1" 200 512 "-" "{UA}"',
    f'example.org:443 203.0.113.9 - - [01/Dec/2026:11:00:03 +0100] "GET /feed.xml?x=1 HTTP/1.1" 200 512 "-" "{UA}"',
    f"203.0.113.9 2026-12-01T10:00:03Z /feed.xml?x=1 {UA}",
    f'203.0.113.9 2026-12-01 10:00:03 /feed.xml?x=1 "{UA}"',
    f"203.0.113.9 2026-12-01T11:00:03+01:00 /feed.xml?x=1 {UA}",
])
def test_a_combined_a_vhost_and_a_typed_line_say_the_same(text: str) -> None:
    line = _line(text)
    said = (line.ip, line.t, line.method, line.target, line.user_agent)
    assert said == ("203.0.113.9", T, "GET", "/feed.xml?x=1", UA)


def test_common_log_format_has_no_user_agent_and_escapes_are_undone() -> None:
    assert _line('2001:db8::1 - - [01/Dec/2026:10:00:03 +0000] "GET / HTTP/1.0" 304 -').user_agent is None
    quoted = _line('198.51.100.7 - - [01/Dec/2026:10:00:03 +0000] "GET / HTTP/1.1" 200 1 "-" "a \\"b\\" \\x41"')
    assert quoted.user_agent == 'a "b" A'


@pytest.mark.parametrize(("text", "reason"), [
    ("hello world", "not_a_log_line"),
    ('999.1.1.1 - - [01/Dec/2026:10:00:03 +0000] "GET / HTTP/1.1" 200 1', "bad_address"),
    ('1.2.3.4 - - [41/Dec/2026:10:00:03 +0000] "GET / HTTP/1.1" 200 1', "bad_time"),
    ("1.2.3.4 " + "x" * 9000, "too_long"),
])
def test_a_line_that_says_nothing_is_refused_with_its_reason(text: str, reason: str) -> None:
    found = parse_line(3, text)
    assert isinstance(found, BadLine) and (found.n, found.reason) == (3, reason)


def test_a_paste_too_big_is_refused_whole_before_a_line_is_read() -> None:
    # 10,000 lines, each a good one: refused in one piece, not read line by line
    with pytest.raises(PasteTooBig, match=f"more than {MAX_LINES} lines"):
        parse_paste("a\n" * 10_000)
    with pytest.raises(PasteTooBig, match="KB"):
        parse_paste("x" * (300 * 1024))
    assert too_big(100 * 1024 * 1024) and not too_big(1000) and not too_big(None)
    assert len(parse_paste("\n\n1.2.3.4 2026-12-01T10:00:03Z / x\n\n")) == 1


# --- verdicts ---------------------------------------------------------------------------------------

EGRESS = ("127.0.0.1/32", "2001:db8:1::/48")
OURS = [(T + 0.4, "https://example.org:443/feed.xml?x=1"), (T - 500, "https://example.org:443/other")]


def test_ours_takes_our_address_our_user_agent_and_a_request_of_ours_then() -> None:
    v = judge(_line(f"127.0.0.1 2026-12-01T10:00:03Z /feed.xml?x=1 {UA}"), egress=EGRESS, user_agent=UA,
              requests=OURS)
    assert v.ours and all(c.ok for c in v.checks if c.name != "signature")


def test_a_forged_user_agent_from_another_address_is_not_ours() -> None:
    v = judge(_line(f"198.51.100.7 2026-12-01T10:00:03Z /feed.xml?x=1 {UA} extra"), egress=EGRESS, user_agent=UA,
              requests=OURS)
    assert not v.ours
    assert [(c.name, c.ok) for c in v.checks] == [("address", False), ("user_agent", False), ("request", True),
                                                  ("signature", None)]


def test_our_address_and_user_agent_at_a_time_we_sent_nothing_is_not_ours() -> None:
    v = judge(_line(f"127.0.0.1 2026-12-01T10:02:30Z /feed.xml?x=1 {UA}"), egress=EGRESS, user_agent=UA,
              requests=OURS)
    assert not v.ours and v.check("request") is not None and v.check("request").ok is False  # type: ignore[union-attr]
    # a minute either way is "then": 60 s counts, 61 s does not
    assert judge(_line(f"127.0.0.1 2026-12-01T10:01:03Z /feed.xml?x=1 {UA}"), egress=EGRESS, user_agent=UA,
                 requests=[(T, "https://example.org/feed.xml?x=1")]).ours
    assert not judge(_line(f"127.0.0.1 2026-12-01T10:01:04Z /feed.xml?x=1 {UA}"), egress=EGRESS, user_agent=UA,
                     requests=[(T, "https://example.org/feed.xml?x=1")]).ours


def test_a_bad_signature_makes_a_line_not_ours_and_no_egress_list_is_not_asked() -> None:
    line = _line(f"127.0.0.1 2026-12-01T10:00:03Z /feed.xml?x=1 {UA}")
    assert not judge(line, egress=EGRESS, user_agent=UA, requests=OURS, signature=False).ours
    v = judge(line, egress=(), user_agent=UA, requests=OURS, signature=True)
    assert v.ours and v.check("address").ok is None  # type: ignore[union-attr]


# --- proof tokens -----------------------------------------------------------------------------------

HOST = "https://example.org:443"


def _token(now: float = T) -> tuple[str, object]:
    return new_token(bytes(range(24)), HOST, "http", "browser-1", now)


def test_a_token_is_random_bytes_kept_as_its_digest_bound_to_host_browser_and_time() -> None:
    text, token = new_token(bytes(range(24)), HOST, "http", "browser-1", T)
    assert len(text) == 32 and token.tid == proof_digest(text) and text not in repr(token)
    assert (token.host, token.claimant, token.expires) == (HOST, "browser-1", T + TOKEN_TTL_S)
    assert proof_digest(text + "\n") == proof_digest(f"  {text}\r\n") == token.tid  # a trailing newline is fine
    with pytest.raises(ValueError):
        new_token(b"short", HOST, "http", "b", T)


def test_the_proof_file_is_an_ordinary_work_item_of_its_host() -> None:
    _, token = new_token(bytes(24), HOST, "http", "b", T)
    work = proof_work(token, "aubebot", T)
    (item,) = work.items
    assert work.host == HOST and item.url == proof_url(HOST, "aubebot") == \
        "https://example.org/.well-known/heed-desk-aubebot.txt"
    assert (item.purpose, item.host, item.round_start) == ("proof", HOST, T)
    assert proof_work(asked(token, T), "aubebot", T).tok != work.tok  # each read asked is new work
    assert dns_name(HOST, "aubebot") == "_heed-desk-aubebot.example.org"


def _record(status: int | None, body: str, at: float) -> UrlRecord:
    return UrlRecord(url=proof_url(HOST, "aubebot"), last_fetched=at, last_status=status,
                     content_hash=proof_digest(body))


def test_a_token_proves_once_for_its_browser_within_its_time() -> None:
    text, token = new_token(bytes(24), HOST, "http", "browser-1", T)
    assert judge_http(token, "browser-1", None, None, T).outcome == "waiting"
    token = asked(token, T + 5)
    assert judge_http(token, "browser-1", _record(200, text, T + 1), None, T + 6).outcome == "waiting"  # an old read
    assert judge_http(token, "browser-1", _record(200, text, T + 7), None, T + 8).outcome == "proven"
    # another browser (one that read the public file) proves nothing with it
    assert judge_http(token, "browser-2", _record(200, text, T + 7), None, T + 8).outcome == "not_yours"
    # a replay: used once, never again
    assert judge_http(used(token, T + 8), "browser-1", _record(200, text, T + 7), None, T + 9).outcome == "used"
    # past its time
    assert judge_http(token, "browser-1", _record(200, text, T + 7), None, T + TOKEN_TTL_S + 1).outcome == "expired"


def test_a_read_that_proves_nothing_says_why() -> None:
    text, token = new_token(bytes(24), HOST, "http", "b", T)
    token = asked(token, T)
    assert judge_http(token, "b", _record(404, "", T + 1), None, T + 2).reason == "status"
    assert judge_http(token, "b", _record(200, "another", T + 1), None, T + 2).reason == "content"
    assert judge_http(token, "b", None, "robots_disallowed", T + 2).reason == "robots_disallowed"
    assert judge_dns(token, "b", [f"heed-desk={text}"], T + 1).outcome == "proven"
    assert judge_dns(token, "b", ["heed-desk=other"], T + 1).reason == "dns_no_match"
    assert judge_dns(token, "b", None, T + 1).reason == "dns_no_answer"


# --- limits, CSRF, scope ----------------------------------------------------------------------------

def test_limits_count_in_fixed_windows_per_action_and_who() -> None:
    key, limit, ends = window("fetch", "host", "https://example.org:443", 7200.5)
    assert limit == LIMITS[("fetch", "host")] and ends == 10800.0 and key.startswith("fetch|host|")
    assert window("fetch", "host", "https://example.org:443", 10800.0)[0] != key  # the next window, a new count


def test_a_csrf_token_is_the_browser_cookies_and_no_other() -> None:
    secret = b"s" * 32
    token = csrf.csrf_token(secret, "cookie-a")
    assert csrf.csrf_ok(secret, "cookie-a", token)
    assert not csrf.csrf_ok(secret, "cookie-b", token) and not csrf.csrf_ok(secret, "cookie-a", "")
    assert not csrf.csrf_ok(b"t" * 32, "cookie-a", token) and not csrf.csrf_ok(secret, None, token)


@pytest.mark.parametrize(("text", "host", "shown"), [
    ("example.org", "https://example.org:443", "example.org"),
    ("HTTPS://WWW.Example.org/some/page", "https://www.example.org:443", "www.example.org"),
    ("http://example.org:8080", "http://example.org:8080", "example.org:8080"),
    ("[2001:db8::1]", "https://[2001:db8::1]:443", "[2001:db8::1]"),
    ("bücher.example", "https://xn--bcher-kva.example:443", "xn--bcher-kva.example"),
])
def test_what_a_site_owner_names(text: str, host: str, shown: str) -> None:
    scope = parse_scope(text)
    assert scope is not None and (scope.host, scope.shown) == (host, shown)


def test_a_scope_covers_its_host_alone() -> None:
    scope = parse_scope("example.org")
    assert scope is not None
    assert scope.covers("https://example.org/a") and scope.covers("http://example.org:80/b")
    assert not scope.covers("https://www.example.org/") and not scope.covers("https://example.org:8443/")
    assert not scope.covers("https://example.org.evil.test/")
    ported = parse_scope("http://example.org:8080")
    assert ported is not None and ported.covers("http://example.org:8080/x") and not ported.covers("http://example.org/")
    for bad in ("", "not a host", "ftp://example.org", "user:pw@example.org", "exa mple.org", "-x-.org"):
        assert parse_scope(bad) is None, bad

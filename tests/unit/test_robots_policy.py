"""The robots.txt status policy: what each bot does when robots.txt is not a plain 200."""
from __future__ import annotations

import base64
import dataclasses
import json
import zlib

import pytest

from heed_core.robots_policy import (
    RobotsCacheError,
    RobotsFetchPolicy,
    RobotsOutcome,
    robots_from_response,
)

# The `robots` sections the lead's profiles carry (PROMISES.md).
SPRING = {"on_401_403": "deny", "on_4xx": "allow", "on_5xx": "deny", "on_unreachable": "deny"}
SUBSIDIE = {"on_401_403": "allow", "on_4xx": "allow", "on_5xx": "skip_host", "on_unreachable": "skip_host"}
WANNADO = {"on_401_403": "allow", "on_4xx": "allow", "on_5xx": "deny", "on_unreachable": "deny"}
AUBE = PRAHA = WANNADO

_ = pytest.param
# (policy, status, error) -> (kind, reason)
CASES = [
    # SPRING-10: 5xx or 401/403 -> nothing is fetched.
    _(SPRING, 200, None, "parsed", "robots_ok", id="spring_10_200_parsed"),
    _(SPRING, 401, None, "deny_all", "robots_forbidden", id="spring_10_401_deny_all"),
    _(SPRING, 403, None, "deny_all", "robots_forbidden", id="spring_10_403_deny_all"),
    _(SPRING, 404, None, "allow_all", "robots_missing", id="spring_10_404_allow_all"),
    _(SPRING, 500, None, "deny_all", "robots_server_error", id="spring_10_500_deny_all"),
    _(SPRING, 503, None, "deny_all", "robots_server_error", id="spring_10_503_deny_all"),
    _(SPRING, None, "timeout", "deny_all", "robots_unreachable", id="spring_10_timeout_deny_all"),
    # SUBSIDIE-11: missing or 4xx -> no restrictions; 5xx -> skip the host this round.
    _(SUBSIDIE, 404, None, "allow_all", "robots_missing", id="subsidie_11_404_no_restrictions"),
    _(SUBSIDIE, 410, None, "allow_all", "robots_missing", id="subsidie_11_410_no_restrictions"),
    _(SUBSIDIE, 401, None, "allow_all", "robots_forbidden", id="subsidie_11_401_no_restrictions"),
    _(SUBSIDIE, 403, None, "allow_all", "robots_forbidden", id="subsidie_11_403_no_restrictions"),
    _(SUBSIDIE, 500, None, "skip_host", "robots_server_error", id="subsidie_11_500_skip_host"),
    _(SUBSIDIE, 599, None, "skip_host", "robots_server_error", id="subsidie_11_599_skip_host"),
    _(SUBSIDIE, None, "dns_error", "skip_host", "robots_unreachable", id="subsidie_11_dns_error_skip_host"),
    # WANNADO-04: server error -> nothing is fetched; a missing file restricts nothing.
    _(WANNADO, 404, None, "allow_all", "robots_missing", id="wannado_04_404_allow_all"),
    _(WANNADO, 403, None, "allow_all", "robots_forbidden", id="wannado_04_403_allow_all"),
    _(WANNADO, 502, None, "deny_all", "robots_server_error", id="wannado_04_502_deny_all"),
    _(WANNADO, None, "connect_error", "deny_all", "robots_unreachable", id="wannado_04_unreachable_deny_all"),
    _(AUBE, 500, None, "deny_all", "robots_server_error", id="aube_04_500_deny_all"),
    _(PRAHA, 404, None, "allow_all", "robots_missing", id="praha_09_404_allow_all"),
    # 429 is the server asking for less traffic: a server error, never "no robots.txt".
    _(SUBSIDIE, 429, None, "skip_host", "robots_server_error", id="subsidie_11_429_is_server_error"),
    _(WANNADO, 429, None, "deny_all", "robots_server_error", id="wannado_04_429_is_server_error"),
    # A 3xx reaching the policy was not followed by the caller: unreachable.
    _(SPRING, 301, None, "deny_all", "robots_unreachable", id="spring_07_unfollowed_redirect_deny_all"),
    _(SUBSIDIE, 308, None, "skip_host", "robots_unreachable", id="subsidie_11_unfollowed_redirect_skip"),
    _(WANNADO, 102, None, "deny_all", "robots_unreachable", id="wannado_04_informational_status_unreachable"),
    _(WANNADO, None, None, "deny_all", "robots_unreachable", id="wannado_04_no_status_no_error_unreachable"),
]


@pytest.mark.parametrize(("section", "status", "error", "kind", "reason"), CASES)
def test_status_policy(section: dict[str, str], status: int | None, error: str | None, kind: str,
                       reason: str) -> None:
    # GIVEN a bot's robots policy WHEN robots.txt comes back with this status
    outcome = robots_from_response(status, error, b"User-agent: *\nDisallow: /x\n",
                                   RobotsFetchPolicy.from_mapping(section))
    # THEN the host is handled as the bot promised
    assert (outcome.kind, outcome.reason) == (kind, reason)
    if kind == "skip_host":
        assert outcome.robots is None
        return
    assert outcome.robots is not None
    verdicts = [outcome.robots.verdict(url, "bot") for url in ("/", "/x", "/anything")]
    if kind == "deny_all":
        assert not any(v.allowed for v in verdicts)
    elif kind == "allow_all":
        assert all(v.allowed for v in verdicts)
    else:
        assert [v.allowed for v in verdicts] == [True, False, True]


def test_spring_10_deny_all_verdict_says_why() -> None:
    outcome = robots_from_response(403, None, b"", RobotsFetchPolicy.from_mapping(SPRING))
    assert outcome.robots is not None
    assert outcome.robots.verdict("https://s.example/page", "SpringStudioBot").rule == "(robots.txt 403: deny all)"
    unreachable = robots_from_response(None, "timeout", b"", RobotsFetchPolicy.from_mapping(SPRING))
    assert unreachable.robots is not None
    assert "timeout" in (unreachable.robots.verdict("/", "SpringStudioBot").rule or "")


def test_rfc9309_defaults_differ_from_spring_on_403() -> None:
    # RFC 9309 2.3.1.3 reads 401/403 as "no robots.txt"; SPRING-10 is stricter.
    assert robots_from_response(403, None, b"", RobotsFetchPolicy()).kind == "allow_all"
    assert robots_from_response(403, None, b"", RobotsFetchPolicy.from_mapping(SPRING)).kind == "deny_all"


@pytest.mark.parametrize("body", [b"<html><h1>Welcome</h1></html>", b"\x00\xff garbage \x89PNG", b""])
def test_common_02_a_200_that_is_not_robots_txt_allows(body: bytes) -> None:
    outcome = robots_from_response(200, None, body, RobotsFetchPolicy.from_mapping(SPRING))
    assert outcome.kind == "parsed" and outcome.robots is not None
    assert outcome.robots.verdict("/any/page", "SpringStudioBot").allowed


# --- RobotsFetchPolicy.from_mapping ---

@pytest.mark.parametrize(("section", "bad_key"), [
    ({**SPRING, "on_5xx": "allow"}, "on_5xx"),
    ({**SPRING, "on_401_403": "skip_host"}, "on_401_403"),
    ({**SPRING, "on_unreachable": None}, "on_unreachable"),
    ({**SPRING, "on_4xx": "Allow"}, "on_4xx"),
    ({**SPRING, "on_5xxx": "deny"}, "on_5xxx"),
])
def test_policy_from_mapping_names_the_bad_key(section: dict[str, object], bad_key: str) -> None:
    with pytest.raises(ValueError, match=bad_key):
        RobotsFetchPolicy.from_mapping(section)


def test_policy_from_mapping_ignores_other_robots_settings_and_defaults_to_rfc() -> None:
    policy = RobotsFetchPolicy.from_mapping({"cache_ttl_s": 86400, "on_5xx": "skip_host"})
    assert policy == RobotsFetchPolicy("allow", "allow", "skip_host", "deny")
    with pytest.raises(ValueError):
        RobotsFetchPolicy.from_mapping(["on_5xx"])  # type: ignore[arg-type]


def test_policy_and_outcome_are_frozen() -> None:
    policy = RobotsFetchPolicy.from_mapping(SPRING)
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.on_5xx = "skip_host"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        robots_from_response(200, None, b"", policy).kind = "deny_all"  # type: ignore[misc]


# --- cache record (SPRING-09, SUBSIDIE-06, WANNADO-11, AUBE-12 keep robots.txt for a while) ---

def test_cache_record_round_trips_through_json() -> None:
    policy = RobotsFetchPolicy.from_mapping(WANNADO)
    body = b"User-agent: WannadoBot\nCrawl-delay: 3\nDisallow: /tickets/\nSitemap: https://v.example/s.xml\n"
    outcome = robots_from_response(200, None, body, policy)
    record = json.loads(json.dumps(outcome.to_dict()))
    again = RobotsOutcome.from_dict(record, policy)
    assert again == outcome
    assert again.robots is not None
    assert again.robots.verdict("/tickets/1", "WannadoBot").line == 3
    assert again.robots.sitemaps == ("https://v.example/s.xml",)


def test_cache_record_is_rebuilt_under_the_current_policy() -> None:
    record = robots_from_response(503, None, b"", RobotsFetchPolicy.from_mapping(SUBSIDIE)).to_dict()
    assert RobotsOutcome.from_dict(record, RobotsFetchPolicy.from_mapping(SUBSIDIE)).kind == "skip_host"
    assert RobotsOutcome.from_dict(record, RobotsFetchPolicy.from_mapping(SPRING)).kind == "deny_all"


def test_cache_record_of_a_large_file_fits_a_dynamodb_item() -> None:
    body = b"User-agent: *\n" + b"".join(b"Disallow: /section-%d/\n" % i for i in range(40_000))
    record = robots_from_response(200, None, body, RobotsFetchPolicy()).to_dict()
    assert len(json.dumps(record)) < 400_000
    assert record["status"] == 200


def test_cache_record_keeps_no_body_when_it_is_not_used() -> None:
    record = robots_from_response(404, None, b"<html>" * 1000, RobotsFetchPolicy()).to_dict()
    assert zlib.decompress(base64.b64decode(record["body_z"])) == b""


@pytest.mark.parametrize("record", [
    {},
    None,
    {"v": 2, "status": 200, "error": None, "body_z": ""},
    {"v": 1, "status": "200", "error": None, "body_z": ""},
    {"v": 1, "status": True, "error": None, "body_z": ""},
    {"v": 1, "status": 700, "error": None, "body_z": ""},
    {"v": 1, "status": None, "error": 5, "body_z": ""},
    {"v": 1, "status": 200, "error": None, "body_z": "not base64!"},
    {"v": 1, "status": 200, "error": None, "body_z": "aGVsbG8="},  # base64, not zlib
])
def test_corrupt_cache_record_is_a_typed_error(record: object) -> None:
    with pytest.raises(RobotsCacheError):
        RobotsOutcome.from_dict(record, RobotsFetchPolicy())  # type: ignore[arg-type]

"""Google's robots.txt conformance corpus against heed_core.robots (COMMON-02/03, AUBE-04).

STANDARD expectations must all pass, except the three listed in RFC_OVER_GOOGLE where
Google's corpus contradicts RFC 9309 2.2.2 (we follow the RFC and assert its answer).
GOOGLE_SPECIFIC and stress results are counted against a baseline that must not drop.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from heed_core.robots import parse_robots

from tests.support.corpora import corpus

# Google's corpus is read from ../shared/vendored/google-robotstxt-spec-test/ (its README says
# from where); a clone without ../shared beside it skips these tests, saying so.
BASELINE = Path(__file__).with_name("robots_baseline.json")

# (robots.txt body, URL, agent) -> the RFC 9309 answer. RFC 9309 2.2.2 says non-ASCII octets
# and escapes of unreserved characters are normalised before comparison, on both sides; Google
# compares the caller's URL as given ("it's up to the caller to percent encode a URL").
_TSU_BODY = "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n".encode()
_TSU_ESC_BODY = b"User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n"
_BAZ_BODY = b"User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n"
RFC_OVER_GOOGLE: dict[tuple[bytes, str, str], bool] = {
    # RFC: the raw UTF-8 URL is percent-encoded before comparison, so Allow: /foo/bar/ツ matches.
    (_TSU_BODY, "http://foo.bar/foo/bar/ツ", "FooBot"): True,
    # RFC: %E3%83%84 in the rule and ツ in the URL are the same octets.
    (_TSU_ESC_BODY, "http://foo.bar/foo/bar/ツ", "FooBot"): True,
    # RFC: %62%61%7A are unreserved characters and are decoded to "baz" before comparison.
    (_BAZ_BODY, "http://foo.bar/foo/bar/baz", "FooBot"): True,
}


@dataclass(frozen=True)
class Case:
    source: str
    body: bytes
    url: str
    agent: str
    allowed: bool
    google_specific: bool


def _messages() -> tuple[Any, int, int]:
    """specification.proto, declared by hand because no protoc is available here."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    F = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(
        name="heed_robots_specification.proto", package="specification", syntax="proto2"
    )
    outcome = proto.enum_type.add(name="Outcome")
    for number, name in enumerate(["UNSPECIFIED", "ALLOWED", "DISALLOWED"]):
        outcome.value.add(name=name, number=number)
    test_type = proto.enum_type.add(name="TestType")
    for number, name in enumerate(["STANDARD", "GOOGLE_SPECIFIC"]):
        test_type.value.add(name=name, number=number)

    def add(msg: Any, name: str, number: int, kind: int, label: int, type_name: str = "") -> None:
        extra = {"type_name": type_name} if type_name else {}
        msg.field.add(name=name, number=number, type=kind, label=label, **extra)

    spec = proto.message_type.add(name="RobotsTxtSpecification")
    add(spec, "tests", 1, F.TYPE_MESSAGE, F.LABEL_REPEATED, ".specification.RobotsTxtTest")
    test = proto.message_type.add(name="RobotsTxtTest")
    add(test, "robotstxt", 1, F.TYPE_BYTES, F.LABEL_OPTIONAL)
    add(test, "test_expectations", 2, F.TYPE_MESSAGE, F.LABEL_REPEATED, ".specification.Expectation")
    exp = proto.message_type.add(name="Expectation")
    add(exp, "testurl", 1, F.TYPE_STRING, F.LABEL_OPTIONAL)
    add(exp, "useragent", 2, F.TYPE_STRING, F.LABEL_OPTIONAL)
    add(exp, "expected_outcome", 3, F.TYPE_ENUM, F.LABEL_OPTIONAL, ".specification.Outcome")
    # bytes, not string: BOM-characters.textproto explains itself with invalid UTF-8 ("\x11\xBF").
    add(exp, "additional_explanation", 4, F.TYPE_BYTES, F.LABEL_OPTIONAL)
    add(exp, "test_type", 5, F.TYPE_ENUM, F.LABEL_OPTIONAL, ".specification.TestType")

    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    spec = pool.FindMessageTypeByName("specification.RobotsTxtSpecification")
    allowed = pool.FindEnumTypeByName("specification.Outcome").values_by_name["ALLOWED"].number
    google = pool.FindEnumTypeByName("specification.TestType").values_by_name["GOOGLE_SPECIFIC"]
    return message_factory.GetMessageClass(spec), allowed, google.number


def _load(folder: str) -> list[Case]:
    from google.protobuf import text_format

    spec_cls, allowed_value, google_value = _messages()
    cases = []
    where = corpus("google-robotstxt-spec-test")
    paths = sorted((where / folder).glob("*.textproto"))
    assert paths, f"Google's corpus has no {folder}/ files under {where}"
    for path in paths:
        spec = text_format.Parse(path.read_text(encoding="utf-8"), spec_cls())
        for test in spec.tests:
            for exp in test.test_expectations:
                cases.append(Case(
                    f"{folder}/{path.name}", test.robotstxt, exp.testurl, exp.useragent,
                    exp.expected_outcome == allowed_value, exp.test_type == google_value,
                ))
    return cases


def _allowed(case: Case) -> bool:
    return parse_robots(case.body).verdict(case.url, case.agent).allowed


def _baseline() -> dict[str, int]:
    return json.loads(BASELINE.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_common_03_every_standard_expectation_holds_except_listed_rfc_cases() -> None:
    # GIVEN every STANDARD expectation of the correctness corpus
    standard = [c for c in _load("correctness") if not c.google_specific]
    seen_overrides = set()
    failures = []
    for case in standard:
        key = (case.body, case.url, case.agent)
        # WHEN our parser answers
        got = _allowed(case)
        # THEN it agrees with Google, or with RFC 9309 where the two differ
        expected = RFC_OVER_GOOGLE.get(key, case.allowed)
        if key in RFC_OVER_GOOGLE:
            assert case.allowed != expected, f"{key} is no longer an RFC-vs-Google difference"
            seen_overrides.add(key)
        if got != expected:
            failures.append(f"{case.source}: {case.url!r} as {case.agent!r} -> {got}, want {expected}")
    assert not failures, "\n".join(failures)
    assert seen_overrides == set(RFC_OVER_GOOGLE), "a listed RFC-vs-Google case vanished"
    print(f"\nSTANDARD: {len(standard)}/{len(standard)} "
          f"({len(RFC_OVER_GOOGLE)} with the RFC 9309 answer instead of Google's)")


@pytest.mark.parametrize("kind", ["google_specific", "stress"])
def test_common_03_google_specific_and_stress_do_not_regress(kind: str) -> None:
    # GIVEN the cases that are Google's own choices, or taken from real files
    if kind == "google_specific":
        cases = [c for c in _load("correctness") if c.google_specific]
    else:
        cases = _load("stress")
    # WHEN our parser answers each
    passed = sum(_allowed(c) == c.allowed for c in cases)
    print(f"\n{kind}: {passed}/{len(cases)} pass (baseline {_baseline()[kind]})")
    # THEN no fewer pass than the recorded baseline
    assert cases, f"no {kind} cases were loaded"
    assert passed >= _baseline()[kind]

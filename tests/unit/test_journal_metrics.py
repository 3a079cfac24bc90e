"""heed_aws.journal: one metric per thing counted, the value in a dimension, read from the EMF it prints.

Powertools' shared ``Metrics`` flush carries one value per dimension name, so these tests make
several requests with different statuses in one "invocation" and check that every count keeps
its own values. Every document is also checked against the EMF rules CloudWatch applies
(namespace, dimension keys present as strings on the root, metric values on the root).
"""
from __future__ import annotations

import json
from typing import Any

import pytest

from heed_aws import journal
from heed_aws.journal import LogJournal, count

NAMESPACE = "Heed/aubebot"


@pytest.fixture(autouse=True)
def _emf_on(monkeypatch: pytest.MonkeyPatch) -> None:
    # The local runtime switches EMF off for the whole process; these tests need it on.
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", NAMESPACE)
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    monkeypatch.delenv("POWERTOOLS_DEV", raising=False)


def emf(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    """Every EMF document printed since the last call, each checked against the EMF rules."""
    docs = []
    for line in capsys.readouterr().out.splitlines():
        try:
            doc = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(doc, dict) and "_aws" in doc:
            docs.append(doc)
    for doc in docs:
        (directive,) = doc["_aws"]["CloudWatchMetrics"]
        assert isinstance(doc["_aws"]["Timestamp"], int)
        assert directive["Namespace"]
        for dimension_set in directive["Dimensions"]:
            assert 1 <= len(dimension_set) <= 30
            for key in dimension_set:
                assert isinstance(doc[key], str) and doc[key].strip() and doc[key].isascii(), key
        for metric in directive["Metrics"]:
            assert metric["Unit"] == "Count"
            assert metric["Name"] in doc
    return docs


def metrics_of(doc: dict[str, Any]) -> set[tuple[str, tuple[tuple[str, str], ...]]]:
    """The CloudWatch metrics one document feeds: (name, ((dimension, value), ...)) each."""
    (directive,) = doc["_aws"]["CloudWatchMetrics"]
    return {(m["Name"], tuple((k, doc[k]) for k in dims))
            for m in directive["Metrics"] for dims in directive["Dimensions"]}


def request(status: int | None = 200, *, error: str | None = None, purpose: str = "feed",
            url: str = "https://News.Example:443/feed.xml") -> dict[str, Any]:
    rec: dict[str, Any] = {"bot": "aubebot", "t_start": "2026-11-30T10:00:00.000Z",
                           "t_end": "2026-11-30T10:00:00.200Z", "method": "GET", "url": url,
                           "purpose": purpose, "bytes": 120, "source": "feed-1"}
    if status is not None:
        rec["status"] = status
    if error is not None:
        rec["error"] = error
    return rec


def test_a_request_is_one_metric_with_status_class_and_purpose(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN the journal WHEN a feed request is answered 429
    LogJournal().request(request(429))
    # THEN one EMF document in the bot's namespace counts Requests in its total and by
    # Status, StatusClass and Purpose (no metric named after a status any more)
    (doc,) = emf(capsys)
    assert doc["_aws"]["CloudWatchMetrics"][0]["Namespace"] == NAMESPACE
    assert metrics_of(doc) == {("Requests", (("service", "heed"),)), ("Requests", (("Status", "429"),)),
                               ("Requests", (("StatusClass", "4xx"),)), ("Requests", (("Purpose", "feed"),))}
    assert doc["Requests"] == [1.0]


def test_requests_with_different_statuses_keep_their_own_dimensions(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN one fetcher invocation WHEN it makes requests answered 200, 304, 403, 503 and one timeout
    j = LogJournal()
    for status in (200, 304, 403, 503):
        j.request(request(status, purpose="article"))
    j.request(request(None, error="timeout", purpose="robots"))
    # THEN each request is its own document with its own values: none overwrites another's
    docs = emf(capsys)
    assert [(d["Status"], d["StatusClass"], d["Purpose"]) for d in docs] == [
        ("200", "2xx", "article"), ("304", "3xx", "article"), ("403", "4xx", "article"),
        ("503", "5xx", "article"), ("timeout", "error", "robots")]


def test_status_class_of_odd_answers() -> None:
    assert journal.status_class({"status": 599}) == "5xx"
    assert journal.status_class({"status": 199}) == "error"
    assert journal.status_class({"status": 999}) == "error"
    assert journal.status_class({"error": "connection_reset"}) == "error"
    assert journal.status_class({"status": True}) == "error"


def test_a_skip_is_counted_by_reason(capsys: pytest.CaptureFixture[str]) -> None:
    LogJournal().skip({"url": "https://news.example/private", "reason": "robots_disallowed", "detail": "Disallow: /",
                       "purpose": "article", "source": "feed-1", "round": "r1"})
    (doc,) = emf(capsys)
    assert metrics_of(doc) == {("Skips", (("service", "heed"),)), ("Skips", (("Reason", "robots_disallowed"),))}


@pytest.mark.parametrize(("metric", "value", "dimension"), [
    ("Results", "item.found", "Kind"), ("Results", "source.closed", "Kind"),
    ("Deferrals", "not_before", "Reason"), ("Turns", "defer", "Outcome"), ("Turns", "ack", "Outcome")])
def test_count_puts_the_value_in_the_metrics_dimension(capsys: pytest.CaptureFixture[str], metric: str,
                                                       value: str, dimension: str) -> None:
    # GIVEN the results adapter and the fetcher WHEN they count a result, a deferral, a turn
    count(metric, value)
    # THEN the metric is counted in its total and under its dimension
    (doc,) = emf(capsys)
    assert metrics_of(doc) == {(metric, (("service", "heed"),)), (metric, ((dimension, value),))}


def test_count_without_a_value_counts_only_the_total(capsys: pytest.CaptureFixture[str]) -> None:
    count("Deferrals")
    (doc,) = emf(capsys)
    assert metrics_of(doc) == {("Deferrals", (("service", "heed"),))}


def test_count_of_a_metric_without_a_dimension_is_refused() -> None:
    with pytest.raises(ValueError, match="'Result' has no dimension"):
        count("Result", "item.found")


def test_dimension_values_are_printable_ascii_and_never_empty(capsys: pytest.CaptureFixture[str]) -> None:
    LogJournal().skip({"url": "x", "reason": "", "detail": ""})
    count("Deferrals", "wait für\nhost " + "x" * 400)
    skip, deferral = emf(capsys)
    assert skip["Reason"] == "unknown"
    assert deferral["Reason"].startswith("wait_f_r_host_x") and len(deferral["Reason"]) == 250


def test_records_keep_their_fields_and_gain_the_host(caplog: pytest.LogCaptureFixture) -> None:
    # GIVEN a journal with a tap (the local runtime's jsonl files) WHEN a request and skips are journalled
    tapped: list[tuple[str, dict[str, Any]]] = []
    j = LogJournal(lambda what, rec: tapped.append((what, rec)))
    with caplog.at_level("INFO", logger="heed"):
        j.request(request(200))
        j.skip({"bot": "aubebot", "url": "http://[2001:db8::1]:8080/a", "reason": "robots_disallowed",
                "detail": "Disallow: /a", "purpose": "page", "source": "s", "round": "r1", "t": "2026-11-30T10:00:00Z"})
        j.skip({"url": "mailto:someone@example.org", "reason": "bad_url", "detail": "not http(s)"})
    # THEN every audit field is kept, and `host` is the URL's scheme://host:port (the politeness key)
    (_, req), (_, skip), (_, bad) = tapped
    assert {"bot", "t_start", "t_end", "method", "url", "status", "purpose", "bytes", "source"} <= set(req)
    assert req["host"] == "https://news.example:443"
    assert {"url", "reason", "detail", "purpose", "source", "round"} <= set(skip)
    assert skip["host"] == "http://[2001:db8::1]:8080"
    assert bad["host"] == ""
    # AND the log records (top-level JSON keys for Logs Insights) carry the same fields and their kind
    logged = [r for r in caplog.records if hasattr(r, "heed")]
    assert [(r.heed, r.host) for r in logged] == [  # type: ignore[attr-defined]
        ("request", "https://news.example:443"), ("skip", "http://[2001:db8::1]:8080"), ("skip", "")]
    assert logged[0].status == 200 and logged[0].purpose == "feed"  # type: ignore[attr-defined]


def test_no_emf_where_metrics_are_off(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a local run (POWERTOOLS_METRICS_DISABLED) WHEN requests, skips and counts happen
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    LogJournal().request(request(200))
    LogJournal().skip({"url": "https://a.example/", "reason": "seen_recently"})
    count("Results", "item.found")
    # THEN nothing is printed as a metric
    assert emf(capsys) == []


def test_emit_metrics_false_logs_without_counting(capsys: pytest.CaptureFixture[str]) -> None:
    LogJournal(emit_metrics=False).request(request(200))
    assert emf(capsys) == []

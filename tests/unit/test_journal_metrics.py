"""heed_aws.journal: at most twelve metrics a bot, added up over an invocation into one EMF document.

Every document is checked against the EMF rules CloudWatch applies (namespace, dimension keys
present as strings on the root, metric values on the root)."""
from __future__ import annotations

import json
from typing import Any

import pytest

from heed_aws import journal
from heed_aws.journal import METRICS, LogJournal, count, metrics, per_invocation

NAMESPACE = "Heed/aubebot"


@pytest.fixture(autouse=True)
def _emf_on(monkeypatch: pytest.MonkeyPatch) -> None:
    # The local runtime switches EMF off for the whole process; these tests need it on.
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", NAMESPACE)
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    monkeypatch.delenv("POWERTOOLS_DEV", raising=False)
    monkeypatch.setattr(metrics, "namespace", NAMESPACE)  # as Lambda's environment sets it before the import
    metrics.clear_metrics()


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


def _value(v: Any) -> float:
    """An EMF metric value: Powertools writes a list of the values added (here always one)."""
    (one,) = v if isinstance(v, list) else [v]
    return float(one)


def _invocation(work: Any) -> dict[str, Any]:
    """Run ``work`` as a handler does (``@metrics.log_metrics`` over ``@per_invocation``)."""
    handler = metrics.log_metrics(per_invocation(lambda event, context: work() or {}))
    return handler({}, None)  # type: ignore[no-any-return]


def test_an_invocation_is_one_document_with_its_counts_added_up(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN one invocation with five requests of every kind, two skips, a result, turns and deferrals
    def work() -> None:
        j = LogJournal()
        j.request(request(200))
        j.request(request(429))
        j.request(request(403, purpose="page"))
        j.request(request(503))
        j.request(request(None, error="timeout", purpose="robots"))
        j.skip({"url": "https://a.example/x", "reason": "robots_disallowed"})
        j.skip({"url": "https://a.example/y", "reason": "seen_recently"})
        count("Results")
        for _ in range(3):
            count("Turns")
        count("ServiceFaults", 2)

    _invocation(work)
    # THEN one EMF document, one dimension set (service), each count once with its sum
    (doc,) = emf(capsys)
    (directive,) = doc["_aws"]["CloudWatchMetrics"]
    assert doc["_aws"]["CloudWatchMetrics"][0]["Namespace"] == NAMESPACE
    assert directive["Dimensions"] == [["service"]] and doc["service"] == "heed"
    values = {m["Name"]: _value(doc[m["Name"]]) for m in directive["Metrics"]}
    assert values == {"Requests": 5.0, "Impolite": 2.0, "RobotsRequests": 1.0, "Skips": 2.0,
                      "Results": 1.0, "Turns": 3.0, "ServiceFaults": 2.0}


def test_the_next_invocation_starts_at_zero_and_a_gauge_is_set_not_added(capsys: pytest.CaptureFixture[str]) -> None:
    _invocation(lambda: (count("Turns"), count("Sources", 40)))
    _invocation(lambda: (count("Sources", 50000), count("Sources", 50001)))
    first, second = emf(capsys)
    assert _value(first["Turns"]) == 1.0 and _value(first["Sources"]) == 40.0
    assert "Turns" not in second and _value(second["Sources"]) == 50001.0  # a count that stayed 0 is not written


def test_at_most_twelve_metrics_and_an_unknown_one_is_refused() -> None:
    assert len(METRICS) <= 12 and len(set(METRICS)) == len(METRICS)
    assert len(METRICS) <= 10  # within CloudWatch's always-free tier (README: what it costs)
    with pytest.raises(ValueError, match="not one of the bot's metrics"):
        count("Status429")


def test_status_class_of_odd_answers() -> None:
    assert journal.status_class({"status": 200}) == "2xx"
    assert journal.status_class({"status": 99}) == "error"
    assert journal.status_class({"status": True}) == "error"
    assert journal.status_class({"error": "timeout"}) == "error"


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

    def work() -> None:
        LogJournal().request(request(200))
        LogJournal().skip({"url": "https://a.example/", "reason": "seen_recently"})
        count("Results")

    _invocation(work)
    # THEN nothing is printed as a metric
    assert emf(capsys) == []


def test_emit_metrics_false_logs_without_counting(capsys: pytest.CaptureFixture[str]) -> None:
    _invocation(lambda: LogJournal(emit_metrics=False).request(request(200)))
    assert emf(capsys) == []

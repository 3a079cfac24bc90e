"""WANNADO-10: a language model extracts events where structured data is missing: extraction only.

Bedrock Runtime is stubbed with botocore's Stubber: no network, and the stub checks that
the request carries only the model id, fixed instructions and the page text.
"""
from __future__ import annotations

import json
import logging
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from heed_core.extract.llm import SYSTEM_PROMPT, build_prompt, parse_events_json

from heed_aws.bedrock import BedrockExtractor

MODEL = "eu.anthropic.claude-haiku-example-v1:0"
PAGE_URL = "https://museum.example.nl/agenda"
PAGE_TEXT = (
    "Agenda\nZondag 14 december 2026, 14:00 - Rondleiding Gouden Eeuw. Toegang EUR 12,50. "
    "Start bij de hoofdingang, Museumplein 2, Wilgenburg.\n"
    "Woensdag 17 december 2026 - Knutselmiddag voor kinderen, gratis."
)


def converse_response(text: str) -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 120, "outputTokens": 80, "totalTokens": 200},
        "metrics": {"latencyMs": 321},
    }


@pytest.fixture()
def client() -> Any:
    return boto3.client("bedrock-runtime", region_name="eu-west-1",
                        aws_access_key_id="testing", aws_secret_access_key="testing")


def test_wannado_10_converse_answer_becomes_events(client):
    # GIVEN a model that answers with events JSON wrapped in prose and a fence
    answer = "Here are the events:\n```json\n" + json.dumps([
        {"name": "Rondleiding Gouden Eeuw", "start": "2026-12-14T14:00", "end": None,
         "location": "Museumplein 2, Wilgenburg", "price": "EUR 12.50", "description": "Rondleiding.",
         "image": None, "url": "/agenda/rondleiding-gouden-eeuw"},
        {"name": "Knutselmiddag voor kinderen", "start": "2026-12-17", "price": "free"},
    ]) + "\n```\nLet me know if you need more."
    extractor = BedrockExtractor(MODEL, client=client)
    stubber = Stubber(client)
    # THEN exactly this request leaves: model id, instructions, the page text. Nothing else.
    stubber.add_response("converse", converse_response(answer),
                         expected_params=extractor.request(PAGE_TEXT, url=PAGE_URL))
    with stubber:
        events = extractor.extract(PAGE_TEXT, url=PAGE_URL)
    stubber.assert_no_pending_responses()
    assert extractor.last_error is None
    assert [(e.name, e.start, e.price, e.source_format) for e in events] == [
        ("Rondleiding Gouden Eeuw", "2026-12-14T14:00", "EUR 12.50", "llm"),
        ("Knutselmiddag voor kinderen", "2026-12-17", "free", "llm"),
    ]
    assert events[0].url == "https://museum.example.nl/agenda/rondleiding-gouden-eeuw"
    assert events[1].url == PAGE_URL  # WANNADO-01


def test_wannado_10_request_carries_only_the_page_text_and_instructions():
    req = BedrockExtractor(MODEL, client=object()).request(PAGE_TEXT, url=PAGE_URL)
    assert set(req) == {"modelId", "system", "messages", "inferenceConfig"}
    assert req["modelId"] == MODEL
    assert req["system"] == [{"text": SYSTEM_PROMPT}]
    (message,) = req["messages"]
    assert message["role"] == "user"
    assert message["content"] == [{"text": build_prompt(PAGE_TEXT, PAGE_URL)}]
    assert PAGE_TEXT in message["content"][0]["text"]


def test_wannado_10_provider_error_gives_no_events_and_an_error_code(client, caplog):
    extractor = BedrockExtractor(MODEL, client=client)
    stubber = Stubber(client)
    stubber.add_client_error("converse", service_error_code="ThrottlingException", http_status_code=429)
    with stubber, caplog.at_level(logging.WARNING, logger="heed_aws.bedrock"):
        result = extractor.extract_result(PAGE_TEXT, url=PAGE_URL)
    assert (result.events, result.error) == ((), "ThrottlingException")
    assert any("bedrock converse failed" in r.getMessage() for r in caplog.records)


def test_wannado_10_extract_never_raises_and_remembers_the_error(client):
    extractor = BedrockExtractor(MODEL, client=client)
    stubber = Stubber(client)
    stubber.add_client_error("converse", service_error_code="AccessDeniedException", http_status_code=403)
    with stubber:
        assert extractor.extract(PAGE_TEXT, url=PAGE_URL) == ()
    assert extractor.last_error == "AccessDeniedException"


def test_wannado_10_answer_without_json_gives_no_events(client):
    extractor = BedrockExtractor(MODEL, client=client)
    stubber = Stubber(client)
    stubber.add_response("converse", converse_response("Sorry, I cannot find any events."))
    with stubber:
        assert extractor.extract(PAGE_TEXT, url=PAGE_URL) == ()
    assert extractor.last_error is None


def test_wannado_10_client_is_created_lazily(monkeypatch):
    made: list[str] = []
    monkeypatch.setattr(boto3, "client", lambda name, **kw: made.append(name) or "fake-client")
    extractor = BedrockExtractor(MODEL)
    assert made == []
    assert extractor.client == "fake-client"
    assert extractor.client == "fake-client"
    assert made == ["bedrock-runtime"]


def test_wannado_10_page_text_is_bounded_in_the_prompt():
    prompt = build_prompt("x" * 100_000, PAGE_URL, max_chars=1_000)
    assert prompt.count("x") < 1_100


@pytest.mark.parametrize(
    ("answer", "names"),
    [
        ('[{"name": "A"}]', ["A"]),
        ('{"events": [{"name": "B", "start": "2026-12-01"}]}', ["B"]),
        ('Sure! [{"name": "C"}, {"start": "no name"}, 7, "x"] Hope this helps.', ["C"]),
        ("[]", []),
        ("not json at all {", []),
        ('[{"name": {"nested": 1}}, {"name": "D", "url": "javascript:x", "image": 5}]', ["D"]),
        ("", []),
    ],
)
def test_wannado_10_parse_events_json_is_robust(answer, names):
    events = parse_events_json(answer, PAGE_URL)
    assert [e.name for e in events] == names
    assert all(e.url.startswith("https://") for e in events)
    assert all(e.image is None for e in events)

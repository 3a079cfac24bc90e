"""heed_aws.tracing: the X-Ray SDK loads only in an invocation Lambda sampled."""
from __future__ import annotations

import subprocess
import sys
from typing import Any

from heed_aws import tracing


def test_only_a_sampled_invocation_with_tracing_on_is_traced() -> None:
    on = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
    off = on.replace("Sampled=1", "Sampled=0")
    assert tracing.sampled({"_X_AMZN_TRACE_ID": on})
    assert not tracing.sampled({"_X_AMZN_TRACE_ID": off})
    assert not tracing.sampled({})
    assert not tracing.sampled({"_X_AMZN_TRACE_ID": on, "POWERTOOLS_TRACE_DISABLED": "true"})


def test_an_unsampled_invocation_never_imports_the_xray_sdk() -> None:
    # GIVEN a fresh interpreter WHEN a traced handler runs unsampled THEN aws_xray_sdk is never imported
    code = ("import os, sys; os.environ['_X_AMZN_TRACE_ID'] = 'Root=1-a-b;Sampled=0'\n"
            "from heed_aws.tracing import traced\n"
            "h = traced(lambda e, c: {'ok': e['n']})\n"
            "assert h({'n': 1}, None) == {'ok': 1}\n"
            "print(any(m.startswith('aws_xray_sdk') for m in sys.modules))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (run.returncode, run.stdout.strip()) == (0, "False"), run.stderr


def test_a_sampled_invocation_runs_under_the_tracer(monkeypatch: Any) -> None:
    captured: list[str] = []

    class FakeTracer:
        def __init__(self, service: str) -> None:
            captured.append(service)

        def capture_lambda_handler(self, fn: Any) -> Any:
            return lambda e, c: {**fn(e, c), "traced": True}

    import aws_lambda_powertools

    monkeypatch.setattr(aws_lambda_powertools, "Tracer", FakeTracer)
    monkeypatch.setattr(tracing, "_tracer", None)
    monkeypatch.setenv("_X_AMZN_TRACE_ID", "Root=1-a-b;Sampled=1")
    monkeypatch.delenv("POWERTOOLS_TRACE_DISABLED", raising=False)
    handler = tracing.traced(lambda e, c: {"n": e["n"]})
    assert handler({"n": 2}, None) == {"n": 2, "traced": True}
    assert handler({"n": 3}, None) == {"n": 3, "traced": True}
    assert captured == ["heed"]  # one Tracer per warm container

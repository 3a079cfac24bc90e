"""Every test: each AWS call a function makes in a local run (the real handlers on moto) must be
allowed by that function's role in the template as CloudFormation gets it (tests/support/iam.py).
A call the role does not allow fails the test that made it, naming the function, action and ARN."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _roles_allow_every_call(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from heed.local import runtime

    from tests.support.iam import CallRecorder, Names, Roles, stack_parameters

    runs: list[tuple[Any, CallRecorder]] = []
    original = runtime.LocalRun.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        recorder = CallRecorder(lambda: self.acting_function)
        theirs = self.session_hook

        def hook(session: Any) -> None:
            recorder.attach(session)
            if theirs is not None:
                theirs(session)

        self.session_hook = hook
        runs.append((self, recorder))

    monkeypatch.setattr(runtime.LocalRun, "__init__", init)
    yield
    denied: list[str] = []
    for run, recorder in runs:
        res = getattr(run, "res", None)
        if res is None or not recorder.calls:
            continue
        hooks = getattr(run, "hooks", None)
        names = Names(res.table_name, res.queue_url, res.dlq_url, res.bus_name, res.bucket,
                      hooks.queue_url if hooks else "", hooks.dlq_url if hooks else "",
                      getattr(run, "alarm_topic", ""))
        params = stack_parameters(run.profile)
        if hooks is not None:  # the stack with a webhook (its deliverer, its queues, its secret)
            params.update(ResultsWebhookUrl=run.webhook[0], ResultsWebhookSecretArn=run.webhook_secret_arn)
        denied += recorder.denied(Roles.of(params, names), names)
    assert not denied, "calls the functions' roles do not allow:\n" + "\n".join(denied)

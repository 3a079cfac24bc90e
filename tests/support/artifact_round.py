"""One round of a bot with the handlers of a `sam build` artifact, on moto: run as a program.

``python -S -P artifact_round.py BUILD_DIR FEED_URL OUT_JSON`` with PYTHONPATH naming the built
layers' ``python/`` folders first and the test venv's site-packages (moto) last, and
HEED_BOT/HEED_PROFILE_SHA256 set as the stack would set them. ``-S`` loads no .pth file, so the
editable install that maps heed_core and heed_aws to the source tree is not there: only the
build's copies can be imported. The resources are created from the built template
(``heed/local/resources.py``, loaded by its path: it imports nothing of Heed), the profile is
the one the build's ProfileLayer packaged, and the scheduler's and fetcher's ``app.py`` are the
build's. Writes what was imported from where, and how the round went, to OUT_JSON.

With a fifth argument, STACK_JSON, the round runs on a deployed stack instead (the deploy
rehearsal, tests/integration/test_deploy_rehearsal.py): no moto in this process, every call to the
endpoint AWS_ENDPOINT_URL names, the handlers given the deployed fetcher's environment variables
and its event source mapping's batch size, as Lambda would give them (STACK_JSON holds both)."""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

REGION = "eu-west-1"


class Context:
    function_name = "FetcherFunction"
    memory_limit_in_mb = 512
    invoked_function_arn = f"arn:aws:lambda:{REGION}:123456789012:function:FetcherFunction"
    aws_request_id = str(uuid.uuid4())

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


def load(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def main(build: Path, feed_url: str, out: Path, resources_py: Path, stack_json: Path | None = None) -> None:
    for k, v in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
                 "AWS_DEFAULT_REGION": REGION, "POWERTOOLS_METRICS_DISABLED": "true",
                 "POWERTOOLS_TRACE_DISABLED": "true", "POWERTOOLS_LOG_LEVEL": "WARNING",
                 "POWERTOOLS_METRICS_NAMESPACE": "Heed"}.items():
        os.environ[k] = v
    resources = load("_harness_resources", resources_py)
    template = resources.load_template(build / "template.yaml")
    layer = template["Resources"]["ProfileLayer"]["Properties"]["ContentUri"]
    opt = template["Globals"]["Function"]["Environment"]["Variables"]["HEED_PROFILE_DIR"]
    profile_dir = str(build / layer / Path(opt).relative_to("/opt"))  # as in Lambda: the ProfileLayer's folder
    if stack_json is not None:
        stack = json.loads(stack_json.read_text(encoding="utf-8"))
        os.environ.update({k: v for k, v in stack["environment"].items() if k.startswith("HEED_")})
        os.environ["HEED_PROFILE_DIR"] = profile_dir
        report = run_round(build, feed_url, os.environ["HEED_QUEUE_URL"], stack["queue_arn"], stack["batch_size"])
    else:
        from moto import mock_aws

        bot = os.environ["HEED_BOT"]
        with mock_aws():
            res = resources.create_stack_resources(template_path=build / "template.yaml", bot=bot,
                                                   prefix=f"heed-{bot}", region=REGION)
            os.environ.update(HEED_TABLE=res.table_name, HEED_QUEUE_URL=res.queue_url, HEED_BUS_NAME=res.bus_name,
                              HEED_BUCKET=res.bucket, HEED_PROFILE_DIR=profile_dir)
            report = run_round(build, feed_url, res.queue_url, res.queue_arn, res.batch_size)
    out.write_text(json.dumps(report), encoding="utf-8")


def run_round(build: Path, feed_url: str, queue_url: str, queue_arn: str, batch_size: int) -> dict[str, Any]:
    """The feed source added, one scheduler tick, then fetcher batches until the queue is empty."""
    import boto3

    from heed_core.bundle import content_hash
    from heed_core.work import Source

    from heed_aws import runtime
    from heed_aws.operator_store import DynamoOperatorStore

    # The only thing not as in Lambda: the site is on loopback, which the fetcher refuses otherwise.
    journal: list[dict[str, Any]] = []  # what the round journaled (its skips say why work was not done)
    runtime.configure(allow_private=True, journal_tap=lambda kind, record: journal.append(
        {"kind": kind, **{k: record.get(k) for k in ("url", "reason", "detail", "status")}}))
    DynamoOperatorStore(runtime.store().table, runtime.store().db).put_sources([Source("site", feed_url, "feed")])
    # Each host turn's answer, and each invocation's records and failures: a round that ends short
    # says what every turn decided (the trace), not only what it journaled.
    trace: list[dict[str, Any]] = []
    crawler = runtime.crawler()
    host_turn = crawler.host_turn

    def traced_turn(token: Any, snapshot: Any = None) -> Any:
        try:
            result = host_turn(token, snapshot)
        except Exception as exc:
            trace.append({"turn": token.host, "tok": token.tok, "error": f"{type(exc).__name__}: {exc}"[:300]})
            raise
        trace.append({"turn": token.host, "tok": token.tok, "receives": token.receives, "action": result.action,
                      "why": result.why, "delay_s": round(result.delay_s, 3), "requests": result.requests,
                      "t": round(time.time(), 3)})
        return result

    crawler.host_turn = traced_turn  # type: ignore[method-assign]
    scheduler = load("scheduler_app", build / "SchedulerFunction" / "app.py")
    fetcher = load("fetcher_app", build / "FetcherFunction" / "app.py")
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    scheduler.handler({"version": "0", "id": str(uuid.uuid4()), "detail-type": "Scheduled Event",
                       "source": "aws.events", "time": now, "region": REGION, "resources": [],
                       "detail": {"tasks": ["feed"]}}, Context())
    sqs = boto3.client("sqs", region_name=REGION)
    invocations, deadline = 0, time.monotonic() + 90
    while time.monotonic() < deadline:
        msgs = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=batch_size,
                                   AttributeNames=["All"], MessageSystemAttributeNames=["All"]).get("Messages", [])
        if not msgs:
            # The hidden ones first, then the visible (heed.local.harness.queue_left, which this
            # program cannot import): read in one call, a token whose hide ended between moto's two
            # counts was in neither, and the round ended with its host's work left.
            left = [int(sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=[name])["Attributes"][name])
                    for name in ("ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessages")]
            if sum(left) == 0:
                trace.append({"empty": left, "t": round(time.time(), 3)})
                break
            time.sleep(0.1)  # a token hidden until its host's next slot (the fetcher never sleeps)
            continue
        records = [{"messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
                    "attributes": m.get("Attributes", {}), "messageAttributes": {}, "eventSource": "aws:sqs",
                    "eventSourceARN": queue_arn, "awsRegion": REGION} for m in msgs]
        answer = fetcher.handler({"Records": records}, Context()) or {}
        invocations += 1
        failed = {f["itemIdentifier"] for f in answer.get("batchItemFailures", [])}
        trace.append({"records": [(m["MessageId"][:8], m.get("Attributes", {}).get("ApproximateReceiveCount"))
                                  for m in msgs], "failed": sorted(i[:8] for i in failed), "t": round(time.time(), 3)})
        done = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(msgs)
                if m["MessageId"] not in failed]
        if done:
            sqs.delete_message_batch(QueueUrl=queue_url, Entries=done)
    profile = runtime.profile()
    return {"profile": profile.name, "sha256": content_hash(profile), "invocations": invocations,
            "finished": time.monotonic() < deadline, "journal": journal, "trace": trace,
            "modules": {name: getattr(mod, "__file__", None) for name, mod in sorted(sys.modules.items())
                        if getattr(mod, "__file__", None)}}


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]),
         Path(sys.argv[5]) if len(sys.argv) > 5 else None)

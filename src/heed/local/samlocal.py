"""`sam local invoke` against a local moto server: the sample events made by the real encoders, and
the stack's resources created there from template.yaml (README: "sam local").

    python -m heed.local.samlocal events --write       # events/*.json from the token encoder
    python -m heed.local.samlocal events --check       # exit 1 if events/ is stale (the tests run it)
    python -m heed.local.samlocal resources --endpoint-url http://127.0.0.1:5000

The names are env.json's: the resources are made with the prefix ``heed-local`` in eu-west-1,
account 123456789012 (moto's)."""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from typing import Any

from heed.local.root import ROOT

__all__ = ["PREFIX", "fetch_batch_event", "render_events", "tick_event"]

PREFIX = "heed-local"
REGION = "eu-west-1"
ACCOUNT = "123456789012"
BOT = "aubebot"
T = 1_796_018_400.0  # 2026-11-30T06:00:00Z: a firing of every bot's quarter hour
SOURCES = (("feed-local-1", "https://example.org/feed.xml"), ("feed-local-2", "https://example.net/rss"))


def tick_event() -> dict[str, Any]:
    """EventBridge's scheduled event, as the scheduler's Schedule source sends it."""
    return {"version": "0", "id": "7bf73129-1428-4cd3-a780-95db273d1602", "detail-type": "Scheduled Event",
            "source": "aws.events", "account": ACCOUNT, "time": "2026-11-30T06:00:00Z", "region": REGION,
            "resources": [f"arn:aws:events:{REGION}:{ACCOUNT}:rule/{PREFIX}-SchedulerFunctionTick"], "detail": {}}


def fetch_batch_event() -> dict[str, Any]:
    """An SQS batch of two host tokens for the fetcher: the round's entry work of two feeds, made by
    the scheduler's own code (entry_items, round_tokens) and encoded as the queue encodes it."""
    from heed_core.profile import load_profile
    from heed_core.rounds import due_rounds, entry_items, round_tokens
    from heed_core.urls import group_id
    from heed_core.work import Source

    from heed_aws.queue import encode_token

    profile = load_profile(BOT)
    (rnd,) = due_rounds(profile, T - 60, T)
    items, _ = entry_items(profile, rnd, [Source(i, u, "feed") for i, u in SOURCES], T)
    records = []
    for n, token in enumerate(round_tokens(items)):
        for dedup, body in encode_token(token):
            seq = f"1889000000000000000{n + 1}"
            records.append({
                "messageId": str(_uuid(dedup)), "receiptHandle": f"AQEBlocal{n}receipthandle==", "body": body,
                "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": str(int(T * 1000)),
                               "SequenceNumber": seq, "MessageGroupId": group_id(token.host),
                               "SenderId": f"AROAEXAMPLEROLEID:{PREFIX}-SchedulerFunction",
                               "MessageDeduplicationId": dedup,
                               "ApproximateFirstReceiveTimestamp": str(int(T * 1000) + 50)},
                "messageAttributes": {}, "md5OfBody": hashlib.md5(body.encode(), usedforsecurity=False).hexdigest(),
                "eventSource": "aws:sqs", "eventSourceARN": f"arn:aws:sqs:{REGION}:{ACCOUNT}:{PREFIX}-work.fifo",
                "awsRegion": REGION})
    return {"Records": records}


def _uuid(seed: str) -> str:
    h = hashlib.sha256(seed.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def render_events() -> dict[str, str]:
    """events/<name>.json as they should be (the reverse DNS event is written by hand: no encoder)."""
    return {name: json.dumps(event, indent=2) + "\n" for name, event in
            (("schedule_tick.json", tick_event()), ("sqs_fetch_batch.json", fetch_batch_event()))}


def create_resources(endpoint: str) -> dict[str, str]:
    """The table, queues, bus and bucket of template.yaml on the moto server at ``endpoint``."""
    import boto3

    from heed.local.resources import create_stack_resources

    session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name=REGION)

    class _At:  # every client of the session at the endpoint
        def client(self, name: str, **kw: Any) -> Any:
            return session.client(name, endpoint_url=endpoint, **kw)

    res = create_stack_resources(template_path=ROOT / "template.yaml", bot=BOT, prefix=PREFIX,
                                 session=_At(), region=REGION)
    return {"HEED_TABLE": res.table_name, "HEED_QUEUE_URL": res.queue_url, "HEED_BUS_NAME": res.bus_name,
            "HEED_BUCKET": res.bucket}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m heed.local.samlocal", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    ev = sub.add_parser("events", help="events/*.json from the real encoders")
    mode = ev.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    rs = sub.add_parser("resources", help="create the stack's resources on a moto server")
    rs.add_argument("--endpoint-url", default="http://127.0.0.1:5000")
    args = ap.parse_args(list(argv) if argv is not None else None)
    if args.cmd == "resources":
        print(json.dumps(create_resources(args.endpoint_url), indent=2))
        return 0
    stale = []
    for name, text in render_events().items():
        path = ROOT / "events" / name
        if args.write:
            path.write_text(text, encoding="utf-8")
        elif args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            sys.stdout.write(f"== {name}\n{text}")
    if stale:
        print(f"events/ is stale ({', '.join(stale)}): run python -m heed.local.samlocal events --write",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

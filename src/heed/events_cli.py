"""`heed events`: the bot's results as CloudEvents envelopes (``heed_core.envelope``), from a state
directory, in commit order.

    heed events --state DIR [--consumer NAME] [--since ID | --from-start] [--follow] [--type T]... [--json]
    heed events --stack NAME [--since ID] [--follow] [--type T]... [--json]
    heed events consumers --state DIR [--remove NAME] [--json]
    heed events schema [TYPE]
    heed events dead (--state DIR | --stack NAME) [--redrive] [--json]

A named consumer's position is kept in the state: it moves only after its lines are written and
flushed, so a consumer killed at any moment and started again gets every event at least once and
skips none (at a kill, the lines of the batch being written may come again). Without a consumer
every event is printed from the first (or from ``--since``). Files under the state directory are
exports: moving one changes nothing here. On AWS (``--stack``) the envelopes are read back from
the stack's results log group (every result, for ResultsRetentionDays), in the order they were
put; a consumer of a stack is a rule on its bus, or its webhook. Mistakes are one line, exit 2."""
from __future__ import annotations

import argparse
import difflib
import json
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from heed_core.errors import ConfigError

__all__ = ["register"]

BATCH = 100  # lines written and flushed before the position moves (a kill repeats at most these)
POLL_S = 0.5


class EventsError(ConfigError):
    code = "events"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "events", help="the bot's results as CloudEvents envelopes, in commit order (pull; a consumer's position "
                       "kept in the state)",
        description=(__doc__ or "").split("\n\n", 1)[1])
    p.add_argument("--state", metavar="DIR", help="the state directory (heed serve --state DIR; it may be running)")
    p.add_argument("--stack", metavar="NAME", help="a deployed bot's stack (its ResultsLogGroupName output)")
    p.add_argument("--region", metavar="R", help="--stack: the AWS region (default: the environment's)")
    p.add_argument("--profile", metavar="P", help="--stack: the AWS named profile")
    p.add_argument("--consumer", metavar="NAME", help="read from NAME's position and move it as lines are out")
    start = p.add_mutually_exclusive_group()
    start.add_argument("--since", metavar="ID", help="the events after the one with this id")
    start.add_argument("--from-start", action="store_true", help="every event from the first (a consumer: back "
                                                                  "to the start)")
    p.add_argument("--follow", action="store_true", help="wait for new events and print them as they are committed")
    p.add_argument("--type", action="append", metavar="T", default=[],
                   help="only this type (item.found, article.read, ...; repeatable); a consumer moves past the others")
    p.add_argument("--json", action="store_true", help="one envelope a line (default: a short line each)")
    p.set_defaults(func=cmd_events)
    sub = p.add_subparsers(dest="events_command")
    c = sub.add_parser("consumers", help="the named consumers, their positions and how far behind they are")
    c.add_argument("--state", metavar="DIR", default=argparse.SUPPRESS, help="the state directory")
    c.add_argument("--remove", metavar="NAME", help="forget this consumer's position")
    c.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="one JSON object a line")
    c.set_defaults(func=cmd_consumers)
    s = sub.add_parser("schema", help="the JSON Schema of each result type (or of TYPE)")
    s.add_argument("kind", nargs="?", metavar="TYPE", help="item.found, article.read, ... (default: every one)")
    s.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="JSON (what it prints anyway)")
    s.set_defaults(func=cmd_schema)
    d = sub.add_parser("dead", help="the webhook's deliveries given up; --redrive puts them back")
    d.add_argument("--state", metavar="DIR", default=argparse.SUPPRESS, help="the state directory")
    d.add_argument("--stack", metavar="NAME", default=argparse.SUPPRESS,
                   help="a deployed bot's stack (its DeliveryDeadLetterQueueUrl output)")
    d.add_argument("--region", metavar="R", default=argparse.SUPPRESS, help="--stack: the AWS region")
    d.add_argument("--profile", metavar="P", default=argparse.SUPPRESS, help="--stack: the AWS named profile")
    d.add_argument("--redrive", action="store_true", help="every dead letter back to be delivered (and a stop for "
                                                          "410 Gone lifted)")
    d.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="one JSON object a line")
    d.set_defaults(func=cmd_dead)


def _kinds(given: list[str]) -> list[str]:
    from heed_core.envelope import PREFIX, TYPES

    out = []
    for t in given:
        kind = t[len(PREFIX):] if t.startswith(PREFIX) else t
        if kind not in TYPES:
            match = difflib.get_close_matches(kind, TYPES, n=1)
            hint = f"did you mean {match[0]!r}?" if match else f"known: {', '.join(TYPES)}"
            raise EventsError(f"--type: unknown event type {t!r} ({hint})")
        out.append(kind)
    return out


def _state(args: argparse.Namespace) -> Any:
    from heed.state_dir import open_local

    path = getattr(args, "state", None)
    if not path:
        raise EventsError("--state DIR is required (the state directory heed serve keeps)")
    return open_local(Path(path), write=False)


def _line(env: dict[str, Any]) -> str:
    data = env.get("data") or {}
    label = data.get("title") or data.get("name") or data.get("summary") or data.get("reason") or ""
    return f"{env.get('time', '-')}  {env['type']:<18} {env.get('subject', '-')}  {str(label)[:80]}".rstrip()


class _Stop:
    """SIGTERM or SIGINT ends a --follow between two batches (what is printed is acknowledged)."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.old: dict[int, Any] = {}

    def __enter__(self) -> _Stop:
        if threading.current_thread() is threading.main_thread():
            for s in (signal.SIGTERM, signal.SIGINT):
                self.old[s] = signal.signal(s, lambda *_: self.event.set())
        return self

    def __exit__(self, *exc: object) -> None:
        for s, handler in self.old.items():
            signal.signal(s, handler)


def cmd_events(args: argparse.Namespace) -> int:
    from heed_embedded.events import CONSUMER_NAME, advance, position, read_after, reset, seq_of

    kinds = _kinds(args.type)
    if getattr(args, "stack", None):
        if args.state:
            raise EventsError("--state and --stack: one or the other")
        if args.consumer is not None:
            raise EventsError("--consumer goes with --state; on AWS a consumer is a rule on the stack's bus, or its "
                              "webhook (ResultsWebhookUrl)")
        from heed.awsstack import aws_errors

        code = aws_errors("events", lambda: _stack_events(args, kinds))
        return code
    if args.consumer is not None and not CONSUMER_NAME.fullmatch(args.consumer):
        raise EventsError(f"--consumer: {args.consumer!r} is not a consumer name (letters, digits, '.', '_', '-'; "
                          "64 at most; a letter or digit first)")
    with _state(args) as st, _Stop() as stop:
        db = st.db
        start: int | None = None
        if args.since is not None:
            start = seq_of(db, args.since)
            if start is None:
                raise EventsError(f"--since: no event with id {args.since!r} in {args.state}")
        elif args.from_start:
            start = 0
        if args.consumer is not None:
            if start is not None:
                reset(db, args.consumer, start)
            else:
                start = position(db, args.consumer) or 0
        at = start or 0
        while True:
            rows, upto = read_after(db, at, limit=BATCH, types=kinds)
            if rows:
                out = "".join((json.dumps(r.envelope, ensure_ascii=False, default=str) if args.json
                               else _line(r.envelope)) + "\n" for r in rows)
                sys.stdout.write(out)
                sys.stdout.flush()  # out (a closed pipe raises here, and the position stays)
            if upto > at and args.consumer is not None:
                advance(db, args.consumer, upto)
            if upto > at:
                at = upto
                if not stop.event.is_set():
                    continue
            if not args.follow or stop.event.wait(POLL_S):
                break
    return 0


def cmd_consumers(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from heed_embedded.events import consumers, position

    with _state(args) as st:
        if args.remove is not None:
            if position(st.db, args.remove) is None:
                known = ", ".join(c.name for c in consumers(st.db)) or "none"
                raise EventsError(f"--remove: no consumer named {args.remove!r} in {args.state} (known: {known})")
            with st.db.write("consumer remove") as c:
                c.execute("DELETE FROM consumers WHERE name = ?", (args.remove,))
            print(f"consumer {args.remove} removed")
            return 0
        found = consumers(st.db)
    for c in found:
        when = datetime.fromtimestamp(c.updated, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        if getattr(args, "json", False):
            print(json.dumps({"consumer": c.name, "position": c.seq, "lag": c.lag, "updated": when}))
        else:
            print(f"{c.name:<24} position {c.seq:<8} lag {c.lag:<8} updated {when}")
    if not found and not getattr(args, "json", False):
        print("no consumers yet (heed events --consumer NAME makes one)")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from heed_core.envelope import TYPES, schema, type_of

    if args.kind is None:
        print(json.dumps({type_of(k): schema(k) for k in TYPES}, indent=2, ensure_ascii=False))
        return 0
    (kind,) = _kinds([args.kind])
    print(json.dumps(schema(kind), indent=2, ensure_ascii=False))
    return 0


def cmd_dead(args: argparse.Namespace) -> int:
    from heed_embedded.webhooks import dead_letters, redrive

    as_json = getattr(args, "json", False)
    if getattr(args, "stack", None):
        from heed.awsstack import aws_errors

        return aws_errors("events dead", lambda: _stack_dead(args))
    with _state(args) as st:
        if args.redrive:
            n, lifted = redrive(st.db)
            if as_json:
                print(json.dumps({"redriven": n, "stop_lifted": lifted}))
            else:
                print(f"{n} dead letters back to be delivered" + (f"; the stop of {lifted['url']} ({lifted['answer']}) "
                                                                 "lifted" if lifted else ""))
            return 0
        letters = dead_letters(st.db)
    for d in letters:
        if as_json:
            print(json.dumps(d, ensure_ascii=False, default=str))
        else:
            print(f"{d['envelope']['id']}  {d['envelope']['type']:<18} {d['why']}  {d['envelope'].get('subject', '')}")
    if not letters and not as_json:
        print("no dead letters")
    return 0


# --- a deployed stack ---------------------------------------------------------------------------------

def _aws(args: argparse.Namespace) -> Any:
    from heed.awsstack import Aws

    given = getattr(args, "aws", None)  # a test's (moto, a stubbed CloudFormation)
    return given if given is not None else Aws(getattr(args, "region", None), getattr(args, "profile", None))


def _stack_events(args: argparse.Namespace, kinds: list[str]) -> int:
    """The envelopes the stack's results log group holds (each line the EventBridge event the rule
    wrote, its ``detail`` the envelope), in the order they were put; ``--follow`` looks again every
    few seconds."""
    from heed_core.envelope import type_of

    from heed.awsstack import CommandError, output, stack_outputs

    aws = _aws(args)
    group = output(stack_outputs(aws, args.stack), "ResultsLogGroupName", args.stack)
    logs = aws.client("logs")
    wanted = {type_of(k) for k in kinds}
    started = args.since is None
    seen: set[str] = set()
    since_ms = 0
    with _Stop() as stop:
        while True:
            batch: list[tuple[int, dict[str, Any]]] = []
            for page in logs.get_paginator("filter_log_events").paginate(logGroupName=group, startTime=since_ms):
                for e in page.get("events", []):
                    try:
                        data = json.loads(e["message"])
                    except (ValueError, KeyError):
                        continue
                    env = data.get("detail") if isinstance(data, dict) else None
                    if isinstance(env, dict) and isinstance(env.get("id"), str):
                        batch.append((int(e.get("timestamp", 0)), env))
            batch.sort(key=lambda t: t[0])
            out = []
            for ts, env in batch:
                if env["id"] in seen:
                    continue
                seen.add(env["id"])
                since_ms = max(since_ms, ts)
                if not started:
                    started = env["id"] == args.since
                    continue
                if not wanted or env.get("type") in wanted:
                    out.append((json.dumps(env, ensure_ascii=False, default=str) if args.json else _line(env)) + "\n")
            if out:
                sys.stdout.write("".join(out))
                sys.stdout.flush()
            if not started:
                raise CommandError(f"--since: no event with id {args.since!r} in {group}")
            if not args.follow or stop.event.wait(5.0):
                return 0


def _stack_dead(args: argparse.Namespace) -> int:
    """The webhook's dead-letter queue on the stack; ``--redrive``: each back on the delivery queue
    (its order kept) and a stop for 410 Gone lifted."""
    import time

    from heed_aws.deliverer import GROUP, STOP_KEY
    from heed_aws.store import DynamoStore

    from heed.awsstack import CommandError, output, stack_outputs

    aws = _aws(args)
    outputs = stack_outputs(aws, args.stack)
    if "DeliveryDeadLetterQueueUrl" not in outputs:
        raise CommandError(f"stack {args.stack} has no webhook (deploy it with ResultsWebhookUrl)")
    dlq, queue = outputs["DeliveryDeadLetterQueueUrl"], outputs["DeliveryQueueUrl"]
    sqs = aws.client("sqs")
    as_json = getattr(args, "json", False)
    moved = 0
    while True:
        msgs = sqs.receive_message(QueueUrl=dlq, MaxNumberOfMessages=10, MessageAttributeNames=["All"],
                                   VisibilityTimeout=30 if args.redrive else 2).get("Messages", [])
        if not msgs:
            break
        for m in msgs:
            why = (m.get("MessageAttributes") or {}).get("why", {}).get("StringValue", "")
            if args.redrive:
                sqs.send_message(QueueUrl=queue, MessageBody=m["Body"], MessageGroupId=GROUP,
                                 MessageDeduplicationId=f"redrive-{m['MessageId']}"[:128])
                sqs.delete_message(QueueUrl=dlq, ReceiptHandle=m["ReceiptHandle"])
                moved += 1
                continue
            try:
                env = json.loads(m["Body"]).get("detail") or {}
            except ValueError:
                env = {}
            if as_json:
                print(json.dumps({"why": why, "envelope": env}, ensure_ascii=False))
            else:
                print(f"{env.get('id', m['MessageId'])}  {env.get('type', '?'):<18} {why}  {env.get('subject', '')}")
        if not args.redrive:
            for m in msgs:  # a look, not a take: visible again at once
                sqs.change_message_visibility(QueueUrl=dlq, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0)
            break
    if args.redrive:
        store = DynamoStore(output(outputs, "StateTableName", args.stack), aws.client("dynamodb"))
        mark = store.get_meta(STOP_KEY)
        lifted = bool(mark and mark.get("url"))
        if lifted:
            store.put_meta(STOP_KEY, {"url": None, "lifted_at": time.time()})
        said = "; the webhook's stop (410 Gone) lifted" if lifted else ""
        print(json.dumps({"redriven": moved, "stop_lifted": lifted}) if as_json else
              f"{moved} dead letters back to be delivered{said}")
    return 0

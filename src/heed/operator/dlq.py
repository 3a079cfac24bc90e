"""`heed dlq list|redrive`: what sits in a bot's dead-letter queue, and putting it back on the work queue
(a stack's SQS DLQ, or a state directory's dead-letter table).

A token reaches the DLQ only after maxReceiveCount receives without success (deferrals are
replaced tokens, so they never get there): each one is a host whose turn kept failing. `list`
looks without taking anything away; `redrive` moves the tokens back once the cause is fixed.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from heed.awsstack import Aws, CommandError, add_aws_arguments, aws_errors, output, stack_outputs

HOLD_S = 120  # while listing, a seen token stays hidden so the next receive shows the others
BODY_SUMMARY = 120
_NO_QUEUE = {"AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"}
_NO_MOVE_TASK = {"UnsupportedOperation", "AWS.SimpleQueueService.UnsupportedOperation"}


@dataclass(frozen=True)
class Queues:
    """The DLQ, and the work queue its tokens go back to (None when nothing says which it is)."""

    dlq_url: str
    dlq_arn: str
    work_url: str | None = None
    work_arn: str | None = None
    # The work queue's RedrivePolicy names this DLQ: SQS knows the pair, StartMessageMoveTask works.
    paired: bool = False
    work_fifo: bool = True


def _attributes(sqs: Any, url: str) -> dict[str, str]:
    from botocore.exceptions import ClientError

    try:
        return dict(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"])
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in _NO_QUEUE:
            raise CommandError(f"no queue at {url}") from exc
        raise


def _url_of(sqs: Any, arn: str) -> str:
    from botocore.exceptions import ClientError

    # arn:aws:sqs:<region>:<account>:<name>
    account, name = arn.split(":")[4], arn.split(":")[5]
    try:
        return str(sqs.get_queue_url(QueueName=name, QueueOwnerAWSAccountId=account)["QueueUrl"])
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in _NO_QUEUE:
            raise CommandError(f"the dead-letter queue {arn} does not exist") from exc
        raise


def _redrive_target(attrs: dict[str, str]) -> str | None:
    policy = attrs.get("RedrivePolicy")
    return str(json.loads(policy)["deadLetterTargetArn"]) if policy else None


def resolve(sqs: Any, *, dlq_url: str | None = None, work_url: str | None = None,
            queue_url: str | None = None) -> Queues:
    """From a stack's two URLs, or from one URL that is either the work queue (it has a
    RedrivePolicy naming its DLQ) or the DLQ (its source is asked with ListDeadLetterSourceQueues)."""
    if queue_url is not None:
        attrs = _attributes(sqs, queue_url)
        target = _redrive_target(attrs)
        if target is not None:
            work_url, dlq_url = queue_url, _url_of(sqs, target)
        else:
            dlq_url = queue_url
            sources = sqs.list_dead_letter_source_queues(QueueUrl=dlq_url).get("queueUrls", [])
            work_url = sources[0] if len(sources) == 1 else None
    assert dlq_url is not None
    dlq = _attributes(sqs, dlq_url)
    if work_url is None:
        return Queues(dlq_url, dlq["QueueArn"])
    work = _attributes(sqs, work_url)
    return Queues(dlq_url, dlq["QueueArn"], work_url, work["QueueArn"], paired=_redrive_target(work) == dlq["QueueArn"],
                  work_fifo=work.get("FifoQueue") == "true")


def _iso_ms(value: Any) -> str | None:
    try:
        return datetime.fromtimestamp(int(value) / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (TypeError, ValueError):
        return None


def token_row(message: dict[str, Any]) -> dict[str, Any]:
    """A DLQ message as `heed dlq list` shows it: the host and round of its token, how often it was received."""
    attrs = message.get("Attributes", {})
    body = str(message.get("Body", ""))
    try:
        token = json.loads(body)
    except json.JSONDecodeError:
        token = None
    token = token if isinstance(token, dict) else {}
    return {"host": token.get("host"), "round_id": token.get("round_id"), "token_id": message.get("MessageId"),
            "receives": int(attrs["ApproximateReceiveCount"]) if "ApproximateReceiveCount" in attrs else None,
            "sent": _iso_ms(attrs.get("SentTimestamp")), "group": attrs.get("MessageGroupId"),
            "dedup_id": attrs.get("MessageDeduplicationId"),
            "body": body if len(body) <= BODY_SUMMARY else body[:BODY_SUMMARY - 1] + "…"}


def _receive(sqs: Any, url: str, n: int, hold_s: int, wait_s: int) -> list[dict[str, Any]]:
    return list(sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=max(1, min(10, n)), VisibilityTimeout=hold_s,
                                    WaitTimeSeconds=wait_s, MessageSystemAttributeNames=["All"],
                                    MessageAttributeNames=["All"]).get("Messages", []))


def peek(sqs: Any, queues: Queues, *, limit: int, wait_s: int = 1) -> list[dict[str, Any]]:
    """Every token in the DLQ (up to ``limit``), none deleted: each is hidden while looking, then
    shown again. A look is a receive, so each one adds one to a token's receive count."""
    seen: dict[str, dict[str, Any]] = {}
    empty = 0
    try:
        while len(seen) < limit and empty < 2:  # a FIFO queue can answer empty once with tokens left
            batch = _receive(sqs, queues.dlq_url, limit - len(seen), HOLD_S, wait_s)
            empty = 0 if batch else empty + 1
            for message in batch:
                seen.setdefault(message["MessageId"], message)
    finally:
        handles = [m["ReceiptHandle"] for m in seen.values()]
        for i in range(0, len(handles), 10):
            sqs.change_message_visibility_batch(QueueUrl=queues.dlq_url, Entries=[
                {"Id": str(n), "ReceiptHandle": h, "VisibilityTimeout": 0} for n, h in enumerate(handles[i:i + 10])])
    return [token_row(m) for m in seen.values()]


def move_by_hand(sqs: Any, queues: Queues, *, limit: int | None, wait_s: int = 1) -> list[dict[str, Any]]:
    """Receive, send to the work queue, delete: MessageGroupId kept (the host's group, COMMON-05),
    a new deduplication id derived from the DLQ message, so a retried move is not a second token."""
    assert queues.work_url is not None
    moved: list[dict[str, Any]] = []
    empty = 0
    while (limit is None or len(moved) < limit) and empty < 2:
        batch = _receive(sqs, queues.dlq_url, 10 if limit is None else limit - len(moved), HOLD_S, wait_s)
        empty = 0 if batch else empty + 1
        for message in batch:
            attrs = message.get("Attributes", {})
            send: dict[str, Any] = {"QueueUrl": queues.work_url, "MessageBody": message["Body"]}
            if message.get("MessageAttributes"):
                send["MessageAttributes"] = message["MessageAttributes"]
            if queues.work_fifo:
                if "MessageGroupId" not in attrs:
                    raise CommandError(f"token {message['MessageId']} has no MessageGroupId; the work queue is FIFO")
                send["MessageGroupId"] = attrs["MessageGroupId"]
                send["MessageDeduplicationId"] = f"redrive-{message['MessageId']}"
            sent = sqs.send_message(**send)
            sqs.delete_message(QueueUrl=queues.dlq_url, ReceiptHandle=message["ReceiptHandle"])
            moved.append({**token_row(message), "new_token_id": sent.get("MessageId")})
    return moved


def waiting(sqs: Any, queues: Queues) -> int:
    """About how many tokens the DLQ holds, hidden ones included."""
    attrs = _attributes(sqs, queues.dlq_url)
    return int(attrs.get("ApproximateNumberOfMessages", 0)) + int(attrs.get("ApproximateNumberOfMessagesNotVisible", 0))


def start_move_task(sqs: Any, queues: Queues, tokens: int) -> dict[str, Any]:
    """SQS's own redrive (StartMessageMoveTask): DLQ -> work queue, done by SQS in the background."""
    assert queues.work_arn is not None
    handle = sqs.start_message_move_task(SourceArn=queues.dlq_arn, DestinationArn=queues.work_arn)["TaskHandle"]
    return {"task": handle, "from": queues.dlq_url, "to": queues.work_url, "tokens": tokens}


# --- output -----------------------------------------------------------------------------------

def table(rows: list[dict[str, Any]], *, moved: bool = False) -> str:
    header = ["HOST", "ROUND", "RECEIVES", "SENT", "TOKEN ID", *(["NEW TOKEN ID"] if moved else ["BODY"])]
    body = [[str(r["host"] or "-"), str(r["round_id"] or "-"), str(r["receives"] if r["receives"] is not None else "-"),
             str(r["sent"] or "-"), str(r["token_id"]), str(r["new_token_id"] if moved else r["body"])] for r in rows]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header) - 1)]
    return "\n".join("  ".join([*(cell.ljust(w) for cell, w in zip(line[:-1], widths, strict=True)), line[-1]]).rstrip()
                     for line in [header, *body])


# --- the command ------------------------------------------------------------------------------

def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number above 0")
    return value


def register(subparsers: Any) -> None:
    """Adds `heed dlq list|redrive` to the `heed` command's subparsers."""
    dlq = subparsers.add_parser("dlq", help="a bot's dead-letter queue (a stack's, a state directory's): list it, "
                                       "redrive it",
                                description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = dlq.add_subparsers(dest="dlq_command", required=True)
    for name, text in (("list",
                        "show the tokens in the DLQ (host, token id, receive count, body) without removing them"),
                       ("redrive", "move the DLQ's tokens back to the work queue")):
        cmd = commands.add_parser(name, help=text, description=text)
        where = cmd.add_mutually_exclusive_group(required=True)
        where.add_argument("--stack", help="the bot's stack (its WorkQueueUrl and DeadLetterQueueUrl outputs)")
        where.add_argument("--state", metavar="DIR",
                           help="a state directory (heed serve --state DIR; it may be running): its dead-letter table")
        where.add_argument("--queue-url", help="the work queue's URL or its dead-letter queue's")
        add_aws_arguments(cmd)
        cmd.add_argument("--json", action="store_true", help="one JSON object per token instead of a table")
        if name == "list":
            cmd.add_argument("--limit", type=_positive, default=1000, help="show at most N tokens (default 1000)")
        else:
            cmd.add_argument("--by-hand", action="store_true",
                             help="receive, send and delete each token here instead of asking SQS to move them")
            cmd.add_argument("--limit", type=_positive, default=None,
                             help="with --by-hand or --state: move at most N tokens")
        cmd.set_defaults(func=cmd_dlq)


def cmd_dlq(args: argparse.Namespace, *, aws: Aws | None = None, wait_s: int = 1) -> int:
    return aws_errors(f"dlq {args.dlq_command}",
                      lambda: _dlq(args, aws or Aws(region=args.region, profile=args.profile), wait_s))


def _dlq(args: argparse.Namespace, aws: Aws, wait_s: int) -> int:
    if getattr(args, "state", None) is not None:
        return _dlq_state(args)
    from botocore.exceptions import ClientError

    if args.dlq_command == "redrive" and args.limit is not None and not args.by_hand:
        raise CommandError("--limit goes with --by-hand (SQS's own move takes every token)")
    if args.stack is not None:
        outputs = stack_outputs(aws, args.stack)
        queues = resolve(aws.client("sqs"), dlq_url=output(outputs, "DeadLetterQueueUrl", args.stack),
                         work_url=output(outputs, "WorkQueueUrl", args.stack))
    else:
        queues = resolve(aws.client("sqs"), queue_url=args.queue_url)
    sqs = aws.client("sqs")
    if args.dlq_command == "list":
        rows = peek(sqs, queues, limit=args.limit, wait_s=wait_s)
        if not rows:
            print(f"heed dlq: the dead-letter queue {queues.dlq_url} is empty", file=sys.stderr)
            return 0
        _print(rows, args.json, moved=False)
        return 0
    if queues.work_url is None:
        raise CommandError(f"which work queue do the tokens of {queues.dlq_url} go back to? "
                           "Give --stack, or the work queue's URL as --queue-url")
    if queues.paired and not args.by_hand:
        tokens = waiting(sqs, queues)
        if tokens == 0:
            print(f"heed dlq: the dead-letter queue {queues.dlq_url} is empty", file=sys.stderr)
            return 0
        try:
            task = start_move_task(sqs, queues, tokens)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") not in _NO_MOVE_TASK:
                raise
            print("heed dlq redrive: SQS cannot move these tokens itself here; moving them one by one", file=sys.stderr)
        else:
            print(json.dumps(task) if args.json else
                  f"SQS is moving about {tokens} token(s) from {task['from']} back to {task['to']} "
                  f"(task {task['task']}; `heed dlq list` shows what is left)")
            return 0
    rows = move_by_hand(sqs, queues, limit=args.limit, wait_s=wait_s)
    if not rows:
        print(f"heed dlq: the dead-letter queue {queues.dlq_url} is empty", file=sys.stderr)
        return 0
    _print(rows, args.json, moved=True)
    print(f"heed dlq redrive: moved {len(rows)} token(s) back to {queues.work_url}", file=sys.stderr)
    return 0


def _dead_row(dead: dict[str, Any]) -> dict[str, Any]:
    """A row of a state directory's dead-letter table as `heed dlq list` shows a DLQ message."""
    body = str(dead["body"])
    try:
        token = json.loads(body)
    except json.JSONDecodeError:
        token = None
    token = token if isinstance(token, dict) else {}

    def stamp(t: Any) -> str | None:
        return datetime.fromtimestamp(float(t), UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if t else None
    return {"host": token.get("host"), "round_id": token.get("round_id"), "token_id": f"m{dead['id']}",
            "receives": int(dead["receives"]), "sent": stamp(dead["sent"]), "group": dead["group"],
            "dedup_id": dead["dedup"], "dead_at": stamp(dead["dead_at"]), "why": dead["why"],
            "body": body if len(body) <= BODY_SUMMARY else body[:BODY_SUMMARY - 1] + "…"}


def _dlq_state(args: argparse.Namespace) -> int:
    """The dead-letter table of a state directory: listed, or moved back to the work queue
    (the host's group kept), while `heed serve` runs on it or not."""
    from pathlib import Path

    from heed_embedded.queue import WorkQueue

    from heed.state_dir import StateDirError, open_local

    if args.region or args.profile:
        raise CommandError("--region and --profile go with --stack, not --state")
    if args.dlq_command == "redrive" and args.by_hand:
        raise CommandError("--by-hand goes with --stack or --queue-url (a state directory's tokens move in one "
                           "transaction)")
    try:
        with open_local(Path(args.state), write=False) as state:
            queue = WorkQueue(state.db)
            if args.dlq_command == "list":
                rows = [_dead_row(d) for d in queue.dead_letters(args.limit)]
            else:
                dead = {d["id"]: d for d in queue.dead_letters(args.limit)}
                rows = [{**_dead_row(dead[m["id"]]), "new_token_id": f"m{m['new_id']}"}
                        for m in queue.redrive(args.limit)]
    except StateDirError as exc:
        raise CommandError(str(exc)) from exc
    if not rows:
        print(f"heed: the dead-letter table of {args.state} is empty", file=sys.stderr)
        return 0
    _print(rows, args.json, moved=args.dlq_command == "redrive")
    if args.dlq_command == "redrive":
        print(f"heed: moved {len(rows)} token(s) back to the work queue of {args.state}", file=sys.stderr)
    return 0


def _print(rows: list[dict[str, Any]], as_json: bool, *, moved: bool) -> None:
    if as_json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
    else:
        print(table(rows, moved=moved))

"""`heed audit --host HOST`: every request the bot made to one host, for its owner ("what did your bot do here?").

From a local run's requests.jsonl (``--out DIR``), from a state directory's request log (``--state
DIR``: its table, read by an index on host and time; every request kept, wall-clock times), or from a deployed
stack's fetcher log group through CloudWatch Logs Insights (``--stack NAME``). All go through the
same filter, so a host name, ``host:port`` or a URL mean the same thing in every place. A run on a
simulated clock is marked as such (its times beside the wall clock's).
"""
from __future__ import annotations

import argparse
import ipaddress
import json
import re
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from heed_core.urls import BadUrl, authority

from heed.awsstack import Aws, CommandError, add_aws_arguments, aws_errors, output, stack_outputs

DEFAULT_WINDOW = timedelta(hours=24)  # deployed: Logs Insights bills what it scans
RESULT_LIMIT = 10_000  # the most rows one Logs Insights query returns
# A request is logged when it ends; one that started inside the window may be logged up to a
# Lambda timeout (15 minutes at most) later.
LOG_SLACK_S = 900
_LABEL = re.compile(r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?")


@dataclass(frozen=True)
class HostFilter:
    """A host name (lower case, IDNA), and a port only when one was written."""

    name: str
    port: int | None = None

    def matches(self, url: str) -> bool:
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            return False
        if _canonical(parts.hostname or "") != self.name:
            return False
        if self.port is None:
            return True
        default = {"http": 80, "https": 443}.get(parts.scheme.lower())
        return (port if port is not None else default) == self.port

    def insights_pattern(self) -> str:
        """The `host` field (scheme://host:port) as a Logs Insights regex: /^https?:\\/\\/name:port$/."""
        port = str(self.port) if self.port is not None else r"\d+"
        return r"/^https?:\/\/" + re.escape(self.name) + ":" + port + "$/"


def _canonical(name: str) -> str | None:
    """A host name as the filter compares it: lower-case IDNA, an IPv6 address compressed in brackets."""
    name = name.strip().rstrip(".").strip("[]")
    try:
        ip = ipaddress.ip_address(name)
        return f"[{ip.compressed}]" if ip.version == 6 else ip.compressed
    except ValueError:
        pass
    try:
        name = name.encode("idna").decode("ascii").lower()
    except UnicodeError:
        return None
    return name if name and all(_LABEL.fullmatch(label) for label in name.split(".")) else None


def parse_host(text: str) -> HostFilter:
    """``example.org``, ``example.org:8080``, ``[2001:db8::1]`` or a URL (reduced to its host)."""
    raw = text.strip()
    mistake = CommandError(f"--host: {text!r} is not a host name (e.g. example.org, example.org:8080 or a URL)")
    try:
        parts = urlsplit(raw if "://" in raw else "//" + raw)
        hostname, port = parts.hostname or "", parts.port
    except ValueError as exc:
        raise mistake from exc
    if parts.username is not None or parts.password is not None or (port is not None and not 0 < port < 65536):
        raise mistake
    name = _canonical(hostname)
    if name is None:
        raise mistake
    return HostFilter(name, port)


def parse_time(text: str | None, flag: str) -> float | None:
    """ISO 8601 (``2026-11-30T06:00:00Z``; UTC when no zone is written) as epoch seconds."""
    if text is None:
        return None
    try:
        dt = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise CommandError(f"{flag}: {text!r} is not an ISO 8601 time (e.g. 2026-11-30T06:00:00Z)") from exc
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def _epoch(value: Any) -> float | None:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


@dataclass(frozen=True)
class Window:
    since: float | None = None
    until: float | None = None

    def holds(self, record: dict[str, Any]) -> bool:
        if self.since is None and self.until is None:
            return True
        t = _epoch(record.get("t_start"))
        if t is None:
            return False
        return (self.since is None or t >= self.since) and (self.until is None or t <= self.until)


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def audit_row(record: dict[str, Any]) -> dict[str, Any]:
    """One request as the audit shows it: time, method, path, status or error, purpose, bytes, source."""
    url = str(record.get("url", ""))
    parts = urlsplit(url)
    try:
        host = str(record.get("host") or authority(url))  # runs before issue 11 wrote no host
    except BadUrl:
        host = ""
    row: dict[str, Any] = {"t_start": record.get("t_start"), "t_end": record.get("t_end"),
                           "method": record.get("method") or "GET", "host": host,
                           "path": (parts.path or "/") + (f"?{parts.query}" if parts.query else ""), "url": url,
                           "status": _int(record.get("status")), "purpose": record.get("purpose"),
                           "bytes": _int(record.get("bytes")), "source": record.get("source")}
    if record.get("error"):
        row["error"] = record["error"]
    if record.get("clock") == "simulated":
        # A run on a simulated clock: its times are not the ones a site owner's log shows.
        row["clock"] = "simulated"
        row["wall"] = _iso(float(record["wall"])) if isinstance(record.get("wall"), (int, float)) else None
    return row


def select(records: Iterable[dict[str, Any]], host: HostFilter, window: Window) -> list[dict[str, Any]]:
    rows = [audit_row(r) for r in records if host.matches(str(r.get("url", ""))) and window.holds(r)]
    return sorted(rows, key=lambda r: str(r["t_start"] or ""))


# --- where the records come from ----------------------------------------------------------

def local_records(out: Path) -> list[dict[str, Any]]:
    """A `heed local run --out DIR` folder's requests.jsonl."""
    path = out / "requests.jsonl"
    if not path.is_file():
        raise CommandError(f"{out}: no requests.jsonl here (a `heed local run --out {out}` folder)")
    from heed.outputs import OutputError, read_jsonl

    try:
        return read_jsonl(path)
    except OutputError as exc:
        raise CommandError(str(exc)) from exc


def state_records(state: Path, host: HostFilter, window: Window) -> list[dict[str, Any]]:
    """A state directory's request log: the requests to ``host`` within ``window``, read by the
    table's index on host and time (never the whole log: a year of requests answers in a moment)."""
    from heed_embedded.journal import host_ranges, records_by_host
    from heed_embedded.state import MANIFEST, open_state

    if not (state / MANIFEST).is_file():
        raise CommandError(f"--state: {state} is not a heed state directory (`heed serve --state {state}` makes one)")
    st = open_state(state, create=False)
    try:
        for note in st.notes:
            print(note, file=sys.stderr)
        # The table's time is a request's start, as the window reads it (``Window.holds``).
        return list(records_by_host(st.db, "requests", host_ranges(host.name, host.port),
                                    since=window.since, until=window.until))
    finally:
        st.close()


def insights_query(host: HostFilter) -> str:
    return ("fields @timestamp, t_start, t_end, method, url, host, status, error, purpose, bytes, source\n"
            f'| filter heed = "request" and host like {host.insights_pattern()}\n'
            "| sort t_start asc\n"
            f"| limit {RESULT_LIMIT}")


def deployed_records(logs: Any, log_group: str, host: HostFilter, since: float, until: float, *,
                     timeout_s: float, poll_s: float = 1.0, sleep: Callable[[float], None] = time.sleep,
                     clock: Callable[[], float] = time.monotonic) -> list[dict[str, Any]]:
    """Run the audit query on the fetcher's log group and wait for it (start_query, get_query_results)."""
    from botocore.exceptions import ClientError

    query_id = logs.start_query(logGroupName=log_group, startTime=int(since), endTime=int(until + LOG_SLACK_S) + 1,
                                queryString=insights_query(host), limit=RESULT_LIMIT)["queryId"]
    deadline = clock() + timeout_s
    while True:
        answer = logs.get_query_results(queryId=query_id)
        status = answer.get("status")
        if status == "Complete":
            break
        if status in ("Failed", "Cancelled", "Timeout", "Unknown"):
            raise CommandError(f"the Logs Insights query ended {status} (log group {log_group})")
        if clock() >= deadline:
            try:
                logs.stop_query(queryId=query_id)
            except ClientError:  # it may have finished meanwhile; the error below says the same
                pass
            raise CommandError(f"the Logs Insights query did not finish in {timeout_s:g} s "
                               "(a shorter --since/--until scans less, or give --timeout)")
        sleep(poll_s)
    rows = [{cell["field"]: cell["value"] for cell in row if not cell["field"].startswith("@ptr")}
            for row in answer.get("results", [])]
    if len(rows) >= RESULT_LIMIT:
        print(f"heed audit: warning: only the first {RESULT_LIMIT} requests; narrow --since/--until", file=sys.stderr)
    return rows


# --- output -----------------------------------------------------------------------------------

def table(rows: list[dict[str, Any]]) -> str:
    one_host = len({r["host"] for r in rows}) <= 1
    simulated = any(r.get("clock") == "simulated" for r in rows)
    header = ["TIME (simulated)" if simulated else "TIME", "METHOD", "STATUS", "PURPOSE", "BYTES", "SOURCE",
              "PATH" if one_host else "URL"]
    if simulated:
        header.insert(1, "WALL CLOCK")
    body = [[str(r["t_start"] or "-"), *([str(r.get("wall") or "-")] if simulated else []), r["method"],
             str(r["status"] if r["status"] is not None else r.get("error", "-")), str(r["purpose"] or "-"),
             str(r["bytes"] if r["bytes"] is not None else "-"), str(r["source"] or "-"),
             r["path"] if one_host else r["url"]] for r in rows]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header) - 1)]
    return "\n".join("  ".join([*(cell.ljust(w) for cell, w in zip(line[:-1], widths, strict=True)), line[-1]]).rstrip()
                     for line in [header, *body])


# --- the command ------------------------------------------------------------------------------

def register(subparsers: Any) -> None:
    """Adds `heed audit` to the `heed` command's subparsers."""
    audit = subparsers.add_parser(
        "audit", help="every request the bot made to one host (time, method, path, status, purpose, bytes, source)",
        description="Every request the bot made to one host, with its time, method, path, status, purpose, "
                    "bytes and the source that caused it: from a local run's requests.jsonl (--out), from a state "
                    "directory's request log (--state: every request it keeps, by an index), or from "
                    "a deployed stack's fetcher logs through CloudWatch Logs Insights (--stack).")
    audit.add_argument("--host", required=True,
                       help="a host name (example.org), host:port, or a URL reduced to its host")
    audit.add_argument("--since", metavar="T",
                       help="ISO 8601 start (default: everything locally; 24 hours before --until deployed)")
    audit.add_argument("--until", metavar="T", help="ISO 8601 end (default: everything locally; now deployed)")
    audit.add_argument("--json", action="store_true", help="one JSON object per request instead of a table")
    where = audit.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", metavar="DIR", help="a `heed local run --out` folder (its requests.jsonl)")
    where.add_argument("--state", metavar="DIR",
                       help="a state directory (heed serve --state DIR): every request its log keeps (heed serve "
                            "--keep-requests, default 400 days; wall-clock times)")
    where.add_argument("--stack", metavar="NAME",
                       help="a deployed bot's stack: its fetcher's logs, through Logs Insights")
    add_aws_arguments(audit)
    audit.add_argument("--timeout", metavar="S", type=float, default=120.0,
                       help="seconds to wait for Logs Insights (default 120)")
    audit.set_defaults(func=cmd_audit)


def cmd_audit(args: argparse.Namespace, *, aws: Aws | None = None, now: Callable[[], float] = time.time,
              sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic) -> int:
    """The command; tests hand in the AWS clients, the wall clock, and the poll's sleep and clock."""
    return aws_errors("audit", lambda: _audit(args, aws or Aws(region=args.region, profile=args.profile),
                                              now, sleep, clock))


def _audit(args: argparse.Namespace, aws: Aws, now: Callable[[], float], sleep: Callable[[float], None],
           clock: Callable[[], float]) -> int:
    host = parse_host(args.host)
    since, until = parse_time(args.since, "--since"), parse_time(args.until, "--until")
    if since is not None and until is not None and since > until:
        raise CommandError("--since is after --until")
    if args.out is not None:
        if args.region or args.profile:
            raise CommandError("--region and --profile go with --stack, not --out")
        where = args.out
        rows = select(local_records(Path(args.out)), host, Window(since, until))
    elif getattr(args, "state", None) is not None:
        if args.region or args.profile:
            raise CommandError("--region and --profile go with --stack, not --state")
        where = args.state
        rows = select(state_records(Path(args.state), host, Window(since, until)), host, Window(since, until))
    else:
        if not args.timeout > 0:
            raise CommandError("--timeout must be a number of seconds above 0")
        until = until if until is not None else now()
        since = since if since is not None else until - DEFAULT_WINDOW.total_seconds()
        if since > until:
            raise CommandError("--since is after now (give --until too)")
        log_group = output(stack_outputs(aws, args.stack), "FetcherLogGroup", args.stack)
        where = f"{log_group} ({_iso(since)} .. {_iso(until)})"
        records = deployed_records(aws.client("logs"), log_group, host, since, until, timeout_s=args.timeout,
                                   sleep=sleep, clock=clock)
        rows = select(records, host, Window(since, until))
    if not rows:
        print(f"heed audit: no request to {host.name}{'' if host.port is None else f':{host.port}'} in {where}",
              file=sys.stderr)
        return 1
    if args.json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
    else:
        print(table(rows))
    return 0


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

"""The desk on AWS: one function behind the info page's CloudFront (a function URL), its records
in the stack's table (``heed_aws.desk``), the crawl's state through the operator's store (its only
write path: block, a host's floor, purge), the proof file's work item sent to the work queue as
the scheduler sends tokens, our requests read from the fetcher's log group through Logs Insights
as ``heed audit --stack`` reads them (bounded: a window and a row limit), and the operator told
on the stack's alarm topic.

``function_url_handler`` turns a Lambda function URL event (payload 2.0) into a WSGI call of the
desk and its answer back (cookies in ``cookies``, as function URLs want them). Behind CloudFront
the client's address is CloudFront's ``CloudFront-Viewer-Address``, trusted only when the origin
header CloudFront adds carries the stack's secret; called directly, the caller's own address."""
from __future__ import annotations

import base64
import io
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from heed_core.desk.scope import Scope
from heed_core.desk.store import DeskAction
from heed_core.hoststate import TokenOut
from heed_core.profile import Profile

from heed_aws.desk import DynamoDeskStore
from heed_aws.operator_store import DynamoOperatorStore, S3Texts
from heed_aws.queue import TokenQueue

from heed.desk.backend import StoreBackend

__all__ = ["AUDIT_WINDOW_S", "AwsBackend", "ORIGIN_HEADER", "client_of", "function_url_handler", "insights_reader"]

AUDIT_WINDOW_S = 7 * 86400.0  # the audit reads a week of the fetcher's log (Logs Insights bills what it scans)
AUDIT_TIMEOUT_S = 20.0
MAX_WINDOWS = 8  # Logs Insights queries for one paste's lines (lines close in time share one)
ORIGIN_HEADER = "x-heed-desk-origin"  # CloudFront adds it, with the stack's secret, to every desk request
Reader = Callable[[Scope, float, float], list[dict[str, Any]]]


def insights_reader(logs: Any, log_group: str, *, timeout_s: float = AUDIT_TIMEOUT_S) -> Reader:
    """Our requests to a host between two times, from the fetcher's log group: the query
    ``heed audit --stack`` runs (heed.operator.audit), each a bounded window and row limit."""
    from heed.operator.audit import HostFilter, deployed_records

    def read(scope: Scope, since: float, until: float) -> list[dict[str, Any]]:
        host = HostFilter(scope.name, scope.port)
        return deployed_records(logs, log_group, host, since, until, timeout_s=timeout_s)
    return read


def _epoch(value: Any) -> float:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


class AwsBackend(StoreBackend):
    """``heed.desk.backend.Backend`` on a deployed stack (or the local runtime's moto stack)."""

    def __init__(self, profile: Profile, *, table: str, dynamodb: Any, sqs: Any, queue_url: str, s3: Any,
                 bucket: str, reader: Reader, sns: Any = None, topic_arn: str | None = None,
                 clock: Callable[[], float] = time.time, **kwargs: Any) -> None:
        super().__init__(profile, DynamoOperatorStore(table, dynamodb), S3Texts(s3, bucket),
                         where="the desk", **kwargs)
        self.desk_store = DynamoDeskStore(table, dynamodb)
        self.tokens = TokenQueue(queue_url, sqs)
        self.reader = reader
        self.sns = sns
        self.topic_arn = topic_arn
        self.clock = clock

    def requests_near(self, scope: Scope, times: Sequence[float], window_s: float) -> list[tuple[float, str]]:
        windows: list[list[float]] = []
        for t in sorted(set(times)):
            if windows and t - window_s - 1 <= windows[-1][1]:
                windows[-1][1] = t + window_s + 1
            else:
                windows.append([t - window_s - 1, t + window_s + 1])
        out: dict[tuple[float, str], None] = {}
        for since, until in windows[:MAX_WINDOWS]:
            for rec in self.reader(scope, since, until):
                url = str(rec.get("url", ""))
                if scope.covers(url):
                    out[(_epoch(rec.get("t_start")), url)] = None
        return list(out)

    def audit(self, scope: Scope, limit: int) -> list[dict[str, Any]]:
        from heed.operator.audit import audit_row

        now = self.clock()
        rows = [audit_row(r) for r in self.reader(scope, now - AUDIT_WINDOW_S, now)
                if scope.covers(str(r.get("url", "")))]
        return sorted(rows, key=lambda r: str(r.get("t_start") or ""), reverse=True)[:limit]

    def ask_fetch(self, work: TokenOut) -> None:
        self.tokens.send([work])

    def skipped(self, url: str, since: float) -> str | None:
        return None  # a skip is a log line: the desk says "waiting" until the file's record speaks

    def notify(self, action: DeskAction) -> None:
        if self.sns is None or not self.topic_arn:
            return
        when = datetime.fromtimestamp(action.at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        detail = {k: v for k, v in action.detail.items() if k in ("reason", "min_delay_s", "items", "texts")}
        detail["proven_on"] = action.detail.get("host")
        self.sns.publish(TopicArn=self.topic_arn, Subject=f"{self.profile.name}: a site owner asked: {action.kind} "
                                                           f"{action.name}"[:100],
                         Message=json.dumps({"bot": self.profile.name, "desk_action": action.kind, "host": action.name,
                                             "at": when, "client": action.client, **detail}, indent=2, default=str))


def client_of(secret: str | None) -> Callable[[Mapping[str, Any]], str]:
    """Who asks, for the rate limits: CloudFront's viewer address when the request came through
    the stack's distribution (its origin header holds ``secret``), else the caller's address."""
    def who(environ: Mapping[str, Any]) -> str:
        via = str(environ.get("HTTP_" + ORIGIN_HEADER.upper().replace("-", "_"), ""))
        viewer = str(environ.get("HTTP_CLOUDFRONT_VIEWER_ADDRESS", ""))
        if secret and via == secret and viewer:
            return viewer.rsplit(":", 1)[0].strip("[]")
        return str(environ.get("REMOTE_ADDR") or "-")
    return who


def function_url_handler(app: Callable[..., Any], event: Mapping[str, Any]) -> dict[str, Any]:
    """One function URL request (payload 2.0) through the WSGI ``app``."""
    http = (event.get("requestContext") or {}).get("http") or {}
    headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}
    raw = event.get("body") or ""
    body = base64.b64decode(raw) if event.get("isBase64Encoded") else str(raw).encode("utf-8")
    environ: dict[str, Any] = {
        "REQUEST_METHOD": str(http.get("method") or "GET").upper(), "PATH_INFO": str(event.get("rawPath") or "/"),
        "QUERY_STRING": str(event.get("rawQueryString") or ""), "REMOTE_ADDR": str(http.get("sourceIp") or "-"),
        "CONTENT_TYPE": headers.get("content-type", ""),
        "CONTENT_LENGTH": headers.get("content-length", str(len(body)) if body else ""),
        "HTTP_COOKIE": "; ".join(event.get("cookies") or []), "SERVER_NAME": headers.get("host", "desk"),
        "SERVER_PORT": "443", "SERVER_PROTOCOL": "HTTP/1.1", "wsgi.url_scheme": "https", "wsgi.input": io.BytesIO(body),
        "wsgi.errors": io.StringIO(), "wsgi.version": (1, 0), "wsgi.multithread": False,
        "wsgi.multiprocess": True, "wsgi.run_once": False}
    for k, v in headers.items():
        if k not in ("content-type", "content-length", "cookie"):
            environ["HTTP_" + k.upper().replace("-", "_")] = v
    answer: dict[str, Any] = {}

    def start_response(status: str, response_headers: list[tuple[str, str]]) -> None:
        answer["status"], answer["headers"] = int(status.split()[0]), response_headers

    out = b"".join(app(environ, start_response))
    hdrs = {k: v for k, v in answer["headers"] if k.lower() != "set-cookie"}
    cookies = [v for k, v in answer["headers"] if k.lower() == "set-cookie"]
    return {"statusCode": answer["status"], "headers": hdrs, "cookies": cookies,
            "body": out.decode("utf-8"), "isBase64Encoded": False}


def env_desk(profile: Profile, clients: Callable[[str], Any], env: Mapping[str, str] | None = None) -> Any:
    """The desk of a deployed stack, from the function's environment: the table, queue, bucket,
    fetcher log group and alarm topic the template names, and the origin secret."""
    from heed.desk.service import Desk
    from heed.desk.web import DeskApp

    e = dict(os.environ if env is None else env)
    backend = AwsBackend(profile, table=e["HEED_TABLE"], dynamodb=clients("dynamodb"), sqs=clients("sqs"),
                         queue_url=e["HEED_QUEUE_URL"], s3=clients("s3"), bucket=e["HEED_BUCKET"],
                         reader=insights_reader(clients("logs"), e["HEED_FETCHER_LOG_GROUP"]),
                         sns=clients("sns"), topic_arn=e.get("HEED_ALARM_TOPIC"))
    return DeskApp(Desk(profile, backend.desk_store, backend), client_of=client_of(e.get("HEED_DESK_ORIGIN_SECRET")))

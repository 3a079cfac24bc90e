"""A local state directory: the state table and results bucket of ``heed local run --state DIR``,
kept between runs, so a second run sends conditional GETs, remembers the URLs it saw and honours
the blocks an operator command wrote there.

On disk: ``heed-state.json`` (format, bot, when saved, the last run's output folder),
``table.jsonl`` (one DynamoDB item a line, binary attributes in base64) and ``bucket.jsonl``
(one object version a line, oldest first). A run or a command loads them into the embedded
AWS (moto) and, if it changed anything, writes them back whole (each file replaced atomically).
One heed process at a time holds a directory (an exclusive lock on ``DIR/.lock``)."""
from __future__ import annotations

import base64
import fcntl
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from heed_core.errors import ConfigError

FORMAT = 1
MANIFEST = "heed-state.json"
TABLE = "table.jsonl"
BUCKET = "bucket.jsonl"
REGION = "eu-west-1"

__all__ = ["LocalState", "StateDir", "StateDirError", "open_state"]


class StateDirError(ConfigError):
    """A state directory that cannot be used: one line, naming the directory."""

    code = "state_dir"


def _enc(value: Any) -> Any:
    """A DynamoDB attribute value as JSON (bytes in base64)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if k == "B":
                out["B64"] = base64.b64encode(bytes(v)).decode("ascii")
            elif k == "BS":
                out["BS64"] = [base64.b64encode(bytes(x)).decode("ascii") for x in v]
            else:
                out[k] = _enc(v)
        return out
    if isinstance(value, list):
        return [_enc(v) for v in value]
    return value


def _dec(value: Any) -> Any:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if k == "B64":
                out["B"] = base64.b64decode(v)
            elif k == "BS64":
                out["BS"] = [base64.b64decode(x) for x in v]
            else:
                out[k] = _dec(v)
        return out
    if isinstance(value, list):
        return [_dec(v) for v in value]
    return value


def _write_atomically(path: Path, lines: Iterator[str]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for line in lines:
            f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


@dataclass
class StateDir:
    path: Path
    _lock: Any = field(default=None, repr=False)

    # --- the directory ----------------------------------------------------------------------
    def manifest(self) -> dict[str, Any] | None:
        path = self.path / MANIFEST
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise StateDirError(f"{self.path}: {MANIFEST} is unreadable ({type(exc).__name__})") from exc
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise StateDirError(f"{self.path}: not a heed state directory of format {FORMAT}")
        return data

    def prepare(self, *, create: bool) -> dict[str, Any] | None:
        """The manifest, after checking the directory is one (or may become one)."""
        if self.path.exists() and not self.path.is_dir():
            raise StateDirError(f"--state: {self.path} is a file, not a folder")
        manifest = self.manifest() if self.path.is_dir() else None
        if manifest is None:
            if not create:
                raise StateDirError(f"--state: {self.path} is not a heed state directory "
                                    f"(`heed local run --state {self.path}` makes one)")
            if self.path.is_dir() and any(p.name != ".lock" for p in self.path.iterdir()):
                raise StateDirError(f"--state: {self.path} is a folder with other files in it, "
                                    "not a heed state directory")
            try:
                self.path.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StateDirError(f"--state: cannot make {self.path} ({exc.strerror or exc})") from exc
        return manifest

    def acquire(self) -> None:
        try:
            self._lock = (self.path / ".lock").open("a")
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            self._lock.close()
            self._lock = None
            raise StateDirError(f"--state: {self.path} is in use by another heed command or run; "
                                "try again when it has finished") from exc
        except OSError as exc:
            raise StateDirError(f"--state: cannot lock {self.path} ({exc.strerror or exc})") from exc

    def release(self) -> None:
        if self._lock is not None:
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None

    # --- into and out of the embedded AWS -----------------------------------------------------
    def load(self, dynamodb: Any, table: str, s3: Any, bucket: str, *, now: float) -> tuple[int, int]:
        """Put the saved items and object versions in. Items whose TTL has passed are left out,
        as DynamoDB would have deleted them. Returns (items, object versions)."""
        items = objects = 0
        batch: list[dict[str, Any]] = []
        for item in self._lines(TABLE):
            ttl = item.get("ttl", {}).get("N")
            if ttl is not None and float(ttl) < now:
                continue
            batch.append({"PutRequest": {"Item": _dec(item)}})
            items += 1
            if len(batch) == 25:
                _batch_write(dynamodb, table, batch)
                batch = []
        if batch:
            _batch_write(dynamodb, table, batch)
        for obj in self._lines(BUCKET):
            s3.put_object(Bucket=bucket, Key=obj["key"], Body=base64.b64decode(obj["body"]),
                          ContentType=obj.get("content_type") or "application/octet-stream")
            objects += 1
        return items, objects

    def _lines(self, name: str) -> Iterator[dict[str, Any]]:
        path = self.path / name
        if not path.is_file():
            return
        with path.open(encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise StateDirError(f"{path}:{number}: not a saved record (edited by hand?)") from exc
                if not isinstance(rec, dict):
                    raise StateDirError(f"{path}:{number}: not a saved record (edited by hand?)")
                yield rec

    def save(self, dynamodb: Any, table: str, s3: Any, bucket: str, *, bot: str | None,
             manifest: dict[str, Any] | None = None) -> dict[str, Any]:
        """Write the table and the bucket out whole; the manifest last."""
        counts = {"items": 0, "objects": 0}

        def items() -> Iterator[str]:
            kwargs: dict[str, Any] = {"TableName": table}
            while True:
                page = dynamodb.scan(**kwargs)  # the whole local table, written out: not the crawl's path
                for item in sorted(page.get("Items", []), key=lambda i: (i["pk"]["S"], i["sk"]["S"])):
                    counts["items"] += 1
                    yield json.dumps(_enc(item), separators=(",", ":"), sort_keys=True)
                if "LastEvaluatedKey" not in page:
                    return
                kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

        def objects() -> Iterator[str]:
            for key, version in _versions_oldest_first(s3, bucket):
                got = s3.get_object(Bucket=bucket, Key=key, VersionId=version)
                counts["objects"] += 1
                yield json.dumps({"key": key, "body": base64.b64encode(got["Body"].read()).decode("ascii"),
                                  "content_type": got.get("ContentType")}, separators=(",", ":"))

        _write_atomically(self.path / TABLE, items())
        _write_atomically(self.path / BUCKET, objects())
        data = {**(manifest or self.manifest() or {}), "format": FORMAT,
                "saved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **counts}
        if bot:
            data["bot"] = bot
        _write_atomically(self.path / MANIFEST, iter([json.dumps(data, indent=2)]))
        return data


def _batch_write(dynamodb: Any, table: str, requests: list[dict[str, Any]]) -> None:
    chunk: dict[str, Any] = {table: requests}
    for _ in range(10):
        chunk = dynamodb.batch_write_item(RequestItems=chunk).get("UnprocessedItems") or {}
        if not chunk:
            return
    raise StateDirError("the embedded table left items unprocessed")


def _versions_oldest_first(s3: Any, bucket: str) -> list[tuple[str, str]]:
    found: dict[str, list[str]] = {}
    kwargs: dict[str, Any] = {"Bucket": bucket}
    while True:
        resp = s3.list_object_versions(**kwargs)
        for v in resp.get("Versions", []):  # newest first for each key; delete markers are not kept
            found.setdefault(v["Key"], []).append(v["VersionId"])
        if not resp.get("IsTruncated"):
            break
        kwargs.update(KeyMarker=resp["NextKeyMarker"], VersionIdMarker=resp["NextVersionIdMarker"])
    return [(key, v) for key in sorted(found) for v in reversed(found[key])]


@dataclass
class LocalState:
    """A state directory loaded into the embedded AWS, for one operator command."""

    dir: StateDir
    session: Any
    table: str
    bucket: str
    manifest: dict[str, Any]
    changed: bool = False

    @property
    def bot(self) -> str | None:
        bot = self.manifest.get("bot")
        return str(bot) if bot else None

    def client(self, service: str) -> Any:
        return self.session.client(service)


@contextmanager
def open_state(path: Path, *, write: bool, bot: str | None = None) -> Iterator[LocalState]:
    """The directory in the embedded AWS for the length of a command; written back if the
    command changed something (``state.changed``) and ``write`` allows it."""
    import boto3
    from moto import mock_aws

    from heed.local.resources import create_stack_resources
    from heed.local.root import ROOT

    sd = StateDir(path)
    manifest = sd.prepare(create=write) or {"format": FORMAT}
    if bot and manifest.get("bot") and manifest["bot"] != bot:
        raise StateDirError(f"--state: {path} holds the state of {manifest['bot']}, not {bot}")
    if bot and not manifest.get("bot"):
        manifest["bot"] = bot
    sd.acquire()
    try:
        with mock_aws():
            session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing",
                                            region_name=REGION)
            res = create_stack_resources(template_path=ROOT / "template.yaml", bot=str(manifest.get("bot") or "heed"),
                                         prefix="heed-state", session=session, region=REGION)
            ddb, s3 = session.client("dynamodb"), session.client("s3")
            sd.load(ddb, res.table_name, s3, res.bucket, now=time.time())
            state = LocalState(sd, session, res.table_name, res.bucket, manifest)
            yield state
            if write and state.changed:
                sd.save(ddb, res.table_name, s3, res.bucket, bot=state.bot, manifest=manifest)
    finally:
        sd.release()

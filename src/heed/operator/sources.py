"""`heed sources add|import|list|show|remove|reopen`: a bot's sources on a stack or a state
directory, checked as a sources file is (heed_core.sources), written idempotently.

Per source: its kind, when it was last read and with what status, when its next round is due,
whether it is closed (why, since when), and how many feed items it has reported."""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from heed_core import kinds
from heed_core.profile import Profile
from heed_core.work import Source

from heed.awsstack import Aws, CommandError
from heed.operator.actions import TurnWait
from heed.operator.targets import Target, add_target_arguments, open_target, profile_of, run
from heed.progress import Progress

__all__ = ["next_due", "register", "source_row"]

_HORIZON = 5000  # firings looked at for the next due round


# A change of a host's state waits for a request in flight to be committed (heed.operator.actions.TurnWait).
TURN_WAIT = TurnWait(max_s=300.0)


def _iso(t: float | None) -> str | None:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if t is not None else None


def next_due(profile: Profile, src: Source, now: float) -> float | None:
    """When the source's next round takes it, as heed_core.rounds.entry_items decides: the next
    firing of its kind's schedules, later if its cadence (AUBE-08, PRAHA-04) is not over yet.
    None when it is closed or no schedule runs its kind."""
    from heed_core.schedule import next_fire

    if src.closed:
        return None
    exprs = [s.expression for s in profile.schedules if s.task == src.kind]
    if not exprs:
        return None
    cadence = kinds.cadence_s(profile, src.kind)
    t = now
    for _ in range(_HORIZON):
        t = min(next_fire(e, t) for e in exprs)
        if cadence and src.last_read is not None and t - src.last_read < cadence:
            if src.last_read + cadence - t > min(cadence / 2, 3600.0):
                continue  # this round leaves it out (seen_recently)
            return max(t, src.last_read + cadence)
        return t
    return None


def _entry_url(src: Any) -> str:
    """The URL whose record says how the source's last read went, as its kind says."""
    kind = kinds.find(src.kind)
    return kind.status_url(src) if kind is not None else str(src.url)


def source_row(src: Any, extra: dict[str, Any], profile: Any, records: dict[str, Any], now: float) -> dict[str, Any]:
    rec = records.get(_entry_url(src))
    status = extra.get("last_status")
    if status is None and rec is not None:
        status = rec.last_status
    return {"id": src.id, "url": src.url, "kind": src.kind, "options": dict(src.options),
            "last_read": _iso(src.last_read), "last_status": status,
            "next_due": _iso(next_due(profile, src, now)) if profile is not None else None,
            "closed": src.closed, "closed_reason": src.closed_reason, "closed_since": _iso(extra.get("closed_at")),
            "items_found": len(src.seen_items) if _keeps_seen_items(src.kind) else None}


def _keeps_seen_items(name: str) -> bool:
    kind = kinds.find(name)
    return kind is not None and kind.keeps_seen_items


def _rows(target: Target, profile: Any, now: float, only: list[str] | None = None) -> list[dict[str, Any]]:
    details = [(s, e) for s, e in target.store.source_details() if only is None or s.id in only]
    records = target.store.url_records([_entry_url(s) for s, _ in details]) if details else {}
    return [source_row(s, e, profile, records, now) for s, e in details]


def _find(target: Target, text: str) -> Any:
    """A source by its id, or by its URL when only one source has it."""
    src = target.store.get_source(text)
    if src is not None:
        return src
    same = [s for s in target.store.list_sources() if s.url == text]
    if len(same) == 1:
        return same[0]
    if same:
        raise CommandError(f"{len(same)} sources have the URL {text} (ids: {', '.join(s.id for s in same)}): "
                           "name one by its id")
    raise CommandError(f"no source {text!r} in {target.where} (heed sources list shows them)")


def _table(rows: list[dict[str, Any]]) -> str:
    header = ["ID", "KIND", "LAST READ", "STATUS", "NEXT DUE", "CLOSED", "ITEMS", "URL"]
    body = [[r["id"], r["kind"], r["last_read"] or "-", str(r["last_status"] or "-"), r["next_due"] or "-",
             f"since {r['closed_since'] or '?'}: {r['closed_reason']}" if r["closed"] else "-",
             "-" if r["items_found"] is None else str(r["items_found"]), r["url"]] for r in rows]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header) - 1)]
    return "\n".join("  ".join([*(c.ljust(w) for c, w in zip(line[:-1], widths, strict=True)), line[-1]]).rstrip()
                     for line in [header, *body])


# --- the commands -------------------------------------------------------------------------------

def _add(args: argparse.Namespace, aws: Aws, now: Callable[[], float]) -> int:
    from heed_core.sources import source_from_mapping

    from heed.operator.actions import import_sources

    raw: dict[str, Any] = {"url": args.url, "kind": args.kind}
    if args.id is not None:
        raw["id"] = args.id
    if args.write_about:
        raw["write_about"] = True
    if args.render:
        raw["render"] = True
    if args.sitemap:
        raw["sitemaps"] = list(args.sitemap)
    for text in args.option or ():
        key, sep, value = text.partition("=")
        if not sep or not key.strip():
            raise CommandError(f"--option {text!r}: write KEY=VALUE (e.g. --option write_about=true)")
        try:
            raw[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            raise CommandError(f"--option {text!r}: the value is not valid YAML") from exc
    with open_target(args, aws, write=True) as target:
        profile = profile_of(target, args.bot)
        src = source_from_mapping(raw, profile, "source")
        twin = next((s for s in target.store.list_sources()
                     if s.url == src.url and s.kind == src.kind and s.id != src.id), None)
        if twin is not None:
            # One page, one source: the URL in its canonical spelling is the source's identity.
            raise CommandError(f"{src.url} is already source {twin.id!r} ({twin.kind}); give --id {twin.id} to "
                               "change it, or heed sources remove it first")
        report = import_sources(target.store, [src], now(), wait=TURN_WAIT)
        if report.added or report.updated or report.hosts_cleared:
            target.changed()
        existing = target.store.get_source(src.id)
    what = "added" if report.added else "updated" if report.updated else "unchanged"
    if args.json:
        print(json.dumps({"source": src.id, "url": src.url, "kind": src.kind, "result": what}))
    else:
        print(f"{what} {src.id} ({src.kind} {src.url})")
    if existing is not None and existing.closed:
        print(f"heed sources add: note: {src.id} is closed ({existing.closed_reason}); heed sources reopen {src.id} "
              "lets it fetch again", file=sys.stderr)
    return 0


def _import(args: argparse.Namespace, aws: Aws, now: Callable[[], float]) -> int:
    from heed_core.sources import load_source_file

    from heed.operator.actions import import_sources

    path = Path(args.file)
    progress = Progress(f"import {path.name}")
    with open_target(args, aws, write=True) as target:
        profile = profile_of(target, args.bot)
        sources = load_source_file(path, profile)
        try:
            report = import_sources(target.store, sources, now(), progress=progress, wait=TURN_WAIT)
        finally:
            progress.close()
        if report.added or report.updated or report.hosts_cleared:
            target.changed()
    counts = report.counts()
    if args.json:
        print(json.dumps({"file": str(path), **counts, "where": target.where}))
    else:
        print(f"imported {path} into {target.where}: {counts['added']} added, {counts['updated']} updated, "
              f"{counts['unchanged']} unchanged")
    return 0


def _list(args: argparse.Namespace, aws: Aws, now: Callable[[], float]) -> int:
    with open_target(args, aws, write=False) as target:
        profile = _profile_or_none(target, args.bot)
        rows = [r for r in _rows(target, profile, now()) if r["closed"] or not args.closed]
    if args.json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
        return 0
    if not rows:
        closed = "closed " if args.closed else ""
        print(f"heed sources list: no {closed}source in {target.where}", file=sys.stderr)
        return 0
    print(_table(rows))
    return 0


def _profile_or_none(target: Target, bot: str | None) -> Any:
    try:
        return profile_of(target, bot)
    except CommandError:
        if bot:
            raise
        return None  # no bot known: no next due, the rest is there


def _show(args: argparse.Namespace, aws: Aws, now: Callable[[], float]) -> int:
    from heed_core.hoststate import HostView

    from heed.operator.actions import entry_hosts

    with open_target(args, aws, write=False) as target:
        src = _find(target, args.source)
        profile = _profile_or_none(target, args.bot)
        [row] = _rows(target, profile, now(), only=[src.id])
        hosts = []
        for host, rec in sorted(target.store.read_hosts(entry_hosts(src)).items()):
            view = HostView.from_record(rec)
            hosts.append({"host": host, "blocked": view.blocked,
                          "stopped_until": (_iso(view.pacing.stopped_until)
                                            if view.pacing.stopped_until > now() else None),
                          "stop_reason": view.pacing.stop_reason if view.pacing.stopped_until > now() else None,
                          "closed_here": view.closed.get(src.id),
                          "queued": sum(1 for i in view.frontier if i.source_id == src.id)})
        row["hosts"] = hosts
    if args.json:
        print(json.dumps(row, ensure_ascii=False))
        return 0
    for key in ("id", "url", "kind", "options", "last_read", "last_status", "next_due", "closed", "closed_reason",
                "closed_since", "items_found"):
        value = row[key]
        if key == "options":
            value = json.dumps(value) if value else "-"
        print(f"{key + ':':15}{'-' if value is None else value}")
    for h in hosts:
        parts = [f"{h['queued']} queued"]
        if h["blocked"]:
            parts.append(f"blocked ({h['blocked']})")
        if h["stopped_until"]:
            parts.append(f"stopped until {h['stopped_until']} ({h['stop_reason']})")
        if h["closed_here"]:
            parts.append(f"closed here: {h['closed_here']}")
        print(f"{'host:':15}{h['host']}: {', '.join(parts)}")
    return 0


def _on_source(args: argparse.Namespace, aws: Aws, now: Callable[[], float],
               change: Callable[..., dict[str, Any] | None]) -> tuple[Any, dict[str, Any]]:
    """``change(store, source_id, now, wait)`` on the source ``args.source`` names, in the target
    opened for writing; the source and what the change reports (printed as JSON with --json)."""
    with open_target(args, aws, write=True) as target:
        src = _find(target, args.source)
        done = change(target.store, src.id, now(), TURN_WAIT)
        target.changed()
    assert done is not None
    if args.json:
        print(json.dumps(done))
    return src, done


def _remove(args: argparse.Namespace, aws: Aws, now: Callable[[], float]) -> int:
    from heed.operator.actions import remove_source

    src, done = _on_source(args, aws, now, remove_source)
    if not args.json:
        print(f"removed {src.id} ({src.url}) with its read-state; closed on {len(done['hosts_closed'])} host(s) "
              "so work already queued for it stops")
    return 0


def _reopen(args: argparse.Namespace, aws: Aws, now: Callable[[], float]) -> int:
    from heed.operator.actions import reopen_source

    src, done = _on_source(args, aws, now, reopen_source)
    if args.json:
        return 0
    if not done["was_closed"] and not done["hosts_cleared"]:
        print(f"{src.id} was not closed: nothing to reopen")
        return 0
    lifted = f"; the stop of {', '.join(done['stops_lifted'])} lifted" if done["stops_lifted"] else ""
    print(f"reopened {src.id} ({src.url}): it fetches again in its next round "
          f"(cleared on {len(done['hosts_cleared'])} host(s){lifted})")
    return 0


def register(subparsers: Any) -> None:
    """Adds `heed sources ...` to the `heed` command's subparsers."""
    sources = subparsers.add_parser("sources", help="a bot's sources on a stack or a state directory: add, import, "
                                                    "list, show, remove, reopen")
    sub = sources.add_subparsers(dest="sources_command", required=True)
    add = sub.add_parser("add", help="add one source (checked as a sources file is)")
    add.add_argument("url")
    add.add_argument("--kind", required=True, help=", ".join(kinds.names()[:-1]) + " or " + kinds.names()[-1])
    add.add_argument("--id", help="the source's id (default: derived from url and kind)")
    add.add_argument("--write-about", action="store_true", help="feed: open each item's article once (Praha-X)")
    add.add_argument("--render", action="store_true", help="agenda: pages through the profile's render service")
    add.add_argument("--sitemap", action="append", metavar="URL", help="subsidy/agenda: start here instead of "
                                                                        "/sitemap.xml (repeatable)")
    add.add_argument("--option", action="append", metavar="KEY=VALUE", help="any option of the kind (YAML value)")
    imp = sub.add_parser("import", help="add or update many sources from a CSV or YAML file (idempotent)")
    imp.add_argument("file", help="a .csv file (header: url,kind[,id,write_about,render,sitemaps]) or the YAML "
                                  "of --sources")
    lst = sub.add_parser("list", help="every source: kind, last read, status, next due, closed, items found")
    lst.add_argument("--closed", action="store_true", help="only the closed ones")
    show = sub.add_parser("show", help="one source in full, with its hosts")
    remove = sub.add_parser("remove", help="delete a source and its read-state; its queued work stops")
    reopen = sub.add_parser("reopen", help="a closed source fetches again in its next round")
    for cmd in (show, remove, reopen):
        cmd.add_argument("source", metavar="URL|ID")
    for cmd, func in ((add, _add), (imp, _import), (lst, _list), (show, _show), (remove, _remove), (reopen, _reopen)):
        add_target_arguments(cmd)
        if cmd in (add, imp, lst, show):
            cmd.add_argument("--bot", help="the bot's profile (a name or a file; default: the one the target names)")
        cmd.add_argument("--json", action="store_true", help="JSON for scripts")
        name = f"sources {cmd.prog.split()[-1]}"
        cmd.set_defaults(func=lambda args, f=func, n=name, **kw: cmd_sources(args, f, n, **kw))


def cmd_sources(args: argparse.Namespace, func: Callable[..., int], name: str, *, aws: Aws | None = None,
                now: Callable[[], float] = time.time) -> int:
    return run(name, lambda: func(args, aws or Aws(region=args.region, profile=args.profile), now))

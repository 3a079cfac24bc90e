"""`heed block|unblock|blocks|purge|slow|unslow`: a site owner's stop request, their request to
delete everything stored from their domain (COMMON-08, SUBSIDIE-13) and a slower pace for one
host (what the desk does for them, and the operator undoes), on a stack or a state directory.

A block is on the table's block list (``BLOCKS`` / ``ALL``), which every host turn reads before
robots.txt: it takes effect on the host's next request, skipped as ``blocked_by_operator``."""
from __future__ import annotations

import argparse
import functools
import ipaddress
import json
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from heed.awsstack import Aws, CommandError
from heed.operator.targets import add_target_arguments, open_target, run
from heed.progress import Progress

__all__ = ["domain_argument", "is_public_suffix", "register"]


def _iso(t: float | None) -> str | None:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if t else None


def is_public_suffix(name: str) -> bool:
    """``com``, ``co.uk``, ``github.io``: a name under which anyone can register a site."""
    try:
        ipaddress.ip_address(name.strip("[]"))
        return False
    except ValueError:
        pass
    from publicsuffixlist import PublicSuffixList

    return bool(PublicSuffixList().is_public(name))


def domain_argument(text: str, *, command: str) -> str:
    """A host or domain name as a block or purge takes it: a URL, or host:port, is reduced to
    its host (said on stderr, ``heed COMMAND: ...``); anything else that is no name is one line."""
    from heed_core.netguard import parse_target

    raw = text.strip()
    mistake = CommandError(f"{text!r} is not a host or domain name (e.g. example.com)")
    name = raw
    try:
        if "://" in raw:
            parts = urlsplit(raw)
            if parts.username is not None or parts.password is not None:
                raise mistake
            name = parts.hostname or ""
        elif ":" in raw and raw.count(":") == 1 and "/" not in raw:
            name = urlsplit("//" + raw).hostname or ""
    except ValueError as exc:
        raise mistake from exc
    name = name.lower().rstrip(".")
    try:
        ipaddress.ip_address(name)
    except ValueError:
        if not name or any(c in name for c in "/:@?#[]") or any(c.isspace() for c in name) \
                or parse_target(f"http://{name}/") is None:
            raise mistake from None
    if name != raw.lower().rstrip("."):
        print(f"heed {command}: taking {name}, the host of {text}", file=sys.stderr)
    return name


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


# --- block, unblock, blocks ---------------------------------------------------------------------

def _block(args: argparse.Namespace, aws: Aws, now: Callable[[], float]) -> int:
    name = domain_argument(args.name, command="block")
    if is_public_suffix(name) and not args.force:
        raise CommandError(f"{name} is a public suffix: blocking it stops every site under it "
                           "(give --force if that is what you mean)")
    reason = args.reason or "blocked by the operator (no reason given)"
    with open_target(args, aws, write=True) as target:
        held = next(((r, t) for d, r, t in target.store.block_list() if d == name), None)
        if held is not None and (args.reason is None or args.reason == held[0]):
            # Blocked already: nothing changes (a new --reason replaces the old one).
            result = {"blocked": name, "reason": held[0], "at": _iso(held[1]), "where": target.where,
                      "changed": False}
            print(json.dumps(result) if args.json else
                  f"{name} was blocked already (since {_iso(held[1]) or '-'}: {held[0]}); nothing changed")
            return 0
        at = now()
        target.store.block(name, reason, at)
        target.changed()
    result = {"blocked": name, "reason": reason, "at": _iso(at), "where": target.where, "changed": True}
    scope = name if _is_ip(name) else f"{name} and its subdomains"
    print(json.dumps(result) if args.json else f"blocked {scope} ({reason}); "
          f"the next request to it is skipped as blocked_by_operator")
    return 0


def _parent_block(blocks: list[tuple[str, str, float | None]], name: str) -> str | None:
    return next((d for d, _, _ in blocks if name.endswith("." + d)), None)


def _unblock(args: argparse.Namespace, aws: Aws, now: Callable[[], float]) -> int:
    name = domain_argument(args.name, command="unblock")
    with open_target(args, aws, write=True) as target:
        lifted = target.store.unblock_domain(name)
        if lifted:
            target.changed()
        parent = None if lifted else _parent_block(target.store.block_list(), name)
    if not lifted:
        hint = f" ({parent} is: heed unblock {parent})" if parent else ""
        print(f"heed unblock: {name} is not on the block list of {target.where}{hint}", file=sys.stderr)
        return 1
    print(json.dumps({"unblocked": name, "where": target.where}) if args.json else f"unblocked {name}")
    return 0


def _blocks(args: argparse.Namespace, aws: Aws, now: Callable[[], float]) -> int:
    with open_target(args, aws, write=False) as target:
        rows = target.store.block_list()
    if args.json:
        for domain, reason, at in rows:
            print(json.dumps({"domain": domain, "reason": reason, "since": _iso(at)}))
        return 0
    if not rows:
        print(f"heed blocks: nothing is blocked in {target.where}", file=sys.stderr)
        return 0
    width = max(len("DOMAIN"), *(len(d) for d, _, _ in rows))
    print(f"{'DOMAIN'.ljust(width)}  {'SINCE'.ljust(20)}  REASON")
    for domain, reason, at in rows:
        print(f"{domain.ljust(width)}  {(_iso(at) or '-').ljust(20)}  {reason}")
    return 0


# --- slow, unslow: a host's own floor under the bot's gap (a site owner's slower pace) ------------

def _slow(args: argparse.Namespace, aws: Aws, now: Callable[[], float]) -> int:
    from heed_core.urls import host_name

    from heed_aws.domains import registrable_domain

    from heed.operator.actions import TurnWait, set_floor

    command = "unslow" if args.seconds is None else "slow"
    name = domain_argument(args.name, command=command)
    seconds = float(args.seconds or 0.0)
    if seconds < 0:
        raise CommandError(f"{args.seconds}: a number of seconds >= 0")
    with open_target(args, aws, write=True) as target:
        hosts = [h for h in target.store.domain_hosts(registrable_domain(name)) if host_name(h) == name]
        changed = set_floor(target.store, hosts, seconds, now(), TurnWait(max_s=20.0))
        if changed:
            target.changed()
    result = {"host": name, "min_delay_s": seconds, "hosts": changed, "where": target.where}
    if args.json:
        print(json.dumps(result))
    elif not hosts:
        print(f"heed {command}: {name} has no state in {target.where}", file=sys.stderr)
        return 1
    elif seconds:
        print(f"{name}: at least {seconds:g} s between two requests from its next one ({len(changed)} of "
              f"{len(hosts)} hosts changed)")
    else:
        print(f"{name}: the bot's own gap again ({len(changed)} of {len(hosts)} hosts changed)")
    return 0


# --- purge ----------------------------------------------------------------------------------------

def _purge(args: argparse.Namespace, aws: Aws, now: Callable[[], float]) -> int:
    from heed.operator.actions import last_purges, purge_domain

    name = domain_argument(args.domain, command="purge")
    if is_public_suffix(name):
        raise CommandError(f"{name} is a public suffix: a purge names one site's domain (e.g. example.{name}) "
                           "or a host under it")
    progress = Progress(f"purge {name}")
    with open_target(args, aws, write=not args.dry_run) as target:
        if target.texts is None:
            print(f"heed purge: note: {target.where} names no results bucket: page texts are not deleted",
                  file=sys.stderr)
        blocked = any(name == d or name.endswith("." + d) for d, _, _ in target.store.block_list())
        try:
            report = purge_domain(target.store, name, texts=target.texts, dry_run=args.dry_run, scan=args.scan,
                                  record=True, now=now(), progress=progress)
        finally:
            progress.close()
        if not args.dry_run:
            target.changed()
        history = last_purges(target.store, name)
    if not blocked and not args.dry_run:
        print(f"heed purge: note: {name} is not blocked: new work for it may store new data "
              f"(heed block {name} stops that)", file=sys.stderr)
    if args.json:
        print(json.dumps({**report.to_dict(), "at": _iso(report.at), "where": target.where,
                          "purges_on_record": len(history)}))
        return 0
    verb = "would delete" if args.dry_run else "deleted"
    print(f"{'dry run: ' if args.dry_run else ''}purge of {name} in {target.where}: {verb}")
    print(f"  hosts:              {len(report.hosts)}{': ' + ', '.join(report.hosts) if report.hosts else ''}")
    print(f"  host items:         {report.state_items - report.url_records} "
          "(host state with its frontier, robots.txt and tdmrep.json caches, drain marks)")
    print(f"  URL records:        {report.url_records}")
    print(f"  sources:            {report.sources} (with their read-state)")
    print(f"  page text versions: {report.objects}")
    if not args.dry_run:
        print(f"  recorded as META / PURGE#{name} (purge {len(history)} of this domain)")
    return 0


# --- the commands -------------------------------------------------------------------------------

def register(subparsers: Any) -> None:
    """Adds `heed block`, `unblock`, `blocks`, `purge`, `slow` and `unslow` to the `heed` command's subparsers."""
    block = subparsers.add_parser("block", help="stop fetching from a host or domain and its subdomains, "
                                                "robots.txt or not (COMMON-08)")
    block.add_argument("name", metavar="HOST|DOMAIN",
                       help="example.com, news.example.com (a URL is reduced to its host)")
    block.add_argument("--reason", default=None,
                       help="kept with the block, shown in skips")
    block.add_argument("--force", action="store_true", help="block a public suffix (com, co.uk) all the same")
    unblock = subparsers.add_parser("unblock", help="lift a block")
    unblock.add_argument("name", metavar="HOST|DOMAIN")
    blocks = subparsers.add_parser("blocks", help="the block list: domain, since when, why")
    purge = subparsers.add_parser("purge", help="delete everything stored from a domain and its subdomains "
                                                "(COMMON-08, SUBSIDIE-13)")
    purge.add_argument("domain", metavar="DOMAIN")
    purge.add_argument("--dry-run", action="store_true", help="count what would be deleted, delete nothing")
    purge.add_argument("--scan", action="store_true",
                       help="also Scan the whole table, for hosts stored before the domain index existed")
    slow = subparsers.add_parser("slow", help="a slower pace for one host alone (what a site owner asks on the "
                                              "desk): at least SECONDS between two requests, never faster")
    slow.add_argument("name", metavar="HOST")
    slow.add_argument("seconds", metavar="SECONDS", type=float)
    unslow = subparsers.add_parser("unslow", help="lift a host's slower pace: the bot's own gap again")
    unslow.add_argument("name", metavar="HOST")
    unslow.set_defaults(seconds=None)
    for cmd, func in ((block, _block), (unblock, _unblock), (blocks, _blocks), (purge, _purge), (slow, _slow),
                      (unslow, _slow)):
        add_target_arguments(cmd)
        cmd.add_argument("--json", action="store_true", help="JSON for scripts")
        cmd.set_defaults(func=functools.partial(cmd_ops, func=func, name=cmd.prog.split()[-1]))


def cmd_ops(args: argparse.Namespace, func: Callable[..., int], name: str, *, aws: Aws | None = None,
            now: Callable[[], float] = time.time) -> int:
    """The command; tests hand in the AWS clients and the clock."""
    return run(name, lambda: func(args, aws or Aws(region=args.region, profile=args.profile), now))

"""`heed explain URL --stack NAME | --state DIR`: why the bot fetched a URL, why it did not, and
what it would do now, from the crawl's state ("why did your bot fetch this?").

What it would do now is not guessed: the host's state is read as a host turn reads it and the
core's own plan (``heed_core.turn.plan_turn``, refusals and robots.txt included) is asked about
one work item for the URL, so the answer is the fetcher's. (The ``--out DIR`` form, every record
of the URL in a local run's output, is ``heed.cli.cmd_explain``.)"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from heed.awsstack import Aws, CommandError
from heed.operator.targets import Target, open_target, profile_of, run

__all__ = ["canonical_line", "cmd_explain", "cmd_explain_state", "explain_url", "register"]


def _iso(t: float | None) -> str | None:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if t else None


def _robots(profile: Any, view: Any, url: str, now: float) -> dict[str, Any] | None:
    """The cached robots.txt's verdict for the URL (also when the copy has expired: it is what
    allowed or refused the last request; the next one reads robots.txt again)."""
    from heed_core.robots_policy import RobotsFetchPolicy
    from heed_core.robots_step import cached_outcome

    if not view.robots:
        return None
    probe = view.copy()
    probe.robots = {**view.robots, "exp": float("inf")}
    outcome = cached_outcome(probe, RobotsFetchPolicy.from_mapping(profile.get("robots")), now)
    if outcome is None:
        return {"read_at": _iso(view.robots.get("stamp")), "good_until": _iso(view.robots.get("exp")),
                "note": "the cached copy cannot be read back; robots.txt is read again before the next request"}
    out: dict[str, Any] = {"read_at": _iso(float(view.robots.get("stamp", 0.0))),
                           "good_until": _iso(float(view.robots.get("exp", 0.0))),
                           "expired": float(view.robots.get("exp", 0.0)) <= now,
                           "outcome": outcome.reason, "status": outcome.status}
    if outcome.robots is not None:
        v = outcome.robots.verdict(url, profile.robots_token)
        out.update(allowed=v.allowed, rule=v.rule, line=v.line, group=v.group, crawl_delay=v.crawl_delay)
    return out


def _item_for(profile: Any, url: str, view: Any, record: Any, sources: list[Any], now: float) -> tuple[Any, Any]:
    """The work item the bot would have for the URL now: queued already, a source's entry (as the
    next round makes it), or one like the last it had. Returns (item, the source's round skip)."""
    from heed_core import kinds
    from heed_core.rounds import Round, entry_items, round_id
    from heed_core.work import WorkItem, as_purpose, as_task_kind

    queued = [i for i in view.frontier if i.url == url]
    if queued:
        return queued[0], None
    mine = [s for s in sources if s.url == url or url in (s.options.get("sitemaps") or [])]
    for src in mine:
        known = {url: record} if record else {}
        items, skips = entry_items(profile, Round(round_id(now, src.kind), now, src.kind), [src], now, known)
        if skips:
            return None, {"reason": skips[0][1], "detail": skips[0][2], "source": src.id}
        for item in items:
            if item.url == url:
                return replace(item, not_before=max(0.0, item.not_before)), None
    recent = view.recent.get(url)
    by_id = {s.id: s for s in sources}
    src = by_id.get(str(recent[2])) if recent else None
    purpose = as_purpose(recent[1]) if recent and recent[1] in kinds.purposes() else "page"
    # A source gone: the first kind whose work has that purpose (its spacing, its refusals).
    owner = next((k for k in kinds.names() if purpose in kinds.get(k).handlers), "page")
    task = as_task_kind(src.kind) if src is not None else owner
    source_id = src.id if src else (str(recent[2]) if recent else "")
    return WorkItem(url=url, purpose=purpose, task=task, source_id=source_id,
                    source_url=src.url if src else url, round_id=round_id(now, "explain"), round_start=now,
                    depth=0 if src is not None and src.url == url else 1, seen=record), None


def _plan_now(profile: Any, view: Any, item: Any, now: float) -> dict[str, Any]:
    """What a host turn would do with ``item`` now, by the core's own plan."""
    from heed_core.turn import TokenIn, plan_turn

    probe = view.copy()
    probe.owner, probe.lease_until = None, 0.0  # the lease is told apart (another token's turn is short)
    probe.frontier = [item]
    plan = plan_turn(profile, probe, TokenIn(view.host, "heed-explain"), now)
    mine = [s for s in plan.skips if s.url == item.url]
    if mine:
        return {"action": "skip", "reason": mine[0].reason, "detail": mine[0].detail}
    if plan.request is not None:
        if plan.role == "item":
            return {"action": "fetch", "headers": dict(plan.request.headers), "purpose": plan.request.purpose}
        return {"action": "fetch_first", "first": plan.request.url, "purpose": plan.request.purpose,
                "detail": f"{plan.request.url} is read first (its cached copy is missing or expired), "
                          "then the URL is decided on it"}
    if plan.wait is not None:
        return {"action": "wait", "wait_s": round(plan.wait, 3), "why": plan.why,
                "until": _iso(now + plan.wait)}
    return {"action": "nothing", "why": plan.why}


def explain_url(target: Target, profile: Any, url: str, now: float) -> dict[str, Any] | None:
    """Everything the state says about the URL, or None if the bot never saw it."""
    from heed_core import kinds
    from heed_core.hoststate import HostView
    from heed_core.robots import effective_delay
    from heed_core.urls import BadUrl, authority, canonical_changes, in_domain

    from heed.operator.sources import next_due

    written = url
    try:
        # The state knows a URL by its canonical form: the one the bot requests and records.
        url, changes = canonical_changes(url, profile.strip_params)
        host = authority(url)
    except BadUrl as exc:
        raise CommandError(f"{written!r} is not an absolute http(s) URL") from exc
    store = target.store
    aux = ("robots", "tdmrep")
    view = HostView.from_record(store.read_host(host, aux=aux))
    record = store.get_url(url)
    sources = store.list_sources()
    as_source = [s for s in sources if s.url == url or url in (s.options.get("sitemaps") or [])]
    queued = [i for i in view.frontier if i.url == url]
    recent = view.recent.get(url)
    if record is None and recent is None and not queued and not as_source:
        return None if not changes else {"url": url, "written": written, "canonical_changes": changes}
    by_id = {s.id: s for s in sources}
    found: list[dict[str, Any]] = []
    for src in as_source:
        found.append({"source": src.id, "kind": src.kind, "as": "the source's own URL" if src.url == url
                      else "a sitemap the source names"})
    for item in queued:
        src = by_id.get(item.source_id)
        found.append({"source": item.source_id, "kind": item.task, "purpose": item.purpose, "depth": item.depth,
                      "as": "queued on the host" + (f", found from {item.source_url}" if item.depth else ""),
                      "source_url": src.url if src else item.source_url, "round": item.round_id})
    if recent is not None and not queued:
        found.append({"source": recent[2], "purpose": recent[1], "as": f"last fetched {_iso(float(recent[0]))}",
                      "kind": by_id[recent[2]].kind if recent[2] in by_id else None})
    seen: dict[str, Any] = {}
    if record is not None:
        seen = {"last_fetched": _iso(record.last_fetched), "last_status": record.last_status, "etag": record.etag,
                "last_modified": record.last_modified, "title_fetched": _iso(record.title_fetched_at),
                "content_hash": record.content_hash}
    robots = _robots(profile, view, url, now)
    item, round_skip = _item_for(profile, url, view, record, sources, now)
    decision = ({"action": "skip", **round_skip, "at": "the round's start"} if round_skip
                else _plan_now(profile, view, item, now))
    pace = view.pacing
    delay = effective_delay(profile.politeness.min_delay_s, (robots or {}).get("crawl_delay"),
                            profile.politeness.crawl_delay_cap_s)
    pacing: dict[str, Any] = {"effective_delay_s": delay, "min_delay_s": profile.politeness.min_delay_s,
                              "crawl_delay": (robots or {}).get("crawl_delay"),
                              "crawl_delay_cap_s": profile.politeness.crawl_delay_cap_s,
                              "next_allowed": _iso(pace.next_allowed) if pace.next_allowed > now else None,
                              "stopped_until": _iso(pace.stopped_until) if pace.stopped_until > now else None,
                              "stop_reason": pace.stop_reason if pace.stopped_until > now else None,
                              "busy_until": _iso(view.lease_until) if view.owner and view.lease_until > now else None}
    if item is not None and kinds.is_spaced(item) and profile.politeness.round_spacing_s:
        pacing["round_spacing_s"] = profile.politeness.round_spacing_s  # WANNADO-05
    why_not = []
    if view.blocked or in_domain(host, profile.operator.blocked_domains):
        why_not.append({"reason": "blocked_by_operator",
                        "detail": view.blocked or "the profile's operator.blocked_domains"})
    if robots and robots.get("allowed") is False:
        why_not.append({"reason": "robots_disallowed", "detail": f"{robots['rule']} (line {robots['line']}, "
                                                                 f"group {robots['group']})"})
    for sid in {f.get("source") for f in found if f.get("source")}:
        if sid in view.closed:
            why_not.append({"reason": "source_closed", "detail": str(view.closed[sid]), "source": str(sid)})
        elif sid in by_id and by_id[sid].closed:
            why_not.append({"reason": "source_closed", "detail": by_id[sid].closed_reason or "", "source": str(sid)})
    if pacing["stopped_until"]:
        why_not.append({"reason": "host_stopped", "detail": f"{pace.stop_reason} until {pacing['stopped_until']}"})
    caps = {k: v for k, v in view.quotas.items() if float(v[1]) > now}
    due = [{"source": s.id, "next_due": _iso(next_due(profile, s, now))} for s in as_source]
    return {"url": url, "written": written, "canonical_changes": changes,
            "host": host, "bot": profile.name, "where": target.where, "seen": seen, "found": found,
            "robots": robots, "why_not": why_not, "now": decision, "pacing": pacing,
            "caps": {k: {"used": v[0], "until": _iso(float(v[1]))} for k, v in caps.items()}, "next_due": due}


def _history(target: Target, url: str, also: str = "") -> list[dict[str, Any]]:
    """A state directory's records of the URL (requests, skips, results), oldest first: its request
    and skip log and its results, each read by an index on the URL (moving a file changes none)."""
    if target.local is None:
        return []
    from heed_embedded.events import by_url
    from heed_embedded.journal import records_by_url

    st = target.local
    urls = list(dict.fromkeys([url, also or url]))
    found = [{"record": kind, **rec} for kind, table in (("request", "requests"), ("skip", "skips"))
             for rec in records_by_url(st.db, table, urls)]
    for row in by_url(st.db, urls):
        found.append({"record": "item", "detail_type": row.type[len("heed."):], **row.envelope["data"],
                      "t": row.envelope.get("time")})
    return found


def canonical_line(e: dict[str, Any]) -> list[str]:
    """``url:`` the canonical form and why it differs from the URL as given (none if it does not)."""
    if not e.get("canonical_changes"):
        return []
    return [f"url:      {e['written']} is requested as {e['url']}: {'; '.join(e['canonical_changes'])}"]


def _human(e: dict[str, Any]) -> str:
    lines = [f"{e['url']} ({e['bot']}, {e['where']})", *canonical_line(e)]
    s = e["seen"]
    if s:
        bits = [f"last fetched {s['last_fetched'] or '-'}", f"status {s['last_status']}"]
        bits += [f"ETag {s['etag']}"] if s["etag"] else []
        bits += [f"Last-Modified {s['last_modified']}"] if s["last_modified"] else []
        lines.append("seen:     " + ", ".join(bits))
    for f in e["found"]:
        extra = f", as {f['purpose']}" if f.get("purpose") else ""
        lines.append(f"found:    source {f['source']} ({f.get('kind') or '?'}{extra}): {f['as']}")
    r = e["robots"]
    if r and "allowed" in r:
        verdict = "allows" if r["allowed"] else "disallows"
        rule = f"{r['rule']} (line {r['line']}, group {r['group']})" if r.get("line") else \
            (r.get("rule") or "no rule matches it")
        when = f"read {r['read_at']}, {'expired' if r['expired'] else 'good until ' + str(r['good_until'])}"
        lines.append(f"robots:   robots.txt {verdict} it: {rule}; {when}")
    elif r:
        lines.append(f"robots:   {r.get('note')}")
    else:
        lines.append("robots:   no robots.txt read for the host yet (it is read before anything else)")
    for w in e["why_not"]:
        lines.append(f"why not:  {w['reason']}: {w['detail']}")
    n = e["now"]
    if n["action"] == "fetch":
        cond = ", ".join(f"{k}: {v}" for k, v in n["headers"].items())
        lines.append(f"now:      would fetch it now{' with ' + cond if cond else ''}")
    elif n["action"] == "fetch_first":
        lines.append(f"now:      {n['detail']}")
    elif n["action"] == "wait":
        lines.append(f"now:      would fetch it after {n['wait_s']} s ({n['why']}, at {n['until']})")
    elif n["action"] == "skip":
        lines.append(f"now:      would not fetch it: {n['reason']}: {n['detail']}")
    else:
        lines.append(f"now:      nothing to do ({n.get('why')})")
    p = e["pacing"]
    pace = f"effective delay {p['effective_delay_s']:g} s (minimum {p['min_delay_s']:g} s"
    pace += f", Crawl-delay {p['crawl_delay']:g} s capped at {p['crawl_delay_cap_s']:g} s)" if p["crawl_delay"] else ")"
    if p.get("round_spacing_s"):
        pace += f", round spacing {p['round_spacing_s']:g} s"
    if p["next_allowed"]:
        pace += f"; next request to the host from {p['next_allowed']}"
    if p["stopped_until"]:
        pace += f"; host stopped until {p['stopped_until']} ({p['stop_reason']})"
    if p["busy_until"]:
        pace += f"; a turn holds the host until {p['busy_until']}"
    lines.append("pacing:   " + pace)
    for k, v in e["caps"].items():
        lines.append(f"cap:      {k}: {v['used']} used until {v['until']}")
    for d in e["next_due"]:
        lines.append(f"due:      source {d['source']} next in the round of {d['next_due'] or '- (closed)'}")
    for h in e.get("history") or []:
        what = h.get("status", h.get("reason", h.get("detail_type", "")))
        when = h.get("t_start") or h.get("t") or ""
        lines.append(f"history:  {h['record']} {when} {what} {h.get('detail') or ''}".rstrip())
    return "\n".join(lines)


def _explain(args: argparse.Namespace, aws: Aws, now: Callable[[], float]) -> int:
    with open_target(args, aws, write=False) as target:
        profile = profile_of(target, args.bot)
        result = explain_url(target, profile, args.url, now())
        canon = result["url"] if result else args.url
        history = _history(target, canon, args.url)
    if (result is None or "seen" not in result) and not history:
        print("\n".join([*(canonical_line(result) if result else []),
                         f"heed explain: {canon} was never seen by {profile.name} in {target.where}"]), file=sys.stderr)
        return 1
    if result is None or "seen" not in result:
        result = {"url": canon, "written": args.url, "canonical_changes": (result or {}).get("canonical_changes", []),
                  "bot": profile.name, "where": target.where, "seen": {}, "found": [],
                  "robots": None, "why_not": [], "now": {"action": "nothing", "why": "not in the state"},
                  "pacing": None, "caps": {}, "next_due": []}
    result["history"] = history
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    elif result["pacing"] is None:
        print("\n".join([f"{canon} ({profile.name}, {target.where}): not in the state, only in the last run:",
                         *canonical_line(result),
                         *_human({**result, "pacing": {}}).splitlines()[-len(history):]]))
    else:
        print(_human(result))
    return 0


def cmd_explain_state(args: argparse.Namespace, *, aws: Aws | None = None, now: Callable[[], float] = time.time) -> int:
    return run("explain", lambda: _explain(args, aws or Aws(region=args.region, profile=args.profile), now))


# --- the command -----------------------------------------------------------------------------------

def register(sub: Any) -> None:
    """Add ``explain`` to the `heed` parser's subcommands."""
    from heed.operator.targets import add_target_arguments

    expl = sub.add_parser("explain", help="why a URL was fetched or not, and what would happen now "
                                          "(--stack, --state), or its records in a run's output (--out)")
    expl.add_argument("url")
    add_target_arguments(expl, out=True)
    expl.add_argument("--bot", help="the bot's profile (default: the one the stack or state names)")
    expl.add_argument("--json", action="store_true", help="one JSON object (--stack, --state)")
    expl.add_argument("--prefix", action="store_true", help="--out: match every URL starting with it")
    expl.set_defaults(func=cmd_explain)


def cmd_explain(args: argparse.Namespace, **kwargs: Any) -> int:
    """Why did the bot fetch (or not fetch) this URL? From a stack's or a state directory's state
    (heed.operator.explain), or every record of it in a run's output (``--out``)."""
    if args.stack is not None or args.state is not None:
        if args.prefix:
            raise CommandError("--prefix goes with --out (a run's records), not --stack or --state")
        from heed.operator.explain import cmd_explain_state

        return cmd_explain_state(args, **kwargs)
    if args.region or args.profile or args.bot or args.json:
        raise CommandError("--region, --profile, --bot and --json go with --stack or --state, not --out")
    out = Path(args.out or "heed-out")
    if not (out / "requests.jsonl").is_file():
        raise CommandError(f"{out}: no requests.jsonl here (run heed local run --out {out} first)")
    from heed_core.urls import BadUrl, canonical_changes

    wanted = {args.url}
    try:
        canon, changes = canonical_changes(args.url)
    except BadUrl:
        canon, changes = args.url, []
    if changes:
        # The run recorded the URL as it was requested: its canonical form (heed_core.urls).
        wanted.add(canon)
        print(json.dumps({"record": "canonical", "url": args.url, "canonical": canon, "why": changes},
                         ensure_ascii=False))
    from heed.outputs import read_records

    found = 0
    for kind, rec in read_records(out, ("requests", "skips", "items")):
        if rec.get("url") in wanted or (args.prefix and str(rec.get("url", "")).startswith(args.url)):
            print(json.dumps({"record": kind, **rec}, ensure_ascii=False))
            found += 1
    if not found:
        what = "URL starting with " if args.prefix else ""
        print(f"heed explain: no request, skip or result of {what}{args.url} in {out}", file=sys.stderr)
        return 1
    return 0

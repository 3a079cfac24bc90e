"""The short human report printed at the end of a local run."""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from heed.outputs import read_jsonl as _read


def human_report(out_dir: Path, summary: dict[str, Any], *, examples: int = 4) -> str:
    requests = _read(out_dir / "requests.jsonl")
    items = _read(out_dir / "items.jsonl")
    skips = _read(out_dir / "skips.jsonl")
    lines = [f"== {summary.get('bot')}: {summary.get('rounds')} round(s), {len(requests)} requests, "
             f"{len(items)} results, {len(skips)} skips, {summary.get('wall_time_s')} s =="]
    by_purpose = Counter(r.get("purpose") for r in requests)
    by_status = Counter(str(r.get("status", r.get("error"))) for r in requests)
    if requests:
        lines.append("  fetched: " + ", ".join(f"{k} {v}" for k, v in sorted(by_purpose.items())) +
                     "   status: " + ", ".join(f"{k}: {v}" for k, v in sorted(by_status.items())))
    else:
        lines.append("  fetched: nothing" + (" (every URL was skipped: see below)" if skips else ""))
    kinds = Counter(i.get("detail_type") for i in items)
    if kinds:
        lines.append("  results: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    for it in items[:examples]:
        label = it.get("title") or it.get("name") or it.get("summary") or ""
        lines.append(f"    + {it.get('detail_type')}: {str(label)[:70]}  <{it.get('url')}>")
    reasons = Counter(s.get("reason") for s in skips)
    if reasons:
        lines.append("  skipped: " + ", ".join(f"{k} {v}" for k, v in reasons.most_common()))
    shown: set[str] = set()
    for s in skips:
        if s.get("reason") in shown:
            continue
        shown.add(str(s.get("reason")))
        lines.append(f"    - {s.get('reason')}: {s.get('url')}  {str(s.get('detail') or '')[:80]}")
        if len(shown) >= examples + 2:
            break
    if summary.get("deferred_at_end"):
        lines.append(f"  still deferred at the end: {summary['deferred_at_end']} host token(s) "
                     "(e.g. retries later today)")
    lines.append(f"  output: {out_dir}/requests.jsonl, items.jsonl, skips.jsonl, summary.json")
    return "\n".join(lines)

"""A conformance report as a table for a terminal, or as one JSON document."""
from __future__ import annotations

import json
import shutil
import textwrap
from typing import Any

from heed.conformance.model import Seen, scale_words
from heed.conformance.runner import Report

__all__ = ["as_json", "as_table"]

_MARK = {"pass": "pass", "fail": "FAIL", "error": "ERROR"}


def _said(report: Report, s: Seen) -> str:
    """A scenario's scale, and its engine where it is not the run's."""
    return scale_words(s.scale) + ("" if s.engine == report.engine else f", on the {s.engine} engine")


def _scenarios(report: Report, names: tuple[str, ...]) -> str:
    seen = {s.name: s for s in report.scenarios}
    return ", ".join(f"{n} ({_said(report, seen[n])})" for n in names if n in seen)


def as_table(report: Report, width: int | None = None) -> str:
    """Rule id, result, the sentence it proves and, under it, what was seen (wrapped to the terminal)."""
    width = max(80, width or shutil.get_terminal_size((110, 24)).columns)
    left = 20  # "SUBSIDIE-13  ERROR  "
    body = width - left
    counts = {k: sum(1 for v in report.verdicts if v.result == k) for k in _MARK}
    extends = "" if report.profile == report.bot else f" (profile {report.profile}, extends {report.bot})"
    lines = [f"heed conformance: {report.bot}{extends}: {len(report.verdicts)} rules, {counts['pass']} pass, "
             f"{counts['fail']} fail, {counts['error']} error, in {report.seconds:.1f} s (engine {report.engine})", "",
             f"{'RULE':<12} {'RESULT':<6} SENTENCE / EVIDENCE"]
    pad = " " * left
    for v in report.verdicts:
        sentence = textwrap.wrap(v.rule.sentence, body) or [""]
        lines.append(f"{v.rule.id:<12} {_MARK[v.result]:<6} {sentence[0]}")
        lines += [pad + s for s in sentence[1:]]
        seen = v.evidence
        where = _scenarios(report, v.scenarios)
        if where:
            seen += f" [seen in: {where}]"
        lines += [pad + s for s in textwrap.wrap(seen, body, initial_indent="  ", subsequent_indent="  ")]
    ran = [f"{s.name} {s.seconds:.1f} s ({_said(report, s)}, {sum(len(v) for v in s.logs.values())} requests)"
           for s in report.scenarios]
    lines += ["", "scenarios: " + "; ".join(ran)]
    lines.append("exit 0: every rule holds" if report.passed else
                 "exit 1: " + ", ".join(v.rule.id for v in report.verdicts if v.result != "pass") + " did not hold")
    return "\n".join(lines)


def as_json(report: Report) -> str:
    doc: dict[str, Any] = {
        "bot": report.bot, "profile": report.profile, "engine": report.engine, "passed": report.passed,
        "seconds": round(report.seconds, 2),
        "rules": [{"id": v.rule.id, "sentence": v.rule.sentence, "keys": list(v.rule.keys), "result": v.result,
                   "evidence": v.evidence, "scenarios": list(v.scenarios), "deployment": v.rule.deployment}
                  for v in report.verdicts],
        "scenarios": [{"name": s.name, "scale": s.scale, "scale_words": scale_words(s.scale), "engine": s.engine,
                       "seconds": round(s.seconds, 2), "sites": len(s.logs),
                       "requests": sum(len(v) for v in s.logs.values())} for s in report.scenarios],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)

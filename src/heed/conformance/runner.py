"""Runs one bot's catalogue: picks the rules, plays each scenario they need once, judges each rule.

A rule passes when its numbers hold on the user's real profile and its check holds on what the
sites saw. A scenario that cannot run (a profile that breaks the stack, a port that will not
bind) makes every rule that needs it an ``error``, named with the cause; the others still run."""
from __future__ import annotations

import shutil
import tempfile
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from heed_core.profile import Profile
from heed_core.work import Source

from heed.conformance.model import Proof, Rule, Scenario, Seen
from heed.conformance.sites import Sites
from heed.conformance.stack import EmbeddedStack, Output, Stack, derive

__all__ = ["Bench", "Report", "ScenarioFailed", "Session", "Verdict", "judge"]


class ScenarioFailed(Exception):
    """A scenario could not be played; every rule that reads it is an error."""


class Bench:
    """What a scenario's ``play`` works with: its sites, the user's profile, a stack (on the
    ``engine`` the run was asked for: ``aws``, the real handlers on moto, or ``embedded``)."""

    def __init__(self, profile: Profile, scale: float, workdir: Path, engine: str = "aws") -> None:
        self.profile = profile
        self.scale = scale
        self.engine = engine
        self.sites = Sites()
        self.extra: dict[str, Any] = {}
        self.stacks: list[Stack] = []
        self._workdir = workdir

    def derived(self, changes: Mapping[str, Any] | None = None, scale: float | None = None) -> Profile:
        """The user's profile with the scenario's scaled waits and ``changes`` on top."""
        return derive(self.profile, self.scale if scale is None else scale, changes)

    def stack(self, profile: Profile, sources: Sequence[Source], start: float, patience_s: float = 3.0) -> Stack:
        out = self._workdir / f"run{len(self.stacks)}"
        kind = EmbeddedStack if self.engine == "embedded" else Stack
        stack = kind(profile, sources, out, start, resolver=self.sites.resolver, patience_s=patience_s)
        self.stacks.append(stack)
        return stack

    @property
    def marks(self) -> list[float]:
        return [m for s in self.stacks for m in s.marks]


@dataclass
class _Runs:
    profile: Profile
    bot: str
    scenarios: Mapping[str, Scenario]
    workdir: Path
    progress: Callable[[str], None] | None = None
    engine: str = "aws"
    seen: dict[str, Seen] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    read: list[str] = field(default_factory=list)  # the scenarios the current rule has read

    def __getitem__(self, name: str) -> Seen:
        if name not in self.read:
            self.read.append(name)
        if name in self.failed:
            raise ScenarioFailed(self.failed[name])
        if name not in self.seen:
            self.seen[name] = self._play(self.scenarios[name])
        return self.seen[name]

    def _play(self, sc: Scenario) -> Seen:
        if self.progress is not None:
            self.progress(f"scenario {sc.name}: {sc.about}")
        engine = sc.engine or self.engine
        bench = Bench(self.profile, sc.scale, self.workdir / sc.name, engine)
        t0 = time.monotonic()
        try:
            out: Output = sc.play(bench)
        except Exception as exc:  # noqa: BLE001 - any failure of a run is that scenario's error
            where = traceback.extract_tb(exc.__traceback__)[-1]
            self.failed[sc.name] = (f"scenario {sc.name} failed: {type(exc).__name__}: {exc} "
                                    f"({Path(where.filename).name}:{where.lineno})")
            raise ScenarioFailed(self.failed[sc.name]) from exc
        finally:
            for stack in bench.stacks:
                stack.close()
            logs = bench.sites.logs()
            bench.sites.stop()
        return Seen(sc.name, sc.scale, logs, dict(bench.sites.bases), out, bench.marks, bench.extra,
                    time.monotonic() - t0, engine)


@dataclass(frozen=True)
class Verdict:
    rule: Rule
    result: str  # pass | fail | error
    evidence: str
    seconds: float
    scenarios: tuple[str, ...] = ()  # what the check read


@dataclass(frozen=True)
class Report:
    bot: str          # the built-in bot whose promises were checked
    profile: str      # what the user named (a built-in, or a profile file)
    verdicts: list[Verdict]
    seconds: float
    scenarios: list[Seen]
    engine: str = "aws"  # what ran the scenarios: aws (the handlers on moto) or embedded

    @property
    def passed(self) -> bool:
        return bool(self.verdicts) and all(v.result == "pass" for v in self.verdicts)


class Session:
    """One bot's catalogue judged rule by rule, each scenario played at most once, when a rule
    first needs it, on ``engine``; ``close()`` removes what the scenarios wrote. What `heed
    conformance` runs, and what the test suite runs one rule a test."""

    def __init__(self, bot: str, profile: Profile, scenarios: Mapping[str, Scenario],
                 progress: Callable[[str], None] | None = None, engine: str = "aws") -> None:
        self.bot, self.profile, self.engine = bot, profile, engine
        self._workdir = Path(tempfile.mkdtemp(prefix=f"heed-conformance-{profile.name}-"))
        self._runs = _Runs(profile, bot, scenarios, self._workdir, progress, engine=engine)

    @property
    def played(self) -> list[Seen]:
        return list(self._runs.seen.values())

    def verdict(self, rule: Rule) -> Verdict:
        """The rule's numbers judged on the profile, its check on the scenarios it reads."""
        r0 = time.monotonic()
        proof = Proof()
        for number in rule.numbers:
            number.judge(self.profile, proof)
        result = "pass"
        runs = self._runs
        runs.read = []
        try:
            if rule.check is not None:
                proof.extend(rule.check(runs))
        except ScenarioFailed as exc:
            proof.note(str(exc))
            result = "error"
        except Exception as exc:  # noqa: BLE001 - a check that cannot read its run is that rule's error
            where = traceback.extract_tb(exc.__traceback__)[-1]
            proof.note(f"the check could not read the run: {type(exc).__name__}: {exc} "
                       f"({Path(where.filename).name}:{where.lineno})")
            result = "error"
        if result == "pass" and not proof.ok:
            result = "fail"
        return Verdict(rule, result, proof.text(), time.monotonic() - r0, tuple(runs.read))

    def close(self) -> None:
        shutil.rmtree(self._workdir, ignore_errors=True)


def judge(bot: str, ref: str, profile: Profile, rules: Sequence[Rule], scenarios: Mapping[str, Scenario],
          progress: Callable[[str], None] | None = None, engine: str = "aws") -> Report:
    """Every rule's verdict, in order, in one ``Session``."""
    t0 = time.monotonic()
    session = Session(bot, profile, scenarios, progress, engine)
    try:
        verdicts = [session.verdict(rule) for rule in rules]
    finally:
        session.close()
    return Report(bot, ref, verdicts, time.monotonic() - t0, session.played, engine)

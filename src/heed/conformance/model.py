"""The catalogue's vocabulary: a rule, the profile numbers it binds, a scenario, what a check saw.

A ``Rule`` is one promise of PROMISES.md (its id, the sentence in our words). It is proven two
ways, both of which must hold: its ``numbers`` (``Bound``, ``Cadence``) are judged on the user's
real profile, and its ``check`` reads what the sites logged in one or more scenarios (or, for a
deployment fact, the template and the profile). A ``Scenario`` is a small web and a run of the
stack over it, with the user's own profile (its waits scaled by ``scale`` where the real ones
would take minutes)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Protocol

from heed_core.profile import Profile
from heed_core.schedule import firings

from heed.conformance.sites import gaps, overlaps
from heed.demo.web import RequestRecord

if TYPE_CHECKING:  # the stack (moto, the handlers) loads only when a scenario runs
    from heed.conformance.stack import Output

__all__ = ["Bound", "Cadence", "OwnIdentity", "Proof", "Rule", "Runs", "Scenario", "Seen", "scale_words", "secs", "utc"]


def utc(text: str) -> float:
    """Epoch seconds of a UTC time written as ``2026-12-01T06:00``."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def secs(x: float) -> str:
    return f"{x:.2f} s" if x < 10 else f"{x:.0f} s"


def scale_words(scale: float) -> str:
    if scale == 1:
        return "real numbers"
    if scale == 0:
        return "no waits: shape only"
    return f"1/{round(1 / scale):g} scale"


class Proof:
    """What a check saw, one fact a line, each true or not; the rule passes when all are."""

    def __init__(self) -> None:
        self.lines: list[tuple[bool, str]] = []

    def that(self, ok: bool, text: str) -> bool:
        self.lines.append((bool(ok), text))
        return bool(ok)

    def note(self, text: str) -> None:
        self.lines.append((True, text))

    def extend(self, other: Proof) -> None:
        self.lines.extend(other.lines)

    @property
    def ok(self) -> bool:
        return all(ok for ok, _ in self.lines)

    def text(self) -> str:
        return "; ".join(t if ok else f"NOT {t}" for ok, t in self.lines)


_OPS: dict[str, Callable[[Any, Any], bool]] = {
    ">=": lambda a, b: a is not None and a >= b, "<=": lambda a, b: a is not None and a <= b,
    "==": lambda a, b: a == b, "in": lambda a, b: a in b, "set": lambda a, b: bool(a),
}


@dataclass(frozen=True)
class Bound:
    """A profile key against the promise: ``Bound("politeness.min_delay_s", ">=", 1.5)``; a
    tuple of keys is their sum (round spacing plus its jitter: WANNADO-05's seven minutes)."""

    key: str | tuple[str, ...]
    op: str
    value: Any = None

    @property
    def keys(self) -> tuple[str, ...]:
        return self.key if isinstance(self.key, tuple) else (self.key,)

    def judge(self, p: Profile, proof: Proof) -> None:
        if isinstance(self.key, tuple):
            got: Any = sum(float(p.get(k) or 0) for k in self.key)
            name = " + ".join(self.key)
        else:
            got, name = p.get(self.key), self.key
        if self.op == "set":
            shown = f"[{', '.join(map(repr, got[:2]))}, ... ({len(got)})]" if isinstance(got, (list, tuple)) \
                and len(got) > 3 else repr(got)
            proof.that(_OPS["set"](got, None), f"profile: {name} = {shown} is set")
            return
        ok = _OPS[self.op](got, self.value)
        if self.op == "==" and isinstance(self.value, str) and len(self.value) > 20:
            # A long string (the User-Agent) is said once: as it is, and as promised if it differs.
            proof.that(ok, f"profile: {name} = {got!r}" + ("" if ok else f", promised {self.value!r}"))
            return
        proof.that(ok, f"profile: {name} = {got!r} {self.promise()}")

    def promise(self) -> str:
        """What the key must be, in the words of a proof: ``>= 1.5``, ``== 1``, ``in a/b``."""
        if self.op == "set":
            return "set"
        want = "/".join(map(str, self.value)) if self.op == "in" else f"{self.value:g}" if isinstance(
            self.value, float) else repr(self.value)
        return f"{self.op} {want}"


@dataclass(frozen=True)
class OwnIdentity:
    """COMMON-01's numbers. The shipped bot (its own name) keeps its exact User-Agent and token;
    a bot of its own that extends it (another name) carries its own, never the base's: the page
    it publishes names it, and robots.txt groups written for the base must not catch it."""

    name: str
    user_agent: str
    robots_token: str

    @property
    def keys(self) -> tuple[str, ...]:
        return ("user_agent", "robots_token")

    def promise(self) -> str:
        return f"{self.name}'s own, or a bot of its own's"

    def judge(self, p: Profile, proof: Proof) -> None:
        if p.name == self.name:
            Bound("user_agent", "==", self.user_agent).judge(p, proof)
            Bound("robots_token", "==", self.robots_token).judge(p, proof)
            return
        proof.that(p.user_agent != self.user_agent and p.robots_token.lower() != self.robots_token.lower(),
                   f"profile: {p.name}'s own user_agent {p.user_agent!r} and robots_token {p.robots_token!r}, "
                   f"not {self.name}'s")


# A week of firings to judge a schedule by: Monday 30 November 2026 00:00 UTC, four weeks.
_WEEK0 = utc("2026-11-30T00:00")
_DAYS = "Mon Tue Wed Thu Fri Sat Sun".split()


@dataclass(frozen=True)
class Cadence:
    """The profile's schedules for ``task`` as a cadence: firings per working day and per weekend
    day (inclusive ranges), per week, and the least time between two firings."""

    task: str
    workday: tuple[int, int] | None = None
    weekend: tuple[int, int] | None = None
    per_week: tuple[int, int] | None = None
    min_apart_s: float = 0.0

    @property
    def keys(self) -> tuple[str, ...]:
        return ("schedules",)

    def promise(self) -> str:
        """The cadence in words: ``feed 2-24 a working day, 2-24 a weekend day``."""
        parts = [f"{lo}-{hi} {per}" for rng, per in ((self.workday, "a working day"), (self.weekend, "a weekend day"),
                                                      (self.per_week, "a week")) if rng is not None
                 for lo, hi in (rng,)]
        if self.min_apart_s:
            parts.append(f"at least {timedelta(seconds=self.min_apart_s)} apart")
        return f"{self.task} " + ", ".join(parts or ["on some schedule"])

    def judge(self, p: Profile, proof: Proof) -> None:
        weeks = 4
        times = sorted({t for s in p.schedules if s.task == self.task
                        for t in firings(s.expression, _WEEK0 - 1, _WEEK0 + weeks * 7 * 86400 - 1)})
        exprs = ", ".join(s.expression for s in p.schedules if s.task == self.task) or "none"
        per_day = Counter(int((t - _WEEK0) // 86400) for t in times)
        week1 = [per_day.get(d, 0) for d in range(7)]
        said = f"schedules {exprs} fire {self.task} " + " ".join(f"{d} {n}" for d, n in zip(_DAYS, week1, strict=True))
        ok = bool(times)
        for d in range(weeks * 7):
            n, rng = per_day.get(d, 0), self.weekend if d % 7 >= 5 else self.workday
            ok &= rng is None or rng[0] <= n <= rng[1]
        if self.per_week is not None:
            counts = [sum(per_day.get(w * 7 + d, 0) for d in range(7)) for w in range(weeks)]
            ok &= all(self.per_week[0] <= c <= self.per_week[1] for c in counts)
            said += f" ({'/'.join(map(str, counts))} a week)"
        if self.min_apart_s:
            apart = min((b - a for a, b in pairwise(times)), default=float("inf"))
            ok &= apart >= self.min_apart_s
            said += f", at least {timedelta(seconds=apart)} apart" if apart != float("inf") else ""
        proof.that(ok, said)


class Runs(Protocol):
    """What a check is given: the scenarios' results, run on first use, and the profiles."""

    profile: Profile
    bot: str

    def __getitem__(self, scenario: str) -> Seen: ...


@dataclass(frozen=True)
class Rule:
    id: str
    sentence: str
    numbers: tuple[Bound | Cadence | OwnIdentity, ...] = ()
    check: Callable[[Runs], Proof] | None = None
    binds: tuple[str, ...] = ()  # profile keys the check depends on beyond its numbers
    deployment: bool = False     # proven on template.yaml and the profile, not on a site

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys([k for n in self.numbers for k in n.keys] + list(self.binds)))


@dataclass
class Seen:
    """One scenario's result: every site's log (wall clock), the run's output, the clock's jumps."""

    name: str
    scale: float
    logs: dict[str, list[RequestRecord]]
    bases: dict[str, str]
    out: Output
    marks: list[float] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    engine: str = "aws"

    def log(self, site: str) -> list[RequestRecord]:
        return self.logs[site]

    def paths(self, site: str) -> list[str]:
        return [r.path for r in self.logs[site]]

    def gaps(self, site: str) -> list[float]:
        return gaps(self.logs[site], self.marks)

    def every(self) -> list[RequestRecord]:
        return sorted((r for log in self.logs.values() for r in log), key=lambda r: r.t_start)

    def overlaps(self, sites: Sequence[str] | None = None) -> list[tuple[RequestRecord, RequestRecord]]:
        """Requests in flight together on one site (or, given several, on all of them at once)."""
        if sites is None:
            return [pair for log in self.logs.values() for pair in overlaps(log)]
        return overlaps(r for s in sites for r in self.logs[s])

    def requests_to(self, site: str, purpose: str | None = None) -> list[dict[str, Any]]:
        base = self.bases[site] + "/"
        return [r for r in self.out.requests if r["url"].startswith(base)
                and (purpose is None or r.get("purpose") == purpose)]


@dataclass(frozen=True)
class Scenario:
    """A small web and one run of the stack over it. ``play`` builds the sites on the bench,
    runs the stack and returns its output; ``scale`` multiplies the profile's waits."""

    name: str
    scale: float
    about: str
    play: Callable[[Any], Output]
    engine: str | None = None  # the one engine it runs on, whatever the run asked (said in the report)

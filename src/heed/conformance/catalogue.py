"""The catalogue: for each built-in bot, the rules of PROMISES.md it is checked against (the
COMMON rules, then its own) and the scenarios those rules read."""
from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module

from heed_core.profile import Profile

from heed.conformance import common
from heed.conformance.model import Bound, Proof, Rule, Scenario

__all__ = ["MODULES", "Broken", "broken_numbers", "catalogue"]

# bot -> the module holding its own rules (RULES) and scenarios (scenarios()).
MODULES = {"springstudiobot": "spring", "praha-x": "praha", "wannadobot": "wannado",
           "subsidieupdate": "subsidie", "aubebot": "aube"}


def catalogue(bot: str) -> tuple[list[Rule], dict[str, Scenario]]:
    """The bot's rules in PROMISES.md order and its scenarios by name."""
    own = import_module(f"heed.conformance.{MODULES[bot]}")
    found = common.scenarios(bot) + list(own.scenarios())
    return common.rules(bot) + list(own.rules()), {s.name: s for s in found}


@dataclass(frozen=True)
class Broken:
    """One number of a profile that breaks one of the bot's promises: the rule's id, the keys
    it judged, the proof's words (as the conformance report has them) and, in one phrase, the
    profile's value against the promise."""

    rule: str
    keys: tuple[str, ...]
    evidence: str
    said: str


def broken_numbers(bot: str, profile: Profile) -> list[Broken]:
    """Each of ``bot``'s rules whose numbers ``profile`` breaks, judged as conformance judges
    them (no scenario is played), one per number that breaks, in PROMISES.md order."""
    rules, _ = catalogue(bot)
    out = []
    for rule in rules:
        for number in rule.numbers:
            proof = Proof()
            number.judge(profile, proof)
            if proof.ok:
                continue
            evidence = "; ".join(t for ok, t in proof.lines if not ok)
            if isinstance(number, Bound):
                got = " + ".join(number.keys) + " = " + repr(
                    sum(float(profile.get(k) or 0) for k in number.keys) if isinstance(number.key, tuple)
                    else profile.get(number.key))
            else:
                got = evidence.removeprefix("profile: ")
            out.append(Broken(rule.id, number.keys, evidence, f"{got}, promised {number.promise()}"))
    return out

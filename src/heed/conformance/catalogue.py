"""The catalogue: for each built-in bot, the rules of PROMISES.md it is checked against (the
COMMON rules, then its own) and the scenarios those rules read."""
from __future__ import annotations

from importlib import import_module

from heed.conformance import common
from heed.conformance.model import Rule, Scenario

__all__ = ["MODULES", "catalogue"]

# bot -> the module holding its own rules (RULES) and scenarios (scenarios()).
MODULES = {"springstudiobot": "spring", "praha-x": "praha", "wannadobot": "wannado",
           "subsidieupdate": "subsidie", "aubebot": "aube"}


def catalogue(bot: str) -> tuple[list[Rule], dict[str, Scenario]]:
    """The bot's rules in PROMISES.md order and its scenarios by name."""
    own = import_module(f"heed.conformance.{MODULES[bot]}")
    found = common.scenarios(bot) + list(own.scenarios())
    return common.rules(bot) + list(own.rules()), {s.name: s for s in found}

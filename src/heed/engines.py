"""Which engine runs a bot on this machine: ``embedded`` (heed_embedded: the core on one SQLite
database, the default) or ``aws`` (the real Lambda handlers on an in-process AWS, moto: call for
call what a deployed stack does). Light on purpose: `heed --help` loads neither."""
from __future__ import annotations

import argparse
import time
from typing import Any

__all__ = ["DEFAULT_ENGINE", "ENGINES", "add_engine_argument", "check_state_run"]

ENGINES = ("embedded", "aws")
# README, "Heed on one machine": the embedded engine is what a user runs (it is `heed serve`'s, its
# state directory is the one the operator commands share, a page costs a fraction of the CPU); the
# aws engine stays the fidelity bench (the demo, the fault suite, the IAM check, the bench's AWS bill).
DEFAULT_ENGINE = "embedded"


def add_engine_argument(parser: Any) -> None:
    parser.add_argument("--engine", choices=ENGINES, default=DEFAULT_ENGINE,
                        help="embedded (default: the core on one SQLite database, as `heed serve` runs it) or aws "
                             "(the real Lambda handlers on an in-process AWS, call for call a deployed stack)")


def check_state_run(args: argparse.Namespace, start: float, until: float, now: float | None = None) -> str | None:
    """Why a run cannot go on a state directory (None: it can). A state directory keeps
    wall-clock time and is the embedded engine's: a run on it with the aws engine, or on a
    simulated clock (``--start``/``--until`` away from now), is refused: its times would lie ahead
    of the clock the next run reads."""
    if getattr(args, "state", None) is None:
        return None
    if args.engine == "aws":
        return ("--state DIR goes with the embedded engine (the aws engine starts a fresh in-process AWS every run): "
                "leave out --engine aws")
    from heed.local.clock import is_simulated

    if (args.start is not None or args.until is not None) and is_simulated(start, until,
                                                                          time.time() if now is None else now):
        return ("--start/--until simulate time, and a state directory keeps wall-clock time: run the simulation "
                "without --state (a fresh state every run), or the bot with heed serve --state DIR")
    return None

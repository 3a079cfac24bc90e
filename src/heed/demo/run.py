"""`heed demo`: every seed bot, one round each, on the bundled demo web, then what happened."""
from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from heed_core.errors import ConfigError
from heed_core.profile import BUILTIN_BOTS, Profile, load_profile_data
from heed_core.sources import load_sources

from heed.demo.sources import write_sources
from heed.demo.web import DemoWeb
from heed.local.report import human_report
from heed.local.runtime import LocalRun

# The demo shows each bot's behaviour in seconds, not in its real tempo: the same profile with
# its waits scaled down (`heed local run --bot <name>` uses the real numbers).
DEMO_POLITENESS = {"min_delay_s": 0.2, "crawl_delay_cap_s": 0.5, "round_spacing_s": 0.5,
                   "round_spacing_jitter_s": 0.2}


def demo_profile(bot: str) -> Profile:
    return load_profile_data({"extends": bot, "politeness": DEMO_POLITENESS,
                              "responses": {"retry_backoff_s": 1}})


def run_demo(out: Path, *, bots: list[str] | None = None, progress: Callable[[str], None] | None = None,
             as_json: bool = False) -> int:
    names = bots or list(BUILTIN_BOTS)
    unknown = [b for b in names if b not in BUILTIN_BOTS]
    if unknown:
        raise ConfigError(f"unknown bot {unknown[0]!r} (known: {', '.join(BUILTIN_BOTS)})")
    web = DemoWeb()
    urls = web.start()
    try:
        if not as_json:
            print(f"Heed demo: {len(urls)} demo sites on 127.0.0.x; each bot runs one round with its "
                  f"waits scaled down to {DEMO_POLITENESS['min_delay_s']} s (its real profile otherwise).")
        files = write_sources(urls, out / "sources")
        for bot in names:
            profile = demo_profile(bot)
            sources = load_sources(files[bot], profile)
            now = time.time()
            run = LocalRun(profile, sources, start=now, until=now, out_dir=out / bot, allow_private=True,
                           progress=progress, patience_s=10)
            summary = run.run()
            if sys.stderr.isatty():
                sys.stderr.write("\r\033[K")
            if as_json:
                print(json.dumps({"bot": bot, "out": str(out / bot), **summary}, ensure_ascii=False), flush=True)
                continue
            print()
            print(human_report(out / bot, summary))
        seen = web.log()
        agents = sorted({r.header("User-Agent") or "?" for r in seen})
        if as_json:
            print(json.dumps({"sites_saw": len(seen), "all_get": all(r.method == "GET" for r in seen),
                              "user_agents": agents}, ensure_ascii=False))
        else:
            print(f"\nThe demo sites saw {len(seen)} requests, all GET: {all(r.method == 'GET' for r in seen)}; "
                  f"user agents: {', '.join(agents)}")
    finally:
        web.stop()
    return 0

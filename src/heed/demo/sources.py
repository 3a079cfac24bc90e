"""Decides which sources each seed bot gets in the demo: one list per bot, pointing at the demo web."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

__all__ = ["BOTS", "demo_sources", "write_sources"]

BOTS = ("springstudiobot", "praha-x", "wannadobot", "subsidieupdate", "aubebot")

# (bot, id, site, path, kind, options). Paths are the ones a customer would paste in.
_TABLE: tuple[tuple[str, str, str, str, str, dict[str, Any]], ...] = (
    # SPRING-01: a news listing; SPRING-03: a JavaScript-only listing (sitemap fallback).
    ("springstudiobot", "nyheter", "nyheter", "/nyheter/", "page", {}),
    ("springstudiobot", "innsyn", "jsapp", "/app/", "page", {}),
    # PRAHA-01/02: district news, articles opened once; PRAHA-03: press releases under TDMRep.
    ("praha-x", "praha23-aktuality", "praha-feeds", "/aktuality/rss.xml", "feed", {"write_about": True}),
    ("praha-x", "praha23-tiskove", "praha-feeds", "/tiskove-zpravy/atom.xml", "feed", {}),
    # PRAHA-04: weekly site check of home page and icon; PRAHA-07: a challenge closes the source.
    ("praha-x", "top-kulturni-praha", "praha-top-redirect", "/", "site_check", {}),
    ("praha-x", "top-antikvariat", "praha-top-plain", "/", "site_check", {}),
    ("praha-x", "top-zpravodaj", "praha-top-challenge", "/", "site_check", {}),
    # WANNADO-06: start at the venue's root, the bot finds /sitemap.xml itself.
    ("wannadobot", "veerhuis", "theater", "/", "agenda", {}),
    # SUBSIDIE-01: each municipality's root; SUBSIDIE-11: the second one's robots.txt is 503.
    ("subsidieupdate", "waterveen", "gemeente", "/", "subsidy", {}),
    ("subsidieupdate", "hoogdijk", "gemeente-storing", "/", "subsidy", {}),
    # AUBE-01..06: a 50-item feed; AUBE-04: a host that bans AubeBot; a host answering 429.
    ("aubebot", "circuito", "aube-feeds", "/feed/", "feed", {}),
    ("aubebot", "labfuturo", "aube-atom", "/atom.xml", "feed", {}),
    ("aubebot", "quantobasta", "aube-busy", "/rss.xml", "feed", {}),
)


def demo_sources(urls: Mapping[str, str]) -> dict[str, list[dict[str, Any]]]:
    """For each bot, the sources ``heed local run --sources`` reads, given the base URL of
    every demo site (``DemoWeb.start()``). A site missing from ``urls`` is left out."""
    out: dict[str, list[dict[str, Any]]] = {bot: [] for bot in BOTS}
    for bot, sid, site, path, kind, options in _TABLE:
        base = urls.get(site)
        if base is None:
            continue
        out[bot].append({"id": sid, "url": base.rstrip("/") + path, "kind": kind, **options})
    return out


def write_sources(urls: Mapping[str, str], out_dir: Path) -> dict[str, Path]:
    """Write ``<out_dir>/<bot>.sources.yaml`` (``sources: [...]``) for every bot."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for bot, sources in demo_sources(urls).items():
        path = out_dir / f"{bot}.sources.yaml"
        text = yaml.safe_dump({"sources": sources}, sort_keys=False, allow_unicode=True)
        path.write_text(f"# Demo sources for {bot}; the URLs are only valid while the demo web runs.\n{text}", "utf-8")
        written[bot] = path
    return written

"""`heed local run` as a user runs it (a subprocess), checked from the sites' side."""
from __future__ import annotations

import json
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest
import yaml

from heed.demo.web import RecordingServer, Route, Site

AUBE_UA = "AubeBot/0.1 (+https://aube.news/robot; collecte RSS polie)"


def _feed(base: str, n: int) -> str:
    items = "".join(
        f"<item><title>Notizia {i}</title><link>{base}/{'riservato' if i == 2 else 'articoli'}/{i}</link>"
        f"<guid>{base}/articoli/{i}</guid><description>Breve {i}.</description>"
        f"<pubDate>Mon, 30 Nov 2026 0{i}:00:00 GMT</pubDate></item>" for i in range(n))
    return (f'<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Tech</title>{items}'
            "</channel></rss>")


def _news_site(ip: str, crawl_delay: float) -> RecordingServer:
    site = Site(name="news", routes={
        "/robots.txt": Route(body=f"User-agent: *\nDisallow: /admin/\n\nUser-agent: AubeBot\nDisallow: /riservato/\n"
                                  f"Crawl-delay: {crawl_delay}\n", content_type="text/plain"),
        "/feed.xml": Route(body="", content_type="application/rss+xml", conditional=True),
        **{f"/articoli/{i}": Route(body=f"<html><head><title>Articolo {i}</title></head><body><main><p>Testo {i}."
                                         f"</p></main></body></html>") for i in range(4)},
        "/riservato/2": Route(body="<html><title>no</title></html>"),
    })
    server = RecordingServer(site, ip=ip)
    server.set_route("/feed.xml", Route(body=_feed(server.base_url, 4), content_type="application/rss+xml",
                                        conditional=True))
    return server.start()


@pytest.fixture
def sites():
    a, b = _news_site("127.0.0.31", 0.4), _news_site("127.0.0.32", 0.6)
    yield a, b
    a.stop()
    b.stop()


def _run_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "heed.cli", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=240)


def test_common_01_02_05_heed_local_run_seen_from_the_sites(sites, tmp_path: Path):
    # GIVEN two news sites with a robots.txt that closes /riservato/ to AubeBot and asks for a
    # Crawl-delay, and an AubeBot profile derived with a short minimum gap
    a, b = sites
    (tmp_path / "bot.yaml").write_text("extends: aubebot\npoliteness:\n  min_delay_s: 0.2\n")
    (tmp_path / "sources.yaml").write_text(yaml.safe_dump({"sources": [
        {"url": f"{a.base_url}/feed.xml", "kind": "feed", "id": "a"},
        {"url": f"{b.base_url}/feed.xml", "kind": "feed", "id": "b"}]}))
    # WHEN a user runs one round of it
    proc = _run_cli(tmp_path, "local", "run", "--bot", "bot.yaml", "--sources", "sources.yaml",
                    "--allow-private", "--out", "out", "--patience", "5")
    assert proc.returncode == 0, proc.stderr
    assert "aubebot" in proc.stdout and "Traceback" not in proc.stderr
    # THEN every request carried AubeBot's exact User-Agent, was a GET, robots.txt came first,
    # nothing disallowed was asked for, and the gap per host held (Crawl-delay 0.4 s / 0.6 s)
    for server, gap in ((a, 0.4), (b, 0.6)):
        log = server.log()
        assert log and log[0].path == "/robots.txt"
        assert {r.header("User-Agent") for r in log} == {AUBE_UA}
        assert {r.method for r in log} == {"GET"}
        assert not [r for r in log if r.path.startswith("/riservato/")]
        assert min(y.t_start - x.t_end for x, y in pairwise(log)) >= gap
        assert [r.path for r in log][:2] == ["/robots.txt", "/feed.xml"]
    # AND the four output files say the same thing
    out = tmp_path / "out"
    requests = [json.loads(x) for x in (out / "requests.jsonl").read_text().splitlines()]
    items = [json.loads(x) for x in (out / "items.jsonl").read_text().splitlines()]
    skips = [json.loads(x) for x in (out / "skips.jsonl").read_text().splitlines()]
    summary = json.loads((out / "summary.json").read_text())
    assert len(requests) == len(a.log()) + len(b.log()) == summary["requests"]
    assert {r["purpose"] for r in requests} == {"robots", "feed", "article"}
    fields = {"t_start", "t_end", "method", "url", "status", "purpose", "bytes", "source"}
    assert all(fields <= set(r) for r in requests)
    assert sum(1 for i in items if i["detail_type"] == "item.found") == 8
    assert all({"bot", "kind", "source", "url"} <= set(i) for i in items)
    disallowed = [s for s in skips if s["reason"] == "robots_disallowed"]
    assert len(disallowed) == 2
    assert all("/riservato/" in s["url"] and "Disallow: /riservato/" in s["detail"] for s in disallowed)
    assert summary["rounds"] == 1 and summary["by_reason"]["robots_disallowed"] == 2


def test_bad_arguments_give_one_clear_line(tmp_path: Path):
    (tmp_path / "s.yaml").write_text("sources:\n  - url: ftp://x\n    kind: feed\n")
    cases = [
        (["local", "run", "--bot", "nosuchbot", "--sources", "s.yaml"], "nosuchbot"),
        (["local", "run", "--bot", "aubebot", "--sources", "missing.yaml"], "missing.yaml"),
        (["local", "run", "--bot", "aubebot", "--sources", "s.yaml"], "sources[0].url"),
        (["local", "run", "--bot", "aubebot", "--sources", "s.yaml", "--start", "yesterday"], "--start"),
    ]
    for args, needle in cases:
        proc = _run_cli(tmp_path, *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert needle in proc.stderr and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1


def test_private_addresses_are_refused_without_allow_private(sites, tmp_path: Path):
    a, _ = sites
    (tmp_path / "s.yaml").write_text(yaml.safe_dump({"sources": [{"url": f"{a.base_url}/feed.xml", "kind": "feed"}]}))
    proc = _run_cli(tmp_path, "local", "run", "--bot", "aubebot", "--sources", "s.yaml", "--out", "out",
                    "--patience", "3")
    assert proc.returncode == 0, proc.stderr
    assert a.log() == []  # never requested
    skips = [json.loads(x) for x in (tmp_path / "out" / "skips.jsonl").read_text().splitlines()]
    assert {s["reason"] for s in skips} == {"private_address"}

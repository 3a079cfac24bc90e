"""A new source kind is one kind file: a toy kind (tests/support/toykind.py: a project's changelog,
its own parser, its profile section and source field) registered through the registry's public
function is scheduled, checked and crawled by `heed local run` on both engines, in this process,
against a site on loopback (127.0.8.x: no other suite's block), and nothing else was written for it."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from heed_core import kinds
from heed_core.profile import ProfileError, load_profile_data
from heed_core.sources import SourcesError, load_sources

from heed.cli import main
from heed.demo.web import RecordingServer, Route, Site
from heed.infopage import render_info_page

from tests.support.bots import own_identity
from tests.support.toykind import KIND, parse_changelog

CHANGES = "\n".join(["Changes of Pipit, newest first", "",
                     "2026-11-30 1.4.0 Faster feeds", "2026-10-02 1.3.1 A fix for long titles",
                     "2026-08-15 1.3.0 Sitemaps", "2026-05-01 1.2.0 The first public release",
                     "not a release line"])
PROFILE = {**own_identity("aubebot", "pipitbot"), "politeness": {"min_delay_s": 0.2},
           "schedules": [{"expression": "rate(1 day)", "task": "changelog"}],
           "tasks": {"changelog": {"max_entries": 3}}}


@pytest.fixture
def toy() -> Iterator[None]:
    kinds.register(KIND)
    try:
        yield
    finally:
        kinds.unregister(KIND.name)


def _site(ip: str) -> RecordingServer:
    return RecordingServer(Site(name="pipit", routes={
        "/robots.txt": Route(body="User-agent: *\nDisallow: /private/\n", content_type="text/plain"),
        "/CHANGES.txt": Route(body=CHANGES, content_type="text/plain; charset=utf-8")}), ip=ip).start()


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def test_the_toy_kinds_parser_reads_releases_newest_first() -> None:
    releases, total = parse_changelog(CHANGES.encode(), 3)
    assert total == 4 and [r.version for r in releases] == ["1.4.0", "1.3.1", "1.3.0"]


def test_a_kind_unknown_to_the_registry_is_refused_and_known_once_registered(toy: None, tmp_path: Path) -> None:
    # GIVEN the toy kind registered THEN its schedule, its section and its source field are checked
    assert "changelog" in kinds.names()
    with pytest.raises(ProfileError, match=r"tasks\.changelog\.max_entriez: unknown key \(did you mean max_entries"):
        load_profile_data({**PROFILE, "tasks": {"changelog": {"max_entriez": 3}}})
    profile = load_profile_data(PROFILE)
    assert profile.task_kinds == ("feed", "changelog") and profile.task("changelog") == {"max_entries": 3}
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"sources": [{"url": "http://127.0.8.9/CHANGES.txt", "kind": "changelog",
                                                "since": "last year"}]}))
    with pytest.raises(SourcesError, match=r"sources\[0\]\.since: must be a date, YYYY-MM-DD"):
        load_sources(bad, profile)
    # AND until its sentences are in the language data, the bot's info page says which one is missing
    with pytest.raises(ProfileError, match=r"no sentence 'task_changelog' in the en words"):
        render_info_page(profile, "en")
    # WHEN it is taken out again THEN a profile that schedules it is refused, naming the kinds known
    kinds.unregister(KIND.name)
    with pytest.raises(ProfileError, match=r"schedules\[0\]\.task: 'changelog' is not valid \(must be feed, page"):
        load_profile_data(PROFILE)
    kinds.register(KIND)


@pytest.mark.parametrize(("engine", "ip"), [("embedded", "127.0.8.1"), ("aws", "127.0.8.2")])
def test_a_toy_kind_from_one_file_is_crawled_by_heed_local_run(toy: None, engine: str, ip: str, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a site with a changelog, a bot of one's own that runs the toy kind, and two sources of it
    site = _site(ip)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bot.yaml").write_text(yaml.safe_dump(PROFILE))
    (tmp_path / "sources.yaml").write_text(yaml.safe_dump({"sources": [
        {"id": "pipit", "url": f"{site.base_url}/CHANGES.txt", "kind": "changelog"},
        {"id": "pipit-new", "url": f"{site.base_url}/CHANGES.txt?since", "kind": "changelog",
         "since": "2026-09-01"}]}))
    try:
        # WHEN heed local run crawls one round of it on the engine
        code = main(["local", "run", "--bot", "bot.yaml", "--sources", "sources.yaml", "--allow-private",
                     "--out", "out", "--patience", "5", "--engine", engine])
    finally:
        site.stop()
    assert code == 0
    # THEN the site saw robots.txt first, then each source's changelog once, at the bot's pace
    log = site.log()
    assert [r.path for r in log] == ["/robots.txt", "/CHANGES.txt", "/CHANGES.txt?since"]
    assert {r.header("User-Agent") for r in log} == {"Pipitbot/1.0 (+https://own.example/bot)"}
    assert all(b.t_start - a.t_end >= 0.2 for a, b in zip(log, log[1:], strict=False))
    # AND each release within the profile's cap is a result, the source field kept the newer ones only
    items = [i for i in _lines(tmp_path / "out" / "items.jsonl") if i["detail_type"] == "item.found"]
    titles = sorted((str(i["source"]), str(i["title"])) for i in items)
    assert titles == [("pipit", "1.3.0: Sitemaps"), ("pipit", "1.3.1: A fix for long titles"),
                      ("pipit", "1.4.0: Faster feeds"), ("pipit-new", "1.3.1: A fix for long titles"),
                      ("pipit-new", "1.4.0: Faster feeds")]
    assert {i["kind"] for i in items} == {"page_item"}
    requests = _lines(tmp_path / "out" / "requests.jsonl")
    assert {r["purpose"] for r in requests} == {"robots", "changelog"}
    skips = _lines(tmp_path / "out" / "skips.jsonl")
    assert [s["reason"] for s in skips] == ["cap_reached", "cap_reached"]

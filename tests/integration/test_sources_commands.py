"""`heed sources ...` on a stack (moto, the real handlers) and on a state directory (PRAHA-07, PRAHA-09)."""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from heed_core.profile import load_profile_data
from heed_core.work import Source

from heed.cli import build_parser
from heed.demo.web import RecordingServer, Route, Site, fail
from heed.local.runtime import LocalRun

from tests.support.stack import STACK, run_command, stack_aws

PRAHA = {"extends": "praha-x", "politeness": {"min_delay_s": 0.1}, "tasks": {"feed": {"min_read_interval_s": 0}}}


def _rss(base: str) -> str:
    return ('<?xml version="1.0"?><rss version="2.0"><channel><title>Praha 7</title>'
            f'<item><title>Nový park</title><link>{base}/zpravy/1</link><guid>{base}/zpravy/1</guid>'
            '<description>Park.</description><pubDate>Mon, 30 Nov 2026 06:00:00 GMT</pubDate></item>'
            '</channel></rss>')


@pytest.fixture
def refusing_feed() -> Iterator[RecordingServer]:
    """A district's feed that answers 403 (PRAHA-07: the source is closed) until told otherwise."""
    robots = Route(body="User-agent: *\nAllow: /\n", content_type="text/plain")
    site = Site(name="praha7", routes={"/robots.txt": robots, "/feed.xml": fail(403)})
    server = RecordingServer(site, ip="127.0.0.66").start()
    yield server
    server.stop()


def _feed_back(server: RecordingServer) -> None:
    server.set_route("/feed.xml", Route(body=_rss(server.base_url), content_type="application/rss+xml"))


def cli(capsys: pytest.CaptureFixture[str], *argv: str, aws: Any = None) -> tuple[int, str, str]:
    return run_command(capsys, *argv, aws=aws)


def _feed_requests(server: RecordingServer) -> list[int]:
    return [r.status for r in server.log() if r.path == "/feed.xml"]


def test_praha_07_09_reopen_on_the_stack_makes_a_closed_source_fetch_again_in_the_next_round(
        refusing_feed: RecordingServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server = refusing_feed
    run = LocalRun(load_profile_data(PRAHA), [Source(id="p7", url=server.base_url + "/feed.xml", kind="feed")],
                   start=time.time(), until=time.time(), out_dir=tmp_path / "out", allow_private=True, patience_s=5)
    run.setup()
    try:
        t = time.time()
        # GIVEN a round in which the feed answered 403: the source is closed (PRAHA-07)
        run.fire(t, ["feed"])
        run.drain()
        assert _feed_requests(server) == [403]
        code, out, _ = cli(capsys, "sources", "list", "--closed", "--json", "--stack", STACK, aws=stack_aws(run))
        [row] = [json.loads(x) for x in out.splitlines()]
        assert code == 0 and row["id"] == "p7" and row["closed_reason"].startswith("http_403") and row["closed_since"]
        # AND the next round leaves it out, though the site would answer now
        _feed_back(server)
        run.fire(t + 10, ["feed"])
        run.drain()
        assert _feed_requests(server) == [403]
        # WHEN the operator reopens it
        code, out, _ = cli(capsys, "sources", "reopen", server.base_url + "/feed.xml", "--stack", STACK, "--json",
                           aws=stack_aws(run))
        done = json.loads(out)
        assert code == 0 and done["was_closed"] and done["hosts_cleared"] == [f"http://{server.host}"]
        # THEN the next round reads the feed again
        run.fire(t + 20, ["feed"])
        run.drain()
        assert _feed_requests(server) == [403, 200]
        code, out, _ = cli(capsys, "sources", "show", "p7", "--stack", STACK, "--json", aws=stack_aws(run))
        shown = json.loads(out)
        assert (shown["closed"], shown["last_status"], shown["items_found"]) == (False, 200, 1)
        assert shown["hosts"][0]["closed_here"] is None and shown["hosts"][0]["stopped_until"] is None
    finally:
        run.close()


def test_praha_07_09_reopen_in_a_state_dir(refusing_feed: RecordingServer, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    server = refusing_feed
    state = str(tmp_path / "state")
    bot = tmp_path / "bot.yaml"
    bot.write_text("extends: praha-x\npoliteness:\n  min_delay_s: 0.1\ntasks:\n  feed:\n    min_read_interval_s: 0\n")

    def local_run(n: int) -> None:  # (a state directory keeps wall-clock time: each run is now)
        assert cli(capsys, "local", "run", "--bot", str(bot), "--state", state, "--allow-private", "--patience", "3",
                   "--out", str(tmp_path / f"out{n}"))[0] == 0

    # GIVEN a source added to the state directory, closed by a 403 in the first run
    code, out, _ = cli(capsys, "sources", "add", server.base_url + "/feed.xml", "--kind", "feed", "--id", "p7",
                       "--state", state, "--bot", str(bot))
    assert code == 0 and out.strip() == f"added p7 (feed {server.base_url}/feed.xml)"
    local_run(0)
    assert _feed_requests(server) == [403]
    _feed_back(server)
    local_run(1)
    assert _feed_requests(server) == [403]  # closed: left out
    # WHEN it is reopened
    code, out, _ = cli(capsys, "sources", "reopen", "p7", "--state", state)
    assert code == 0 and out.startswith("reopened p7")
    # THEN the next run reads it
    local_run(2)
    assert _feed_requests(server) == [403, 200]


@pytest.mark.slow
def test_sources_import_thousands_from_csv_is_idempotent_and_remove_stops_the_source(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import heed.progress

    monkeypatch.setattr(heed.progress, "INTERVAL_S", 0.0)  # a line per step: stderr is not a terminal here
    state = str(tmp_path / "state")
    path = tmp_path / "gemeenten.csv"
    rows = ["url,kind,id,sitemaps"] + [f"https://gemeente{i}.example/,subsidy,g{i},https://gemeente{i}.example/s.xml"
                                       for i in range(2000)]
    path.write_text("\n".join(rows) + "\n")
    code, out, err = cli(capsys, "sources", "import", str(path), "--state", state, "--bot", "subsidieupdate")
    assert code == 0 and out.strip() == f"imported {path} into state {state}: 2000 added, 0 updated, 0 unchanged"
    assert "import gemeenten.csv: 2000/2000 sources written" in err
    # the same file again changes nothing; one row changed is one update, its learnt fields kept
    code, out, _ = cli(capsys, "sources", "import", str(path), "--state", state, "--json")
    assert json.loads(out) == {"file": str(path), "added": 0, "updated": 0, "unchanged": 2000,
                               "where": f"state {state}"}
    rows[1] = "https://gemeente0.example/,subsidy,g0,https://gemeente0.example/other.xml"
    path.write_text("\n".join(rows) + "\n")
    code, out, _ = cli(capsys, "sources", "import", str(path), "--state", state, "--json")
    assert (json.loads(out)["updated"], json.loads(out)["unchanged"]) == (1, 1999)
    code, out, _ = cli(capsys, "sources", "list", "--state", state, "--json")
    listed = [json.loads(x) for x in out.splitlines()]
    assert len(listed) == 2000 and all(r["next_due"] for r in listed)
    assert next(r for r in listed if r["id"] == "g0")["options"] == {"sitemaps": ["https://gemeente0.example/other.xml"]}
    code, out, _ = cli(capsys, "sources", "remove", "https://gemeente7.example/", "--state", state)
    assert code == 0 and out.startswith("removed g7 (https://gemeente7.example/)")
    code, _, err = cli(capsys, "sources", "show", "g7", "--state", state)
    assert code == 2 and err.strip() == f"heed sources show: no source 'g7' in state {state} " \
                                        "(heed sources list shows them)"


@pytest.mark.parametrize("argv, line", [
    (["sources", "add", "https://a.example/rss", "--kind", "fede"],
     "heed sources add: source.kind: 'fede' is not a kind of source (did you mean 'feed'?)"),
    (["sources", "add", "https://a.example/rss", "--kind", "feed", "--render"],
     "heed sources add: source.render: not an option of kind 'feed' (only agenda sources take it)"),
    (["sources", "add", "ftp://a.example/rss", "--kind", "feed"],
     "heed sources add: source.url: not an absolute http(s) URL: 'ftp://a.example/rss'"),
    (["sources", "add", "https://a.example/rss", "--kind", "feed", "--option", "write_about"],
     "heed sources add: --option 'write_about': write KEY=VALUE (e.g. --option write_about=true)"),
    (["sources", "add", "https://a.example/", "--kind", "agenda"],
     "heed sources add: source.kind: aubebot has no schedule for 'agenda' (it runs: feed)"),
])
def test_sources_mistakes_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                       line: str) -> None:
    code, out, err = cli(capsys, *argv, "--state", str(tmp_path / "state"), "--bot", "aubebot")
    assert (code, out) == (2, "")
    assert err.strip().splitlines() == [line]
    assert not (tmp_path / "state" / "table.jsonl").exists()  # nothing written


def test_sources_on_a_stack_that_does_not_exist(capsys: pytest.CaptureFixture[str]) -> None:
    from heed.awsstack import Aws

    from tests.support.stack import FakeCloudFormation

    aws = Aws(region="eu-west-1", clients={"cloudformation": FakeCloudFormation({}, {})})
    code, _, err = cli(capsys, "sources", "list", "--stack", "nope", aws=aws)
    assert code == 2 and err.strip() == ("heed sources list: no stack named 'nope' in eu-west-1 "
                                         "(deployed with sam deploy --config-env <bot>?)")


def test_praha_09_remove_on_the_stack_stops_the_work_already_queued(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from heed.demo.web import Hit

    from tests.integration.test_ops_commands import PROFILE

    holder: dict[str, Any] = {}

    def page(n: str) -> Any:
        def body(hit: Hit) -> str:
            if n == "a":  # WHEN, while page a is read, the source is removed by hand
                def remove() -> None:
                    args = build_parser().parse_args(["sources", "remove", "g", "--stack", STACK])
                    holder["code"] = args.func(args, aws=stack_aws(holder["run"]))
                holder["thread"] = threading.Thread(target=remove)
                holder["thread"].start()
            return (f"<html><head><title>{n}</title></head>"
                    f"<body><main><h1>Subsidie {n}</h1><p>EUR 5.</p></main></body></html>")
        return body
    urls = "".join(f"<url><loc>{{{{base}}}}/subsidies/{n}/</loc></url>" for n in ("a", "b"))
    server = RecordingServer(Site(name="g", routes={
        "/robots.txt": Route(body="User-agent: *\nAllow: /\n", content_type="text/plain"),
        "/sitemap.xml": Route(body=f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                                   f'{urls}</urlset>', content_type="application/xml"),
        **{f"/subsidies/{n}/": Route(body=page(n)) for n in ("a", "b")}}), ip="127.0.0.69").start()
    # A gap of a second: the removal lands between page a's commit and page b's claim.
    profile = load_profile_data({**PROFILE, "politeness": {"min_delay_s": 1.0}})
    run = holder["run"] = LocalRun(profile, [Source(id="g", url=server.base_url + "/", kind="subsidy")],
                                   start=time.time(), until=time.time(), out_dir=tmp_path / "out", allow_private=True,
                                   patience_s=5)
    run.setup()
    try:
        run.fire(time.time(), ["subsidy"])
        run.drain()
        holder["thread"].join(timeout=30)
        run.drain()
        from heed_aws import runtime

        assert runtime.store().get_source("g") is None
    finally:
        run.close()
        server.stop()
    capsys.readouterr()
    # THEN page b, already queued, is not fetched: the source is closed on its host
    assert holder["code"] == 0
    assert [r.path for r in server.log()] == ["/robots.txt", "/sitemap.xml", "/subsidies/a/"]
    skips = [json.loads(x) for x in (tmp_path / "out" / "skips.jsonl").read_text().splitlines()]
    closed = {(s["url"], s["reason"], s["detail"]) for s in skips if s["reason"] == "source_closed"}
    # (page a's own result is dropped too when the removal lands before its commit: the turn
    # finds the host changed, and on its next try the source is closed)
    b_closed = (server.base_url + "/subsidies/b/", "source_closed", "removed by the operator")
    a_closed = (server.base_url + "/subsidies/a/", "source_closed", "removed by the operator")
    assert b_closed in closed and closed <= {a_closed, b_closed}, closed


def test_sources_list_json_imports_back_unchanged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a state with sources of two kinds, options and ids of their own
    state = str(tmp_path / "state")
    bot = tmp_path / "bot.yaml"
    bot.write_text("extends: praha-x\n", encoding="utf-8")
    assert cli(capsys, "sources", "add", "https://praha7.example/feed.xml", "--kind", "feed", "--id", "p7",
               "--write-about", "--state", state, "--bot", str(bot))[0] == 0
    assert cli(capsys, "sources", "add", "https://praha8.example/", "--kind", "site_check", "--state", state)[0] == 0
    # WHEN the listing is printed as JSON, written to a file and imported back (here, and into a new state)
    code, listing, _ = cli(capsys, "sources", "list", "--state", state, "--json")
    assert code == 0 and len(listing.splitlines()) == 2
    (tmp_path / "listing.txt").write_text(listing, encoding="utf-8")
    code, out, err = cli(capsys, "sources", "import", str(tmp_path / "listing.txt"), "--state", state, "--json")
    # THEN nothing changes, and a new state gets the very same sources
    assert (code, err) == (0, "") and json.loads(out)["unchanged"] == 2
    other = str(tmp_path / "other")
    assert cli(capsys, "sources", "import", str(tmp_path / "listing.txt"), "--state", other, "--bot", str(bot))[0] == 0
    again = cli(capsys, "sources", "list", "--state", other, "--json")[1]
    strip = lambda text: [{k: v for k, v in json.loads(x).items() if k in ("id", "url", "kind", "options")}  # noqa: E731
                          for x in text.splitlines()]
    assert strip(again) == strip(listing)

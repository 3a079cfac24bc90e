"""`heed explain URL --stack|--state`: its answer is what the fetcher then does."""
from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from heed_core.profile import load_profile_data
from heed_core.work import Source

from heed.cli import build_parser, main
from heed.demo.web import RecordingServer, Route, Site
from heed.local.runtime import LocalRun

from tests.support.stack import STACK, stack_aws

PRAHA = {"extends": "praha-x", "politeness": {"min_delay_s": 0.1}, "tasks": {"feed": {"min_read_interval_s": 0}}}


def _rss(base: str) -> str:
    return ('<?xml version="1.0"?><rss version="2.0"><channel><title>Praha</title>'
            f'<item><title>Park</title><link>{base}/zpravy/1</link><guid>{base}/zpravy/1</guid>'
            '<description>Park.</description></item></channel></rss>')


def _site(ip: str) -> RecordingServer:
    server = RecordingServer(Site(name=ip, routes={
        "/robots.txt": Route(body="User-agent: *\nDisallow: /private/\n", content_type="text/plain")}), ip=ip)
    for path in ("/feed.xml", "/private/feed.xml"):
        server.set_route(path, Route(body=_rss(server.base_url), content_type="application/rss+xml", conditional=True))
    return server.start()


@pytest.fixture
def sites() -> Iterator[tuple[RecordingServer, RecordingServer]]:
    a, b = _site("127.0.0.67"), _site("127.0.0.68")
    yield a, b
    a.stop()
    b.stop()


def explain(capsys: pytest.CaptureFixture[str], url: str, *where: str, aws: Any = None) -> tuple[int, Any, str]:
    argv = ["explain", url, *where, "--json"]
    if aws is None:
        code = main(argv)
    else:
        args = build_parser().parse_args(argv)
        code = args.func(args, aws=aws)
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else None, err


def _skips(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "skips.jsonl").read_text().splitlines()]


def test_explain_on_the_stack_says_what_the_fetcher_then_does(
        sites: tuple[RecordingServer, RecordingServer], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = sites
    feed, private, other = a.base_url + "/feed.xml", a.base_url + "/private/feed.xml", b.base_url + "/feed.xml"
    run = LocalRun(load_profile_data(PRAHA), [Source("f1", feed, "feed"), Source("f2", private, "feed"),
                                              Source("f3", other, "feed")],
                   start=time.time(), until=time.time(), out_dir=tmp_path / "out", allow_private=True, patience_s=5)
    run.setup()
    try:
        t = time.time()
        run.fire(t, ["feed"])
        run.drain()
        assert ops_block(capsys, run, "127.0.0.68") == 0
        a.reset_log()
        b.reset_log()
        # WHEN the operator asks about each URL (--bot: the stack runs a profile derived for the test)
        bot = tmp_path / "bot.yaml"
        bot.write_text(json.dumps(PRAHA))
        where = ("--stack", STACK, "--bot", str(bot))
        _, fetched, _ = explain(capsys, feed, *where, aws=stack_aws(run))
        _, refused, _ = explain(capsys, private, *where, aws=stack_aws(run))
        _, blocked, _ = explain(capsys, other, *where, aws=stack_aws(run))
        code, never, err = explain(capsys, a.base_url + "/nowhere", *where, aws=stack_aws(run))
        # THEN: why it was fetched (the source, the robots.txt rule), and what happens now
        assert fetched["found"][0] == {"source": "f1", "kind": "feed", "as": "the source's own URL"}
        assert fetched["robots"]["allowed"] is True and fetched["seen"]["last_status"] == 200
        assert fetched["now"]["action"] == "fetch", fetched["now"]
        etag = fetched["seen"]["etag"]
        assert fetched["now"]["headers"] == {"If-None-Match": etag,
                                             "If-Modified-Since": fetched["seen"]["last_modified"]}
        assert fetched["pacing"]["effective_delay_s"] == 0.1
        assert refused["now"]["action"] == "skip" and refused["now"]["reason"] == "robots_disallowed"
        assert refused["now"]["detail"] == "Disallow: /private/ (line 2, group *)"
        assert refused["why_not"] == [{"reason": "robots_disallowed",
                                       "detail": "Disallow: /private/ (line 2, group *)"}]
        assert blocked["now"] == {"action": "skip", "reason": "blocked_by_operator", "detail": "asked by mail"}
        assert (code, never) == (1, None)
        assert err.strip() == f"heed explain: {a.base_url}/nowhere was never seen by praha-x in stack {STACK}"
        # AND the next round does just that
        run.fire(t + 10, ["feed"])
        run.drain()
        [req] = a.log()
        assert (req.path, req.header("If-None-Match"), req.status) == ("/feed.xml", etag, 304)
        assert b.log() == []
        later = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t + 10))
        skips = {s["url"]: (s["reason"], s["detail"]) for s in _skips(tmp_path / "out")
                 if s.get("round", "").startswith(later)}
        assert skips[private] == ("robots_disallowed", refused["now"]["detail"])
        assert skips[other] == ("blocked_by_operator", "asked by mail")
        # AND a URL given in another spelling is explained under the one the bot requests, saying why
        spelled = a.base_url.replace("http://", "HTTP://") + "/x/../feed.xml?utm_source=mail#top"
        _, same, _ = explain(capsys, spelled, *where, aws=stack_aws(run))
        assert same["url"] == feed and same["found"][0] == fetched["found"][0] and same["written"] == spelled
        assert same["canonical_changes"] == ["scheme lower-cased", "dot segments removed",
                                             "fragment dropped (never sent)", "tracking parameters removed: utm_source"]
        args = build_parser().parse_args(["explain", spelled, *where])
        assert args.func(args, aws=stack_aws(run)) == 0
        said = capsys.readouterr().out
        assert f"url:      {spelled} is requested as {feed}: scheme lower-cased; dot segments" in said
        # the human form says the same in lines
        args = build_parser().parse_args(["explain", feed, *where])
        assert args.func(args, aws=stack_aws(run)) == 0
        text = capsys.readouterr().out
        assert "robots:   robots.txt allows it" in text and "now:      would fetch it now with If-None-Match" in text
    finally:
        run.close()


def ops_block(capsys: pytest.CaptureFixture[str], run: LocalRun, name: str) -> int:
    args = build_parser().parse_args(["block", name, "--stack", STACK, "--reason", "asked by mail"])
    code = args.func(args, aws=stack_aws(run))
    capsys.readouterr()
    return int(code)


def test_explain_on_a_state_dir_matches_the_next_run(sites: tuple[RecordingServer, RecordingServer], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    a, _ = sites
    state = str(tmp_path / "state")
    bot = tmp_path / "bot.yaml"
    bot.write_text("extends: praha-x\npoliteness:\n  min_delay_s: 0.1\ntasks:\n  feed:\n    min_read_interval_s: 0\n")
    sources = tmp_path / "sources.yaml"
    sources.write_text(f"sources:\n  - {{url: '{a.base_url}/feed.xml', kind: feed, id: f1}}\n"
                       f"  - {{url: '{a.base_url}/private/feed.xml', kind: feed, id: f2}}\n")
    argv = ["local", "run", "--bot", str(bot), "--state", state, "--allow-private", "--patience", "3"]
    assert main([*argv, "--sources", str(sources), "--out", str(tmp_path / "out1")]) == 0
    capsys.readouterr()
    time.sleep(0.5)  # the gap after the run's last request to the host (0.1 s and the skew margin) is over
    _, fetched, _ = explain(capsys, a.base_url + "/feed.xml", "--state", state)
    _, refused, _ = explain(capsys, a.base_url + "/private/feed.xml", "--state", state)
    assert fetched["now"]["action"] == "fetch" and fetched["now"]["headers"]["If-None-Match"]
    assert refused["now"]["reason"] == "robots_disallowed"
    # the last run's records of the URL are there too
    assert [h["reason"] for h in refused["history"] if h["record"] == "skip"] == ["robots_disallowed"]
    a.reset_log()
    assert main([*argv, "--out", str(tmp_path / "out2")]) == 0
    capsys.readouterr()
    [req] = a.log()
    assert (req.header("If-None-Match"), req.status) == (fetched["now"]["headers"]["If-None-Match"], 304)
    private = [(s["reason"], s["detail"]) for s in _skips(tmp_path / "out2") if s["url"].endswith("/private/feed.xml")]
    assert private == [("robots_disallowed", refused["now"]["detail"])]


def test_explain_on_a_state_dir_remembers_every_run_not_only_the_last(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a feed of three short items and a bot that opens one article per source per window
    items = "".join(f"<item><title>N{i}</title><link>{{{{base}}}}/n/{i}</link><description>Breve.</description>"
                    "</item>" for i in range(3))
    site = RecordingServer(Site(name="cap", routes={
        "/robots.txt": Route(body="User-agent: *\nAllow: /\n", content_type="text/plain"),
        "/feed.xml": Route(body=f'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>{items}'
                                "</channel></rss>", content_type="application/rss+xml"),
        **{f"/n/{i}": Route(body="<!doctype html><title>N</title><main><p>Testo.</p></main>") for i in range(3)}}),
        ip="127.0.0.69").start()
    try:
        bot = tmp_path / "bot.yaml"
        bot.write_text("extends: aubebot\npoliteness:\n  min_delay_s: 0.1\ntasks:\n  feed:\n    article_followup:\n"
                       "      per_source_per_window: 1\n")
        sources = tmp_path / "sources.yaml"
        sources.write_text(f"sources:\n  - {{url: '{site.base_url}/feed.xml', kind: feed, id: f1}}\n")
        state = str(tmp_path / "state")
        argv = ["local", "run", "--bot", str(bot), "--state", state, "--allow-private", "--patience", "3"]
        assert main([*argv, "--sources", str(sources), "--out", str(tmp_path / "out1")]) == 0
        assert main([*argv, "--out", str(tmp_path / "out2")]) == 0
        capsys.readouterr()
        # WHEN the operator asks about an article the first run found and skipped (the cap)
        capped = site.base_url + "/n/2"
        code, answer, err = explain(capsys, capped, "--state", state)
        # THEN it is not "never seen": the first run's skip is there, with its reason
        assert code == 0, err
        assert [h["reason"] for h in answer["history"] if h["record"] == "skip"][:1] == ["cap_reached"]
    finally:
        site.stop()

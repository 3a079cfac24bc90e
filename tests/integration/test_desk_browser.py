"""The site owners' desk in a real headless Chromium (issue 37's "done when"), as a site owner
uses it, against local sites on both engines (`heed serve --desk`; the DeskFunction's code at a
function URL over the real handlers on moto): three log lines pasted
(one ours, one with a forged User-Agent from another address, one at a time we sent nothing) read
as three verdicts; control of a host proven (the token placed on the site, read by the bot in its
turn); its audit read; a stop asked for; and the next round sends that host nothing while the
others go on, as the sites' logs show. The pages load nothing but themselves, log nothing, fit a
phone; their pictures at 390 and 1280 px are left as artefacts ($HEED_ARTEFACTS) and, with
$HEED_DESK_SCREENSHOTS=DIR, written there for the README (docs/)."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.chromium import Browser, Tab, browser_fixture
from tests.support.desk import DESK_IP, DeskSites, clf, desk_profile
from tests.support.serve import Serve

PHONE, DESKTOP = (390, 844, True), (1280, 800, False)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from browser_fixture()


@pytest.fixture
def artefacts(tmp_path: Path) -> Path:
    where = os.environ.get("HEED_ARTEFACTS")
    out = Path(where) / "desk" if where else tmp_path / "shots"
    out.mkdir(parents=True, exist_ok=True)
    return out


def _port() -> int:
    with socket.socket() as s:
        s.bind((DESK_IP, 0))
        return int(s.getsockname()[1])


def _wait_for(cond: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout_s} s")


def _clean(tab: Tab, desk: str) -> None:
    """Nothing but the desk's own pages loaded, nothing logged, nothing wider than the screen."""
    loaded = [e["request"]["url"] for e in tab.events("Network.requestWillBeSent")]
    assert loaded and all(u.startswith(desk) for u in loaded), loaded
    assert not tab.events("Runtime.consoleAPICalled") and not tab.events("Runtime.exceptionThrown")
    assert not tab.events("Log.entryAdded"), tab.events("Log.entryAdded")
    width = tab.eval("[window.innerWidth, document.documentElement.scrollWidth]")
    assert width[1] <= width[0], f"{width[1]} px wide on a {width[0]} px screen"


def _owner(browser: Browser, root: str, sites: DeskSites, artefacts: Path, timings: dict[str, float], *,
           read_proof: Any = None, told: Any = None) -> float:
    """What a site owner does at the desk at ``root``, in Chromium, and what they read back; the
    moment the stop was confirmed. ``read_proof``: how the crawl comes to read the proof file
    (heed serve does on its own), ``told``: the operator's notices of the actions."""
    a = sites.servers[0]
    feed = next(r for r in a.log() if r.path == "/feed.xml")
    lines = "\n".join([clf(feed),  # ours, as site A's log has it
                       clf(feed, ip="198.51.100.7", ua="Mozilla/5.0 (compatible; AubeBot/0.1)"),  # forged
                       clf(feed, t=feed.t_start - 3 * 86400)])  # a time we sent nothing
    desktop, phone = Tab(browser, *DESKTOP), Tab(browser, *PHONE)
    try:
        # WHEN the site owner pastes three lines of their log
        t0 = time.monotonic()
        for tab, name in ((phone, "phone"), (desktop, "desktop")):
            tab.go(root + "/desk/")
            tab.fill("#host", sites.host(0))
            tab.fill("#lines", lines)
            tab.click('form[action$="/lines"] button')
            # THEN they read three verdicts: ours, not ours, not ours, each with its reasons
            found = tab.eval("[...document.querySelectorAll('[data-verdict]')].map(e => e.dataset.verdict)")
            assert found == ["ours", "not-ours", "not-ours"], found
            reasons = tab.eval("[...document.querySelectorAll('.verdict')].map(e => "
                               "[...e.querySelectorAll('li')].map(li => li.className))")
            assert reasons == [["yes", "yes", "yes"], ["no", "no", "yes"], ["yes", "yes", "no"]], reasons
            assert tab.eval("document.documentElement.lang") == "it"
            tab.screenshot(artefacts / f"desk-verdicts-{name}.png")
            _clean(tab, root)
        timings["three verdicts (both widths)"] = time.monotonic() - t0

        # WHEN they prove control of host A: a token, placed on the site, read by the bot in its turn
        t0 = time.monotonic()
        desktop.fill("#proof-host", "http://" + sites.host(0))
        desktop.click('form[action$="/token"] button')
        token = desktop.eval("document.querySelector('#token').textContent")
        where = desktop.eval("document.querySelector('#place code').textContent")
        assert where == f"http://{sites.host(0)}/.well-known/heed-desk-aubebot.txt"
        desktop.screenshot(artefacts / "desk-token-desktop.png")
        sites.place(0, "/.well-known/heed-desk-aubebot.txt", token + "\n")
        desktop.click('form[action$="/check"] button')
        if read_proof is not None:
            read_proof()
        # (the page waits for the crawl, looking again every few seconds: no script)
        desktop.wait_until("location.pathname.endsWith('/desk/site')", 60)
        timings["proof (token to proven)"] = time.monotonic() - t0
        proof = [r for r in a.log() if r.path.startswith("/.well-known/")]
        assert len(proof) == 1 and proof[0].header("User-Agent") == feed.header("User-Agent")

        # THEN they read their host's audit: every request, the proof's too, and none of the others'
        desktop.wait_until("document.readyState == 'complete' && !!document.querySelector('#audit')", 10)
        paths = desktop.eval("[...document.querySelectorAll('#audit td.path')].map(e => e.textContent)")
        assert sorted(paths) == sorted(r.path for r in a.log()), paths
        text = desktop.eval("document.body.innerText")
        assert sites.host(1).split(":")[0] not in text and sites.host(2).split(":")[0] not in text
        desktop.screenshot(artefacts / "desk-site-desktop.png")
        phone.go(root + "/desk/site")
        phone.screenshot(artefacts / "desk-site-phone.png")
        _clean(phone, root)

        # WHEN they ask for a stop THEN it is confirmed, and the operator told
        t0 = time.monotonic()
        desktop.click('form[action$="/stop"] button')
        done = desktop.eval("document.querySelector('.note.done').textContent")
        assert done.startswith(f"Fermato: non visiteremo più {sites.host(0).split(':')[0]}"), done
        stopped_at = time.time()
        timings["stop"] = time.monotonic() - t0
        if told is not None:
            assert told() == [("stop", sites.host(0).split(":")[0])]
        _clean(desktop, root)
        return stopped_at
    finally:
        desktop.close()
        phone.close()


def _next_round_spares(sites: DeskSites, stopped_at: float, before: int) -> None:
    """The next round sends the stopped host nothing; the others go on (the sites' logs)."""
    a, b, c = sites.servers
    assert [r for r in a.log() if r.t_start > stopped_at] == [] and len(a.log()) == before
    assert [r.path for r in b.log() if r.t_start > stopped_at] == ["/feed.xml"]
    assert [r.path for r in c.log() if r.t_start > stopped_at] == ["/feed.xml"]


def _keep(artefacts: Path, timings: dict[str, float], engine: str) -> None:
    (artefacts / "timings.json").write_text(json.dumps(timings, indent=2), encoding="utf-8")
    print(f"desk in Chromium, {engine}:", {k: round(v, 1) for k, v in timings.items()})
    shots = os.environ.get("HEED_DESK_SCREENSHOTS")
    if shots and engine == "embedded":
        for src, dst in (("desk-verdicts-phone.png", "desk-390.png"), ("desk-site-desktop.png", "desk-1280.png")):
            (Path(shots) / dst).write_bytes((artefacts / src).read_bytes())


def test_a_site_owner_asks_proves_reads_and_stops_in_a_browser_embedded(
        browser: Browser, artefacts: Path, tmp_path: Path) -> None:
    timings: dict[str, float] = {}
    started = time.monotonic()
    sites = DeskSites(n=3, first=0).start()
    bot = desk_profile(tmp_path / "bot.yaml", gap_s=0.5)
    state = tmp_path / "state"
    port = _port()
    serve = Serve(bot, state, args=["--sources", str(sites.sources_file(tmp_path / "sources.yaml")),
                                    "--desk", f"{DESK_IP}:{port}", "--workers", "1"]).start()
    try:
        serve.wait_started()
        # GIVEN a first round of the three sites (robots.txt, the feed, its two articles each)
        _wait_for(lambda: all(len(s.log()) >= 4 for s in sites.servers), 60, "the first round")
        timings["first round"] = time.monotonic() - started

        def told() -> list[tuple[str, str]]:
            return [(e["action"], e["host"]) for e in serve.lines()
                    if e.get("event") == "desk_action" and e.get("level") == "warning"]

        stopped_at = _owner(browser, f"http://{DESK_IP}:{port}", sites, artefacts, timings, told=told)
    finally:
        if serve.proc is not None and serve.proc.poll() is None:
            serve.proc.send_signal(signal.SIGTERM)
            serve.wait(60)
        serve.stop_group()
    try:
        # THEN the next round sends that host nothing, and the others go on (the sites' logs)
        t0 = time.monotonic()
        before = len(sites.servers[0].log())
        proc = subprocess.run([sys.executable, "-m", "heed.cli", "serve", "--bot", str(bot), "--state", str(state),
                               "--once", "--allow-private", "--patience", "2", "--workers", "1"],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        timings["next round"] = time.monotonic() - t0
        _next_round_spares(sites, stopped_at, before)
        skips = [json.loads(line) for line in proc.stdout.splitlines() if '"skip"' in line]
        assert any(s.get("reason") == "blocked_by_operator" and sites.host(0) in s["url"] for s in skips)
    finally:
        sites.stop()
    timings["all"] = time.monotonic() - started
    _keep(artefacts, timings, "embedded")


def test_a_site_owner_asks_proves_reads_and_stops_in_a_browser_aws(
        browser: Browser, artefacts: Path, tmp_path: Path) -> None:
    from heed_core.profile import load_profile
    from heed_core.work import Source

    from heed.local.runtime import LocalRun

    from tests.support.desk import FunctionUrlServer, aws_desk_app

    timings: dict[str, float] = {}
    started = time.monotonic()
    sites = DeskSites(n=3, first=3).start()
    profile = load_profile(str(desk_profile(tmp_path / "bot.yaml", gap_s=0.5)))
    sources = [Source(id=f"feed{i}", url=f"{s.base_url}/feed.xml", kind="feed") for i, s in enumerate(sites.servers)]
    now = time.time()
    # The real scheduler and fetcher handlers on moto; the DeskFunction's code at a function URL
    run = LocalRun(profile, sources, start=now, until=now, out_dir=tmp_path / "out", allow_private=True,
                   patience_s=2.0)
    run.setup()
    server = None
    try:
        session = run._session
        topic = session.client("sns").create_topic(Name="heed-test-alarms")["TopicArn"]
        run.alarm_topic = topic  # type: ignore[attr-defined]  # (the IAM check's)
        sqs = session.client("sqs")
        inbox = sqs.create_queue(QueueName="operator-inbox")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=inbox, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        session.client("sns").subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn)
        run.fire(run.now(), ["feed"])
        run.drain()
        timings["first round"] = time.monotonic() - started
        server = FunctionUrlServer(aws_desk_app(run, topic_arn=topic), DESK_IP).start()

        def told() -> list[tuple[str, str]]:
            msgs = sqs.receive_message(QueueUrl=inbox, MaxNumberOfMessages=10).get("Messages", [])
            return [(m["desk_action"], m["host"]) for m in (json.loads(json.loads(x["Body"])["Message"])
                                                            for x in msgs)]

        stopped_at = _owner(browser, server.root, sites, artefacts, timings, read_proof=run.drain, told=told)
        t0 = time.monotonic()
        before = len(sites.servers[0].log())
        run.fire(run.now(), ["feed"])
        run.drain()
        timings["next round"] = time.monotonic() - t0
        _next_round_spares(sites, stopped_at, before)
    finally:
        if server is not None:
            server.stop()
        run.close()
        sites.stop()
    timings["all"] = time.monotonic() - started
    _keep(artefacts, timings, "aws")

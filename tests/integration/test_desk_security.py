"""The desk's security (issue 37), each promise a test, on one machine: the WSGI application on a
real state directory, and `heed serve --once` as the crawl that reads the proof files from
recording sites on the desk's loopback block. A token for host A opens nothing of host B; a token
proves once; a form without the browser's CSRF token is refused; a script pasted comes back as
text; a paste too big is refused in one line (a 100 MB body by its Content-Length, unread); a
proof on a private address is refused by the desk and by the crawl; no redirect leaves the desk;
clients and hosts are rate-limited."""
from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from heed_core.desk import limits
from heed_core.desk.limits import Limit
from heed_core.desk.proof import proof_path
from heed_core.profile import load_profile

from heed_embedded.state import open_state

from heed.desk.embedded import embedded_desk
from heed.desk.server import DeskServer
from heed.desk.web import DeskApp

from tests.support.desk import DESK_IP, DeskSites, WsgiClient, clf, desk_profile


@pytest.fixture
def world(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """Three sites (A, B, C), the desk's bot, a state a first round crawled, and the desk on it."""
    sites = DeskSites(n=3, first=20).start()
    bot = desk_profile(tmp_path / "bot.yaml", gap_s=0.3)
    state = tmp_path / "state"
    once(bot, state, "--sources", str(sites.sources_file(tmp_path / "sources.yaml")))
    st = open_state(state, create=False)
    profile = load_profile(str(bot))
    logged: list[tuple[str, dict[str, Any]]] = []
    desk = embedded_desk(profile, st.db, log=lambda e, f: logged.append((e, f)), allow_private=True)
    yield {"sites": sites, "bot": bot, "state": state, "db": st.db, "app": DeskApp(desk), "desk": desk,
           "profile": profile, "logged": logged, "tmp": tmp_path}
    st.close()
    sites.stop()


def once(bot: Path, state: Path, *args: str, private: bool = True) -> None:
    """A round of `heed serve --once` (the crawl that reads what the desk queued)."""
    cmd = [sys.executable, "-m", "heed.cli", "serve", "--bot", str(bot), "--state", str(state), "--once",
           "--patience", "2", "--workers", "1", *(["--allow-private"] if private else []), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]


def prove(w: dict[str, Any], c: WsgiClient, site: int, *, place_on: int | None = None) -> tuple[str, str]:
    """The proof of site ``site`` by browser ``c``: a token, the file placed (on ``place_on``), read
    by a round. Returns (the token, the check's answer)."""
    sites: DeskSites = w["sites"]
    csrf = c.csrf()
    status, _, page = c.call("POST", "/desk/token", {"csrf": csrf, "host": "http://" + sites.host(site),
                                                     "method": "http"})
    assert status == 200, page[-600:]
    token = re.search(r'id="token">([^<]+)<', page)
    assert token is not None
    sites.place(site if place_on is None else place_on, proof_path(w["profile"].name), token.group(1) + "\n")
    status, _, page = c.call("POST", "/desk/check", {"csrf": csrf, "token": token.group(1)})
    assert status == 200 and 'http-equiv="refresh"' in page  # asked, waiting for the crawl
    once(w["bot"], w["state"])
    status, headers, page = c.call("GET", f"/desk/check?token={token.group(1)}")
    return token.group(1), f"{status} {headers.get('Location', '')} {page}"


def test_a_token_for_host_a_opens_host_a_alone(world: dict[str, Any]) -> None:
    sites: DeskSites = world["sites"]
    c = WsgiClient(world["app"])
    # GIVEN a token for B whose file sits on A: B is not proven (the bot reads B's own file)
    _, answer = prove(world, c, 1, place_on=0)
    assert answer.startswith("200") and "404" in answer and "heed_desk_site" not in str(c.cookies)
    # WHEN A is proven
    _, answer = prove(world, c, 0)
    assert answer.startswith("303 /desk/site?proven=1")
    status, _, page = c.call("GET", "/desk/site")
    assert status == 200 and sites.host(0).split(":")[0] in page
    # THEN its audit holds A's requests and none of B's
    rows = re.findall(r'<td class="path">([^<]*)</td>', page)
    assert "/feed.xml" in rows and "/.well-known/heed-desk-aubebot.txt" in rows
    assert sites.host(1).split(":")[0] not in page
    # AND B's URLs are not explained to it
    csrf = c.csrf()
    status, _, page = c.call("POST", "/desk/explain", {"csrf": csrf, "url": f"http://{sites.host(1)}/feed.xml"})
    assert status == 200 and 'id="explained"' not in page and "note problem" in page
    status, _, page = c.call("POST", "/desk/explain", {"csrf": csrf, "url": f"http://{sites.host(0)}/feed.xml"})
    assert 'id="explained"' in page and "/feed.xml" in page
    # AND another browser, with no proof of its own, sees nothing of A
    other = WsgiClient(world["app"], client="192.0.2.99")
    assert other.call("GET", "/desk/site")[0] == 403


def test_a_replayed_token_fails(world: dict[str, Any]) -> None:
    c = WsgiClient(world["app"])
    token, answer = prove(world, c, 0)
    assert answer.startswith("303")
    csrf = c.csrf()
    # the same browser, the same token: used once, never again
    status, _, page = c.call("POST", "/desk/check", {"csrf": csrf, "token": token})
    assert "303" not in str(status) and "heed_desk_site" in c.cookies
    assert world["desk"].backend.profile.language == "it" and "già stato usato" in page
    # a browser that read the public file: never its token
    thief = WsgiClient(world["app"], client="198.51.100.66")
    status, _, page = thief.call("POST", "/desk/check", {"csrf": thief.csrf(), "token": token})
    assert status != 303 and "heed_desk_site" not in thief.cookies


@pytest.mark.parametrize("path", ["/desk/lines", "/desk/token", "/desk/check", "/desk/explain", "/desk/stop",
                                  "/desk/slow", "/desk/remove"])
def test_a_forged_form_without_the_csrf_token_fails(world: dict[str, Any], path: str) -> None:
    c = WsgiClient(world["app"])
    c.csrf()  # the browser has its cookie
    form = {"host": "example.org", "lines": "x", "token": "x", "url": "http://x/", "gap": "60", "method": "http"}
    assert c.call("POST", path, form)[0] == 403
    assert c.call("POST", path, {**form, "csrf": "0" * 64})[0] == 403
    # a page of another site posting it: the browser's cookie is not sent (SameSite), so no token matches
    stranger = WsgiClient(world["app"])
    assert stranger.call("POST", path, {**form, "csrf": c.csrf()})[0] == 403
    assert not world["logged"]  # nothing was done


def test_script_in_a_pasted_line_comes_back_escaped(world: dict[str, Any]) -> None:
    c = WsgiClient(world["app"])
    evil = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
    lines = (f"198.51.100.7 2026-12-01T10:00:03Z /a?q={evil} {evil}\n"
             f'{evil} - - [01/Dec/2026:10:00:03 +0000] "GET / HTTP/1.1" 200 1 "-" "x"')
    status, headers, page = c.call("POST", "/desk/lines", {"csrf": c.csrf(), "host": "example.org", "lines": lines,
                                                           "signature": evil})
    assert status == 200
    assert "<script>alert" not in page and "<img src=x" not in page and "onerror=alert(2)>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "script-src" not in headers["Content-Security-Policy"] and "default-src 'none'" in \
        headers["Content-Security-Policy"]
    # a host name with markup is refused, and comes back escaped in the form
    status, _, page = c.call("POST", "/desk/token", {"csrf": c.csrf(), "host": evil, "method": "http"})
    assert status == 400 and "<script>alert" not in page


def test_an_oversized_paste_is_refused_in_one_line(world: dict[str, Any]) -> None:
    c = WsgiClient(world["app"])
    csrf = c.csrf()
    # 10,000 lines: refused whole, one sentence, the paste given back no longer than the limit
    status, _, page = c.call("POST", "/desk/lines", {"csrf": csrf, "host": "example.org",
                                                     "lines": "1.2.3.4 2026-12-01T10:00Z / x\n" * 10_000})
    assert status == 413 and page.count('class="note problem"') == 1 and "data-verdict" not in page
    # a 100 MB body: refused by its Content-Length, not a byte of it read
    status, _, page = c.call("POST", "/desk/lines", raw=b"x" * 10, length=str(100 * 1024 * 1024))
    assert status == 413 and page.count('class="note problem"') == 1
    # and on a real socket: the answer comes without the body ever being sent
    server = DeskServer(world["app"], (DESK_IP, 0)).start()
    try:
        port = server.httpd.server_address[1]
        with socket.create_connection((DESK_IP, port), timeout=10) as s:
            s.sendall(f"POST /desk/lines HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                      f"Content-Length: {100 * 1024 * 1024}\r\n\r\n".encode())
            started = time.monotonic()
            answer = s.recv(65536).decode("utf-8", "replace")
        assert answer.startswith("HTTP/1.0 413") and time.monotonic() - started < 5
    finally:
        server.stop()


def test_a_proof_on_a_private_address_is_refused(world: dict[str, Any], tmp_path: Path) -> None:
    profile = world["profile"]
    # the desk of a bot that never visits private addresses refuses the token
    strict = DeskApp(embedded_desk(profile, world["db"], allow_private=False))
    c = WsgiClient(strict)
    for host in ("127.0.9.125", "http://10.1.2.3", "localhost", "[::1]:8080", "169.254.169.254"):
        status, _, page = c.call("POST", "/desk/token", {"csrf": c.csrf(), "host": host, "method": "http"})
        assert status == 400 and "id=\"token\"" not in page, host
    # and the crawl refuses the read of a proof file queued anyway (its SSRF guard, before connecting)
    lax = WsgiClient(world["app"])
    status, _, page = lax.call("POST", "/desk/token", {"csrf": lax.csrf(), "host": "http://" + world["sites"].host(0),
                                                       "method": "http"})
    token = re.search(r'id="token">([^<]+)<', page)
    assert token is not None
    lax.call("POST", "/desk/check", {"csrf": lax.csrf(), "token": token.group(1)})
    before = len(world["sites"].servers[0].log())
    once(world["bot"], world["state"], private=False)
    status, _, page = lax.call("GET", f"/desk/check?token={token.group(1)}")
    assert status == 200 and "indirizzo privato" in page  # f_private_address
    assert len(world["sites"].servers[0].log()) == before  # not a byte reached the site


@pytest.mark.parametrize("path", ["/", "//evil.example/", "/desk//evil.example/x", "/desk/../evil",
                                  "/desk/check?token=x&next=https://evil.example/",
                                  "/desk/site?next=//evil.example", "/evil.example"])
def test_no_redirect_leaves_the_desk(world: dict[str, Any], path: str) -> None:
    c = WsgiClient(world["app"])
    status, headers, _ = c.call("GET", path)
    location = headers.get("Location")
    assert location is None or (location.startswith("/desk/") and "//" not in location), (status, location)


def test_clients_and_hosts_are_rate_limited(world: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(limits.LIMITS, ("lines", "client"), Limit(3, 3600.0))
    monkeypatch.setitem(limits.LIMITS, ("lines", "host"), Limit(5, 3600.0))
    monkeypatch.setitem(limits.LIMITS, ("fetch", "host"), Limit(2, 3600.0))
    line = {"host": "example.org", "lines": "1.2.3.4 2026-12-01T10:00:03Z / x"}
    first = WsgiClient(world["app"], client="192.0.2.1")
    answers = [first.call("POST", "/desk/lines", {**line, "csrf": first.csrf()})[0] for _ in range(4)]
    assert answers == [200, 200, 200, 429]  # per client
    second = WsgiClient(world["app"], client="192.0.2.2")
    answers = [second.call("POST", "/desk/lines", {**line, "csrf": second.csrf()})[0] for _ in range(3)]
    assert answers == [200, 200, 429]  # per host: 5 for example.org from anyone
    third = WsgiClient(world["app"], client="192.0.2.3")
    assert third.call("POST", "/desk/lines", {**line, "csrf": third.csrf()})[0] == 429
    assert third.call("POST", "/desk/lines", {**line, "host": "example.net", "csrf": third.csrf()})[0] == 200
    # the proof file of one host is read at most so often, whoever asks
    host = "http://" + world["sites"].host(2)
    asked = []
    for n in range(3):
        c = WsgiClient(world["app"], client=f"192.0.2.{50 + n}")
        _, _, page = c.call("POST", "/desk/token", {"csrf": c.csrf(), "host": host, "method": "http"})
        token = re.search(r'id="token">([^<]+)<', page)
        assert token is not None
        asked.append(c.call("POST", "/desk/check", {"csrf": c.csrf(), "token": token.group(1)})[0])
    assert asked == [200, 200, 429]


def test_a_verdict_for_each_of_three_lines(world: dict[str, Any]) -> None:
    sites: DeskSites = world["sites"]
    feed = next(r for r in sites.servers[0].log() if r.path == "/feed.xml")
    lines = "\n".join([clf(feed), clf(feed, ip="198.51.100.7", ua="Mozilla/5.0 (compatible; AubeBot/0.1)"),
                       clf(feed, t=feed.t_start - 7 * 86400)])
    c = WsgiClient(world["app"])
    _, _, page = c.call("POST", "/desk/lines", {"csrf": c.csrf(), "host": sites.host(0), "lines": lines})
    assert re.findall(r'data-verdict="([a-z-]+)"', page) == ["ours", "not-ours", "not-ours"]


def test_stop_slow_and_remove_are_done_recorded_and_told(world: dict[str, Any]) -> None:
    from heed_core.hoststate import HostView

    from heed_embedded.desk import SqliteDeskStore
    from heed_embedded.store import SqliteStore

    c = WsgiClient(world["app"])
    assert prove(world, c, 0)[1].startswith("303")
    csrf = c.csrf()
    host = "http://" + world["sites"].host(0)
    store = SqliteStore(world["db"])
    # slow down: only the gaps offered, each slower than the bot's own
    assert c.call("POST", "/desk/slow", {"csrf": csrf, "gap": "0"})[0] == 400
    status, _, page = c.call("POST", "/desk/slow", {"csrf": csrf, "gap": "60"})
    assert status == 200 and "note done" in page
    authority = host  # http://127.0.9.x:port: the site's authority, as the crawl keys it
    view = HostView.from_record(store.read_host(authority))
    assert view.pacing.floor_s == 60.0
    # (undoing it is the operator's: heed unslow)
    from heed.cli import main

    name = world["sites"].host(0).split(":")[0]
    assert main(["unslow", name, "--state", str(world["state"])]) == 0
    assert HostView.from_record(store.read_host(authority)).pacing.floor_s == 0.0
    assert main(["slow", name, "60", "--state", str(world["state"])]) == 0
    assert HostView.from_record(store.read_host(authority)).pacing.floor_s == 60.0
    # stop: on the block list, its source the site owner
    status, _, page = c.call("POST", "/desk/stop", {"csrf": csrf})
    assert status == 200 and "note done" in page
    assert [(d, r.split(":")[0]) for d, r, _ in store.block_list()] == [(name, "site owner")]
    # remove: everything kept of the host deleted
    status, _, page = c.call("POST", "/desk/remove", {"csrf": csrf})
    assert status == 200 and "note done" in page
    assert not [sk for sk, _ in store.host_items(authority) if sk.startswith("U#")]
    # each recorded, and the operator told
    kinds = [a.kind for a in SqliteDeskStore(world["db"]).actions()]
    assert kinds == ["remove", "stop", "slow"]
    assert [f["action"] for e, f in world["logged"] if e == "desk_action"] == ["slow", "stop", "remove"]


def test_a_dns_txt_record_proves_a_host_where_a_resolver_is_configured(world: dict[str, Any]) -> None:
    from tests.support.desk import TxtServer

    dns = TxtServer("127.0.9.139", {}).start()
    try:
        desk = embedded_desk(world["profile"], world["db"], allow_private=True, resolver=dns.address)
        c = WsgiClient(DeskApp(desk))
        _, _, home = c.call("GET", "/desk/")
        assert 'value="dns"' in home  # offered only where a resolver is configured
        csrf = c.csrf()
        _, _, page = c.call("POST", "/desk/token", {"csrf": csrf, "host": "example.org", "method": "dns"})
        value = re.search(r'id="token">heed-desk=([^<]+)<', page)
        assert value is not None and "_heed-desk-aubebot.example.org" in page
        # not there yet: says so; a wrong value: says so; the right one: proven, the site opens
        status, _, page = c.call("POST", "/desk/check", {"csrf": csrf, "token": value.group(1)})
        assert status == 200 and "_heed-desk-aubebot.example.org" in page and "note problem" in page
        dns.records["_heed-desk-aubebot.example.org"] = ["v=spf1 -all", "heed-desk=someone-else"]
        assert "note problem" in c.call("POST", "/desk/check", {"csrf": csrf, "token": value.group(1)})[2]
        dns.records["_heed-desk-aubebot.example.org"] = ["heed-desk=" + value.group(1)]
        status, headers, _ = c.call("POST", "/desk/check", {"csrf": csrf, "token": value.group(1)})
        assert (status, headers.get("Location")) == (303, "/desk/site?proven=1")
        assert "example.org" in c.call("GET", "/desk/site")[2]
    finally:
        dns.stop()
    # without a resolver, no DNS way is offered, and one asked for is refused
    c = WsgiClient(world["app"])
    assert 'value="dns"' not in c.call("GET", "/desk/")[2]
    status, _, page = c.call("POST", "/desk/token", {"csrf": c.csrf(), "host": "example.org", "method": "dns"})
    assert status == 400 and 'id="token"' not in page


def test_a_pasted_signature_is_checked_against_our_key(world: dict[str, Any], tmp_path: Path) -> None:
    from heed_core.identity.keys import generate_private_pem, private_key_from_pem
    from heed_core.identity.signing import WebBotAuthSigner
    from heed_core.ports import FakeClock

    pem = tmp_path / "bot.pem"
    pem.write_bytes(generate_private_pem())
    pem.chmod(0o600)
    agent = "https://aube.news/.well-known/http-message-signatures-directory"
    signing = desk_profile(tmp_path / "signing.yaml", identity={"web_bot_auth": {
        "enabled": True, "key_file": str(pem), "signature_agent": agent}})
    desk = embedded_desk(load_profile(str(signing)), world["db"], allow_private=True)
    c = WsgiClient(DeskApp(desk))
    sites: DeskSites = world["sites"]
    feed = next(r for r in sites.servers[0].log() if r.path == "/feed.xml")
    signer = WebBotAuthSigner(private_key_from_pem(pem.read_bytes()), signature_agent=agent,
                              clock=FakeClock(feed.t_start - 0.5))
    signed = signer.signature_headers("GET", f"http://{sites.host(0)}/feed.xml")
    pasted = "\n".join(f"{k}: {v}" for k, v in signed.items())

    def verdict(signature: str) -> list[str]:
        _, _, page = c.call("POST", "/desk/lines", {"csrf": c.csrf(), "host": sites.host(0), "lines": clf(feed),
                                                    "signature": signature})
        return re.findall(r'<li class="(yes|no|none)">', page)

    assert verdict(pasted) == ["yes", "yes", "yes", "yes"]  # address, user agent, request, signature
    forged = pasted.replace(signed["Signature"], signed["Signature"][:-6] + "AAAAA=")
    assert verdict(forged)[-1] == "no"
    other = WebBotAuthSigner(private_key_from_pem(generate_private_pem()), signature_agent=agent,
                             clock=FakeClock(feed.t_start))
    assert verdict("\n".join(f"{k}: {v}" for k, v in other.signature_headers(
        "GET", f"http://{sites.host(0)}/feed.xml").items()))[-1] == "no"  # another key: not ours


def test_heed_desk_serves_a_state_alone_and_lists_what_was_asked(world: dict[str, Any],
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    import argparse
    import threading
    import urllib.request

    from heed.cli import main
    from heed.desk import cli

    c = WsgiClient(world["app"])
    assert prove(world, c, 0)[1].startswith("303")
    c.call("POST", "/desk/stop", {"csrf": c.csrf()})
    capsys.readouterr()
    assert main(["desk", "--state", str(world["state"]), "--actions", "--json"]) == 0
    [line] = capsys.readouterr().out.splitlines()
    assert json.loads(line)["kind"] == "stop"
    stop = threading.Event()
    with socket.socket() as s:
        s.bind((DESK_IP, 0))
        port = s.getsockname()[1]
    args = argparse.Namespace(state=str(world["state"]), bot=str(world["bot"]), listen=f"{DESK_IP}:{port}",
                              settings=None, allow_private=True, actions=False, json=False)
    serving = threading.Thread(target=cli.cmd_desk, args=(args,), kwargs={"stop": stop})
    serving.start()
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with urllib.request.urlopen(f"http://{DESK_IP}:{port}/desk/", timeout=5) as resp:
                    assert resp.status == 200 and b"lo sportello" in resp.read()
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
    finally:
        stop.set()
        serving.join(10)


def test_the_settings_turn_the_desk_on_or_off_for_an_installation(tmp_path: Path) -> None:
    from heed_core.errors import ConfigError

    from heed.serve_cli import desk_address
    from heed.settings import SettingsError, load_settings

    profile = load_profile(str(desk_profile(tmp_path / "bot.yaml")))
    off = tmp_path / "off.yaml"
    off.write_text("desk: false\n", encoding="utf-8")
    on = tmp_path / "on.yaml"
    on.write_text("desk:\n  listen: 127.0.0.1:8081\n  forwarded: true\n  resolver: 127.0.0.53:53\n", encoding="utf-8")
    assert desk_address(None, load_settings(None), profile) is None  # on, but nowhere to listen
    assert desk_address("127.0.0.1:8080", load_settings(None), profile) == ("127.0.0.1", 8080)
    settings = load_settings(str(on))
    assert desk_address(None, settings, profile) == ("127.0.0.1", 8081)
    assert settings.desk_forwarded and settings.desk_resolver == "127.0.0.53:53"
    with pytest.raises(ConfigError, match="turn the desk off"):
        desk_address("127.0.0.1:8080", load_settings(str(off)), profile)
    bad = tmp_path / "bad.yaml"
    bad.write_text("desk:\n  listen: 8080\n  enabled: maybe\n", encoding="utf-8")
    with pytest.raises(SettingsError, match="desk.enabled"):
        load_settings(str(bad))


def test_the_desk_never_sends_the_bot_to_a_site_it_has_not_visited(world: dict[str, Any]) -> None:
    stranger = DeskSites(n=1, first=35).start()
    try:
        c = WsgiClient(world["app"])
        status, _, page = c.call("POST", "/desk/token", {"csrf": c.csrf(), "host": "http://" + stranger.host(0),
                                                         "method": "http"})
        assert status == 400 and 'id="token"' not in page and "mai visitato" in page
        once(world["bot"], world["state"])
        assert stranger.servers[0].log() == []  # not a request: not robots.txt, not a proof file
    finally:
        stranger.stop()

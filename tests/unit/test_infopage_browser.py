"""Every info page in headless Chromium, at a phone's width and a desktop's: it loads nothing but
itself, logs no console message or error, fits the phone without sideways scrolling, and leaves
its screenshots as artefacts (in $HEED_ARTEFACTS, default a temporary folder).

Chromium is Debian's (`scripts/install-chromium.sh` installs it when /usr/bin/chromium is missing);
the test talks to it over the DevTools protocol on a pipe (--remote-debugging-pipe), so it needs
nothing but the standard library and one browser process for all pages.
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from heed_core.profile import BUILTIN_BOTS, load_profile

from heed.infopage import write_info_page
from heed.pages.content import page_path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
WIDTHS = {"phone": (390, 844, True), "desktop": (1280, 800, False)}
_TIMEOUT_S = 30.0


def _chromium() -> str | None:
    if not (os.path.exists(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        subprocess.run(["bash", str(ROOT / "scripts" / "install-chromium.sh")], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=900)
    if os.path.exists(CHROMIUM) and os.access(CHROMIUM, os.X_OK):
        return CHROMIUM
    return shutil.which("chromium")


class Browser:
    """Chromium with the DevTools protocol on fds 3 (commands in) and 4 (replies and events out),
    each message ending in a NUL byte."""

    def __init__(self, binary: str, profile_dir: str) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def fds() -> None:  # in the child, before exec: the pipe ends become fds 3 and 4
            high_r, high_w = (fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_child_r, from_child_w))
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
             "--disable-extensions", "--mute-audio", f"--user-data-dir={profile_dir}",
             "--remote-debugging-pipe", "about:blank"],
            preexec_fn=fds, pass_fds=(3, 4),  # kept open after preexec_fn (close_fds runs after it)
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_child], [], [], left)[0]:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise EOFError("Chromium closed the DevTools pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        msg: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + _TIMEOUT_S
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, session: str) -> None:
        deadline = time.monotonic() + _TIMEOUT_S
        while not any(e.get("method") == method and e.get("sessionId") == session for e in self.events):
            self.events.append(self._read(deadline))

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (OSError, EOFError, TimeoutError, RuntimeError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_child)
        os.close(self._from_child)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    binary = _chromium()
    if binary is None:
        pytest.skip(f"no Chromium at {CHROMIUM} and scripts/install-chromium.sh could not install it "
                    "(apt-get install chromium needs root and the Debian mirrors)")
    with tempfile.TemporaryDirectory(prefix="heed-chromium-") as profile_dir:
        b = Browser(binary, profile_dir)
        try:
            b.call("Browser.getVersion")
        except (EOFError, TimeoutError) as exc:
            b.close()
            pytest.skip(f"{binary} does not start headless here ({exc})")
        yield b
        b.close()


@pytest.fixture(scope="module")
def artefacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = os.environ.get("HEED_ARTEFACTS")
    out = Path(where) / "info-pages" if where else tmp_path_factory.mktemp("info-pages")
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("info-site")
    for bot in BUILTIN_BOTS:
        write_info_page(load_profile(bot), out)
    return out


def _load(b: Browser, url: str, width: int, height: int, mobile: bool) -> tuple[str, dict[str, Any]]:
    target = b.call("Target.createTarget", url="about:blank")["targetId"]
    session = b.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        b.call(f"{domain}.enable", session)
    b.call("Emulation.setDeviceMetricsOverride", session, width=width, height=height,
           deviceScaleFactor=1, mobile=mobile)
    b.events.clear()
    b.call("Page.navigate", session, url=url)
    b.wait_for("Page.loadEventFired", session)
    probe = ("JSON.stringify({inner: window.innerWidth, scroll: document.documentElement.scrollWidth,"
             " height: document.documentElement.scrollHeight,"
             " font: parseFloat(getComputedStyle(document.body).fontSize),"
             " lang: document.documentElement.lang, h1: document.querySelectorAll('h1').length})")
    found = json.loads(b.call("Runtime.evaluate", session, expression=probe, returnByValue=True)["result"]["value"])
    found["session"], found["target"] = session, target
    return session, found


@pytest.mark.parametrize("bot", BUILTIN_BOTS)
@pytest.mark.parametrize("width", list(WIDTHS))
def test_info_pages_load_cleanly_and_read_on_a_phone(browser: Browser, site: Path, artefacts: Path,
                                                     bot: str, width: str) -> None:
    p = load_profile(bot)
    host = site / p.info_url.split("/")[2]
    w, h, mobile = WIDTHS[width]
    for lang in (p.language, "en"):
        path = page_path(p, lang).strip("/")
        file = host / (path if path.endswith(".html") else f"{path}/index.html")
        url = file.as_uri()
        session, found = _load(browser, url, w, h, mobile)
        events = [e for e in browser.events if e.get("sessionId") == session]
        console = [e["params"] for e in events if e.get("method") in (
            "Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded")]
        loaded = [e["params"]["request"]["url"] for e in events if e.get("method") == "Network.requestWillBeSent"]
        shot = browser.call("Page.captureScreenshot", session, format="png", captureBeyondViewport=True,
                            clip={"x": 0, "y": 0, "width": w, "height": found["height"], "scale": 1})
        name = f"{bot}-{lang}-{width}"
        (artefacts / f"{name}.png").write_bytes(base64.b64decode(shot["data"]))
        (artefacts / f"{name}.json").write_text(json.dumps({"url": url, "probe": found, "console": console,
                                                            "requests": loaded}, indent=2), encoding="utf-8")
        browser.call("Target.closeTarget", targetId=found["target"])
        # THEN nothing but the page itself loads, and nothing is logged
        assert loaded == [url], loaded
        assert console == [], console
        assert found["lang"] == lang and found["h1"] == 1
        # ... the viewport meta works (a phone lays it out at its own width), nothing scrolls sideways
        assert found["inner"] == w
        assert found["scroll"] <= found["inner"], f"{name}: {found['scroll']} px wide on a {w} px screen"
        assert found["font"] >= 16

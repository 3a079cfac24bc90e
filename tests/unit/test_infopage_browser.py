"""Every info page in headless Chromium, at a phone's width and a desktop's: it loads nothing but
itself, logs no console message or error, fits the phone without sideways scrolling, and leaves
its screenshots as artefacts (in $HEED_ARTEFACTS, default a temporary folder).

Chromium is Debian's (`scripts/install-chromium.sh` installs it when /usr/bin/chromium is missing);
the test talks to it over the DevTools protocol on a pipe (--remote-debugging-pipe), so it needs
nothing but the standard library and one browser process for all pages.
"""
from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from heed_core.profile import BUILTIN_BOTS, load_profile

from heed.infopage import write_info_page
from heed.pages.content import page_path

from tests.support.chromium import Browser, browser_fixture

WIDTHS = {"phone": (390, 844, True), "desktop": (1280, 800, False)}


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from browser_fixture()


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

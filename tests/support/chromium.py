"""Headless Chromium for the tests that look at pages as a reader does (the info pages, the
desk): Debian's own browser (`scripts/install-chromium.sh` installs it when /usr/bin/chromium is
missing), driven over the DevTools protocol on a pipe (--remote-debugging-pipe), with nothing but
the standard library and one browser process for all pages."""
from __future__ import annotations

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

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
_TIMEOUT_S = 30.0

__all__ = ["CHROMIUM", "Browser", "Tab", "browser_fixture", "chromium"]


def chromium() -> str | None:
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


def browser_fixture() -> Iterator[Browser]:
    """One headless Chromium for a module's tests (skips them where none can start)."""
    binary = chromium()
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


class Tab:
    """One page of ``browser`` at a width (a phone's or a desktop's): navigate, click and wait for
    the next page, read it with an expression, and take its picture."""

    def __init__(self, browser: Browser, width: int, height: int, mobile: bool) -> None:
        self.b = browser
        self.width = width
        self.target = browser.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = browser.call("Target.attachToTarget", targetId=self.target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.call(f"{domain}.enable", self.session)
        browser.call("Emulation.setDeviceMetricsOverride", self.session, width=width, height=height,
                     deviceScaleFactor=1, mobile=mobile)

    def _forget(self) -> None:
        self.b.events[:] = [e for e in self.b.events if e.get("sessionId") != self.session]

    def events(self, method: str) -> list[dict[str, Any]]:
        return [e["params"] for e in self.b.events if e.get("sessionId") == self.session and e.get("method") == method]

    def go(self, url: str) -> None:
        self._forget()
        self.b.call("Page.navigate", self.session, url=url)
        self.b.wait_for("Page.loadEventFired", self.session)

    def eval(self, expression: str) -> Any:
        found = self.b.call("Runtime.evaluate", self.session, expression=expression, returnByValue=True)
        if "exceptionDetails" in found:
            raise RuntimeError(f"{expression}: {found['exceptionDetails']}")
        return found["result"].get("value")

    def fill(self, selector: str, value: str) -> None:
        self.eval(f"document.querySelector({json.dumps(selector)}).value = {json.dumps(value)}")

    def click(self, selector: str) -> None:
        """Click and wait for the page it leads to (a form's answer)."""
        self._forget()
        self.eval(f"document.querySelector({json.dumps(selector)}).click()")
        self.b.wait_for("Page.loadEventFired", self.session)

    def wait_until(self, expression: str, timeout_s: float = 60.0) -> None:
        """Until ``expression`` is true on the page (which may reload itself meanwhile)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if self.eval(expression):
                    return
            except RuntimeError:
                pass  # a page going away under the expression
            time.sleep(0.25)
        raise TimeoutError(f"{expression} never held in {timeout_s:g} s")

    def screenshot(self, path: Path) -> None:
        self.b.call("Page.bringToFront", self.session)  # a tab behind another draws no frame to take
        height = int(self.eval("document.documentElement.scrollHeight"))
        shot = self.b.call("Page.captureScreenshot", self.session, format="png", captureBeyondViewport=True,
                           clip={"x": 0, "y": 0, "width": self.width, "height": height, "scale": 1})
        path.parent.mkdir(parents=True, exist_ok=True)
        import base64

        path.write_bytes(base64.b64decode(shot["data"]))

    def close(self) -> None:
        self.b.call("Target.closeTarget", targetId=self.target)

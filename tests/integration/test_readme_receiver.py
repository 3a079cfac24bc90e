"""The README's receiver (Getting the results) as a newcomer copies it: the python block run as it
is, a real delivery posted to it by the webhook's own poster, verified with the reference library;
a repeat taken once, a tampered body refused."""
from __future__ import annotations

import base64
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

from heed_core.adapters.webhook_post import WebhookPoster
from heed_core.webhook import parse_secret, signed_headers

ROOT = Path(__file__).resolve().parents[2]
SECRET = "whsec_" + base64.b64encode(b"readme-receiver-key-of-32-bytes!").decode()


def _receiver_code() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Getting the results", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    return code


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_readme_receiver_verifies_takes_once_and_refuses_a_forgery(tmp_path: Path) -> None:
    # GIVEN the README's receiver, run as it is written
    script = tmp_path / "receiver.py"
    script.write_text(_receiver_code(), encoding="utf-8")
    port = _free_port()
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env={**os.environ, "HEED_WEBHOOK_SECRET": SECRET, "PORT": str(port)}, text=True)
    try:
        url = f"http://127.0.0.1:{port}/hook"
        post, key = WebhookPoster(), parse_secret(SECRET)
        env = {"specversion": "1.0", "id": "r1", "type": "heed.item.found", "subject": "https://x.example/a",
               "data": {"title": "A"}}
        body = json.dumps(env).encode()
        deadline = time.monotonic() + 20
        while True:  # until it listens
            answer = post(url, body, signed_headers(key, "r1", int(time.time()), body))
            if answer.status is not None or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        # WHEN a delivery, its repeat, and a forged body come
        again = post(url, body, signed_headers(key, "r1", int(time.time()), body))
        forged = post(url, body.replace(b'"A"', b'"B"'), signed_headers(key, "r1", int(time.time()), body))
        # THEN the first two are 204, the forgery 400, and the result is taken once
        assert (answer.status, again.status, forged.status) == (204, 204, 400)
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert out.splitlines() == ["heed.item.found https://x.example/a A"]

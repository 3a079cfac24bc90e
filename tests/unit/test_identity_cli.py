"""Issue 13 commands: heed identity keygen / show / verify work, and every user mistake is one line,
a non-zero exit and no traceback."""
from __future__ import annotations

import io
import json
import os
import stat

import pytest

from heed_core.identity.directory import key_directory, signed_directory
from heed_core.identity.keys import read_key_file
from heed_core.identity.signing import WebBotAuthSigner
from heed_core.ports import FakeClock

from heed.cli import main

AGENT = "https://aube.news/.well-known/http-message-signatures-directory"
T = 1_750_000_000  # in the past: "now" finds its signatures expired


@pytest.fixture()
def heed(monkeypatch, capsys):
    def run(*argv: str, stdin: str = "") -> tuple[int, str, str]:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
        code = main(list(argv))  # as a user runs it: the errors told by heed.cli.main
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture()
def bot(tmp_path, heed, monkeypatch):
    """A profile file extending aubebot, with a fresh key."""
    monkeypatch.chdir(tmp_path)
    assert heed("identity", "keygen", "--out", "aube.pem")[0] == 0
    (tmp_path / "aube.yaml").write_text(
        "extends: aubebot\nusage: [search]\nidentity:\n  web_bot_auth:\n    enabled: true\n"
        f"    key_file: aube.pem\n    signature_agent: {AGENT}\n", encoding="utf-8")
    return tmp_path / "aube.yaml"


def one_line_error(code: int, err: str) -> None:
    assert code == 2
    assert err.startswith("heed identity ") and err.count("\n") == 1 and "Traceback" not in err


def captured(key, url="https://www.example.nl/subsidies") -> dict:
    signer = WebBotAuthSigner(key, signature_agent=AGENT, clock=FakeClock(T))
    return {"url": url, "headers": {"User-Agent": "AubeBot/0.1", **signer.signature_headers("GET", url)}}


# --- keygen -----------------------------------------------------------------------------------


def test_keygen_writes_a_0600_pem_and_refuses_to_overwrite(tmp_path, heed):
    out = tmp_path / "k.pem"
    code, stdout, _ = heed("identity", "keygen", "--out", str(out))
    assert code == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert out.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    printed = json.loads(stdout)
    assert printed["keyid"] == printed["jwk"]["kid"] and "d" not in printed["jwk"]  # no private part
    before = out.read_bytes()
    code, _, err = heed("identity", "keygen", "--out", str(out))
    one_line_error(code, err)
    assert "refusing to overwrite" in err and out.read_bytes() == before


def test_keygen_gives_0600_whatever_the_umask(tmp_path, heed):
    old = os.umask(0o277)
    try:
        assert heed("identity", "keygen", "--out", str(tmp_path / "k.pem"))[0] == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "k.pem").stat().st_mode) == 0o600


def test_keygen_into_a_missing_folder_is_one_line(tmp_path, heed):
    one_line_error(*heed("identity", "keygen", "--out", str(tmp_path / "no" / "k.pem"))[::2])


# --- show -------------------------------------------------------------------------------------


def test_show_prints_the_directory_as_served(bot, heed):
    code, out, _ = heed("identity", "show", "--bot", str(bot))
    assert code == 0
    assert out.encode() == key_directory([read_key_file(bot.parent / "aube.pem")]) + b"\n"
    assert json.loads(out)["keys"][0]["kty"] == "OKP"


@pytest.mark.parametrize("bot_ref, says", [("aubebot", "has neither key_file nor key_secret"),
                                           ("nobot", "no such profile file")])
def test_show_without_a_key_or_a_profile_is_one_line(heed, bot_ref, says):
    code, _, err = heed("identity", "show", "--bot", bot_ref)
    one_line_error(code, err)
    assert says in err


def test_a_key_file_others_can_read_is_refused(bot, heed):
    (bot.parent / "aube.pem").chmod(0o644)
    code, _, err = heed("identity", "show", "--bot", str(bot))
    one_line_error(code, err)
    assert "chmod 600 aube.pem" in err


# --- verify -----------------------------------------------------------------------------------


def test_verify_a_captured_request(bot, heed):
    request = captured(read_key_file(bot.parent / "aube.pem"))
    code, out, _ = heed("identity", "verify", "--bot", str(bot), "--at", str(T + 10), stdin=json.dumps(request))
    assert (code, out.split(":")[0]) == (0, "valid")
    # the same, as an authority and a list of header pairs, at an ISO time
    request = {"authority": "www.example.nl", "headers": [[k, v] for k, v in request["headers"].items()]}
    code, out, _ = heed("identity", "verify", "--bot", str(bot), "--at", "2025-06-15T15:07:00Z",
                        stdin=json.dumps(request))
    assert code == 0, out


def test_verify_says_why_not_with_exit_1(bot, heed):
    request = captured(read_key_file(bot.parent / "aube.pem"))
    tampered = {**request, "url": "https://evil.example/"}
    code, out, _ = heed("identity", "verify", "--bot", str(bot), "--at", str(T), stdin=json.dumps(tampered))
    assert code == 1 and out.startswith("invalid (bad_signature):")
    code, out, _ = heed("identity", "verify", "--bot", str(bot), stdin=json.dumps(request))  # now: long expired
    assert code == 1 and out.startswith("invalid (expired):")
    unsigned = {"url": request["url"], "headers": {"User-Agent": "AubeBot/0.1"}}
    code, out, _ = heed("identity", "verify", "--bot", str(bot), stdin=json.dumps(unsigned))
    assert code == 1 and out.startswith("invalid (unsigned):")


def test_verify_against_a_published_directory(bot, heed, tmp_path):
    key = read_key_file(bot.parent / "aube.pem")
    doc = signed_directory([key], url=AGENT, now=T)
    (tmp_path / "jwks.json").write_bytes(doc.body)
    code, out, _ = heed("identity", "verify", "--bot", str(bot), "--directory", str(tmp_path / "jwks.json"),
                        "--at", str(T), stdin=json.dumps(captured(key)))
    assert code == 0, out


@pytest.mark.parametrize("stdin, says", [
    ("", "stdin is empty"),
    ("{not json", "stdin is not JSON"),
    ("[1, 2]", "must be a JSON object"),
    ('{"headers": {}}', 'needs "authority"'),
    ('{"authority": "a.example", "headers": {"x": 1}}', '"headers" must be'),
    ('{"authority": "a.example", "method": "GE T", "headers": {}}', "is not an HTTP method"),
])
def test_verify_refuses_bad_input_in_one_line(bot, heed, stdin, says):
    code, _, err = heed("identity", "verify", "--bot", str(bot), stdin=stdin)
    one_line_error(code, err)
    assert says in err


def test_verify_refuses_a_bad_time_or_directory_in_one_line(bot, heed, tmp_path):
    code, _, err = heed("identity", "verify", "--bot", str(bot), "--at", "yesterday", stdin="{}")
    one_line_error(code, err)
    (tmp_path / "bad.json").write_text('{"keys": []}')
    code, _, err = heed("identity", "verify", "--bot", str(bot), "--directory", str(tmp_path / "bad.json"), stdin="{}")
    one_line_error(code, err)
    assert "holds no Ed25519 key" in err

"""`heed service unit --bot FILE --state DIR [--user heed]` (issue 34): a hardened systemd unit for
heed serve, every path absolute, the stop timeout above the grace it passes on, checked by
`systemd-analyze verify` where systemd is installed; every mistake one line, exit 2."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from heed.cli import main

SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
needs_systemd = pytest.mark.skipif(SYSTEMD_ANALYZE is None, reason="systemd-analyze is not installed here")


@pytest.fixture(autouse=True)
def python_in_usr(monkeypatch: pytest.MonkeyPatch) -> None:
    # Python where a VPS has it (this machine's may live under /root: see the test of that below)
    monkeypatch.setattr(sys, "base_prefix", "/usr")


@pytest.fixture
def profile(tmp_path: Path) -> Path:
    path = tmp_path / "etc" / "mybot.yaml"
    path.parent.mkdir()
    path.write_text("extends: aubebot\nname: mybot\n", encoding="utf-8")
    return path


def _unit(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, dict[str, list[str]]]:
    code = main(["service", "unit", *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    keys: dict[str, list[str]] = {}
    for line in out.splitlines():
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            keys.setdefault(key, []).append(value)
    return out, keys


def _heed() -> str:
    return str((Path(sys.executable).parent / "heed").resolve())


def test_the_unit_runs_heed_serve_as_its_own_user_in_its_state_directory(
        profile: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # WHEN a unit is asked for a profile of one's own and a state under /var/lib
    text, keys = _unit(["--bot", str(profile), "--state", "/var/lib/heed/mybot"], capsys)
    # THEN it runs the installed heed, by absolute paths, as the user heed
    assert keys["ExecStart"] == [f"{_heed()} serve --bot {profile} --state /var/lib/heed/mybot --grace 10"]
    assert keys["User"] == ["heed"] and keys["Group"] == ["heed"]
    # AND its state is systemd's StateDirectory (/var/lib/heed/mybot), the one place it may write
    assert keys["StateDirectory"] == ["heed/mybot"] and keys["ReadWritePaths"] == ["/var/lib/heed/mybot"]
    assert keys["ProtectSystem"] == ["strict"] and keys["ProtectHome"] == ["yes"] and keys["PrivateTmp"] == ["yes"]
    assert keys["NoNewPrivileges"] == ["yes"] and keys["CapabilityBoundingSet"] == [""]
    assert keys["RestrictAddressFamilies"] == ["AF_INET AF_INET6 AF_UNIX"]
    assert keys["MemoryDenyWriteExecute"] == ["yes"] and keys["LockPersonality"] == ["yes"]
    # AND it stops as heed serve stops: SIGTERM, the grace and a margin, restarted after a failure only
    assert keys["KillSignal"] == ["SIGTERM"] and int(keys["TimeoutStopSec"][0]) > 10
    assert keys["Restart"] == ["on-failure"] and keys["RestartPreventExitStatus"] == ["2"]
    assert keys["Environment"] == ["PYTHONUNBUFFERED=1"]
    assert keys["After"] == ["network-online.target"] and keys["Wants"] == ["network-online.target"]
    assert keys["WantedBy"] == ["multi-user.target"]
    assert text.startswith("# /etc/systemd/system/heed-mybot.service")


def test_the_stop_timeout_is_read_from_the_grace_it_passes_on(profile: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    _, keys = _unit(["--bot", str(profile), "--state", "/var/lib/heed/mybot", "--grace", "45.5"], capsys)
    assert keys["ExecStart"][0].endswith("--grace 45.5")
    assert int(keys["TimeoutStopSec"][0]) > 45.5


def test_webhook_settings_and_quiet_are_passed_on_the_secret_as_a_credential(
        profile: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    secret = tmp_path / "etc" / "webhook.secret"
    secret.write_text("whsec_" + "A" * 32 + "\n", encoding="utf-8")
    settings = tmp_path / "etc" / "settings.yaml"
    settings.write_text("{}\n", encoding="utf-8")
    _, keys = _unit(["--bot", str(profile), "--state", "/srv/heed/mybot", "--user", "crawler", "--quiet",
                     "--webhook", "https://app.example.org/heed", "--webhook-secret-file", str(secret),
                     "--settings", str(settings)], capsys)
    assert keys["ExecStart"] == [f"{_heed()} serve --bot {profile} --state /srv/heed/mybot --grace 10 --quiet "
                                 "--webhook https://app.example.org/heed --webhook-secret-file "
                                 f"${{CREDENTIALS_DIRECTORY}}/webhook-secret --settings {settings}"]
    assert keys["LoadCredential"] == [f"webhook-secret:{secret}"]
    assert keys["User"] == ["crawler"]
    # a state outside /var/lib: no StateDirectory, the folder named writable (the operator makes it)
    assert "StateDirectory" not in keys and keys["ReadWritePaths"] == ["/srv/heed/mybot"]


def test_a_built_in_bot_is_named_as_such(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["service", "unit", "--bot", "aubebot", "--state", "/var/lib/heed/aubebot", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    [line] = out.splitlines()
    answer = json.loads(line)
    assert answer["name"] == "heed-aubebot.service" and answer["path"] == "/etc/systemd/system/heed-aubebot.service"
    assert f"ExecStart={_heed()} serve --bot aubebot --state /var/lib/heed/aubebot --grace 10\n" in answer["unit"]


def _verify(unit: Path) -> subprocess.CompletedProcess[str]:
    assert SYSTEMD_ANALYZE is not None
    # --man=no: no man page lookups; the unit is read from its file as is. verify checks every key
    # and value, that ExecStart names an executable, and the [Install] section; it does not ask
    # whether the user exists (a User= of a user not made yet is what an install looks like).
    return subprocess.run([SYSTEMD_ANALYZE, "verify", "--man=no", "--generators=no", str(unit)],
                          capture_output=True, text=True, timeout=60)


# What verify may say of a user this machine does not have (some systemd versions check): nothing else.
_USER_NOT_HERE = re.compile(r"(user|group) .*(not found|does not exist|Failed to resolve)", re.IGNORECASE)


@needs_systemd
@pytest.mark.parametrize("extra", [
    [],
    ["--state", "/srv/heed/mybot", "--user", "crawler", "--grace", "120", "--quiet"],
    ["--webhook", "https://app.example.org/heed", "--webhook-secret-file", "{secret}"],
], ids=["var-lib", "elsewhere", "webhook"])
def test_systemd_analyze_verify_finds_nothing_to_say(extra: list[str], profile: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    secret = tmp_path / "etc" / "webhook.secret"
    secret.write_text("whsec_" + "A" * 32 + "\n", encoding="utf-8")
    argv = ["--bot", str(profile), "--state", "/var/lib/heed/mybot", *[a.format(secret=secret) for a in extra]]
    text, _ = _unit(argv, capsys)
    unit = tmp_path / "heed-mybot.service"
    unit.write_text(text, encoding="utf-8")
    proc = _verify(unit)
    said = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert proc.returncode == 0, said
    assert [line for line in said if not _USER_NOT_HERE.search(line)] == [], said


@needs_systemd
def test_systemd_analyze_verify_is_no_rubber_stamp(profile: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # the same check finds a unit whose command is missing, or with a key systemd does not know
    text, _ = _unit(["--bot", str(profile), "--state", "/var/lib/heed/mybot"], capsys)
    unit = tmp_path / "heed-mybot.service"
    unit.write_text(text.replace(_heed(), "/nonexistent/heed"), encoding="utf-8")
    assert _verify(unit).returncode != 0
    unit.write_text(text.replace("ProtectSystem=strict", "ProtectSystem=strict\nProtectEverything=yes"),
                    encoding="utf-8")
    assert "Unknown key" in _verify(unit).stderr


@needs_systemd
def test_systemd_rates_the_unit_well_hardened(profile: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    text, _ = _unit(["--bot", str(profile), "--state", "/var/lib/heed/mybot"], capsys)
    unit = tmp_path / "heed-mybot.service"
    unit.write_text(text, encoding="utf-8")
    assert SYSTEMD_ANALYZE is not None
    proc = subprocess.run([SYSTEMD_ANALYZE, "security", "--offline=yes", str(unit)], capture_output=True, text=True,
                          timeout=60)
    if "offline" in proc.stderr and proc.returncode != 0:
        pytest.skip(f"this systemd-analyze cannot rate a unit file offline: {proc.stderr.strip()}")
    found = re.search(r"Overall exposure level for heed-mybot\.service: ([0-9.]+)", proc.stdout)
    assert found, proc.stdout[-2000:]
    assert float(found.group(1)) <= 2.0, proc.stdout  # systemd's scale: 0 (locked down) to 10 (exposed)


def test_paths_the_service_reads_from_a_home_make_home_read_only(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import heed.service_cli as service_cli

    # a profile in a home (here: tmp_path, counted as one)
    monkeypatch.setattr(service_cli, "_HOMES", (*service_cli._HOMES, service_cli.PurePosixPath(str(tmp_path))))
    bot = tmp_path / "mybot.yaml"
    bot.write_text("extends: aubebot\nname: mybot\n", encoding="utf-8")
    text, keys = _unit(["--bot", str(bot), "--state", "/var/lib/heed/mybot"], capsys)
    assert keys["ProtectHome"] == ["read-only"] and f"it reads {bot}" in text
    # a Python installed under /root (pyenv's, uv's): the venv's interpreter and standard library are there
    monkeypatch.setattr(service_cli, "_HOMES", service_cli._HOMES[:3])
    monkeypatch.setattr(sys, "base_prefix", "/root/.pyenv/versions/3.13.0")
    text, keys = _unit(["--bot", "aubebot", "--state", "/var/lib/heed/aubebot"], capsys)
    assert keys["ProtectHome"] == ["read-only"] and "it reads /root/.pyenv/versions/3.13.0" in text


@pytest.mark.parametrize("argv, says", [
    (["--bot", "etc/mybot.yaml", "--state", "/var/lib/heed/mybot"], "--bot: etc/mybot.yaml is a relative path"),
    (["--bot", "{tmp}/etc/none.yaml", "--state", "/var/lib/heed/mybot"], "none.yaml: no such file"),
    (["--bot", "{tmp}/etc/bad.yaml", "--state", "/var/lib/heed/mybot"], "unknown key"),
    (["--bot", "{tmp}/etc/mybot.yaml", "--state", "var/lib/heed/mybot"], "--state: var/lib/heed/mybot is a relative"),
    (["--bot", "{tmp}/etc/mybot.yaml", "--state", "/var/lib/heed/../x"], "a unit names it plainly"),
    (["--bot", "{tmp}/etc/mybot.yaml", "--state", "/var/lib/my bot"], "a unit names it plainly"),
    (["--bot", "{tmp}/etc/mybot.yaml", "--state", "/home/me/state"], "which the unit hides"),
    (["--bot", "{tmp}/etc/mybot.yaml", "--state", "/var/lib"], "is not a folder of one bot's state"),
    (["--bot", "{tmp}/etc/mybot.yaml", "--state", "/var/lib/heed/mybot", "--user", "Heed!"], "is not a user name"),
    (["--bot", "{tmp}/etc/mybot.yaml", "--state", "/var/lib/heed/mybot", "--user", "1000"], "is not a user name"),
    (["--bot", "{tmp}/etc/mybot.yaml", "--state", "/var/lib/heed/mybot", "--user", "root"], "a user of its own"),
    (["--bot", "{tmp}/etc/mybot.yaml", "--state", "/var/lib/heed/mybot", "--grace", "-1"], "not a number of seconds"),
    (["--bot", "{tmp}/etc/mybot.yaml", "--state", "/var/lib/heed/mybot", "--webhook", "https://a.example/h"],
     "--webhook without --webhook-secret-file"),
    (["--bot", "{tmp}/etc/mybot.yaml", "--state", "/var/lib/heed/mybot", "--webhook", "https://a.example/h",
      "--webhook-secret-file", "secret"], "--webhook-secret-file: secret is a relative path"),
    (["--bot", "{tmp}/etc/mybot.yaml", "--state", "/var/lib/heed/mybot", "--settings", "{tmp}/etc/none.yaml"],
     "--settings: {tmp}/etc/none.yaml: no such file"),
])
def test_a_mistake_is_one_line_and_exit_2(argv: list[str], says: str, profile: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "etc" / "bad.yaml").write_text("extends: aubebot\npolitness: {}\n", encoding="utf-8")
    code = main(["service", "unit", *[a.replace("{tmp}", str(tmp_path)) for a in argv]])
    out, err = capsys.readouterr()
    assert (code, out) == (2, ""), (code, out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("heed service unit: ") and says.replace("{tmp}", str(tmp_path)) in err, err


def test_the_docs_show_the_unit_the_command_prints() -> None:
    # docs/serve.md (the README's VPS install, in full) shows the unit for /etc/heed/mybot.yaml, heed in
    # /opt/heed: as printed.
    from pathlib import PurePosixPath

    from heed.service_cli import Unit, render

    readme = (Path(__file__).resolve().parents[2] / "docs" / "serve.md").read_text(encoding="utf-8")
    shown = re.search(r"```ini\n(# /etc/systemd/system/heed-mybot\.service.*?)```", readme, re.DOTALL)
    assert shown, "docs/serve.md: the unit heed service unit prints is not shown"
    unit = Unit(bot="mybot", user="heed", heed=PurePosixPath("/opt/heed/bin/heed"), python=PurePosixPath("/usr"),
                profile="/etc/heed/mybot.yaml", state=PurePosixPath("/var/lib/heed/mybot"), grace_s=10.0)
    assert shown.group(1) == render(unit)

"""Your own bot, deployed (issue 19): `heed new-bot`, its identity written, `heed deploy --dry-run`
(conformance, samconfig, the profile layer, the real `sam build`), then one round with the
handlers *of the built artifact* on moto against a local site: what is packaged is what runs.

Each test works in a copy of the project (tests/support/project.py: the template on this
machine's architecture), so the checkout's samconfig.toml and profile layer stay as they are."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from heed_core.bundle import content_hash
from heed_core.profile import load_profile

from heed.cli import main
from heed.conformance.sites import Sites, gaps, html_page, robots, rss
from heed.demo.web import Route

from tests.support.bots import written
from tests.support.project import ROOT, project_copy, sam

STACK = "mybot-test"
REASON = "load test of our own staging site"



@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A project copy, in which `heed new-bot` made mybot (extends aubebot) and its identity
    is written: its own numbers are a longer gap (2 s) and fewer articles (2 a source)."""
    if not sam().is_file():
        pytest.skip("no SAM CLI in .venv-tools (make tools)")
    root = project_copy(tmp_path_factory.mktemp("project"))
    cwd = Path.cwd()
    os.chdir(root)
    try:
        assert main(["new-bot", "mybot", "--language", "en", "--extends", "aubebot"]) == 0
        text = written(Path("mybot.yaml").read_text(encoding="utf-8"))
        text = text.replace("  min_delay_s: 1.5", "  min_delay_s: 2.0")
        text = text.replace("per_source_per_window: 5", "per_source_per_window: 2")
        Path("mybot.yaml").write_text(text, encoding="utf-8")
        yield root
    finally:
        os.chdir(cwd)


@pytest.fixture
def in_project(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(project)
    monkeypatch.setenv("SAM", str(sam()))
    monkeypatch.setenv("SAM_CLI_TELEMETRY", "0")
    return project


def _round_with_the_build(build: Path, feed_url: str, out: Path, sha: str) -> dict[str, object]:
    """tests/support/artifact_round.py in a fresh interpreter that can import nothing of Heed
    but the build's layers (``-S``: no .pth, so not the editable install either)."""
    site_packages = sysconfig.get_paths()["purelib"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "HEED_", "PYTHON"))}
    env.update(PYTHONPATH=os.pathsep.join([str(build / "CoreLayer" / "python"), str(build / "AwsLayer" / "python"),
                                           site_packages]),
               HEED_BOT="mybot", HEED_PROFILE_SHA256=sha, PYTHONDONTWRITEBYTECODE="1")
    run = subprocess.run([sys.executable, "-S", "-P", str(ROOT / "tests/support/artifact_round.py"), str(build),
                          feed_url, str(out), str(ROOT / "src/heed/local/resources.py")],
                         env=env, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-3000:]
    return dict(json.loads(out.read_text(encoding="utf-8")))


@pytest.mark.slow
def test_a_new_bot_deployed_dry_runs_and_its_built_artifact_runs_a_round_as_its_profile_says(
        in_project: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    # GIVEN mybot, made by heed new-bot and written: nothing is left to write
    assert main(["profile", "check", "mybot.yaml"]) == 0
    profile = load_profile("mybot.yaml")
    sha = content_hash(profile)
    assert f"ready: mybot, its own identity, every sentence written (sha256 {sha})" in capfd.readouterr().out
    # WHEN it is deployed with --dry-run
    code = main(["deploy", "--bot", "mybot.yaml", "--stack", STACK, "--region", "eu-west-1", "--dry-run"])
    out, err = capfd.readouterr()
    assert code == 0, err[-3000:]
    # THEN its promises held, its samconfig environment names its stack and its profile's hash
    assert "conformance: every rule of aubebot holds (21 rules" in out
    env = tomllib.loads((in_project / "samconfig.toml").read_text(encoding="utf-8"))["mybot"]["deploy"]["parameters"]
    assert (env["stack_name"], env["region"]) == (STACK, "eu-west-1")
    assert f"BotName=mybot ProfileSha256={sha} FetcherBatchSize=1 FetcherMaximumConcurrency=2" in \
        env["parameter_overrides"]
    assert "# profile: mybot.yaml\n[mybot.deploy.parameters]" in (in_project / "samconfig.toml").read_text()
    # AND the exact deploy command is printed, nothing sent
    # (both paths absolute: SAM reads a relative --config-file from the template's folder)
    assert (f"sam deploy --config-file {in_project / 'samconfig.toml'} --config-env mybot --template-file "
            f"{in_project / '.aws-sam/build/template.yaml'} --region eu-west-1 --tags HeedConformance=passed") in out
    assert f"    ProfileSha256={sha}\n" in out and "dry run: nothing sent" in out
    # AND the build holds the profile, packaged in the profile layer
    build = in_project / ".aws-sam" / "build"
    packaged = build / "ProfileLayer" / "heed-profiles" / "mybot.json"
    assert packaged.is_file() and content_hash(load_profile(str(packaged))) == sha

    # WHEN one round runs with the build's handlers on moto against a local site with 4 new articles
    web = Sites()
    feed = Route(body=rss([{"title": f"Notizia {i}", "link": "{{base}}" + f"/art/{i}"} for i in range(1, 5)]),
                 content_type="application/rss+xml; charset=utf-8")
    articles = {f"/art/{i}": Route(body=html_page(f"Notizia {i}", "<p>Testo.</p>")) for i in range(1, 5)}
    base = web.add("mine", {"/robots.txt": robots("User-agent: *\nAllow: /\n"), "/feed.xml": feed, **articles})
    try:
        report = _round_with_the_build(build, base + "/feed.xml", tmp_path / "round.json", sha)
        log = web.log("mine")
    finally:
        web.stop()
    # THEN the site saw mybot, and mybot's numbers: 2 s between requests, 2 articles of the source
    assert report["finished"] is True and report["profile"] == "mybot" and report["sha256"] == sha
    assert [r.path for r in log] == ["/robots.txt", "/feed.xml", "/art/1", "/art/2"], json.dumps(
        {"journal": report["journal"], "trace": report["trace"]}, indent=1)  # a string: pytest prints it whole
    # AND the build journaled each request the site saw, once
    journal = report["journal"]
    assert isinstance(journal, list)
    assert [j["url"][len(base):] for j in journal if j["kind"] == "request"] == [r.path for r in log], journal
    assert {r.header("User-Agent") for r in log} == {"Mybot/0.1 (+https://bots.example.org/mybot)"}
    assert min(gaps(log)) >= 2.0, gaps(log)
    # AND every module of Heed that ran came from the build, none from the source tree
    modules = {k: v for k, v in dict(report["modules"]).items()  # type: ignore[call-overload]
               if k not in ("__main__", "__mp_main__", "_harness_resources")}
    ours = {k: v for k, v in modules.items() if k.split(".")[0] in ("heed_core", "heed_aws", "heed")}
    assert {"heed_core.crawl", "heed_aws.service", "heed_core.bundle"} <= set(ours) and "heed" not in ours
    assert all(v.startswith(str(build)) for v in ours.values()), ours
    assert str(modules["fetcher_app"]).startswith(str(build / "FetcherFunction"))
    source = [v for v in modules.values() if v.startswith(str(ROOT)) and "/.venv" not in v]
    assert source == [], source


@pytest.mark.slow
def test_a_broken_promise_stops_the_deploy_naming_the_rule_and_force_goes_on_recording_why(
        in_project: Path, capfd: pytest.CaptureFixture[str]) -> None:
    # GIVEN fastbot: mybot written, with 0.5 s between requests (AubeBot promises 1.5: AUBE-09, COMMON-05)
    text = Path("mybot.yaml").read_text(encoding="utf-8").replace("mybot", "fastbot").replace("Mybot", "Fastbot")
    Path("fastbot.yaml").write_text(text.replace("  min_delay_s: 2.0", "  min_delay_s: 0.5"), encoding="utf-8")
    samconfig = (in_project / "samconfig.toml").read_text(encoding="utf-8")
    # WHEN it is deployed
    argv = ["deploy", "--bot", "fastbot.yaml", "--stack", "fastbot", "--region", "eu-west-1", "--dry-run"]
    code = main(argv)
    out, err = capfd.readouterr()
    # THEN nothing goes on: exit 1, the rules named, with the number that breaks them
    assert code == 1, out + err
    assert err.startswith("heed deploy: conformance: COMMON-05, AUBE-09 broken (COMMON-05: NOT profile: "
                          "politeness.min_delay_s = 0.5 >= 1.5"), err
    assert err.rstrip().endswith("not deployed (fix the profile, or deploy anyway with --force REASON)")
    assert (in_project / "samconfig.toml").read_text(encoding="utf-8") == samconfig
    assert not (in_project / "layers/profiles/heed-profiles/fastbot.json").exists()
    # WHEN it is forced, with a reason
    code = main([*argv, "--force", REASON])
    out, err = capfd.readouterr()
    # THEN it goes on to the build and the deploy command, the reason in the stack's tags
    assert code == 0, err[-3000:]
    assert f"deployed anyway: --force '{REASON}'" in err
    assert f"--tags HeedConformance=forced 'HeedForceReason=\"{REASON}\"'" in out
    assert (in_project / ".aws-sam/build/ProfileLayer/heed-profiles/fastbot.json").is_file()


@pytest.mark.slow
def test_a_seed_bot_deploys_through_the_same_path_and_sam_deploy_config_env_keeps_working(
        in_project: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import heed.deploy

    # (AubeBot's whole conformance is proven in test_conformance_command.py; here the gate says yes)
    monkeypatch.setattr(heed.deploy, "conformance_gate", lambda ref, profile, force: "passed")
    code = main(["deploy", "--bot", "aubebot", "--stack", "aube", "--region", "eu-west-1", "--dry-run"])
    out, err = capfd.readouterr()
    assert code == 0, err[-3000:]
    # THEN its environment is the one sam deploy --config-env aubebot reads, on the stack asked for
    config = tomllib.loads((in_project / "samconfig.toml").read_text(encoding="utf-8"))
    env = config["aubebot"]["deploy"]["parameters"]
    sha = content_hash(load_profile("aubebot"))
    assert (env["stack_name"], env["region"]) == ("aube", "eu-west-1")
    assert env["parameter_overrides"] == (f"BotName=aubebot ProfileSha256={sha} FetcherBatchSize=1 "
                                          "FetcherMaximumConcurrency=2 AlarmEmail=robot@aube.news HeartbeatHours=1")
    assert "--config-env aubebot" in out and "profile: aubebot, built in" in out
    # AND nothing is packaged for it: the functions read it from heed_core, as the hash says
    assert not (in_project / ".aws-sam/build/ProfileLayer/heed-profiles/aubebot.json").exists()
    # AND the file stays what the profiles give: the operator's stack name is kept
    assert main(["samconfig", "--check"]) == 0

"""`heed deploy --bot NAME|FILE --stack STACK [--region R] [--profile P] [--dry-run] [--guided]
[--force REASON] [--yes]`: any bot, built in or of one's own, to its own stack, in five steps.

1. The profile is loaded and validated (one line per mistake: a bad key, a value still marked
   WRITE ME, an identity still its base bot's).
2. Its conformance runs (`heed conformance --bot FILE`): the profile's numbers first, then the
   scenarios; a broken promise stops the deploy, naming the rule, unless ``--force REASON``
   (recorded on the stack as the ``HeedForceReason`` tag).
3. Its samconfig environment is written or updated (heed.samconfig: the parameters that come
   from the profile, ProfileSha256 among them; the operator's choices kept).
   Then the preflight (heed.preflight): the account's quotas and usage against what the stack
   would create (Lambda concurrency, VPCs, internet gateways, Elastic IPs, CloudFront); a
   shortfall stops the deploy before anything is created, one line each with the Service Quotas
   request that lifts it (skipped, in one line, where a dry run has no credentials).
4. A bot that is not built in is packaged into the profile layer (heed_core.bundle), which the
   template puts in front of every function.
5. `sam build`, then `sam deploy` (``--dry-run``: the build, and the exact deploy command with
   its parameters printed; nothing sent).

Run where template.yaml is (the project). Exit 0 when deployed (or the dry run is ready), 1 when
a promise is broken or SAM CLI fails, 2 for a mistake in the command, the profile or the setup
(no SAM CLI, no region, no credentials, a quota the stack would exceed: one line saying which)."""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heed_core.errors import ConfigError

from heed.deploy_egress import Egress, nat_image, reverse_dns, reverse_dns_address
from heed.deploy_errors import DeployError, PromiseBroken

# The errors and the egress's steps live in heed.deploy_errors and heed.deploy_egress; they are
# named here too, where callers import them.
__all__ = ["GUIDED_PARAMETERS", "DeployError", "Egress", "Guided", "PromiseBroken", "nat_image", "register",
           "reverse_dns", "reverse_dns_address"]

_STACK = re.compile(r"[A-Za-z][A-Za-z0-9-]{0,127}")  # CloudFormation's stack names
_TAG_VALUE = re.compile(r"[^A-Za-z0-9 _.:/+=@-]")  # what a tag value may hold (SAM and CloudFormation)
FORCE_TAG, CONFORMANCE_TAG = "HeedForceReason", "HeedConformance"


@dataclass(frozen=True)
class Guided:
    """A template parameter `--guided` asks for (checked with the template's AllowedPattern),
    kept in the bot's samconfig environment as the operator's choice."""

    parameter: str
    question: str


# What `heed deploy --guided` asks beyond the region and the AWS profile: the operator's own
# parameters, which no profile decides. A new one is one line here (and one in template.yaml).
GUIDED_PARAMETERS: tuple[Guided, ...] = (
    Guided("AlarmEmail", "e-mail address the stack's alarms are sent to (empty: none)"),
)


def register(subparsers: Any) -> None:
    """Add ``deploy`` to the `heed` parser's subcommands."""
    p = subparsers.add_parser(
        "deploy", help="deploy a bot (built in, or a profile file of your own) to its stack, past its conformance",
        description=(__doc__ or "").split("\n\n", 1)[1])
    p.add_argument("--bot", required=True, metavar="NAME|FILE", help="a built-in bot name or a profile file")
    p.add_argument("--stack", required=True, metavar="STACK", help="the CloudFormation stack's name")
    p.add_argument("--region", metavar="R", help="AWS region (default: the environment's, or the bot's samconfig)")
    p.add_argument("--profile", metavar="P", help="AWS named profile (default: from the environment)")
    p.add_argument("--dry-run", action="store_true",
                   help="build, and print the exact deploy command and its parameters; send nothing")
    p.add_argument("--guided", action="store_true",
                   help="ask for the region, the AWS profile and the operator's parameters (kept in samconfig.toml)")
    p.add_argument("--force", metavar="REASON",
                   help="deploy even if a promise is broken; REASON is recorded in the stack's HeedForceReason tag")
    p.add_argument("--yes", action="store_true",
                   help="deploy the change set without asking (samconfig asks to confirm it by default)")
    p.add_argument("--json", action="store_true",
                   help="the steps on stderr, and what was deployed (or would be) as one JSON object on stdout")
    p.set_defaults(func=cmd_deploy)


def cmd_deploy(args: argparse.Namespace) -> int:
    """A DeployError (exit 2) or PromiseBroken (exit 1) is told by heed.cli.main."""
    if getattr(args, "json", False):
        with contextlib.redirect_stdout(sys.stderr):  # the steps; the outcome alone on stdout
            code = deploy(args)
        print(json.dumps(args.outcome, ensure_ascii=False))
        return code
    return deploy(args)


# --- step 0: the project, SAM CLI, the AWS account -------------------------------------------------

def find_sam() -> str:
    """SAM CLI: $SAM, else `sam` on PATH, else the checkout's .venv-tools (make tools)."""
    from heed.local.root import ROOT

    for candidate in (os.environ.get("SAM"), shutil.which("sam"), str(ROOT / ".venv-tools" / "bin" / "sam")):
        if candidate and os.access(candidate, os.X_OK) and Path(candidate).is_file():
            return candidate
    raise DeployError("no SAM CLI: install it (make tools, or pip install aws-sam-cli) or set SAM=/path/to/sam")


def _session(region: str | None, profile: str | None) -> Any:
    import boto3
    from botocore.exceptions import ProfileNotFound

    try:
        return boto3.session.Session(profile_name=profile, region_name=region)
    except ProfileNotFound as exc:
        raise DeployError(f"no AWS profile named {profile!r} (see ~/.aws/config)") from exc


def aws_account(region: str | None, profile: str | None, *, credentials: bool) -> str:
    """The region the stack goes to; with ``credentials``, also that there are credentials to
    deploy with. A DeployError saying which is missing."""
    session = _session(region, profile)
    found = region or session.region_name
    if not found:
        raise DeployError("no AWS region: give --region, set AWS_REGION or give the AWS profile a region")
    if credentials and session.get_credentials() is None:
        raise DeployError("no AWS credentials (configure them as for the AWS CLI, or give --profile)")
    return str(found)


# --- step 1: the profile ----------------------------------------------------------------------------

def load(ref: str) -> Any:
    from heed_core.profile import BUILTIN_BOTS, ProfileError, load_profile

    from heed.botcheck import identity_problem, untranslated, unwritten
    from heed.samconfig import deploy_env

    try:
        profile = load_profile(ref)
        deploy_env(profile)  # what the stack needs of it (a signing key on AWS, not in a file)
    except ProfileError as exc:
        raise DeployError(str(exc)) from exc
    if ref in BUILTIN_BOTS:
        return profile
    problem = identity_problem(ref, profile)  # one line naming the keys
    if problem:
        raise DeployError(problem)
    if profile.name in BUILTIN_BOTS:
        raise DeployError(f"{ref}: name: {profile.name!r} is a built-in bot's; a bot of its own needs its own name")
    lines = [f"{ref}: {k}: still to write ({hint})" for k, hint in unwritten(profile)]
    left = untranslated(ref, profile)
    for where in dict.fromkeys(f for f, _, _ in left):  # its page cannot be made: one line a file
        count = sum(1 for f, _, _ in left if f == where)
        lines.append(f"{where}: {count} sentence{'s' if count > 1 else ''} of the info page still to write "
                     f"(heed profile check {ref} lists them)")
    for line in lines[:-1]:  # one line per mistake
        print(f"heed deploy: {line}", file=sys.stderr)
    if lines:
        raise DeployError(lines[-1])
    return profile


# --- step 2: the conformance gate -------------------------------------------------------------------

def _progress(line: str) -> None:
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K" + line[:150])
        sys.stderr.flush()


def conformance_gate(ref: str, profile: Any, force: str | None) -> str:
    """"passed", or "forced" past the broken rules named on stderr; PromiseBroken without force.
    The profile's numbers are judged first: a number that breaks a promise needs no scenario."""
    from heed.conformance.catalogue import broken_numbers
    from heed.conformance.command import base_bot, run

    def broken(ids: Sequence[str], why: str) -> str:
        line = f"conformance: {', '.join(ids)} broken ({why})"
        if force is None:
            raise PromiseBroken(f"{line}: not deployed (fix the profile, or deploy anyway with --force REASON)")
        print(f"heed deploy: {line}; deployed anyway: --force {force!r}", file=sys.stderr)
        return "forced"

    try:
        bot = base_bot(ref)
    except ConfigError as exc:
        return broken(["every rule"], str(exc))
    t0 = time.monotonic()
    by_numbers: dict[str, list[str]] = {}
    for found in broken_numbers(bot, profile):
        by_numbers.setdefault(found.rule, []).append(found.evidence)
    if by_numbers:
        return broken(list(by_numbers), "; ".join(f"{i}: NOT {'; '.join(why)}" for i, why in by_numbers.items()))
    report = run(ref, None, _progress)
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K")
    failed = [v for v in report.verdicts if v.result != "pass"]
    if failed:
        return broken([v.rule.id for v in failed], "; ".join(f"{v.rule.id} {v.result}: {v.evidence}" for v in failed))
    print(f"conformance: every rule of {bot} holds ({len(report.verdicts)} rules, "
          f"{time.monotonic() - t0:.0f} s)")
    return "passed"


# --- step 3 and 4: samconfig and the profile layer ----------------------------------------------------

def guided_answers(ask: Callable[[str], str], template: dict[str, Any], defaults: dict[str, str],
                   region: str | None, aws_profile: str | None) -> tuple[str | None, str | None, dict[str, str]]:
    """(region, AWS profile, {parameter: value}) as the operator answers; Enter keeps the default."""
    def question(text: str, default: str | None, pattern: str | None = None) -> str:
        while True:
            shown = f" [{default}]" if default else ""
            answer = ask(f"{text}{shown}: ").strip() or (default or "")
            if pattern is None or re.fullmatch(pattern, answer):
                return answer
            print(f"  {answer!r} is not valid here (must match {pattern})", file=sys.stderr)

    region = question("AWS region", region) or None
    aws_profile = question("AWS profile (empty: the environment's)", aws_profile) or None
    values = {}
    for g in GUIDED_PARAMETERS:
        spec = template["Parameters"][g.parameter]
        values[g.parameter] = question(f"{g.parameter}: {g.question}", defaults.get(g.parameter, spec.get("Default")),
                                       spec.get("AllowedPattern"))
    return region, aws_profile, values


def package(project: Path, template: dict[str, Any], profile: Any, builtin: bool) -> str:
    """Step 4: the profile where the template's ProfileLayer puts it in front of the functions
    (its ContentUri, under the folder HEED_PROFILE_DIR names in /opt); its content hash."""
    from heed_core.bundle import bundle_text, content_hash, packaged_path

    layer = template["Resources"]["ProfileLayer"]["Properties"]["ContentUri"]
    inside = Path(template["Globals"]["Function"]["Environment"]["Variables"]["HEED_PROFILE_DIR"]).relative_to("/opt")
    path = packaged_path(project / layer / inside, profile.name)
    if builtin:
        path.unlink(missing_ok=True)  # a built-in bot is read from heed_core; nothing may stand in front of it
        print(f"profile: {profile.name}, built in (sha256 {content_hash(profile)})")
    else:
        path.write_text(bundle_text(profile), encoding="utf-8")
        print(f"profile: {profile.name}, packaged as {path.relative_to(project)} (sha256 {content_hash(profile)})")
    return content_hash(profile)


# --- between steps 3 and 4: the preflight -----------------------------------------------------------

def _credentialed(region: str, aws_profile: str | None) -> Any:
    """A boto3 session for the account, or None where there are no credentials (a dry run)."""
    session = _session(region, aws_profile)
    return session if session.get_credentials() is not None else None


def preflight(region: str, aws_profile: str | None, stack: str, template: dict[str, Any],
              parameters: dict[str, str]) -> None:
    """The account's quotas and usage against what the stack would create (heed.preflight): one
    line per check on stdout; a DeployError (exit 2) with one ``heed deploy:`` line per shortfall.
    Without credentials (a dry run may have none) it is skipped, said in one line on stderr."""
    from heed import preflight as checks

    session = _session(region, aws_profile)
    if session.get_credentials() is None:
        print("heed deploy: preflight skipped: no AWS credentials to read the account's quotas with",
              file=sys.stderr)
        return
    findings = checks.run(session, stack, template, parameters)
    for finding in findings:
        if not finding.short:
            print(f"preflight: {finding.line}")
    short = [f"preflight: {f.line}" for f in findings if f.short]
    for line in short[:-1]:
        print(f"heed deploy: {line}", file=sys.stderr)
    if short:
        raise DeployError(short[-1])


# --- between steps 3 and 5: the egress, settled before SAM creates anything (heed.deploy_egress) ----


def _override_text(parameters: dict[str, str]) -> str:
    """The parameters as SAM's --parameter-overrides reads them (an empty value quoted: SAM reads
    Key= as nothing)."""
    return " ".join(f'{k}="{v}"' if v == "" or re.search(r"[\s\"']", v) else f"{k}={v}"
                    for k, v in parameters.items())


# --- the five steps ---------------------------------------------------------------------------------

def deploy(args: argparse.Namespace, ask: Callable[[str], str] = input) -> int:
    from heed_core.profile import BUILTIN_BOTS

    from heed.local.resources import load_template
    from heed.samconfig import EnvChoices, SamconfigError, env_choices, write_env

    project = Path.cwd()
    if not (project / "template.yaml").is_file():
        raise DeployError(f"no template.yaml in {project}: run heed deploy in the project (a Heed checkout)")
    if not _STACK.fullmatch(args.stack):
        raise DeployError(f"--stack: {args.stack!r} is not a stack name (a letter, then letters, digits and '-')")
    reason = None
    if args.force is not None:
        reason = _TAG_VALUE.sub("-", args.force).strip()[:256]
        if not reason:
            raise DeployError("--force: give the reason the promise is broken anyway (it is recorded on the stack)")
    if args.guided and not sys.stdin.isatty() and ask is input:
        raise DeployError("--guided asks questions: run it in a terminal")
    sam = find_sam()
    profile = load(args.bot)                                                      # step 1
    template = load_template(project / "template.yaml")
    config = project / "samconfig.toml"
    try:
        before = env_choices(config, profile.name)
    except SamconfigError as exc:
        raise DeployError(str(exc)) from exc
    region, aws_profile = args.region or before.region, args.profile or before.aws_profile
    values: dict[str, str] = {}
    if args.guided:
        region, aws_profile, values = guided_answers(ask, template, dict(before.parameters), region, aws_profile)
    region = aws_account(region, aws_profile, credentials=not args.dry_run)
    gate = conformance_gate(args.bot, profile, reason)                            # step 2
    try:                                                                          # step 3
        env, choices = write_env(config, args.bot, EnvChoices(
            stack_name=args.stack, region=region, aws_profile=aws_profile, parameters=tuple(values.items())))
    except SamconfigError as exc:
        raise DeployError(str(exc)) from exc
    print(f"samconfig.toml: [{env.bot}] stack {choices.stack_name}, region {choices.region}")
    overrides = re.findall(r'(\w+)=("[^"]*"|\S+)', _overrides(config, env.bot))
    parameters = {k: v.strip('"') for k, v in overrides}

    def record(values: dict[str, str]) -> None:
        write_env(config, args.bot, EnvChoices(parameters=tuple(values.items())))

    egress = Egress(_credentialed(region, aws_profile), str(choices.stack_name), profile.name, parameters, record,
                    dry_run=args.dry_run)
    nat_image(egress, region_changed=before.region is not None and before.region != region)
    address = reverse_dns_address(egress, env.reverse_dns_name, dry_run=True)  # found, not yet made
    preflight(region, aws_profile, str(choices.stack_name), template, parameters)  # nothing created yet
    if address is None:
        address = reverse_dns_address(egress, env.reverse_dns_name, dry_run=args.dry_run)
    reverse_dns(egress, profile, env.reverse_dns_name, address)
    sha = package(project, template, profile, args.bot in BUILTIN_BOTS)         # step 4
    build = [sam, "build", "--template-file", "template.yaml"]                   # step 5
    print(f"$ {shlex.join(build)}", flush=True)
    quiet = sys.stderr if getattr(args, "json", False) else None  # --json: SAM's own output beside the steps
    done = subprocess.run(build, cwd=project, check=False, stdout=quiet)
    if done.returncode != 0:
        raise PromiseBroken(f"sam build failed (exit {done.returncode}); nothing deployed")
    tags = [f"{CONFORMANCE_TAG}={gate}"] + ([f'{FORCE_TAG}="{reason}"'] if gate == "forced" else [])
    # Both paths absolute: SAM reads a relative --config-file from the template's folder
    # (.aws-sam/build), where there is none, and then stops with "Missing option '--stack-name'".
    # The parameters given whole (SAM takes them over the file's): the file's, with what the egress
    # settled (a ReverseDnsName held back until its A record resolves).
    command = [sam, "deploy", "--config-file", str(config), "--config-env", env.bot,
               "--template-file", str(project / ".aws-sam" / "build" / "template.yaml"), "--region", region,
               *(["--profile", aws_profile] if aws_profile else []), "--tags", *tags,
               "--parameter-overrides", _override_text(parameters),
               *(["--no-confirm-changeset"] if args.yes else [])]
    args.outcome = {"bot": profile.name, "stack": choices.stack_name, "region": region, "profile_sha256": sha,
                    "conformance": gate, "dry_run": bool(args.dry_run), "deployed": False, "command": command,
                    "parameters": parameters, "tags": tags}
    if args.dry_run:
        print("dry run: nothing sent. The deploy would be:")
        print(f"$ {shlex.join(command)}")
        print(f"  stack {choices.stack_name} in {region}; parameters:")
        for k, v in parameters.items():
            print(f"    {k}={v}")
        print(f"  tags: {' '.join(tags)}")
        return 0
    print(f"$ {shlex.join(command)}", flush=True)
    done = subprocess.run(command, cwd=project, check=False, stdout=quiet)
    if done.returncode != 0:
        raise PromiseBroken(f"sam deploy failed (exit {done.returncode})")
    args.outcome["deployed"] = True
    print(f"deployed: stack {choices.stack_name} runs {profile.name} (ProfileSha256 output {sha}); its page: "
          f"heed info-page {args.bot} --out site, then upload it (README, Your own bot)")
    return 0


def _overrides(config: Path, env: str) -> str:
    import tomllib

    data = tomllib.loads(config.read_text(encoding="utf-8"))
    return str(data[env]["deploy"]["parameters"]["parameter_overrides"])

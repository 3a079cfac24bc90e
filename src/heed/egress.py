"""What `heed deploy` settles about a stack's egress before `sam deploy`: the NAT instance's image,
pinned, and the address of a bot that publishes a reverse DNS name (WANNADO-02), allocated first;
and `heed nat-image`, which says when a newer image than the pinned one exists.

The image: an Amazon Linux 2023 arm64 AMI id, read once from AWS's public SSM parameter
(``NAT_IMAGE_PARAMETER``) and recorded in the bot's samconfig environment as ``NatImageId``; every
later deploy uses the recorded id, so a new Amazon Linux release never replaces the NAT's instance
unasked. `heed nat-image --bot B` compares it with the parameter's current value; ``--update``
records the newer one (the next `heed deploy` replaces the instance with it).

The address: EC2 sets a PTR record only once the forward (A) record of the name points at the
address, and a stack that allocates its own address cannot have both in one deploy. So `heed
deploy` finds the bot's address by its tag (``ADDRESS_TAG``: the stack's name) or allocates it,
records it as ``EgressAllocationId``, says which A record to publish, and passes ``ReverseDnsName``
only once the name resolves to that address (``resolve_a``, which tests replace); until then the
stack is deployed without its PTR record and the next `heed deploy` completes it. Nothing rolls back."""
from __future__ import annotations

import argparse
import json
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heed_core.errors import ConfigError

__all__ = ["ADDRESS_TAG", "NAT_IMAGE_PARAMETER", "Address", "Image", "address_for", "allocate_address",
           "find_address", "image", "newest_image", "register", "resolve_a"]

# AWS's public parameter naming the newest Amazon Linux 2023 image for arm64 (Graviton), per region.
NAT_IMAGE_PARAMETER = "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-arm64"
# The tag that names, on an Elastic IP heed deploy allocated, the stack it is for.
ADDRESS_TAG = "heed:egress"


class EgressError(ConfigError):
    """What the egress needs cannot be read or made: one line, exit 2."""

    code = "egress"


@dataclass(frozen=True)
class Image:
    """An AMI: its id and, where EC2 describes it, its name and creation time."""

    id: str
    name: str = ""
    created: str = ""

    def __str__(self) -> str:
        about = ", ".join(x for x in (self.name, self.created) if x)
        return f"{self.id} ({about})" if about else self.id


@dataclass(frozen=True)
class Address:
    """An Elastic IP: its allocation id, public address, and the stack heed deploy allocated it for
    (its ``ADDRESS_TAG``; empty for an address of the operator's own)."""

    allocation_id: str
    ip: str
    stack: str = ""

    @classmethod
    def of(cls, described: dict[str, Any]) -> Address:
        tags = {t["Key"]: t["Value"] for t in described.get("Tags") or ()}
        return cls(described["AllocationId"], described["PublicIp"], tags.get(ADDRESS_TAG, ""))


def _client(session: Any, service: str) -> Any:
    return session.client(service)


def _aws(what: str, exc: Exception) -> EgressError:
    return EgressError(f"{what}: {type(exc).__name__}: {exc}")


# --- the NAT's image ----------------------------------------------------------------------------

def image(session: Any, image_id: str) -> Image | None:
    """The image ``image_id`` as EC2 describes it in the session's region, or None if there is none."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        found = _client(session, "ec2").describe_images(ImageIds=[image_id]).get("Images", [])
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code", "").startswith("InvalidAMIID"):
            return None
        raise _aws(f"the image {image_id}", exc) from exc
    except BotoCoreError as exc:
        raise _aws(f"the image {image_id}", exc) from exc
    if not found:
        return None
    return Image(image_id, str(found[0].get("Name", "")), str(found[0].get("CreationDate", "")))


def newest_image(session: Any) -> Image:
    """The newest Amazon Linux 2023 arm64 image of the session's region (AWS's public parameter)."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        value = _client(session, "ssm").get_parameter(Name=NAT_IMAGE_PARAMETER)["Parameter"]["Value"]
    except (ClientError, BotoCoreError) as exc:
        raise _aws(f"the newest NAT image ({NAT_IMAGE_PARAMETER})", exc) from exc
    return image(session, str(value)) or Image(str(value))


# --- the egress address ---------------------------------------------------------------------------

def find_address(session: Any, stack: str) -> Address | None:
    """The Elastic IP heed deploy allocated for ``stack`` (its ``ADDRESS_TAG``), if there is one."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        found = _client(session, "ec2").describe_addresses(
            Filters=[{"Name": f"tag:{ADDRESS_TAG}", "Values": [stack]}])["Addresses"]
    except (ClientError, BotoCoreError) as exc:
        raise _aws(f"the Elastic IPs tagged {ADDRESS_TAG}={stack}", exc) from exc
    return Address.of(found[0]) if found else None


def address_for(session: Any, allocation_id: str) -> Address:
    """The Elastic IP of ``allocation_id`` (an operator's own, or one recorded before)."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        found = _client(session, "ec2").describe_addresses(AllocationIds=[allocation_id])["Addresses"]
    except (ClientError, BotoCoreError) as exc:
        raise _aws(f"EgressAllocationId {allocation_id}", exc) from exc
    if not found:
        raise EgressError(f"EgressAllocationId {allocation_id}: no such Elastic IP in this region")
    return Address.of(found[0])


def allocate_address(session: Any, stack: str, bot: str) -> Address:
    """A new Elastic IP for ``stack``, tagged so the next deploy finds it (kept when the stack goes,
    as the stack's own address is: billed until released)."""
    from botocore.exceptions import BotoCoreError, ClientError

    tags = [{"Key": ADDRESS_TAG, "Value": stack}, {"Key": "Name", "Value": f"{stack}-egress"},
            {"Key": "Application", "Value": "heed"}, {"Key": "Bot", "Value": bot}]
    try:
        made = _client(session, "ec2").allocate_address(
            Domain="vpc", TagSpecifications=[{"ResourceType": "elastic-ip", "Tags": tags}])
    except (ClientError, BotoCoreError) as exc:
        raise _aws(f"allocating the egress address of {stack}", exc) from exc
    return Address(made["AllocationId"], made["PublicIp"], stack)


def resolve_a(name: str) -> list[str]:
    """The IPv4 addresses ``name`` resolves to now (none when it does not resolve)."""
    try:
        infos = socket.getaddrinfo(name, None, socket.AF_INET, socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        return []
    return sorted({str(info[4][0]) for info in infos})


# --- heed nat-image -------------------------------------------------------------------------------

def register(subparsers: Any) -> None:
    """Add ``nat-image`` to the `heed` parser's subcommands."""
    p = subparsers.add_parser(
        "nat-image", help="is there a newer image for the NAT instance than the one pinned? (exit 1: yes)",
        description=("The NAT instance's image is pinned in samconfig.toml (NatImageId, recorded by heed deploy). "
                     "This says whether AWS has a newer Amazon Linux 2023 arm64 image in the bot's region: exit 0 "
                     "when the pinned one is the newest, 1 when a newer one exists. --update records it; the next "
                     "heed deploy replaces the NAT's instance with it (egress pauses while it boots)."))
    p.add_argument("--bot", required=True, metavar="NAME", help="the bot whose samconfig environment pins the image")
    p.add_argument("--region", metavar="R", help="default: the environment's, else AWS's")
    p.add_argument("--profile", metavar="P", help="AWS named profile (default: the environment's, else AWS's)")
    p.add_argument("--update", action="store_true", help="record the newest image as the bot's NatImageId")
    p.add_argument("--path", type=Path, default=Path("samconfig.toml"), help="default: ./samconfig.toml")
    p.add_argument("--json", action="store_true", help="one JSON object: pinned, newest, newer, updated")
    p.set_defaults(func=cmd_nat_image)


def cmd_nat_image(args: argparse.Namespace) -> int:
    import boto3

    from heed.samconfig import EnvChoices, env_choices, write_env

    env = env_choices(args.path, args.bot)
    region = args.region or env.region
    session = boto3.session.Session(profile_name=args.profile or env.aws_profile, region_name=region)
    if not session.region_name:
        raise EgressError("no AWS region: give --region, or deploy the bot once (its samconfig environment has one)")
    pinned_id = dict(env.parameters).get("NatImageId", "")
    newest = newest_image(session)
    pinned = (image(session, pinned_id) or Image(pinned_id)) if pinned_id else None
    newer = pinned is None or pinned.id != newest.id
    where = f"[{args.bot}] in {session.region_name}"
    if pinned is None:
        said = f"no NatImageId pinned for {where}; the newest is {newest}"
    elif newer:
        said = f"NatImageId {pinned} pinned for {where}; a newer image exists: {newest}"
    else:
        said = f"NatImageId {pinned} pinned for {where} is the newest"
    updated = False
    if args.update and newer:
        # A bot of its own is written again from its recorded profile file, a built-in one by name.
        ref = str(args.path.parent / env.profile_ref) if env.profile_ref else args.bot
        write_env(args.path, ref, EnvChoices(region=region, parameters=(("NatImageId", newest.id),)))
        said += (f"\nrecorded NatImageId={newest.id} in {args.path}: the next heed deploy replaces the NAT's instance "
                 "with it (egress pauses while it boots, a few minutes)")
        updated = True
    elif newer:
        said += f"\nto move to it: heed nat-image --bot {args.bot} --update, then heed deploy"
    if args.json:
        print(json.dumps({"bot": args.bot, "region": session.region_name, "pinned": pinned.id if pinned else None,
                          "newest": newest.id, "newer": newer, "updated": updated}))
    else:
        print(said)
    if pinned is None and not updated:
        print("heed deploy records the newest the first time it deploys the bot with EgressMode nat-instance",
              file=sys.stderr)
    return 1 if newer and not updated else 0

"""`heed deploy`'s egress, between steps 3 and 5 (heed.deploy): what the stack's egress needs
before SAM creates anything, settled on the account (heed.egress): the NAT instance's image
pinned, the egress address known (WANNADO-02: the address a PTR record belongs to), and the
reverse DNS name passed only once it resolves there. Apart from ``heed.deploy`` (which names
them again for the code that imports them there) so that each file stays small enough to read
whole (issue 36)."""
from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from heed.deploy_errors import DeployError

__all__ = ["Egress", "nat_image", "reverse_dns", "reverse_dns_address"]


@dataclass
class Egress:
    """What the stack's egress needs before `sam deploy`: its session (None without credentials),
    its stack, the parameters it deploys with (changed here) and how to record a parameter in the
    bot's samconfig environment."""

    session: Any
    stack: str
    bot: str
    parameters: dict[str, str]
    record: Callable[[dict[str, str]], None]
    dry_run: bool = False

    def read(self, what: str, read: Callable[[], Any]) -> Any:
        """``read()``, or, in a dry run that cannot read the account (no endpoint, no permission),
        None and a line saying so: a dry run sends nothing and refuses nothing for it."""
        from heed.egress import EgressError

        try:
            return read()
        except EgressError as exc:
            if not self.dry_run:
                raise
            print(f"heed deploy: {what}: not read ({exc}); a deploy reads it", file=sys.stderr)
            return None

    @property
    def mode(self) -> str:
        return self.parameters.get("EgressMode", "nat-instance")

    @property
    def shared(self) -> bool:
        return self.mode != "none" and bool(self.parameters.get("EgressStack"))

    @property
    def own(self) -> bool:
        return self.mode != "none" and not self.shared

    def set(self, values: dict[str, str]) -> None:
        self.record(values)
        self.parameters.update(values)


def nat_image(egress: Egress, region_changed: bool) -> None:
    """A stack with a NAT instance of its own boots the image pinned as NatImageId; the first
    deploy (or the first in another region) pins the newest Amazon Linux 2023 arm64 image."""
    from heed import egress as nat

    if not (egress.own and egress.mode == "nat-instance"):
        return
    pinned = egress.parameters.get("NatImageId", "")
    if pinned and not region_changed:
        print(f"NAT image: {pinned}, pinned (heed nat-image --bot {egress.bot} says when a newer one exists)")
        return
    if egress.session is None:
        print("NAT image: none pinned yet; heed deploy pins the newest when it has credentials", file=sys.stderr)
        return
    newest = egress.read("the NAT image", lambda: nat.newest_image(egress.session))
    if newest is None:
        return
    egress.set({"NatImageId": newest.id})
    print(f"NAT image: {newest}, the newest Amazon Linux 2023 arm64 image, pinned as NatImageId in samconfig.toml "
          f"(heed nat-image --bot {egress.bot} says when a newer one exists)")


def reverse_dns_address(egress: Egress, name: str | None, dry_run: bool) -> Any:
    """WANNADO-02: the address the PTR record belongs to, known before the stack: the one recorded
    (EgressAllocationId), else the one tagged for the stack, else (not in a dry run) a new one.
    ``name`` None: the bot publishes no reverse DNS name, and the stack allocates its own address."""
    from heed import egress as nat

    if not name or not egress.own:
        return None
    if egress.session is None:
        return None
    recorded = egress.parameters.get("EgressAllocationId", "")
    if recorded:
        address = egress.read("the egress address", lambda: nat.address_for(egress.session, recorded))
        if address is None or address.stack in ("", egress.stack):  # the operator's own, or this stack's
            return address
        # (samconfig keeps one environment per bot: the address recorded for another of its stacks)
        print(f"egress address: {address.ip} ({recorded}) is {address.stack}'s; {egress.stack} takes its own")
    found = egress.read("the egress address", lambda: nat.find_address(egress.session, egress.stack))
    if found is None and not dry_run:
        found = nat.allocate_address(egress.session, egress.stack, egress.bot)
        print(f"egress address: {found.ip} allocated for {egress.stack} ({found.allocation_id}, tagged "
              f"{nat.ADDRESS_TAG}={egress.stack}; kept when the stack goes)")
    if found is not None:
        egress.set({"EgressAllocationId": found.allocation_id})
    return found


def reverse_dns(egress: Egress, profile: Any, name: str | None, address: Any) -> None:
    """ReverseDnsName is passed only once ``name`` resolves to the egress address (EC2 refuses a
    PTR record before that, and the stack would roll back); until then the stack is deployed
    without it, and the A record to publish is said."""
    from heed import egress as nat

    if not name:
        return
    if egress.shared:
        raise DeployError(f"EgressStack {egress.parameters['EgressStack']}: {profile.name} publishes the reverse DNS "
                          f"name {name} (WANNADO-02), a PTR record of an address of its own stack: deploy it with its "
                          "own egress (no EgressStack) and let the other bots share it")
    if not egress.own:
        return
    if address is None:
        egress.parameters["ReverseDnsName"] = ""
        print(f"reverse DNS: {name} waits for the egress address (allocated by heed deploy with credentials, "
              "before sam deploy)")
        return
    print(f"publish: {name} A {address.ip}")
    listed = {str(n).split("/")[0] for n in profile.egress.ips}
    if listed and address.ip not in listed:
        print(f"heed deploy: warning: the profile's egress.ips (ips.json, the info page) does not list {address.ip}: "
              "add it, then heed info-page", file=sys.stderr)
    resolved = nat.resolve_a(name)
    if address.ip in resolved:
        print(f"reverse DNS: {name} resolves to {address.ip}: the stack sets its PTR record")
        return
    egress.parameters["ReverseDnsName"] = ""
    now = f"resolves to {', '.join(resolved)}" if resolved else "does not resolve"
    print(f"reverse DNS: {name} {now} yet: deployed without its PTR record; publish the A record above, then "
          f"run heed deploy again to set it")

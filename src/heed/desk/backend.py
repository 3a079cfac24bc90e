"""What the desk answers from, on each engine: our requests to a host (was this you?, the audit),
what is kept of it, the explain of a URL, the proof file's record, and the operator's own
actions (block, a slower pace, purge), each through the engine's stores and the operator
actions (``heed.operator.actions``), never a write path of its own.

``StoreBackend`` is what both engines share (the crawl's state behind the operator's store);
``EmbeddedBackend`` adds a state directory's request log, queue and log line;
``heed.desk.aws.AwsBackend`` the stack's."""
from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from heed_core.desk.loglines import LogLine
from heed_core.desk.scope import Scope
from heed_core.desk.store import DeskAction
from heed_core.hoststate import TokenOut
from heed_core.netguard import is_public_address
from heed_core.profile import Profile
from heed_core.tasks import stored_keys
from heed_core.urls import origin
from heed_core.work import UrlRecord

__all__ = ["Backend", "NoResolver", "StoreBackend", "public_keys", "signature_headers"]

MAX_KEPT_URLS = 500  # URLs whose stored texts are counted for "what we keep" (a count beyond says "at least")


class NoResolver(LookupError):
    """The desk has no DNS resolver configured: the TXT way of proof is off."""


class Backend(Protocol):
    """What the desk asks of an engine (``StoreBackend`` and its engines implement it)."""

    def requests_near(self, scope: Scope, times: Sequence[float], window_s: float) -> list[tuple[float, str]]:
        """Our requests to the host within ``window_s`` of any of ``times``: (start, URL)."""
        ...

    def audit(self, scope: Scope, limit: int) -> list[dict[str, Any]]:
        """The host's latest requests, newest first (``heed.operator.audit.audit_row``'s shape)."""
        ...

    def kept(self, scope: Scope) -> dict[str, int]:
        """What is kept from the host: ``urls`` (URL records), ``texts`` (stored versions), ``sources``."""
        ...

    def explain(self, scope: Scope, url: str, now: float) -> dict[str, Any] | None:
        """``heed explain``'s answer for a URL of the host (None: never seen)."""
        ...

    def signature_ok(self, headers: str, line: LogLine, scope: Scope) -> bool | None:
        """Whether pasted signature headers are a valid Web Bot Auth signature of ours on the line
        (None: the bot signs, but its key cannot be read here: not checked)."""
        ...

    def ask_fetch(self, work: TokenOut) -> None:
        """Queue the proof file's work item for its host (the crawl's own queue)."""
        ...

    def url_record(self, url: str) -> UrlRecord | None:
        ...

    def skipped(self, url: str, since: float) -> str | None:
        """The reason of a skip of ``url`` since ``since``, where the engine can tell."""
        ...

    def has_resolver(self) -> bool:
        ...

    def txt(self, name: str) -> list[str] | None:
        """The TXT records of ``name`` (None: no answer); ``NoResolver`` when none is configured."""
        ...

    def public_suffix(self, name: str) -> bool:
        ...

    def private(self, scope: Scope) -> bool:
        """Whether the host is on an address the crawler never visits (unless allowed)."""
        ...

    def known(self, scope: Scope) -> bool:
        """Whether the crawl keeps anything of the host (it has been there, or a source is there)."""
        ...

    def block(self, name: str, reason: str, at: float) -> None:
        ...

    def slow(self, scope: Scope, floor_s: float, now: float) -> list[str]:
        ...

    def purge(self, name: str, now: float) -> dict[str, Any]:
        ...

    def notify(self, action: DeskAction) -> None:
        ...

    def housekeeping(self, now: float) -> None:
        """Drop the desk's records that have ended (where the store does not itself)."""
        ...


def signature_headers(text: str) -> list[tuple[str, str]]:
    """Pasted header lines (``Name: value``), the ones a signature needs."""
    out = []
    for line in text.splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip().lower() in ("signature", "signature-input", "signature-agent"):
            out.append((name.strip(), value.strip()))
    return out


def public_keys(profile: Profile) -> dict[str, Any] | None:
    """The bot's Web Bot Auth public keys by thumbprint, from the key its profile names: none
    when it does not sign (no signature is ours), None when it signs but the key cannot be read
    here (a signature cannot be checked)."""
    if not profile.identity.web_bot_auth.enabled:
        return {}
    from heed_core.identity.keys import thumbprint
    from heed_core.profile import ProfileError

    from heed.infopage import signing_key

    try:
        key = signing_key(profile)
    except ProfileError:
        return None
    return {thumbprint(key): key.public_key()} if key is not None else {}


class StoreBackend:
    """The engine-independent part: ``store`` (the operator's store of the crawl's state),
    ``texts`` (the kept page texts), the profile, and whether private addresses are allowed.
    ``resolver``: (address, port) of the DNS resolver for TXT proofs, or None."""

    def __init__(self, profile: Profile, store: Any, texts: Any, *, allow_private: bool = False,
                 resolver: tuple[str, int] | None = None, where: str = "desk",
                 keys: Callable[[], Mapping[str, Any] | None] | None = None) -> None:
        self.profile = profile
        self.store = store
        self.texts = texts
        self.allow_private = allow_private
        self.resolver = resolver
        self.where = where
        self._keys = keys
        self._key_cache: tuple[Mapping[str, Any] | None] | None = None

    # --- the host's authorities ----------------------------------------------------------------------
    def hosts(self, scope: Scope) -> list[str]:
        """The authorities of the host the crawl knows (its domain index), and the scope's own."""
        from heed_aws.domains import registrable_domain

        found = [h for h in self.store.domain_hosts(registrable_domain(scope.name)) if scope.covers(h)]
        own = [scope.host]
        if scope.port is None:
            own += [f"http://{scope.name}:80", f"https://{scope.name}:443"]
        return sorted(set(found + own))

    def known(self, scope: Scope) -> bool:
        if self.store.read_hosts(self.hosts(scope)):
            return True
        return any(scope.covers(s.url) for s in self.store.list_sources())

    def kept(self, scope: Scope) -> dict[str, int]:
        urls: list[str] = []
        for host in self.hosts(scope):
            urls += [u for sk, u in self.store.host_items(host) if sk.startswith("U#") and u]
        texts = 0
        if self.texts is not None:
            for url in urls[:MAX_KEPT_URLS]:
                texts += sum(len(self.texts.versions(k)) for k in stored_keys(url))
        sources = sum(1 for s in self.store.list_sources() if scope.covers(s.url))
        return {"urls": len(urls), "texts": texts, "sources": sources}

    def explain(self, scope: Scope, url: str, now: float) -> dict[str, Any] | None:
        from heed.operator.explain import explain_url
        from heed.operator.targets import Target

        return explain_url(Target(self.store, self.texts, self.profile.name, self.where), self.profile, url, now)

    def url_record(self, url: str) -> UrlRecord | None:
        return self.store.url_records([url]).get(url)  # type: ignore[no-any-return]

    # --- signatures ----------------------------------------------------------------------------------
    def signature_ok(self, headers: str, line: LogLine, scope: Scope) -> bool | None:
        from heed_core.identity.verify import verify_request

        if self._key_cache is None:
            self._key_cache = (self._keys() if self._keys is not None else public_keys(self.profile),)
        keys = self._key_cache[0]
        if keys is None:
            return None  # the bot signs, but its key is not readable here: not checked
        if not keys:
            return False  # a bot that never signs: no signature is ours
        agent = self.profile.identity.web_bot_auth.signature_agent
        result = verify_request(method=line.method, url=origin(scope.host) + line.target,
                                headers=signature_headers(headers), keys=keys, now=line.t,
                                expect_agent=str(agent) if agent else None)
        return result.valid

    # --- DNS and addresses -----------------------------------------------------------------------------
    def has_resolver(self) -> bool:
        return self.resolver is not None

    def txt(self, name: str) -> list[str] | None:
        from heed.desk.dns import DnsError, txt_records

        if self.resolver is None:
            raise NoResolver(name)
        try:
            return txt_records(name, self.resolver)
        except DnsError:
            return None

    def public_suffix(self, name: str) -> bool:
        from heed.operator.blocks import is_public_suffix

        return is_public_suffix(name)

    def private(self, scope: Scope) -> bool:
        if self.allow_private:
            return False
        name = scope.name.strip("[]")
        try:
            ipaddress.ip_address(name)
            addresses = [name]
        except ValueError:
            try:
                addresses = [str(a[4][0]) for a in socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)]
            except (OSError, UnicodeError):
                return False  # does not resolve: the bot's read will say so
        return any(not is_public_address(a) for a in addresses)

    # --- the operator's actions ------------------------------------------------------------------------
    def block(self, name: str, reason: str, at: float) -> None:
        self.store.block(name, reason, at)

    def slow(self, scope: Scope, floor_s: float, now: float) -> list[str]:
        from heed.operator.actions import TurnWait, set_floor

        return set_floor(self.store, self.hosts(scope), floor_s, now, TurnWait(max_s=20.0))

    def purge(self, name: str, now: float) -> dict[str, Any]:
        from heed.operator.actions import purge_domain

        report = purge_domain(self.store, name, texts=self.texts, record=True, now=now)
        return {"items": report.state_items, "url_records": report.url_records, "texts": report.objects,
                "sources": report.sources, "hosts": list(report.hosts)}

    def housekeeping(self, now: float) -> None:
        return None

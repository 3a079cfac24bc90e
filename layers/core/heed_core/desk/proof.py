"""Decides a site owner's proof of control of a host: the token the desk gives, where it goes
(a file at ``/.well-known/`` on the host, or a DNS TXT record), the work item that has the bot
fetch the file through its normal polite path, and what an answer proves.

A token is random (the adapter draws it), bound to one host and to the browser that asked for it
(``claimant``: the digest of that browser's desk cookie, so a token read from the public file
opens nothing for anyone else), single-use and expiring. Only its digest is stored. The proof
file is an ordinary work item of the host (robots.txt first, the host's gap, the SSRF guard, a
block honoured): what its answer leaves is the URL's record, whose content digest the desk
compares with the token's."""
from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, replace
from typing import Literal

from heed_core.hoststate import TokenOut
from heed_core.urls import host_name, origin, short_hash
from heed_core.work import UrlRecord, WorkItem

__all__ = ["MAX_ASKS", "TOKEN_BYTES", "TOKEN_TTL_S", "Method", "ProofOutcome", "ProofToken", "State", "asked",
           "dns_name", "dns_value", "judge_dns", "judge_http", "new_token", "proof_digest", "proof_path",
           "proof_url", "proof_work", "used"]

TOKEN_BYTES = 24  # 192 random bits
TOKEN_TTL_S = 3600.0  # an hour to place the file and have it read
MAX_ASKS = 3  # fetches of the file one token may ask for (each one polite request to the host)
Method = Literal["http", "dns"]
State = Literal["issued", "asked", "used"]


def proof_digest(body: bytes | str) -> str:
    """The digest a proof file's body is known by: its text, surrounding white space left out."""
    raw = body.encode("utf-8") if isinstance(body, str) else body
    return hashlib.sha256(b"heed-desk-proof\x00" + raw.strip()).hexdigest()


def proof_path(bot: str) -> str:
    """Where the file goes on the host (RFC 8615's well-known folder), one name a bot."""
    return f"/.well-known/heed-desk-{bot}.txt"


def proof_url(host: str, bot: str) -> str:
    """The proof file's URL on ``host`` (an authority: scheme://name:port)."""
    return origin(host) + proof_path(bot)


def dns_name(host: str, bot: str) -> str:
    """The DNS name the TXT record goes on: ``_heed-desk-<bot>.<host name>``."""
    return f"_heed-desk-{bot}.{host_name(host)}"


def dns_value(token: str) -> str:
    return f"heed-desk={token}"


@dataclass(frozen=True)
class ProofToken:
    """What the desk keeps of a token: its digest (``tid``), the host it is for (an authority),
    how it is proven, the digest of the browser cookie that asked for it, when it was issued and
    ends, and its state: issued, asked (a fetch of the file is queued: ``asked_at``, ``asks``)
    or used (it proved the host once: never again)."""

    tid: str
    host: str
    method: Method
    claimant: str
    issued: float
    expires: float
    state: State = "issued"
    asked_at: float = 0.0
    asks: int = 0
    used_at: float = 0.0


def new_token(random: bytes, host: str, method: Method, claimant: str, now: float) -> tuple[str, ProofToken]:
    """A token from ``random`` (``TOKEN_BYTES`` bytes from the adapter's CSPRNG) for ``host``:
    the text the site owner places, and what the desk keeps of it."""
    if len(random) < TOKEN_BYTES:
        raise ValueError(f"a token needs {TOKEN_BYTES} random bytes")
    text = base64.urlsafe_b64encode(random[:TOKEN_BYTES]).decode("ascii").rstrip("=")
    return text, ProofToken(proof_digest(text), host, method, claimant, now, now + TOKEN_TTL_S)


def proof_work(token: ProofToken, bot: str, now: float) -> TokenOut:
    """The work that has the bot read the proof file: one item of the host's, through its queue
    (robots.txt first, the host's gap, its blocks: COMMON-02, COMMON-05, COMMON-08)."""
    url = proof_url(token.host, bot)
    item = WorkItem(url=url, purpose="proof", task="page", source_id="desk", source_url=url,
                    round_id=f"desk-{token.tid[:12]}-{token.asks + 1}", round_start=now)
    return TokenOut(token.host, short_hash("desk", token.tid, str(token.asks + 1)), (item,))


def asked(token: ProofToken, now: float) -> ProofToken:
    return replace(token, state="asked", asked_at=now, asks=token.asks + 1)


def used(token: ProofToken, now: float) -> ProofToken:
    return replace(token, state="used", used_at=now)


@dataclass(frozen=True)
class ProofOutcome:
    """``proven``, ``waiting`` (nothing read yet), ``failed`` (read, and it proves nothing),
    ``expired``, ``used`` (a replay), ``not_yours`` (another browser's token); ``reason`` says
    why in a stable code, ``status`` the file's HTTP status where one came."""

    outcome: Literal["proven", "waiting", "failed", "expired", "used", "not_yours"]
    reason: str = ""
    status: int | None = None


def _gate(token: ProofToken, claimant: str, now: float) -> ProofOutcome | None:
    if token.claimant != claimant:
        return ProofOutcome("not_yours", "another_browser")
    if token.state == "used":
        return ProofOutcome("used", "used_once")
    if now > token.expires:
        return ProofOutcome("expired", "expired")
    return None


def judge_http(token: ProofToken, claimant: str, record: UrlRecord | None, skipped: str | None,
               now: float) -> ProofOutcome:
    """What the bot's read of the proof file proves: ``record`` is the file URL's record (what
    its last answer left), ``skipped`` the reason code of a skip of the file since it was asked
    for (robots.txt disallows it, a private address, a block), if any."""
    gate = _gate(token, claimant, now)
    if gate is not None:
        return gate
    if token.state != "asked":
        return ProofOutcome("waiting", "not_asked")
    fresh = record is not None and record.last_fetched is not None and record.last_fetched >= token.asked_at
    if fresh and record is not None and record.last_status == 200:
        if record.content_hash != token.tid:
            return ProofOutcome("failed", "content", 200)
        return ProofOutcome("proven", "file", 200)
    if skipped:  # why no answer came (robots.txt, a private address, a block): said before "no answer"
        return ProofOutcome("failed", skipped)
    if fresh and record is not None:
        return ProofOutcome("failed", "status", record.last_status)
    return ProofOutcome("waiting", "queued")


def judge_dns(token: ProofToken, claimant: str, answers: list[str] | None, now: float) -> ProofOutcome:
    """What the TXT records at ``dns_name`` prove (``answers``: their texts; None: no answer)."""
    gate = _gate(token, claimant, now)
    if gate is not None:
        return gate
    if answers is None:
        return ProofOutcome("failed", "dns_no_answer")
    for text in answers:
        if text.startswith("heed-desk=") and proof_digest(text.removeprefix("heed-desk=")) == token.tid:
            return ProofOutcome("proven", "dns")
    return ProofOutcome("failed", "dns_no_match")

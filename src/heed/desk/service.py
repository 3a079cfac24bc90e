"""The desk's flows: a site owner's question in, the answer out, over the rules of
``heed_core.desk`` (pure), the desk's records (``DeskStore``) and what the engine answers from
(``backend.Backend``). No HTTP here: ``web`` turns forms into these calls and answers into pages.

Every flow takes ``now`` and a ``Visitor`` (the client's address and the browser's desk cookie);
every refusal is a ``DeskRefusal`` naming the sentence that says why. What a visitor sees of a
host is the proven host's alone (``Session``): the session, not the form, names the host."""
from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from heed_core.desk import csrf
from heed_core.desk.limits import window
from heed_core.desk.loglines import BadLine, LogLine, PasteTooBig, parse_paste
from heed_core.desk.proof import (
    MAX_ASKS,
    ProofOutcome,
    ProofToken,
    asked,
    dns_name,
    judge_dns,
    judge_http,
    new_token,
    proof_digest,
    proof_url,
    proof_work,
    used,
)
from heed_core.desk.scope import Scope, parse_scope
from heed_core.desk.store import DeskAction, DeskStore, Session
from heed_core.desk.verdicts import NEAR_S, Verdict, judge
from heed_core.errors import HeedError
from heed_core.profile import Profile

from heed.desk.backend import Backend, NoResolver

__all__ = ["SESSION_S", "DeskRefusal", "Desk", "Given", "Lines", "Visitor", "gap_choices"]

SESSION_S = 1800.0  # a proven browser sees its host this long
_SECRET_BYTES = 32


class DeskRefusal(Exception):
    """A question the desk does not answer, and why: the sentence ``key`` of the desk's words
    with its ``values``, and the HTTP status the page goes out with."""

    def __init__(self, key: str, status: int = 400, **values: Any) -> None:
        super().__init__(key)
        self.key = key
        self.status = status
        self.values = values


@dataclass(frozen=True)
class Visitor:
    """Who asks: the client's address (the rate limits' key) and the browser's desk cookie (the
    CSRF token's and a proof token's anchor), and its session cookie if it has one."""

    client: str
    cookie: str
    session: str | None = None


@dataclass(frozen=True)
class Lines:
    scope: Scope
    verdicts: tuple[Verdict, ...]
    bad: tuple[BadLine, ...]


@dataclass(frozen=True)
class Given:
    """A token given: its text, what is kept of it, and where it goes (a URL or a DNS name)."""

    text: str
    token: ProofToken
    where: str


@dataclass(frozen=True)
class Checked:
    outcome: ProofOutcome
    token: ProofToken | None
    where: str = ""
    session: str | None = None  # the new session cookie's value, when proven


@dataclass
class Site:
    session: Session
    rows: list[dict[str, Any]] = field(default_factory=list)
    kept: Mapping[str, int] = field(default_factory=dict)


def gap_choices(profile: Profile) -> list[int]:
    """The gaps a site owner may ask for: always slower than the bot's own (never faster)."""
    base = profile.politeness.min_delay_s
    offers = {max(10, int(base * 2)), 30, 60, 300, 900, 3600}
    return sorted(x for x in offers if x > base)


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S")


class Desk:
    """The desk of ``profile`` over ``store`` (its records) and ``backend`` (the engine)."""

    def __init__(self, profile: Profile, store: DeskStore, backend: Backend, *,
                 random: Callable[[int], bytes] = os.urandom) -> None:
        self.profile = profile
        self.store = store
        self.backend = backend
        self.random = random
        self._secret: bytes | None = None

    # --- the secret, cookies and forms ------------------------------------------------------------
    @property
    def secret(self) -> bytes:
        if self._secret is None:
            self._secret = self.store.secret(self.random(_SECRET_BYTES))
        return self._secret

    def new_cookie(self) -> str:
        return self.random(24).hex()

    def csrf(self, visitor: Visitor) -> str:
        return csrf.csrf_token(self.secret, visitor.cookie)

    def csrf_ok(self, visitor: Visitor, given: str | None) -> bool:
        return csrf.csrf_ok(self.secret, visitor.cookie, given)

    def limit(self, action: str, who: str, key: str, now: float) -> None:
        """Count one use; ``DeskRefusal`` (429) when the window's limit is reached."""
        name, limit, ends = window(action, who, hashlib.sha256(key.encode()).hexdigest()[:32], now)
        if self.store.hit(name, ends) > limit.count:
            raise DeskRefusal("err_limit", 429)

    # --- was this you? ------------------------------------------------------------------------------
    def lines(self, visitor: Visitor, host: str, paste: str, signature: str, now: float) -> Lines:
        scope = parse_scope(host)
        if scope is None:
            raise DeskRefusal("err_host")
        try:
            parsed = parse_paste(paste)
        except PasteTooBig as exc:
            raise DeskRefusal("err_too_big", 413) from exc
        good = [x for x in parsed if isinstance(x, LogLine)]
        bad = tuple(x for x in parsed if isinstance(x, BadLine))
        if not parsed:
            raise DeskRefusal("err_no_lines")
        self.limit("lines", "client", visitor.client, now)
        self.limit("lines", "host", scope.shown, now)
        requests = self.backend.requests_near(scope, [x.t for x in good], NEAR_S) if good else []
        signed = self.backend.signature_ok(signature, good[0], scope) if signature.strip() and good else None
        p = self.profile
        verdicts = tuple(judge(line, egress=p.egress.ips, user_agent=p.user_agent, requests=requests,
                               signature=signed if i == 0 else None) for i, line in enumerate(good))
        return Lines(scope, verdicts, bad)

    # --- a proof of control -------------------------------------------------------------------------
    def give(self, visitor: Visitor, host: str, method: str, now: float) -> Given:
        scope = parse_scope(host)
        if scope is None or method not in ("http", "dns"):
            raise DeskRefusal("err_host")
        if self.backend.public_suffix(scope.name):
            raise DeskRefusal("err_suffix", host=scope.name)
        if self.backend.private(scope):
            raise DeskRefusal("err_private", host=scope.shown)
        if method == "dns" and not self.backend.has_resolver():
            raise DeskRefusal("f_no_dns")
        if method == "http" and not self.backend.known(scope):
            # The bot reads a proof file only where it has been: the desk never sends it to a new site.
            raise DeskRefusal("err_unknown", host=scope.shown)
        self.limit("token", "client", visitor.client, now)
        self.limit("token", "host", scope.shown, now)
        claimant = csrf.cookie_digest(self.secret, visitor.cookie)
        text, token = new_token(self.random(24), scope.host, "dns" if method == "dns" else "http", claimant, now)
        self.store.put_token(token)
        self.backend.housekeeping(now)
        return Given(text, token, self.where(token))

    def where(self, token: ProofToken) -> str:
        bot = self.profile.name
        return dns_name(token.host, bot) if token.method == "dns" else proof_url(token.host, bot)

    def check(self, visitor: Visitor, text: str, ask: bool, now: float) -> Checked:
        """Look at a token's proof (``ask``: have the bot read the file if it has not, or read it
        again after a failure). Proven: the token is used up and a session begins."""
        self.limit("check", "client", visitor.client, now)
        token = self.store.get_token(proof_digest(text.strip())) if text.strip() else None
        if token is None:
            return Checked(ProofOutcome("expired", "expired"), None)
        claimant = csrf.cookie_digest(self.secret, visitor.cookie)
        where = self.where(token)
        if token.method == "dns":
            try:
                answers = self.backend.txt(where) if ask else None
            except NoResolver:
                return Checked(ProofOutcome("failed", "no_dns"), token, where)
            outcome = judge_dns(token, claimant, answers, now) if ask else ProofOutcome("waiting", "not_asked")
        else:
            record = self.backend.url_record(where)
            skipped = self.backend.skipped(where, token.asked_at) if token.state == "asked" else None
            outcome = judge_http(token, claimant, record, skipped, now)
            if ask and outcome.outcome in ("waiting", "failed") and (token.state == "issued"
                                                                     or outcome.outcome == "failed"):
                if token.asks >= MAX_ASKS:
                    return Checked(ProofOutcome("failed", "asks"), token, where)
                self.limit("fetch", "host", token.host, now)
                fresh = asked(token, now)
                if self.store.swap_token(token, fresh):
                    self.backend.ask_fetch(proof_work(token, self.profile.name, now))
                token, outcome = fresh, ProofOutcome("waiting", "queued")
        if outcome.outcome != "proven":
            return Checked(outcome, token, where)
        done = used(token, now)
        if not self.store.swap_token(token, done):
            return Checked(ProofOutcome("used", "used_once"), token, where)  # a replay that raced the first use
        cookie = self.new_cookie()
        scope = parse_scope(token.host)
        assert scope is not None
        self.store.put_session(Session(sid=csrf.cookie_digest(self.secret, cookie), host=token.host, name=scope.name,
                                       port=scope.port, expires=now + SESSION_S, proof=outcome.reason))
        return Checked(outcome, done, where, session=cookie)

    # --- a proven site ------------------------------------------------------------------------------
    def session(self, visitor: Visitor, now: float) -> Session:
        """The visitor's proven host; ``DeskRefusal`` (403) when it has none."""
        if not visitor.session:
            raise DeskRefusal("err_not_proven", 403)
        found = self.store.get_session(csrf.cookie_digest(self.secret, visitor.session), now)
        if found is None:
            raise DeskRefusal("err_not_proven", 403)
        return found

    @staticmethod
    def scope(session: Session) -> Scope:
        return Scope(host=session.host, name=session.name, port=session.port)

    @staticmethod
    def scope_of(token: ProofToken) -> Scope:
        found = parse_scope(token.host)
        assert found is not None  # a token's host was a scope's
        return found

    def site(self, visitor: Visitor, now: float, rows: int = 200) -> Site:
        session = self.session(visitor, now)
        self.limit("host", "client", visitor.client, now)
        scope = self.scope(session)
        return Site(session, self.backend.audit(scope, rows), self.backend.kept(scope))

    def explain(self, visitor: Visitor, url: str, now: float) -> tuple[Site, dict[str, Any] | None]:
        site = self.site(visitor, now)
        scope = self.scope(site.session)
        if not scope.covers(url.strip()):
            raise DeskRefusal("err_not_on_site", host=scope.shown)
        return site, self.backend.explain(scope, url.strip(), now)

    # --- stop, slow down, remove ---------------------------------------------------------------------
    def act(self, visitor: Visitor, kind: str, now: float, gap: str = "") -> DeskAction:
        session = self.session(visitor, now)
        scope = self.scope(session)
        self.limit("action", "host", scope.name, now)
        reason = f"site owner: asked on the desk at {_iso(now)} UTC (proof: {session.proof} on {session.host})"
        detail: dict[str, Any]
        try:
            if kind == "stop":
                self.backend.block(scope.name, reason, now)
                detail = {"blocked": scope.name, "reason": reason}
            elif kind == "slow":
                try:
                    seconds = int(gap)
                except ValueError:
                    seconds = -1
                if seconds not in gap_choices(self.profile):
                    raise DeskRefusal("err_gap")
                hosts = self.backend.slow(scope, float(seconds), now)
                detail = {"min_delay_s": seconds, "hosts": hosts}
            elif kind == "remove":
                detail = self.backend.purge(scope.name, now)
            else:
                raise DeskRefusal("err_not_found", 404)
        except HeedError as exc:
            raise DeskRefusal("err_busy", 503) from exc
        action = DeskAction(kind=kind, name=scope.name, at=now, client=visitor.client,
                            detail={**detail, "host": session.host, "proof": session.proof})
        self.store.record(action)
        self.backend.notify(action)
        return action

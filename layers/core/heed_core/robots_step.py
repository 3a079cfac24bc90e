"""The robots.txt step of a host turn (COMMON-02): is the cached copy good, what to ask, what an answer means.

A copy is kept per authority. Its life counts from the start of the round that read it
(SPRING-09, AUBE-12: the next round of a daily or 15-minute schedule reads it anew), but it
always serves at least ``MIN_SERVE_S`` after the request that read it, so work that outlived
its round (a retry, a late hop) never finds the copy it just read already expired and asks
again and again."""
from __future__ import annotations

import base64
import json
import zlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from heed_core.extract.challenge import is_challenge
from heed_core.hoststate import INLINE_AUX_BYTES, HostView, TokenOut
from heed_core.politeness import after_request
from heed_core.ports import FetchResult
from heed_core.profile import Profile
from heed_core.responses import REDIRECT_STATUSES, classify
from heed_core.robots import effective_delay
from heed_core.robots_policy import RobotsCacheError, RobotsFetchPolicy, RobotsOutcome, robots_from_response
from heed_core.urls import Refused, authority, origin, resolve, short_hash
from heed_core.work import WorkItem

__all__ = ["HOP_WAIT_S", "RobotsSettled", "answer_of", "answer_token", "cached_outcome", "expiry", "hop_token",
           "is_answer", "is_hop", "request_url", "settle_robots"]

ERROR_CACHE_S = 600.0  # a robots.txt 5xx/unreachable outcome is asked again after 10 minutes
MIN_SERVE_S = 300.0  # a copy serves at least this long after the request that read it
HOP_TTL_S = 3600.0
HOP_WAIT_S = 300.0  # a hop handed to another host is handed again if no answer came by then
# The answer a hop's host sends back rides in an SQS message (256 KiB): the body goes zlib'd and
# base64'd up to this many characters (a robots.txt is text; 500 KiB of it packs far smaller).
_ANSWER_CHARS = 180_000
_ANSWER_HEADERS = frozenset({"location", "content-type", "content-encoding", "retry-after", "content-usage"})

_parsed: OrderedDict[tuple[str, float], RobotsOutcome] = OrderedDict()  # parse once per copy, not per turn
_PARSED_MAX = 512


def expiry(t_end: float, round_start: float, ttl: float) -> float:
    """When a copy read at ``t_end`` for work of the round started at ``round_start`` expires."""
    anchor = round_start if round_start and round_start <= t_end else t_end
    return max(anchor + ttl, t_end + min(ttl, MIN_SERVE_S))


def cached_outcome(view: HostView, policy: RobotsFetchPolicy, now: float) -> RobotsOutcome | None:
    """The cached outcome if it is still good at ``now`` (rebuilt under the bot's current policy,
    so a changed ``robots.on_*`` applies to a copy read before), else None: none cached, expired,
    the big copy missing from the aux item or older than the pointer, or a record that no longer
    decodes. Parses a copy once and reuses it (keyed by host and stamp). Never raises."""
    meta = view.robots
    if not meta or float(meta.get("exp", 0.0)) <= now:
        return None
    stamp = float(meta.get("stamp", 0.0))
    rec = meta.get("rec")
    if rec is None:
        aux = view.aux.get("robots") or {}
        if float(aux.get("stamp", -1.0)) != stamp:
            return None  # the big copy never landed (or is older): read robots.txt again
        rec = aux.get("rec")
    key = (view.host, stamp)
    hit = _parsed.get(key)
    if hit is not None:
        _parsed.move_to_end(key)
        return hit
    try:
        outcome = RobotsOutcome.from_dict(rec or {}, policy)
    except RobotsCacheError:
        return None
    _parsed[key] = outcome
    if len(_parsed) > _PARSED_MAX:
        _parsed.popitem(last=False)
    return outcome


def request_url(view: HostView, now: float) -> tuple[str, int]:
    """The URL to read next and the hops behind it: the host's ``/robots.txt`` (0 hops), or the
    redirect target reached so far (RFC 9309 2.3.1.2) while that hop is fresh."""
    hop = view.robots_hop
    if hop and float(hop.get("exp", 0.0)) > now:
        return str(hop["url"]), int(hop["hops"])
    return origin(view.host) + "/robots.txt", 0


@dataclass(frozen=True)
class RobotsSettled:
    """What one robots.txt answer leads to beyond the host view: a big copy to put beside the
    host item first (``aux``), or the site's request to stop (``stop``: until when and why, and
    whether the host stops or the source closes, with the ``detail``); ``redirected``: the
    answer was a redirect hop, to be read next."""

    aux: dict[str, Any] | None = None  # a big copy to put beside the host item before the commit
    stop: tuple[float, str] | None = None  # SPRING-05 / PRAHA-07: (until, reason) the site asked us to stop
    stop_action: str = "stop_host"
    redirected: bool = False
    detail: str = ""


def settle_robots(profile: Profile, view: HostView, result: FetchResult, hops: int, round_start: float,
                  now: float, *, paced: bool = True) -> RobotsSettled:
    """Record what one robots.txt answer means in ``view`` (changed in place) and return what
    leaves it. A redirect within ``robots.max_redirects`` becomes the next hop (COMMON-06); a 429
    or a challenge page is the site asking us to stop (SPRING-05, PRAHA-07); anything else is
    the outcome the bot's status policy gives (parsed rules, allow all, deny all, skip the host:
    SPRING-10, SUBSIDIE-11), cached from the start of ``round_start``'s round for
    ``robots.cache_ttl_s`` (10 minutes for a 5xx or unreachable) and at least ``MIN_SERVE_S``
    after this read. A Crawl-delay now known lengthens the gap after this very request, up to
    the bot's cap. Pure; never raises for a bad body."""
    t_end = result.t_end or now
    min_delay = profile.politeness.min_delay_s
    hop = resolve(result.url, result.header("Location") or "") if result.status in REDIRECT_STATUSES else None
    nxt = None if hop is None or isinstance(hop, Refused) else str(hop)  # as a browser reads the Location
    if nxt is not None and hops < profile.robots.max_redirects:
        # COMMON-06: each hop is its own request, paced on the host it goes to.
        view.robots_hop = {"url": nxt, "hops": hops + 1, "exp": t_end + HOP_TTL_S}
        return RobotsSettled(redirected=True)
    view.robots_hop = None
    challenge = is_challenge(result.status, result.headers, result.body)
    if result.status == 429 or challenge:
        # SPRING-05 / PRAHA-07: "too many requests" (or a challenge) on robots.txt is the site
        # asking us to stop, not a missing file: stop the host, or close the source.
        answer = classify(result, responses=profile.responses, retries_used_today=0, now=now,
                          challenge=challenge)
        return RobotsSettled(stop=(answer.until or now, answer.reason), stop_action=answer.action,
                             detail=answer.detail)
    policy = profile.robots_policy
    outcome = robots_from_response(result.status, result.error, result.body, policy)
    ttl = profile.robots.cache_ttl_s
    if outcome.reason in ("robots_server_error", "robots_unreachable"):
        ttl = min(ttl, ERROR_CACHE_S)
    rec = outcome.to_dict()
    meta: dict[str, Any] = {"exp": expiry(t_end, round_start, ttl), "stamp": t_end}
    aux = None
    if len(json.dumps(rec)) <= INLINE_AUX_BYTES:
        meta["rec"] = rec
    else:
        aux = {"stamp": t_end, "rec": rec}
    view.robots = meta
    _parsed[(view.host, t_end)] = outcome
    if paced and outcome.kind == "parsed" and outcome.robots is not None:
        # The Crawl-delay now known lengthens the gap after this very request (``paced``: it was
        # this host's; a hop's answer from another host paced that one).
        delay = effective_delay(min_delay, outcome.robots.crawl_delay(profile.robots_token),
                                profile.politeness.crawl_delay_cap_s)
        view.pacing = after_request(view.pacing, profile.politeness, t_end, delay)
    return RobotsSettled(aux=aux)


# --- a robots.txt redirect to another host: work on that host's own turn (COMMON-06) ---------------------
#
# Host A's robots.txt answers a redirect to host B. A never requests B's URL itself (that request is
# B's to pace, and B's item is B's to write): A's plan hands B a work item for the hop, and B's turn
# makes the request under B's gap and sends the answer back to A as a work item of its own, which
# A's next turn settles as if it had made the request. Both hand-offs are tokens in an outbox.

def is_hop(item: WorkItem) -> bool:
    """A robots.txt hop this host makes for another host (``ctx.hop_for``)."""
    return bool(item.ctx.get("hop_for"))


def is_answer(item: WorkItem) -> bool:
    """The answer another host got to a hop of this host's robots.txt (``ctx.answer``)."""
    return isinstance(item.ctx.get("answer"), dict)


def hop_token(view: HostView, url: str, hops: int, item: WorkItem) -> TokenOut:
    """The token that hands the hop to ``url`` (the ``hops``-th redirect of ``view``'s robots.txt)
    to the host ``url`` is on. Its id names the two hosts, the URL and the hop: sent twice, it is
    taken in once."""
    work = WorkItem(url=url, purpose="robots", task=item.task, source_id=item.source_id, source_url=item.source_url,
                    round_id=item.round_id, round_start=item.round_start, ctx={"hop_for": view.host, "hops": hops})
    target = authority(url)
    # (the hop entry's expiry tells one redirect of the file apart from a later one to the same URL)
    stamp = str(int(float((view.robots_hop or {}).get("exp", 0.0))))
    return TokenOut(target, short_hash(view.host, "hop", url, str(hops), stamp), (work,))


def answer_token(item: WorkItem, result: FetchResult) -> TokenOut:
    """The answer to the hop ``item`` (made here, for ``item.ctx.hop_for``), as work for that host."""
    packed = base64.b64encode(zlib.compress(result.body, 9)).decode("ascii")
    cut = len(packed) > _ANSWER_CHARS
    if cut:  # too big for a message: the part that fits (a robots.txt is read from its start)
        keep = len(result.body)
        while cut and keep > 1024:
            keep //= 2
            packed = base64.b64encode(zlib.compress(result.body[:keep], 9)).decode("ascii")
            cut = len(packed) > _ANSWER_CHARS
    answer: dict[str, Any] = {"u": result.url, "s": result.status, "e": result.error, "t0": result.t_start,
                              "t1": result.t_end, "b": packed, "x": bool(result.truncated or cut),
                              "h": [[k, v] for k, v in result.headers if k.lower() in _ANSWER_HEADERS]}
    home = str(item.ctx["hop_for"])
    work = WorkItem(url=origin(home) + "/robots.txt", purpose="robots", task=item.task, source_id=item.source_id,
                    source_url=item.source_url, round_id=item.round_id, round_start=item.round_start,
                    ctx={"answer": answer, "hops": int(item.ctx.get("hops", 0))})
    return TokenOut(home, short_hash(item.work_id, "answer", str(result.t_end)), (work,))


def answer_of(item: WorkItem) -> tuple[FetchResult, int]:
    """The hop's answer an ``is_answer`` item carries, as the response it was, and its hop count."""
    a = item.ctx["answer"]
    try:
        body = zlib.decompress(base64.b64decode(str(a.get("b") or "")))
    except (ValueError, zlib.error):
        body = b""
    headers = tuple((str(k), str(v)) for k, v in a.get("h") or ())
    status = int(a["s"]) if a.get("s") is not None else None
    return (FetchResult(url=str(a.get("u") or item.url), status=status, headers=headers, body=body,
                        t_start=float(a.get("t0") or 0.0), t_end=float(a.get("t1") or 0.0),
                        error=a.get("e"), truncated=bool(a.get("x"))), int(item.ctx.get("hops", 0)))

"""Conformance helpers (G1): recording sites on 127.0.0.100-139 and bots run through the real stack.

A test builds a small web with ``Web``, runs a bot with ``run_bot`` (whole rounds, as
``heed local run`` does) or ``SteppedRun`` (fire rounds and move the clock by hand), then
asserts on what the sites logged and on the run's output files."""
from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from email.utils import formatdate
from itertools import pairwise
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from xml.sax.saxutils import escape

import pytest
import yaml

from heed_core.profile import Profile, load_profile_data
from heed_core.work import Source

from heed.demo.web import RecordingServer, RequestRecord, Route, Site
from heed.local.runtime import REGION, LocalRun

__all__ = [
    "BLOCK_IP", "G1_IPS", "FeedEntry", "RunOutput", "Scenario", "SteppedRun", "Web", "at", "cookie_routes",
    "derived", "feed_route", "gaps", "html_page", "listing", "overlaps", "path_of", "robots", "rss",
    "Background", "run_bot", "sim_times", "sitemap_index", "slow", "start_cli_run", "urlset", "with_cookie",
]

# G1's loopback addresses; G2 uses 127.0.0.140-179, the demo web 127.0.0.10 upward. Sites take
# them in turn (a port of their own makes each a distinct host); the last one is kept for the
# operator block-list test, since a block names a domain, whatever the port.
G1_IPS = tuple(f"127.0.0.{n}" for n in range(100, 140))
BLOCK_IP = G1_IPS[-1]
_next_ip = itertools.cycle(G1_IPS[:-1])


# --- time -------------------------------------------------------------------------------------

def at(text: str) -> float:
    """Epoch seconds of an ISO 8601 UTC time, e.g. ``at("2026-12-01T10:00:00Z")``."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def sim_times(requests: Iterable[Mapping[str, Any]]) -> list[float]:
    """The simulated start time of each record of requests.jsonl (the clock the bot lives by)."""
    return [at(r["t_start"]) for r in requests]


# --- profiles ---------------------------------------------------------------------------------

def derived(bot: str, **sections: Any) -> Profile:
    """A built-in bot with some keys replaced (deep merge), e.g. small delays to prove a
    rule's shape in seconds: ``derived("aubebot", politeness={"min_delay_s": 0.2})``."""
    return load_profile_data({"extends": bot, **sections})


# --- the sites ----------------------------------------------------------------------------------

def robots(text: str) -> Route:
    return Route(body=text, content_type="text/plain; charset=utf-8")


def html_page(title: str, body: str = "", head: str = "") -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>{head}</head>"
            f"<body>{body}</body></html>")


@dataclass(frozen=True)
class FeedEntry:
    """One RSS item; ``link`` may hold ``{{base}}``. ``extra`` is raw XML added to the item."""

    title: str
    link: str
    summary: str = "Breve."
    extra: str = ""
    published: float = 1796025600.0  # 2026-12-01T08:00:00Z


def rss(entries: Sequence[FeedEntry], *, title: str = "Tech", channel_extra: str = "") -> str:
    items = "".join(
        f"<item><title>{escape(e.title)}</title><link>{escape(e.link)}</link><guid>{escape(e.link)}</guid>"
        f"<description>{escape(e.summary)}</description><pubDate>{formatdate(e.published, usegmt=True)}</pubDate>"
        f"{e.extra}</item>" for e in entries)
    return ('<?xml version="1.0" encoding="UTF-8"?><rss version="2.0" '
            'xmlns:media="http://search.yahoo.com/mrss/" xmlns:dc="http://purl.org/dc/elements/1.1/">'
            f"<channel><title>{escape(title)}</title><link>{{{{base}}}}/</link>{channel_extra}{items}"
            "</channel></rss>")


def feed_route(entries: Sequence[FeedEntry], **kwargs: Any) -> Route:
    return Route(body=rss(entries, **kwargs), content_type="application/rss+xml; charset=utf-8", conditional=True)


_SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def urlset(paths: Sequence[str]) -> Route:
    """A sitemap listing ``paths`` of the site it is served from."""
    urls = "".join(f"<url><loc>{{{{base}}}}{p}</loc><lastmod>2026-11-30</lastmod></url>" for p in paths)
    return Route(body=f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{_SITEMAP_NS}">{urls}</urlset>',
                 content_type="application/xml")


def sitemap_index(children: Sequence[str]) -> Route:
    """A sitemap index naming the child sitemaps at ``children`` on the same site."""
    maps = "".join(f"<sitemap><loc>{{{{base}}}}{c}</loc></sitemap>" for c in children)
    return Route(body=f'<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="{_SITEMAP_NS}">{maps}'
                      "</sitemapindex>", content_type="application/xml")


class Web:
    """Recording sites, each on its own G1 loopback address; ``stop()`` stops them all."""

    def __init__(self) -> None:
        self.servers: list[RecordingServer] = []

    def site(self, name: str, routes: Mapping[str, Route], fallback: Route | None = None,
             ip: str | None = None) -> RecordingServer:
        server = RecordingServer(Site(name=name, routes=routes, fallback=fallback), ip=ip or next(_next_ip))
        self.servers.append(server)
        return server.start()

    def stop(self) -> None:
        for server in self.servers:
            server.stop()
        self.servers.clear()

    def log(self) -> list[RequestRecord]:
        """Every request any site saw, oldest first."""
        return sorted((r for s in self.servers for r in s.log()), key=lambda r: r.t_start)


@pytest.fixture
def web() -> Iterator[Web]:
    w = Web()
    yield w
    w.stop()


# --- what the sites saw -------------------------------------------------------------------------

def path_of(url: str) -> str:
    """The request target of ``url`` as a site logs it: path and query."""
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def gaps(log: Sequence[RequestRecord]) -> list[float]:
    """Seconds from the end of each request to the start of the next (AUBE-09's measure)."""
    return [b.t_start - a.t_end for a, b in pairwise(log)]


def overlaps(log: Sequence[RequestRecord]) -> list[tuple[RequestRecord, RequestRecord]]:
    """Pairs of requests that were in flight at the same time."""
    ordered = sorted(log, key=lambda r: r.t_start)
    return [(a, b) for a, b in pairwise(ordered) if b.t_start < a.t_end]


# --- running a bot ------------------------------------------------------------------------------

def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@dataclass(frozen=True)
class RunOutput:
    """The four output files of a run, read back; ``stored`` is everything the stack kept
    (DynamoDB items and S3 objects) as text, when the run captured it."""

    dir: Path
    summary: dict[str, Any]
    requests: list[dict[str, Any]]
    items: list[dict[str, Any]]
    skips: list[dict[str, Any]]
    stored: str = ""

    @classmethod
    def read(cls, out_dir: Path, stored: str = "") -> RunOutput:
        summary = json.loads((out_dir / "summary.json").read_text(encoding="utf-8"))
        return cls(out_dir, summary, _jsonl(out_dir / "requests.jsonl"), _jsonl(out_dir / "items.jsonl"),
                   _jsonl(out_dir / "skips.jsonl"), stored)

    def skipped(self, reason: str) -> list[dict[str, Any]]:
        return [s for s in self.skips if s.get("reason") == reason]

    def found(self, detail_type: str = "item.found") -> list[dict[str, Any]]:
        return [i for i in self.items if i.get("detail_type") == detail_type]

    def requested(self, purpose: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.requests if purpose is None or r.get("purpose") == purpose]


def run_bot(profile: Profile, sources: Sequence[Source], out_dir: Path, *, start: float,
            until: float | None = None, patience_s: float = 3.0) -> RunOutput:
    """Whole rounds through the real scheduler and fetcher handlers on moto: a round at
    ``start`` and at each schedule firing up to ``until`` (the clock jumps between rounds)."""
    run = LocalRun(profile, list(sources), start=start, until=until if until is not None else start,
                   out_dir=out_dir, allow_private=True, patience_s=patience_s)
    run.run()
    return RunOutput.read(out_dir)


@dataclass
class SteppedRun:
    """The stack driven by hand: ``round(t, tasks)`` fires the scheduler at ``t`` and drains;
    ``advance_to(t)`` moves the clock, letting deferred work (retries, gaps) come due on the
    way. ``finish()`` writes the output files and returns them."""

    profile: Profile
    sources: Sequence[Source]
    out_dir: Path
    start: float
    patience_s: float = 3.0
    run: LocalRun = field(init=False)
    _closed: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self.run = LocalRun(self.profile, list(self.sources), start=self.start, until=self.start,
                            out_dir=self.out_dir, allow_private=True, patience_s=self.patience_s)
        self.run.setup()

    def __enter__(self) -> SteppedRun:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._closed:
            self.finish()

    @property
    def now(self) -> float:
        return self.run.clock.now()

    @property
    def store(self) -> Any:
        from heed_aws import runtime

        return runtime.store()

    def round(self, t: float, tasks: Sequence[str] | None = None) -> None:
        self.advance_to(t)
        self.run.fire(t, list(tasks) if tasks else sorted({s.task for s in self.profile.schedules}))
        self.run.drain()

    def advance_to(self, t: float) -> None:
        """Move the simulated clock to ``t``, stopping at each deferred token that comes due
        before it (as the real queue would hand it back) and draining the queue there."""
        while True:
            now_wall = time.time()
            # moto keeps visibility in wall-clock seconds; a visible message left in the queue
            # waits behind its FIFO group's hidden head, which is the one that counts.
            hidden = [v for v, _ in self.run.hidden_tokens() if v > now_wall]
            due = [self.now + (v - now_wall) for v in hidden]
            soonest = min(due) if due else None
            if soonest is None or soonest > t:
                jumped = self.run.clock.jump_to(t)
                if jumped:
                    self.run.release_hidden(jumped)
                return
            jumped = self.run.clock.jump_to(soonest)
            self.run.release_hidden(jumped + 0.001)
            self.run.drain()

    def invoke_concurrently(self, copies: int, stagger_s: float = 0.0) -> None:
        """Take the next work token and hand it, plus ``copies - 1`` duplicates, to fetcher
        invocations running at once (``stagger_s`` apart), as Lambda does when a token's
        visibility runs out while its first holder is still at work; then drain the queue."""
        lr = self.run
        first = lr.sqs.receive_message(QueueUrl=lr.res.queue_url, MaxNumberOfMessages=1,
                                       AttributeNames=["All"])["Messages"]
        lr.watch.received(first)
        for n in range(1, copies):
            # Another message group: the queue hands it out while the first is still held.
            lr.sqs.send_message(QueueUrl=lr.res.queue_url, MessageBody=first[0]["Body"],
                                MessageGroupId=f"copy-{n}", MessageDeduplicationId=f"copy-{n}-{time.time()}")
        others = lr.sqs.receive_message(QueueUrl=lr.res.queue_url, MaxNumberOfMessages=10,
                                        AttributeNames=["All"]).get("Messages", [])
        lr.watch.received(others)
        threads = []
        for i, msg in enumerate(first + others):
            threads.append(threading.Thread(target=lr.invoke, args=([msg],)))
            threads[-1].start()
            time.sleep(stagger_s if i < copies - 1 else 0)
        for t in threads:
            t.join()
        lr.drain()

    def stored_text(self) -> str:
        """Every DynamoDB item and S3 object of the stack, as one text to search."""
        import boto3

        session = boto3.session.Session(region_name=REGION)
        db, s3 = session.client("dynamodb"), session.client("s3")
        parts: list[str] = []
        for page in db.get_paginator("scan").paginate(TableName=self.run.res.table_name):
            parts += [json.dumps(_readable(item), sort_keys=True, ensure_ascii=False) for item in page["Items"]]
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=self.run.res.bucket):
            for obj in page.get("Contents", []):
                body = s3.get_object(Bucket=self.run.res.bucket, Key=obj["Key"])["Body"].read()
                parts.append(obj["Key"] + "\n" + body.decode("utf-8", "replace"))
        return "\n".join(parts)

    def finish(self, *, capture: bool = False) -> RunOutput:
        stored = self.stored_text() if capture else ""
        self._closed = True
        self.run.out.close({"bot": self.profile.name, "rounds": self.run.rounds,
                            "invocations": self.run.invocations})
        self.run.close()
        return RunOutput.read(self.out_dir, stored)


def _readable(item: Mapping[str, Any]) -> dict[str, Any]:
    """A DynamoDB item with its binary attributes (zlib-compressed JSON) opened up to search."""
    import zlib

    out: dict[str, Any] = {}
    for key, value in item.items():
        if "B" in value:
            try:
                out[key] = zlib.decompress(bytes(value["B"])).decode("utf-8")
            except (zlib.error, UnicodeDecodeError):
                out[key] = repr(value["B"])
        else:
            out[key] = value
    return out


# --- shipped profiles, run as a user runs them, in the background ---------------------------------

@dataclass
class Background:
    """``heed local run`` of an untouched built-in profile in a subprocess. A test module that
    defines ``start_in_background() -> Background`` gets it started as soon as the tests are
    collected (see ``pytest_collection_finish``), so the real waits of the shipped numbers
    (SpringStudioBot: 10 s between requests) pass while the other tests run."""

    web: Web
    sites: dict[str, RecordingServer]
    workdir: Path
    proc: subprocess.Popen[str]

    def result(self, timeout_s: float = 120.0) -> RunOutput:
        _, stderr = self.proc.communicate(timeout=timeout_s)
        assert self.proc.returncode == 0, stderr
        return RunOutput.read(self.workdir / "out")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()
        self.web.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


def start_cli_run(bot: str, web: Web, sites: dict[str, RecordingServer], sources: list[dict[str, Any]], *,
                  start: str, patience_s: float) -> Background:
    workdir = Path(tempfile.mkdtemp(prefix=f"heed-g1-{bot}-"))
    (workdir / "sources.yaml").write_text(yaml.safe_dump({"sources": sources}), encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "heed.cli", "local", "run", "--bot", bot, "--sources", "sources.yaml",
         "--allow-private", "--out", "out", "--start", start, "--patience", str(patience_s)],
        cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return Background(web, sites, workdir, proc)


_BACKGROUND: dict[str, Background] = {}


def pytest_collection_finish(session: pytest.Session) -> None:
    for item in session.items:
        module = getattr(item, "module", None)
        starter = getattr(module, "start_in_background", None)
        if starter is not None and "background" in getattr(item, "fixturenames", ()):
            key = str(module.__file__)
            if key not in _BACKGROUND:
                _BACKGROUND[key] = starter()


def pytest_sessionfinish(session: pytest.Session) -> None:
    for bg in _BACKGROUND.values():
        bg.close()
    _BACKGROUND.clear()


@pytest.fixture(scope="module")
def background(request: pytest.FixtureRequest) -> Background:
    """This module's background run (started at collection, or now if it was not)."""
    key = str(request.module.__file__)
    if key not in _BACKGROUND:
        _BACKGROUND[key] = request.module.start_in_background()
    return _BACKGROUND[key]


# --- page bits the scenarios share ----------------------------------------------------------------

# What no bot may touch on any page (COMMON-04, AUBE-07): script, login form, stylesheet, images.
PAGE_TRAPS = ("<script src='/js/app.js'></script><link rel='stylesheet' href='/css/site.css'>"
              "<form method='post' action='/login'><input name='user'><input type='password' name='pw'></form>"
              "<img src='/img/hero.jpg' alt=''>")
TRAP_PREFIXES = ("/js/", "/css/", "/login")  # and /img/, which AubeBot promises apart (AUBE-07)
COOKIE: tuple[tuple[str, str], ...] = (("Set-Cookie", "sid=g1-session; Path=/"), ("Set-Cookie", "consent=no; Path=/"))


def with_cookie(route: Route) -> Route:
    """The same route, setting cookies a bot must neither keep nor send back (COMMON-04)."""
    return Route(body=route.body, status=route.status, content_type=route.content_type,
                 headers=route.headers + COOKIE, conditional=route.conditional,
                 last_modified=route.last_modified, location=route.location)


def cookie_routes(routes: Mapping[str, Route]) -> dict[str, Route]:
    return {path: with_cookie(r) for path, r in routes.items()}


def listing(items: Sequence[tuple[str, str]], *, byline: str = "Kari Nordmann") -> str:
    """A news listing: headline links with a time, an author byline, a teaser and a comment."""
    arts = "".join(
        f"<article><h2><a href='{link}'>{escape(title)}</a></h2>"
        f"<time datetime='2026-12-01T0{i % 10}:00:00Z'>i dag</time>"
        f"<p class='byline'>Av <span class='author'>{byline}</span></p>"
        f"<p class='teaser'>Innleggstekst {i}: hemmelig-brodtekst-{i}.</p>"
        f"<div class='comment'><span class='user'>bruker_{i}_ola</span> skrev: kommentar {i}</div></article>"
        for i, (title, link) in enumerate(items))
    return html_page("Nyheter", f"<main>{arts}</main>{PAGE_TRAPS}")


def slow(route: Route, seconds: float) -> Route:
    """The same route answering ``seconds`` late (a request that takes time, AUBE-09)."""
    inner = route.body

    def body(hit: Any) -> Any:
        time.sleep(seconds)
        return inner(hit) if callable(inner) else inner
    return Route(body=body, status=route.status, content_type=route.content_type, headers=route.headers,
                 conditional=route.conditional, last_modified=route.last_modified, location=route.location)


@dataclass
class Scenario:
    """A finished run and the sites it ran against, by name."""

    sites: dict[str, RecordingServer]
    out: RunOutput


# --- scenarios shared by several rule files ----------------------------------------------------------

START = at("2026-12-01T06:00:00Z")  # a Tuesday, SpringStudioBot's daily hour


@pytest.fixture(scope="session")
def spring_pacing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    """SpringStudioBot's shape with small delays (0.3 s, Crawl-delay cap 1.7 s; the shipped
    10 s / 60 s are in tests/unit/test_profiles.py::test_spring_08_shipped_numbers): three hosts,
    a listing page each, one without Crawl-delay, one with 1.6 s, one asking for 30 s.
    (Deferred work comes back after whole seconds, so a gap the rule allows below 1 s shows as
    about 1 s: the Crawl-delays are above that to tell them from the minimum gap.)"""
    w = Web()
    page = Route(body=lambda hit: (time.sleep(0.05), listing([("Sak", "/sak/1")]))[1])
    sites = {name: w.site(name, {"/robots.txt": robots(text), "/liste/1/": page})
             for name, text in (("jevn", "User-agent: *\nDisallow: /privat/\n"),
                                ("rolig", "User-agent: SpringStudioBot\nCrawl-delay: 1.6\n"),
                                ("treg", "User-agent: *\nCrawl-delay: 30\n"))}
    profile = derived("springstudiobot", politeness={"min_delay_s": 0.3, "crawl_delay_cap_s": 1.7})
    sources = [Source(n, f"{s.base_url}/liste/1/", "page") for n, s in sites.items()]
    try:
        out = run_bot(profile, sources, tmp_path_factory.mktemp("spring_pacing"), start=START)
        yield Scenario(sites, out)
    finally:
        w.stop()


@pytest.fixture(scope="session")
def spring_redirects(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    """SpringStudioBot (0.4 s gap, one redirect hop allowed): a listing moved to another host,
    a page redirected into that host's closed area, and on a third host a redirect chain."""
    w = Web()
    ny = w.site("ny", {"/robots.txt": robots("User-agent: *\nDisallow: /stengt/\n"),
                       "/ny/": Route(body=listing([("Flyttet sak", "/sak/9")]))})
    gammel = w.site("gammel", {
        "/robots.txt": robots("User-agent: *\nAllow: /\n"),
        "/gammel/": Route(status=301, location=f"{ny.base_url}/ny/"),
        "/rundt/": Route(status=302, location=f"{ny.base_url}/stengt/side/"),
    })
    kjede = w.site("kjede", {
        "/robots.txt": robots("User-agent: *\nAllow: /\n"),
        "/kjede/0": Route(status=301, location="/kjede/1"),
        "/kjede/1": Route(status=301, location="/kjede/2"),
        "/kjede/2": Route(body=listing([("Enden", "/sak/2")])),
    })
    profile = derived("springstudiobot", politeness={"min_delay_s": 0.4}, redirects={"max_hops": 1})
    sources = [Source("gammel", f"{gammel.base_url}/gammel/", "page"),
               Source("rundt", f"{gammel.base_url}/rundt/", "page"),
               Source("kjede", f"{kjede.base_url}/kjede/0", "page")]
    try:
        out = run_bot(profile, sources, tmp_path_factory.mktemp("spring_redirects"), start=START)
        yield Scenario({"ny": ny, "gammel": gammel, "kjede": kjede}, out)
    finally:
        w.stop()


# AubeBot's RFC 9309 host: the `*` group closes everything, AubeBot's own group (named in lower
# case) opens all but /news/ (except /news/public/), PDFs at the end of a path, and /tie/ where an
# Allow and a Disallow of the same length meet (Allow wins).
RFC_ROBOTS = """User-agent: *
Disallow: /

User-agent: aubebot
Disallow: /news/
Allow: /news/public/
Disallow: /*.pdf$
Allow: /tie/
Disallow: /tie/
"""
RFC_ALLOWED = ("/a/1", "/news/public/y", "/tie/z", "/files/doc.pdf?v=1")
RFC_DISALLOWED = ("/news/x", "/files/doc.pdf")
LONG = "Un sommario lungo e completo. " * 30  # 900 characters: the feed suffices (AUBE-03)
IMAGE_BITS = ("<enclosure url='{{base}}/img/e.jpg' type='image/jpeg' length='1000'/>"
              "<media:content url='{{base}}/img/m.jpg' medium='image'/>")


def _article(title: str, text: str, head: str = "") -> str:
    links = "".join(f"<a href='/art/altro/{i}'>altro {i}</a> <a href='/tag/{i}'>tag</a>" for i in range(3))
    return html_page(title, f"<main><article><h1>{escape(title)}</h1><p>{text}</p>"
                            f"<img src='/img/art.jpg'></article><nav>{links}</nav></main>{PAGE_TRAPS}",
                     head=f"<meta property='og:image' content='/img/og.jpg'>{head}")


PAYWALL_HEAD = ('<script type="application/ld+json">{"@context": "https://schema.org", "@type": "NewsArticle",'
                ' "headline": "Premium", "isAccessibleForFree": false}</script>')
PAID_TEXT = "SEGRETO-PAGATO: il testo intero per gli abbonati"


@pytest.fixture(scope="session")
def aube_round(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    """One AubeBot round over nine hosts (no minimum gap, Crawl-delay cap 1.2 s, a per-source
    article cap of 20 so the RFC host's six candidates are all decided by robots.txt; the shipped
    numbers are proven in test_aube.py's shipped-profile test and tests/unit/test_profiles.py)."""
    w = Web()
    sites = {
        "rfc": w.site("rfc", cookie_routes({
            "/robots.txt": robots(RFC_ROBOTS),
            "/feed.xml": feed_route([FeedEntry(f"RFC {p}", "{{base}}" + p) for p in RFC_ALLOWED + RFC_DISALLOWED]),
        }), fallback=Route(body=_article("Articolo", "Testo libero."))),
        "big": w.site("big", cookie_routes({
            "/robots.txt": robots("User-agent: *\nAllow: /\n"),
            "/feed.xml": feed_route(
                [FeedEntry(f"Notizia {i}", f"{{{{base}}}}/n/{i}",
                           summary=LONG + f"<img src='{{{{base}}}}/img/d{i}.jpg'>", extra=IMAGE_BITS
                           + "<author>kari.nordmann@example.org (Kari Nordmann)</author>"
                           + "<dc:creator>Kari Nordmann</dc:creator>")
                 for i in range(45)],
                channel_extra="<image><url>{{base}}/img/logo.png</url><title>T</title><link>{{base}}/</link></image>"),
        }), fallback=Route(body=_article("Non richiesto", "Mai."))),
        "short": w.site("short", cookie_routes({
            "/robots.txt": robots("User-agent: *\nAllow: /\n"),
            "/feed.xml": feed_route([FeedEntry("Breve", "{{base}}/art/599", summary="s" * 599, extra=IMAGE_BITS),
                                     FeedEntry("Giusto", "{{base}}/art/600", summary="s" * 600),
                                     FeedEntry("Lungo", "{{base}}/art/long", summary=LONG)]),
        }), fallback=Route(body=_article("Articolo breve", "Il testo dell'articolo."))),
        "paywall": w.site("paywall", cookie_routes({
            "/robots.txt": robots("User-agent: *\nAllow: /\n"),
            "/feed.xml": feed_route([FeedEntry("Premium", "{{base}}/premium/1", summary="Solo abbonati.")]),
            "/premium/1": Route(body=_article("Premium", PAID_TEXT, head=PAYWALL_HEAD).replace(
                "<article>", "<article class='paywall'>")),
        })),
        "closed": w.site("closed", cookie_routes({
            "/robots.txt": robots("User-agent: AubeBot\nDisallow: /feed\n"),
            "/feed.xml": feed_route([FeedEntry("Chiuso", "{{base}}/c/1", summary="Breve.")]),
        })),
        "slowpoke": w.site("slowpoke", cookie_routes({
            "/robots.txt": robots("User-agent: *\nCrawl-delay: 30\n"),
            "/feed.xml": feed_route([FeedEntry("Lento", "{{base}}/l/1", summary=LONG)]),
        })),
    }
    # Two feeds that link one article on a third host, read in the same round (AUBE-03).
    shared = w.site("shared", {"/robots.txt": robots("User-agent: *\nAllow: /\n"),
                               "/art/shared": Route(body=_article("Condiviso", "Testo condiviso."))})
    for twin in ("twin1", "twin2"):
        sites[twin] = w.site(twin, {"/robots.txt": robots("User-agent: *\nAllow: /\n"), "/feed.xml": feed_route(
            [FeedEntry("Condiviso", shared.base_url + "/art/shared", summary="Breve.")])})
    profile = derived("aubebot", politeness={"min_delay_s": 0, "crawl_delay_cap_s": 1.2},
                      tasks={"feed": {"article_followup": {"per_source_per_window": 20}}})
    sources = [Source(name, f"{s.base_url}/feed.xml", "feed") for name, s in sites.items()]
    try:
        t = at("2026-12-01T10:00:00Z")
        with SteppedRun(profile, sources, tmp_path_factory.mktemp("aube_round"), start=t) as run:
            run.round(t)
            out = run.finish(capture=True)
        yield Scenario({**sites, "shared": shared}, out)
    finally:
        w.stop()

"""WANNADO-01..11: WannadoBot's sitemap-led agenda rounds, robots.txt, pacing and rendering.

Scenarios: ``wannado-agenda`` (rounds at 05:00 and 17:00 over five venues and a render service,
the waits at 1/300: 6-7 minutes between pages become 1.2-1.4 s), ``wannado-real`` (the
profile's own waits: 1.5 s between requests, and the second page of the round not within the
run's patience, six minutes away) and ``wannado-model`` (the language-model path of WANNADO-10,
with a local stand-in for the model provider's Converse endpoint, on the aws stack)."""
from __future__ import annotations

import html
import json
import os
import re
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import pairwise
from typing import Any
from urllib.parse import parse_qs, urlsplit

from heed_core.work import Source

from heed.conformance.deploy import reverse_dns
from heed.conformance.model import Bound, Proof, Rule, Runs, Scenario, secs, utc
from heed.conformance.runner import Bench
from heed.conformance.sites import TRAPS, free_address, html_page, jsonld, robots, urlset
from heed.conformance.stack import Output
from heed.demo.web import Hit, Route

__all__ = ["rules", "scenarios"]

DAY5, DAY17 = utc("2026-12-01T05:00"), utc("2026-12-01T17:00")
SCALE = 1 / 300
FIELDS = ("name", "start", "location", "price", "description", "image", "url")
COOKIE = (("Set-Cookie", "bezoeker=42; Path=/"),)


def _event(base: str, slug: str, name: str, url: str | None = None) -> dict[str, Any]:
    return {"name": name, "startDate": "2026-12-20T20:15:00+01:00", "url": url or f"/agenda/{slug}/",
            "description": f"{name}: een avond vol verhalen.", "image": f"{base}/img/{slug}.jpg",
            "location": {"@type": "Place", "name": "Het Veerhuis, Grote zaal"},
            "offers": {"@type": "Offer", "price": "24.50", "priceCurrency": "EUR"}}


def _theater(base: str) -> dict[str, Route]:
    agenda = html_page("Agenda", "<h1>Agenda</h1><a href='/nieuws/opening'>Nieuws</a><img src='/pixel.gif?t=1'>"
                       "<iframe src='/consent/dialog.html'></iframe>",
                       head=jsonld([_event(base, "de-storm", "De Storm"),
                                    _event(base, "gala", "Nieuwjaarsgala", url="https://tickets.example.com/gala")])
                       + '<script src="/consent.js"></script>')
    jazz = html_page("Jazzavond", '<div itemscope itemtype="https://schema.org/MusicEvent"><h1 itemprop="name">'
                     'Jazzavond</h1><time itemprop="startDate" datetime="2026-12-27T21:00:00+01:00">27 dec</time>'
                     '<span itemprop="location" itemscope itemtype="https://schema.org/Place"><span itemprop="name">'
                     'Kleine zaal</span></span><span itemprop="offers" itemscope itemtype="https://schema.org/Offer">'
                     '<meta itemprop="price" content="15.00"><meta itemprop="priceCurrency" content="EUR"></span>'
                     '<p itemprop="description">Swing in de kleine zaal.</p><img itemprop="image" src="/img/jazz.jpg">'
                     '<a itemprop="url" href="/programma/jazz-avond">Meer</a></div>')
    return {"/robots.txt": robots("User-agent: *\nDisallow: /agenda/\n\nUser-agent: WannadoBot\nDisallow: /intern/\n"),
            "/sitemap.xml": urlset(["/", "/agenda/", "/programma/jazz-avond", "/over-ons", "/nieuws/opening",
                                    "/contact", "/intern/agenda-rooster"]),
            "/agenda/": Route(body=agenda, conditional=True, headers=COOKIE),
            "/programma/jazz-avond": Route(body=jazz, conditional=True, headers=COOKIE)}


def _render_service(hit: Hit) -> str:
    """A stand-in for the external render service: it loads the page itself, with the user agent
    it is given, and returns the DOM the page's script would build."""
    query = parse_qs(urlsplit(hit.path).query)
    url, agent = query["url"][0], query["userAgent"][0]
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(urllib.request.Request(url, headers={"User-Agent": agent}), timeout=5) as resp:
        page = resp.read().decode("utf-8")
    found = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    return html_page("Agenda", jsonld(json.loads(html.unescape(found.group(1))) if found else []))


def _play_agenda(b: Bench) -> Output:
    s = b.sites
    s.add("theater", _theater)
    s.add("museum", lambda base: {
        "/robots.txt": robots("User-agent: *\nCrawl-delay: 0.1\nDisallow: /\n\nUser-agent: wannadobot\n"
                              "Crawl-delay: 1.6\nAllow: /\n"),
        "/sitemap.xml": urlset(["/tentoonstelling/licht"]),
        "/tentoonstelling/licht": Route(body=html_page("Licht", jsonld([_event(base, "licht", "Licht en schaduw")])))})
    s.add("storing", {"/robots.txt": Route(body="<h1>503</h1>", status=503), "/sitemap.xml": urlset(["/agenda/"])})
    s.add("zaal", {"/robots.txt": robots("User-agent: *\nAllow: /\n"),
                   "/sitemap.xml": urlset(["/tickets/mijn-account", "/voorstelling/verhalen"]),
                   "/tickets/mijn-account": Route(body=html_page("Inloggen", "<form method=post action=/login>"),
                                                  status=401, headers=(("WWW-Authenticate", 'Basic realm="klanten"'),)),
                   "/voorstelling/verhalen": Route(body=html_page("Verhalen", "<p>Vrijdag 20:00, entree 8 euro.</p>"))})
    s.add("jsvenue", lambda base: {
        "/robots.txt": robots("User-agent: *\nAllow: /\n"), "/sitemap.xml": urlset(["/agenda"]),
        "/agenda": Route(body=html_page("Agenda", '<div id="app">Laden…</div><script src="/app.js"></script>'
                                        '<script type="application/json" id="data">'
                                        f'{json.dumps([_event(base, "poppen", "Poppenkast")])}</script>')),
        "/app.js": Route(body="render()", content_type="text/javascript")})
    render = s.add("render", {"/render": Route(body=_render_service)})
    sources = [Source(n, s.base(n) + "/", "agenda") for n in ("theater", "museum", "storing", "zaal")]
    sources.append(Source("jsvenue", s.base("jsvenue") + "/", "agenda", {"render": True}))
    # WANNADO-09 needs a render service: the shipped profile names none, a stand-in is given here.
    profile = b.derived({"tasks": {"agenda": {"render_endpoint": render + "/render"}}})
    stack = b.stack(profile, sources, DAY5 - 60)
    stack.round(DAY5, ["agenda"])
    stack.round(DAY17, ["agenda"])
    return stack.finish()


def _play_real(b: Bench) -> Output:
    pol = b.profile.politeness
    b.extra["scale"] = scale = min(1.0, 3.0 / max(pol.min_delay_s, 1e-9))
    base = b.sites.add("echt", {"/robots.txt": robots("User-agent: *\nAllow: /\n"),
                                "/sitemap.xml": urlset(["/agenda/1", "/agenda/2"]),
                                "/agenda/1": Route(body=html_page("1")), "/agenda/2": Route(body=html_page("2"))})
    stack = b.stack(b.derived(scale=scale), [Source("echt", base + "/", "agenda")], DAY5 - 60, patience_s=3.0)
    stack.round(DAY5, ["agenda"])
    return stack.finish()


# --- WANNADO-10's language model: a stand-in for the provider ----------------------------------------
MODEL_ID = "conformance.stand-in-model"
ENDPOINT_ENV = "AWS_ENDPOINT_URL_BEDROCK_RUNTIME"  # botocore's endpoint of the bedrock-runtime client
MODEL_ANSWER = [{"name": "Verhalenavond", "start": "2026-12-18T20:00", "location": "Kleine zaal",
                 "price": "EUR 8.00", "description": "Verhalen bij kaarslicht.", "image": None,
                 "url": "/voorstelling/verhalen"}]


class _Provider(ThreadingHTTPServer):
    """The model provider's Converse endpoint as the bot meets it: it logs each request (path,
    JSON body) and answers with ``MODEL_ANSWER`` as the model's text."""

    daemon_threads = True

    def __init__(self, ip: str) -> None:
        self.asked: list[tuple[str, dict[str, Any]]] = []
        super().__init__((ip, 0), _ProviderHandler)
        self.url = f"http://{ip}:{self.server_address[1]}"
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


class _ProviderHandler(BaseHTTPRequestHandler):
    server: _Provider

    def do_POST(self) -> None:  # noqa: N802 - the http.server name
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            sent = json.loads(body)
        except ValueError:
            sent = {"unreadable": body.decode("utf-8", "replace")}
        self.server.asked.append((self.path, sent))
        answer = json.dumps({"output": {"message": {"role": "assistant",
                                                    "content": [{"text": json.dumps(MODEL_ANSWER)}]}},
                             "stopReason": "end_turn", "usage": {"inputTokens": 1, "outputTokens": 1,
                                                                 "totalTokens": 2},
                             "metrics": {"latencyMs": 1}}).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the http.server name
        pass


def _play_model(b: Bench) -> Output:
    base = b.sites.add("podium", lambda base: {
        "/robots.txt": robots("User-agent: *\nAllow: /\n"),
        "/sitemap.xml": urlset(["/agenda/", "/voorstelling/verhalen"]),
        "/agenda/": Route(body=html_page("Agenda", "<h1>Agenda</h1>",
                                         head=jsonld([_event(base, "storm", "De Storm")]))),
        # No structured data: only here may the model be asked.
        "/voorstelling/verhalen": Route(body=html_page(
            "Verhalenavond", "<main><h1>Verhalenavond</h1><p>Vrijdag 18 december, 20:00, Kleine zaal. "
                             f"Entree 8 euro.</p></main>{TRAPS}"))})
    provider = _Provider(free_address(b.sites))
    b.extra["model"] = provider.asked
    profile = b.derived({"tasks": {"agenda": {"extractor": "bedrock", "bedrock_model_id": MODEL_ID}}})
    before = os.environ.get(ENDPOINT_ENV)
    os.environ[ENDPOINT_ENV] = provider.url
    try:
        stack = b.stack(profile, [Source("podium", base + "/", "agenda")], DAY5 - 60)
        stack.round(DAY5, ["agenda"])
        return stack.finish()
    finally:
        if before is None:
            os.environ.pop(ENDPOINT_ENV, None)
        else:
            os.environ[ENDPOINT_ENV] = before
        provider.stop()


def scenarios() -> list[Scenario]:
    return [Scenario("wannado-agenda", SCALE, "two agenda rounds over five venues and a render service", _play_agenda),
            Scenario("wannado-real", 1, "the profile's own waits on one venue", _play_real),
            # Bedrock is an AWS service: the embedded engine has no language-model path.
            Scenario("wannado-model", SCALE, "a venue page without structured data and a stand-in model provider",
                     _play_model, engine="aws")]


# --- the checks -----------------------------------------------------------------------------------

def _events(r: Runs) -> list[dict[str, Any]]:
    return r["wannado-agenda"].out.of("event.found")


def _w01(r: Runs) -> Proof:
    proof, seen = Proof(), r["wannado-agenda"]
    events = _events(r)
    proof.that(bool(events) and all(e["page"].startswith(seen.bases[e["source"]] + "/") for e in events),
               f"{len(events)} events, each with its venue's own page")
    venues = sorted({e["source"] for e in events})
    proof.that({"theater", "museum", "jsvenue"} <= set(venues),
               f"events from every venue with an agenda in structured data ({', '.join(venues)})")
    storm = next((e for e in events if e["name"] == "De Storm"), {})
    proof.that(storm.get("url") == seen.bases["theater"] + "/agenda/de-storm/", "a relative event link made absolute")
    gala = next((e for e in events if e["name"] == "Nieuwjaarsgala"), {})
    proof.that(gala.get("url") == "https://tickets.example.com/gala" and gala.get("page") == seen.bases["theater"]
               + "/agenda/", "an event sold by a ticket shop keeps the shop's link and still links its venue page")
    return proof


def _w02(r: Runs) -> Proof:
    proof, seen = Proof(), r["wannado-agenda"]
    agents = {x.header("User-Agent") for x in seen.every()}
    proof.that(agents == {r.profile.user_agent}, f"one fixed user agent on {len(seen.every())} requests")
    proof.extend(reverse_dns(r))
    return proof


def _w03(r: Runs) -> Proof:
    proof, seen = Proof(), r["wannado-agenda"]
    every = seen.every()
    proof.that({x.method for x in every} == {"GET"} and not [x for x in every if x.header("Authorization")],
               f"{len(every)} requests, all GET, no credentials")
    proof.that(seen.paths("zaal").count("/tickets/mijn-account") == 2 and "/login" not in seen.paths("zaal"),
               "a 401 account page asked once a round, no login posted")
    proof.that(not [e for e in _events(r) if "mijn-account" in e["page"]], "nothing taken from it")
    return proof


def _w04(r: Runs) -> Proof:
    proof, seen = Proof(), r["wannado-agenda"]
    proof.that("/agenda/" in seen.paths("theater") and "/tentoonstelling/licht" in seen.paths("museum"),
               "the WannadoBot group opened what `*` closes")
    refused = [x for x in seen.out.skipped("robots_disallowed", "theater")
               if x["url"].endswith("/intern/agenda-rooster")]
    proof.that("/intern/agenda-rooster" not in seen.paths("theater") and bool(refused),
               "its Disallow obeyed: /intern/agenda-rooster not asked, recorded as robots_disallowed")
    proof.that(set(seen.paths("storing")) == {"/robots.txt"}
               and bool(seen.out.skipped("robots_unavailable", "storing")),
               "robots.txt answering 503: nothing else fetched")
    return proof


def _w05(r: Runs) -> Proof:
    proof, real, seen = Proof(), r["wannado-real"], r["wannado-agenda"]
    g, least = real.gaps("echt"), 1.5 * real.extra["scale"]
    proof.that(real.paths("echt") == ["/robots.txt", "/sitemap.xml", "/agenda/1"] and bool(g) and min(g) >= least,
               f"the profile's own waits: {secs(min(g, default=0))} between requests, the second page of the round "
               "not within the run (minutes away)")
    proof.that(real.out.summary.get("deferred_at_end", 0) >= 1 or "/agenda/2" not in real.paths("echt"),
               "that page left waiting")
    g = seen.gaps("museum")
    proof.that(bool(g) and min(g) >= 1.6,
               f"Crawl-delay 1.6 of its group (not 0.1 of `*`): min {secs(min(g, default=0))}")
    least = r.profile.politeness.min_delay_s * SCALE
    g = [x for s in ("theater", "zaal", "jsvenue") for x in seen.gaps(s)]
    proof.that(bool(g) and min(g) >= least, f"the other venues: min gap {secs(min(g, default=0))} over {len(g)} gaps "
                                            f"(1.5 s at 1/300: >= {secs(least)})")
    spacing = r.profile.politeness.round_spacing_s * SCALE
    for site, first, second in (("theater", "/agenda/", "/programma/jazz-avond"),
                                ("zaal", "/tickets/mijn-account", "/voorstelling/verhalen")):
        pairs = [b.t_start - a.t_end for a, b in pairwise(seen.log(site)) if a.path == first and b.path == second]
        proof.that(len(pairs) == 2 and min(pairs) >= spacing,
                   f"{site}: two pages of the site in each of 2 rounds {secs(min(pairs, default=0))} apart "
                   f"(6 min at 1/300: >= {secs(spacing)})")
    proof.that(not seen.overlaps(), "never two requests in flight to one site")
    return proof


def _w06(r: Runs) -> Proof:
    proof, seen = Proof(), r["wannado-agenda"]
    venues = ("theater", "museum", "zaal", "jsvenue")
    proof.that(all(seen.paths(s)[:2] == ["/robots.txt", "/sitemap.xml"] for s in venues),
               "every venue: robots.txt, then sitemap.xml")
    proof.that(set(seen.paths("theater")) == {"/robots.txt", "/sitemap.xml", "/agenda/", "/programma/jazz-avond"},
               "only programme and ticket pages followed, no link walked")
    skipped = {"/" + x["url"].split("/", 3)[-1] for x in seen.out.skipped("not_followed", "theater")}
    proof.that({"/", "/over-ons", "/nieuws/opening", "/contact"} <= skipped,
               "the rest of its sitemap (/, /over-ons, /nieuws/opening, /contact) recorded as not_followed")
    return proof


def _w07(r: Runs) -> Proof:
    proof, seen = Proof(), r["wannado-agenda"]
    for path in ("/agenda/", "/programma/jazz-avond"):
        visits = [x for x in seen.log("theater") if x.path == path]
        proof.that([x.status for x in visits] == [200, 304] and bool(visits[1:]) and visits[1].bytes == 0
                   and not visits[0].header("If-None-Match")
                   and bool(visits[1].header("If-None-Match")) and bool(visits[1].header("If-Modified-Since")),
                   f"{path}: first asked plainly, then with If-None-Match and If-Modified-Since; the unchanged "
                   "page cost a 304 with no body")
    unchanged = {x["url"] for x in seen.out.skipped("not_modified", "theater")}
    proof.that(seen.bases["theater"] + "/agenda/" in unchanged, "the 304 recorded as not_modified")
    return proof


def _w08(r: Runs) -> Proof:
    proof, seen = Proof(), r["wannado-agenda"]
    proof.that(not [x for x in seen.every() if x.header("Cookie") or x.header("Referer") or x.header("DNT")],
               "no cookie sent back, no tracking header")
    touched = [p for p in seen.paths("theater") + seen.paths("jsvenue")
               if p.startswith(("/consent", "/pixel", "/app.js"))]
    proof.that(not touched, "no consent script or dialog, no pixel loaded")
    return proof


def _w09(r: Runs) -> Proof:
    proof, seen = Proof(), r["wannado-agenda"]
    ua = r.profile.user_agent
    asks = [parse_qs(urlsplit(x.path).query) for x in seen.log("render")]
    page = seen.bases["jsvenue"] + "/agenda"
    proof.that(bool(asks) and all(q.get("userAgent") == [ua] and q.get("url") == [page] for q in asks),
               f"the render service was asked {len(asks)} times, each for the JavaScript agenda and with the bot's "
               "user agent")
    pages = [x for x in seen.log("jsvenue") if x.path == "/agenda"]
    proof.that(len(pages) == len(asks) and {x.header("User-Agent") for x in pages} == {ua},
               f"the venue saw {len(pages)} loads of it, with that same agent")
    proof.that([e["name"] for e in _events(r) if e["source"] == "jsvenue"] == ["Poppenkast"], "its events extracted")
    if r.profile.agenda.render_endpoint:
        proof.note("the profile's render_endpoint replaced by a local stand-in for the run")
    else:
        # The shipped profile names no service: its JavaScript agendas yield no events until one is set.
        proof.note("tasks.agenda.render_endpoint is not set in this profile: the run used a local stand-in, "
                   "deploy with one for JavaScript agendas")
    return proof


def _w10(r: Runs) -> Proof:
    proof, seen = Proof(), r["wannado-agenda"]
    by_name = {e["name"]: e for e in _events(r)}
    for name, fmt in (("De Storm", "json-ld"), ("Jazzavond", "microdata")):
        e = by_name.get(name, {})
        missing = [k for k in FIELDS if not e.get(k)]
        proof.that(e.get("format") == fmt and not missing,
                   f"{fmt}: all seven facts" + (f" but {missing}" if missing else ""))
    storm, jazz = by_name.get("De Storm", {}), by_name.get("Jazzavond", {})
    proof.that(str(storm.get("image", "")).startswith(seen.bases["theater"] + "/img/")
               and "24.5" in str(storm.get("price")) and "15" in str(jazz.get("price")),
               "the image an absolute link on the venue, the prices as the pages give them (24.50, 15.00)")
    proof.extend(_model(r))
    return proof


def _model(r: Runs) -> Proof:
    """The language-model path (extractor: bedrock), with a stand-in provider: asked only for the
    page without structured data, sent only its text and URL, its answer an event like any other."""
    proof, seen = Proof(), r["wannado-model"]
    base = seen.bases["podium"]
    asked = seen.extra["model"]
    urls = [re.search(r"Page URL: (\S+)", _prompt(sent)) for _, sent in asked]
    proof.that([m.group(1) if m else None for m in urls] == [base + "/voorstelling/verhalen"]
               and all(path == f"/model/{MODEL_ID}/converse" for path, _ in asked),
               f"language model (a stand-in provider, extractor: bedrock): asked {len(asked)} time(s), only for "
               "the page without structured data, never for the one with JSON-LD")
    texts = [_prompt(sent).split("<<<PAGE TEXT", 1)[-1] for _, sent in asked]
    proof.that(bool(texts) and all("Verhalenavond" in t and "Entree 8 euro" in t and "<" not in t.split(
        "PAGE TEXT>>>")[0] for t in texts) and all(set(sent) == {"system", "messages", "inferenceConfig"}
                                                  for _, sent in asked),
               "it was sent only the page's text and URL (no markup, no scripts, no headers, no cookies)")
    events = {e["name"]: e for e in seen.out.of("event.found")}
    told, storm = events.get("Verhalenavond", {}), events.get("De Storm", {})
    proof.that(told.get("format") == "llm" and told.get("page") == base + "/voorstelling/verhalen"
               and told.get("url") == base + "/voorstelling/verhalen" and storm.get("format") == "json-ld",
               "its answer became an event linking the venue's page; the JSON-LD page's event came from the page")
    proof.note("extraction only: the provider is sent the extraction prompt and the page, no training use")
    return proof


def _prompt(sent: dict[str, Any]) -> str:
    try:
        return "".join(c.get("text", "") for m in sent.get("messages", []) for c in m.get("content", []))
    except (AttributeError, TypeError):
        return ""


def _w11(r: Runs) -> Proof:
    proof, seen = Proof(), r["wannado-agenda"]
    sites = ("theater", "museum", "zaal", "jsvenue")
    proof.that(all(seen.paths(s).count("/robots.txt") == 1 and seen.paths(s).count("/sitemap.xml") == 2 for s in sites),
               "two rounds in a day: robots.txt read once per site, the sitemap twice")
    return proof


def rules() -> list[Rule]:
    pol, ag = "politeness.", "tasks.agenda."
    return [
        Rule("WANNADO-01", "Public agenda pages; every event links back to the venue's own page.", (), _w01),
        Rule("WANNADO-02", "One fixed user agent; fixed IPs with forward-confirmed reverse DNS, listed in "
                           "/crawler/ips.json.", (Bound("egress.ips", "set"), Bound("egress.reverse_dns", "set"),
                                                  Bound("egress.ips_json_path", "set")), _w02, deployment=True),
        Rule("WANNADO-03", "GET only, only pages open to every visitor.", (), _w03),
        Rule("WANNADO-04", "robots.txt: the WannadoBot group, else `*`; unreadable by a server error: nothing fetched.",
             (Bound("robots.on_5xx", "==", "deny"),), _w04),
        Rule("WANNADO-05", "At least 1.5 s between requests to a site, longer if Crawl-delay asks; 6-7 minutes "
                           "between two pages in the daily round.",
             (Bound(pol + "min_delay_s", ">=", 1.5), Bound(pol + "round_spacing_s", ">=", 360),
              Bound((pol + "round_spacing_s", pol + "round_spacing_jitter_s"), "<=", 420),
              Bound(pol + "crawl_delay_cap_s", ">=", 86400.0)), _w05),
        Rule("WANNADO-06", "Starts at sitemap.xml and follows only programme or ticket pages; never walks blindly.",
             (Bound(ag + "start", "==", "sitemap"), Bound(ag + "follow_patterns", "set")), _w06),
        Rule("WANNADO-07", "If-None-Match and If-Modified-Since: an unchanged page costs a 304.",
             (Bound("conditional_requests", "==", True),), _w07),
        Rule("WANNADO-08", "No cookies, no tracking, consent dialogs not loaded.", (), _w08),
        Rule("WANNADO-09", "JavaScript agendas go through a render service sending the same user agent.", (), _w09,
             binds=(ag + "render_endpoint",)),
        Rule("WANNADO-10", "Name, date, place, price, description, image and link extracted, structured data first.",
             (Bound(ag + "extractor", "in", ("structured", "bedrock")),), _w10),
        Rule("WANNADO-11", "robots.txt fetched at most once a day per site.",
             (Bound("robots.cache_ttl_s", ">=", 86400),), _w11),
    ]

"""The bundled demo web: recording servers on 127.0.0.x, and sites shaped like the promises need."""
from __future__ import annotations

import gzip
import json
import re
import threading
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import urlsplit

import feedparser
import pytest
import requests
import yaml
from protego import Protego

from heed.demo.sites import SITE_ORDER, load_site
from heed.demo.sources import BOTS, demo_sources, write_sources
from heed.demo.web import DemoWeb, RecordingServer, Route, Site, redirect

SM = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


@pytest.fixture(scope="module")
def web():
    with DemoWeb() as w:
        yield w


def get(url: str, **kw) -> requests.Response:
    kw.setdefault("timeout", 5)
    kw.setdefault("allow_redirects", False)
    return requests.get(url, **kw)


def raw(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """urllib: no automatic decompression, so the test sees the bytes on the wire."""
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, dict(r.headers.items()), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers.items()), e.read()


def jsonld(html_text: str) -> list[dict]:
    blocks = re.findall(r'<script type="application/ld\+json">(.*?)</script>', html_text, re.S)
    return [json.loads(b) for b in blocks]


# -- the machinery -------------------------------------------------------------------

def test_demo_web_starts_and_stops_well_under_a_second_on_distinct_loopback_ips():
    # GIVEN the whole demo web
    t0 = time.monotonic()
    w = DemoWeb()
    urls = w.start()
    started = time.monotonic()
    # THEN every site has its own 127.0.0.x (from .10 up) and answers
    hosts = [urlsplit(u).hostname for u in urls.values()]
    assert list(urls) == list(SITE_ORDER)
    assert len(set(hosts)) == len(hosts)
    assert all(h.startswith("127.0.0.") and int(h.rsplit(".", 1)[1]) >= 10 for h in hosts)
    assert get(urls["nyheter"] + "/robots.txt").status_code == 200
    t1 = time.monotonic()
    w.stop()
    stopped = time.monotonic()
    assert started - t0 < 1.0 and stopped - t1 < 1.0
    # AND after stop nothing listens any more
    with pytest.raises(requests.ConnectionError):
        get(urls["nyheter"] + "/robots.txt", timeout=1)


def test_log_records_method_path_query_headers_status_bytes_and_server_times(web):
    web.reset_log()
    url = web.urls["nyheter"] + "/nyheter/?utm_source=test"
    before = time.time()
    r = get(url, headers={"User-Agent": "SpringStudioBot/1.0 (+https://springstudio.no/springstudiobot)",
                          "Accept-Encoding": "identity"})
    after = time.time()
    [rec] = web.log("nyheter")
    assert rec.method == "GET" and rec.path == "/nyheter/?utm_source=test"
    assert rec.host == urlsplit(url).netloc
    assert rec.header("user-agent").startswith("SpringStudioBot/1.0")
    assert rec.status == r.status_code == 200 and rec.bytes == len(r.content) > 0
    # t_end is read once the write returned: the client may have the bytes a moment earlier.
    assert before <= rec.t_start <= rec.t_end <= after + 0.05
    # the other sites saw nothing
    assert [x for x in web.log() if x.host != rec.host] == []


def test_log_is_complete_under_concurrent_requests_and_reset_empties_it(web):
    web.reset_log()
    paths = [f"/nyheter/?n={i}" for i in range(20)]
    threads = [threading.Thread(target=get, args=(web.urls["nyheter"] + p,)) for p in paths]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r.path for r in web.log("nyheter")) == sorted(paths)
    web.reset_log()
    assert web.log() == []


def test_common_04_anything_but_get_answers_405_and_is_logged(web):
    web.reset_log()
    base = web.urls["aube-feeds"]
    assert requests.post(base + "/feed/", data={"a": "1"}, timeout=5).status_code == 405
    head = requests.head(base + "/feed/", timeout=5)
    assert head.status_code == 405 and head.headers["Allow"] == "GET"
    assert requests.put(base + "/feed/", data=b"x", timeout=5).status_code == 405
    log = web.log("aube-feeds")
    assert [(r.method, r.status) for r in log] == [("POST", 405), ("HEAD", 405), ("PUT", 405)]


def test_aube_02_conditional_get_with_etag_gives_304_and_no_body(web):
    url = web.urls["aube-feeds"] + "/feed/"
    first = get(url)
    etag, lm = first.headers["ETag"], first.headers["Last-Modified"]
    web.reset_log()
    again = get(url, headers={"If-None-Match": etag, "If-Modified-Since": lm})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["ETag"] == etag
    [rec] = web.log("aube-feeds")
    assert rec.status == 304 and rec.bytes == 0


def test_wannado_07_if_modified_since_alone_gives_304_and_a_stale_etag_does_not(web):
    url = web.urls["theater"] + "/agenda/big-band-avond/"
    lm = get(url).headers["Last-Modified"]
    assert get(url, headers={"If-Modified-Since": lm}).status_code == 304
    assert get(url, headers={"If-Modified-Since": "Mon, 01 Jan 2024 00:00:00 GMT"}).status_code == 200
    # RFC 9110: If-None-Match wins over If-Modified-Since
    stale = get(url, headers={"If-None-Match": '"not-this-one"', "If-Modified-Since": lm})
    assert stale.status_code == 200 and b"Big Band" in stale.content


def test_unknown_path_is_404_and_a_route_can_change_while_running(web):
    base = web.urls["aube-busy"]
    assert get(base + "/nope").status_code == 404
    # e.g. AUBE-12 / SPRING-09: a site owner edits robots.txt between two visits
    web.set_route("aube-busy", "/robots.txt", Route("User-agent: AubeBot\nDisallow: /\n", content_type="text/plain"))
    try:
        assert get(base + "/robots.txt").text == "User-agent: AubeBot\nDisallow: /\n"
    finally:
        web.set_route("aube-busy", "/robots.txt", load_site("aube-busy").routes["/robots.txt"])
    assert "Crawl-delay: 2" in get(base + "/robots.txt").text


def test_common_06_a_redirect_may_point_at_another_site_of_the_web():
    # GIVEN two custom sites, the first sending its visitors to the second
    sites = [Site("a", {"/": redirect("{{url:b}}/landing", 302)}), Site("b", {"/landing": Route("welkom")})]
    with DemoWeb(sites, first_ip=40) as w:
        r = get(w.urls["a"] + "/")
        assert urlsplit(w.urls["a"]).hostname == "127.0.0.40"
        assert r.status_code == 302 and r.headers["Location"] == w.urls["b"] + "/landing"
        assert get(r.headers["Location"]).text == "welkom"
        assert [(urlsplit(w.urls[s]).netloc, p) for s, p in (("a", "/"), ("b", "/landing"))] == \
            [(x.host, x.path) for x in w.log()]


def test_gzip_only_when_the_client_asks(web):
    url = web.urls["aube-feeds"] + "/feed/"
    status, headers, plain = raw(url, {"Accept-Encoding": "identity"})
    assert status == 200 and "Content-Encoding" not in headers and plain.startswith(b"<?xml")
    status, headers, packed = raw(url, {"Accept-Encoding": "gzip, deflate"})
    assert headers["Content-Encoding"] == "gzip" and headers["Vary"] == "Accept-Encoding"
    assert gzip.decompress(packed) == plain and len(packed) < len(plain)
    status, headers, body = raw(url, {"Accept-Encoding": "gzip;q=0"})
    assert "Content-Encoding" not in headers and body == plain


def test_stop_closes_idle_keep_alive_connections():
    site = Site("one", {"/": Route("hello")})
    server = RecordingServer(site, "127.0.0.9").start()
    with requests.Session() as s:
        assert s.get(server.base_url + "/", timeout=5).text == "hello"
        assert s.get(server.base_url + "/", timeout=5).text == "hello"
        clients = {r.client for r in server.log()}
        assert len(clients) == 1  # HTTP/1.1 keep-alive: one connection for both
        server.stop()
        with pytest.raises(requests.ConnectionError):
            s.get(server.base_url + "/", timeout=1)


# -- the sites ------------------------------------------------------------------------

def test_every_site_has_realistic_robots_txt_and_correct_content_types(web):
    for name, base in web.urls.items():
        r = get(base + "/robots.txt")
        if name == "praha-top-plain":
            assert r.status_code == 404  # a site without robots.txt
        elif name == "gemeente-storing":
            assert r.status_code == 503
        else:
            assert r.status_code == 200 and r.headers["Content-Type"] == "text/plain; charset=utf-8"
            assert "User-agent:" in r.text and "{{" not in r.text
    assert get(web.urls["aube-feeds"] + "/feed/").headers["Content-Type"].startswith("application/rss+xml")
    assert get(web.urls["aube-atom"] + "/atom.xml").headers["Content-Type"].startswith("application/atom+xml")
    assert get(web.urls["theater"] + "/sitemap.xml").headers["Content-Type"].startswith("application/xml")


def test_spring_01_listing_has_articles_with_title_link_time_and_bylines_to_ignore(web):
    base = web.urls["nyheter"]
    page = get(base + "/nyheter/").text
    articles = re.findall(r"<article\b.*?</article>", page, re.S)
    assert len(articles) == 6
    for a in articles:
        href = re.search(r'<h2[^>]*><a href="([^"]+)">', a).group(1)
        assert re.search(r'<time datetime="2025-\d\d-\d\dT', a) and 'class="author"' in a
        assert get(base + href).status_code == 200
    assert 'type="application/rss+xml"' in page
    assert feedparser.parse(get(base + "/nyheter/rss.xml").content).entries[0].title == "Ny ferjekai åpner i april"


def test_spring_robots_group_closes_the_private_forum_which_exists(web):
    base = web.urls["nyheter"]
    rp = Protego.parse(get(base + "/robots.txt").text)
    assert not rp.can_fetch(base + "/forum/privat/", "SpringStudioBot")
    assert rp.can_fetch(base + "/nyheter/", "SpringStudioBot")
    assert rp.can_fetch(base + "/forum/", "SpringStudioBot")  # only the bot's own group counts
    assert not rp.can_fetch(base + "/forum/", "SomeOtherBot")
    assert rp.crawl_delay("SpringStudioBot") == 1 and rp.crawl_delay("SomeOtherBot") == 5
    assert get(base + "/forum/privat/").status_code == 200


def test_spring_03_js_app_has_no_items_and_a_sitemap_index_of_three_gzip_children(web):
    base = web.urls["jsapp"]
    app = get(base + "/app/").text
    assert '<div id="root"></div>' in app and "<article" not in app and "<script" in app
    index = ET.fromstring(get(base + "/sitemap.xml").content)
    assert index.tag == SM + "sitemapindex"
    children = [e.text for e in index.iter(SM + "loc")]
    assert len(children) == 3 and all(c.endswith(".xml.gz") for c in children)
    per_child = []
    for child in children:
        status, headers, body = raw(child)
        assert status == 200 and headers["Content-Type"] == "application/gzip"
        locs = [e.text for e in ET.fromstring(gzip.decompress(body)).iter(SM + "loc")]
        per_child.append(locs)
    app_pages = [u for locs in per_child for u in locs if "/app/sak/" in urlsplit(u).path]
    outside = [u for locs in per_child for u in locs if not urlsplit(u).path.startswith("/app/")]
    assert len(app_pages) == 10 and len(outside) == 3
    # more than five new pages in the first two children, and some only in the third
    assert sum("/app/sak/" in u for u in per_child[0] + per_child[1]) > 5
    assert any("/app/sak/" in u for u in per_child[2])
    for u in app_pages + outside:
        assert re.search(r"<title>[^<]+</title>", get(u).text)


def test_praha_01_feeds_link_to_article_pages_on_the_same_site(web):
    base = web.urls["praha-feeds"]
    for path, version, count in (("/aktuality/rss.xml", "rss20", 6), ("/tiskove-zpravy/atom.xml", "atom10", 4)):
        feed = feedparser.parse(get(base + path).content)
        assert not feed.bozo and feed.version == version and len(feed.entries) == count
        for e in feed.entries:
            assert e.link.startswith(base + "/") and e.title and e.published
            assert get(e.link).status_code == 200
    assert "Pod Lipami" in get(base + "/aktuality/rss.xml").content.decode("utf-8")


def test_praha_03_tdm_reservation_by_header_and_by_tdmrep_json(web):
    base = web.urls["praha-feeds"]
    reserved = get(base + "/aktuality/novy-park-u-rybnika/")
    assert reserved.headers["tdm-reservation"] == "1"
    assert "tdm-reservation" not in get(base + "/aktuality/oprava-ulice-pod-lipami/").headers
    rules = get(base + "/.well-known/tdmrep.json").json()
    assert rules == [{"location": "/tiskove-zpravy/*", "tdm-reservation": 1,
                      "tdm-policy": base + "/tdm-politika.json"}]
    rp = Protego.parse(get(base + "/robots.txt").text)
    assert rp.can_fetch(base + "/aktuality/rss.xml", "Praha-X") and not rp.can_fetch(base + "/admin/", "Praha-X")


def test_praha_04_site_check_sites_redirect_name_and_icon(web):
    red, plain = web.urls["praha-top-redirect"], web.urls["praha-top-plain"]
    r = get(red + "/")
    assert r.status_code == 301 and r.headers["Location"] == red + "/cs/"
    home = get(red + "/cs/").text
    assert '<meta property="og:site_name" content="Kulturní Praha">' in home
    assert '<link rel="icon" type="image/png" href="/static/ikona.png">' in home
    icon = get(red + "/static/ikona.png")
    assert icon.headers["Content-Type"] == "image/png" and icon.content.startswith(b"\x89PNG")
    assert get(red + "/favicon.ico").status_code == 404
    assert "<title>Antikvariát U Zlatého klíče</title>" in get(plain + "/").text
    ico = get(plain + "/favicon.ico")
    assert ico.headers["Content-Type"] == "image/x-icon" and ico.content[:4] == b"\x00\x00\x01\x00"


def test_praha_07_challenge_site_answers_403_with_cf_mitigated_everywhere_but_robots(web):
    base = web.urls["praha-top-challenge"]
    for path in ("/", "/favicon.ico", "/any/thing?x=1"):
        r = get(base + path)
        assert r.status_code == 403 and r.headers["cf-mitigated"] == "challenge"
        assert "<title>Just a moment...</title>" in r.text
    assert get(base + "/robots.txt").status_code == 200


def test_wannado_06_sitemap_lists_agenda_programme_tickets_and_unrelated_pages(web):
    base = web.urls["theater"]
    locs = [e.text for e in ET.fromstring(get(base + "/sitemap.xml").content).iter(SM + "loc")]
    paths = [urlsplit(u).path for u in locs]
    for wanted in ("/agenda/", "/programma/", "/tickets/", "/over-ons/", "/contact/", "/intern/rooster/"):
        assert any(p.startswith(wanted) for p in paths), wanted
    assert all(get(u).status_code == 200 for u in locs)
    rp = Protego.parse(get(base + "/robots.txt").text)
    assert not rp.can_fetch(base + "/intern/rooster/", "WannadoBot")
    assert rp.can_fetch(base + "/agenda/", "WannadoBot") and rp.crawl_delay("WannadoBot") == 2


def test_wannado_10_agenda_pages_carry_a_jsonld_graph_of_events(web):
    base = web.urls["theater"]
    locs = [e.text for e in ET.fromstring(get(base + "/sitemap.xml").content).iter(SM + "loc")]
    event_pages = [u for u in locs if re.search(r"/agenda/[^/]+/$", urlsplit(u).path)]
    assert len(event_pages) == 4
    types = set()
    for u in event_pages:
        [data] = jsonld(get(u).text)
        events = [g for g in data["@graph"] if g["@type"] in ("TheaterEvent", "MusicEvent")]
        assert len(events) == 1
        ev = events[0]
        types.add(ev["@type"])
        assert ev["url"] == u and ev["name"] and ev["description"] and ev["image"].startswith(base)
        assert re.match(r"2025-\d\d-\d\dT\d\d:\d\d:00\+0[12]:00$", ev["startDate"])
        assert ev["location"]["address"]["addressLocality"] == "Lindeveen"
        assert ev["offers"]["priceCurrency"] == "EUR" and float(ev["offers"]["price"]) > 0
    assert types == {"TheaterEvent", "MusicEvent"}
    [overview] = jsonld(get(base + "/agenda/").text)
    assert sum(g["@type"].endswith("Event") for g in overview["@graph"]) == 4


def test_subsidie_04_widget_changes_at_every_request_and_one_amount_changes_once():
    # A fresh web: "after the first request" counts from server start.
    with DemoWeb([load_site("gemeente")]) as w:
        base = w.urls["gemeente"]
        main = lambda html: re.search(r"<main.*?</main>", html, re.S).group(0)  # noqa: E731
        a, b = get(base + "/subsidies/sportstimulering/").text, get(base + "/subsidies/sportstimulering/").text
        assert a != b and "Laatst bezocht op" in a and main(a) == main(b)
        amounts = [re.search(r"maximum van (€ [\d.]+)", get(base + "/subsidies/duurzaam-wonen/").text).group(1)
                   for _ in range(3)]
        assert amounts == ["€ 2.500", "€ 3.000", "€ 3.000"]


def test_subsidie_09_noindex_meta_and_x_robots_tag_nofollow(web):
    base = web.urls["gemeente"]
    assert '<meta name="robots" content="noindex">' in get(base + "/subsidies/cultuurfonds/").text
    r = get(base + "/regelingen/tegemoetkoming-meerkosten/")
    assert r.headers["X-Robots-Tag"] == "subsidieupdate: nofollow"
    # the link only that nofollow page gives is not in the sitemap
    assert 'href="/regelingen/bijzondere-bijstand/"' in r.text
    sitemap = get(base + "/sitemap.xml").text
    assert "bijzondere-bijstand" not in sitemap and "/zoeken?q=" in sitemap and "/afval/" in sitemap


def test_subsidie_11_second_municipality_robots_answers_503_but_its_pages_exist(web):
    base = web.urls["gemeente-storing"]
    r = get(base + "/robots.txt")
    assert r.status_code == 503 and r.headers["Retry-After"] == "120"
    assert get(base + "/sitemap.xml").status_code == 200
    assert get(base + "/subsidies/groene-daken/").status_code == 200


def test_aube_01_03_feed_has_50_items_newest_first_with_short_and_long_summaries(web):
    base = web.urls["aube-feeds"]
    feed = feedparser.parse(get(base + "/feed/").content)
    assert not feed.bozo and len(feed.entries) == 50
    dates = [e.published_parsed for e in feed.entries]
    assert dates == sorted(dates, reverse=True)
    lengths = [len(e.summary) for e in feed.entries]
    first40 = lengths[:40]
    assert sum(n < 600 for n in first40) > 5 and sum(n >= 600 for n in first40) > 5
    assert all(n < 600 for n in lengths[40:])  # a bot reading past item 40 would show it
    assert all(get(e.link).status_code == 200 for e in feed.entries[::7])


def test_aube_06_one_article_is_paywalled_yet_carries_its_text(web):
    base = web.urls["aube-feeds"]
    page = get(base + "/articoli/fusione-plasma-sei-minuti/").text
    [data] = jsonld(page)
    assert data["@type"] == "NewsArticle" and data["isAccessibleForFree"] is False
    assert "magneti superconduttori" in page
    free = [jsonld(get(base + f"/articoli/{s}/").text)[0]["isAccessibleForFree"]
            for s in ("satellite-universitario-umidita-campi", "batterie-al-sodio-prima-linea-italiana")]
    assert free == [True, True]


def test_aube_04_atom_host_bans_aubebot_and_busy_host_answers_429(web):
    atom, busy = web.urls["aube-atom"], web.urls["aube-busy"]
    rp = Protego.parse(get(atom + "/robots.txt").text)
    assert not rp.can_fetch(atom + "/atom.xml", "AubeBot/0.1") and rp.can_fetch(atom + "/atom.xml", "Other")
    assert feedparser.parse(get(atom + "/atom.xml").content).version == "atom10"
    r = get(busy + "/rss.xml")
    assert r.status_code == 429 and r.headers["Retry-After"] == "3600"
    assert get(busy + "/robots.txt").status_code == 200


# -- the sources ----------------------------------------------------------------------

def test_sources_point_at_live_urls_on_loopback_for_every_bot(web):
    sources = demo_sources(web.urls)
    assert set(sources) == set(BOTS)
    ids = [s["id"] for srcs in sources.values() for s in srcs]
    assert len(ids) == len(set(ids))
    for bot, srcs in sources.items():
        assert srcs, bot
        for s in srcs:
            assert urlsplit(s["url"]).hostname.startswith("127.0.0.")
            assert get(s["url"]).status_code != 404, s
    kinds = {bot: sorted({s["kind"] for s in srcs}) for bot, srcs in sources.items()}
    assert kinds == {"springstudiobot": ["page"], "praha-x": ["feed", "site_check"], "wannadobot": ["agenda"],
                     "subsidieupdate": ["subsidy"], "aubebot": ["feed"]}
    assert [s.get("write_about", False) for s in sources["praha-x"] if s["kind"] == "feed"] == [True, False]
    assert len([s for s in sources["praha-x"] if s["kind"] == "site_check"]) == 3


def test_write_sources_writes_one_yaml_per_bot(web, tmp_path: Path):
    paths = write_sources(web.urls, tmp_path / "sources")
    assert set(paths) == set(BOTS)
    for bot, path in paths.items():
        assert path.name == f"{bot}.sources.yaml"
        assert yaml.safe_load(path.read_text("utf-8")) == {"sources": demo_sources(web.urls)[bot]}

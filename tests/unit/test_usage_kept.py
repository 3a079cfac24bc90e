"""AIPREF in the crawl: a site's Content-Usage preferences (robots.txt lines, the response header)
decide what a bot keeps of each kind of page, against the uses its profile declares. Played turn
by turn on the fake clock and scripted transport of test_crawl_turns."""
from __future__ import annotations

from typing import Any

import pytest

from heed_core.profile import load_profile

from tests.unit.test_crawl_turns import FEED_CT, HTML_CT, SITE, Reply, Rig, listing, rig, robots, rss

SEARCH_N = "User-agent: *\nAllow: /\nContent-Usage: / search=n\n"
TRAIN_N = "User-agent: *\nAllow: /\nContent-Usage: / train-ai=n\n"
RULE = 'search=n by robots.txt line 3 "Content-Usage: / search=n" (group *)'
SHORT = "short"

EVENT_PAGE = (b"<html><head><title>Agenda</title><script type='application/ld+json'>"
              b'{"@context": "https://schema.org", "@type": "Event", "name": "Concert in de Zaal",'
              b' "startDate": "2024-03-10T20:00:00+01:00", "location": {"@type": "Place", "name": "De Zaal"}}'
              b"</script></head><body><main><h1>Concert in de Zaal</h1></main></body></html>")
SUBSIDY_PAGE = (b"<html><head><title>Subsidie groene daken</title></head><body><main>"
                b"<p>Subsidie voor groene daken: tot de helft van de kosten.</p></main></body></html>")
ARTICLE_PAGE = (b"<html><head><title>Artikel</title></head><body><main><article>"
                b"<p>Der Text des Artikels, den wir behalten wollen.</p></article></main></body></html>")
HOME_PAGE = (b"<html><head><title>Radnice Praha</title><link rel='icon' href='/favicon.ico'></head>"
             b"<body>Home</body></html>")
SITEMAP = (b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
           b"<url><loc>" + SITE.encode() + b"/subsidies/groen</loc></url></urlset>")


# --- one scenario per kind of page: what would be kept, and how to see it kept -------------------
def feed(r: Rig) -> None:  # AubeBot: feed items (and a short summary: an article follow-up)
    r.transport.script(SITE + "/feed.xml", Reply(200, FEED_CT, rss((SITE + "/news/1", SHORT))))
    r.transport.script(SITE + "/news/1", Reply(200, HTML_CT, ARTICLE_PAGE))
    r.round(r.source(SITE + "/feed.xml", "feed"))


def article(r: Rig) -> None:  # Praha-X: article text as working material (PRAHA-02)
    r.transport.script(SITE + "/article/1", Reply(200, HTML_CT, ARTICLE_PAGE))
    r.item(SITE + "/article/1", "article", "feed")


def listing_page(r: Rig) -> None:  # SpringStudioBot: titles and links of a listing (SPRING-01)
    r.transport.script(SITE + "/liste/", Reply(200, HTML_CT, listing(SITE + "/sak/1")))
    r.round(r.source(SITE + "/liste/", "page"))


def js_listing(r: Rig) -> None:  # SpringStudioBot: an empty listing falls back to the sitemap (SPRING-03)
    r.transport.script(SITE + "/liste/", Reply(200, HTML_CT, b"<html><head><title>App</title></head></html>"))
    r.transport.script(SITE + "/sitemap.xml", Reply(200, {"Content-Type": "application/xml"}, SITEMAP.replace(
        b"/subsidies/groen", b"/liste/sak-1")))
    r.transport.script(SITE + "/liste/sak-1", Reply(200, HTML_CT, b"<html><head><title>Sak 1</title></head></html>"))
    r.round(r.source(SITE + "/liste/", "page"))


def title_page(r: Rig) -> None:  # SpringStudioBot: a sitemap-fallback title (SPRING-03)
    r.transport.script(SITE + "/liste/sak-1", Reply(200, HTML_CT, b"<html><head><title>Sak 1</title></head></html>"))
    r.item(SITE + "/liste/sak-1", "page", "page", title_only=True)


def agenda(r: Rig) -> None:  # WannadoBot: events from an agenda page (WANNADO-10)
    r.transport.script(SITE + "/agenda/1", Reply(200, HTML_CT, EVENT_PAGE))
    r.item(SITE + "/agenda/1", "agenda", "agenda")


def subsidy(r: Rig) -> None:  # SubsidieUpdate: the sitemap (a URL list), then a subsidy page's text
    r.transport.script(SITE + "/sitemap.xml", Reply(200, {"Content-Type": "application/xml"}, SITEMAP))
    r.transport.script(SITE + "/subsidies/groen", Reply(200, HTML_CT, SUBSIDY_PAGE))
    r.round(r.source(SITE + "/", "subsidy"))


def site_check(r: Rig) -> None:  # Praha-X: the weekly check keeps the site's name (PRAHA-04)
    r.transport.script(SITE + "/", Reply(200, HTML_CT, HOME_PAGE))
    r.transport.script(SITE + "/favicon.ico", Reply(200, {"Content-Type": "image/x-icon"}, b"\0\0\1\0"))
    r.round(r.source(SITE + "/", "site_check"))


def kept(r: Rig) -> dict[str, Any]:
    """Everything the run kept: events by type and stored texts (a sitemap's copy, kept for a
    conditional GET, is a URL list: not content)."""
    return {"events": sorted(t for t, _ in r.results.events),
            "texts": sorted(k for k in r.results.texts if not k.startswith("sitemaps/")),
            "names": [e.get("name") for _, e in r.results.events if e.get("kind") in ("site_check", "event")]}


CASES = [
    pytest.param("aubebot", feed, SITE + "/feed.xml", id="feed-items"),
    pytest.param("praha-x", article, SITE + "/article/1", id="article-text"),
    pytest.param("springstudiobot", listing_page, SITE + "/liste/", id="page-titles"),
    pytest.param("springstudiobot", js_listing, SITE + "/liste/", id="js-listing-no-fallback"),
    pytest.param("springstudiobot", title_page, SITE + "/liste/sak-1", id="fallback-title"),
    pytest.param("wannadobot", agenda, SITE + "/agenda/1", id="agenda-events"),
    pytest.param("subsidieupdate", subsidy, SITE + "/subsidies/groen", id="subsidy-text"),
]


def play(bot: str, scenario: Any, robots_txt: str) -> Rig:
    r = rig(bot)
    r.transport.script(SITE + "/robots.txt", robots(robots_txt))
    scenario(r)
    r.play()
    return r


@pytest.mark.parametrize(("bot", "scenario", "url"), CASES)
def test_usage_refused_keeps_nothing_and_names_the_rule(bot: str, scenario: Any, url: str) -> None:
    # GIVEN a bot that declares search, on a site whose robots.txt says search=n for the whole site
    assert "search" in load_profile(bot).spec.usage
    r = play(bot, scenario, SEARCH_N)
    # THEN nothing of the page is kept: no result, no stored text
    assert kept(r) == {"events": [], "texts": [], "names": []}
    # AND the skip says usage_refused with the rule and its line
    skips = [s for s in r.journal.skips if s["reason"] == "usage_refused"]
    assert [(s["url"], s["detail"]) for s in skips] == [(url, RULE)]


@pytest.mark.parametrize(("bot", "scenario", "url"), CASES)
def test_a_preference_for_a_use_the_bot_does_not_declare_changes_nothing(bot: str, scenario: Any, url: str) -> None:
    # GIVEN the same site saying train-ai=n (none of the five trains), and a site saying nothing
    refused, silent = play(bot, scenario, TRAIN_N), play(bot, scenario, "User-agent: *\nAllow: /\n")
    # THEN the bot keeps exactly what it keeps where the site states no preference
    assert kept(refused) == kept(silent)
    assert kept(silent)["events"], "the scenario keeps something"
    assert "usage_refused" not in refused.journal.reasons()
    assert refused.transport.urls() == silent.transport.urls()


def test_a_refused_feed_is_not_followed_and_its_read_still_counts() -> None:
    # GIVEN AubeBot and a feed with a short summary (an article would be read, AUBE-03)
    r = play("aubebot", feed, SEARCH_N)
    # THEN the feed was read, its article was not opened, and the read counts for the cadence (AUBE-08)
    assert r.transport.urls() == [SITE + "/robots.txt", SITE + "/feed.xml"]
    source = r.store.get_source(r.journal.skips[0]["source"])
    assert source is not None and source.last_read is not None
    assert source.seen_items == ()  # nothing reported, so nothing remembered as reported


def test_a_refused_sitemap_fallback_page_asks_for_nothing_more() -> None:
    # GIVEN SpringStudioBot and a JavaScript-built listing on a site that says search=n
    r = play("springstudiobot", js_listing, SEARCH_N)
    # THEN no sitemap is read for titles that could not be kept anyway (SPRING-03's requests saved)
    assert r.transport.urls() == [SITE + "/robots.txt", SITE + "/liste/"]


def test_sitemap_url_lists_are_not_content() -> None:
    # GIVEN SubsidieUpdate on a site whose sitemap path only says search=n
    r = play("subsidieupdate", subsidy, "User-agent: *\nContent-Usage: /sitemap.xml search=n\n")
    # THEN the sitemap is still followed and the subsidy page (no preference for it) is kept
    assert SITE + "/subsidies/groen" in r.transport.urls()
    assert kept(r)["events"] == ["page.new"]
    assert "usage_refused" not in r.journal.reasons()


def test_praha_04_a_refused_site_check_keeps_reachability_but_not_the_name() -> None:
    # GIVEN Praha-X's weekly check of a site saying search=n
    r = play("praha-x", site_check, SEARCH_N)
    # THEN the check is still reported (reachable, the status, where it led) without the site's name,
    # and the icon, a link read from the refused page, is not fetched
    (check,) = r.results.of_type("site.checked")
    assert (check["reachable"], check["status"], check["final_url"]) == (True, 200, SITE + "/")
    assert check["name"] is None and check["icon_url"] is None
    assert r.transport.urls() == [SITE + "/robots.txt", SITE + "/"]
    assert [(s["url"], s["detail"]) for s in r.journal.skips if s["reason"] == "usage_refused"] == [(SITE + "/", RULE)]
    # AND where the site says nothing of our uses, the name is kept and the icon checked
    (plain,) = play("praha-x", site_check, TRAIN_N).results.of_type("site.checked")
    assert plain["name"] == "Radnice Praha" and plain["icon_status"] == 200


def test_the_content_usage_header_refuses_what_robots_txt_allows() -> None:
    # GIVEN an agenda page answered with Content-Usage: search=n, robots.txt allowing search
    r = rig("wannadobot")
    r.transport.script(SITE + "/robots.txt", robots("User-agent: *\nContent-Usage: / search=y\n"))
    r.transport.script(SITE + "/agenda/1", Reply(200, {**HTML_CT, "Content-Usage": "search=n"}, EVENT_PAGE))
    r.item(SITE + "/agenda/1", "agenda", "agenda")
    r.play()
    # THEN no event is kept, and the skip names the header
    assert r.results.events == []
    assert [s["detail"] for s in r.journal.skips if s["reason"] == "usage_refused"] == [
        'search=n by Content-Usage header "search=n"']


def test_the_longest_content_usage_path_decides_per_page() -> None:
    # GIVEN a site that refuses search only under /private/
    r = rig("wannadobot")
    r.transport.script(SITE + "/robots.txt", robots("User-agent: *\nContent-Usage: /agenda/private/ search=n\n"))
    for path in ("/agenda/private/1", "/agenda/open/1"):
        r.transport.script(SITE + path, Reply(200, HTML_CT, EVENT_PAGE.replace(b"Concert", path.encode())))
        r.item(SITE + path, "agenda", "agenda", seq=len(path))
    r.play()
    # THEN only the open page's event is kept
    assert [e["page"] for e in r.results.of_type("event.found")] == [SITE + "/agenda/open/1"]
    assert r.skipped(SITE + "/agenda/private/1") == ["usage_refused"]


def test_a_profile_that_declares_no_use_is_unaffected() -> None:
    # GIVEN WannadoBot with its declared uses removed, on a site saying search=n and ai-use=n
    r = rig({"extends": "wannadobot", "usage": []})
    r.transport.script(SITE + "/robots.txt", robots("User-agent: *\nContent-Usage: / search=n, ai-use=n\n"))
    r.transport.script(SITE + "/agenda/1", Reply(200, HTML_CT, EVENT_PAGE))
    r.item(SITE + "/agenda/1", "agenda", "agenda")
    r.play()
    # THEN the event is kept as before
    assert [e["name"] for e in r.results.of_type("event.found")] == ["Concert in de Zaal"]

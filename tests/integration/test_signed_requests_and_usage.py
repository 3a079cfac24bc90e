"""What a bot proves about itself and what it does with what it reads, seen by the sites, on the
real stack (the handlers on moto, ``heed.conformance.stack.Stack``). Neither is a numbered rule
of PROMISES.md: they are operator features the info page describes.

Web Bot Auth: when ``identity.web_bot_auth.enabled``, every request carries a signature that
verifies against the directory `heed info-page` publishes. The run's clock is simulated, years
from the real one; the sites check each request as they received it (their own clock at
receipt), with the independent RFC 9421 verifier of test_identity_transport.py and with Heed's.

AIPREF (usage preferences): a site whose robots.txt says ``Content-Usage: / search=n`` gets no
kept content from a bot that declares search; a site stating a preference for a use the bot does
not declare is unaffected."""
from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from heed_core.identity.directory import DIRECTORY_PATH
from heed_core.identity.keys import read_key_file, thumbprint, write_new_key_file
from heed_core.identity.verify import directory_keys, verify_directory, verify_request
from heed_core.profile import Profile, load_profile_data
from heed_core.work import Source

from heed.conformance.model import utc
from heed.conformance.sites import Sites, html_page, robots, rss
from heed.conformance.stack import Output, Stack
from heed.demo.web import Route, redirect
from heed.infopage import write_info_page

from tests.integration.test_identity_transport import independent_check

AGENT = "https://aube.news" + DIRECTORY_PATH
# Far from the real time on purpose: a signature dated by the simulated clock would be outside its
# lifetime at the sites, which check real time.
START = utc("2019-06-04T10:00")


@pytest.fixture
def sites() -> Iterator[Sites]:
    s = Sites()
    yield s
    s.stop()


def _aube(**changes: object) -> Profile:
    return load_profile_data({"extends": "aubebot", "politeness": {"min_delay_s": 0, "crawl_delay_cap_s": 1.2},
                              **changes})


def _article(title: str) -> Route:
    return Route(body=html_page(title, f"<main><article><h1>{title}</h1><p>Il testo di {title}.</p></article></main>"))


def _feed(*items: tuple[str, str]) -> Route:
    return Route(body=rss([{"title": t, "link": link} for t, link in items]),
                 content_type="application/rss+xml; charset=utf-8")


def _round(profile: Profile, sources: list[Source], sites: Sites, out_dir: Path) -> Output:
    stack = Stack(profile, sources, out_dir, START - 60, resolver=sites.resolver)
    try:
        stack.round(START, ["feed"])
        return stack.finish()
    finally:
        stack.close()


def test_every_request_is_signed_and_verifies_against_the_published_directory(sites: Sites, tmp_path: Path) -> None:
    # GIVEN AubeBot signing with its key, its directory published as `heed info-page` writes it
    key_file = tmp_path / "aubebot.pem"
    write_new_key_file(key_file)
    profile = _aube(identity={"web_bot_auth": {"enabled": True, "key_file": str(key_file), "signature_agent": AGENT}})
    published = tmp_path / "published"
    write_info_page(profile, published)
    body_file = published / "aube.news" / DIRECTORY_PATH.lstrip("/")
    directory = body_file.read_bytes()
    served_with = json.loads(body_file.with_name(body_file.name + ".headers.json").read_text(encoding="utf-8"))
    # (what a site does before trusting a Signature-Agent: the directory's own signature checks out)
    assert verify_directory(url=AGENT, headers=served_with, body=directory, now=time.time()).valid
    assert [k["kid"] for k in json.loads(directory)["keys"]] == [thumbprint(read_key_file(key_file))]
    # AND two sites: a feed that moved (a redirect), short summaries (article pages), an article on
    # a second host that has no robots.txt (a 404 is answered to a signed request too)
    other = sites.add("altro", {"/art/x": _article("Altrove")})
    news = sites.add("notizie", {
        "/robots.txt": robots("User-agent: *\nAllow: /\n"),
        "/vecchio.xml": redirect("/feed.xml"),
        "/feed.xml": _feed(("Uno", "{{base}}/art/1"), ("Due", "{{base}}/art/2"), ("Altrove", other + "/art/x")),
        "/art/1": _article("Uno"), "/art/2": _article("Due"),
    })
    # WHEN a round runs through the real stack on a clock years from now
    out = _round(profile, [Source("notizie", news + "/vecchio.xml", "feed")], sites, tmp_path / "out")
    # THEN every request either site received was signed and verifies, as received: 0 unsigned, 0 invalid
    logs = sites.logs()
    log = logs["notizie"] + logs["altro"]
    assert sorted(r.path for r in logs["notizie"]) == ["/art/1", "/art/2", "/feed.xml", "/robots.txt", "/vecchio.xml"]
    assert sorted(r.path for r in logs["altro"]) == ["/art/x", "/robots.txt"]
    keys = directory_keys(directory)
    for record in log:
        headers = dict(record.headers)
        assert independent_check(headers, directory, record.t_start) == "ok", record
        check = verify_request(method="GET", url=f"http://{record.host}{record.path}", headers=headers, keys=keys,
                               now=record.t_start, expect_agent=AGENT)
        assert check.reason == "valid", (record.path, check)
        assert [k.lower() for k, _ in record.headers].count("user-agent") == 1  # COMMON-01 still holds
        assert record.header("User-Agent") == profile.user_agent
    # AND the run's own record of requests is the same set (nothing sent that the sites did not see)
    assert len(out.requests) == len(log)


def test_a_site_that_says_search_n_gets_nothing_kept_and_one_without_a_matching_use_is_unaffected(
        sites: Sites, tmp_path: Path) -> None:
    # GIVEN AubeBot, which declares search and ai-use, and two sites with short-summary feeds: one
    # whose robots.txt says search=n, one that says only train-ai=n (a use AubeBot does not make)
    profile = _aube()
    assert "search" in profile.spec.usage and "train-ai" not in profile.spec.usage
    refusing = sites.add("rifiuta", {
        "/robots.txt": robots("User-agent: *\nContent-Usage: / search=n\nAllow: /\n"),
        "/feed.xml": _feed(("RIFIUTO titolo uno", "{{base}}/art/1"), ("RIFIUTO titolo due", "{{base}}/art/2")),
    }, fallback=_article("RIFIUTO articolo"))
    indifferent = sites.add("indifferente", {
        "/robots.txt": robots("User-agent: *\nContent-Usage: / train-ai=n\nAllow: /\n"),
        "/feed.xml": _feed(("LIBERO titolo uno", "{{base}}/art/1"), ("LIBERO titolo due", "{{base}}/art/2")),
    }, fallback=_article("LIBERO articolo"))
    sources = [Source("rifiuta", refusing + "/feed.xml", "feed"),
               Source("indifferente", indifferent + "/feed.xml", "feed")]
    # WHEN one round runs
    out = _round(profile, sources, sites, tmp_path / "out")
    logs = sites.logs()
    # THEN from the refusing site: no result, nothing stored, no article opened from its feed
    assert not [i for i in out.items if i.get("source") == "rifiuta"]
    assert "RIFIUTO" not in json.dumps(out.items) and "RIFIUTO" not in out.stored + out.kept_text()
    assert sorted(r.path for r in logs["rifiuta"]) == ["/feed.xml", "/robots.txt"]
    # AND the skip says why, with the rule and its line
    (skip,) = out.skipped("usage_refused")
    assert (skip["url"], skip["source"]) == (refusing + "/feed.xml", "rifiuta")
    assert skip["detail"] == 'search=n by robots.txt line 2 "Content-Usage: / search=n" (group *)'
    # AND the site without a matching use is crawled and kept exactly as if it said nothing
    kept = [i for i in out.items if i.get("source") == "indifferente"]
    assert sorted(i["title"] for i in kept if i["detail_type"] == "item.found") == [
        "LIBERO titolo due", "LIBERO titolo uno"]
    assert len([i for i in kept if i["detail_type"] == "article.read"]) == 2
    assert sorted(r.path for r in logs["indifferente"]) == ["/art/1", "/art/2", "/feed.xml", "/robots.txt"]

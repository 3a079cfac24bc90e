"""An article's or a subsidy page's body is parsed once for all its readers (its robots meta tags,
its paywall markers, its TDM reservation, then its text), and each reader's answer is the one it
gives on a parse of its own."""
from __future__ import annotations

from typing import Any

import pytest

from heed_core.extract import paywall, signals, subsidy, tdmrep
from heed_core.kinds.handling import TaskInput, TaskOutput
from heed_core.ports import FetchResult
from heed_core.profile import load_profile_data
from heed_core.tasks import handle_success
from heed_core.work import WorkItem

SITE = "http://site.example"
HTML = (("Content-Type", "text/html; charset=utf-8"),)


def _page(head: str = "", body: str = "<main><p>The text we keep.</p></main>") -> bytes:
    return (f"<html><head><title>A story</title>{head}</head><body><nav>Menu</nav>{body}"
            "<script>var x = 1;</script></body></html>").encode()


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times ``signals.parse_html`` parsed a body; a reader that parses on its own fails."""
    got: list[int] = []
    parse = signals.parse_html

    def counted(body: bytes, **kw: Any) -> Any:
        got.append(len(body))
        return parse(body, **kw)

    def again(body: bytes, **kw: Any) -> Any:
        raise AssertionError("a reader parsed the body again")
    monkeypatch.setattr(signals, "parse_html", counted)
    for module in (paywall, subsidy, tdmrep):
        monkeypatch.setattr(module, "parse_html", again)
    return got


def _handle(bot: str, url: str, purpose: str, task: str, body: bytes) -> TaskOutput:
    profile = load_profile_data({"extends": bot})
    item = WorkItem(url=url, purpose=purpose, task=task, source_id="s", source_url=f"{SITE}/feed.xml",
                    round_id="r", round_start=0.0)
    result = FetchResult(url=url, status=200, headers=HTML, body=body, t_start=1.0, t_end=2.0)
    return handle_success(TaskInput(profile=profile, item=item, result=result, now=2.0))


def test_an_article_is_parsed_once_and_read_as_before(parses: list[int]) -> None:
    # GIVEN Praha-X (robots meta tags, paywall markers, TDM reservation, then the text) and an article
    body = _page()
    # WHEN its answer is handled
    out = _handle("praha-x", f"{SITE}/a/1", "article", "feed", body)
    # THEN its body was parsed once, and its text is the main content alone
    assert parses == [len(body)]
    assert [text for _, text in out.texts_out] == ["The text we keep."]


@pytest.mark.parametrize(("head", "body", "reason"), [
    ('<meta name="robots" content="noindex">', "<main><p>t</p></main>", "noindex"),
    ('<meta name="tdm-reservation" content="1">', "<main><p>t</p></main>", "tdm_reserved"),
    ("", '<main><p>t</p><div class="paywall">Subscribe</div></main>', "paywalled"),
    ('<script type="application/ld+json">{"isAccessibleForFree": false}</script>', "<main><p>t</p></main>",
     "paywalled"),
], ids=["noindex", "tdm", "paywall-markup", "paywall-jsonld"])
def test_an_article_a_shared_parse_refuses_is_skipped_as_before(
        parses: list[int], head: str, body: str, reason: str) -> None:
    # GIVEN an article that one of the readers before its text refuses
    page = _page(head, body)
    # WHEN its answer is handled
    out = _handle("praha-x", f"{SITE}/a/1", "article", "feed", page)
    # THEN it is skipped with that reader's reason, nothing of it kept, its body parsed once
    assert [s[1] for s in out.skips] == [reason]
    assert out.texts_out == [] and out.events == []
    assert parses == [len(page)]


def test_a_subsidy_page_is_parsed_once(parses: list[int]) -> None:
    # GIVEN SubsidieUpdate's reader of a subsidy page and a page
    body = _page(body="<main><h1>Regeling</h1><p>Subsidie voor zonnepanelen.</p></main>")
    # WHEN its answer is handled
    _handle("subsidieupdate", f"{SITE}/subsidies/zon", "subsidy", "subsidy", body)
    # THEN its body was parsed once
    assert parses == [len(body)]


def test_a_page_taken_apart_is_parsed_afresh_for_a_later_reader() -> None:
    # GIVEN a page whose tree its text reader took apart
    page = signals.Page(_page())
    first = page.root()
    assert subsidy.main_text(page.body, page=page) == "The text we keep."
    # WHEN another reader asks for the tree
    again = page.root()
    # THEN it is a fresh parse, whole
    assert again is not None and again is not first and again.find(".//nav") is not None

"""The info page says what the profile does: every number on it comes from the profile."""
from __future__ import annotations

import json

import pytest

from heed.infopage import facts, ips_json, render_info_page
from heed_core.profile import BUILTIN_BOTS, load_profile, load_profile_data


@pytest.mark.parametrize("bot", BUILTIN_BOTS)
def test_info_page_carries_the_profiles_numbers(bot: str) -> None:
    p = load_profile(bot)
    page = render_info_page(p)
    assert p.user_agent in page and f"User-agent: {p.robots_token}\nDisallow: /" in page
    text = " ".join(facts(p))
    assert str(p.get("responses.retries_per_day")) in text
    for expr in (s.expression for s in p.schedules):
        assert expr in text


def test_info_page_follows_a_changed_profile() -> None:
    # The page is generated, so a new number in the profile is a new sentence on the page.
    p = load_profile_data({"extends": "aubebot", "politeness": {"min_delay_s": 4, "crawl_delay_cap_s": 20}})
    text = " ".join(facts(p))
    assert "At least 4 seconds between two requests" in text and "up to 20 seconds" in text


def test_wannado_02_ips_json_lists_the_egress_addresses() -> None:
    p = load_profile("wannadobot")
    data = json.loads(ips_json(p))
    assert data["prefixes"] == ["138.201.245.154/32", "2a01:4f8:c012:d799::1/128"]
    assert data["reverse_dns"] == "crawler.wannado.nl"
    assert "ips.json" in render_info_page(p)

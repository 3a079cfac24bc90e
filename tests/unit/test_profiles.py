"""Bot profiles: loading, `extends:` by deep merge, one clear error per bad profile, and the
numbers each shipped profile promises (PROMISES.md), rule by rule."""
from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from heed_core import kinds
from heed_core.kinds.walk import fallback
from heed_core.politeness import end_of_day
from heed_core.profile import (
    BUILTIN_BOTS,
    Profile,
    ProfileError,
    deep_merge,
    load_profile,
    load_profile_data,
)
from heed_core.robots import effective_delay
from heed_core.robots_policy import RobotsFetchPolicy, robots_from_response
from heed_core.schedule import Rate, firings, parse_expression

DAY = 86400
WEEK = 7 * DAY
# Monday 2024-03-04 00:00 UTC: the start of a real ISO week.
MONDAY = datetime(2024, 3, 4, tzinfo=UTC).timestamp()


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _fires_per_day(profile: Profile, task: str, week_start: float) -> list[int]:
    """How many rounds of ``task`` start on each UTC day of the week from ``week_start``."""
    counts = [0] * 7
    for sched in profile.schedules:
        if sched.task != task:
            continue
        # (start - 1, end - 1]: a firing at exactly 00:00 belongs to the day it opens.
        for t in firings(sched.expression, week_start - 1, week_start + WEEK - 1):
            counts[int((t - week_start) // DAY)] += 1
    return counts


# --- loading -----------------------------------------------------------------------------------

@pytest.mark.parametrize("bot", BUILTIN_BOTS)
def test_every_builtin_profile_loads(bot: str) -> None:
    p = load_profile(bot)
    assert p.name == bot
    # COMMON-01: the product token of the UA is the token robots.txt groups name.
    assert p.user_agent.split("/", 1)[0] == p.robots_token
    assert "+" + p.get("info_url") in p.user_agent
    assert p.schedules, "a bot without a schedule never runs"
    for sched in p.schedules:
        parse_expression(sched.expression)


def test_deep_merge_merges_mappings_and_replaces_lists() -> None:
    base = {"a": {"x": 1, "y": {"z": 2}}, "l": [1, 2], "k": 1}
    out = deep_merge(base, {"a": {"y": {"w": 3}}, "l": [9]})
    assert out == {"a": {"x": 1, "y": {"z": 2, "w": 3}}, "l": [9], "k": 1}
    assert base == {"a": {"x": 1, "y": {"z": 2}}, "l": [1, 2], "k": 1}  # the base is untouched


def test_extends_builtin_overrides_nested_keys_and_keeps_the_rest(tmp_path: Path) -> None:
    # GIVEN a file that extends AubeBot and changes two nested numbers
    child = _write(tmp_path / "aube-slow.yaml", "\n".join([
        "extends: aubebot",
        "politeness:",
        "  min_delay_s: 4",
        "tasks:",
        "  feed:",
        "    max_items: 20",
        "    article_followup:",
        "      per_source_per_window: 2",
        "",
    ]))
    # WHEN it is loaded
    p = load_profile(str(child))
    base = load_profile("aubebot")
    # THEN the overridden keys change and every sibling is kept
    assert p.get("politeness.min_delay_s") == 4
    assert p.get("politeness.crawl_delay_cap_s") == base.get("politeness.crawl_delay_cap_s")
    assert p.get("politeness.max_in_flight") == base.get("politeness.max_in_flight")
    assert p.task("feed")["max_items"] == 20
    assert p.task("feed")["min_read_interval_s"] == base.task("feed")["min_read_interval_s"]
    assert p.task("feed")["article_followup"]["per_source_per_window"] == 2
    assert p.task("feed")["article_followup"]["total_per_window"] == \
        base.task("feed")["article_followup"]["total_per_window"]
    assert p.user_agent == base.user_agent
    assert p.schedules == base.schedules
    # ... and the defaults under the built-in are still there
    assert p.max_bytes("robots") == base.max_bytes("robots")


def test_extends_replaces_lists_instead_of_appending(tmp_path: Path) -> None:
    child = _write(tmp_path / "c.yaml", "extends: aubebot\nschedules:\n"
                   "  - {expression: 'rate(30 minutes)', task: feed}\n")
    p = load_profile(str(child))
    assert [s.expression for s in p.schedules] == ["rate(30 minutes)"]


def test_extends_relative_path_resolves_next_to_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN base.yaml (extends a built-in) and sub/child.yaml that extends "../base.yaml"
    _write(tmp_path / "base.yaml", "extends: praha-x\npoliteness:\n  min_delay_s: 7\n")
    child = _write(tmp_path / "sub" / "child.yaml", "extends: ../base.yaml\ncontact: ops@example.org\n")
    # WHEN loaded from some other working directory
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    p = load_profile(str(child))
    # THEN the chain child -> base -> praha-x -> defaults is merged in order
    assert p.get("contact") == "ops@example.org"
    assert p.get("politeness.min_delay_s") == 7
    assert p.get("responses.on_403") == "close_source"  # from praha-x
    assert p.get("robots.max_bytes") == 512000  # from _defaults


def test_load_profile_data_extends_a_builtin() -> None:
    p = load_profile_data({"extends": "springstudiobot", "responses": {"retries_per_day": 0}})
    assert p.get("responses.retries_per_day") == 0
    assert p.get("responses.on_429") == "stop_host_today"
    assert p.name == "springstudiobot"


@pytest.mark.parametrize("files", [
    {"a.yaml": "extends: b.yaml\n", "b.yaml": "extends: a.yaml\n"},
    {"a.yaml": "extends: a.yaml\n"},
], ids=["two_files", "self"])
def test_extends_cycle_is_a_profile_error(tmp_path: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        _write(tmp_path / name, text)
    with pytest.raises(ProfileError, match="extends"):
        load_profile(str(tmp_path / "a.yaml"))


# --- bad profiles: one ProfileError that names the key and the reason ---------------------------

_ = pytest.param
BAD: list[Any] = [
    _({"politeness": {"min_delay_s": -1}}, "politeness.min_delay_s", ">= 0", id="negative_delay"),
    _({"politeness": {"min_delay_s": "10"}}, "politeness.min_delay_s", "number", id="delay_as_string"),
    _({"politeness": {"crawl_delay_cap_s": True}}, "politeness.crawl_delay_cap_s", "number", id="bool_cap"),
    _({"politeness": {"max_in_flight": 0}}, "politeness.max_in_flight", ">= 1", id="max_in_flight_0"),
    _({"robots": {"on_5xx": "retry"}}, "robots.on_5xx", "deny or skip_host", id="unknown_on_5xx"),
    _({"robots": {"cache_ttl_s": 0}}, "robots.cache_ttl_s", ">= 1", id="robots_ttl_0"),
    _({"responses": {"on_403": "ignore"}}, "responses.on_403", "close_source", id="unknown_on_403"),
    _({"responses": {"retries_per_day": 1.5}}, "responses.retries_per_day", "integer", id="float_retries"),
    _({"conditional_requests": "yes"}, "conditional_requests", "true or false", id="yes_not_bool"),
    _({"polteness": {"min_delay_s": 1}}, "polteness", "unknown key", id="unknown_top_level_key"),
    _({"schedules": [{"expression": "cron(0 6 * * *)", "task": "feed"}]},
      "schedules[0].expression", "6 fields", id="cron_5_fields"),
    _({"schedules": [{"expression": "rate(1 minutes)", "task": "feed"}]},
      "schedules[0].expression", "rate(1 minute)", id="rate_1_minutes"),
    _({"schedules": [{"expression": "rate(15 minutes)", "task": "crawl_all"}]},
      "schedules[0].task", "must be feed, page", id="unknown_schedule_task"),
    _({"schedules": ["rate(15 minutes)"]}, "schedules[0]", "mapping", id="schedule_not_mapping"),
    _({"schedules": None}, "schedules", "list", id="schedules_null"),
    _({"tasks": {"crawl_all": {}}}, "tasks.crawl_all", "unknown task kind", id="unknown_task"),
    _({"tasks": {"feed": 5}}, "tasks.feed", "mapping", id="task_options_not_mapping"),
    _({"robots_token": "OtherBot"}, "user_agent", "robots_token", id="token_not_in_ua"),
    _({"user_agent": "AubeBotX/0.1 (+https://aube.news/robot)"}, "user_agent", "robots_token",
      id="ua_token_longer_than_robots_token"),
    _({"robots_token": "Aube Bot"}, "robots_token", "product token", id="token_with_space"),
    _({"user_agent": "AubeBot/0.1 (+https://elsewhere.example/bot)"}, "user_agent", "info_url",
      id="ua_without_info_url"),
    _({"user_agent": "AubeBot/0.1 (https://aube.news/robot)"}, "user_agent", "info_url",
      id="ua_info_url_without_plus"),
    _({"info_url": "aube.news/robot"}, "info_url", "http(s) URL", id="info_url_not_http"),
    _({"name": "Aube Bot"}, "name", "lower-case", id="bad_name"),
    _({"extends": 5}, "extends", "built-in name or a path", id="extends_not_a_string"),
    _({"extends": "no-such-bot"}, "no-such-bot", "no such profile", id="extends_unknown"),
]


@pytest.mark.parametrize("override, key, reason", BAD)
def test_bad_profile_gives_one_error_naming_key_and_reason(override: dict[str, Any], key: str, reason: str) -> None:
    data = {"extends": "aubebot", **override}
    with pytest.raises(ProfileError) as info:
        load_profile_data(data)
    message = str(info.value)
    assert message.startswith(key + ":") or message.startswith(key + " "), message
    assert reason in message
    assert "\n" not in message


def test_missing_required_key_is_named() -> None:
    # No extends: only the defaults, which carry no identity.
    with pytest.raises(ProfileError, match=r"^user_agent: missing"):
        load_profile_data({"name": "newbot"})


def test_invalid_yaml_names_the_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "bad.yaml", "extends: aubebot\ncontact: x@example.org\npoliteness:\n"
                  "  min_delay_s: 3\n\tcrawl_delay_cap_s: 9\n")
    with pytest.raises(ProfileError, match=r"bad\.yaml: not valid YAML at line 5$"):
        load_profile(str(path))


def test_yaml_list_instead_of_mapping(tmp_path: Path) -> None:
    path = _write(tmp_path / "list.yaml", "- extends: aubebot\n- name: x\n")
    with pytest.raises(ProfileError, match="must be a mapping of keys, got list"):
        load_profile(str(path))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="no such profile file"):
        load_profile(str(tmp_path / "absent.yaml"))


def test_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("extends: aubebot\ncontact: caf\xe9\n".encode("latin-1"))
    with pytest.raises(ProfileError, match="cannot read"):
        load_profile(str(path))


def test_extends_a_file_that_is_a_list(tmp_path: Path) -> None:
    _write(tmp_path / "base.yaml", "- 1\n")
    child = _write(tmp_path / "child.yaml", "extends: base.yaml\n")
    with pytest.raises(ProfileError, match=r"base\.yaml: a profile must be a mapping"):
        load_profile(str(child))


# --- SPRING: the shipped numbers ----------------------------------------------------------------

@pytest.fixture(scope="module")
def spring() -> Profile:
    return load_profile("springstudiobot")


def test_spring_02_daily_schedule_one_page_per_source(spring: Profile) -> None:
    assert {s.task for s in spring.schedules} == {"page"}
    assert _fires_per_day(spring, "page", MONDAY) == [1] * 7
    assert spring.task("page")["max_pages_per_source_per_round"] == 1


def test_spring_03_04_sitemap_fallback_two_children_five_pages_a_week(spring: Profile) -> None:
    fallback = spring.task("sitemap_fallback")
    assert fallback["enabled"] is True
    assert fallback["max_child_sitemaps"] == 2
    assert fallback["max_new_pages"] == 5
    assert fallback["title_refetch_after_s"] == 7 * 24 * 3600


def test_spring_05_06_stop_on_429_and_three_retries(spring: Profile) -> None:
    assert spring.get("responses.on_429") == "stop_host_today"
    assert spring.get("responses.retries_per_day") == 3


def test_spring_08_shipped_numbers(spring: Profile) -> None:
    assert spring.get("politeness.min_delay_s") == 10
    assert spring.get("politeness.crawl_delay_cap_s") == 60


def test_spring_09_10_robots_cached_a_day_and_refusal_or_5xx_fetches_nothing(spring: Profile) -> None:
    assert spring.get("robots.cache_ttl_s") == 24 * 3600
    policy = RobotsFetchPolicy.from_mapping(spring.get("robots"))
    for status in (401, 403, 500, 503):
        assert robots_from_response(status, None, b"", policy).kind == "deny_all", status


# --- PRAHA ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def praha() -> Profile:
    return load_profile("praha-x")


def test_praha_05_feeds_several_times_a_day_articles_once(praha: Profile) -> None:
    per_day = _fires_per_day(praha, "feed", MONDAY)
    assert min(per_day) >= 2, per_day
    assert praha.task("feed")["article_followup"]["once_ever"] is True


def test_praha_04_site_check_once_a_week(praha: Profile) -> None:
    assert sum(_fires_per_day(praha, "site_check", MONDAY)) == 1
    assert praha.task("site_check")["min_interval_s"] == WEEK


def test_praha_06_one_request_every_3_seconds_and_no_site_crawl(praha: Profile) -> None:
    assert praha.get("politeness.min_delay_s") == 3
    # "never crawls a whole site": only feeds (and their articles) and the home-page check.
    assert set(praha.get("tasks")) <= {"feed", "site_check"}
    assert {s.task for s in praha.schedules} <= {"feed", "site_check"}


def test_praha_07_403_429_challenge_close_the_source(praha: Profile) -> None:
    for key in ("on_403", "on_429", "on_challenge"):
        assert praha.get(f"responses.{key}") == "close_source", key


# --- WANNADO ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def wannado() -> Profile:
    return load_profile("wannadobot")


def test_wannado_04_robots_group_token_and_5xx_fetches_nothing(wannado: Profile) -> None:
    assert wannado.robots_token == "WannadoBot"
    assert wannado.get("robots.on_5xx") == "deny"
    policy = RobotsFetchPolicy.from_mapping(wannado.get("robots"))
    assert robots_from_response(503, None, b"", policy).kind == "deny_all"


def test_wannado_05_gap_and_round_spacing(wannado: Profile) -> None:
    assert wannado.get("politeness.min_delay_s") == 1.5
    # "longer if Crawl-delay asks": no cap promised, a 10-minute Crawl-delay is kept as is.
    assert effective_delay(1.5, 600.0, float(wannado.get("politeness.crawl_delay_cap_s"))) == 600.0
    spacing = wannado.get("politeness.round_spacing_s")
    jitter = wannado.get("politeness.round_spacing_jitter_s")
    assert spacing >= 6 * 60
    assert spacing + jitter <= 7 * 60


def test_wannado_06_agenda_starts_at_sitemap(wannado: Profile) -> None:
    assert wannado.task("agenda")["start"] == "sitemap"


def test_wannado_07_conditional_requests(wannado: Profile) -> None:
    assert wannado.get("conditional_requests") is True


def test_wannado_11_robots_at_most_once_a_day(wannado: Profile) -> None:
    assert wannado.get("robots.cache_ttl_s") == 24 * 3600


# --- SUBSIDIE ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def subsidie() -> Profile:
    return load_profile("subsidieupdate")


@pytest.mark.parametrize("week_start", [
    MONDAY,
    datetime(2025, 12, 29, tzinfo=UTC).timestamp(),  # a Monday; the week spans new year
], ids=["2024-03-04", "2025-12-29"])
def test_subsidie_02_five_rounds_per_working_day_one_per_weekend_day(subsidie: Profile, week_start: float) -> None:
    assert datetime.fromtimestamp(week_start, tz=UTC).isoweekday() == 1
    assert _fires_per_day(subsidie, "subsidy", week_start) == [5, 5, 5, 5, 5, 1, 1]
    assert 1 <= subsidie.task("subsidy")["max_pages_per_host_per_round"] <= 10  # "a handful"


def test_subsidie_03_two_seconds_between_requests(subsidie: Profile) -> None:
    assert subsidie.get("politeness.min_delay_s") == 2


def test_subsidie_06_robots_reused_for_24_hours(subsidie: Profile) -> None:
    assert subsidie.get("robots.cache_ttl_s") == 24 * 3600


def test_subsidie_07_crawl_delay_cap_30(subsidie: Profile) -> None:
    assert subsidie.get("politeness.crawl_delay_cap_s") == 30


def test_subsidie_11_robots_4xx_no_restrictions_5xx_skip_host(subsidie: Profile) -> None:
    assert subsidie.get("robots.on_4xx") == "allow"
    assert subsidie.get("robots.on_401_403") == "allow"
    assert subsidie.get("robots.on_5xx") == "skip_host"
    policy = RobotsFetchPolicy.from_mapping(subsidie.get("robots"))
    assert robots_from_response(404, None, b"", policy).kind == "allow_all"
    assert robots_from_response(403, None, b"", policy).kind == "allow_all"
    assert robots_from_response(500, None, b"", policy).kind == "skip_host"


# --- AUBE -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def aube() -> Profile:
    return load_profile("aubebot")


def test_aube_01_at_most_40_items_per_read(aube: Profile) -> None:
    assert aube.task("feed")["max_items"] == 40
    assert {s.task for s in aube.schedules} == {"feed"}


def test_aube_02_conditional_requests(aube: Profile) -> None:
    assert aube.get("conditional_requests") is True


def test_aube_03_article_only_for_short_summary_and_once(aube: Profile) -> None:
    follow = aube.task("feed")["article_followup"]
    assert follow["mode"] == "short_summary"
    assert follow["summary_shorter_than"] == 600
    assert follow["once_ever"] is True


def test_aube_04_crawl_delay_cap_10(aube: Profile) -> None:
    assert aube.get("politeness.crawl_delay_cap_s") == 10


def test_aube_08_one_feed_read_per_15_minutes(aube: Profile) -> None:
    (sched,) = aube.schedules
    parsed = parse_expression(sched.expression)
    assert isinstance(parsed, Rate) and parsed.period_s == 15 * 60
    assert aube.task("feed")["min_read_interval_s"] == 15 * 60
    assert len(firings(sched.expression, MONDAY, end_of_day(MONDAY))) == 24 * 4


def test_aube_09_at_least_1500_ms(aube: Profile) -> None:
    assert aube.get("politeness.min_delay_s") == 1.5


def test_aube_10_five_articles_per_source_sixty_in_total_per_quarter_hour(aube: Profile) -> None:
    follow = aube.task("feed")["article_followup"]
    assert follow["per_source_per_window"] == 5
    assert follow["total_per_window"] == 60
    assert follow["window_s"] == 15 * 60


def test_aube_11_one_request_at_a_time_over_all_hosts(aube: Profile) -> None:
    assert aube.get("politeness.max_in_flight") == 1


def test_aube_12_robots_reread_each_quarter_hour(aube: Profile) -> None:
    assert aube.get("robots.cache_ttl_s") <= 15 * 60


# --- typed sections: every key declared once, nested keys checked, did-you-mean -----------------

@pytest.mark.parametrize("override, message", [
    _({"politeness": {"min_dealy_s": 5}},
      "politeness.min_dealy_s: unknown key (did you mean min_delay_s?)", id="typo_nested"),
    _({"tasks": {"feed": {"max_items": "lots"}}},
      "tasks.feed.max_items: 'lots' is not valid (must be an integer >= 1)", id="string_for_int"),
    _({"tasks": {"feed": {"article_followup": {"per_sorce_per_window": 3}}}},
      "tasks.feed.article_followup.per_sorce_per_window: unknown key (did you mean per_source_per_window?)",
      id="typo_two_levels_down"),
    _({"tasks": {"fead": {}}}, "tasks.fead: unknown task kind (did you mean feed?)", id="typo_task_kind"),
    _({"robots": {"on_5xx": "skip-host"}},
      "robots.on_5xx: 'skip-host' is not valid (must be deny or skip_host; did you mean skip_host?)",
      id="typo_choice"),
    _({"fetch": {"max_bytes": {"feeds": 20000}}},
      "fetch.max_bytes.feeds: unknown key (did you mean feed?)", id="typo_purpose"),
    _({"schedules": [{"expression": "rate(5 minutes)", "taks": "feed"}]},
      "schedules[0].taks: unknown key (did you mean task?)", id="typo_schedule_key"),
    _({"egress": {"ips": ["138.201.245.154/33"]}}, "egress.ips[0]: '138.201.245.154/33' is not valid", id="bad_prefix"),
    _({"egress": {"reverse_dns": "not a host"}}, "egress.reverse_dns: 'not a host' is not valid", id="bad_rdns"),
    _({"tasks": {"feed": {"article_followup": {"window_s": 0}}}},
      "tasks.feed.article_followup.window_s: 0 is not valid (the per-window caps need a window > 0)",
      id="caps_without_window"),
    _({"tasks": {"agenda": {"extractor": "bedrock"}}},
      "tasks.agenda.bedrock_model_id: missing (extractor: bedrock needs a model)", id="bedrock_without_model"),
    _({"tasks": {"agenda": {"render_endpoint": "render.example"}}},
      "tasks.agenda.render_endpoint: 'render.example' is not valid (must be an http(s) URL)", id="render_not_url"),
    _({"info_page": {"texts": {"it": {"leed": "x"}}}},
      "info_page.texts.it.leed: unknown key (did you mean lead?)", id="typo_page_text"),
])
def test_every_nested_key_is_checked_with_a_close_spelling(override: dict[str, Any], message: str) -> None:
    with pytest.raises(ProfileError) as info:
        load_profile_data({"extends": "aubebot", **override})
    assert str(info.value).startswith(message), str(info.value)
    assert "\n" not in str(info.value)


def test_a_required_section_that_is_absent_names_its_first_key() -> None:
    data = load_profile("aubebot").data
    bare = {k: v for k, v in data.items() if k != "politeness"}
    with pytest.raises(ProfileError, match=r"^politeness\.min_delay_s: missing"):
        load_profile_data(bare)


@pytest.mark.parametrize("bot", BUILTIN_BOTS)
def test_typed_sections_say_what_get_says(bot: str) -> None:
    p = load_profile(bot)
    assert p.politeness.min_delay_s == p.get("politeness.min_delay_s")
    assert isinstance(p.politeness.min_delay_s, float)
    assert p.robots.cache_ttl_s == p.get("robots.cache_ttl_s")
    assert p.responses.retries_per_day == p.get("responses.retries_per_day")
    assert p.redirects.max_hops == p.get("redirects.max_hops")
    assert p.fetch.total_deadline_s == p.get("fetch.total_deadline_s")
    assert p.conditional_requests is p.get("conditional_requests")
    assert p.max_bytes("robots") == p.fetch.max_bytes["robots"]
    for kind in p.task_kinds:
        section = kinds.get(kind).options(p)
        for name, value in p.task(kind).items():
            typed = getattr(section, name)
            if isinstance(value, list):
                assert list(typed) == value, (kind, name)
            elif isinstance(value, dict):
                assert {k: getattr(typed, k) for k in value} == value, (kind, name)
            else:
                assert typed == value, (kind, name)


def test_sections_are_frozen() -> None:
    import dataclasses

    p = load_profile("aubebot")
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.politeness.min_delay_s = 0  # type: ignore[misc]
    with pytest.raises(TypeError):
        p.fetch.max_bytes["feed"] = 1  # type: ignore[index]


def test_aube_typed_feed_section() -> None:
    p = load_profile("aubebot")
    assert p.feed.max_items == 40
    assert p.feed.article_followup is not None
    assert p.feed.article_followup.per_source_per_window == 5
    assert p.feed.article_followup.window_s == 900.0
    assert "agenda" not in p.spec.tasks and p.agenda.extractor == "structured"  # not run: read as defaults


def test_spring_04_title_refetch_has_one_default_wherever_it_is_read() -> None:
    # crawl.py and tasks.py each read title_refetch_after_s with their own fallback (0 and a
    # week); the profile now always carries the key when a page or sitemap task runs.
    p = load_profile_data({"extends": "springstudiobot", "tasks": {"sitemap_fallback": None}})
    assert p.task("sitemap_fallback")["title_refetch_after_s"] == WEEK
    assert fallback(p).title_refetch_after_s == WEEK
    scheduled_only = load_profile_data({"extends": "aubebot",
                                        "schedules": [{"expression": "rate(1 day)", "task": "sitemap"}]})
    assert scheduled_only.task("sitemap_fallback")["title_refetch_after_s"] == WEEK
    assert scheduled_only.task_kinds == ("feed", "sitemap")


def test_an_unused_task_kind_stays_out_of_the_mapping() -> None:
    p = load_profile("praha-x")
    assert set(p.get("tasks")) == {"feed", "site_check"}
    assert "article_followup" not in load_profile_data({"extends": "praha-x", "tasks": {"feed": None}}).task("feed")


def test_profile_show_mapping_is_plain_json() -> None:
    import json

    for bot in BUILTIN_BOTS:
        json.dumps(load_profile(bot).data)


_CODE = Path(__file__).resolve().parents[2]
_READERS = ["layers/core/heed_core/tasks.py", "layers/core/heed_core/rounds.py", "layers/core/heed_core/crawl.py",
            "layers/aws/heed_aws/runtime.py", "src/heed/samconfig.py", "src/heed/local/runtime.py"]


def test_the_code_reads_a_profile_only_through_its_typed_sections() -> None:
    # One way to read a profile (issue 23): typed sections, validated at load, so a misspelled
    # key is an AttributeError for mypy, never a silent None. No dotted get, no task mapping.
    import re

    found = []
    for path in sorted([*(_CODE / "layers").rglob("*.py"), *(_CODE / "src").rglob("*.py")]):
        if path.name == "profile.py" or path.name == "botcheck.py":
            continue  # where the mapping and the sections are made; a diff of two profiles' keys
        text = path.read_text(encoding="utf-8")
        for n, line in enumerate(text.splitlines(), 1):
            # a dotted key written out, built (f"tasks.{x}", a + "b"), or a task's mapping
            if re.search(r'\b(?:p|profile|self\.p|inp\.profile)(?:\(\))?\.(?:get\((?:f?"[a-z_]+\.|[a-z_]+ \+)|task\()',
                         line):
                found.append(f"{path.relative_to(_CODE)}:{n}: {line.strip()}")
    assert not found, "\n".join(found)


def test_every_dotted_key_the_code_reads_is_declared() -> None:
    import re

    from heed_core.profile import key_reference

    declared = {k for k, *_ in key_reference()}
    sections = {k.rsplit(".", 1)[0] for k in declared} | {k.split(".")[0] for k in declared}
    read = set()
    for rel in _READERS + ["src/heed/infopage.py"]:
        read |= set(re.findall(r'\bp(?:rofile)?\.get\("([a-z_.0-9]+)"', (_CODE / rel).read_text(encoding="utf-8")))
    unknown = {k for k in read if k not in declared and k not in sections}
    assert not unknown

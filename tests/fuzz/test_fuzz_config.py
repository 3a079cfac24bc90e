"""What a person writes, fuzzed: a profile (any mapping ends as a Profile or as one ProfileError
line naming the key) and a sources file, YAML or CSV (any file ends as sources or as one
SourcesError line with the reason). Never a traceback, never a second line."""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from heed_core.profile import BUILTIN_BOTS, Profile, ProfileError, key_reference, load_profile, load_profile_data
from heed_core.sources import SourcesError, load_source_file

from tests.support.fuzz import bounded
from tests.support.fuzzgen import any_mapping, short_text, url_like

# Every key a profile may have, its last part and its section, so examples hit real keys.
_KEYS = sorted({part for k, *_ in key_reference() for part in k.replace("<", "").replace(">", "").split(".")})
profile_key = st.sampled_from(_KEYS + ["extends", "politeness", "robots", "tasks", "identity", "texts"])


def _one_line(message: str) -> None:
    assert message and "\n" not in message and "Traceback" not in message, message


@given(any_mapping(profile_key), st.one_of(st.none(), st.sampled_from(BUILTIN_BOTS), short_text))
@example({}, "\n")  # found: the file name of extends, line break and all, in the message (now escaped)
def test_any_mapping_ends_as_a_profile_or_one_profile_error_line(data: dict[str, Any], extends: str | None) -> None:
    if extends is not None:
        data = {**data, "extends": extends}
    try:
        profile = bounded(lambda: load_profile_data(data))
    except ProfileError as exc:
        _one_line(str(exc))
    else:
        assert isinstance(profile, Profile) and profile.name


_override = st.fixed_dictionaries({}, optional={
    "politeness": any_mapping(profile_key), "robots": any_mapping(profile_key), "responses": any_mapping(profile_key),
    "tasks": st.dictionaries(st.sampled_from(["feed", "page", "sitemap", "site_check", "subsidy", "agenda", "x"]),
                             any_mapping(profile_key), max_size=2),
    "schedules": st.lists(st.fixed_dictionaries({}, optional={"expression": st.one_of(
        st.sampled_from(["rate(15 minutes)", "cron(0 6 * * ? *)", "rate(0 minutes)", "cron(61 * * * ? *)",
                         "rate(1 day)",
                         "cron(0 7,9 ? * MON-FRI *)", "cron(* * * * * *)", "rate(x)"]), short_text),
        "task": st.one_of(st.sampled_from(["feed", "page", "nope"]), short_text)}), max_size=3),
    "user_agent": short_text, "robots_token": short_text, "language": short_text, "info_url": url_like,
})


@given(st.sampled_from(BUILTIN_BOTS), _override)
def test_any_override_of_a_shipped_bot_ends_as_a_profile_or_one_line(bot: str, override: dict[str, Any]) -> None:
    try:
        bounded(lambda: load_profile_data({"extends": bot, **override}))
    except ProfileError as exc:
        _one_line(str(exc))


_source = st.one_of(
    st.fixed_dictionaries({}, optional={"url": url_like, "kind": st.one_of(st.sampled_from(
        ["feed", "page", "sitemap", "site_check", "subsidy", "agenda", "feeds"]), short_text),
        "id": st.one_of(short_text, st.integers(), st.booleans(), st.none()), "write_about": st.one_of(
            st.booleans(), short_text), "render": st.one_of(st.booleans(), short_text),
        "sitemaps": st.one_of(st.lists(url_like, max_size=3), url_like, st.integers())}),
    any_mapping(st.sampled_from(["url", "kind", "id", "sitemaps", "write_about", "render"])),
    short_text, st.integers(), st.none(),
)
_yaml_file = st.one_of(
    st.builds(lambda s: yaml.safe_dump({"sources": s}, allow_unicode=True), st.lists(_source, max_size=4)),
    st.builds(lambda d: yaml.safe_dump(d, allow_unicode=True), any_mapping(st.just("sources"))),
    short_text, st.sampled_from(["sources:", "sources: []", "- a", "{", "sources: [{url: 1}]", "\ufeffsources: x"]),
)
_csv_cell = st.one_of(url_like, short_text, st.sampled_from(["feed", "page", "true", "false", "a|b", '"', ",", ""]))
_csv_file = st.lists(st.lists(_csv_cell, max_size=6), max_size=5).map(
    lambda rows: "\n".join(",".join(r) for r in rows))
_csv_with_header = st.tuples(st.sampled_from(["url,kind", "url,kind,id,write_about,render,sitemaps", "kind,url",
                                              "URL, Kind ,id", "url", ""]), _csv_file).map("\n".join)


@given(st.sampled_from(BUILTIN_BOTS), st.one_of(
    st.tuples(st.just(".yaml"), _yaml_file), st.tuples(st.just(".csv"), st.one_of(_csv_with_header, _csv_file)),
    st.tuples(st.sampled_from([".yaml", ".csv"]), st.binary(max_size=500).map(lambda b: b.decode("latin-1")))))
def test_any_sources_file_ends_as_sources_or_one_sources_error_line(bot: str, file: tuple[str, str]) -> None:
    suffix, text = file
    profile = load_profile(bot)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"sources{suffix}"
        path.write_bytes(text.encode("utf-8", "surrogatepass") if suffix == ".csv" else text.encode("utf-8", "replace"))
        try:
            sources = bounded(lambda: load_source_file(path, profile))
        except SourcesError as exc:
            _one_line(str(exc))
        else:
            assert sources and all(s.id and s.kind for s in sources)

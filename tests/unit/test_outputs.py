"""heed.outputs: the one reader of a run's output folder."""
from __future__ import annotations

from pathlib import Path

import pytest

from heed.outputs import OutputError, read_jsonl, read_records, read_summary


def test_records_in_file_order_blank_lines_none_a_missing_file_none(tmp_path: Path) -> None:
    (tmp_path / "requests.jsonl").write_text('{"url": "a"}\n\n{"url": "b"}\n', encoding="utf-8")
    (tmp_path / "skips.jsonl").write_text('{"url": "c", "reason": "robots_disallowed"}\n', encoding="utf-8")
    assert [(k, r["url"]) for k, r in read_records(tmp_path)] == [("request", "a"), ("request", "b"), ("skip", "c")]
    assert read_jsonl(tmp_path / "items.jsonl") == []


def test_the_half_written_last_line_of_a_killed_run_is_no_record(tmp_path: Path) -> None:
    (tmp_path / "requests.jsonl").write_text('{"url": "a"}\n{"url": "b", "sta', encoding="utf-8")
    assert [r["url"] for r in read_jsonl(tmp_path / "requests.jsonl")] == ["a"]


def test_a_line_that_is_not_a_record_is_named_unless_not_strict(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_text('{"url": "a"}\n[1, 2]\n{"url": "b"}\n', encoding="utf-8")
    with pytest.raises(OutputError, match=r"items.jsonl:2: not a JSON record \(is this a heed run's output\?\)"):
        read_jsonl(path)
    assert [r["url"] for r in read_jsonl(path, strict=False)] == ["a", "b"]
    assert OutputError("x").exit_code == 2


def test_a_summary_is_a_mapping_or_an_error(tmp_path: Path) -> None:
    assert read_summary(tmp_path) == {}
    (tmp_path / "summary.json").write_text('{"bot": "aubebot"}', encoding="utf-8")
    assert read_summary(tmp_path) == {"bot": "aubebot"}
    (tmp_path / "summary.json").write_text("[]", encoding="utf-8")
    with pytest.raises(OutputError, match="not a run's summary"):
        read_summary(tmp_path)

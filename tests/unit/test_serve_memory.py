"""A serving process keeps its heap to a few malloc arenas and gives free pages back (issue 34:
resident memory flat over months)."""
from __future__ import annotations

import os
import platform

import pytest

from heed_embedded import memory
from heed_embedded.memory import ARENAS, Trimmer, limit_arenas

glibc = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc arenas and malloc_trim are glibc's")


@glibc
def test_the_arenas_are_limited_for_the_process_and_the_workers_it_spawns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert limit_arenas() is True
    assert os.environ["MALLOC_ARENA_MAX"] == str(ARENAS)  # a spawned worker's glibc reads it at its start


@glibc
def test_an_operators_malloc_arena_max_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLOC_ARENA_MAX", "8")
    assert limit_arenas() is False
    assert os.environ["MALLOC_ARENA_MAX"] == "8"


@glibc
def test_the_heap_is_trimmed_at_most_once_an_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr(memory.time, "monotonic", lambda: now[0])
    trimmer = Trimmer(60.0)
    assert trimmer.maybe() is False  # not before the first interval
    now[0] += 60.0
    assert trimmer.maybe() is True
    now[0] += 30.0
    assert trimmer.maybe() is False
    now[0] += 30.0
    assert trimmer.maybe() is True


def test_elsewhere_than_glibc_both_are_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    monkeypatch.setattr(memory, "_libc", lambda: None)
    assert limit_arenas() is False
    trimmer = Trimmer(0.0)
    assert trimmer.maybe() is False

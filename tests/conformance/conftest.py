"""The conformance suites' fixtures: a web of recording sites per test, the shared scenarios once a
session, and the shipped profiles run in the background. The helpers themselves are in
tests/support/ (``web``: the sites and what they saw; ``pages``: what they serve; ``runs``: runs of
the real stack; ``scenarios``: the runs several rule files share)."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support import scenarios
from tests.support.runs import Background, Scenario
from tests.support.web import Web


@pytest.fixture
def web() -> Iterator[Web]:
    w = Web()
    yield w
    w.stop()


def _scenario(build: Callable[[Web, Path], Scenario], out_dir: Path) -> Iterator[Scenario]:
    w = Web()
    try:
        yield build(w, out_dir)
    finally:
        w.stop()


@pytest.fixture(scope="session")
def spring_pacing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    yield from _scenario(scenarios.spring_pacing, tmp_path_factory.mktemp("spring_pacing"))


@pytest.fixture(scope="session")
def spring_redirects(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    yield from _scenario(scenarios.spring_redirects, tmp_path_factory.mktemp("spring_redirects"))


@pytest.fixture(scope="session")
def aube_round(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    yield from _scenario(scenarios.aube_round, tmp_path_factory.mktemp("aube_round"))


# --- shipped profiles, run as a user runs them, in the background ---------------------------------
# A test module that defines ``start_in_background() -> Background`` gets it started as soon as the
# tests are collected, so the real waits of the shipped numbers pass while the other tests run.

_BACKGROUND: dict[str, Background] = {}


def pytest_collection_finish(session: pytest.Session) -> None:
    for item in session.items:
        module = getattr(item, "module", None)
        starter = getattr(module, "start_in_background", None)
        if starter is not None and "background" in getattr(item, "fixturenames", ()):
            key = str(module.__file__)
            if key not in _BACKGROUND:
                _BACKGROUND[key] = starter()


def pytest_sessionfinish(session: pytest.Session) -> None:
    for bg in _BACKGROUND.values():
        bg.close()
    _BACKGROUND.clear()


@pytest.fixture(scope="module")
def background(request: pytest.FixtureRequest) -> Background:
    """This module's background run (started at collection, or now if it was not)."""
    key = str(request.module.__file__)
    if key not in _BACKGROUND:
        _BACKGROUND[key] = request.module.start_in_background()
    return _BACKGROUND[key]

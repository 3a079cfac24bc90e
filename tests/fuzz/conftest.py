"""The fuzz suite's settings: a bounded number of examples in the normal run (CI included), many
more on demand: ``HYPOTHESIS_PROFILE=long .venv/bin/pytest tests/fuzz``.

Every example has a deadline (a parser that takes seconds on a few KB is a bug: the crawler reads
what strangers serve); each test also bounds the memory one example may take (tests/support/fuzz.py)."""
from __future__ import annotations

import os
from datetime import timedelta

from hypothesis import HealthCheck, settings

_SLOW_DATA = [HealthCheck.too_slow, HealthCheck.data_too_large]

# The normal run: the same examples every time (a CI failure reproduces), enough to catch a
# regression of what the long runs found.
settings.register_profile("ci", max_examples=60, deadline=timedelta(seconds=2), derandomize=True,
                          suppress_health_check=_SLOW_DATA, print_blob=True)
# A hunt: new examples every run (the failures it finds are kept in .hypothesis/ and replayed first).
settings.register_profile("long", max_examples=3000, deadline=timedelta(seconds=2),
                          suppress_health_check=_SLOW_DATA, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

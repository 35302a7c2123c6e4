"""The fuzz suite's hypothesis settings (see conftest.py): ``FUZZ`` per test, sized by
``SPARE_FUZZ_PROFILE`` = ``fast`` (default, derandomized) or ``long``."""
from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILE = os.environ.get("SPARE_FUZZ_PROFILE", "fast")
if PROFILE not in ("fast", "long"):
    raise ValueError(f"SPARE_FUZZ_PROFILE must be 'fast' or 'long', got {PROFILE!r}")

_SUPPRESS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
             HealthCheck.function_scoped_fixture]
settings.register_profile("fuzz-fast", max_examples=40, derandomize=True, deadline=None,
                          print_blob=True, suppress_health_check=_SUPPRESS, database=None)
# SPARE_FUZZ_EXAMPLES overrides the long profile's examples per generator (default 2000)
settings.register_profile("fuzz-long", max_examples=int(os.environ.get("SPARE_FUZZ_EXAMPLES", "2000")),
                          derandomize=False, deadline=None, print_blob=True, suppress_health_check=_SUPPRESS)


def fuzz(scale: float = 1.0) -> settings:
    """Settings of one fuzz test; ``scale`` shrinks (or grows) its example count for
    generators whose cases are expensive (each case forks a process)."""
    base = settings.get_profile(f"fuzz-{PROFILE}")
    return settings(base, max_examples=max(5, int(base.max_examples * scale)))

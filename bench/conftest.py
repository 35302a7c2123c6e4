"""pytest-benchmark suites: ``python -m pip install -e '.[bench]' && python -m pytest bench``.

Groups follow SimPy's benchmark layout: micro-operations, targeted behaviours, whole
simulations; each group carries our kernel and its peer so ratios come from one run."""
import pytest

pytest.importorskip("pytest_benchmark")

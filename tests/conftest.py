"""Hypothesis profiles: ``ci`` (default; fast and derandomized so CI is deterministic) and
``thorough`` for local runs: ``HYPOTHESIS_PROFILE=thorough pytest``."""
import os
import signal
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, settings

# A suite started in the background of a non-interactive shell inherits SIGINT ignored (job
# control off), and so would every command it starts: the Ctrl-C tests need Python's own
# handler here and in their children (an exec resets a handled signal to its default).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

settings.register_profile(
    "ci",
    max_examples=60,
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


class Done(NamedTuple):
    """What a command left, in the subprocess result's names (and as ``code, out, err``)."""

    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def spare_here(capsys, monkeypatch):
    """``spare ARGV`` through :func:`spare_core.cli.main` in this process: a :class:`Done`."""
    from spare_core.cli import main

    monkeypatch.delenv("SPARE_DEBUG", raising=False)

    def call(*argv):
        capsys.readouterr()
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse: --help, --version, usage errors
            code = exc.code if isinstance(exc.code, int) else 1
        out, err = capsys.readouterr()
        return Done(code, out, err)

    return call

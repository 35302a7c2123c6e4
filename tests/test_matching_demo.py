"""`spare demo` runs, certifies every step and agrees with scipy (it exits 1 otherwise)."""
import re

from spare_core.cli import main


def test_demo_runs_to_wipe_out_with_certificates(capsys):
    assert main(["demo", "--types", "60", "--redundancy", "3", "--seed", "1", "--every", "5"]) == 0
    out = capsys.readouterr().out
    steps = re.search(r"König certificates: (\d+)/(\d+) steps", out)
    assert steps and steps.group(1) == steps.group(2)
    assert "wipe-out" in out


def test_demo_rejects_bad_arguments():
    # bad input is one line on stderr and exit status 2 (tests/test_cli.py checks the line)
    assert main(["demo", "--types", "10", "--redundancy", "11"]) == 2

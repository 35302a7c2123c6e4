"""How a command runs a study: the one executor with a progress bar, and a clean stop on
Ctrl-C that keeps the runs finished so far (written by the command, marked interrupted)."""
from __future__ import annotations

import sys
from typing import Any

from ..sim import ResultSet, Study, execute

__all__ = ["progress_bar", "run_study"]


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int, desc: str, unit: str = "run") -> Any:
    """A tqdm bar on stderr when stderr is a terminal (shown after 2 s), else a silent one.

    tqdm is optional (the ``cli`` extra): without it there is no bar.
    """
    if not sys.stderr.isatty():
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, delay=2.0, leave=False, dynamic_ncols=True)


def run_study(study: Study, *, workers: int, desc: str) -> ResultSet:
    """``study`` on the executor in ``workers`` local processes (0: one per CPU), with a bar;
    after Ctrl-C the result set holds the groups finished before it (``interrupted``)."""
    bar = progress_bar(len(study), desc)
    shown = [0]

    def advance(p: Any) -> None:
        bar.update(p.computed - shown[0])
        shown[0] = p.computed

    try:
        return execute(study, workers=workers, on_progress=advance, on_interrupt="return")
    finally:
        bar.close()

"""Regressions of issue 16: a graph written by another Python thread while a solver runs.

The race itself is fuzzed in tests/fuzz/test_fuzz_threads.py (before this fix
``min_cost_flow`` died of SIGSEGV there in 2 of 5 seeds). Here the worst timing is made
deterministic: the write lands between the wrapper's range scan and the kernel's build of
its graph, which runs without the GIL.
"""
import os
import signal
import threading

import numpy as np

from spare_core.graph import _validate as graph_validate
from spare_core.graph import flow


class _WriteAfterScan:
    """The flow kernel, except that ``scan_network`` lets "another thread" write an
    out-of-range node into the caller's ``head`` once the scan has passed."""

    def __init__(self, kernel, victim):
        self._kernel, self._victim = kernel, victim

    def __getattr__(self, name):
        return getattr(self._kernel, name)

    def scan_network(self, *args, **kwargs):
        out = self._kernel.scan_network(*args, **kwargs)
        self._victim[:] = 2**40          # node ids far out of range, written after the check
        return out


def _in_child(fn):
    """``fn()`` in a forked child: True if it returned, else the signal's name."""
    pid = os.fork()
    if pid == 0:
        try:
            fn()
            os._exit(0)
        except BaseException:  # noqa: BLE001 - reported on stderr, failed by the status
            import traceback
            traceback.print_exc()
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return signal.Signals(os.WTERMSIG(status)).name
    return os.WEXITSTATUS(status) == 0


def test_min_cost_flow_with_other_threads_running_solves_private_copies(monkeypatch):
    n, m = 50, 400
    rng = np.random.default_rng(7)
    tail, head = rng.integers(0, n, m), rng.integers(0, n, m)
    cap, cost = rng.integers(0, 5, m), rng.integers(0, 9, m)
    supply = np.zeros(n, dtype=np.int64)
    supply[0], supply[-1] = 4, -4
    expected = flow.min_cost_flow(n, tail, head, cap, cost, supply)

    def solve():  # in the child: a forked process keeps only the thread that forked
        stop = threading.Event()
        other = threading.Thread(target=stop.wait)
        other.start()
        try:
            # the network is scanned by the graph library's one validation path
            monkeypatch.setattr(graph_validate, "_mcf", _WriteAfterScan(graph_validate._mcf, head))
            got = flow.min_cost_flow(n, tail, head, cap, cost, supply)
        finally:
            stop.set()
            other.join()
        assert got.cost == expected.cost and np.array_equal(got.flow, expected.flow)
    assert _in_child(solve) is True


def test_hopcroft_karp_with_other_threads_running_checks_private_copies(monkeypatch):
    """The kernel's one-pass check reads its input twice (check, then copy) without the
    GIL; handed the caller's arrays, a writer thread could slip an unchecked index in
    between (SIGSEGV in tests/fuzz/test_fuzz_threads.py before this fix). With other
    threads running it must only ever see private copies."""
    import scipy.sparse as sp

    from spare_core.graph import matching

    g = sp.csr_array(np.eye(40))
    seen = []
    real = matching._kern.csr_checked

    class _Spy:
        def __getattr__(self, name):
            return getattr(matching._kern, name)

        @staticmethod
        def csr_checked(indptr, indices, *args):
            seen.append((np.shares_memory(indptr, g.indptr), np.shares_memory(indices, g.indices)))
            return real(indptr, indices, *args)

    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        monkeypatch.setattr(graph_validate, "_hk", _Spy())   # where the graph is checked
        assert matching.hopcroft_karp(g).size == 40
    finally:
        stop.set()
        other.join()
    assert seen == [(False, False)]

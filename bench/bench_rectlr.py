"""pytest-benchmark suite for spare_core.strategies.spare.rectlr (issue 4), with the rebuild-per-failure peer.

Groups (SimPy's layout): ``rectlr-micro`` one failure decision from a mid-sequence state;
``rectlr-sequence`` whole random failure orders to the wipe-out; each group carries the
peer (scipy matching + OR-Tools flow rebuilt per failure, ``bench/peers.py``'s
``RebuildController``) on the same state or on a prefix of the same sequence.
``python -m pytest bench/bench_rectlr.py``; ``python -m bench.ratios rectlr`` prints the ratios.
"""
from __future__ import annotations

import pytest

from spare_core.strategies.spare.layout import StackedLayout
from spare_core.strategies.spare.rectlr import Rectlr

from bench.peers import RebuildController
from bench.workloads import failure_order


def _mid_sequence(ctl, order, k):
    """Restart and fail the first k groups; the setup of one timed decision."""
    ctl.restart()
    ctl.fail_many(order[:k])


@pytest.mark.benchmark(group="rectlr-micro")
@pytest.mark.parametrize("phase1", ["kernel", "matching"])
def test_one_decision_n1000_r10(benchmark, phase1):
    order = failure_order(1000)
    ctl = Rectlr(StackedLayout(1000, 10), phase1=phase1)
    k = 300  # well into the sequence (mean endured ~ 513): S >= 2, Phase 0 and reorders mixed

    def setup():
        _mid_sequence(ctl, order, k)
        return (int(order[k]),), {}

    d = benchmark.pedantic(ctl.fail, setup=setup, rounds=200)
    assert d.kind in ("fixed", "reordered", "wipeout")


@pytest.mark.benchmark(group="rectlr-micro")
def test_one_decision_n1000_r10_peer(benchmark):
    pytest.importorskip("ortools")
    order = failure_order(1000)
    lay = StackedLayout(1000, 10)
    ours, peer = Rectlr(lay), RebuildController(lay)
    ours.fail_many(order[:300])
    stacks, alive, s = ours.stacks, ours.alive.copy(), ours.stack_depth

    def setup():  # the peer starts from our exact state
        peer.stacks, peer.alive, peer.S = stacks.copy(), alive.copy(), s
        return (int(order[300]),), {}

    benchmark.pedantic(peer.fail, setup=setup, rounds=20)


@pytest.mark.benchmark(group="rectlr-sequence")
@pytest.mark.parametrize("n,r", [(1000, 10), (10_000, 14)])
@pytest.mark.parametrize("phase1", ["kernel", "matching"])
def test_sequence_to_wipeout(benchmark, n, r, phase1):
    order = failure_order(n)
    ctl = Rectlr(StackedLayout(n, r), phase1=phase1)

    def run():
        ctl.restart()
        return ctl.fail_many(order)

    decisions = benchmark.pedantic(run, rounds=5 if n > 1000 else 20)
    assert decisions[-1].kind == "wipeout"
    benchmark.extra_info["failures"] = len(decisions)


@pytest.mark.benchmark(group="rectlr-sequence")
def test_sequence_prefix_peer(benchmark):
    pytest.importorskip("ortools")
    order = failure_order(1000)
    peer = RebuildController(StackedLayout(1000, 10))

    def run():
        peer.restart()
        for g in order[:50].tolist():
            peer.fail(g)

    benchmark.pedantic(run, rounds=3)
    benchmark.extra_info["failures"] = 50

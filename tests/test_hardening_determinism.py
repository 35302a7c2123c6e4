"""Determinism as a contract (issue 16): a run's numbers depend only on (scenario, policy,
parameters, seed), bit for bit: not on the sweep around it, the worker count, the state of
a shared failure cache, or an exception raised by an earlier run in the same process."""
import dataclasses
import os
import pickle

import numpy as np
import pytest

from spare_core.distributions import Deterministic, Exponential
from spare_core.events import (DomainFailures, FailureModel, GroupLifetimes, NodeRenewals, RunFailures, SystemRenewals,
                               Trace, TraceReplay)
from spare_core.sim import Scenario, make_policy, simulate, sweep

SC = Scenario(24, n_steps=400, t_compute=1.0, t_allreduce=0.2, system_mtbf=150.0, weibull_shape=0.8,
              restart_time=30.0, checkpoint_time=3.0, name="det")
CELLS = [("ckpt", 1), ("rep", 2), ("rep", 3), ("spare", 2), ("spare", 4)]


def _numbers(run):
    """Every number a run reports, exactly (floats compared by their bits through repr)."""
    d = run.to_dict()
    return {k: repr(v) for k, v in d.items() if k not in ("timeline",)}


def _fresh(policy, r, seed):
    return _numbers(simulate(SC, make_policy(policy, r) if policy != "ckpt" else make_policy("ckpt"), seed=seed))


def _in_child(fn, *args):
    """fn(*args) in a forked child: a process that has run nothing else."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            with os.fdopen(w, "wb") as f:
                f.write(pickle.dumps(fn(*args)))
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    return pickle.loads(data)


def test_simulate_gives_the_same_numbers_in_a_fresh_process():
    for policy, r in CELLS:
        assert _fresh(policy, r, 7) == _in_child(_fresh, policy, r, 7)


def test_simulate_after_an_earlier_exception_gives_the_same_numbers():
    expected = _in_child(_fresh, "spare", 2, 3)

    class Exploding:
        """A policy-shaped object whose interval rule raises halfway into the protocol."""

    with pytest.raises((TypeError, ValueError)):
        simulate(SC, Exploding(), seed=3)
    with pytest.raises(ValueError):
        simulate(SC, make_policy("spare", 99), seed=3)      # r > N: refused
    assert _fresh("spare", 2, 3) == expected


def _cells(result):
    return {(run.policy, run.redundancy, run.seed): _numbers(run) for run in result.runs}


def test_sweep_numbers_do_not_depend_on_the_worker_count():
    one = _cells(sweep(SC, policies=("ckpt", "rep", "spare"), redundancies=[2, 3], seeds=[0, 1], processes=1))
    two = _cells(sweep(SC, policies=("ckpt", "rep", "spare"), redundancies=[2, 3], seeds=[0, 1], processes=2))
    assert one == two


def test_sweep_numbers_do_not_depend_on_the_seeds_around_them():
    wide = _cells(sweep(SC, policies=("rep", "spare"), redundancies=[2, 3], seeds=[0, 1, 2]))
    narrow = _cells(sweep(SC, policies=("rep", "spare"), redundancies=[2, 3], seeds=[1]))
    for key, numbers in narrow.items():
        assert wide[key] == numbers, key


def test_a_sweep_cell_equals_a_fresh_simulate_bit_for_bit():
    res = sweep(SC, policies=("ckpt", "rep", "spare"), redundancies=[2, 4], seeds=[0, 1])
    differ = []
    for run in res.runs:
        fresh = None
        for p in ("ckpt", "rep", "spare"):
            pol = make_policy(p, run.redundancy) if p != "ckpt" else make_policy("ckpt")
            if pol.name == run.policy:
                fresh = _numbers(simulate(SC, pol, seed=run.seed))
        assert fresh is not None, run.policy
        if fresh != _numbers(run):
            differ.append((run.policy, run.redundancy, run.seed))
    assert not differ, f"{len(differ)} of {len(res.runs)} sweep cells differ from a fresh simulate: {differ}"


def test_a_sweep_cell_does_not_depend_on_the_redundancies_around_it():
    wide = _cells(sweep(SC, policies=("rep", "spare"), redundancies=[2, 3, 4, 6], seeds=[0]))
    narrow = _cells(sweep(SC, policies=("spare",), redundancies=[3], seeds=[0]))
    for key, numbers in narrow.items():
        assert wide[key] == numbers, key


# -- every failure model, and the states a shared cache can be in --------------------------------

class _Wrapped:
    """A user's process (no ``restart_from_zero``): the epoch cache must rebuild it per epoch
    and still hand out the offsets a fresh run sees."""

    def __init__(self, inner):
        self._p = inner
        self.n_units = inner.n_units

    epoch = property(lambda self: self._p.epoch)
    epoch_start = property(lambda self: self._p.epoch_start)
    now = property(lambda self: self._p.now)
    n_alive = property(lambda self: self._p.n_alive)

    def restart(self, time):
        self._p.restart(time)

    def take(self, k, with_units=True):
        return self._p.take(k, True)

    def take_units(self):
        return []


@dataclasses.dataclass(frozen=True)
class _UserModel(FailureModel, kind="test-determinism-user"):
    """Per-unit Weibull lifetimes behind a process the library did not write."""

    system_mtbf: float = 150.0

    def mtbf(self, n_groups):
        return self.system_mtbf

    def process(self, n_groups, seed, *, start=0.0):
        return _Wrapped(GroupLifetimes(system_mtbf=self.system_mtbf, shape=0.8).process(n_groups, seed, start=start))

    def describe(self, n_groups):
        return "test: per-unit behind a user's process"


def _trace():
    rng = np.random.default_rng(5)
    times = np.sort(rng.exponential(150.0, 60).cumsum() / 8)
    return Trace(times, rng.integers(0, 24, 60), n_units=24, end=float(times[-1]) + 10.0)


MODELS = {
    "per-unit": dict(system_mtbf=150.0, weibull_shape=0.8),
    "per-unit-deterministic": dict(lifetime=Deterministic(24 * 150.0), failure_model="per-unit"),
    "system": dict(system_mtbf=150.0, weibull_shape=0.8, failure_model="system"),
    "node": dict(system_mtbf=150.0, weibull_shape=0.8, failure_model="node", gpus_per_group=16),
    "trace": dict(failure_model=TraceReplay(_trace(), after="loop")),
    "domains": dict(failure_model=DomainFailures(GroupLifetimes(system_mtbf=300.0, shape=0.8),
                                                 [Exponential(4 * 300.0)], groups_per_domain=[4])),
    "domains-system": dict(failure_model=DomainFailures(SystemRenewals(system_mtbf=300.0, shape=0.8),
                                                        [Exponential(4 * 300.0)], groups_per_domain=[6])),
    "domains-node": dict(failure_model=DomainFailures(NodeRenewals(system_mtbf=300.0, shape=0.8, gpus_per_group=16),
                                                      [Exponential(4 * 300.0)], groups_per_domain=[4])),
    "user": dict(failure_model=_UserModel()),
}


def _scenario(model):
    return Scenario(24, n_steps=300, t_compute=1.0, t_allreduce=0.2, restart_time=30.0, checkpoint_time=3.0,
                    name=f"det-{model}", **MODELS[model])


def _policy(policy, r):
    return make_policy("ckpt") if policy == "ckpt" else make_policy(policy, r)


@pytest.mark.parametrize("model", sorted(MODELS))
def test_every_failure_model_gives_a_sweep_cell_the_numbers_of_a_fresh_simulate(model):
    sc = _scenario(model)
    res = sweep(sc, policies=("ckpt", "rep", "spare"), redundancies=[2, 4], seeds=[0, 1])
    assert len(res.runs) == 10
    labels = {_policy(p, 2).name: p for p in ("ckpt", "rep", "spare")}
    for run in res.runs:
        fresh = _numbers(simulate(sc, _policy(labels[run.policy], run.redundancy), seed=run.seed))
        assert _numbers(run) == fresh, (model, run.policy, run.redundancy, run.seed)


@pytest.mark.parametrize("model", ["per-unit", "system", "domains", "user"])
def test_a_shared_cache_read_shallow_first_gives_the_numbers_of_a_fresh_cache(model):
    """Another reader that moved the driver ahead, and shallow runs first, make the cache
    rebuild its driver for the deep runs, and a run that needs the victims of epochs read
    for times only completes them from a side stream: none of this may show in a number."""
    sc = _scenario(model)
    cells = [("ckpt", 1), ("spare", 2), ("rep", 2), ("spare", 4), ("ckpt", 1), ("rep", 4), ("spare", 12)]
    for seed in (0, 3):
        shared = sc.epoch_failures(seed)
        shared.times(6, 1)  # another reader took the driver to epoch 6 with one failure each
        for policy, r in cells:
            got = _numbers(simulate(sc, _policy(policy, r), seed=seed, failures=shared))
            assert got == _numbers(simulate(sc, _policy(policy, r), seed=seed)), (model, policy, r, seed)
    assert shared.rebuilds > 0  # the order above did exercise a rebuild


def test_runs_sharing_a_run_source_get_the_numbers_of_a_fresh_simulate():
    """A model whose epochs depend on when they start (domains over node renewals) is read
    through one process per source; a run that restarts after fewer failures than another
    reader took must see its own history, not the process the other reader moved on."""
    sc = _scenario("domains-node")
    cells = [("spare", 12), ("ckpt", 1), ("spare", 2), ("rep", 2), ("spare", 4), ("rep", 4)]
    for seed in (0, 1, 2):
        shared = sc.epoch_failures(seed)
        assert isinstance(shared, RunFailures)
        shared.get(0, 40, start=0.0)  # another reader went deep into epoch 0
        for policy, r in cells:
            got = _numbers(simulate(sc, _policy(policy, r), seed=seed, failures=shared))
            assert got == _numbers(simulate(sc, _policy(policy, r), seed=seed)), (policy, r, seed)


def test_recording_a_timeline_changes_no_number():
    """A checkpoint-only run without a timeline reads failure times only (no victims drawn)."""
    for model in ("per-unit", "system", "domains"):
        sc = _scenario(model)
        for policy, r in (("ckpt", 1), ("spare", 3)):
            pol = _policy(policy, r)
            assert _numbers(simulate(sc, pol, seed=2, timeline=True)) == _numbers(simulate(sc, pol, seed=2))

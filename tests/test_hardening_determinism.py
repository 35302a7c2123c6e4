"""Determinism as a contract (issue 16): a run's numbers depend only on (scenario, policy,
parameters, seed), bit for bit: not on the sweep around it, the worker count, the state of
a shared failure cache, or an exception raised by an earlier run in the same process."""
import math
import os
import pickle

import pytest

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
        name = {"CKPT-only": "ckpt"}.get(run.policy, None)
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

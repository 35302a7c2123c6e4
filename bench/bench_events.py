"""pytest-benchmark suite of the failure event engine (``python -m pytest bench/bench_events.py``).

Groups (SimPy's benchmark layout): micro-operations (one step / one FailureStream failure),
targeted behaviours (restart of a large per-unit epoch), whole simulations
(``simulate_renewals`` at 60k and 600k units against the peers of ``bench/peers.py`` on
the same workload). Compare within a group; ``python -m bench.ratios events`` prints the ratios.
"""
import pytest

from spare_core.distributions import Deterministic
from spare_core.events import Engine, FailureStream

from bench import peers
from bench.workloads import EVENTS_CASES, EVENTS_IDS, LIFE, MEAN_LIFE

# the retired event engine (spare_core.events._engine) is tested until it is removed
pytestmark = pytest.mark.filterwarnings("ignore:spare_core.events.* is retired:DeprecationWarning")


# -- micro-operations ------------------------------------------------------------------
@pytest.mark.benchmark(group="micro: one event")
def test_engine_step(benchmark):
    eng = Engine(10_000, seed=1)
    eng.add_renewals(LIFE, Deterministic(10.0))
    eng.add_timer(60.0)
    benchmark(eng.step)


@pytest.mark.benchmark(group="micro: one event")
@pytest.mark.parametrize("model", ["per-unit", "system"])
def test_failure_stream_next_failure(benchmark, model):
    s = FailureStream.with_system_mtbf(1000, 300.0, 0.78, model=model, seed=1)

    def one():
        t, u = s.next_failure()
        if u < 0:
            s.restart(s.now)

    benchmark(one)


# -- targeted behaviours ---------------------------------------------------------------
@pytest.mark.benchmark(group="behaviour: node renewals, 600k GPUs (75k nodes, N=600)")
def test_node_log_chunk(benchmark):
    """One chunk of the wall-clock node failure log (~4096 failures): batch draws + one sort."""
    from spare_core.events import NodeRenewals

    m = NodeRenewals(system_mtbf=300.0, gpus_per_group=1000)
    log = m.log(600, 1)
    benchmark.extra_info["workload"] = "NodeFailureLog.extend, 4096 MTBFs of wall time"
    benchmark.pedantic(log.extend, rounds=5, iterations=1)


@pytest.mark.benchmark(group="behaviour: node renewals, 600k GPUs (75k nodes, N=600)")
def test_node_epoch_turnover(benchmark):
    """A restart and its epoch's first 8 failures read from the shared log (what a run pays)."""
    from spare_core.events import NodeRenewals

    src = NodeRenewals(system_mtbf=300.0, gpus_per_group=1000).epoch_source(600, 1)
    state = {"k": 0, "start": 0.0}

    def epoch():
        k, start = state["k"], state["start"]
        t, _ = src.get(k, 8, start=start)
        state["k"], state["start"] = k + 1, start + float(t[-1]) + 60.0

    benchmark(epoch)


@pytest.mark.benchmark(group="behaviour: restart 600k units")
@pytest.mark.parametrize("model", ["per-unit", "system"])
def test_failure_stream_restart(benchmark, model):
    s = FailureStream.with_system_mtbf(600_000, 300.0, 0.78, model=model, seed=1)

    def restart_and_fail():
        s.restart(s.now)
        s.next_failure()

    benchmark.pedantic(restart_and_fail, rounds=5, iterations=1)


@pytest.mark.benchmark(group="behaviour: engine run with checkpoint timer, 1k units")
def test_engine_run_stop_on_failures(benchmark):
    def run():
        eng = Engine(1000, seed=2)
        eng.add_renewals(LIFE, Deterministic(10.0))
        eng.add_timer(60.0)
        n = 0
        while eng.run(until=20_000.0, stop_on="failure") is not None:
            n += 1
        return n

    benchmark.pedantic(run, rounds=3, iterations=1)


# -- whole simulations -----------------------------------------------------------------
@pytest.mark.parametrize("n, repair", EVENTS_CASES, ids=EVENTS_IDS)
@pytest.mark.parametrize("impl", ["ours", "numpy"])
def test_simulate_renewals(benchmark, n, repair, impl):
    benchmark.group = f"simulate_renewals {n} units, {repair!r}, 5 cycles"
    horizon = 5 * (MEAN_LIFE + repair.mean)
    fn = peers.ours if impl == "ours" else peers.numpy_loop
    events, _ = benchmark.pedantic(fn, args=(n, repair, horizon, 0), rounds=3, iterations=1)
    benchmark.extra_info["events"] = events


@pytest.mark.parametrize("impl", ["ours", "heapq", "simpy"])
def test_simulate_renewals_vs_slow_peers(benchmark, impl):
    benchmark.group = "simulate_renewals 60k units, fixed repair, 1 cycle"
    if impl == "simpy":
        pytest.importorskip("simpy")
    repair = Deterministic(10.0)
    fn = {"ours": peers.ours, "heapq": peers.heapq_loop, "simpy": peers.simpy_loop}[impl]
    events, _ = benchmark.pedantic(fn, args=(60_000, repair, MEAN_LIFE + repair.mean, 0), rounds=1, iterations=1)
    benchmark.extra_info["events"] = events

"""spare_core's benchmarks, one suite (import as ``bench.<module>`` from the repository root).

- ``bench/workloads.py``: every workload (graph and flow instances, event-engine cases,
  simulator scenarios, pacing cases, sweep specs, failure logs), from seeded generators;
  ``bench/families.py`` the matching graph-family catalogue;
- ``bench/peers.py``: our entry points as a caller uses them and every peer (scipy, OR-Tools,
  networkx, SimPy, numpy loops, a rebuild-per-failure controller);
- ``python -m bench.ratios [suite ...] [--quick]``: the ratio tables (``bench/tables/<suite>.py``),
  our median time next to the peer's in the same run;
- ``python -m pytest bench``: the pytest-benchmark suites (``bench/bench_<suite>.py``);
- ``python -m bench.ab_kernels`` / ``python -m bench.ab_pacing``: A/B timing of two builds;
  ``python -m bench.sweep_1e5`` and the ``*_table`` scripts: the measurements behind the docs.
"""

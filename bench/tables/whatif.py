"""whatif: the what-if analysis of a job's trace, whole (read + graph + every replay), at 128 and 16,384 ranks, and against the artifact's analyzer.

``python -m bench.ratios whatif [--quick] [--artifact DIR] [--peer-python PY]``

- **128 ranks × 40 steps** (dp 32 × pp 4, 4 microbatches, a planted slow GPU: 1.3e5 ops):
  reading the Parquet file and the CSV file, and :func:`spare_core.stragglers.analyse` (graph,
  effective durations, (a), (b), every DP rank, stage, op type and worker kept, the four fixes,
  M_W and M_S), median wall seconds of ``--repeats``. Target: <= 1 s whole.
- **16,384 ranks × 10 steps** (dp 2,048 × pp 8, 8 microbatches: ~9e6 ops), in a fresh process:
  synthesis, the Parquet write, the read, the analysis, once each, and the process's peak RSS.
  Target: <= 60 s for read + analysis. Skipped with ``--quick``.
- **The artifact's traces** (``--artifact DIR``: a checkout of ByteDance-Seed/StragglerAnalysis with
  its ``data/``): our S and worst DP rank / stage / op type against its ``result-*.json``, and, with
  ``--peer-python`` (a Python whose pandas the analyzer runs with: it writes into arrays pandas 3
  makes read-only), its ``WhatIfAnalyzer.analyze`` timed in that interpreter next to our read + analyse
  of the same file, as a ratio (the peer does fewer replays: no per-worker what-ifs, no fixes).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.timing import wall_median

_BIG = r"""
import json, resource, sys, time
from spare_core.stragglers import analyse, read_trace, synthetic_trace, write_trace
path = sys.argv[1]
t0 = time.perf_counter()
tr = synthetic_trace(dp=2048, pp=8, microbatches=8, steps=10, slow={4097: 1.5}, jitter=0.05, seed=0)
t1 = time.perf_counter()
n = tr.n_ops
write_trace(path, tr)
del tr
t2 = time.perf_counter()
back = read_trace(path)
t3 = time.perf_counter()
r = analyse(back)
t4 = time.perf_counter()
print(json.dumps({"ops": n, "synth": t1 - t0, "write": t2 - t1, "read": t3 - t2, "analyse": t4 - t3,
                  "rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
                  "slowdown": r.slowdown, "worst": r.fixes["worker"].label}))
"""

_PEER = r"""
import json, sys, time, yaml, io, contextlib, logging
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[1] + "/analyzer")
logging.disable(logging.CRITICAL)
from analyzer.wia import WhatIfAnalyzer
from analyzer.metatypes import JobMeta
out = {}
for t in sys.argv[3].split(","):
    m = JobMeta(**yaml.safe_load(open(f"{sys.argv[1]}/data/meta-{t}.yaml")))
    ts = []
    for _ in range(int(sys.argv[2])):
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            r = WhatIfAnalyzer(f"{sys.argv[1]}/data/trace-{t}.parquet", root=None, steps=None).analyze(m)
        ts.append(time.perf_counter() - t0)
    ts.sort()
    out[t] = {"seconds": ts[len(ts) // 2], "slowdown": r.blocking_slowdown}
print(json.dumps(out))
"""


def add_arguments(p):
    p.add_argument("--repeats", type=int, default=5, help="timed repeats per cell (median; 3 with --quick)")
    p.add_argument("--artifact", default=None, metavar="DIR",
                   help="a checkout of ByteDance-Seed/StragglerAnalysis (its data/ and analyzer/)")
    p.add_argument("--peer-python", default=None, metavar="PY",
                   help="the interpreter to run the artifact's analyzer with (pandas < 3); default: none")


def _env():
    src = str(Path(__file__).resolve().parents[2] / "src")
    return dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))


def run(args) -> int:
    from spare_core.stragglers import analyse, read_meta, read_trace, synthetic_trace, write_trace

    repeats = 3 if args.quick else args.repeats
    with tempfile.TemporaryDirectory() as d:
        tr = synthetic_trace(dp=32, pp=4, microbatches=4, steps=40, slow={37: 1.5}, jitter=0.05, seed=0)
        pq, csv = os.path.join(d, "t128.parquet"), os.path.join(d, "t128.csv")
        write_trace(pq, tr, shuffle=0)
        write_trace(csv, tr, shuffle=0)
        read_pq = wall_median(lambda: read_trace(pq), repeats)
        read_csv = wall_median(lambda: read_trace(csv), repeats)
        back = read_trace(pq)
        ana = wall_median(lambda: analyse(back), repeats)
        whole = wall_median(lambda: analyse(read_trace(pq)), repeats)
        r = analyse(back)
        print(f"128 ranks x 40 steps: {tr.n_ops:,} ops; median wall seconds of {repeats}")
        print(f"  read Parquet {read_pq:.3f} s   read CSV {read_csv:.3f} s   analyse {ana:.3f} s   "
              f"read Parquet + analyse {whole:.3f} s (target <= 1 s)")
        print(f"  S = {r.slowdown:.4f}, worst worker {r.fixes['worker'].label} (planted 37)")
        if not args.quick:
            proc = subprocess.run([sys.executable, "-c", _BIG, os.path.join(d, "t16k.parquet")], capture_output=True,
                                  text=True, env=_env(), timeout=1800)
            if proc.returncode:
                print(proc.stderr)
                return 1
            b = json.loads(proc.stdout)
            print(f"16,384 ranks x 10 steps: {b['ops']:,} ops, once each: synthesis {b['synth']:.1f} s, "
                  f"Parquet write {b['write']:.1f} s, read {b['read']:.1f} s, analyse {b['analyse']:.1f} s; "
                  f"read + analyse {b['read'] + b['analyse']:.1f} s (target <= 60 s); peak RSS {b['rss_gb']:.2f} GB")
            print(f"  S = {b['slowdown']:.4f}, worst worker {b['worst']} (planted 4097)")
    if args.artifact:
        names = ("ST", "SE", "AR")
        peer = {}
        if args.peer_python:
            proc = subprocess.run([args.peer_python, "-c", _PEER, args.artifact, str(repeats), ",".join(names)],
                                  capture_output=True, text=True, timeout=3600)
            if proc.returncode:
                print(f"the artifact's analyzer did not run: {proc.stderr.strip().splitlines()[-1]}")
            else:
                peer = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"the artifact's traces ({args.artifact}); median wall seconds of {repeats}")
        for t in names:
            trace = f"{args.artifact}/data/trace-{t}.parquet"
            sizes = read_meta(f"{args.artifact}/data/meta-{t}.yaml")
            ours = wall_median(lambda: analyse(read_trace(trace, sizes)), repeats)
            r = analyse(read_trace(trace, sizes))
            ref = json.load(open(f"{args.artifact}/data/result-{t}.json"))
            s_ref = ref["blocking_slowdown"]
            top = {k: max(ref[f"blocking_decompose_by_{k}"].items(), key=lambda kv: kv[1])[0]
                   for k in ("dp_rank", "stage")}
            mine = {"dp_rank": r.fixes["dp_rank"].label, "stage": r.fixes["stage"].label}
            opt_ref = max(ref["blocking_decompose_by_optype"].items(), key=lambda kv: kv[1])[0]
            line = (f"  {t}: {r.n_ops:>7,} ops  S {r.slowdown:.4f} vs published {s_ref:.4f} "
                    f"({100 * (r.slowdown / s_ref - 1):+.2f} %); worst dp {mine['dp_rank']}/{top['dp_rank']}, "
                    f"stage {mine['stage']}/{top['stage']}, op type {r.fixes['optype'].label}/{opt_ref}; "
                    f"ours {ours:.3f} s")
            if t in peer:
                line += f", analyzer {peer[t]['seconds']:.3f} s (S {peer[t]['slowdown']:.4f}): {peer[t]['seconds'] / ours:.1f}x"
            print(line)
    return 0

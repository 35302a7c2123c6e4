"""``spare whatif``: stragglers from a job's own trace (what-if analysis of recorded operations).

Reads a per-operation trace (Parquet or CSV, the schema of the OSDI 2025 artifact
ByteDance-Seed/StragglerAnalysis; docs/stragglers.md) with the job's sizes from ``--meta`` or
``--dp/--pp/--tp/--cp/--vpp`` (inferred from the trace without either), replays every step with
recorded and with ideal durations and prints the slowdown S, the worst worker, stage, DP rank
and op type with what fixing each would buy, and how much of the slowdown individual workers and
the last stage explain. ``--json FILE`` writes every number (``slowdown``, ``by_dp_rank``,
``by_stage``, ``by_optype``, ``by_worker``, ``per_step``, ...) under the provenance every ``spare``
output carries; ``--plot FILE`` draws the workers × steps heatmap. ``--synth FILE`` first writes a
synthetic trace from the straggler model (planted slow workers, an imbalanced last stage,
jitter, sequence-length spread, fabric contention) and analyses it.
"""
from __future__ import annotations

import argparse
import time
from typing import Any

from . import UsageError, bounded, positive_int, seed_int
from .outputs import check_output_path, provenance, shown_path, write_json

HELP = "stragglers from a job's own trace: slowdown S, which worker/stage/op type to blame, what fixing buys"

_pos_float = bounded(float, 1e-12, "a number > 0")
_nonneg = bounded(float, 0.0, "a number")


def _prob(text: str) -> float:
    v = _nonneg(text)
    if v > 1:
        raise argparse.ArgumentTypeError(f"must be a probability in [0, 1], got {v}")
    return v


def _slow(text: str) -> tuple[int, float]:
    rank, sep, factor = text.partition("=")
    try:
        r, f = int(rank), float(factor)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be RANK=FACTOR (e.g. 5=1.5), got {text!r}") from None
    if not sep or r < 0 or not (f > 0 and f < float("inf")):
        raise argparse.ArgumentTypeError(f"must be RANK=FACTOR with rank >= 0 and factor > 0, got {text!r}")
    return r, f


def _steps(text: str) -> list[tuple[int, int]]:
    out = []
    for part in text.split(","):
        a, sep, b = part.strip().partition("-")
        try:
            lo, hi = int(a), int(b) if sep else int(a)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be steps like 20-30,41, got {text!r}") from None
        if hi < lo:
            raise argparse.ArgumentTypeError(f"range {part!r} ends before it starts")
        out.append((lo, hi))
    return out


def add_arguments(parser) -> None:
    """Options of ``spare whatif``."""
    parser.add_argument("trace", nargs="?", metavar="TRACE",
                        help="the trace: Parquet (.parquet) or CSV, one row per operation (docs/stragglers.md)")
    parser.add_argument("--meta", metavar="FILE", default=None,
                        help="the job's sizes: a flat YAML 'key: value' file (the artifact's meta-*.yaml), "
                             ".json or .toml (dp_size, pp_size, tp_size, dsp_size, vpp_size, world_size)")
    for flag, what, default in (("dp", "data-parallel size", "the trace's"),
                                ("pp", "pipeline-parallel size", "the trace's"),
                                ("tp", "tensor-parallel size (GPUs per worker, with --cp)", "1"),
                                ("cp", "context-parallel size", "1"),
                                ("vpp", "model chunks per stage (interleaved schedule)", "from gmc, else 1")):
        parser.add_argument(f"--{flag}", type=positive_int, default=None, metavar="N",
                            help=f"{what}, instead of --meta (default: {default})")
    parser.add_argument("--ideal", choices=("mean", "median", "stage", "position"), default="mean",
                        help="ideal duration of an op: mean (computations; median for communications) of its "
                             "type over all workers and steps, the paper's rule (default); median for all; "
                             "stage = median of its type on its own stage (stage imbalance not blamed); "
                             "position = median of the same op (stage, type, microbatch position) over DP ranks "
                             "and steps")
    parser.add_argument("--steps", type=_steps, default=None, metavar="LIST",
                        help="analyse only these steps, e.g. 20-30,41 (default: all)")
    parser.add_argument("--json", metavar="FILE", default=None,
                        help="write slowdown, by_dp_rank, by_stage, by_optype, by_worker, per_step, ... as JSON")
    parser.add_argument("--plot", metavar="FILE", default=None,
                        help="save the workers x steps heatmap (PNG/PDF by suffix); needs matplotlib")
    parser.add_argument("--timeline", metavar="FILE", default=None,
                        help="write the slowest step replayed with recorded and with ideal durations as a "
                             "Chrome trace (open in Perfetto); at most 8 DP ranks: the worst first")
    g = parser.add_argument_group("synthetic traces (--synth)")
    g.add_argument("--synth", metavar="FILE", default=None,
                   help="write a synthetic trace (Parquet or CSV by suffix) from the straggler model with "
                        "--dp/--pp/--tp/--cp/--vpp (default 4 x 4) and analyse it")
    g.add_argument("--microbatches", type=positive_int, default=8, metavar="N",
                   help="microbatches per step (default 8)")
    g.add_argument("--n-steps", type=positive_int, default=10, metavar="N", help="steps (default 10)")
    g.add_argument("--slow", type=_slow, action="append", default=[], metavar="RANK=FACTOR",
                   help="plant a slow worker: its computations take FACTOR times as long (repeatable)")
    g.add_argument("--last-stage", type=_pos_float, default=1.0, metavar="FACTOR",
                   help="the last stage's computations take FACTOR times as long (default 1)")
    g.add_argument("--jitter", type=_nonneg, default=0.05, metavar="SD",
                   help="log-sd of per-op jitter (default 0.05)")
    g.add_argument("--seq-spread", type=_nonneg, default=0.0, metavar="SD",
                   help="log-sd of a per-microbatch sequence-length factor (default 0)")
    g.add_argument("--contention", type=_prob, default=0.0, metavar="P",
                   help="probability per step that the fabric is contended: communications x3 (default 0)")
    g.add_argument("--seed", type=seed_int, default=0, help="seed of the synthetic trace (default 0)")


def _sizes(args):
    from ..stragglers import JobSizes, TraceError, read_meta

    flags = {k: getattr(args, k) for k in ("dp", "pp", "tp", "cp", "vpp") if getattr(args, k) is not None}
    if args.meta is not None:
        if flags:
            raise UsageError(f"--meta and --{' --'.join(flags)} both give the sizes: use one")
        try:
            return read_meta(args.meta)
        except TraceError as exc:
            raise UsageError(str(exc)) from None
    if "dp" in flags and "pp" in flags:
        return JobSizes(**flags)
    if flags and args.synth is None:
        if not ({"dp", "pp"} & set(flags)):
            return None  # tp/cp/vpp alone: applied once dp and pp are inferred
        raise UsageError("give both --dp and --pp (or neither: they are inferred from the trace)")
    return None


def _select(trace, ranges):
    labels = [int(s) for s in trace.steps if any(lo <= s <= hi for lo, hi in ranges)]
    if not labels:
        raise UsageError(f"--steps: none of the trace's steps ({trace.steps[0]}..{trace.steps[-1]}) is selected")
    return trace.select_steps(labels)


def run(args) -> int:
    """Analyse the trace and print the report; 0 on success."""
    from dataclasses import replace

    from ..stragglers import JobSizes, TraceError, WhatIf, analyse, read_trace, synthetic_trace, write_trace

    # every argument and output path checked before any work
    if (args.trace is None) == (args.synth is None):
        raise UsageError("give a TRACE to analyse, or --synth FILE to write one and analyse it (not both)")
    check_output_path(args.json, "--json")
    check_output_path(args.plot, "--plot")
    check_output_path(args.timeline, "--timeline")
    if args.plot is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise UsageError("--plot needs matplotlib (pip install 'spare_core[plot]')") from None
    sizes = _sizes(args)
    t0 = time.perf_counter()
    if args.synth is not None:
        check_output_path(args.synth, "--synth")
        dims = {k: getattr(args, k) or d for k, d in (("dp", 4), ("pp", 4), ("tp", 1), ("cp", 1), ("vpp", 1))}
        if sizes is not None:
            dims = {"dp": sizes.dp, "pp": sizes.pp, "tp": sizes.tp, "cp": sizes.cp, "vpp": sizes.vpp}
        try:
            tr = synthetic_trace(**dims, microbatches=args.microbatches, steps=args.n_steps, slow=dict(args.slow),
                                 last_stage=args.last_stage, jitter=args.jitter, seq_spread=args.seq_spread,
                                 contention=args.contention, seed=args.seed)
        except ValueError as exc:
            raise UsageError(f"--synth: {exc}") from None
        write_trace(args.synth, tr, shuffle=args.seed)
        print(f"synthetic trace written to {shown_path(args.synth)} ({tr.n_ops:,} ops)")
        path = args.synth
        sizes = tr.sizes
    else:
        path = args.trace
    try:
        trace = read_trace(path, sizes)
        if sizes is None and any(getattr(args, k) for k in ("tp", "cp", "vpp")):
            z = trace.sizes
            trace = replace(trace, sizes=JobSizes(dp=z.dp, pp=z.pp, tp=args.tp or 1, cp=args.cp or 1,
                                                  vpp=args.vpp or z.vpp))
        if args.steps is not None:
            trace = _select(trace, args.steps)
        engine = WhatIf(trace, args.ideal)
        result = analyse(trace, engine=engine)
    except TraceError as exc:
        raise UsageError(str(exc)) from None
    elapsed = time.perf_counter() - t0
    print(result.report())
    print(f"\n{elapsed:.2f} s")
    if args.json:
        write_json(args.json, _document(args, result, elapsed))
        print(f"results written to {shown_path(args.json)}")
    if args.timeline:
        write_json(args.timeline, _timeline(engine, result))
        print(f"timeline written to {shown_path(args.timeline)} (open it in https://ui.perfetto.dev)")
    if args.plot:
        from ..stragglers.plot import heatmap
        from .plots import save_figure
        import matplotlib.pyplot as plt

        fig = heatmap(result)
        save_figure(fig, args.plot)
        plt.close(fig)
        print(f"heatmap written to {shown_path(args.plot)}")
    return 0


def _document(args: Any, result: Any, elapsed: float) -> dict[str, Any]:
    scenario = {"trace": args.synth or args.trace, "meta": args.meta, "ideal": args.ideal,
                "sizes": result.sizes.to_dict()}
    seeds = [args.seed] if args.synth else []
    prov = provenance("spare whatif", getattr(args, "argv", None), scenario=scenario, seeds=seeds,
                      timings={"elapsed_seconds": elapsed})
    return {"command": "spare whatif", "provenance": prov, **result.to_dict()}


def _timeline(engine: Any, result: Any) -> dict[str, Any]:
    """The slowest step, recorded (processes 0..) and ideal (processes 1000..), <= 8 DP ranks."""
    import numpy as np

    step = int(np.argmax(result.recorded / result.ideal))
    worst = int(result.fixes["dp_rank"].label)
    ranks = [worst] + [d for d in range(result.sizes.dp) if d != worst][:7]
    rec = engine.timeline(step, dp_ranks=ranks)
    ide = engine.timeline(step, ideal=True, dp_ranks=ranks)
    for e in ide["traceEvents"]:
        e["pid"] += 1000
    return {"traceEvents": rec["traceEvents"] + ide["traceEvents"], "displayTimeUnit": "ms",
            "otherData": {"step": rec["otherData"]["step"], "ideal_rule": result.ideal_rule,
                          "slowdown": float(result.recorded[step] / result.ideal[step])}}

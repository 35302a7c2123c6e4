"""Output files of the ``spare`` commands: checked before any work, written by the library's
one writer (:mod:`spare_core._writer`: through symlinks, regular files only, atomic, the umask,
strict JSON), each carrying its provenance (library version, the whole resolved scenario,
seeds, timings).

- ``--json FILE``: one document (provenance, summaries, best cells, every run);
- ``--csv FILE``: one row per run, the provenance as ``# ``-prefixed JSON lines on top
  (``pandas.read_csv(FILE, comment="#")`` reads the rows);
- ``--parquet FILE``: one row per run, the provenance as JSON in the schema's metadata
  under ``spare_core`` (pyarrow, the ``parquet`` extra).
"""
from __future__ import annotations

import csv
import datetime
import io
import json
import os
import platform
import sys
from typing import Any, Mapping, Sequence

from . import UsageError
from .._writer import OutputError, check_output, json_safe, write_atomic
from .._results import columns
from .._writer import write_json as _write_json
from ..sim.run import RunResult

__all__ = ["check_output_path", "check_plot_dir", "PLOT_FILES", "NULL_REASONS", "provenance", "write_json",
           "write_csv", "write_parquet", "RUN_COLUMNS", "MAIN_GRID", "run_record", "run_rows", "write_outputs", "shown_path", "check_parquet", "check_outputs",
           "add_output_arguments"]

#: the per-run columns of the CSV and Parquet outputs: the grid a run belongs to ("main", or
#: ``spare advise``'s "failure rate x0.5", "failure rate x1.5" and "interval scan"), its
#: scenario's N, then every column declared on :class:`~spare_core.sim.RunResult` (ETTR =
#: T0 / time-to-train, GPU-hours and cost among them; :func:`spare_core._results.columns`)
RUN_COLUMNS = ("grid", "n_groups", *(c.name for c in columns(RunResult)))

#: the grid of a command's own runs
MAIN_GRID = "main"


def check_output_path(path: str | None, flag: str) -> None:
    """Raise :class:`UsageError` unless ``path`` can be written (checked before any work): its
    directory exists and is writable, and the path (or a symlink's target) is a regular file or
    nothing yet; a directory, FIFO, device or socket is refused (docs/cli.md, "Outputs").

    The file is not created: a run that fails or is stopped leaves no partial file.
    """
    try:
        check_output(path, flag)
    except OutputError as exc:
        raise UsageError(str(exc)) from None


#: the files ``--plot DIR`` writes into DIR (``spare run``/``advise``/``compare``; ``spare pacing``: pacing.png)
PLOT_FILES = ("ttt_vs_r.png", "ettr_vs_interval.png", "timeline.png")


def check_plot_dir(path: str | None, flag: str = "--plot", files: Sequence[str] = PLOT_FILES) -> None:
    """Raise :class:`UsageError` unless ``path`` is (or can be made) a writable directory in
    which ``files`` can be written (:func:`check_output_path`), and matplotlib is importable;
    all before any work."""
    if path is None:
        return
    if not path or not path.strip():
        raise UsageError(f"{flag} must be a directory path, got {path!r}")
    if path == "-":
        raise UsageError(f"{flag} takes a directory ({', '.join(files)}); '-' (stdout) cannot hold them")
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"{flag} must be a directory, but {path!r} is a file")
    probe = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(probe):
        raise UsageError(f"{flag}: the directory {probe!r} does not exist (for {path!r})")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise UsageError(f"{flag}: the directory {probe!r} is not writable")
    if os.path.isdir(path):
        for name in files:
            check_output_path(os.path.join(path, name), flag)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError(f"{flag} needs matplotlib: pip install 'spare_core[plot]'") from None


def provenance(command: str, argv: Sequence[str] | None, *, scenario: Mapping[str, Any], seeds: Sequence[int],
               timings: Mapping[str, Any], interrupted: bool = False) -> dict[str, Any]:
    """Who made a result and from what: enough to run it again and get the same numbers."""
    import numpy
    import scipy

    from .. import __version__

    return {
        "tool": "spare_core",
        "version": __version__,
        "command": command,
        "argv": list(argv) if argv is not None else sys.argv[1:],
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "platform": platform.platform(),
        "scenario": dict(scenario),
        "seeds": list(seeds),
        "timings": dict(timings),
        "interrupted": interrupted,
    }


#: why a value of a run, a cell or a best cell is null in the JSON outputs (strict JSON: no Infinity/NaN)
_UNFINISHED_RUN = "a run did not finish before the horizon (its time-to-train is only bounded below)"
_UNFINISHED_CELL = "a seed of the cell did not finish before the horizon"
_ONE_SEED = "one seed: no confidence interval"
_NO_TOKEN_COST = ("no job.tokens_per_step, no price (costs.gpu_hour; costs.spot_gpu_hour for the spot one), the GPUs "
                  "paid for unknown, or a run did not finish (it did not train the job's tokens); or one seed: no "
                  "confidence interval")
NULL_REASONS = {
    # a run's and a cell's fields that are None (after to_dict) only when a run did not finish
    **{k: {"inf": _UNFINISHED_RUN, "null": _UNFINISHED_RUN, "nan": _ONE_SEED} for k in ("ratio", "time_to_train")},
    **{k: {"inf": _UNFINISHED_CELL, "null": _UNFINISHED_CELL} for k in ("ratio_mean", "ratio_std", "ratio_max")},
    "ratio_min": {"inf": "no seed of the cell finished before the horizon",
                  "null": "no seed of the cell finished before the horizon"},
    # a run's ETTR, a cell's mean ETTR, advise's [mean, low, high]
    "ettr": {"nan": "a run did not finish before the horizon (its ETTR, T0 / time-to-train, is below 1 / horizon), "
                    "or one seed gives no confidence interval",
             "null": "a run did not finish before the horizon: its ETTR (T0 / time-to-train) is below 1 / horizon"},
    # a run's (and a cell's mean) GPU-hours and cost, None when the scenario does not say
    "gpu_hours": {"null": "the scenario gives no gpus_per_group: the GPUs paid for are unknown",
                  "nan": "the scenario gives no gpus_per_group: the GPUs paid for are unknown"},
    "cost": {"null": "no price of a GPU-hour (costs.gpu_hour), or the GPUs paid for are unknown",
             "nan": "no price of a GPU-hour (costs.gpu_hour), or the GPUs paid for are unknown"},
    # a run's (a cell's mean, advise's [mean, low, high]) cost per million tokens
    **{k: {"null": _NO_TOKEN_COST, "nan": _NO_TOKEN_COST}
       for k in ("cost_per_mtoken", "on_demand_cost_per_mtoken", "spot_cost_per_mtoken")},
    # the [low, high] or [mean, low, high] of a confidence interval over one seed
    **{k: {"nan": _ONE_SEED, "inf": _UNFINISHED_CELL} for k in ("ratio_ci95", "ttt_days", "availability")},
    **{k: {"inf": _UNFINISHED_CELL, "nan": "undefined for this cell (one seed: no interval)"}
       for k in ("ratio_ci_low", "ratio_ci_high", "ratio_q05", "ratio_q50", "ratio_q95",
                 "runner_up_ratio")},
}


def _json_safe(value: Any) -> Any:
    return json_safe(value, NULL_REASONS)


def write_json(path: str, doc: Mapping[str, Any]) -> None:
    """``doc`` as indented strict JSON (a non-finite float becomes null, its reason under
    ``"null_reasons"``), written by the one writer (atomic, through symlinks, the umask)."""
    _write_json(path, doc, reasons=NULL_REASONS, indent=1)


def run_record(run: Any, grid: str = MAIN_GRID) -> dict[str, Any]:
    """A run's ``to_dict()`` (every declared column, ETTR = T0 / time-to-train among them: None
    if it did not finish) with its grid."""
    return {"grid": grid, **run.to_dict()}


def run_rows(runs: Sequence[Any], n_groups: Mapping[str, int], grid: str = MAIN_GRID) -> list[dict[str, Any]]:
    """One dict per run with :data:`RUN_COLUMNS` (``n_groups`` maps scenario name -> N)."""
    rows = []
    for r in runs:
        d = run_record(r, grid)
        d["n_groups"] = n_groups.get(r.scenario)
        rows.append({k: _plain(d.get(k)) for k in RUN_COLUMNS})
    return rows


def _plain(v: Any) -> Any:
    """A table cell: a NaN (an unfinished run's ETTR) is an empty cell, as a None is."""
    return None if isinstance(v, float) and v != v else v


def write_csv(path: str, rows: Sequence[Mapping[str, Any]], prov: Mapping[str, Any],
              columns: Sequence[str] = RUN_COLUMNS) -> None:
    """Rows under a header of ``columns`` (default: a run's), the provenance as ``# `` comment
    lines on top; atomic."""
    buf = io.StringIO()
    for line in json.dumps(_json_safe(prov), indent=None, allow_nan=False).splitlines():
        buf.write(f"# provenance: {line}\n")
    w = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow({k: ("" if v is None else v) for k, v in row.items()})
    write_atomic(path, buf.getvalue().encode("utf-8"))


def write_parquet(path: str, rows: Sequence[Mapping[str, Any]], prov: Mapping[str, Any],
                  columns: Sequence[str] = RUN_COLUMNS) -> None:
    """Rows as a Parquet table of ``columns`` (default: a run's), the provenance as JSON in the
    schema metadata; atomic."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols = {k: [row[k] for row in rows] for k in columns}
    table = pa.table(cols).replace_schema_metadata(
        {"spare_core": json.dumps(_json_safe(prov), allow_nan=False)})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    write_atomic(path, sink.getvalue().to_pybytes())


def check_parquet(path: str | None) -> None:
    """--parquet needs pyarrow: say so before any work."""
    if path is None:
        return
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise UsageError("--parquet needs pyarrow: pip install 'spare_core[parquet]'") from None


def write_outputs(args: Any, doc: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
                  prov: Mapping[str, Any]) -> list[str]:
    """Write every output the user asked for (``args.json``, ``args.csv``, ``args.parquet``);
    return the paths written."""
    written = []
    if getattr(args, "json", None):
        write_json(args.json, doc)
        written.append(shown_path(args.json))
    if getattr(args, "csv", None):
        write_csv(args.csv, rows, prov)
        written.append(shown_path(args.csv))
    if getattr(args, "parquet", None):
        write_parquet(args.parquet, rows, prov)
        written.append(shown_path(args.parquet))
    return written


def shown_path(path: str) -> str:
    """An output path as the report names it ("-" is stdout)."""
    return "stdout" if path == "-" else path


def add_output_arguments(parser: Any) -> None:
    """``--json``, ``--csv``, ``--parquet`` (and ``--plot DIR``) on a command's parser."""
    parser.add_argument("--json", metavar="FILE", default=None,
                        help="write the results as JSON, with provenance (version, scenario, seeds, timings)")
    parser.add_argument("--csv", metavar="FILE", default=None,
                        help="write one row per run as CSV (provenance in '# ' lines on top)")
    parser.add_argument("--parquet", metavar="FILE", default=None,
                        help="write one row per run as Parquet (provenance in the schema metadata; needs pyarrow)")
    parser.add_argument("--plot", metavar="DIR", default=None,
                        help="write PNG plots into DIR (created if missing; needs matplotlib)")


def check_outputs(args: Any) -> None:
    """Check every output option of ``args`` before any work."""
    for flag in ("json", "csv", "parquet"):
        check_output_path(getattr(args, flag, None), f"--{flag}")
    check_parquet(getattr(args, "parquet", None))
    check_plot_dir(getattr(args, "plot", None))

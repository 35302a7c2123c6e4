"""Fuzz: Scenario/simulate, pacing controllers, trace files, scenario files and the CLI.

Every case runs in a forked child with a time limit, so a hang (an infinite T0 or wall
limit, an unbounded failure loop) fails the test instead of stalling CI.
"""
from __future__ import annotations

import io
import math
import os
import contextlib

import numpy as np
from hypothesis import given, strategies as st

from fuzz_arrays import FLOAT_EDGES
from fuzz_isolate import run_isolated
from fuzz_profile import fuzz
from spare_core.pacing import BaselinePacer, PacingScenario, SpreadPacer, simulate_iterations
from spare_core.sim import Scenario, make_policy, simulate

SMALL = dict(n_groups=16, n_steps=200, t_compute=1.0, t_allreduce=0.1, system_mtbf=500.0, weibull_shape=0.8,
             restart_time=20.0, checkpoint_time=2.0)
NUMBERS = FLOAT_EDGES + [1e-300, 1e300, 1e308, 2**63, -(2**63), 0.5, 3, "1", None, True]


@fuzz(2.0)
@given(st.sampled_from(sorted(set(SMALL) | {"jitter", "max_wall_factor", "shrink_time", "controller_time"})),
       st.sampled_from(NUMBERS), st.sampled_from(["ckpt", "rep", "spare"]))
def test_scenario_parameters_at_the_edges_end_or_are_refused(key, value, policy):
    params = dict(SMALL, **{key: value})

    def go():
        sc = Scenario(**params)
        r = simulate(sc, make_policy(policy, r=2) if policy != "ckpt" else make_policy("ckpt"), seed=0)
        return float(r.ttt) if hasattr(r, "ttt") else repr(r)[:100]
    out = run_isolated(go, case=f"Scenario({key}={value!r}) {policy}", timeout=60)
    out.check_clean(f"Scenario({key}={value!r})")


def test_unbounded_scenarios_are_refused_before_any_work():
    for extra in (dict(t_compute=1e308), dict(max_wall_factor=1e308), dict(n_steps=2**62, t_compute=1e300),
                  dict(restart_time=0.0, system_mtbf=1e-6)):
        out = run_isolated(lambda: simulate(Scenario(**dict(SMALL, **extra)), make_policy("ckpt"), seed=0),
                           case=f"simulate(Scenario({extra}))", timeout=10)
        out.check_clean(f"Scenario({extra})")
        assert not out.ok, f"Scenario({extra}) was accepted"


class BadPacer:
    def __init__(self, value):
        self.value = value

    def reset(self):
        pass

    def hold(self, last):
        if isinstance(self.value, Exception):
            raise self.value
        return self.value


@fuzz(1.0)
@given(st.sampled_from(NUMBERS + ["0.1", b"0", [0.1], np.float32(0.1), np.array(0.1), complex(1, 0)]))
def test_custom_pacers_returning_anything(value):
    def go():
        r = simulate_iterations(PacingScenario(n_nodes=4), 20, controller=BadPacer(value), seed=0)
        return float(np.mean(r.iteration_time)) if hasattr(r, "iteration_time") else 0.0
    out = run_isolated(go, case=f"hold() -> {value!r}")
    out.check_clean(f"hold() -> {value!r}")
    if isinstance(value, (str, bytes, list, bool, complex)) or value is None:
        assert not out.ok, f"hold() returning {value!r} was accepted"


@fuzz(1.0)
@given(st.sampled_from([SpreadPacer, BaselinePacer]), st.sampled_from(["patience", "hold_max", "threshold_on"]),
       st.sampled_from(NUMBERS + [2**53, 2**53 + 1, 2**64, 10**30]))
def test_pacer_parameters_at_the_edges(cls, key, value):
    def go():
        p = cls(**{key: value})
        r = simulate_iterations(PacingScenario(n_nodes=4), 30, controller=p, seed=0)
        return repr(p)
    out = run_isolated(go, case=f"{cls.__name__}({key}={value!r})")
    out.check_clean(f"{cls.__name__}({key}={value!r})")


TRACE_LINES = ["time,unit", "0,1", "1.5,2", "nan,1", "inf,0", "-1,0", "1e400,0", "2,99999999999999999999999",
               "3,-1", "4,1.5", "x,y", "", ",", "5", "6,1,extra", "1e-320,0", "\ufeff7,0", "8;0", "9,0x1"]


@fuzz(1.5)
@given(lines=st.lists(st.sampled_from(TRACE_LINES), max_size=8), header=st.booleans())
def test_malformed_trace_csv_files(tmp_path_factory, lines, header):
    from spare_core.events import load_trace_csv
    path = tmp_path_factory.mktemp("trace") / "t.csv"
    path.write_text("\n".join((["time,unit"] if header else []) + lines) + "\n")

    def go():
        t, u = load_trace_csv(str(path))
        return t.tolist(), u.tolist()
    out = run_isolated(go, case=f"load_trace_csv({lines})")
    out.check_clean("load_trace_csv")
    if out.ok:
        t, u = out.value
        assert all(math.isfinite(x) and x >= 0 for x in t) and all(0 <= x < 2**31 for x in u)
        # every data row is either read or refused: only a first row whose two cells are
        # both names (start with a letter or _) may be skipped as a header
        # a row whose cells are all empty (",", as spreadsheets export empty rows) is a blank line
        rows = [ln for ln in (["time,unit"] if header else []) + lines if ln.replace(",", "").strip()]

        def is_name(c):
            c = c.strip()
            return bool(c) and (c[0].isalpha() or c[0] == "_")
        if rows and len(rows[0].split(",")) >= 2 and all(is_name(c) for c in rows[0].split(",")[:2]):
            rows = rows[1:]
        assert len(t) == len(rows), (lines, t)


SCENARIO_SNIPPETS = [
    "", "[cluster]\n", "gpus = 1e308\n", "[job]\nsteps = -1\n", "[failures]\nmtbf = \"0 s\"\n",
    "[failures]\nmtbf = \"1e400 h\"\n", "name = 3\n", "[[x]]\n", "x = nan\n", "[job]\nstep_time = \"inf s\"\n",
    "\x00", "[job\n", "a = 'b'\n", "[cluster]\nnodes = 99999999999999999999999\n",
    # counts that used to build a range of that many numbers (a hang, then MemoryError)
    "[compare]\nr_max = 1000000000000000000\n", "[compare]\nseeds = 1000000000000\n",
    "[compare]\nprocesses = 1000000000\n", "\ufeffname = 'bom'\n", "name = 'crlf'\r\n",
]


@fuzz(1.0)
@given(snippets=st.lists(st.sampled_from(SCENARIO_SNIPPETS), max_size=4), base=st.sampled_from(
    ["examples/paper_600k.toml", "examples/llama3_16k.toml", None]))
def test_malformed_scenario_files(tmp_path_factory, snippets, base):
    from spare_core.scenario_file import load_scenario_file
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    text = open(os.path.join(root, base)).read() if base and os.path.exists(os.path.join(root, base)) else ""
    path = tmp_path_factory.mktemp("sc") / "s.toml"
    path.write_text(text + "\n" + "".join(snippets))
    out = run_isolated(lambda: repr(load_scenario_file(str(path)))[:80], case=f"scenario file + {snippets}")
    out.check_clean("load_scenario_file")


CLI_ARGS = [
    [], ["--version"], ["demo", "--nodes", "x"], ["demo", "--seed", "-1"], ["demo", "--seed", "1e9"],
    ["pacing", "--nodes", "4", "4", "--iterations", "5"], ["pacing", "--nodes", "0"], ["pacing", "--nodes", "-3"],
    ["compare", "--json", ""], ["compare", "--horizon", "nan"], ["compare", "--horizon", "-1"],
    ["run", "/nonexistent.toml"], ["run"], ["advise", "/dev/null"], ["nosuchcommand"], ["demo", "--help"],
    ["demo", "--groups", "0"],
]


@fuzz(0.6)
@given(st.sampled_from(CLI_ARGS))
def test_cli_argument_lists(argv):
    from spare_core.cli import main

    def go():
        err, outp = io.StringIO(), io.StringIO()
        code = None
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(outp):
            try:
                code = main(list(argv))
            except SystemExit as exc:
                code = exc.code
        return code, err.getvalue()
    out = run_isolated(go, case=f"spare {' '.join(argv)}", timeout=120)
    # the CLI's contract: an exit status and a message, never a traceback
    assert out.ok, f"spare {argv}: {out.error_type.__name__}: {out.message}"
    code, err = out.value
    assert "Traceback" not in err, err
    assert code in (0, 1, 2, None), (code, err)
    if argv not in ([], ["--version"], ["demo", "--help"]):
        # every other list above is a user's mistake: a non-zero status and one line saying why
        # (2 for what the argument parser can tell, 1 for what only the model finds out)
        assert code in (1, 2) and "error:" in err, (argv, code, err)


# every numeric option of every command, by kind; "int" options are counts or seeds
CLI_NUMBER_OPTIONS = {
    "compare": [("--groups", "int"), ("--r-max", "int"), ("--seeds", "int"), ("--processes", "int"),
                ("--horizon", "float"), ("--steps", "int")],
    "pacing": [("--nodes", "int"), ("--iterations", "int"), ("--replicas", "int"), ("--seed", "int"),
               ("--nodes-per-leaf", "int"), ("--oversubscription", "float"), ("--background-duty", "float"),
               ("--background-run", "float")],
    "demo": [("--types", "int"), ("--redundancy", "int"), ("--seed", "int"), ("--every", "int")],
    "run": [("--r-max", "int"), ("--seeds", "int"), ("--steps", "int"), ("--horizon", "float"), ("--processes", "int")],
    "advise": [("--r-max", "int"), ("--seeds", "int"), ("--steps", "int"), ("--horizon", "float"),
               ("--processes", "int")],
    "sweep": [("--workers", "int"), ("--batch-runs", "int"), ("--task-seconds", "float")],
}
BAD_NUMBERS = {
    # overflow (beyond int64, beyond what int() converts), negative, not an integer
    "int": ["99999999999999999999", "9" * 5000, "-1", "-99999999999999999999", "nan", "inf", "1.5", "1e3", "", "x"],
    # overflow to inf, NaN, inf, negative, not a number
    "float": ["nan", "inf", "-inf", "1e400", "-1e400", "-1", "", "x", "0x1p3"],
}
ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


@fuzz(1.0)
@given(st.sampled_from(sorted(CLI_NUMBER_OPTIONS)), st.data())
def test_cli_numbers_out_of_range_exit_2_with_one_line(command, data):
    from spare_core.cli import main
    flag, kind = data.draw(st.sampled_from(CLI_NUMBER_OPTIONS[command]))
    value = data.draw(st.sampled_from(BAD_NUMBERS[kind]))
    argv = [command]
    if command in ("run", "advise"):
        argv.append(os.path.join(ROOT, "examples", "llama3_16k.toml"))
    if command == "sweep":
        argv += ["/nonexistent/spec.toml", "--store", "/nonexistent/store"]
    argv.append(f"{flag}={value}")  # "-inf" after a separate flag would read as an option

    def go():
        err, outp = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(outp):
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code
        return code, err.getvalue()
    shown = value if len(value) < 30 else value[:10] + "..."
    out = run_isolated(go, case=f"spare {command} {flag} {shown}", timeout=60)
    assert out.ok, f"spare {command} {flag} {shown}: {out.error_type.__name__}: {out.message}"
    code, err = out.value
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1, (command, flag, shown, code, err[:500])
    assert "error:" in lines[0] and flag in lines[0] and len(lines[0]) < 300, lines[0]

"""Fuzz: user code at the simulator's extension points, and the product layer's files.

- custom policies whose handler returns the wrong thing from ``on_failures`` (wrong type,
  wrong lengths, NaN/negative depths, restarts in the middle, raising);
- custom failure sources (the ``failures=`` :class:`spare_core.events.EpochSource` of
  ``simulate``) returning short, unsorted, NaN, negative, 2-d or mismatched arrays and
  group ids out of range;
- scenario files with every failure-model kind and rate form, at good and bad values;
- sweep specification files with good and bad entries, in UTF-8 with or without a BOM
  and CRLF line ends;
- failure trace files with odd encodings (BOM, CRLF, UTF-16, Latin-1), NUL bytes and huge
  unit ids.

Each case runs in a forked child: one clean error (ValueError/TypeError; the user's own
exception passes through unchanged) or an answer that satisfies its invariants.
"""
from __future__ import annotations

import math
import os

import numpy as np
from hypothesis import given, strategies as st

from fuzz_isolate import run_isolated
from fuzz_profile import fuzz
from spare_core.sim import Outcomes, Policy, Scenario, make_policy, simulate

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SMALL = dict(n_groups=8, n_steps=100, t_compute=1.0, t_allreduce=0.1, system_mtbf=60.0, restart_time=5.0,
             checkpoint_time=1.0)


class UserError(Exception):
    """Raised by the user code below: must reach the caller unchanged."""


def _bad_outcomes(kind, groups):
    n = groups.shape[0]
    ok = Outcomes(np.zeros(n, np.int8), np.ones(n), np.zeros(n))
    if kind == "ok":
        return ok
    if kind == "raise":
        raise UserError("handler failed")
    if kind == "none":
        return None
    if kind == "tuple":
        return (ok.restart, ok.depth, ok.patch_layers)
    if kind == "short" and n:
        return Outcomes(ok.restart[:-1], ok.depth[:-1], ok.patch_layers[:-1])
    if kind == "long":
        return Outcomes(np.zeros(n + 3, np.int8), np.ones(n + 3), np.zeros(n + 3))
    if kind == "mismatched":
        return Outcomes(ok.restart, ok.depth[: max(n - 1, 0)], ok.patch_layers)
    if kind in ("nan_depth", "inf_depth", "negative_depth", "zero_depth", "nan_patch", "negative_patch"):
        value = {"nan": np.nan, "inf": np.inf, "negative": -1.0, "zero": 0.0}[kind.split("_")[0]]
        out = Outcomes(ok.restart.copy(), ok.depth.copy(), ok.patch_layers.copy())
        (out.depth if kind.endswith("depth") else out.patch_layers)[:] = value
        return out
    if kind == "restart_in_middle" and n > 1:
        r = np.zeros(n, np.int8)
        r[0] = 1
        return Outcomes(r, ok.depth, ok.patch_layers)
    if kind == "restart_values":
        return Outcomes(np.full(n, 7, np.int8), ok.depth, ok.patch_layers)
    if kind == "lists":
        return Outcomes(ok.restart.tolist(), ok.depth.tolist(), ok.patch_layers.tolist())
    if kind == "strings":
        return Outcomes(ok.restart, ok.depth.astype(str), ok.patch_layers)
    return ok


class BadHandler:
    batch_hint = 4
    needs_groups = True

    def __init__(self, kind, every):
        self.kind, self.every, self.calls = kind, every, 0

    def on_failures(self, groups):
        self.calls += 1
        return _bad_outcomes(self.kind if self.calls % self.every == 0 else "ok", groups)

    def restart(self):
        if self.kind == "raise_on_restart":
            raise UserError("restart failed")


class BadPolicy(Policy):
    name = "user"

    def __init__(self, kind, every, depth=1.0):
        super().__init__()
        self.kind, self.every, self.depth = kind, every, depth

    def initial_depth(self, scenario):
        return self.depth

    def handler(self, scenario):
        return BadHandler(self.kind, self.every)


OUTCOME_KINDS = ["ok", "raise", "none", "tuple", "short", "long", "mismatched", "nan_depth", "inf_depth",
                 "negative_depth", "zero_depth", "nan_patch", "negative_patch", "restart_in_middle",
                 "restart_values", "lists", "strings", "raise_on_restart"]


@fuzz(1.0)
@given(st.sampled_from(OUTCOME_KINDS), st.integers(1, 4),
       st.sampled_from([1.0, 0.0, -1.0, math.nan, math.inf, "2", None]))
def test_custom_policies_returning_anything(kind, every, depth):
    def go():
        r = simulate(Scenario(**SMALL), BadPolicy(kind, every, depth), seed=0)
        return float(r.wall_time), float(r.time_to_train), bool(r.finished)
    out = run_isolated(go, case=f"policy {kind} every {every} depth {depth!r}")
    if out.error_type is UserError:
        assert kind in ("raise", "raise_on_restart")
        return
    out.check_clean(f"policy {kind} depth {depth!r}")
    if out.ok:
        wall, ttt, finished = out.value
        # an accepted run (the bad answer may come after the run ended) has real numbers
        assert math.isfinite(wall) and wall >= 0 and not math.isnan(ttt), (kind, out.value)


class BadSource:
    """An EpochSource that returns ``kind`` of wrong answer."""

    def __init__(self, kind, n_groups):
        self.kind, self.n = kind, n_groups

    def _arrays(self, k, need):
        m = max(need, 1) + 3
        t = np.cumsum(np.full(m, 7.0))
        g = np.arange(m) % self.n
        kind = self.kind
        if kind == "short":
            t, g = t[: max(need - 1, 0)], g[: max(need - 1, 0)]
        elif kind == "nan":
            t[m // 2] = np.nan
        elif kind == "inf":
            t[:] = np.inf
        elif kind == "negative":
            t -= 100.0
        elif kind == "unsorted":
            t = t[::-1].copy()
        elif kind == "group_out_of_range":
            g[0] = self.n + 5
        elif kind == "group_negative":
            g[0] = -2
        elif kind == "group_huge":
            g = g.astype(np.int64)
            g[0] = 2**62
        elif kind == "mismatched":
            g = g[:-1]
        elif kind == "two_d":
            t = t.reshape(1, -1)
        elif kind == "int_times":
            t = t.astype(np.int64)
        elif kind == "float_groups":
            g = g + 0.5
        elif kind == "lists":
            t, g = t.tolist(), g.tolist()
        elif kind == "raise":
            raise UserError("source failed")
        return t, g

    def times(self, k, need, want=0, *, start):
        return self._arrays(k, need)[0]

    def get(self, k, need, want=0, *, start):
        return self._arrays(k, need)

    def next_time(self, k, i, *, start):
        t = self._arrays(k, i + 1)[0]
        return float(np.ravel(t)[i]) if i < np.size(t) else math.inf


SOURCE_KINDS = ["ok", "short", "nan", "inf", "negative", "unsorted", "group_out_of_range", "group_negative",
                "group_huge", "mismatched", "two_d", "int_times", "float_groups", "lists", "raise"]


@fuzz(1.0)
@given(st.sampled_from(SOURCE_KINDS), st.sampled_from(["ckpt", "rep", "spare"]))
def test_custom_failure_sources_returning_anything(kind, policy):
    def go():
        sc = Scenario(**SMALL)
        pol = make_policy(policy) if policy == "ckpt" else make_policy(policy, r=2)
        r = simulate(sc, pol, seed=0, failures=BadSource(kind, sc.n_groups))
        return float(r.wall_time), int(r.failures_seen)
    out = run_isolated(go, case=f"source {kind} with {policy}")
    if out.error_type is UserError:
        assert kind == "raise"
        return
    out.check_clean(f"source {kind}")
    if out.ok:
        wall, seen = out.value
        assert math.isfinite(wall) and wall >= 0, (kind, out.value)


# -- scenario files ---------------------------------------------------------------------------
RATE_FORMS = {
    "mtbf": ['"2 h"', "7200", '"0 s"', '"-1 h"', '"1e400 s"', "nan", '"x"'],
    "node_mtbf": ['"30 d"', '"1e-300 s"', "0"],
    "per_node_day": ["0.01", "-1", "1e308", "inf"],
    "per_1000_node_days": ["6.5", "0", "1e-320"],
    "per_gpu_year": ["0.1", "1e300"],
}
MODEL_KINDS = ['"node"', '"per-unit"', '"system"', '"trace"', '"nope"', "3"]
SHAPES = ["0.78", "1", "0.001", "0", "-1", "1e308", "nan", '"x"']


@fuzz(1.5)
@given(model=st.sampled_from(MODEL_KINDS), form=st.sampled_from(sorted(RATE_FORMS)), data=st.data(),
       shape=st.one_of(st.none(), st.sampled_from(SHAPES)), after=st.sampled_from([None, '"stop"', '"loop"', '"fit"', '"x"']),
       extra=st.sampled_from([None, 'law = "fit"', 'interruptions = 419', 'period = "54 d"', 'restart = "0 s"']))
def test_scenario_files_with_every_failure_model(tmp_path_factory, model, form, data, shape, after, extra):
    from spare_core.scenario_file import load_scenario_file
    rate = data.draw(st.sampled_from(RATE_FORMS[form]))
    d = tmp_path_factory.mktemp("sf")
    (d / "log.csv").write_text("time,unit\n10,1\n400,0\n900,3\n")
    lines = ['name = "fuzz"', "[cluster]", "gpus = 1024", "gpus_per_node = 8", "gpus_per_group = 64",
             "[job]", 'step_time = "6 s"', "steps = 2000", "[failures]", f"model = {model}", f"{form} = {rate}"]
    if shape is not None:
        lines.append(f"weibull_shape = {shape}")
    if after is not None:
        lines.append(f"after = {after}")
    if extra is not None:
        lines.append(extra)
    if model == '"trace"' and data.draw(st.booleans()):
        lines += ["[failures.trace]", 'path = "log.csv"']
    lines += ["[costs]", 'restart = "30 min"', 'checkpoint_save = "60 s"']
    (d / "s.toml").write_text("\n".join(lines) + "\n")

    def go():
        sf = load_scenario_file(d / "s.toml")
        sc = sf.scenario
        return float(sc.t0), sc.failures.kind
    out = run_isolated(go, case=f"scenario file: model {model}, {form} = {rate}, shape {shape}, after {after}")
    out.check_clean("load_scenario_file")
    if out.ok:
        t0, kind = out.value
        assert math.isfinite(t0) and t0 > 0


# -- sweep specifications ----------------------------------------------------------------------
SPEC_LINES = {
    "name": ['name = "s"', 'name = ""', "name = 3"],
    "seeds": ["seeds = 2", "seeds = 0", "seeds = -1", "seeds = [0, 5]", "seeds = 99999999999999999999",
              "seeds = 1.5", 'seeds = "3"', "seeds = []"],
    "policies": ['policies = ["ckpt", "spare"]', 'policies = ["nope"]', "policies = []", 'policies = "ckpt"'],
    "redundancies": ["redundancies = [2, 3]", "redundancies = {from = 1, to = 3}", "redundancies = {from = 3, to = 1}",
                     "redundancies = [0]", "redundancies = [99999999999999999999]", "redundancies = {from = 1}"],
    "intervals": ['intervals = ["auto", 60.0]', "intervals = [-1.0]", 'intervals = ["never"]', "intervals = nan"],
}
SPEC_SCENARIOS = [
    "[scenario]\nn_groups = 8\nn_steps = 50\nt_compute = 1.0\nt_allreduce = 0.1\nsystem_mtbf = 60.0\n",
    "[scenario]\npreset = \"paper_600k\"\nn_groups = 8\nn_steps = 50\n",
    "[scenario]\npreset = \"nope\"\n",
    "[scenario]\nn_groups = 8\nn_steps = 50\nt_compute = nan\nt_allreduce = 0.1\nsystem_mtbf = 60.0\n",
    "[scenario]\nn_groups = 99999999999999999999\nn_steps = 5\nt_compute = 1.0\nt_allreduce = 0.1\nsystem_mtbf = 9.0\n",
    "[scenario]\nn_groups = 8\nn_steps = 50\nt_compute = 1.0\nt_allreduce = 0.1\nsystem_mtbf = 60.0\n"
    "grid = {n_groups = [4, 8], system_mtbf = [30.0, 60.0]}\n",
    "[scenario]\nn_groups = 8\ngrid = {n_groups = [4]}\n",
    "[[scenarios]]\nfile = \"cluster.toml\"\nset = {\"job.steps\" = 500}\n",
    "[[scenarios]]\nfile = \"missing.toml\"\n",
    "[[scenarios]]\nfile = \"cluster.toml\"\ngrid = {\"compare.r_max\" = [1000000000000000000]}\n",
    "",
]


@fuzz(1.5)
@given(picks=st.fixed_dictionaries({k: st.one_of(st.none(), st.sampled_from(v)) for k, v in SPEC_LINES.items()}),
       scenario=st.sampled_from(SPEC_SCENARIOS), bom=st.booleans(), crlf=st.booleans())
def test_sweep_spec_files(tmp_path_factory, picks, scenario, bom, crlf):
    from spare_core.sweeps import load_spec
    d = tmp_path_factory.mktemp("spec")
    (d / "cluster.toml").write_text(open(os.path.join(ROOT, "examples", "llama3_16k.toml")).read())
    text = "\n".join(v for v in picks.values() if v is not None) + "\n" + scenario
    if crlf:
        text = text.replace("\n", "\r\n")
    (d / "spec.toml").write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())

    def go():
        spec = load_spec(d / "spec.toml")
        runs = 0
        for _ in spec.runs():
            runs += 1
            if runs > 10_000:
                break
        return len(spec), runs
    out = run_isolated(go, case=f"sweep spec {picks} {scenario[:40]!r}")
    out.check_clean("load_spec")
    if out.ok:
        total, runs = out.value
        assert total >= 1 and runs == min(total, 10_001)


# -- trace files ------------------------------------------------------------------------------
TRACE_ROWS = ["0,1", "1.5,2", "7,99999999999999999999999", "8,9223372036854775807", "9,9223372036854775808",
              "10,-0", "11, 3 ", "12,\x003", "1e3,4", "nan,1", "13,0x10", "14,\u0663"]


@fuzz(1.5)
@given(rows=st.lists(st.sampled_from(TRACE_ROWS), min_size=1, max_size=6), header=st.booleans(),
       encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "latin-1"]), crlf=st.booleans())
def test_trace_files_in_odd_encodings(tmp_path_factory, rows, header, encoding, crlf):
    from spare_core.events.trace import read_trace
    path = tmp_path_factory.mktemp("trace") / "t.csv"
    text = ("time,unit\n" if header else "") + "\n".join(rows) + "\n"
    if crlf:
        text = text.replace("\n", "\r\n")
    try:
        path.write_bytes(text.encode(encoding))
    except UnicodeEncodeError:
        path.write_bytes(text.encode("utf-8"))

    def go():
        tr = read_trace(path, time_column=0, unit_column=1, time_format="seconds", units="ids")
        return np.asarray(tr.times).tolist(), np.asarray(tr.units).tolist()
    out = run_isolated(go, case=f"trace {rows} {encoding} crlf={crlf}")
    out.check_clean("read_trace")
    if out.ok:
        times, units = out.value
        assert len(times) == len(rows), (rows, times)
        assert all(math.isfinite(t) and t >= 0 for t in times)
        assert all(0 <= u < 2**63 for u in units)

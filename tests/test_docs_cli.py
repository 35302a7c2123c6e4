"""Every key and every flag docs/cli.md documents runs end to end, generated from its tables.

The key tables (header ``| key | ...``) and the flag tables (header ``| flag | ...``, under a
``### spare COMMAND`` heading) are parsed; every documented key is set in a tiny scenario file
(``--set`` for ``SECTION.NAME``, the file's text for deeper keys), loaded, and run with
``spare run``; every documented flag is run with its command. A documented key or flag without a
test value below fails, and so does a key the code accepts (``scenario_file``'s tables, the
built-in failure models' ``file_keys``, the trace reader's options, the domain keys) or a flag a
parser has without a row in the docs.

To document a key: add its row to docs/cli.md and its values to ``KEY_CASES`` (``_sets`` for
``--set`` items, ``Case(failures=...)`` for a whole ``[failures]`` table, ``Case(extra=...)`` for
more tables). A family of keys is written with upper-case placeholders (``policy.NAME.OPTION``):
a placeholder matches any one part of a key the code accepts, and a table is documented by the
rows of its keys.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

from spare_core.cli import build_parser, main
from spare_core.events import FailureModel, failure_model_kinds
from spare_core.scenario_file import CLASS_KEYS, DOMAIN_KEYS, TRACE_OPTIONS, load_scenario_file
from spare_core.events.files import TRACE_FILE_KEYS
from spare_core.stragglers import synthetic_trace, write_trace

DOCS = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


# -- the docs' tables ---------------------------------------------------------------------------
def _cells(line: str) -> list[str]:
    """The cells of a table row (a ``\\|`` inside a cell is text)."""
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def _tables(text: str):
    """(the heading above it, its header cells, its rows' cells) for every table of ``text``."""
    heading, lines = "", text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("#"):
            heading = lines[i].lstrip("#").strip()
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"^\|[-| :]+\|$", lines[i + 1].strip()):
            header, rows = _cells(lines[i]), []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(_cells(lines[i]))
                i += 1
            yield heading, header, rows
            continue
        i += 1


_KEY = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)`")
_FLAG = re.compile(r"`(--[a-z][a-z0-9-]*)")


def documented_keys() -> list[str]:
    """The keys of the key tables, in the order of the docs."""
    keys = [k for _, header, rows in _tables(DOCS.read_text()) if header[0] == "key" for row in rows
            for k in _KEY.findall(row[0])]
    return list(dict.fromkeys(keys))


def documented_flags() -> dict[str, list[str]]:
    """Command -> the flags of its table (the table under ``### spare COMMAND``)."""
    out: dict[str, list[str]] = {}
    for heading, header, rows in _tables(DOCS.read_text()):
        if header[0] == "flag":
            m = re.fullmatch(r"spare ([a-z-]+)", heading)
            assert m, f"docs/cli.md: a flag table must sit under '### spare COMMAND', not {heading!r}"
            out.setdefault(m.group(1), []).extend(f for row in rows for f in _FLAG.findall(row[0]))
    return out


def _matches(doc_key: str, key: str) -> bool:
    """A documented key (upper-case parts are placeholders) names ``key``."""
    parts, want = doc_key.split("."), key.split(".")
    return len(parts) == len(want) and all(p == w or p.isupper() for p, w in zip(parts, want))


def code_keys() -> list[str]:
    """Every key the code accepts in a scenario file (built-in failure models only: a model a
    test registers documents itself)."""
    from spare_core.scenario_file import _SECTIONS, _SUBTABLES, _allowed  # the tables' allowed keys

    keys = [k for k in _SECTIONS[""] if k not in _SUBTABLES]
    # [failures] below: _allowed would add the keys of models the tests register
    keys += [f"{s}.{k}" for s in _SUBTABLES if s != "failures" for k in _allowed(s)]
    keys += [f"failures.{k}" for k in _SECTIONS["failures"]]
    builtin = [FailureModel.by_kind(k) for k in failure_model_kinds()]
    keys += [f"failures.{k}" for c in builtin if c.__module__.startswith("spare_core.") for k in c.file_keys]
    keys += [f"failures.trace.{k}" for k in ("path", *TRACE_OPTIONS, *TRACE_FILE_KEYS)]
    keys += [f"failures.domains.{k}" for k in DOMAIN_KEYS]
    keys += [f"failures.classes.{k}" for k in CLASS_KEYS]
    return list(dict.fromkeys(keys))


# -- a tiny job -----------------------------------------------------------------------------------
BASE_FAILURES = """
[failures]
mtbf = "5 min"
"""


def _file_text(failures: str = BASE_FAILURES, extra: str = "") -> str:
    return f"""
name = "tiny"

[cluster]
gpus = 32
gpus_per_node = 4
gpus_per_group = 8

[job]
step_time = "1 s"
steps = 100

[costs]
restart = "60 s"
checkpoint_save = "5 s"

[compare]
seeds = 1
r_max = 2
processes = 1
{failures}
{extra}
"""


# uneven gaps (a law is fitted to them), increasing times, every node failing
LOG = "time,unit,reason\n" + "".join(f"{3600.0 * (11.3 * (k + 1) + 2.0 * ((7 * k) % 5)):.1f},{(3 * k) % 8},gpu\n"
                                      for k in range(40))
LOG2 = "when;host;why\n" + "".join(
    f"2025-03-{3 + k // 3:02d}T{8 * (k % 3):02d}:15:00;node-{(5 * k) % 8:02d};xid {k}\n" for k in range(36))
HOSTS = "# rank order\n" + "".join(f"node-{i:02d} slots=4\n" for i in range(8))

TRACE_T1 = '\n[failures]\nmodel = "trace"\nafter = "stop"\n\n[failures.trace]\npath = "log.csv"\n{}\n'
TRACE_T2 = """
[failures]
model = "trace"
after = "loop"

[failures.trace]
path = "log2.csv"
time_column = "when"
unit_column = "host"
reason_column = "why"
time_format = "iso"
tz = "Europe/Paris"
units = "names"
unit_map = "hosts.txt"
n_units = 8
start = 2025-03-03T00:00:00
end = "2025-03-20T00:00:00"
header = true
delimiter = ";"
"""
# the same log read with a strftime pattern, its hosts decoded by a regex (rack digit, node digit)
TRACE_T3 = """
[failures]
model = "trace"
after = "stop"

[failures.trace]
path = "log2.csv"
time_column = "when"
unit_column = "host"
delimiter = ";"
{}
"""
# local times in Paris: the autumn change (02:10 and 02:50 summer time, then 02:20 winter time)
# and the spring gap (02:30 does not exist)
LOG_AUTUMN = ("time,unit\n2024-10-27T01:30:00,1\n2024-10-27T02:10:00,2\n2024-10-27T02:50:00,3\n"
              "2024-10-27T02:20:00,4\n")
LOG_SPRING = "time,unit\n2024-03-31T01:30:00,1\n2024-03-31T02:30:00,2\n2024-03-31T03:30:00,3\n"
TRACE_LOCAL = ('\n[failures]\nmodel = "trace"\nafter = "stop"\n\n[failures.trace]\npath = "{log}"\n'
               'tz = "Europe/Paris"\nn_units = 8\n{key}\n')
# a preemption log of the tiny job's 8 nodes: two preempted at once at 20 s (a bulk event), one
# back at 50 s, the other at 70 s, one more preempted at 80 s with a spare free
LOG_CAP = "time,unit,event\n20,1,preempt\n20,6,preempt\n50,0,add\n70,0,add\n80,3,preempt\n90,0,add\n"
# the same fleet, each addition a new instance (read instance by instance, an instance is added once)
LOG_INST = "time,unit,event\n20,1,preempt\n20,6,preempt\n50,7,add\n70,8,add\n80,3,preempt\n90,9,add\n"
TRACE_CAP = ('\n[failures]\nmodel = "trace"\nafter = "stop"\n\n[failures.trace]\npath = "log_cap.csv"\n'
             'event_column = "event"\nremove_values = ["preempt"]\nadd_values = ["add"]\n{}\n')
# a log of ids lists failures only: a fit needs the fleet's size (n_units, the nodes that never failed too)
FIT = '\n[failures]\nmodel = "{model}"\nlaw = "fit"\nfit_law = "{law}"\ntrace = {{path = "log.csv", n_units = 8}}\n'
DOMAINS = """
[failures]
mtbf = "20 min"

[[failures.domains]]
name = "rack"
nodes = 4
mtbf = "30 d"

[[failures.domains]]
name = "switch"
nodes = 2
interruptions = 3
period = "10 d"
"""

CLASSES = """
[failures]
mtbf = "5 min"

[[failures.classes]]
name = "gpu"
share = 0.75
recovery = "swap"
detect = "30 s"

[[failures.classes]]
name = "software"
share = 0.25
recovery = "restart"
detect = { law = "exponential", mean = "5 min" }
"""


def _cl(sf, i=0):
    return sf.scenario.failure_classes.classes[i]


@dataclass(frozen=True)
class Case:
    """One value of a key: ``--set`` items on the tiny file, or its whole ``[failures]`` text,
    or more TOML appended; ``check`` reads the loaded file."""

    sets: tuple[str, ...] = ()
    failures: str = BASE_FAILURES
    extra: str = ""
    check: Callable[[Any], bool] | None = None
    marks: tuple = ()


def _sets(*items, check=None, marks=()):
    return Case(sets=items, check=check, marks=marks)


def _sc(sf):
    return sf.to_dict()["scenario"]


KEY_CASES: dict[str, list[Case]] = {
    "name": [_sets('name="other"', check=lambda sf: sf.name == "other")],
    "description": [_sets('description="a tiny job"')],
    "cluster.gpus": [_sets("cluster.gpus=64", check=lambda sf: sf.scenario.n_groups == 8)],
    "cluster.nodes": [_sets("cluster.nodes=16", check=lambda sf: sf.gpus == 64)],
    "cluster.gpus_per_node": [_sets("cluster.gpus_per_node=8", check=lambda sf: sf.nodes == 4)],
    "cluster.gpus_per_group": [_sets("cluster.gpus_per_group=16", check=lambda sf: sf.scenario.n_groups == 2)],
    "cluster.tp": [_sets("cluster.tp=4", "cluster.pp=4", check=lambda sf: sf.gpus_per_group == 16)],
    "cluster.pp": [_sets("cluster.tp=2", "cluster.pp=4", check=lambda sf: sf.gpus_per_group == 8)],
    "job.step_time": [_sets("job.step_time='2 s'", check=lambda sf: _sc(sf)["t_compute"] == 2.0)],
    "job.tokens_per_second": [_sets("job.tokens_per_second=2e5", "job.tokens_per_step=1e5",
                                    check=lambda sf: _sc(sf)["t_compute"] == 0.5)],
    "job.tokens_per_step": [_sets("job.tokens=1e7", "job.tokens_per_step=1e5",
                                  check=lambda sf: sf.scenario.n_steps == 100),
                            # with a price: what a token costs (RunResult.cost_per_mtoken)
                            _sets("job.tokens_per_step=1e5", "costs.gpu_hour=2.0",
                                  check=lambda sf: sf.scenario.pricing.tokens_per_step == 1e5)],
    "job.allreduce_time": [_sets("job.allreduce_time='0.25 s'", check=lambda sf: _sc(sf)["t_allreduce"] == 0.25)],
    "job.steps": [_sets("job.steps=50", check=lambda sf: sf.scenario.n_steps == 50)],
    "job.tokens": [_sets("job.tokens=5e6", "job.tokens_per_step=1e5", check=lambda sf: sf.scenario.n_steps == 50)],
    "job.jitter": [_sets("job.jitter=0.1", check=lambda sf: _sc(sf)["jitter"] == 0.1)],
    "failures.model": [_sets(f"failures.model='{k}'", check=lambda sf, k=k: sf.data["failures"]["model"] == k)
                       for k in ("node", "per-unit", "system")]
    + [Case(failures=TRACE_T1.format(""), check=lambda sf: sf.trace is not None)],
    "failures.node_ages": [_sets("failures.node_ages=new", check=lambda sf: sf.scenario.failures.initial == "new")],
    "failures.clock": [_sets("failures.clock=compute", check=lambda sf: sf.scenario.failures.clock == "compute")],
    "failures.per_node_day": [_sets("failures.per_node_day=2.0")],
    "failures.per_1000_node_days": [_sets("failures.per_1000_node_days=2000")],
    "failures.per_gpu_year": [_sets("failures.per_gpu_year=200")],
    "failures.mtbf": [_sets("failures.mtbf='10 min'", check=lambda sf: sf.scenario.system_mtbf == 600.0)],
    "failures.node_mtbf": [_sets("failures.node_mtbf='1 h'", check=lambda sf: sf.scenario.system_mtbf == 450.0)],
    "failures.interruptions": [_sets("failures.interruptions=30", "failures.period='2 h'",
                                     check=lambda sf: sf.scenario.system_mtbf == 240.0)],
    "failures.period": [_sets("failures.interruptions=60", "failures.period='5 h'")],
    "failures.measured_on_gpus": [_sets("failures.interruptions=3", "failures.period='1 h'",
                                        "failures.measured_on_gpus=64",
                                        check=lambda sf: sf.scenario.system_mtbf == 2400.0)],
    "failures.weibull_shape": [_sets("failures.weibull_shape=0.9", check=lambda sf: sf.scenario.failures.shape == 0.9)],
    "failures.law": [Case(failures=FIT.format(model="node", law="weibull"), check=lambda sf: sf.fit is not None),
                     Case(failures='\n[failures]\nlaw = "weibull"\nmtbf = "1 h"\n', check=lambda sf: sf.fit is None)],
    "failures.fit_law": [Case(failures=FIT.format(model=m, law=law), check=lambda sf, law=law: sf.fit is not None
                              and (law == "best" or sf.fit.law == law))
                         for m, law in (("node", "lognormal"), ("per-unit", "exponential"), ("system", "best"))]
    + [Case(failures='\n[failures]\nmodel = "trace"\nafter = "fit"\nfit_law = "exponential"\ntrace = "log.csv"\n',
            check=lambda sf: sf.fit.law == "exponential")],
    "failures.fit_rate": [Case(failures=FIT.format(model="node", law="frailty") + 'fit_rate = "periods"\n',
                               check=lambda sf: sf.fit.varies and sf.fit.check.periods == sf.fit.periods),
                          Case(failures=FIT.format(model="node", law="exponential") + 'fit_rate = "constant"\n',
                               check=lambda sf: sf.fit.law == "exponential" and not sf.scenario.failures.rate_levels)],
    "failures.fit_periods": [Case(failures=FIT.format(model="node", law="exponential")
                                  + 'fit_rate = "periods"\nfit_periods = "5 d"\n',
                                  check=lambda sf: sf.fit.periods.lengths[0] == 5 * 86400.0),
                             Case(failures=FIT.format(model="node", law="weibull") + 'fit_periods = "week"\n',
                                  check=lambda sf: sf.fit.check.periods.lengths[0] == 7 * 86400.0)],
    "failures.fit_job_start": [Case(failures=FIT.format(model="node", law="exponential")
                                    + f'fit_rate = "periods"\nfit_job_start = "{at}"\n',
                                    check=lambda sf, at=at: bool(sf.scenario.failures.rate_levels) == (at != "end"))
                               for at in ("start", "end", "3 d")],
    "failures.fit_merge": [Case(failures=FIT.format(model="node", law="weibull") + 'fit_merge = "2 d"\n',
                                check=lambda sf: "repeated reports of a node's failure merged" in sf.rate_note)],
    "failures.fit_check": [Case(failures=FIT.format(model="node", law="weibull") + f'fit_check = "{c}"\n',
                                check=lambda sf: sf.fit is not None) for c in ("periods", "count")],
    "failures.trace": [Case(failures=FIT.format(model="node", law="weibull")), Case(failures=TRACE_T1.format(""))],
    "failures.after": [Case(failures=TRACE_T1.replace("stop", a).format(""),
                            check=lambda sf, a=a: sf.scenario.failures.after == a) for a in ("stop", "loop", "fit")],
    "failures.nodes_per_group": [Case(failures=TRACE_T1.format("").replace('after = "stop"',
                                                                           'after = "stop"\nnodes_per_group = 2'),
                                      check=lambda sf: sf.scenario.failures.nodes_per_group == 2)],
    "failures.windows": [Case(failures=TRACE_T1.format("").replace('after = "stop"', 'after = "loop"\nwindows = 3'),
                              check=lambda sf: sf.scenario.failures.windows == 3
                              and "3 windows" in sf.scenario.failure_description)],
    "failures.placement": [Case(failures=TRACE_T1.format("").replace('after = "stop"',
                                                                      'after = "stop"\nplacement = "spread"'),
                                check=lambda sf: sf.scenario.failures.placement == "spread")],
    "failures.trace.where": [Case(failures=TRACE_T1.format('where = {reason = "gpu"}'),
                                  check=lambda sf: "40 of 40 rows are failures" in sf.scenario.failure_description),
                             Case(failures=TRACE_T3.format('where = {why = ["xid 1", "xid 2"]}'),
                                  check=lambda sf: sf.trace.n_events == 2 and "34 left out" in sf.scenario.failure_description)],
    "failures.trace.host_pattern": [Case(failures=TRACE_T3.format("host_pattern = 'node-(?P<rack>\\d)(?P<node>\\d)'"),
                                         check=lambda sf: sf.trace.levels[0][0] == "rack" and sf.trace.n_units == 8
                                         and "by rack: 36 failures" in sf.rate_note)],
    **{f"failures.trace.{k}": [Case(failures=TRACE_CAP.format(""),
                                    check=lambda sf: sf.trace.n_events == 3 and sf.trace.changes[1].tolist()
                                    == [-1, -1, 1, 1, -1, 1])] for k in ("event_column", "remove_values", "add_values")},
    "failures.trace.removals": [Case(failures=TRACE_CAP.format('removals = "instance"').replace("log_cap", "log_inst"),
                                     check=lambda sf: "of its removals 3 take a node of the job, 0 an idle instance"
                                     in sf.scenario.failure_description)],
    "failures.trace.boot": [Case(failures=TRACE_CAP.format('boot = "15 s"').replace("log_cap", "log_inst"),
                                 check=lambda sf: sf.scenario.failures.view(sf.scenario.n_groups).changes[0].tolist()
                                 == [20.0, 20.0, 65.0, 80.0, 85.0])],
    "failures.trace.capacity": [Case(failures=TRACE_CAP.format("capacity = 9"),
                                     check=lambda sf: sf.scenario.failures.capacity_timeline(4).nodes.tolist()
                                     == [7, 8, 9, 8, 9])],
    "failures.domains": [Case(failures=DOMAINS, check=lambda sf: "rack domains" in sf.rate_note)],
    "failures.domains.name": [Case(failures=DOMAINS, check=lambda sf: "switch domains" in sf.rate_note)],
    "failures.domains.nodes": [Case(failures=DOMAINS)],
    "failures.domains.mtbf": [Case(failures=DOMAINS)],
    "failures.domains.interruptions": [Case(failures=DOMAINS)],
    "failures.domains.period": [Case(failures=DOMAINS)],
    # the 3 switch failures seen over the 8 switches of 64 GPUs: one switch fails once per 26.7 d
    "failures.domains.measured_on_gpus": [Case(failures=DOMAINS.replace('period = "10 d"', 'period = "10 d"\n'
                                                                        'measured_on_gpus = 64'),
                                               check=lambda sf: "each failing once per 26.7 d" in sf.rate_note)],
    "failures.classes": [Case(failures=CLASSES, check=lambda sf: sf.scenario.failure_classes.names == ("gpu", "software"))],
    "failures.classes.name": [Case(failures=CLASSES, check=lambda sf: _cl(sf, 1).name == "software")],
    "failures.classes.share": [Case(failures=CLASSES, check=lambda sf: _cl(sf, 1).share == 0.25)],
    "failures.classes.recovery": [Case(failures=CLASSES, check=lambda sf: _cl(sf, 1).job_wide and not _cl(sf).job_wide)],
    "failures.classes.detect": [Case(failures=CLASSES, check=lambda sf: _cl(sf).detect == 30.0
                                     and _cl(sf, 1).detect.mean == 300.0)],
    "failures.classes.nodes": [Case(failures=CLASSES.replace('share = 0.25\nrecovery = "restart"',
                                                             'share = 0.25\nrecovery = "domain"\nnodes = 4'),
                                    check=lambda sf: _cl(sf, 1).domain and _cl(sf, 1).groups == 2 and _cl(sf, 1).masked)],
    "failures.classes.values": [Case(failures=TRACE_T1.format('reason_column = "reason"')
                                     + '\n[[failures.classes]]\nname = "gpu"\nrecovery = "swap"\nvalues = ["gpu"]\n'
                                     + '\n[[failures.classes]]\nname = "other"\nrecovery = "restart"\nvalues = "*"\n',
                                     check=lambda sf: _cl(sf).values == ("gpu",) and _cl(sf).share == 1.0
                                     and _cl(sf, 1).share == 0.0)],
    "failures.classes.masked": [Case(failures=CLASSES.replace('detect = "30 s"', 'detect = "30 s"\nmasked = false'),
                                     check=lambda sf: not _cl(sf).masked and not _cl(sf).job_wide)],
    "failures.trace.path": [Case(failures=TRACE_T1.format(""))],
    "failures.trace.time_format": [Case(failures=TRACE_T1.format('time_format = "seconds"')),
                                   Case(failures=TRACE_T3.format('time_format = "%Y-%m-%dT%H:%M:%S"'),
                                        check=lambda sf: sf.trace.times[1] == 8 * 3600.0)],
    "failures.trace.time_unit": [Case(failures=TRACE_T1.format('time_unit = "min"'),
                                      check=lambda sf: sf.trace.times[0] == 40680.0 * 60)],
    "failures.trace.units": [Case(failures=TRACE_T1.format('units = "ids"'))],
    "failures.trace.n_units": [Case(failures=TRACE_T1.format("n_units = 8"), check=lambda sf: sf.trace.n_units == 8)],
    # units of 2 GPUs on 4-GPU nodes: a group of 8 GPUs holds 4 log units; a fit per 1-GPU unit
    # is scaled to a node of 4 units (an exponential's rate x 4)
    "failures.trace.unit_gpus": [Case(failures=TRACE_T1.format("unit_gpus = 2"),
                                      check=lambda sf: sf.scenario.failures.nodes_per_group == 4
                                      and "log units of 2 GPUs" in sf.rate_note),
                                 Case(failures=FIT.format(model="node", law="exponential").replace(
                                     "n_units = 8}", "n_units = 8, unit_gpus = 1}"),
                                      check=lambda sf: "per node of 4 GPUs = 4 log units of 1 GPU" in sf.rate_note
                                      and abs(sf.failure_rate.unit_mtbf("node") * 4 - sf.fit.mean) < 1e-6 * sf.fit.mean)],
    "failures.trace.sort": [Case(failures=TRACE_T1.format("sort = true"))],
    "failures.trace.header": [Case(failures=TRACE_T1.format("header = true"))],
    # a log in Paris time crossing the autumn change (rows 3-4 in the repeated hour, first and
    # second pass) and one in the spring gap (row 2): resolved by fold / dst, else refused
    "failures.trace.fold": [Case(failures=TRACE_LOCAL.format(log="log_autumn.csv", key='fold = "infer"'),
                                 check=lambda sf: sf.trace.times.tolist() == [0.0, 2400.0, 4800.0, 6600.0])],
    "failures.trace.dst": [Case(failures=TRACE_LOCAL.format(log="log_spring.csv", key='dst = "before"'),
                                check=lambda sf: sf.trace.times.tolist() == [0.0, 3600.0, 3600.0])],
    "costs.restart": [_sets("costs.restart='2 min'", check=lambda sf: _sc(sf)["restart_time"] == 120.0)],
    "costs.checkpoint_save": [_sets("costs.checkpoint_save='10 s'", check=lambda sf: _sc(sf)["checkpoint_time"] == 10)],
    "costs.shrink": [_sets("costs.shrink='0.5 s'", check=lambda sf: _sc(sf)["shrink_time"] == 0.5)],
    "costs.controller": [_sets("costs.controller='0.2 s'", check=lambda sf: _sc(sf)["controller_time"] == 0.2)],
    "costs.gpu_hour": [_sets("costs.gpu_hour=2.5", check=lambda sf: sf.scenario.pricing.gpu_hour == 2.5)],
    "costs.spot_gpu_hour": [Case(failures=TRACE_CAP.format(""), sets=("costs.gpu_hour=2.5", "costs.spot_gpu_hour=0.8"),
                                 check=lambda sf: sf.scenario.pricing.price(True) == 0.8
                                 and sf.scenario.pricing.price(False) == 2.5)],
    "repair.swap": [_sets("repair.swap='10 min'", check=lambda sf: sf.scenario.repair.swap == 600.0),
                    _sets("repair.swap={law='exponential', mean='10 min'}",
                          check=lambda sf: sf.scenario.repair.mean_swap == 600.0 and sf.scenario.repair.drawn)],
    "repair.spares": [_sets("repair.spares=2", "repair.time='1 d'",
                            check=lambda sf: sf.scenario.repair.spares == 2 and sf.scenario.repair.spare_gpus == 8)],
    "repair.time": [_sets("repair.time='2 h'", check=lambda sf: sf.scenario.repair.time == 7200.0),
                    _sets("repair.time={law='lognormal', median='2 h', sigma=1}",
                          check=lambda sf: abs(sf.scenario.repair.mean_time / (7200.0 * 1.6487212707) - 1) < 1e-9),
                    _sets("repair.time={law='weibull', shape=0.7, mean='3 h'}",
                          check=lambda sf: abs(sf.scenario.repair.mean_time / 10800.0 - 1) < 1e-12)],
    "repair.rejoin": [_sets("repair.rejoin='2 min'", check=lambda sf: sf.scenario.repair.rejoin == 120.0)],
    "repair.manual_time": [_sets("repair.time='2 h'", "repair.escalate=0.8", "repair.manual_time='2 d'",
                                 check=lambda sf: sf.scenario.repair.mean_time == 7200.0 + 0.8 * 172800.0)],
    "repair.escalate": [_sets("repair.time='2 h'", "repair.escalate=0.5",
                              "repair.manual_time={law='exponential', mean='1 d'}",
                              check=lambda sf: sf.scenario.repair.mean_time == 7200.0 + 0.5 * 86400.0)],
    "repair.fail_fix": [_sets("repair.time={law='lognormal', median='2 h', sigma=1}", "repair.fail_fix=0.2",
                              check=lambda sf: sf.scenario.repair.drawn and sf.scenario.repair.fail_fix == 0.2)],
    "fleet.standbys": [_sets("repair.spares=4", "repair.time='1 h'", "fleet.standbys=2",
                             check=lambda sf: sf.scenario.repair.standbys == 2 and sf.scenario.repair.spare_gpus == 6 * 4)],
    "fleet.standby_swap": [_sets("repair.time='1 h'", "fleet.standbys=1", "fleet.standby_swap='30 s'",
                                 check=lambda sf: sf.scenario.repair.standby_swap == 30.0)],
    "fleet.host_select": [_sets("repair.time='1 h'", "fleet.host_select='20 min'",
                                check=lambda sf: sf.scenario.repair.host_select == 1200.0 and sf.scenario.repair.drawn)],
    "fleet.restart_when": [_sets("repair.time='1 h'", "fleet.standbys=1", "fleet.restart_when='job+standbys'",
                                 check=lambda sf: sf.scenario.repair.restart_when == "job+standbys")],
    "fleet.retire_after": [_sets("repair.time='1 h'", "repair.spares=4", "fleet.retire_after=3",
                                 check=lambda sf: sf.scenario.repair.retire_after == 3
                                 and sf.scenario.failures.retire_after == 3),
                           # 0: no node retires, the file read as without the key (no [repair] needed)
                           _sets("fleet.retire_after=0", check=lambda sf: sf.scenario.repair is None
                                 and getattr(sf.scenario.failures, "retire_after", 0) == 0)],
    "fleet.lemon_share": [_sets("fleet.lemon_share=0.15", "fleet.lemon_rate=4",
                                check=lambda sf: sf.scenario.failures.lemon_share == 0.15)],
    "fleet.lemon_rate": [_sets("fleet.lemon_share=0.2", "fleet.lemon_rate=3",
                               check=lambda sf: sf.scenario.failures.lemon_rate == 3.0
                               and sf.scenario.failures.lemons() == (0.2, 3.0, 0.0))],
    "fleet.lemon_fix": [_sets("fleet.lemon_share=0.2", "fleet.lemon_rate=3", "fleet.lemon_fix=0.5",
                              check=lambda sf: sf.scenario.failures.lemons() == (0.2, 3.0, 0.5))],
    # half of 16 log units fail (5 times each): a frailty > 0 to take the lemons from
    "fleet.lemons": [Case(failures=FIT.format(model="node", law="frailty").replace("n_units = 8", "n_units = 16"),
                          extra='\n[fleet]\nlemons = "frailty"\nlemon_fix = 0.25\n',
                          check=lambda sf: sf.scenario.failures.frailty_lemons
                          and sf.scenario.failures.lemon_fix == 0.25 and sf.scenario.failures.frailty > 0),
                     _sets("fleet.lemons='declared'", "fleet.lemon_share=0.2",
                           check=lambda sf: not sf.scenario.failures.frailty_lemons
                           and sf.scenario.failures.lemons() == (0.2, 1.0, 0.0))],
    "fleet.place": [_sets("repair.spares=4", "repair.time='1 h'", "fleet.lemon_share=0.2", "fleet.lemon_rate=3",
                          "fleet.place='fewest_failures'",
                          check=lambda sf: (sf.scenario.failures.place, sf.scenario.failures.place_pool)
                          == ("fewest_failures", 4)),
                    _sets("repair.spares=2", "repair.time='1 h'", "fleet.standbys=1", "fleet.place='any'",
                          check=lambda sf: (sf.scenario.failures.place, sf.scenario.failures.place_pool) == ("any", 3)),
                    _sets("fleet.place='slot'", check=lambda sf: sf.scenario.failures.place == "slot")],
    "repair.misdiagnose": [_sets("repair.time='1 h'", "repair.misdiagnose=0.1",
                                 check=lambda sf: sf.scenario.repair.drawn and sf.scenario.repair.misdiagnose == 0.1)],
    "checkpoint.memory_save": [_sets("checkpoint.memory_save='3 s'", "checkpoint.memory_restore='1 min'",
                                     check=lambda sf: sf.scenario.memory.save == 3.0)],
    "checkpoint.memory_every": [_sets("checkpoint.memory_save='3 s'", "checkpoint.memory_restore='1 min'",
                                      "checkpoint.memory_every='5 min'", check=lambda sf: sf.scenario.memory.every == 300)]
    + [_sets("checkpoint.memory_save='2 s'", "checkpoint.memory_restore='1 min'", "checkpoint.memory_every=auto",
             check=lambda sf: sf.scenario.memory.every == (2 * 2.0 * sf.scenario.system_mtbf) ** 0.5)],
    "checkpoint.memory_restore": [_sets("checkpoint.memory_save='3 s'", "checkpoint.memory_restore='90 s'",
                                        check=lambda sf: sf.scenario.memory.restore == 90.0)],
    "checkpoint.memory_copies": [_sets("checkpoint.memory_save='3 s'", "checkpoint.memory_restore='1 min'",
                                       "checkpoint.memory_copies=2", check=lambda sf: sf.scenario.memory.copies == 2)],
    "elastic.reconfigure": [_sets('compare.policies=["ckpt", "elastic"]', "elastic.reconfigure='30 s'",
                                  check=lambda sf: sf.policy_options["elastic"]["reconfigure"] == 30.0)],
    "elastic.batch": [_sets('compare.policies=["elastic"]', f"elastic.batch={b}",
                            check=lambda sf, b=b: sf.policy_options["elastic"]["batch"] == b) for b in ("keep", "shrink")],
    "elastic.min_groups": [_sets('compare.policies=["elastic"]', "elastic.min_groups=3",
                                 check=lambda sf: sf.policy_options["elastic"]["min_groups"] == 3)],
    "elastic.microbatches": [_sets('compare.policies=["elastic"]', "elastic.microbatches=4",
                                   check=lambda sf: sf.policy_options["elastic"]["microbatches"] == 4)],
    "elastic.step_times": [_sets('compare.policies=["ckpt", "elastic"]', 'elastic.step_times={2 = "3 s", 3 = "1.5 s"}',
                                 check=lambda sf: sf.policy_options["elastic"]["step_times"] == {"2": "3 s", "3": "1.5 s"})],
    "elastic.resume": [Case(failures=TRACE_CAP.format(""), sets=('compare.policies=["elastic"]',
                                                                 f"elastic.resume='{v}'"),
                            check=lambda sf, v=v: sf.policy_options["elastic"]["resume"] == v
                            and sf.policy_kwargs()["elastic"]["resume"] == v) for v in ("whole", "any")],
    "elastic.rendezvous": [Case(failures=TRACE_CAP.format(""), sets=('compare.policies=["elastic"]',
                                                                     f"elastic.rendezvous='{v}'"),
                                check=lambda sf, v=v: sf.policy_kwargs()["elastic"]["rendezvous"] == v)
                           for v in ("per_change", "per_instant")],
    "elastic.step_overhead": [_sets('compare.policies=["elastic"]', f"elastic.step_overhead={text}",
                                    check=lambda sf, v=v: sf.policy_options["elastic"]["step_overhead"] == v)
                              for text, v in (("0.4", 0.4), ("'0.4 s'", "0.4 s"), ("'5 %'", "5 %"))],
    **{k: [_sets("checkpoint.size='2.3 TB'", "checkpoint.write_bandwidth='250 GB/s'",
                 "checkpoint.read_bandwidth='700 GB/s'", "checkpoint.efficiency=0.16",
                 check=lambda sf: sf.scenario.checkpoint_time == 57.5 and sf.scenario.checkpoint_drain == 0.0)]
       for k in ("checkpoint.size", "checkpoint.write_bandwidth", "checkpoint.read_bandwidth")},
    "checkpoint.efficiency": [
        _sets("checkpoint.size='2.3 TB'", "checkpoint.write_bandwidth='250 GB/s'",
              "checkpoint.read_bandwidth='700 GB/s'", "checkpoint.efficiency=0.16",
              check=lambda sf: sf.scenario.checkpoint_time == 57.5),
        _sets("checkpoint.size='2.3 TB'", "checkpoint.write_bandwidth='250 GB/s'",
              "checkpoint.read_bandwidth='700 GB/s'", "checkpoint.efficiency={write = 0.16, read = 0.215}",
              check=lambda sf: sf.scenario.checkpoint_time == 57.5
              and sf.checkpoint_io.load_seconds == 2.3e12 / (700e9 * 0.215))],
    **{k: [_sets("checkpoint.size='2.3 TB'", "checkpoint.write_bandwidth='250 GB/s'",
                 "checkpoint.read_bandwidth='700 GB/s'", "checkpoint.mode='async'", "checkpoint.host_copy='5 s'",
                 check=lambda sf: sf.scenario.checkpoint_time == 5.0 and sf.scenario.checkpoint_drain == 9.2)]
       for k in ("checkpoint.mode", "checkpoint.host_copy")},
    **{k: [_sets("checkpoint.node_state='20 GB'", "checkpoint.memory_bandwidth='40 GB/s'",
                 check=lambda sf: sf.scenario.memory.save == 0.5
                 and sf.scenario.memory.restore == sf.scenario.restart_time + 0.5)]
       for k in ("checkpoint.memory_bandwidth", "checkpoint.node_state")},
    "elastic.quorum": [_sets('compare.policies=["elastic"]', "elastic.quorum='0.2 s'",
                             check=lambda sf: sf.policy_options["elastic"]["quorum"] == 0.2)],
    "compare.policies": [_sets('compare.policies=["ckpt", "rep-disjoint", "spare"]',
                               check=lambda sf: sf.policies == ("ckpt", "rep-disjoint", "spare"))],
    "compare.redundancies": [_sets("compare.redundancies=[1, 3]", check=lambda sf: sf.redundancies == (1, 3))],
    "compare.r_max": [_sets("compare.r_max=3", check=lambda sf: sf.redundancies == (1, 2, 3))],
    "compare.seeds": [_sets("compare.seeds=2", check=lambda sf: sf.seeds == (0, 1))],
    "compare.interval": [_sets("compare.interval=auto", check=lambda sf: sf.interval == "auto")]
    # every form (issue 21: a rule or a duration used to crash every run: interval passed twice)
    + [_sets(f"compare.interval={v}", check=lambda sf, s=s: sf.interval == s)
       for v, s in (("young", "young"), ("daly", "daly"), ("'1 h'", 3600.0), ("3600", 3600.0))],
    "compare.horizon": [_sets("compare.horizon=5", check=lambda sf: _sc(sf)["max_wall_factor"] == 5.0)],
    "compare.processes": [_sets("compare.processes=2", check=lambda sf: sf.processes == 2)],
    # compare.layout is SPARe's declared shorthand for its offsets and layout options
    "compare.layout": [_sets(f"compare.layout={v}", check=lambda sf, o=o: sf.policy_options.get("spare", {}) == o)
                       for v, o in (("consecutive", {}), ("sidon", {"offsets": "sidon"}))]
    + [Case(sets=(f"compare.layout={v}",), failures=DOMAINS,
            check=lambda sf, o=o: sf.policy_options.get("spare", {}) == o)
       for v, o in (("rack-aware", {"layout": "rack-aware"}),
                    ("rack-aware-sidon", {"layout": "rack-aware", "offsets": "sidon"}))],
    "compare.charge_patch": [_sets("compare.charge_patch=false", check=lambda sf: _sc(sf)["charge_patch"] is False)],
    "policy.NAME.OPTION": [_sets("policy.spare.offsets=sidon",
                                 check=lambda sf: sf.policy_options == {"spare": {"offsets": "sidon"}})],
    "policy.NAME.interval": [_sets("policy.ckpt.interval='30 min'", "policy.rep.interval=young",
                                   check=lambda sf: sf.policy_kwargs() == {"ckpt": {"interval": 1800.0},
                                                                           "rep": {"interval": "young"}})],
    "policy.spare.offsets": [_sets("compare.redundancies=[3]", "policy.spare.offsets=[0, 1, 3]",
                                   check=lambda sf: sf.policy_options["spare"]["offsets"] == [0, 1, 3])],
    "policy.spare.layout": [Case(sets=("policy.spare.layout=rack-aware", "policy.spare.offsets=sidon"),
                                 failures=DOMAINS, check=lambda sf: sf.policy_options["spare"] == {
                                     "layout": "rack-aware", "offsets": "sidon"})],
}


def _stm(sf):
    return sf.scenario.step_time_model


_TR = ("stragglers.trace='job.csv'",)
KEY_CASES.update({
    "stragglers.slowdown": [_sets("stragglers.slowdown=1.2", check=lambda sf: _stm(sf).slowdown == 1.2
                                  and sf.remedies == ("rebalance", "pacing"))],
    "stragglers.trace": [_sets(*_TR, check=lambda sf: _stm(sf).worker == 1 and _stm(sf).per_step.size == 3)],
    "stragglers.meta": [_sets(*_TR, "stragglers.meta='meta.yaml'", check=lambda sf: _stm(sf).worker == 1)],
    **{f"stragglers.{k}": [_sets(*_TR, "stragglers.dp=2", "stragglers.pp=2", f"stragglers.{k}=1",
                                 check=lambda sf: _stm(sf).worker == 1)] for k in ("tp", "cp", "vpp")},
    **{f"stragglers.{k}": [_sets(*_TR, "stragglers.dp=2", "stragglers.pp=2", check=lambda sf: _stm(sf).worker == 1)]
       for k in ("dp", "pp")},
    "stragglers.ideal": [_sets(*_TR, "stragglers.ideal=stage", check=lambda sf: _stm(sf).slowdown > 1.0)],
    "stragglers.worker": [_sets("stragglers.slowdown=1.2", "stragglers.worker=5", check=lambda sf: _stm(sf).worker == 5)],
    "stragglers.evict_slowdown": [_sets("stragglers.slowdown=1.2", "stragglers.evict_slowdown=1.01",
                                        check=lambda sf: _stm(sf).remedy_slowdown("evict") == 1.01)],
    "stragglers.stage_share": [_sets("stragglers.slowdown=1.2", "stragglers.stage_share=0.5",
                                     check=lambda sf: abs(_stm(sf).remedy_slowdown("rebalance") - 1.1) < 1e-12)],
    # 64 nodes: the pacing model's pacer engages beyond one leaf (at 8 nodes it removes nothing)
    "stragglers.comm_share": [_sets("cluster.gpus=256", "stragglers.slowdown=1.2", "stragglers.comm_share=0.5",
                                    check=lambda sf: 1.0 < _stm(sf).remedy_slowdown("pacing") < 1.2)],
    "stragglers.rebalance_cost": [_sets("stragglers.slowdown=1.2", "stragglers.rebalance_cost='10 min'",
                                        check=lambda sf: _stm(sf).rebalance_cost == 600.0)],
    "stragglers.remedies": [_sets("stragglers.slowdown=1.2", "repair.spares=2", "repair.time='1 h'",
                                  'stragglers.remedies=["evict", "pacing"]',
                                  check=lambda sf: sf.remedies == ("evict", "pacing"))],
})
# the options of a named log: one table exercises them together (they describe one file)
for _k in ("time_column", "unit_column", "reason_column", "tz", "unit_map", "start", "end", "delimiter"):
    KEY_CASES[f"failures.trace.{_k}"] = [Case(failures=TRACE_T2, check=lambda sf: sf.trace.n_units == 8
                                              and sf.trace.reasons[0] == "xid 0")]
# a window of the log: the rows before start dropped and counted
KEY_CASES["failures.trace.start"].append(Case(failures=TRACE_T3.format('start = 2025-03-05T00:00:00Z'),
                                              check=lambda sf: sf.trace.dropped_before == 6
                                              and "6 before start" in sf.scenario.failure_description))
KEY_CASES["failures.trace.unit_map"].append(
    Case(failures=TRACE_T2.replace('"hosts.txt"', str([f"node-{i:02d}" for i in range(8)]))))


@pytest.fixture
def logs(tmp_path):
    """A directory with the logs and the hostfile the cases name (paths relative to the file)."""
    (tmp_path / "log.csv").write_text(LOG)
    (tmp_path / "log2.csv").write_text(LOG2)
    (tmp_path / "hosts.txt").write_text(HOSTS)
    (tmp_path / "log_autumn.csv").write_text(LOG_AUTUMN)
    (tmp_path / "log_spring.csv").write_text(LOG_SPRING)
    (tmp_path / "log_cap.csv").write_text(LOG_CAP)
    (tmp_path / "log_inst.csv").write_text(LOG_INST)
    # a job's operation trace with a slow worker (rank 1), and its sizes ([stragglers])
    write_trace(tmp_path / "job.csv", synthetic_trace(dp=2, pp=2, steps=3, microbatches=2, slow={1: 1.5},
                                                      jitter=0.0, seed=0))
    (tmp_path / "meta.yaml").write_text("dp_size: 2\npp_size: 2\n")
    return tmp_path


def _has(data: Any, key: str) -> bool:
    """The file's table holds ``key`` (a list of tables holds it when one of them does)."""
    head, _, rest = key.partition(".")
    if isinstance(data, list):
        return any(_has(x, key) for x in data)
    if not isinstance(data, dict) or head not in data:
        return False
    return not rest or _has(data[head], rest)


def _key_params():
    out = []
    for key in documented_keys():
        cases = KEY_CASES.get(key)
        if not cases:
            out.append(pytest.param(key, None, id=key))
        out += [pytest.param(key, c, id=f"{key}-{i}", marks=c.marks) for i, c in enumerate(cases or ())]
    return out


@pytest.mark.parametrize("key,case", _key_params())
def test_a_documented_key_loads_and_runs(key, case, logs, capsys):
    assert case is not None, f"docs/cli.md documents {key!r} without a test value: add one to KEY_CASES"
    f = logs / "tiny.toml"
    f.write_text(_file_text(case.failures, case.extra))
    sf = load_scenario_file(f, case.sets)
    assert any(p.isupper() for p in key.split(".")) or _has(sf.data, key), f"{key} is not in the file read"
    if case.check is not None:
        assert case.check(sf), f"{key}: {case.sets or case.failures}"
    argv = ["run", str(f)] + [x for s in case.sets for x in ("--set", s)]
    assert main(argv) == 0, capsys.readouterr().err


def test_every_key_the_code_accepts_has_a_row():
    docs = documented_keys()
    # a table is documented by its keys' rows (``policy.NAME.OPTION`` documents ``[policy]``)
    missing = [k for k in code_keys() if not any(_matches(d, k) or d.startswith(k + ".") for d in docs)]
    assert not missing, f"keys accepted by the code without a row in docs/cli.md: {missing}"


def test_every_test_value_belongs_to_a_documented_key():
    stale = sorted(set(KEY_CASES) - set(documented_keys()))
    assert not stale, f"KEY_CASES for keys docs/cli.md does not document: {stale}"


# -- flags ------------------------------------------------------------------------------------------
SPEC = """seeds = 1
policies = ["ckpt", "spare"]
redundancies = [1, 2]

[scenario]
n_groups = 4
n_steps = 20
t_compute = 1.0
t_allreduce = 0.1
system_mtbf = 30.0
"""


class Env:
    """Paths of one flag test: the tiny scenario file, a sweep spec, a store, output files."""

    def __init__(self, d: Path):
        self.d = d
        self.file = d / "tiny.toml"
        self.file.write_text(_file_text())
        self.spec = d / "spec.toml"
        self.spec.write_text(SPEC)
        self.store = str(d / "store")
        self.outputs: list[Path] = []

    def out(self, name: str) -> str:
        self.outputs.append(self.d / name)
        return str(self.d / name)

    def trace(self) -> str:
        """A small synthetic trace for ``spare whatif`` (written on first use)."""
        path = self.d / "trace.csv"
        if not path.exists():
            from spare_core.stragglers import synthetic_trace, write_trace

            write_trace(path, synthetic_trace(dp=2, pp=2, microbatches=2, steps=3, slow={1: 1.5}, seed=0))
        return str(path)

    def base(self, command: str) -> list[str]:
        if command == "whatif":
            return ["whatif", self.trace()]
        if command == "whatif-synth":
            return ["whatif", "--synth", self.out("synth.csv"), "--dp", "2", "--pp", "2", "--n-steps", "2"]
        return {
            "run": ["run", str(self.file), "--processes", "1"],
            "advise": ["advise", str(self.file), "--processes", "1"],
            "compare": ["compare", "--groups", "8", "--r-max", "2", "--seeds", "1", "--steps", "50",
                        "--processes", "1"],
            "sweep": ["sweep", str(self.spec), "--store", self.store],
            "pacing": ["pacing", "--nodes", "4", "8", "--iterations", "20", "--replicas", "1"],
            "demo": ["demo", "--types", "20", "--redundancy", "2", "--every", "5"],
            "map": ["map", str(self.file), "--strategies", "ckpt", "rep", "--seeds", "2", "--processes", "1"],
            "report": ["report", str(self.file), "--processes", "1"],
            # the example replay's log (64 nodes, 30 days): each law's check at the fewest replicates
            "fit": ["fit", str(Path(__file__).resolve().parents[1] / "examples" / "trace_job.toml"),
                    "--replicates", "20"],
        }[command]


# Dask leaves threads behind in the process that used it (its event loop, its offload pool),
# and other tests' code paths depend on no other thread running (the one-call matching and
# flow paths): the Dask cases run in a child process, the scheduler started there too
_ISOLATED = """
import json, sys
argv = json.loads(sys.argv[1])
from spare_core.cli import main
if "SCHEDULER" in argv:
    import distributed
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as c:
        sys.exit(main([c.scheduler_address if a == "SCHEDULER" else a for a in argv]))
sys.exit(main(argv))
"""


def _dask(e: Env, *extra: str) -> list[list[str]]:
    pytest.importorskip("distributed")
    e.isolate = True
    return [e.base("sweep") + ["--executor", "dask", *extra]]


def _dask_scheduler(e: Env) -> list[list[str]]:
    return _dask(e, "--scheduler", "SCHEDULER")


def _meta(e: Env) -> str:
    path = e.d / "meta.yaml"
    path.write_text("trial_name: tiny\ndp_size: 2\npp_size: 2\ntp_size: 1\ndsp_size: 1\nvpp_size: 1\nworld_size: 4\n")
    return str(path)


def _one(command: str, *extra: str) -> Callable[[Env], list[list[str]]]:
    return lambda e: [e.base(command) + [e.out(x[4:]) if x.startswith("OUT:") else x for x in extra]]


# the axes of a small map, and each axis's other forms
_MAP_X = ("--x", "failures.mtbf", "--x-values", "'5 min'", "'20 min'")
_MAP_Y = ("--y", "costs.restart", "--y-values", "60", "300")


def _map(*extra: str, x: tuple = _MAP_X, y: tuple = _MAP_Y) -> Callable[[Env], list[list[str]]]:
    return _one("map", *x, *y, *extra)


def _fleet_file(e: Env, command: str) -> list[str]:
    """The tiny file on node renewals with repairs and lemons (what retirement needs), and the
    command's base arguments on it."""
    path = e.d / "fleet.toml"
    path.write_text(_file_text("[failures]\nmodel = 'node'\nnode_mtbf = '40 min'\n",
                               "[repair]\ntime = '1 h'\nspares = 3\n[fleet]\nlemon_share = 0.25\nlemon_rate = 3\n"))
    return [a if a != str(e.file) else str(path) for a in e.base(command)]


_OUTPUTS = {"--json": "OUT:out.json", "--csv": "OUT:out.csv", "--parquet": "OUT:out.parquet", "--plot": "OUT:plots"}

FLAG_CASES: dict[tuple[str, str], Callable[[Env], list[list[str]]]] = {
    **{(c, f): _one(c, f, v) for c in ("run", "advise", "compare") for f, v in _OUTPUTS.items()},
    **{(c, "--set"): _one(c, "--set", "failures.mtbf='7 min'") for c in ("run", "advise")},
    **{(c, "--policies"): _one(c, "--policies", "rep-disjoint", "spare") for c in ("run", "advise")},
    **{(c, "--r-max"): _one(c, "--r-max", "3") for c in ("run", "advise", "compare")},
    **{(c, "--seeds"): _one(c, "--seeds", "2") for c in ("run", "advise", "compare")},
    **{(c, "--steps"): _one(c, "--steps", "30") for c in ("run", "advise", "compare")},
    **{(c, "--horizon"): _one(c, "--horizon", "4") for c in ("run", "advise", "compare")},
    **{(c, "--processes"): _one(c, "--processes", "2") for c in ("run", "advise", "compare")},
    ("advise", "--no-sensitivity"): _one("advise", "--no-sensitivity"),
    ("advise", "--objective"): _one("advise", "--objective", "cost", "--set", "costs.gpu_hour=2.0"),
    ("advise", "--spares"): _one("advise", "--spares", "0,1,3", "--set", "repair.time='1 d'",
                                 "--set", "repair.swap='5 min'"),
    ("advise", "--standbys"): _one("advise", "--standbys", "0,2", "--set", "repair.time='1 h'",
                                   "--set", "repair.swap='5 min'"),
    ("advise", "--retire-after"): lambda e: [_fleet_file(e, "advise") + ["--retire-after", "0,2"]],
    **{(c, "--force"): _one(c, "--force") for c in ("run", "advise", "compare")},
    ("sweep", "--force"): _one("sweep", "--force"),
    ("compare", "--groups"): _one("compare", "--groups", "6", "12"),
    ("compare", "--failure-model"): _one("compare", "--failure-model", "node"),
    ("compare", "--rep-variant"): _one("compare", "--rep-variant", "disjoint"),
    ("compare", "--layout"): _one("compare", "--layout", "sidon"),
    ("compare", "--no-patch-cost"): _one("compare", "--no-patch-cost"),
    ("sweep", "--store"): _one("sweep"),
    ("sweep", "--executor"): lambda e: _dask(e, "--workers", "1"),
    ("sweep", "--scheduler"): _dask_scheduler,
    ("sweep", "--workers"): _one("sweep", "--workers", "2"),
    ("sweep", "--batch-runs"): _one("sweep", "--batch-runs", "2"),
    ("sweep", "--task-seconds"): _one("sweep", "--task-seconds", "0.5"),
    ("sweep", "--report"): lambda e: [e.base("sweep"), ["sweep", "--report", "--store", e.store]],
    ("sweep", "--json"): lambda e: [e.base("sweep"), ["sweep", "--report", "--store", e.store, "--json",
                                                      e.out("report.json")]],
    ("whatif", "--meta"): lambda e: [e.base("whatif") + ["--meta", _meta(e)]],
    ("whatif", "--dp"): _one("whatif", "--dp", "2", "--pp", "2"),
    ("whatif", "--pp"): _one("whatif", "--pp", "2", "--dp", "2"),
    ("whatif", "--tp"): _one("whatif", "--tp", "4"),
    ("whatif", "--cp"): _one("whatif", "--cp", "2"),
    ("whatif", "--vpp"): _one("whatif", "--vpp", "1"),
    ("whatif", "--ideal"): _one("whatif", "--ideal", "stage"),
    ("whatif", "--steps"): _one("whatif", "--steps", "0-1"),
    ("whatif", "--json"): _one("whatif", "--json", "OUT:whatif.json"),
    ("whatif", "--plot"): _one("whatif", "--plot", "OUT:whatif.png"),
    ("whatif", "--timeline"): _one("whatif", "--timeline", "OUT:timeline.json"),
    ("whatif", "--synth"): _one("whatif-synth"),
    ("whatif", "--microbatches"): _one("whatif-synth", "--microbatches", "4"),
    ("whatif", "--n-steps"): _one("whatif-synth", "--n-steps", "3"),
    ("whatif", "--slow"): _one("whatif-synth", "--slow", "1=1.5", "--slow", "2=1.2"),
    ("whatif", "--last-stage"): _one("whatif-synth", "--last-stage", "1.3"),
    ("whatif", "--jitter"): _one("whatif-synth", "--jitter", "0.1"),
    ("whatif", "--seq-spread"): _one("whatif-synth", "--seq-spread", "0.2"),
    ("whatif", "--contention"): _one("whatif-synth", "--contention", "0.5"),
    ("whatif", "--seed"): _one("whatif-synth", "--seed", "3"),
    ("pacing", "--nodes"): _one("pacing", "--nodes", "4"),
    ("pacing", "--iterations"): _one("pacing", "--iterations", "30"),
    ("pacing", "--replicas"): _one("pacing", "--replicas", "2"),
    ("pacing", "--seed"): _one("pacing", "--seed", "7"),
    ("pacing", "--force"): _one("pacing", "--force"),
    ("pacing", "--fabric"): _one("pacing", "--fabric", "top-of-rack"),
    ("pacing", "--nodes-per-leaf"): _one("pacing", "--nodes-per-leaf", "4"),
    ("pacing", "--oversubscription"): _one("pacing", "--oversubscription", "1.5"),
    ("pacing", "--ring-order"): _one("pacing", "--ring-order", "topology"),
    ("pacing", "--background-duty"): _one("pacing", "--background-duty", "0.3"),
    ("pacing", "--background-run"): _one("pacing", "--background-run", "5"),
    ("pacing", "--algorithm"): _one("pacing", "--algorithm", "ring"),
    ("pacing", "--pacer"): _one("pacing", "--pacer", "spread"),
    ("pacing", "--json"): _one("pacing", "--json", "OUT:pacing.json"),
    ("pacing", "--plot"): _one("pacing", "--plot", "OUT:pacing.png"),
    # and the fleet's keys as axes (docs/cli.md: 0 standbys, 0 retire_after = none)
    ("map", "--x"): lambda e: [_map()(e)[0], _fleet_file(e, "map") + [
        "--x", "fleet.standbys", "--x-values", "0", "1", "--y", "fleet.retire_after", "--y-values", "0", "2"]],
    ("map", "--y"): _map(),
    ("map", "--x-values"): _map(),
    ("map", "--y-values"): _map(),
    ("map", "--x-range"): _map(x=("--x", "failures.mtbf", "--x-range", "5 min", "20 min", "2")),
    ("map", "--y-range"): _map(y=("--y", "repair.spares", "--y-range", "0", "4", "2")),
    ("map", "--x-log"): _map(x=("--x", "failures.mtbf", "--x-range", "5 min", "20 min", "2", "--x-log")),
    ("map", "--y-log"): _map(y=("--y", "costs.checkpoint_save", "--y-range", "1", "10", "2", "--y-log")),
    ("map", "--set"): _map("--set", "job.steps=60"),
    ("map", "--strategies"): _map("--strategies", "ckpt", "spare"),
    ("map", "--objective"): _map("--objective", "cost", "--set", "costs.gpu_hour=2"),
    ("map", "--seeds"): _map("--seeds", "3"),
    ("map", "--tie"): _map("--tie", "5"),
    ("map", "--r-max"): _map("--r-max", "3"),
    ("map", "--steps"): _map("--steps", "30"),
    ("map", "--horizon"): _map("--horizon", "4"),
    ("map", "--processes"): _map("--processes", "2"),
    ("map", "--force"): _map("--force"),
    ("map", "--json"): _map("--json", "OUT:map.json"),
    ("map", "--csv"): _map("--csv", "OUT:map.csv"),
    ("map", "--parquet"): _map("--parquet", "OUT:map.parquet"),
    ("map", "--plot"): _map("--plot", "OUT:map.png"),
    ("demo", "--types"): _one("demo", "--types", "12"),
    ("demo", "--redundancy"): _one("demo", "--redundancy", "3"),
    ("demo", "--seed"): _one("demo", "--seed", "5"),
    ("demo", "--every"): _one("demo", "--every", "2"),
    ("demo", "--force"): _one("demo", "--force"),
    ("fit", "--laws"): _one("fit", "--laws", "weibull-new", "frailty-periods"),
    ("fit", "--replicates"): _one("fit", "--replicates", "25", "--laws", "exponential"),
    ("fit", "--seed"): _one("fit", "--seed", "3", "--laws", "exponential"),
    ("fit", "--merge"): _one("fit", "--merge", "none", "1h", "1 d", "--laws", "weibull"),
    ("fit", "--periods"): _one("fit", "--periods", "week", "--laws", "exponential-periods"),
    ("fit", "--force"): _one("fit", "--force", "--laws", "exponential"),
    ("fit", "--json"): _one("fit", "--json", "OUT:fit.json"),
    ("fit", "--csv"): _one("fit", "--csv", "OUT:fit.csv"),
    ("fit", "--parquet"): _one("fit", "--parquet", "OUT:fit.parquet"),
}



def _report_case(advise_case: Callable[[Env], list[list[str]]]) -> Callable[[Env], list[list[str]]]:
    """``spare report`` takes every flag of ``spare advise``: the advise case as a report with
    an HTML page."""
    def case(e: Env) -> list[list[str]]:
        return [["report", *argv[1:], "--html", e.out("report.html")] for argv in advise_case(e)]
    return case


FLAG_CASES.update({("report", f): _report_case(c) for (cmd, f), c in list(FLAG_CASES.items()) if cmd == "advise"})
FLAG_CASES.update({
    ("report", "--html"): _one("report", "--html", "OUT:page.html"),
    ("report", "--md"): _one("report", "--md", "OUT:page.md"),
    ("report", "--map"): lambda e: [_map("--json", "OUT:m.json")(e)[0],
                                    e.base("report") + ["--map", str(e.d / "m.json"), "--html", e.out("r.html")]],
})

def _parsers() -> dict[str, Any]:
    sub = next(a for a in build_parser()._actions if a.choices and isinstance(a.choices, dict))
    return dict(sub.choices)


def test_the_flag_tables_are_the_parsers():
    docs = documented_flags()
    for command, parser in _parsers().items():
        flags = {o for a in parser._actions for o in a.option_strings if o.startswith("--") and o != "--help"}
        assert command in docs, f"docs/cli.md has no flag table for 'spare {command}'"
        assert flags == set(docs[command]), (f"spare {command}: flags without a row {sorted(flags - set(docs[command]))}, "
                                             f"rows without a flag {sorted(set(docs[command]) - flags)}")
    assert not set(docs) - set(_parsers()), f"flag tables of no command: {sorted(set(docs) - set(_parsers()))}"


def _flag_params():
    return [pytest.param(c, f, id=f"{c}{f}") for c, flags in documented_flags().items() for f in flags]


@pytest.mark.parametrize("command,flag", _flag_params())
def test_a_documented_flag_runs(command, flag, tmp_path, capsys):
    case = FLAG_CASES.get((command, flag))
    assert case is not None, f"docs/cli.md documents 'spare {command} {flag}' without a test: add it to FLAG_CASES"
    e = Env(tmp_path)
    try:
        runs = case(e)
        assert any(flag in argv for argv in runs), runs
        for argv in runs:
            if getattr(e, "isolate", False):
                env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1] / "src"))
                proc = subprocess.run([sys.executable, "-c", _ISOLATED, json.dumps(argv)], capture_output=True,
                                      text=True, env=env, timeout=600)
                assert proc.returncode == 0, proc.stderr
            else:
                assert main(argv) == 0, capsys.readouterr().err
    finally:
        getattr(e, "cleanup", lambda: None)()
    for p in e.outputs:
        assert p.exists() and (p.is_dir() or p.stat().st_size > 0), p

"""Random valid scenario files with this wave's keys (issue 28, closing pass): shared by
tests/test_hardening_wave4.py and tests/fuzz/test_fuzz_wave4.py.

A file is a plain dict (what ``tomllib`` gives), small enough that every policy runs in a few
milliseconds: 2-12 data-parallel groups, 20-400 steps, failures every few steps. It may carry
``[elastic]`` ``step_overhead`` (seconds or a share) and ``quorum``, a ``[checkpoint]`` priced by
size and bandwidth (blocking or async with ``host_copy``), ``[repair]``, an in-memory tier,
``failures.interruptions`` with ``measured_on_gpus`` and a price.
"""
from __future__ import annotations

from hypothesis import strategies as st

#: byte units the file reader takes, and their factors (docs/cli.md, checkpoint.size)
SIZE_UNITS = {"B": 1.0, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "KiB": 2.0**10, "MiB": 2.0**20,
              "GiB": 2.0**30}


@st.composite
def size_text(draw, low_bytes: float, high_bytes: float):
    """A byte amount written with a unit, and its value in bytes (the independent reading)."""
    unit = draw(st.sampled_from(sorted(SIZE_UNITS)))
    f = SIZE_UNITS[unit]
    x = draw(st.floats(low_bytes / f, high_bytes / f, allow_nan=False, allow_infinity=False))
    x = float(f"{x:.6g}")  # a number a user writes; its bytes are then exactly x * f as below
    return f"{x:g} {unit}", x * f


@st.composite
def valid_files(draw, policies=("ckpt", "rep", "spare", "elastic"), fleet=False):
    """(file dict, facts): a valid scenario file and what the generator knows independently
    of the reader (the checkpoint's bytes and bandwidths, the overhead asked). With ``fleet``
    the later keys of the wave too, on node renewals: ``[[failures.classes]]`` with detection,
    ``[repair]`` laws and probabilities, and ``[fleet]`` (lemons, warm standbys, retirement,
    the restart rule)."""
    gpn = draw(st.sampled_from([1, 2, 4, 8]))
    nodes_per_group = draw(st.integers(1, 2))
    n_groups = draw(st.integers(2, 12))
    gpus = n_groups * nodes_per_group * gpn
    step = draw(st.floats(1.0, 20.0))
    allreduce = draw(st.sampled_from([0.0, 0.1 * step, 0.3 * step]))
    steps = draw(st.integers(20, 400))
    t0ish = steps * step
    facts: dict = {"n_groups": n_groups, "gpus": gpus}
    data: dict = {
        "name": "gen",
        "cluster": {"gpus": gpus, "gpus_per_node": gpn, "gpus_per_group": nodes_per_group * gpn},
        "job": {"step_time": step, "allreduce_time": allreduce, "steps": steps,
                "jitter": draw(st.sampled_from([0.0, 0.05, 0.2]))},
        "compare": {"policies": list(policies), "r_max": draw(st.integers(1, min(3, n_groups))),
                    "seeds": 1, "horizon": draw(st.sampled_from([2.0, 5.0, 50.0]))},
    }
    # failures every few steps to every few hundred (the job's MTBF), by one of the rate forms
    mtbf = draw(st.floats(3.0 * step, 0.5 * t0ish + 3.0 * step))
    model = "node" if fleet else draw(st.sampled_from(["node", "system", "per-unit"]))
    fl: dict = {"model": model, "weibull_shape": draw(st.sampled_from([0.7, 1.0, 1.4]))}
    if draw(st.booleans()):
        fl["mtbf"] = mtbf
    else:
        # interruptions over a period, measured on a job of another size: the per-GPU rate
        measured = draw(st.sampled_from([gpus, 2 * gpus, max(1, gpus // 2)]))
        count = draw(st.integers(1, 500))
        fl.update(interruptions=count, period=mtbf * count * gpus / measured, measured_on_gpus=measured)
        facts["per_gpu_rate"] = count / (fl["period"] * measured)
    data["failures"] = fl
    costs: dict = {"restart": draw(st.sampled_from([0.0, step, 10.0 * step]))}
    if draw(st.booleans()):
        costs["gpu_hour"] = draw(st.sampled_from([0.5, 2.5, 100.0]))
    save = draw(st.sampled_from([0.01 * step, 0.5 * step, 3.0 * step]))
    ck: dict = {}
    if draw(st.booleans()):
        # the save priced by its size: write = size / (bw * eff), load = size / (read bw * eff)
        write = draw(st.floats(0.1 * step, 5.0 * step))
        wbw_text, wbw = draw(size_text(1e8, 1e12))
        rbw_text, rbw = draw(size_text(1e8, 1e12))
        eff = draw(st.sampled_from([1.0, 0.5, 0.16, 0.215]))
        size_t, size_b = draw(size_text(write * wbw * eff * 0.5, write * wbw * eff * 2.0))
        ck.update(size=size_t, write_bandwidth=f"{wbw_text}/s", read_bandwidth=f"{rbw_text}/s")
        if eff != 1.0 or draw(st.booleans()):
            ck["efficiency"] = eff
        facts["io"] = dict(size=size_b, write_bw=wbw, read_bw=rbw, eff=eff)
        if draw(st.booleans()):
            ck["mode"] = "async"
            ck["host_copy"] = draw(st.sampled_from([0.01 * step, 0.1 * step, step]))
            facts["io"]["host_copy"] = ck["host_copy"]
        elif draw(st.booleans()):
            ck["mode"] = "blocking"
    else:
        costs["checkpoint_save"] = save
    data["costs"] = costs
    if model == "node" and (fleet or draw(st.booleans())):
        data["repair"] = {"swap": draw(st.sampled_from([0.0, step])), "time": draw(st.sampled_from([0.0, 20 * step])),
                          "rejoin": draw(st.sampled_from([0.0, 2 * step])),
                          "spares": draw(st.sampled_from([0, 1, 4]))}
    if fleet:
        _fleet_keys(draw, data, fl, step, nodes_per_group, n_groups)
        if draw(st.booleans()):
            # cost per token (harden5): the bill's tokens are the job's steps x tokens_per_step
            data["job"]["tokens_per_step"] = draw(st.sampled_from([1, 4096, 2.5e6]))
    if draw(st.booleans()):
        ck.update(memory_save=0.2 * step, memory_every=draw(st.sampled_from(["auto", 5 * step])),
                  memory_restore=step, memory_copies=1)
    if ck:
        data["checkpoint"] = ck
    el: dict = {}
    if "elastic" in policies and draw(st.booleans()):
        el["reconfigure"] = draw(st.sampled_from([0.0, 0.5 * step, 3 * step]))
        el["batch"] = draw(st.sampled_from(["keep", "shrink"]))
        el["microbatches"] = draw(st.integers(1, 4))
        el["min_groups"] = draw(st.integers(1, n_groups))
    over = draw(st.sampled_from([None, 0, 0.0, "0 %", 0.3, "0.4 s", "5 %", "250 %"])) if "elastic" in policies else None
    if over is not None:
        el["step_overhead"] = over
    quorum = draw(st.sampled_from([None, 0, 0.2, "1 s"])) if "elastic" in policies else None
    if quorum is not None:
        el["quorum"] = quorum
    if el:
        data["elastic"] = el
    interval = draw(st.sampled_from([None, "auto", "young", 5 * step, 40 * step]))
    if interval is not None:
        data["compare"]["interval"] = interval
    return data, facts


def _law(draw, mean: float):
    """A duration or a law table of about ``mean`` seconds, as a file writes it."""
    return draw(st.sampled_from([mean, {"law": "exponential", "mean": mean},
                                 {"law": "lognormal", "median": mean, "sigma": 1.0}, {"law": "constant", "value": mean}]))


def _fleet_keys(draw, data: dict, fl: dict, step: float, nodes_per_group: int = 1, n_groups: int = 2) -> None:
    """The fleet's keys of the later issues on a file with ``[repair]`` (node renewals), and
    this session's: a ``recovery = "domain"`` class with its ``nodes``, ``fleet.place``,
    ``fleet.lemons = "declared"``, ``fleet.retire_after = 0`` (no retirement)."""
    rp = data["repair"]
    domain = False
    if draw(st.booleans()):
        s = draw(st.sampled_from([0.25, 0.5, 0.75, 1.0]))
        classes = [{"name": "hw", "share": s, "recovery": "swap", "detect": draw(st.sampled_from([0.0, step]))}]
        if s < 1.0:
            rest = "restart"
            if draw(st.booleans()):
                rest, domain = "domain", True
            cl = {"name": "sw", "share": 1.0 - s, "recovery": rest,
                  "detect": draw(st.sampled_from([0.0, 2 * step, {"law": "exponential", "mean": step}]))}
            if domain:
                # a domain of whole groups (the last one may be partial) or one inside a group
                k = draw(st.integers(1, n_groups))
                cl["nodes"] = draw(st.sampled_from(sorted({k * nodes_per_group, 1})))
                if draw(st.booleans()):
                    cl["masked"] = draw(st.booleans())
            classes.append(cl)
        fl["classes"] = classes
    if draw(st.booleans()):
        rp["time"] = _law(draw, 20 * step)
        rp["swap"] = _law(draw, step)
        if draw(st.booleans()):
            rp.update(escalate=draw(st.sampled_from([0.5, 1.0])), manual_time=_law(draw, 50 * step))
        rp["fail_fix"] = draw(st.sampled_from([0.0, 0.3]))
        rp["misdiagnose"] = draw(st.sampled_from([0.0, 0.2]))
    fleet: dict = {}
    if draw(st.booleans()):
        fleet.update(lemon_share=draw(st.sampled_from([0.1, 0.5])), lemon_rate=draw(st.sampled_from([1.0, 4.0])))
        if draw(st.booleans()):
            fleet["lemon_fix"] = draw(st.sampled_from([0.0, 0.5, 1.0]))
    if draw(st.booleans()):
        fleet.update(standbys=draw(st.integers(1, 3)), standby_swap=draw(st.sampled_from([0.0, 0.5 * step])),
                     host_select=draw(st.sampled_from([0.0, 3 * step])))
        if draw(st.booleans()):
            fleet["restart_when"] = draw(st.sampled_from(["one", "job+standbys"]))
    if "lemon_share" in fleet and draw(st.booleans()):
        fleet["lemons"] = "declared"
    placed = draw(st.sampled_from([None, "slot", "any", "fewest_failures"]))
    if placed in ("any", "fewest_failures") and rp.get("spares", 0) + fleet.get("standbys", 0) == 0:
        placed = "slot"  # a placement needs an idle node to move (refused without one)
    if placed is not None:
        fleet["place"] = placed
    # retirement: not with a domain class (refused); with a placement it retires the node
    if draw(st.booleans()):
        can_retire = not domain
        fleet["retire_after"] = draw(st.integers(1, 4)) if can_retire and draw(st.booleans()) else 0
    if fleet:
        data["fleet"] = fleet


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        if isinstance(v, float) and v != v:
            return "nan"
        if isinstance(v, float) and v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f'"{k}" = {_toml_value(x)}' for k, x in v.items()) + "}"
    raise TypeError(type(v))


def to_toml(data: dict) -> str:
    """A file dict as TOML text (scalars and lists at the top, then one ``[table]`` per dict;
    a dict inside a table is written inline)."""
    lines = [f'"{k}" = {_toml_value(v)}' for k, v in data.items() if not isinstance(v, dict)]
    for k, v in data.items():
        if isinstance(v, dict):
            lines.append(f'\n["{k}"]')
            lines += [f'"{kk}" = {_toml_value(vv)}' for kk, vv in v.items()]
    return "\n".join(lines) + "\n"


def write_straggler_trace(path, *, dp=2, pp=2, steps=3, seed=0, slow=1.5):
    """A small synthetic operation trace (``spare whatif``'s input) with one slow worker."""
    from spare_core.stragglers import synthetic_trace, write_trace
    from spare_core.stragglers.synth import trace_columns

    write_trace(path, trace_columns(synthetic_trace(dp=dp, pp=pp, microbatches=2, steps=steps,
                                                    slow={1: slow}, seed=seed)))
    return path


@st.composite
def straggler_tables(draw, trace_name="ops.csv"):
    """A valid ``[stragglers]`` table: a slowdown S with its remedies' numbers, or a trace
    (written by the caller at ``trace_name``) with or without its sizes."""
    if draw(st.booleans()):
        s = draw(st.floats(1.0, 3.0))
        t = {"slowdown": s}
        if draw(st.booleans()):
            t["worker"] = draw(st.integers(0, 3))
        if draw(st.booleans()):
            t["evict_slowdown"] = draw(st.floats(1.0, s))
        for k in ("stage_share", "comm_share"):
            if draw(st.booleans()):
                t[k] = draw(st.sampled_from([0.0, 0.05, 0.25, 1.0]))
    else:
        t = {"trace": trace_name}
        if draw(st.booleans()):
            t.update(dp=2, pp=2)
        if draw(st.booleans()):
            t["ideal"] = draw(st.sampled_from(["mean", "median", "stage", "position"]))
    if draw(st.booleans()):
        t["rebalance_cost"] = draw(st.sampled_from([0.0, "30 s", "30 min"]))
    if draw(st.booleans()):
        t["remedies"] = draw(st.lists(st.sampled_from(["rebalance", "pacing"]), max_size=2))
    return t


@st.composite
def capacity_files(draw, policies=("ckpt", "rep", "spare", "elastic")):
    """(file dict, log rows): a valid file replaying a small log of capacity events (harden5):
    ``failures.trace`` with ``event_column``, ``remove_values`` and ``add_values`` (an elastic job
    grows back on the additions), a ``capacity`` or the fleet listed as additions at time 0, a spot
    price beside the on-demand one, ``job.tokens_per_step``, the log read instance by instance
    (``removals``, ``boot``), ``elastic.rendezvous`` and ``resume``. The rows are (time, event, instance)
    for :func:`write_capacity_log`; the fleet never goes below zero nodes."""
    gpn = draw(st.sampled_from([1, 8]))
    nodes_per_group = draw(st.integers(1, 2))
    n_groups = draw(st.integers(2, 8))
    job_nodes = n_groups * nodes_per_group
    step = draw(st.floats(1.0, 10.0))
    steps = draw(st.integers(20, 300))
    t0 = step * steps
    data: dict = {
        "name": "gen-capacity",
        "cluster": {"gpus": job_nodes * gpn, "gpus_per_node": gpn, "gpus_per_group": nodes_per_group * gpn},
        "job": {"step_time": step, "steps": steps, "jitter": draw(st.sampled_from([0.0, 0.1]))},
        "failures": {"model": "trace", "after": "stop",
                     "trace": {"path": "capacity.csv", "time_column": "time", "unit_column": "instance",
                               "event_column": "event", "remove_values": draw(st.sampled_from(["preempt", ["preempt", "lost"]])),
                               "unit_gpus": gpn}},
        "costs": {"restart": draw(st.sampled_from([0.0, step, 5 * step])), "checkpoint_save": draw(st.sampled_from([0.1, step])),
                  "gpu_hour": draw(st.sampled_from([1.0, 3.06]))},
        "compare": {"policies": list(policies), "r_max": draw(st.integers(1, min(2, n_groups))), "seeds": 1,
                    "horizon": draw(st.sampled_from([3.0, 20.0]))},
    }
    tr = data["failures"]["trace"]
    removes = tr["remove_values"] if isinstance(tr["remove_values"], list) else [tr["remove_values"]]
    grow = draw(st.booleans())
    if grow:
        tr["add_values"] = draw(st.sampled_from(["add", ["add", "join"]]))
    adds = (tr["add_values"] if isinstance(tr["add_values"], list) else [tr["add_values"]]) if grow else []
    if draw(st.booleans()):
        data["costs"]["spot_gpu_hour"] = draw(st.sampled_from([0.5, 0.92]))
    if draw(st.booleans()):
        data["job"]["tokens_per_step"] = draw(st.sampled_from([1, 4096, 2.5e6]))
    rows: list = []
    extra = draw(st.integers(0, 3))
    live = [f"i-{u:03d}" for u in range(job_nodes + extra)]
    fresh = len(live)
    if grow and draw(st.booleans()):
        tr["capacity"] = 0  # the fleet listed as additions at time 0, as Bamboo's log does
        rows += [(0.0, draw(st.sampled_from(adds)), u) for u in live]
    elif extra or draw(st.booleans()):
        tr["capacity"] = len(live)
    gaps = draw(st.lists(st.floats(0.02, 0.6), min_size=1, max_size=12))
    t = 0.0
    for i, gap in enumerate(gaps):
        t += gap * t0
        kinds = ["remove"] + (["add"] if grow and i else [])  # a log holds a removal (refused without one)
        kind = draw(st.sampled_from(kinds)) if live else ("add" if grow else None)
        if kind is None:
            break
        if kind == "remove":
            u = live.pop(draw(st.integers(0, len(live) - 1)))
            rows.append((round(t, 3), draw(st.sampled_from(removes)), u))
        else:
            u = f"i-{fresh:03d}"
            fresh += 1
            live.append(u)
            rows.append((round(t, 3), draw(st.sampled_from(adds)), u))
    # the log read instance by instance (an idle instance's removal no failure, a boot)
    if draw(st.booleans()):
        tr["removals"] = draw(st.sampled_from(["job", "instance"]))
    if draw(st.booleans()):
        tr["boot"] = draw(st.sampled_from([0.0, 0.3 * step, 2 * step]))
    el: dict = {}
    if "elastic" in policies and draw(st.booleans()):
        el["reconfigure"] = draw(st.sampled_from([0.0, 0.5 * step, 3 * step]))
        el["min_groups"] = draw(st.integers(1, n_groups))
        # both need a log that adds nodes (additions at time 0 count however the log is read)
        adds_at_0 = any(r[0] == 0.0 and r[1] in adds for r in rows)
        if adds_at_0 and draw(st.booleans()):
            el["rendezvous"] = draw(st.sampled_from(["per_change", "per_instant"]))
        if adds_at_0 and draw(st.booleans()):
            el["resume"] = draw(st.sampled_from(["whole", "any"]))
    if el:
        data["elastic"] = el
    return data, rows


def write_capacity_log(path, rows) -> None:
    """The rows of :func:`capacity_files` as the CSV its file names."""
    path.write_text("time,event,instance\n" + "".join(f"{t!r},{e},{u}\n" for t, e, u in rows))


CAUSES = ("GPU", "GPU NVLink", "host", "switch", "software")


@st.composite
def cause_files(draw, policies=("ckpt", "rep", "spare", "elastic")):
    """(file dict, log rows): a valid file replaying a small failure log with a cause column
    (harden5): ``failures.trace.reason_column`` and ``[[failures.classes]]`` with ``values`` (one
    string, a list, or ``"*"`` for the rest), recoveries swap, restart or domain (with ``nodes``),
    with or without ``[repair]``, ``after = "stop"`` or ``"fit"``. The rows are (time, unit, cause)
    for :func:`write_cause_log`; every cause of the log is some class's."""
    gpn = draw(st.sampled_from([1, 8]))
    nodes_per_group = draw(st.integers(1, 2))
    n_groups = draw(st.integers(2, 8))
    job_nodes = n_groups * nodes_per_group
    step = draw(st.floats(1.0, 10.0))
    steps = draw(st.integers(20, 300))
    t0 = step * steps
    used = draw(st.lists(st.sampled_from(CAUSES), min_size=1, max_size=4, unique=True))
    rows = []
    t = 0.0
    for gap in draw(st.lists(st.floats(0.01, 0.5), min_size=1, max_size=15)):
        t += gap * t0
        rows.append((round(t, 3), f"n{draw(st.integers(0, job_nodes - 1))}", draw(st.sampled_from(used))))
    # the causes split over classes: each class a part of them, or "*" for the last
    seen = sorted({c for *_, c in rows})
    n_cls = draw(st.integers(1, len(seen)))
    parts = [seen[i::n_cls] for i in range(n_cls)]
    star = draw(st.booleans())
    classes = []
    for i, part in enumerate(parts):
        rec = draw(st.sampled_from(["swap", "restart", "domain"]))
        cl = {"name": f"c{i}", "recovery": rec,
              "values": "*" if star and i == len(parts) - 1 else (part[0] if len(part) == 1 and draw(st.booleans())
                                                                   else part)}
        if rec == "domain":
            cl["nodes"] = draw(st.sampled_from(sorted({nodes_per_group * draw(st.integers(1, n_groups)), 1})))
        if draw(st.booleans()):
            cl["detect"] = draw(st.sampled_from([0.0, step, {"law": "exponential", "mean": step}]))
        classes.append(cl)
    data: dict = {
        "name": "gen-causes",
        "cluster": {"gpus": job_nodes * gpn, "gpus_per_node": gpn, "gpus_per_group": nodes_per_group * gpn},
        "job": {"step_time": step, "steps": steps, "jitter": draw(st.sampled_from([0.0, 0.1]))},
        # a fit needs a few gaps (refused on one failure)
        "failures": {"model": "trace", "after": draw(st.sampled_from(["stop", "fit"])) if len(rows) >= 4 else "stop",
                     "trace": {"path": "causes.csv", "time_column": "time", "unit_column": "unit",
                               "reason_column": "cause", "unit_gpus": gpn},
                     "classes": classes},
        "costs": {"restart": draw(st.sampled_from([0.0, step, 5 * step])), "checkpoint_save": draw(st.sampled_from([0.1, step]))},
        "compare": {"policies": list(policies), "r_max": draw(st.integers(1, min(2, n_groups))), "seeds": 1,
                    "horizon": draw(st.sampled_from([3.0, 20.0]))},
    }
    if draw(st.booleans()):
        data["repair"] = {"time": draw(st.sampled_from([0.0, 20 * step])), "spares": draw(st.sampled_from([0, 1, 4]))}
    return data, rows


def write_cause_log(path, rows) -> None:
    """The rows of :func:`cause_files` as the CSV its file names."""
    path.write_text("time,unit,cause\n" + "".join(f"{t!r},{u},{c}\n" for t, u, c in rows))

"""Fuzz: the ranges and the work budget (issue 23, item 1) over the scenario-file keys as
``--set`` overrides and as file text, the flags of ``spare run``, and a sweep spec's scenario
keys and seeds.

Every value of every ranged key either runs to its end (exit status 0, within the per-case
time limit: the budget and the wall limit bound the work) or is refused with one line naming
the key and exit status 2; a spec either loads and its budget is decided, or is refused with
a ValueError/TypeError naming the key. Findings each have a named regression test in
tests/test_hardening_bounds.py.
"""
from __future__ import annotations

import contextlib
import io
import os

from hypothesis import given, strategies as st

from fuzz_isolate import run_isolated
from fuzz_profile import fuzz
from spare_core import _limits

BASE = """
[cluster]
gpus = 512
gpus_per_node = 8
gpus_per_group = 64
[job]
step_time = "2 s"
steps = 200
[failures]
node_mtbf = "30 d"
[compare]
seeds = 1
r_max = 2
policies = ["ckpt", "spare"]
processes = 1
"""

#: the file keys of the one table that the base file can take without another table
FILE_KEYS = sorted(k for k in _limits.KEYS if "." in k and not k.startswith(("scenario.", "policy.", "failures.domains")))
RUN_FLAGS = ["--steps", "--r-max", "--seeds", "--horizon", "--processes"]
SPEC_KEYS = sorted(k.split(".", 1)[1] for k in _limits.KEYS if k.startswith("scenario."))
EDGES = ["0", "-1", "1", "2", "0.5", "5e-324", "1e-300", "1e-7", "1e-6", "0.0059", "0.02", "0.05", "1e9", "1e11",
         "1e12", "1e13", "1e308", "2147483647", "2147483648", "1000000000000", str(2**63 - 1), str(2**63),
         str(2**64 - 1), "nan", "inf", "-inf", '"1 ms"', '"30 min"', '"2 y"', '"1e308 s"', '"x"', "true", "[]"]


def _spare(argv):
    from spare_core.cli import main
    err, outp = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(outp):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    return code, err.getvalue()


def _check(out, case, name, value):
    assert out.ok, f"{case}: {out.error_type.__name__}: {out.message}"
    code, err = out.value
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code in (0, 2), (case, code, err[:500])
    if code == 2:
        assert len(lines) == 1 and "Traceback" not in err, (case, err[:500])
        assert "error:" in lines[0], (case, lines[0])
        # a value outside its key's one range is refused naming that key (another refusal may
        # name the rule of the table it broke: gpus_per_group must divide the GPUs, ...)
        r = _limits.range_of(name)
        v = _number(value)
        if r is not None and v is not None and not r.contains(v):
            # or, for an override of one rate form, the rule it broke first: an override of
            # failures.measured_on_gpus drops the file's other rate forms (docs/cli.md)
            assert name in lines[0] or name.split(".")[-1] in lines[0] or "needs exactly one rate form" in lines[0], \
                (case, lines[0])


def _number(text):
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return None


@fuzz(0.5)
@given(st.sampled_from(FILE_KEYS), st.sampled_from(EDGES), st.booleans())
def test_every_ranged_key_runs_or_exits_2_naming_it(tmp_path_factory, key, value, in_file):
    d = tmp_path_factory.mktemp("f")
    base = d / "base.toml"
    if in_file:  # the value written in the file itself, in its table
        section, name = key.split(".", 1)
        text = BASE.replace(f"[{section}]\n", f"[{section}]\n{name} = {value}\n", 1) if f"[{section}]" in BASE \
            else BASE + f"\n[{section}]\n{name} = {value}\n"
        lines, seen = [], set()
        for ln in text.splitlines():  # the value replaces the base's own line of that key
            k = ln.split("=", 1)[0].strip()
            if k == name and k in seen:
                continue
            seen.add(k) if "=" in ln else None
            lines.append(ln)
        base.write_text("\n".join(lines) + "\n")
        argv = ["run", str(base)]
    else:
        base.write_text(BASE)
        argv = ["run", str(base), "--set", f"{key}={value}"]
    out = run_isolated(_spare, argv, case=" ".join(argv[2:]) or f"{key} = {value} in the file", timeout=60)
    _check(out, f"{key}={value} ({'file' if in_file else '--set'})", key, value)


@fuzz(0.25)
@given(st.sampled_from(RUN_FLAGS), st.sampled_from(EDGES), st.booleans())
def test_run_flags_with_force_run_or_exit_2(tmp_path_factory, flag, value, force):
    base = tmp_path_factory.mktemp("r") / "base.toml"
    base.write_text(BASE)
    argv = ["run", str(base), f"{flag}={value}"] + (["--force"] if force else [])
    if force and flag in ("--steps", "--horizon"):
        argv += ["--policies", "ckpt"]
    out = run_isolated(_spare, argv, case=" ".join(argv[2:]), timeout=60)
    _check(out, " ".join(argv[2:]), flag, value)


@fuzz(1.0)
@given(st.sampled_from(SPEC_KEYS + ["seeds"]), st.sampled_from(EDGES))
def test_spec_scenario_keys_and_seeds_load_or_are_refused_naming_them(tmp_path_factory, key, value):
    p = tmp_path_factory.mktemp("s") / "spec.toml"
    fixed = {"n_groups": "6", "n_steps": "20"}
    if key != "seeds":
        fixed[key] = value
    seeds = f"[0, {value}]" if key == "seeds" else "1"
    p.write_text(f'seeds = {seeds}\npolicies = ["ckpt"]\nredundancies = [1]\n[scenario]\npreset = "paper_600k"\n'
                 + "".join(f"{k} = {v}\n" for k, v in fixed.items()))

    def go():
        from spare_core.commands import UsageError
        from spare_core.commands.budget import check_budget
        from spare_core.sweeps import load_spec
        try:
            spec = load_spec(p)
        except (ValueError, TypeError) as exc:
            return "refused", str(exc)
        try:
            check_budget(spec, False, "spec")
        except UsageError as exc:
            return "over budget", str(exc)
        return "ok", ""
    out = run_isolated(go, case=f"spec {key} = {value}", timeout=60)
    assert out.ok, f"spec {key} = {value}: {out.error_type.__name__}: {out.message}"
    verdict, msg = out.value
    if verdict == "refused":
        assert "\n" not in msg and (key.rstrip("s") in msg or "TOML" in msg), (key, value, msg)

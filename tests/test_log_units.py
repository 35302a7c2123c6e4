"""Log units (issue 29 item 1): failures.trace.unit_gpus, n_units for fits, capacity events."""
import pytest

from spare_core.events.trace import TraceFormatError, read_trace
from spare_core.scenario_file import ScenarioFileError, load_scenario_file

LOG = "time,unit\n" + "".join(f"{3600.0 * (11.3 * (k + 1) + 2.0 * ((7 * k) % 5)):.1f},{(3 * k) % 8}\n"
                              for k in range(40))


def _job(tmp_path, failures, gpn=4):
    (tmp_path / "log.csv").write_text(LOG)
    p = tmp_path / "job.toml"
    p.write_text(f'[cluster]\ngpus = 32\ngpus_per_node = {gpn}\ngpus_per_group = 8\n'
                 f'[job]\nstep_time = "1 s"\nsteps = 100\n{failures}')
    return p


def test_capacity_events_are_refused_without_where_and_read_with_it(tmp_path):
    p = tmp_path / "ev.csv"
    p.write_text("time,unit,event\n1,0,fail\n2,1,ADD\n3,2,remove\n4,3,add\n5,0,fail\n")
    with pytest.raises(TraceFormatError, match=r"'ADD' x1.*'add' x1.*'remove' x1.*where"):
        read_trace(p)
    tr = read_trace(p, where={"event": "fail"})
    assert tr.n_events == 2 and tr.units.tolist() == [0, 0]


def test_a_fit_on_a_log_of_ids_needs_n_units(tmp_path):
    with pytest.raises(ScenarioFileError, match="failures.trace.n_units"):
        load_scenario_file(_job(tmp_path, '[failures]\nlaw = "fit"\nfit_law = "exponential"\ntrace = "log.csv"\n'))


def test_unit_gpus_scales_an_exponential_fit_and_warns_without_it(tmp_path):
    fl = '[failures]\nlaw = "fit"\nfit_law = "exponential"\ntrace = {{path = "log.csv", n_units = 8{}}}\n'
    plain = load_scenario_file(_job(tmp_path, fl.format("")))
    assert "warning: the log's units are taken as whole 4-GPU nodes" in plain.rate_note
    one = load_scenario_file(_job(tmp_path, fl.format(", unit_gpus = 1")))
    assert "warning" not in one.rate_note and "per node of 4 GPUs = 4 log units" in one.rate_note
    assert one.failure_rate.unit_mtbf("node") == pytest.approx(plain.failure_rate.unit_mtbf("node") / 4)


def test_unit_gpus_in_a_replay_sets_units_per_group_and_bad_values_are_refused(tmp_path):
    fl = '[failures]\nmodel = "trace"\nafter = "stop"\n[failures.trace]\npath = "log.csv"\n{}\n'
    sf = load_scenario_file(_job(tmp_path, fl.format("unit_gpus = 2")))
    assert sf.scenario.failures.nodes_per_group == 4
    for bad in ("unit_gpus = 3", "unit_gpus = 0", 'unit_gpus = "x"'):
        with pytest.raises(ScenarioFileError, match="failures.trace.unit_gpus"):
            load_scenario_file(_job(tmp_path, fl.format(bad)))

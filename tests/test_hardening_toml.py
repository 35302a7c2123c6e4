"""The product layer's one TOML reader (``scenario_file.read_toml``): scenario files and
sweep specs fail the same way for a missing, unreadable, non-UTF-8 or invalid file, with
one ValueError naming the file and, for the text, the line."""
import pytest

from spare_core.scenario_file import ScenarioFileError, TomlFileError, load_scenario_file, read_toml
from spare_core.sweeps import load_spec

SPEC = "seeds = 1\n[scenario]\nn_groups = 4\nn_steps = 5\nt_compute = 1.0\nt_allreduce = 0.1\nsystem_mtbf = 9.0\n"


def _both(path):
    """The errors of the two readers of a path."""
    errors = []
    for load, kind in ((load_scenario_file, ScenarioFileError), (load_spec, TomlFileError)):
        with pytest.raises(kind) as info:
            load(path)
        errors.append(info.value)
    return errors


def test_a_missing_file_is_the_same_error_for_scenario_files_and_sweep_specs(tmp_path):
    sc, spec = _both(tmp_path / "nope.toml")
    assert "cannot read scenario file" in str(sc) and "cannot read sweep spec" in str(spec)
    for e in (sc, spec):
        assert isinstance(e, ValueError) and "nope.toml" in str(e) and "No such file" in str(e)
        assert e.line is None and e.path.endswith("nope.toml")


def test_a_directory_is_refused_as_unreadable(tmp_path):
    for e in _both(tmp_path):
        assert "cannot read" in str(e) and "directory" in str(e).lower()


def test_invalid_toml_names_the_file_and_the_line(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text('name = "x"\n\n[job]\nsteps = = 3\n')
    for e in _both(f):
        assert e.line == 4 and f"{f}: line 4: not valid TOML" in str(e)


def test_bytes_that_are_not_utf8_name_the_line_and_the_byte(tmp_path):
    f = tmp_path / "latin1.toml"
    f.write_bytes(b'name = "a"\nnote = "caf\xe9"\n')
    for e in _both(f):
        assert e.line == 2 and "not a text (UTF-8) file (byte 0xe9)" in str(e)


def test_a_byte_order_mark_and_crlf_line_ends_are_read(tmp_path):
    f = tmp_path / "windows.toml"
    f.write_bytes(b"\xef\xbb\xbf" + SPEC.replace("\n", "\r\n").encode())
    assert read_toml(f, "sweep spec")["scenario"]["n_groups"] == 4
    assert len(load_spec(f).scenarios) == 1


def test_the_error_type_is_the_callers_own():
    with pytest.raises(ScenarioFileError, match="cannot read scenario file"):
        read_toml("/nonexistent/x.toml", "scenario file", ScenarioFileError)
    assert issubclass(ScenarioFileError, TomlFileError) and issubclass(TomlFileError, ValueError)


def test_a_sweep_spec_with_a_huge_seed_count_is_refused_before_building_it(tmp_path):
    from spare_core.scenario_file import MAX_SEEDS
    f = tmp_path / "spec.toml"
    f.write_text(SPEC.replace("seeds = 1", "seeds = 99999999999999999999"))
    with pytest.raises(ValueError, match=f"seeds must be an integer >= 1 and <= {MAX_SEEDS}, got 99999999999999999999"):
        load_spec(f)


def test_a_sweep_specs_redundancy_range_stops_at_the_group_count(tmp_path):
    f = tmp_path / "spec.toml"
    f.write_text("redundancies = {from = 2, to = 1000000000000000000}\n" + SPEC)
    assert load_spec(f).redundancies == [2, 3, 4]
    f.write_text("redundancies = {from = 3, to = 1}\n" + SPEC)
    with pytest.raises(ValueError, match="redundancies must not be empty"):
        load_spec(f)
    f.write_text("policies = ['spare']\nredundancies = {from = 9, to = 1000000000000000000}\n" + SPEC)
    with pytest.raises(ValueError, match="no redundancy in \\[9\\]"):
        load_spec(f)

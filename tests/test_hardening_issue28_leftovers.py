"""Issue 28's leftovers: refusals from counts before anything is built, errors that name their
file, huge integers on the command line (docs/reliability.md, the rows of this wave)."""
import csv

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spare_core.stragglers import JobSizes, TraceError, analyse, read_trace, synthetic_trace, trace_columns


def _write_csv(path, cols):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(list(cols))
        n = len(next(iter(cols.values())))
        for i in range(n):
            w.writerow([cols[k][i] for k in cols])


@pytest.fixture(scope="module")
def p2p_cols():
    t = synthetic_trace(dp=1, pp=3, microbatches=2, steps=1)
    return {k: v.copy() for k, v in trace_columns(t).items()}


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_a_broken_send_recv_pairing_names_the_file(tmp_path_factory, p2p_cols, data):
    """Every dependency-graph error of a trace read from a file names that file (it said
    ``trace:`` before, whichever file it was), whichever p2p row is dropped or re-keyed."""
    cols = {k: v.copy() for k, v in p2p_cols.items()}
    p2p = np.flatnonzero(np.isin(cols["optype"], ["forward-send", "forward-recv", "backward-send", "backward-recv"]))
    i = int(data.draw(st.sampled_from(list(p2p))))
    if data.draw(st.booleans()):
        keep = np.ones(len(cols["optype"]), bool)
        keep[i] = False
        cols = {k: v[keep] for k, v in cols.items()}
    else:
        cols["seq_id"][i] += data.draw(st.integers(1, 5))
    path = tmp_path_factory.mktemp("t") / "job_trace.csv"
    _write_csv(path, cols)
    try:
        analyse(read_trace(path, JobSizes(dp=1, pp=3)))
    except TraceError as exc:
        assert "job_trace.csv" in str(exc), str(exc)
        assert "\n" not in str(exc)


def test_a_send_without_its_recv_names_the_file(tmp_path, p2p_cols):
    cols = {k: v.copy() for k, v in p2p_cols.items()}
    keep = cols["optype"] != "forward-recv"
    _write_csv(tmp_path / "norecv.csv", {k: v[keep] for k, v in cols.items()})
    with pytest.raises(TraceError, match=r"norecv\.csv: stage \d records 0 forward-recv"):
        analyse(read_trace(tmp_path / "norecv.csv", JobSizes(dp=1, pp=3)))

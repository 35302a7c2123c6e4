"""The shared Cython vocabulary: ctypedefs match numpy's dtypes on this platform, the
indexed heap of _heap.pxd orders like a sort, and every kernel's enums reach the wrappers."""
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from spare_core._native import load


def test_ctypedefs_match_numpy_dtypes():
    sizes = load("_types_check").ctype_sizes()
    assert sizes["intp_t"] == np.dtype(np.intp).itemsize
    assert sizes["float64_t"] == np.dtype(np.float64).itemsize
    assert sizes["int8_t"] == 1 and sizes["uint8_t"] == 1
    assert sizes["int32_t"] == np.dtype(np.int32).itemsize
    assert sizes["int64_t"] == np.dtype(np.int64).itemsize
    assert sizes["uint64_t"] == np.dtype(np.uint64).itemsize


def test_missing_extension_gives_actionable_error():
    import pytest

    with pytest.raises(ImportError, match="pip install"):
        load("no_such_kernel")


# ------------------------------------------------------------------ shared indexed heap
@given(st.lists(st.integers(-2**62, 2**62), max_size=60), st.data(), st.booleans())
def test_shared_heap_pops_in_key_order_with_positions_kept(keys, data, records):
    # _heap.pxd serves _mcf (key and position in one record) and _netsimplex/_rectlr_core
    # (separate arrays); both layouts against sorting, with every position re-checked
    n = len(keys)
    lower = data.draw(st.lists(st.integers(-2**62, 2**62), min_size=n, max_size=n))
    keys_a = np.array(keys, dtype=np.int64)
    lower_a = np.array(lower, dtype=np.int64)
    order, popped, consistent = load("_types_check").heap_run(keys_a, lower_a, records)
    final = np.minimum(keys_a, lower_a)
    assert consistent
    assert sorted(order.tolist()) == list(range(n))
    assert popped.tolist() == sorted(final.tolist())
    assert (final[order] == popped).all()


# ------------------------------------------------------------------ kernel constants
# every kernel that declares an enum (found in the sources, so a new kernel is checked too)
_EXT = Path(__file__).resolve().parents[1] / "src" / "_ext"
KERNELS = tuple(sorted(p.stem for p in _EXT.rglob("*.pyx")
                       if any("cdef enum" in f.read_text() for f in (p, p.with_suffix(".pxd")) if f.exists())))


def test_every_kernel_exports_its_enums_as_distinct_ints_per_family():
    for name in KERNELS:
        consts = load(name).CONSTANTS
        assert consts and all(type(v) is int for v in consts.values()), name
        # names sharing a prefix form one enum: their values must differ
        families = {}
        for key, value in consts.items():
            families.setdefault(key.split("_")[0], {}).setdefault(value, []).append(key)
        for prefix, by_value in families.items():
            clash = [keys for keys in by_value.values() if len(keys) > 1]
            assert not clash, (name, prefix, clash)


def test_event_engine_reads_the_calendar_kernel_constants():
    from spare_core.events import _engine

    c = load("_calendar").CONSTANTS
    assert (_engine._ST_STOP, _engine._ST_UNTIL, _engine._ST_EMPTY, _engine._ST_MAX) == (
        c["ST_STOP"], c["ST_UNTIL"], c["ST_EMPTY"], c["ST_MAX"])
    assert (_engine._ST_NEED_LIFE, _engine._ST_NEED_REPAIR, _engine._ST_NEED_SYS, _engine._ST_NEED_VICTIM) == (
        c["ST_NEED_LIFE"], c["ST_NEED_REPAIR"], c["ST_NEED_SYS"], c["ST_NEED_VICTIM"])
    assert _engine._ST_STALL == c["ST_STALL"]
    assert (_engine._REPAIR_NONE, _engine._REPAIR_FIXED, _engine._REPAIR_SAMPLED) == (
        c["REPAIR_NONE"], c["REPAIR_FIXED"], c["REPAIR_SAMPLED"])
    # KINDS is indexed by the kernel's event codes (Event.kind = KINDS[code])
    names = {"failure": "EV_FAILURE", "repair": "EV_REPAIR", "system-failure": "EV_SYSTEM",
             "trace-failure": "EV_TRACE", "timer": "EV_TIMER"}
    assert {kind: _engine.KINDS.index(kind) for kind in names} == {k: c[v] for k, v in names.items()}
    # the unit limit leaves room for the system source, the trace and 1024 timers in a slot id
    assert _engine._MAX_UNITS + 2 + 1024 == 2 ** c["SLOT_BITS"]


def test_rectlr_reads_the_kernel_kinds_and_decision_slots():
    from spare_core.strategies.spare import rectlr

    c = load("_rectlr_core").CONSTANTS
    assert [rectlr.KINDS.index(k) for k in ("fixed", "reordered", "wipeout")] == [
        c["K_FIXED"], c["K_REORDERED"], c["K_WIPEOUT"]]
    assert (rectlr._WIPEOUT, rectlr._PENDING) == (c["K_WIPEOUT"], c["K_PENDING"])
    slots = (rectlr._KIND, rectlr._S_OLD, rectlr._MOVES, rectlr._COST, rectlr._N_PATCH, rectlr._LAYERS,
             rectlr._S_AFTER)
    assert slots == tuple(c[k] for k in ("OUT_KIND", "OUT_S_OLD", "OUT_MOVES", "OUT_COST", "OUT_N_PATCH",
                                         "OUT_LAYERS", "OUT_S_AFTER"))
    assert sorted(slots) == list(range(c["N_OUT"]))


def test_flow_and_matching_read_the_kernel_codes():
    from spare_core.graph import flow, matching

    m, s = load("_mcf").CONSTANTS, load("_netsimplex").CONSTANTS
    assert (flow._SSP, flow._SCALING, flow._MAXFLOW) == (m["M_SSP"], m["M_COST_SCALING"], m["M_MAX_FLOW"])
    assert flow._SIMPLEX not in (m["M_SSP"], m["M_COST_SCALING"], m["M_MAX_FLOW"])
    assert (flow._NS_OK, flow._NS_INFEASIBLE) == (s["NS_OK"], s["NS_INFEASIBLE"])
    h = load("_hk").CONSTANTS
    assert (matching._START, matching._START_WARM) == (h["START_DEGREE_ORDER"], h["START_GREEDY"])

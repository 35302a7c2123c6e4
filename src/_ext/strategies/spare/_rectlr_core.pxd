# RECTLR kernel (_rectlr_core.pyx): what other Cython code may cimport.
#
# setup.py names the module spare_core._ext._rectlr_core, under which Cython does not find this
# file as the module's own .pxd, so the RectlrCore class (state layout documented in
# _rectlr_core.pyx) cannot be cimported; Cython callers drive it through its Python methods.
# The decision kinds and the layout of the ``out`` row the kernel writes are shared here;
# Python callers read the same numbers from the module's CONSTANTS.

cdef enum:
    K_FIXED = 0        # Phase 0 sufficed: nothing moved, S unchanged
    K_REORDERED = 1    # S raised and/or shards swapped into a top S
    K_WIPEOUT = 2      # some shard type lost all its holders
    K_PENDING = 3      # phase0() left uncovered types for finish(S*)
    K_REJOINED = 4     # events(): a dead group is back (S recomputed for the groups still down)

# Slots of one decision row ``out`` (int64): fail() and phase0() + finish() write the
# first N_OUT - 1, fail_many() all N_OUT (the caller sets OUT_S_AFTER after fail()).
cdef enum:
    OUT_KIND = 0       # K_* above
    OUT_S_OLD = 1      # stack depth S before the failure
    OUT_MOVES = 2      # shards swapped into a top S
    OUT_COST = 3       # total cost of the reordering
    OUT_N_PATCH = 4    # patch rows written to pg/pt/px
    OUT_LAYERS = 5     # layers the patch adds
    OUT_S_AFTER = 6    # stack depth S after the failure
    N_OUT = 7

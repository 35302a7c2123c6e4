# RECTLR kernel (_rectlr_core.pyx): what other Cython code may cimport.
#
# setup.py names the module spare_core._ext._rectlr_core, under which Cython does not find this
# file as the module's own .pxd, so the RectlrCore class (state layout documented in
# _rectlr_core.pyx) cannot be cimported; Cython callers drive it through its Python methods.
# The decision kinds written to out[0] by the kernel are shared here.

cdef enum:
    K_FIXED = 0        # Phase 0 sufficed: nothing moved, S unchanged
    K_REORDERED = 1    # S raised and/or shards swapped into a top S
    K_WIPEOUT = 2      # some shard type lost all its holders
    K_PENDING = 3      # phase0() left uncovered types for finish(S*)

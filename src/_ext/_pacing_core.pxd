# Pacing iteration kernel (src/_ext/_pacing_core.pyx): what other Cython code may rely on.
#
# Only types live here (cimporting them creates no runtime import). setup.py names the
# module spare_core._ext._pacing_core, under which Cython does not find this file as the
# module's own .pxd, so the cdef kernel (_run) and incast_penalty are not exported as a
# C-API; Cython and Python callers go through spare_core._ext._pacing_core.simulate_chunk, whose
# buffers are documented in the module docstring:
#
#   base        float64[p]       IN      nominal compute per rank (s), > 0
#   z           float32[c, p]    IN      standard normals (jitter), one row per iteration
#   picks       uint32[c, g, F]  IN      ECMP spine of each cross-leaf flow, < n_spines
#   busy        uint8[c, L]      IN      1 when competing traffic holds the leaf's shared
#                                        buffer (incast headroom buffer, else buffer_idle)
#   flow_*      intp[F]          IN      source node, source leaf, destination leaf
#   rail_*      float64[g]       IN      latency, bandwidth (contention 1), NVLink floor
#   ep_*        [E]              IN      episodes sorted by start iteration
#   ep_until    int64[p]         IN-OUT  episode active while iteration < ep_until
#   ep_fac      float64[p]       IN-OUT  factor of the active episode
#   eff         float64[p]       IN-OUT  base times the active factor (base when none)
#   active      intp[p]          IN-OUT  ranks with an active episode, active[:state[3]]
#   state       int64[4]         IN-OUT  episode pointer, pacing on (0/1), calm count,
#                                        number of active episodes
#   bstate      float64[3]       IN-OUT  mode 3 (baseline pacer): baseline of the collective
#                                        phase (NaN: none yet), current patience, iterations
#                                        since switching off (-1: not probing)
from _types cimport intp_t, float64_t, int64_t

# Scratch of one call (allocated once by the wrapper):
#   node_ent/parked float64[n_nodes], flow_pk float64[F],
#   links float64[6 * n_leaves * n_spines]  (count, bytes, largest burst) per uplink then
#   downlink, zero on entry and restored to zero after each rail by a sequential scan.

# Pacing iteration kernel (src/_ext/_pacing_core.pyx): what other Cython code may rely on.
#
# Only types live here (cimporting them creates no runtime import). setup.py names the
# module spare_core._ext._pacing_core, under which Cython does not find this file as the
# module's own .pxd, so the cdef kernel (_run), incast_penalty and LinkTable's C fields are
# not exported as a C-API; Cython and Python callers build a LinkTable and go through
# spare_core._ext._pacing_core.simulate_chunk, whose buffers are documented in the module
# docstring. Exported Python constants: MODE_NONE, MODE_SPREAD, MODE_HOLDS, MODE_BASELINE,
# MODES, NO_LINK.
#
#   base        float64[p]       IN      nominal compute per rank (s), > 0
#   z           float32[c, p]    IN      standard normals (jitter), one row per iteration
#   picks       uint32[c, g, F]  IN      ECMP path of each inter-node flow, < links.n_paths
#   busy        uint8[c, D]      IN      1 when competing traffic holds buffer domain d's shared
#                                        buffer (incast headroom buffer, else buffer_idle)
#   links       LinkTable        IN      validated copy of the fabric's link incidence:
#                 flow_src    intp[F]      source node of each flow
#                 hops        intp[g, F, H] start of hop h's n_paths candidates, or NO_LINK
#                                          (a 2-d [F, H] input is stored once for every rail)
#                 path_links  intp[M]      plane-local link per candidate, NO_LINK = path skips
#                                          the hop (absent: identity, link = start + path)
#                 rail_plane  intp[g]      plane of each rail (rails of a plane share links)
#                 link_domain intp[n_planes * plane_links]  buffer domain of each link
#   rail_*      float64[g]       IN      latency, bandwidth (contention 1), NVLink floor
#   ep_*        [E]              IN      episodes sorted by start iteration
#   ep_until    int64[p]         IN-OUT  episode active while iteration < ep_until
#   ep_fac      float64[p]       IN-OUT  factor of the active episode
#   eff         float64[p]       IN-OUT  base times the active factor (base when none)
#   active      intp[p]          IN-OUT  ranks with an active episode, active[:state[3]]
#   state       int64[4]         IN-OUT  episode pointer, pacing on (0/1), calm count,
#                                        number of active episodes
#   bstate      float64[3]       IN-OUT  MODE_BASELINE: baseline of the collective phase (NaN:
#                                        none yet), current patience, iterations since
#                                        switching off (-1: not probing)
from _types cimport intp_t, float64_t, int64_t

# Scratch of one call (allocated once by the wrapper):
#   node_ent/parked float64[n_nodes], flow_pk float64[F],
#   links float64[3 * plane_links]  (count, bytes, largest burst) per link of one plane, zero
#   on entry and restored to zero after each plane (a sequential scan).

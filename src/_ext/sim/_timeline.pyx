# cython: language_level=3
"""Time-to-train kernel: advance a training run through a batch of failures.

The Python layer (``spare_core.sim``) pulls failures from the event engine, asks the policy
what each failure does (masked with a new stack depth, or a global restart), and hands the
batch to :func:`advance`, which walks the run's steps, checkpoints and restarts in C.
Kernels hold no policy: everything a policy decides arrives as per-failure arrays.

Run model (documented for users in ``spare_core.sim``)
------------------------------------------------------
* The run is a sequence of *activities*: steps (duration ``m_i * (S * t_comp + t_ar)``, with
  ``m_i`` the i-th per-attempt multiplier and ``S`` the current stack depth) and checkpoint
  saves (``save_time``). A save starts after the first step that ends at least
  ``interval`` seconds after the last checkpoint (or the resume after a restart).
* A failure at time ``f`` strictly inside an activity either
  - is masked: the activity is extended by ``fail_seconds + patch_seconds * patch``
    (shrink, controller, patch work), a step's layer count grows by
    ``patch_layers * patch``, and later steps use the new depth; or
  - causes a restart: work since the last committed checkpoint (and the activity in
    progress) is lost, the run resumes at ``f + restart_time`` with depth ``initial_depth``.
  A failure exactly at the end of an activity happens after it (ties favour completion).
* Other event kinds (strategies beyond the SPARe paper's): ``F_RESTART_MEMORY`` rolls back
  only to the last in-memory snapshot and resumes after ``memory_restore``; a restart resumes
  no earlier than the event's ``ready`` time (replacements in place); ``F_DROP`` (elastic
  training) loses the activity in progress and redoes it after a pause of ``drop_pause``
  (an activity of its own: a drop during it starts it again); ``F_REJOIN``
  extends the activity by ``rejoin_pause`` and switches later steps to the new depth;
  ``F_QUIET_JOIN`` is a rejoin whose reconfiguration an earlier change of its instant already
  pays (the policy's choice, elastic training's ``rendezvous = "per_instant"``): the new
  depth, no pause. An
  in-memory snapshot (``memory_save``) follows a step ending ``memory_every`` after the last
  snapshot or save when no persistent save is due; a persistent save is also a snapshot. A
  completed step credits the ``worth`` in force when it started (1 unless an event set it).
* Wall times are doubles built one way, which the reference simulator
  (``spare_core.sim._reference``) repeats operation for operation: failure ``j`` is at
  ``t_offset + frel[j]`` (one rounding; the epoch caches hold offsets drawn from the epoch
  start), a resume at ``failure + restart_time``, a step's end at ``start + m * (S * t_comp +
  t_ar)``, and a save is due when ``end - t_last >= interval`` on those doubles (an exact tie
  saves). docs/reliability.md (*Determinism*) says why exact ties need this.
* Asynchronous saves (``drain > 0``): a save blocks for ``save_time`` (the copy to host
  memory), then drains to storage in the background for ``drain`` seconds and becomes the
  persistent checkpoint only once drained (it is counted then). Until then its steps are held
  as pending: a restart from the persistent checkpoint during the drain loses them with the
  rest (the previous save is what it falls back to), a restart from memory keeps them as
  memory-held work and ends the drain; a masked failure, a drop or a rejoin lets it go on. A
  save due while the previous one drains waits for it (save time). ``drain = 0`` is the
  blocking save, unchanged.
* Detection (``fdetect``, failure classes): an event's fault is noticed ``detect`` seconds
  after it happens, lost whatever the event does: a restart resumes at ``(f + detect) +
  restart_time`` (the detection counts as restart time), a masked failure extends the
  activity by ``detect`` before its own seconds, a drop's pause starts ``detect`` later (pause
  time). ``ST_DETECT_TOTAL`` adds up the detection of every consumed event (a memo inside
  those totals, not a part of the partition). No ``fdetect``: 0 s, the arithmetic of before.
* Training ends when ``n_steps`` steps are completed and kept (no final save); the last step
  covers only what remains (the kept steps are then exactly ``n_steps``).
* The run stops at ``max_wall``: an activity still under way there (a step that failures keep
  extending, a pause that drops keep restarting, a restart or its wait) is cut at it, no
  failure after it is consumed (TIMEOUT), and the work not saved by then is lost.
* The time totals partition the wall time: useful (steps kept), lost (steps and activities
  rolled back or cut), saves, snapshots, restarts, waits and pauses. A rejoin pause that
  extends an activity is pause time, not the activity's (``ST_ACT_PAUSE`` books it; the pause
  runs from the rejoin, after any pause under way, to ``ST_PAUSE_END``; a cut takes back the
  part after the cut).

State vector (IN-OUT ``state``, float64; counts are exact integers below 2**53)
------------------------------------------------------------------------------
See the ``ST_*`` constants. ``ACT_KIND`` is PENDING when a step must start at ``ACT_END``.

Status codes returned: NEED_FAILURES (all failures given were consumed and the activity in
progress ends after ``t_next``), DONE, RESTARTED (the last consumed failure restarted the
run; the caller restarts its failure source and policy), NEED_MULT (the multiplier buffer is
exhausted at a step boundary), TIMEOUT (the next event lies beyond ``max_wall``),
FAILURE_BEFORE_NOW (raised as a ValueError by ``advance``), BAD_OUTCOME (the policy's answer
for failure ``j`` has a depth that is not a finite number >= 1, patch layers that are not a
finite number >= 0, or a restart before the batch's last entry: the caller reports it).
A failure before the activity it would interrupt (time running backwards) stops the scan
(FAILURE_BEFORE_NOW) and :func:`advance` raises ``ValueError``.
"""
from _types cimport intp_t, float64_t, int8_t, int64_t
from libc.stdint cimport uint8_t
from libc.float cimport DBL_MAX
from libc.math cimport INFINITY, fabs

import numpy as np

# activity kinds
cdef enum:
    K_STEP = 0
    K_SAVE = 1
    K_PENDING = 2
    K_MSAVE = 3
    K_PAUSE = 4

# failure kinds (``fkind``): what the policy (and the run loop) decided for an event
cdef enum:
    F_MASK = 0
    F_RESTART = 1
    F_RESTART_MEMORY = 2
    F_REJOIN = 3
    F_DROP = 4
    F_QUIET_JOIN = 5

# state slots, parameter slots and status codes
cdef enum:
    ST_ACT_START = 0
    ST_ACT_END = 1
    ST_ACT_KIND = 2
    ST_ACT_LAYERS = 3
    ST_DEPTH = 4
    ST_DONE_UNC = 5
    ST_COMMITTED = 6
    ST_T_LAST = 7
    ST_WORK_UNC = 8
    ST_LAYERS_UNC = 9
    ST_USEFUL = 10
    ST_LAYERS_USEFUL = 11
    ST_N_CKPT = 12
    ST_MULT_IDX = 13
    ST_LOST = 14
    ST_SAVE_TOTAL = 15
    ST_RESTART_TOTAL = 16
    ST_STEPS_EXEC = 17
    ST_FINISH = 18
    ST_WORTH = 19
    ST_T_MEM = 20
    ST_DONE_MEM = 21
    ST_WORK_MEM = 22
    ST_LAYERS_MEM = 23
    ST_N_MEM = 24
    ST_MEM_TOTAL = 25
    ST_WAIT_TOTAL = 26
    ST_PAUSE_TOTAL = 27
    ST_N_MEM_RESTORE = 28
    ST_RESUME_KIND = 29
    ST_ACT_WORTH = 30
    ST_ACT_PAUSE = 31
    ST_PAUSE_END = 32
    ST_WAIT_LAST = 33
    ST_DRAIN_END = 34
    ST_PEND_DONE = 35
    ST_PEND_WORK = 36
    ST_PEND_LAYERS = 37
    ST_DETECT_TOTAL = 38
    N_STATE = 39
    P_T_COMP = 0
    P_T_AR = 1
    P_SAVE = 2
    P_RESTART = 3
    P_INTERVAL = 4
    P_N_STEPS = 5
    P_INIT_DEPTH = 6
    P_MAX_WALL = 7
    P_FAIL_SECONDS = 8
    P_PATCH_SECONDS = 9
    P_PATCH_LAYERS = 10
    P_MEM_EVERY = 11
    P_MEM_SAVE = 12
    P_MEM_RESTORE = 13
    P_DROP_PAUSE = 14
    P_REJOIN_PAUSE = 15
    P_DRAIN = 16
    N_PARAMS = 17
    NEED_FAILURES = 0
    DONE = 1
    RESTARTED = 2
    NEED_MULT = 3
    TIMEOUT = 4
    FAILURE_BEFORE_NOW = 5
    BAD_OUTCOME = 6

# the same numbers for Python callers
SLOTS = {
    "ST_ACT_START": ST_ACT_START,
    "ST_ACT_END": ST_ACT_END,
    "ST_ACT_KIND": ST_ACT_KIND,
    "ST_ACT_LAYERS": ST_ACT_LAYERS,
    "ST_DEPTH": ST_DEPTH,
    "ST_DONE_UNC": ST_DONE_UNC,
    "ST_COMMITTED": ST_COMMITTED,
    "ST_T_LAST": ST_T_LAST,
    "ST_WORK_UNC": ST_WORK_UNC,
    "ST_LAYERS_UNC": ST_LAYERS_UNC,
    "ST_USEFUL": ST_USEFUL,
    "ST_LAYERS_USEFUL": ST_LAYERS_USEFUL,
    "ST_N_CKPT": ST_N_CKPT,
    "ST_MULT_IDX": ST_MULT_IDX,
    "ST_LOST": ST_LOST,
    "ST_SAVE_TOTAL": ST_SAVE_TOTAL,
    "ST_RESTART_TOTAL": ST_RESTART_TOTAL,
    "ST_STEPS_EXEC": ST_STEPS_EXEC,
    "ST_FINISH": ST_FINISH,
    "ST_WORTH": ST_WORTH,
    "ST_T_MEM": ST_T_MEM,
    "ST_DONE_MEM": ST_DONE_MEM,
    "ST_WORK_MEM": ST_WORK_MEM,
    "ST_LAYERS_MEM": ST_LAYERS_MEM,
    "ST_N_MEM": ST_N_MEM,
    "ST_MEM_TOTAL": ST_MEM_TOTAL,
    "ST_WAIT_TOTAL": ST_WAIT_TOTAL,
    "ST_PAUSE_TOTAL": ST_PAUSE_TOTAL,
    "ST_N_MEM_RESTORE": ST_N_MEM_RESTORE,
    "ST_RESUME_KIND": ST_RESUME_KIND,
    "ST_ACT_WORTH": ST_ACT_WORTH,
    "ST_ACT_PAUSE": ST_ACT_PAUSE,
    "ST_PAUSE_END": ST_PAUSE_END,
    "ST_WAIT_LAST": ST_WAIT_LAST,
    "ST_DRAIN_END": ST_DRAIN_END,
    "ST_PEND_DONE": ST_PEND_DONE,
    "ST_PEND_WORK": ST_PEND_WORK,
    "ST_PEND_LAYERS": ST_PEND_LAYERS,
    "ST_DETECT_TOTAL": ST_DETECT_TOTAL,
    "N_STATE": N_STATE,
    "P_T_COMP": P_T_COMP,
    "P_T_AR": P_T_AR,
    "P_SAVE": P_SAVE,
    "P_RESTART": P_RESTART,
    "P_INTERVAL": P_INTERVAL,
    "P_N_STEPS": P_N_STEPS,
    "P_INIT_DEPTH": P_INIT_DEPTH,
    "P_MAX_WALL": P_MAX_WALL,
    "P_FAIL_SECONDS": P_FAIL_SECONDS,
    "P_PATCH_SECONDS": P_PATCH_SECONDS,
    "P_PATCH_LAYERS": P_PATCH_LAYERS,
    "P_MEM_EVERY": P_MEM_EVERY,
    "P_MEM_SAVE": P_MEM_SAVE,
    "P_MEM_RESTORE": P_MEM_RESTORE,
    "P_DROP_PAUSE": P_DROP_PAUSE,
    "P_REJOIN_PAUSE": P_REJOIN_PAUSE,
    "P_DRAIN": P_DRAIN,
    "F_MASK": F_MASK,
    "F_RESTART": F_RESTART,
    "F_RESTART_MEMORY": F_RESTART_MEMORY,
    "F_REJOIN": F_REJOIN,
    "F_DROP": F_DROP,
    "F_QUIET_JOIN": F_QUIET_JOIN,
    "N_PARAMS": N_PARAMS,
    "NEED_FAILURES": NEED_FAILURES,
    "DONE": DONE,
    "RESTARTED": RESTARTED,
    "NEED_MULT": NEED_MULT,
    "TIMEOUT": TIMEOUT,
    "FAILURE_BEFORE_NOW": FAILURE_BEFORE_NOW,
    "BAD_OUTCOME": BAD_OUTCOME,
}


# Every enum of this kernel (the SLOTS above plus the activity kinds), under the name all
# kernels use.
CONSTANTS = dict(SLOTS, K_STEP=K_STEP, K_SAVE=K_SAVE, K_PENDING=K_PENDING, K_MSAVE=K_MSAVE, K_PAUSE=K_PAUSE)

cdef inline void _commit(float64_t* st) noexcept nogil:
    # a persistent save: the steps since the last save (those held only by the memory tier
    # too) become part of the trained model
    st[ST_COMMITTED] += st[ST_DONE_MEM] + st[ST_DONE_UNC]
    st[ST_USEFUL] += st[ST_WORK_MEM] + st[ST_WORK_UNC]
    st[ST_LAYERS_USEFUL] += st[ST_LAYERS_MEM] + st[ST_LAYERS_UNC]
    st[ST_DONE_MEM] = 0.0
    st[ST_WORK_MEM] = 0.0
    st[ST_LAYERS_MEM] = 0.0
    st[ST_DONE_UNC] = 0.0
    st[ST_WORK_UNC] = 0.0
    st[ST_LAYERS_UNC] = 0.0


cdef inline void _land(float64_t* st) noexcept nogil:
    # an asynchronous save has drained: its steps become part of the trained model
    st[ST_COMMITTED] += st[ST_PEND_DONE]
    st[ST_USEFUL] += st[ST_PEND_WORK]
    st[ST_LAYERS_USEFUL] += st[ST_PEND_LAYERS]
    st[ST_N_CKPT] += 1.0
    st[ST_PEND_DONE] = 0.0
    st[ST_PEND_WORK] = 0.0
    st[ST_PEND_LAYERS] = 0.0
    st[ST_DRAIN_END] = INFINITY


cdef inline void _unpend(float64_t* st) noexcept nogil:
    # a restart from memory ends the drain: the save's steps are held in memory only
    st[ST_DONE_MEM] += st[ST_PEND_DONE]
    st[ST_WORK_MEM] += st[ST_PEND_WORK]
    st[ST_LAYERS_MEM] += st[ST_PEND_LAYERS]
    st[ST_PEND_DONE] = 0.0
    st[ST_PEND_WORK] = 0.0
    st[ST_PEND_LAYERS] = 0.0
    st[ST_DRAIN_END] = INFINITY


cdef inline void _snapshot(float64_t* st) noexcept nogil:
    # an in-memory snapshot: the steps since the last snapshot survive a restart that finds
    # a copy, not one that falls back to the persistent checkpoint
    st[ST_DONE_MEM] += st[ST_DONE_UNC]
    st[ST_WORK_MEM] += st[ST_WORK_UNC]
    st[ST_LAYERS_MEM] += st[ST_LAYERS_UNC]
    st[ST_DONE_UNC] = 0.0
    st[ST_WORK_UNC] = 0.0
    st[ST_LAYERS_UNC] = 0.0


cdef inline float64_t _cut_pause(float64_t* st, float64_t act_pause, float64_t pause_end, float64_t x) noexcept nogil:
    # an activity that held rejoin pauses (``act_pause`` seconds booked, the last ending at
    # ``pause_end``) is cut at ``x``: the part of a pause after ``x`` did not happen; returns
    # the pause seconds that did elapse (the rest of the elapsed time is the activity's own)
    cdef float64_t gone = pause_end - x
    if gone > 0.0:
        st[ST_PAUSE_TOTAL] -= gone
        return act_pause - gone
    return act_pause


cdef inline void _close_at_wall(float64_t* st, int kind, float64_t act_start, float64_t act_end,
                                float64_t act_pause, float64_t pause_end, float64_t max_wall) noexcept nogil:
    # the run stops at the wall limit: every time total ends there (they partition the wall
    # time), the activity in progress is cut at it and the work not saved by then (since the
    # last persistent checkpoint, the memory tier's included) is lost with the job
    cdef float64_t over, w
    if kind == K_PENDING:
        # only a restart (and its wait for replacements) can end past the limit before a step
        over = act_end - max_wall
        if over > 0.0:
            w = st[ST_WAIT_LAST] if st[ST_WAIT_LAST] < over else over
            st[ST_WAIT_TOTAL] -= w
            st[ST_RESTART_TOTAL] -= over - w
    elif kind == K_PAUSE:
        st[ST_PAUSE_TOTAL] -= act_end - max_wall
    else:
        st[ST_LOST] += (max_wall - act_start) - _cut_pause(st, act_pause, pause_end, max_wall)
    if st[ST_DRAIN_END] <= max_wall:
        _land(st)  # drained before the limit: kept
    st[ST_LOST] += st[ST_WORK_UNC] + st[ST_WORK_MEM] + st[ST_PEND_WORK]
    st[ST_PEND_DONE] = 0.0
    st[ST_PEND_WORK] = 0.0
    st[ST_PEND_LAYERS] = 0.0
    st[ST_DRAIN_END] = INFINITY
    st[ST_DONE_MEM] = 0.0
    st[ST_WORK_MEM] = 0.0
    st[ST_LAYERS_MEM] = 0.0
    st[ST_DONE_UNC] = 0.0
    st[ST_WORK_UNC] = 0.0
    st[ST_LAYERS_UNC] = 0.0


cdef int _advance(
    float64_t* st,                     # IN-OUT state, N_STATE slots
    const float64_t* par,              # IN parameters, N_PARAMS slots
    const float64_t* frel,             # IN event times minus t_offset, ascending, length nf
    float64_t t_offset,                # IN start of the failures' epoch
    const int8_t* fkind,               # IN F_MASK, F_RESTART, F_RESTART_MEMORY, F_REJOIN, F_DROP, F_QUIET_JOIN
    const float64_t* fdepth,           # IN stack depth after the event
    const float64_t* fpatch,           # IN patch layers of a masked failure
    const float64_t* fworth,           # IN steps credited per step after the event, or NULL (unchanged)
    const float64_t* fready,           # IN earliest resume after a restart at the event, or NULL (none)
    const float64_t* fdetect,          # IN seconds from the event's fault to its detection, or NULL (0)
    intp_t nf,
    intp_t* j_io,                      # IN-OUT next failure to consume
    float64_t t_next,                  # IN no unlisted failure before this time
    const float64_t* mult,             # IN per-attempt step multipliers
    intp_t n_mult,
) noexcept nogil:
    cdef intp_t j = j_io[0]
    cdef intp_t midx = <intp_t>st[ST_MULT_IDX]
    cdef int kind = <int>st[ST_ACT_KIND]
    cdef int fk
    cdef float64_t t_comp = par[P_T_COMP], t_ar = par[P_T_AR]
    cdef float64_t save_time = par[P_SAVE], restart_time = par[P_RESTART]
    cdef float64_t interval = par[P_INTERVAL], n_steps = par[P_N_STEPS]
    cdef float64_t init_depth = par[P_INIT_DEPTH], max_wall = par[P_MAX_WALL]
    cdef float64_t fail_sec = par[P_FAIL_SECONDS], patch_sec = par[P_PATCH_SECONDS]
    cdef float64_t patch_lay = par[P_PATCH_LAYERS]
    cdef float64_t mem_every = par[P_MEM_EVERY], mem_save = par[P_MEM_SAVE]
    cdef float64_t mem_restore = par[P_MEM_RESTORE]
    cdef float64_t drop_pause = par[P_DROP_PAUSE], rejoin_pause = par[P_REJOIN_PAUSE]
    cdef float64_t drain = par[P_DRAIN]
    cdef float64_t act_start = st[ST_ACT_START], act_end = st[ST_ACT_END]
    cdef float64_t layers = st[ST_ACT_LAYERS], depth = st[ST_DEPTH], worth = st[ST_WORTH]
    cdef float64_t act_worth = st[ST_ACT_WORTH]
    cdef float64_t act_pause = st[ST_ACT_PAUSE], pause_end = st[ST_PAUSE_END]
    cdef float64_t f, resume, rt, own, det
    cdef int status
    while True:
        if kind == K_PENDING:
            if act_end > max_wall:
                status = TIMEOUT
                break
            if midx >= n_mult:
                status = NEED_MULT
                break
            act_start = act_end
            act_end = act_start + mult[midx] * (depth * t_comp + t_ar)
            midx += 1
            layers = depth
            # the groups computing the step are those of its start: a rejoin during it changes
            # the worth of the next step, as it changes the depth of the next step
            act_worth = worth
            act_pause = 0.0
            pause_end = -DBL_MAX
            kind = K_STEP
            continue
        if j < nf:
            f = t_offset + frel[j]
        else:
            f = t_next
            if act_end > t_next:
                # a failure past the wall limit is never simulated: the run stops there
                status = TIMEOUT if t_next > max_wall else NEED_FAILURES
                break
        if j < nf and f < act_end:
            if f > max_wall:
                # the activity in progress (a step that failures keep extending, a pause that
                # drops keep restarting) is still under way at the wall limit: the run stops there
                status = TIMEOUT
                break
            if st[ST_DRAIN_END] <= f:
                _land(st)  # the save drained before this event (a tie: drained first)
            if f < act_start:
                # a failure before the activity it would interrupt: time would run backwards
                # and the caller's loop could restart forever, so stop and report it
                status = FAILURE_BEFORE_NOW
                break
            fk = fkind[j]
            # the policy's answer for this event, whatever class produced it: a known kind, a
            # finite depth >= 1, finite patch layers >= 0 (NaN fails every comparison), a
            # step worth in (0, 1], a finite ready time, a restart only as the batch's last
            # entry; checked here, where it is read, at no cost
            if not (fdepth[j] >= 1.0 and fdepth[j] <= DBL_MAX and fpatch[j] >= 0.0 and fpatch[j] <= DBL_MAX) \
                    or fk < F_MASK or fk > F_QUIET_JOIN \
                    or ((fk == F_RESTART or fk == F_RESTART_MEMORY) and j != nf - 1) \
                    or (fworth != NULL and not (fworth[j] > 0.0 and fworth[j] <= 1.0)) \
                    or (fready != NULL and not (fready[j] >= -DBL_MAX and fready[j] <= DBL_MAX)) \
                    or (fdetect != NULL and not (fdetect[j] >= 0.0 and fdetect[j] <= DBL_MAX)):
                status = BAD_OUTCOME
                break
            # the fault is noticed ``det`` seconds after it happens (a hang: a collective's
            # timeout), lost whatever the event does: a restart starts then, a masked failure
            # or a drop stalls the job that long first
            det = fdetect[j] if fdetect != NULL else 0.0
            st[ST_DETECT_TOTAL] += det
            if fk == F_RESTART or fk == F_RESTART_MEMORY:
                if kind == K_PAUSE:
                    # the pause that was under way is over: not lost work
                    st[ST_PAUSE_TOTAL] -= act_end - f
                    own = 0.0
                else:
                    # the activity's own elapsed time (its rejoin pauses are pause time)
                    own = (f - act_start) - _cut_pause(st, act_pause, pause_end, f)
                if fk == F_RESTART:
                    # rollback to the last persistent checkpoint; the partial activity is lost as
                    # well, and a save still draining
                    st[ST_LOST] += st[ST_WORK_UNC] + st[ST_WORK_MEM] + st[ST_PEND_WORK] + own
                    st[ST_PEND_DONE] = 0.0
                    st[ST_PEND_WORK] = 0.0
                    st[ST_PEND_LAYERS] = 0.0
                    st[ST_DRAIN_END] = INFINITY
                    st[ST_DONE_MEM] = 0.0
                    st[ST_WORK_MEM] = 0.0
                    st[ST_LAYERS_MEM] = 0.0
                    rt = restart_time
                else:
                    # a copy of the last in-memory snapshot survived: only what follows it is lost
                    st[ST_LOST] += st[ST_WORK_UNC] + own
                    if st[ST_DRAIN_END] < INFINITY:
                        _unpend(st)
                    st[ST_N_MEM_RESTORE] += 1.0
                    rt = mem_restore
                st[ST_DONE_UNC] = 0.0
                st[ST_WORK_UNC] = 0.0
                st[ST_LAYERS_UNC] = 0.0
                resume = (f + det) + rt
                st[ST_RESTART_TOTAL] += det + rt
                st[ST_WAIT_LAST] = 0.0
                if fready != NULL and fready[j] > resume:
                    # the replacements are not all in place yet: the job waits for them
                    st[ST_WAIT_LAST] = fready[j] - resume
                    st[ST_WAIT_TOTAL] += fready[j] - resume
                    resume = fready[j]
                if fk == F_RESTART:
                    st[ST_T_LAST] = resume
                st[ST_T_MEM] = resume
                act_start = resume
                act_end = resume
                depth = init_depth
                worth = 1.0
                layers = 0.0
                kind = K_PENDING
                j += 1
                status = RESTARTED
                break
            if fk == F_DROP:
                # a membership change that loses the activity in progress: every group pauses
                # and then the activity is redone by the live groups (a step with a fresh
                # attempt); a drop during a pause starts the pause again
                if kind == K_PAUSE:
                    st[ST_PAUSE_TOTAL] -= act_end - f  # the rest of the pause did not happen
                else:
                    st[ST_LOST] += (f - act_start) - _cut_pause(st, act_pause, pause_end, f)
                    st[ST_RESUME_KIND] = kind
                st[ST_PAUSE_TOTAL] += det + drop_pause
                act_start = f
                act_end = (f + det) + drop_pause
                act_pause = 0.0
                pause_end = -DBL_MAX
                kind = K_PAUSE
            elif fk == F_QUIET_JOIN:
                pass  # the instant's reconfiguration is paid: the new depth below, no pause
            elif fk == F_REJOIN:
                # a group back: every group pauses at once (0 s unless the policy
                # reconfigures) and the activity in progress goes on after it; the new depth
                # applies from the next step. The pause is pause time, not the activity's:
                # a pause starting during another one follows it
                act_end += rejoin_pause
                st[ST_PAUSE_TOTAL] += rejoin_pause
                if kind != K_PAUSE:
                    act_pause += rejoin_pause
                    pause_end = (pause_end if pause_end > f else f) + rejoin_pause
            else:
                # shrink/controller seconds plus the patch work, charged to the activity in progress
                act_end += det + fail_sec + patch_sec * fpatch[j]
                if kind == K_STEP:
                    layers += patch_lay * fpatch[j]
                elif kind == K_PAUSE:
                    st[ST_PAUSE_TOTAL] += det + fail_sec + patch_sec * fpatch[j]  # a longer pause
            depth = fdepth[j]
            if fworth != NULL:
                worth = fworth[j]
            j += 1
            continue
        # the activity in progress completes before any known failure
        if act_end > max_wall:
            status = TIMEOUT
            break
        if st[ST_DRAIN_END] <= act_end:
            _land(st)
        if kind == K_STEP:
            st[ST_DONE_UNC] += act_worth
            st[ST_WORK_UNC] += (act_end - act_start) - act_pause
            st[ST_LAYERS_UNC] += layers
            st[ST_STEPS_EXEC] += 1.0
            if st[ST_COMMITTED] + st[ST_PEND_DONE] + st[ST_DONE_MEM] + st[ST_DONE_UNC] >= n_steps:
                # the job is done: a save still draining no longer matters (and is no checkpoint)
                st[ST_USEFUL] += st[ST_PEND_WORK]
                st[ST_LAYERS_USEFUL] += st[ST_PEND_LAYERS]
                st[ST_PEND_DONE] = 0.0
                st[ST_PEND_WORK] = 0.0
                st[ST_PEND_LAYERS] = 0.0
                st[ST_DRAIN_END] = INFINITY
                _commit(st)
                # the last step covers only the samples that remain (elastic "shrink" steps
                # count a fraction, which need not add up to the job): the job is done
                st[ST_COMMITTED] = n_steps
                st[ST_FINISH] = act_end
                status = DONE
                break
            act_start = act_end
            act_pause = 0.0
            pause_end = -DBL_MAX
            if act_end - st[ST_T_LAST] >= interval:
                # a save due while the previous one drains (landed above if it has drained) waits for it
                act_end = (act_end if st[ST_DRAIN_END] == INFINITY else st[ST_DRAIN_END]) + save_time
                kind = K_SAVE
            elif act_end - st[ST_T_MEM] >= mem_every:
                act_end = act_end + mem_save
                kind = K_MSAVE
            else:
                kind = K_PENDING
        elif kind == K_PAUSE:
            # the pause is over: the interrupted activity starts again
            kind = <int>st[ST_RESUME_KIND]
            act_start = act_end
            act_pause = 0.0
            pause_end = -DBL_MAX
            if kind == K_SAVE:
                act_end = (act_start if st[ST_DRAIN_END] == INFINITY else st[ST_DRAIN_END]) + save_time
            elif kind == K_MSAVE:
                act_end = act_start + mem_save
            else:
                kind = K_PENDING
        elif kind == K_SAVE:
            if drain > 0.0:
                # the host copy is taken: the save drains from now on and counts once drained
                _snapshot(st)
                st[ST_PEND_DONE] = st[ST_DONE_MEM]
                st[ST_PEND_WORK] = st[ST_WORK_MEM]
                st[ST_PEND_LAYERS] = st[ST_LAYERS_MEM]
                st[ST_DONE_MEM] = 0.0
                st[ST_WORK_MEM] = 0.0
                st[ST_LAYERS_MEM] = 0.0
                st[ST_DRAIN_END] = act_end + drain
            else:
                _commit(st)
                st[ST_N_CKPT] += 1.0
            st[ST_SAVE_TOTAL] += (act_end - act_start) - act_pause
            st[ST_T_LAST] = act_end
            st[ST_T_MEM] = act_end
            act_start = act_end
            kind = K_PENDING
        else:
            _snapshot(st)
            st[ST_N_MEM] += 1.0
            st[ST_MEM_TOTAL] += (act_end - act_start) - act_pause
            st[ST_T_MEM] = act_end
            act_start = act_end
            kind = K_PENDING
    st[ST_ACT_START] = act_start
    st[ST_ACT_END] = act_end
    st[ST_ACT_KIND] = kind
    st[ST_ACT_LAYERS] = layers
    st[ST_DEPTH] = depth
    st[ST_WORTH] = worth
    st[ST_ACT_WORTH] = act_worth
    st[ST_ACT_PAUSE] = act_pause
    st[ST_PAUSE_END] = pause_end
    st[ST_MULT_IDX] = midx
    if status == TIMEOUT:
        _close_at_wall(st, kind, act_start, act_end, act_pause, pause_end, max_wall)
    j_io[0] = j
    return status


def new_state(double initial_depth, double start_time=0.0):
    """A fresh run state: a step is pending at ``start_time`` with stack depth ``initial_depth``."""
    st = np.zeros(N_STATE, dtype=np.float64)
    st[ST_ACT_START] = start_time
    st[ST_ACT_END] = start_time
    st[ST_ACT_KIND] = K_PENDING
    st[ST_DEPTH] = initial_depth
    st[ST_T_LAST] = start_time
    st[ST_T_MEM] = start_time
    st[ST_WORTH] = 1.0
    st[ST_ACT_WORTH] = 1.0
    st[ST_PAUSE_END] = -DBL_MAX
    st[ST_DRAIN_END] = INFINITY
    return st


def advance(
    float64_t[::1] state,
    const float64_t[::1] params,
    const float64_t[::1] frel,
    float64_t t_offset,
    const int8_t[::1] fkind,
    const float64_t[::1] fdepth,
    const float64_t[::1] fpatch,
    intp_t start,
    float64_t t_next,
    const float64_t[::1] mult,
    const float64_t[::1] fworth=None,
    const float64_t[::1] fready=None,
    const float64_t[::1] fdetect=None,
):
    """Advance a run through failures ``start..`` of a batch; return ``(status, next_index)``.

    Parameters
    ----------
    state : float64[N_STATE], IN-OUT
        Run state from :func:`new_state`; updated in place.
    params : float64[N_PARAMS], IN
        ``t_comp, t_allreduce, save_time, restart_time, interval, n_steps, initial_depth,
        max_wall, fail_seconds, patch_seconds, patch_layers, memory_every, memory_save,
        memory_restore, drop_pause, rejoin_pause, drain``: a masked failure adds
        ``fail_seconds + patch_seconds * patch`` to the activity in progress and
        ``patch_layers * patch`` layers to a step in progress; ``memory_every = inf``
        takes no in-memory snapshot.
    frel : float64[nf], IN
        Failure times relative to ``t_offset`` (ascending, not before the state's current
        activity start).
    t_offset : float, IN
        Added to ``frel`` (the epoch start: the caches keep epoch-relative times).
    fkind, fdepth, fpatch : arrays of length nf, IN
        Kind (``F_MASK``, ``F_RESTART``, ``F_RESTART_MEMORY``, ``F_REJOIN``, ``F_DROP``, ``F_QUIET_JOIN``),
        depth after the event, patch layers of a masked failure.
    start : int, IN
        First failure of the batch to consume, ``0 <= start <= nf``.
    t_next : float, IN
        No failure outside the batch occurs before this time (``inf`` if none).
    mult : float64[n_mult], IN
        Step-duration multipliers, consumed from ``state[ST_MULT_IDX]``.
    fworth : float64[nf], IN, optional
        Steps credited per completed step after each event, in (0, 1] (elastic training that
        shrinks its batch); None keeps the state's worth.
    fready : float64[nf], IN, optional
        Earliest resume time after a restart at each event (replacement nodes in place);
        None: the restart time alone.
    fdetect : float64[nf], IN, optional
        Seconds from each event's fault to its detection (finite, >= 0): a restart resumes
        at ``(f + detect) + restart``, a masked failure extends the activity by ``detect``
        before its own seconds, a drop's pause starts ``detect`` later. None: 0 for every event.

    Returns
    -------
    (int, int)
        Status code and the index of the next unconsumed failure.

    Notes
    -----
    The caller (``spare_core.sim``) validates the model's inputs; this wrapper checks the
    lengths and indices (no read can go out of bounds) and a finite step count (the loop
    terminates). O(steps + failures) with the GIL released.
    """
    cdef intp_t nf = frel.shape[0]
    cdef intp_t j = start
    cdef int status
    if state.shape[0] != N_STATE or params.shape[0] != N_PARAMS:
        raise ValueError("state or params has the wrong length")
    if fkind.shape[0] != nf or fdepth.shape[0] != nf or fpatch.shape[0] != nf \
            or (fworth is not None and fworth.shape[0] != nf) or (fready is not None and fready.shape[0] != nf) \
            or (fdetect is not None and fdetect.shape[0] != nf):
        raise ValueError("failure arrays must have one length")
    if start < 0 or start > nf:
        raise ValueError(f"start must be in [0, {nf}], got {start}")
    if not (0 <= state[ST_MULT_IDX] <= mult.shape[0]):
        raise ValueError("state's multiplier index is outside the buffer")
    # every loop turn consumes a failure, starts a step or completes an activity, and the
    # steps are bounded by n_steps: a finite n_steps is what guarantees termination
    if not (1.0 <= params[P_N_STEPS] <= 9007199254740992.0):
        raise ValueError(f"params n_steps must be in [1, 2**53], got {params[P_N_STEPS]}")
    with nogil:
        status = _advance(
            &state[0], &params[0],
            &frel[0] if nf > 0 else NULL,
            t_offset,
            &fkind[0] if nf > 0 else NULL,
            &fdepth[0] if nf > 0 else NULL,
            &fpatch[0] if nf > 0 else NULL,
            &fworth[0] if nf > 0 and fworth is not None else NULL,
            &fready[0] if nf > 0 and fready is not None else NULL,
            &fdetect[0] if nf > 0 and fdetect is not None else NULL,
            nf, &j, t_next,
            &mult[0] if mult.shape[0] > 0 else NULL,
            mult.shape[0],
        )
    if status == FAILURE_BEFORE_NOW:
        raise ValueError(
            f"failure {j} at time {t_offset + frel[j]!r} is before the activity it interrupts "
            f"(started at {state[ST_ACT_START]!r}): failure times must be ascending and not "
            "before the run's current time")
    return status, j


# repair state slots (``rs``, float64)
cdef enum:
    R_SWAP = 0          # IN a spare is in the failed node's place this long after it is free
    R_REPAIR = 1        # IN a failed node is back in the spare pool this long after its failure
    R_REJOIN = 2        # IN a swapped group rejoins this long after its spare is in place
    R_N_SPARES = 3      # IN hot spares; -1: unlimited
    R_USED = 4          # IN-OUT failures that took a spare so far (the pool's counter)
    R_READY = 5         # IN-OUT latest replacement in place among this epoch's failures
    R_HEAD = 6          # IN-OUT first pending rejoin in the ring ``pend_*``
    R_COUNT = 7         # IN-OUT pending rejoins
    R_BASE = 8          # IN with drawn durations: the take index of the draw arrays' first row
    R_N_STANDBY = 9     # IN with drawn durations: warm standbys (0: none)
    R_STANDBY_SWAP = 10 # IN a warm standby is in a failed node's place this long after the failure
    R_HOST_SELECT = 11  # IN a node from the pool is selected and warmed this long after it is free
    R_RESTART_ALL = 12  # IN 1: a restart also waits for every warm standby to be refilled
                        # ([fleet] restart_when = "job+standbys"); 0: for the job's nodes only
    R_NEVER = 13        # IN a retired node's return time ([fleet] retire_after): past the run's
                        # wall limit (finite: a wait cut at the limit keeps its precision)
    N_REPAIR = 14

REPAIR_SLOTS = {
    "R_SWAP": R_SWAP, "R_REPAIR": R_REPAIR, "R_REJOIN": R_REJOIN, "R_N_SPARES": R_N_SPARES,
    "R_USED": R_USED, "R_READY": R_READY, "R_HEAD": R_HEAD, "R_COUNT": R_COUNT,
    "R_BASE": R_BASE, "R_N_STANDBY": R_N_STANDBY, "R_STANDBY_SWAP": R_STANDBY_SWAP,
    "R_HOST_SELECT": R_HOST_SELECT, "R_RESTART_ALL": R_RESTART_ALL, "R_NEVER": R_NEVER,
    "N_REPAIR": N_REPAIR,
}


# Drawn repair and swap durations (``spare_core.sim.recovery.RepairDraws``): row ``k - base``
# belongs to the pool's k-th take (``rs[R_USED]`` when it is taken). ``rep`` and ``swp`` are
# the take's repair and swap seconds, ``mis`` 1 when the node pulled is a healthy one (a wrong
# diagnosis); the kernel writes the slot it changed (-1: none) and its old value to
# ``slot`` / ``old`` so that ``RepairBook.restart`` can undo takes. ``sb`` holds the time each
# warm standby is ready (``rs[R_N_STANDBY]`` of them); a take records the standby it used (-1:
# none) and its old ready time in ``sb_slot`` / ``sb_old``. ``ret`` (NULL: not kept) gets the
# time a take's node retired ([fleet] retire_after: when it left the fleet, which prices what the
# fleet holds), -1 for a take whose node comes back.
cdef struct Draws:
    const float64_t* rep
    const float64_t* swp
    const int8_t* mis
    int64_t* slot
    float64_t* old
    float64_t* sb
    int64_t* sb_slot
    float64_t* sb_old
    float64_t* ret


cdef inline float64_t _take_spare(float64_t* rs, float64_t* pool, float64_t f, float64_t* pool_old,
                                  int retire) noexcept nogil:
    # The node failed at ``f`` takes the next spare (FIFO: the k-th failure takes an initial
    # spare if k < spares, else the node of failure k - spares once it is repaired); returns
    # when the replacement is in place and raises ``rs[R_READY]`` to it; ``pool_old`` gets the
    # pool slot's previous value (for undoing the failure). A retired node (``retire``: its
    # ``retire_after``-th failure) is never back: its pool slot holds inf, so the pool shrinks.
    cdef intp_t k = <intp_t>rs[R_USED], spares = <intp_t>rs[R_N_SPARES], slot
    cdef float64_t free = -DBL_MAX, in_place, back_at = f + rs[R_REPAIR]
    if retire:
        back_at = rs[R_NEVER]
    pool_old[0] = 0.0
    if spares >= 0:
        if spares == 0:
            free = back_at  # no pool: the failed node itself, once repaired
        else:
            slot = k % spares
            if k >= spares:
                free = pool[slot]
            pool_old[0] = pool[slot]
            pool[slot] = back_at
    rs[R_USED] = k + 1
    if free > f:
        in_place = free + rs[R_SWAP]
    else:
        in_place = f + rs[R_SWAP]
    if in_place > rs[R_READY]:
        rs[R_READY] = in_place
    return in_place


cdef inline float64_t _take_drawn(float64_t* rs, float64_t* pool, float64_t f, const Draws* d,
                                  int allow_wrong, int retire) noexcept nogil:
    # ``_take_spare`` with the take's own drawn durations. Repairs no longer end in failure
    # order, so the pool is a set of return times: the take gets a never-used spare while there
    # is one, else the node back first among the pool's and the failed node itself (its own
    # repair may end before any other: it then goes straight back in). With equal draws the
    # slot scanned first (k % spares) is the minimum, so this is ``_take_spare`` bit for bit.
    # A wrong diagnosis (``mis``, once per failure: ``allow_wrong``) pulled a healthy node; the
    # fault shows again when its replacement is in place, and the faulty node is pulled then:
    # a second take from that time. Warm standbys ([fleet]): a failure that finds one ready
    # (the one ready first) has it in place ``standby_swap`` after the failure, and the standby
    # is refilled by this take of the pool, ready ``host_select`` after the pool's node is free;
    # a failure that finds none takes the pool's node directly, in place ``host_select + swap``
    # after it is free. A retired node (``retire``) is never back (inf); after a wrong diagnosis
    # it is the faulty node of the second take that retires, the healthy one comes back. With ``rs[R_RESTART_ALL]`` (restart_when = "job+standbys") a refill
    # raises ``rs[R_READY]`` too: a restart resumes only once the job and every standby fit (a
    # standby refilled in an earlier epoch was ready by that epoch's resume, so the epoch's own
    # refills are all a restart can wait for). Returns when the last replacement is in place.
    cdef intp_t k = <intp_t>rs[R_USED], spares = <intp_t>rs[R_N_SPARES], slot = -1, i, c
    cdef intp_t row = k - <intp_t>rs[R_BASE], n_sb = <intp_t>rs[R_N_STANDBY], j = -1
    cdef float64_t free = -DBL_MAX, in_place, back_at = f + d.rep[row], m, hs = rs[R_HOST_SELECT]
    cdef int wrong = allow_wrong and d.mis[row] != 0
    if retire and not wrong:
        back_at = rs[R_NEVER]
    d.old[row] = 0.0
    d.sb_slot[row] = -1
    d.sb_old[row] = 0.0
    if d.ret != NULL:
        d.ret[row] = f if retire and not wrong else -1.0
    if n_sb > 0:
        j = 0
        for c in range(1, n_sb):
            if d.sb[c] < d.sb[j]:
                j = c
        if d.sb[j] > f:
            j = -1  # every standby is still being refilled: the pool directly
    if spares >= 0:
        if spares == 0:
            free = back_at  # no pool: the failed node itself, once repaired
        elif k < spares:
            slot = k  # a spare never used yet
        else:
            slot = k % spares
            m = pool[slot]
            i = slot
            for c in range(1, spares):
                i = i + 1 if i + 1 < spares else 0
                if pool[i] < m:
                    m = pool[i]
                    slot = i
            if back_at < m:
                free = back_at  # its own node is back before any in the pool
                slot = -1
            else:
                free = m
        if slot >= 0:
            d.old[row] = pool[slot]
            pool[slot] = back_at
    d.slot[row] = slot
    rs[R_USED] = k + 1
    if free <= f:
        free = f
    if j >= 0:
        d.sb_slot[row] = j
        d.sb_old[row] = d.sb[j]
        d.sb[j] = free + hs
        if rs[R_RESTART_ALL] != 0.0 and d.sb[j] > rs[R_READY]:
            rs[R_READY] = d.sb[j]
        in_place = f + rs[R_STANDBY_SWAP]
    elif hs != 0.0:
        in_place = free + hs + d.swp[row]
    else:
        in_place = free + d.swp[row]
    if in_place > rs[R_READY]:
        rs[R_READY] = in_place
    if wrong:
        return _take_drawn(rs, pool, in_place, d, 0, retire)
    return in_place


cdef intp_t _merge_repairs(
    float64_t* rs, float64_t* back, float64_t* pend_t, int64_t* pend_g, intp_t n,
    float64_t* pool, intp_t n_pool,
    const float64_t* raw_rel, const int64_t* raw_g, intp_t n_raw, float64_t t_offset,
    float64_t raw_next,
    float64_t* out_rel, int64_t* out_g, int8_t* out_rejoin, float64_t* out_ready,
    float64_t* out_pool_old, int64_t* out_raw, intp_t max_out, intp_t* raw_used, const Draws* d,
    const int8_t* raw_ret,
) noexcept nogil:
    # Merge a batch of raw failures (every failure of the log, in or out of the job) with the
    # pending rejoins: a failure of a group out of the job is dropped; a failure of a group in
    # it takes the next spare (FIFO: the k-th failure takes an initial spare if k < spares,
    # else the node of failure k - spares once it is repaired), which is in place
    # ``max(f, free) + swap`` later; the group rejoins ``rejoin`` after that. With constant
    # delays rejoins come in failure order; with drawn ones (``d``) they need not, so the ring
    # of pending rejoins is kept sorted by time (a new one goes after those at its time or
    # before: failure order among ties), which with constant delays never moves an entry.
    # With ``d`` an event's ``out_pool_old`` is the pool's take count after it (what
    # ``RepairBook.restart`` undoes to). ``raw_ret`` (NULL: none) marks the raw failures whose
    # node retires ([fleet] retire_after): it is never back in the pool. Returns the events
    # written; -1 on a group id out of range.
    cdef intp_t i = 0, m = 0, g, slot, prev, head = <intp_t>rs[R_HEAD], cnt = <intp_t>rs[R_COUNT]
    cdef float64_t f, in_place, pr
    cdef float64_t rej = rs[R_REJOIN]
    cdef intp_t c
    while m < max_out:
        if i < n_raw:
            f = t_offset + raw_rel[i]
        else:
            f = raw_next
        if cnt > 0 and pend_t[head] <= f:
            # a rejoin before the next failure (ties: the rejoin first)
            pr = pend_t[head]
            out_rel[m] = pr - t_offset
            out_g[m] = pend_g[head]
            out_rejoin[m] = 1
            out_ready[m] = rs[R_READY]
            out_pool_old[m] = 0.0
            out_raw[m] = i - 1
            m += 1
            head = head + 1 if head + 1 < n else 0
            cnt -= 1
            continue
        if i >= n_raw:
            break
        g = <intp_t>raw_g[i]
        if g < 0 or g >= n:
            raw_used[0] = i
            return -1
        i += 1
        if f < back[g]:
            continue  # the group is out of the job: its node's failure changes nothing
        if d == NULL:
            in_place = _take_spare(rs, pool, f, &out_pool_old[m], raw_ret != NULL and raw_ret[i - 1] != 0)
        else:
            in_place = _take_drawn(rs, pool, f, d, 1, raw_ret != NULL and raw_ret[i - 1] != 0)
            out_pool_old[m] = rs[R_USED]
        back[g] = in_place + rej
        slot = head + cnt
        if slot >= n:
            slot -= n
        # sorted insertion from the tail (at most n pending: one per group out)
        for c in range(cnt):
            prev = slot - 1 if slot > 0 else n - 1
            if pend_t[prev] <= back[g]:
                break
            pend_t[slot] = pend_t[prev]
            pend_g[slot] = pend_g[prev]
            slot = prev
        pend_t[slot] = back[g]
        pend_g[slot] = g
        cnt += 1
        out_rel[m] = raw_rel[i - 1]
        out_g[m] = g
        out_rejoin[m] = 0
        out_ready[m] = rs[R_READY]
        out_raw[m] = i - 1
        m += 1
    rs[R_HEAD] = head
    rs[R_COUNT] = cnt
    raw_used[0] = i
    return m


cdef int _keep_ret(Draws* dp, float64_t[::1] take_ret, int64_t[::1] take_slot) except -1:
    # ``take_ret`` (one row per take, as the draw arrays): where the takes write their
    # retirement times (``Draws.ret``); None keeps none
    if take_ret is None:
        return 0
    if dp == NULL or take_slot is None or take_ret.shape[0] != take_slot.shape[0]:
        raise ValueError("take_ret needs the draw arrays and their length")
    dp.ret = &take_ret[0]
    return 0


cdef Draws* _draws(float64_t[::1] rs, const float64_t[::1] rep, const float64_t[::1] swp, const int8_t[::1] mis,
                   int64_t[::1] slot, float64_t[::1] old, float64_t[::1] sb, int64_t[::1] sb_slot,
                   float64_t[::1] sb_old, Draws* out, intp_t takes) except? NULL:
    # the draw arrays as a ``Draws`` (NULL when none are given), checked to hold ``takes``
    # rows from the pool's next take on
    cdef intp_t n, row
    if rep is None and swp is None and mis is None and slot is None and old is None and sb is None \
            and sb_slot is None and sb_old is None:
        return NULL
    if rep is None or swp is None or mis is None or slot is None or old is None or sb is None \
            or sb_slot is None or sb_old is None:
        raise ValueError("draw_rep, draw_swap, draw_mis, take_slot, take_old, standby, standby_slot and "
                         "standby_old go together")
    n = rep.shape[0]
    if swp.shape[0] != n or mis.shape[0] != n or slot.shape[0] != n or old.shape[0] != n \
            or sb_slot.shape[0] != n or sb_old.shape[0] != n:
        raise ValueError("the draw arrays must have one length")
    if not (0 <= rs[R_N_STANDBY] <= sb.shape[0]) or sb.shape[0] < 1:
        raise ValueError("rs[R_N_STANDBY] must be in [0, len(standby)] and standby non-empty")
    row = <intp_t>rs[R_USED] - <intp_t>rs[R_BASE]
    if rs[R_BASE] < 0 or row < 0 or n - row < takes or n < 1:
        raise ValueError(f"the draw arrays (rows from take {rs[R_BASE]:g}, {n} long) do not cover {takes} takes "
                         f"from take {rs[R_USED]:g}")
    out.rep = &rep[0]
    out.swp = &swp[0]
    out.mis = &mis[0]
    out.slot = &slot[0]
    out.old = &old[0]
    out.sb = &sb[0]
    out.sb_slot = &sb_slot[0]
    out.sb_old = &sb_old[0]
    out.ret = NULL
    return out


def merge_repairs(float64_t[::1] rs, float64_t[::1] back, float64_t[::1] pend_t, int64_t[::1] pend_g,
                  float64_t[::1] pool, const float64_t[::1] raw_rel, const int64_t[::1] raw_g,
                  float64_t t_offset, float64_t raw_next,
                  float64_t[::1] out_rel, int64_t[::1] out_g, int8_t[::1] out_rejoin,
                  float64_t[::1] out_ready, float64_t[::1] out_pool_old, int64_t[::1] out_raw,
                  const float64_t[::1] draw_rep=None, const float64_t[::1] draw_swap=None,
                  const int8_t[::1] draw_mis=None, int64_t[::1] take_slot=None, float64_t[::1] take_old=None,
                  float64_t[::1] standby=None, int64_t[::1] standby_slot=None, float64_t[::1] standby_old=None,
                  const int8_t[::1] raw_ret=None, float64_t[::1] take_ret=None):
    """Merge raw failures with pending rejoins under a spare pool; see ``_merge_repairs``.

    Parameters
    ----------
    rs : float64[N_REPAIR], IN-OUT
        Repair parameters and counters (``REPAIR_SLOTS``).
    back : float64[N], IN-OUT
        Time each group is back in the job (a failure before it is dropped).
    pend_t, pend_g : float64[N], int64[N], IN-OUT
        Ring of pending rejoins (time, group), from ``rs[R_HEAD]``, ``rs[R_COUNT]`` long.
    pool : float64[max(spares, 1)], IN-OUT
        Ring of the pool's return times (failure ``k`` writes slot ``k % spares``).
    raw_rel, raw_g : float64[m], int64[m], IN
        Failures of the batch, times relative to ``t_offset``, ascending.
    raw_next : float, IN
        Absolute time of the first failure after the batch (``inf``: none known to follow);
        rejoins after it wait for the next batch.
    out_rel, out_g, out_rejoin, out_ready, out_pool_old, out_raw : arrays of one length, OUT
        The merged events (relative time, group, 1 for a rejoin, latest replacement in place
        so far in the epoch, the pool slot's previous value for undoing a failure, the last
        raw failure read when the event was written: -1 for none). With draws,
        ``out_pool_old`` is the pool's take count after a failure event instead.
    draw_rep, draw_swap, draw_mis, take_slot, take_old : arrays of one length, or all None
        Drawn durations per take from take ``rs[R_BASE]`` on (``_take_drawn``; IN) and the
        undo record of each take (OUT); they must cover two takes per failure of the batch.
    standby, standby_slot, standby_old : float64[max(standbys, 1)], int64[len], float64[len], or None
        With the draws: the warm standbys' ready times (IN-OUT) and each take's standby undo
        record (the standby it used, -1 for none, and its old ready time; OUT).
        None: the constant ``rs[R_REPAIR]`` and ``rs[R_SWAP]`` (``_take_spare``).
    raw_ret : int8[m], IN, optional
        1 for a raw failure whose node retires ([fleet] retire_after): never back in the pool.
    take_ret : float64[len(take_slot)], OUT, optional
        With the draws: each take's retirement time (when its node left the fleet), -1 for a
        take whose node comes back; the rows from ``rs[R_BASE]`` on, as ``take_slot``.

    Returns
    -------
    (int, int)
        Events written and raw failures consumed. O(m + events) with the GIL released.
    """
    cdef intp_t n = back.shape[0], m, used = 0
    cdef intp_t n_out = out_rel.shape[0]
    if rs.shape[0] != N_REPAIR:
        raise ValueError("rs has the wrong length")
    if pend_t.shape[0] != n or pend_g.shape[0] != n or n < 1:
        raise ValueError("back, pend_t and pend_g must have one length >= 1")
    if raw_g.shape[0] != raw_rel.shape[0]:
        raise ValueError("raw_rel and raw_g must have one length")
    if raw_ret is not None and raw_ret.shape[0] != raw_rel.shape[0]:
        raise ValueError("raw_ret must have raw_rel's length")
    if out_g.shape[0] != n_out or out_rejoin.shape[0] != n_out or out_ready.shape[0] != n_out \
            or out_pool_old.shape[0] != n_out or out_raw.shape[0] != n_out:
        raise ValueError("the output arrays must have one length")
    if not (-1 <= rs[R_N_SPARES] <= pool.shape[0]) or pool.shape[0] < 1:
        raise ValueError("rs[R_N_SPARES] must be in [-1, len(pool)] and pool non-empty")
    if not (0 <= rs[R_HEAD] < n and 0 <= rs[R_COUNT] <= n) or rs[R_USED] < 0:
        raise ValueError("repair counters out of range")
    cdef Draws dr
    cdef Draws* dp = _draws(rs, draw_rep, draw_swap, draw_mis, take_slot, take_old, standby, standby_slot,
                            standby_old, &dr, 2 * min(raw_rel.shape[0], n_out))
    _keep_ret(dp, take_ret, take_slot)
    with nogil:
        m = _merge_repairs(&rs[0], &back[0], &pend_t[0], &pend_g[0], n, &pool[0], pool.shape[0],
                           &raw_rel[0] if raw_rel.shape[0] else NULL,
                           &raw_g[0] if raw_g.shape[0] else NULL, raw_rel.shape[0], t_offset, raw_next,
                           &out_rel[0] if n_out else NULL, &out_g[0] if n_out else NULL,
                           &out_rejoin[0] if n_out else NULL, &out_ready[0] if n_out else NULL,
                           &out_pool_old[0] if n_out else NULL, &out_raw[0] if n_out else NULL, n_out, &used,
                           dp, &raw_ret[0] if raw_ret is not None and raw_ret.shape[0] else NULL)
    if m == -1:
        raise ValueError(f"raw_g must be in [0, {n})")
    return m, used


# ---- epochs of a run in which every failure restarts, on a node failure log -------------
# The batch loop of ``spare_core.sim.run`` makes one Python round trip per restart; a run whose
# every failure restarts (checkpoint-only, with or without repairs and the memory tier) is one
# restart after another, so its epochs are walked here instead, with the same arithmetic in
# the same order (bit for bit the Python loop's results, tested against it).

# registers of ``restart_epochs`` (``io``, float64), kept between calls
cdef enum:
    E_PHASE = 0        # what the next call does first (PH_FIND, PH_WALK, PH_EVENT, PH_END)
    E_START = 1        # start of the current epoch
    E_FREL = 2         # the epoch's failure, relative to E_START
    E_READY = 3        # earliest resume after its restart (replacement in place)
    E_KIND = 4         # F_RESTART or F_RESTART_MEMORY
    E_LOST = 5         # 1: a group failing at that instant loses every copy of its snapshot
    E_J = 6            # the kernel's event index within the epoch (0 or 1)
    E_NREC = 7         # epochs written to the record buffers
    E_EPOCH = 8        # the current epoch (restarts so far): its row of the class arrays is E_EPOCH - E_CLS_BASE
    E_CLS_BASE = 9     # the epoch of row 0 of the class arrays given
    E_DET = 10         # the epoch's failure: its detection seconds
    E_TOOK = 11        # 1: the epoch's failure took a spare (a node's fault)
    E_FORCED = 12      # 1: the epoch's failure is of a class no strategy masks
    E_NFORCED = 13     # restarts of failures of such classes so far
    E_CLOCK = 14       # 1: the log is on the job's compute clock (failures.clock = "compute")
    E_OFF = 15         # with it: the seconds the job has been down for restarts so far
    N_EPOCH_IO = 16
    PH_FIND = 0
    PH_WALK = 1
    PH_EVENT = 2
    PH_END = 3
    NEED_LOG = 7
    RECORDS_FULL = 8
    BAD_LOG = 9
    NEED_CLASSES = 10
    CL_FORCED = 1      # class flags: no strategy masks it
    CL_WIDE = 2        # job-wide: no node replaced, host memory kept

EPOCH_SLOTS = {
    "E_PHASE": E_PHASE, "E_START": E_START, "E_FREL": E_FREL, "E_READY": E_READY, "E_KIND": E_KIND,
    "E_LOST": E_LOST, "E_J": E_J, "E_NREC": E_NREC, "N_EPOCH_IO": N_EPOCH_IO, "PH_FIND": PH_FIND,
    "PH_WALK": PH_WALK, "PH_EVENT": PH_EVENT, "PH_END": PH_END, "NEED_LOG": NEED_LOG, "RECORDS_FULL": RECORDS_FULL,
    "BAD_LOG": BAD_LOG, "E_EPOCH": E_EPOCH, "E_CLS_BASE": E_CLS_BASE, "E_DET": E_DET, "E_TOOK": E_TOOK,
    "E_FORCED": E_FORCED, "E_NFORCED": E_NFORCED, "NEED_CLASSES": NEED_CLASSES, "CL_FORCED": CL_FORCED,
    "CL_WIDE": CL_WIDE, "E_CLOCK": E_CLOCK, "E_OFF": E_OFF,
}
CONSTANTS.update(EPOCH_SLOTS)


cdef int _restart_epochs(
    float64_t* st, const float64_t* par, float64_t* io,
    const float64_t* log_t, const int64_t* log_g, intp_t n_log, float64_t horizon,
    float64_t* rs, float64_t* pool, int use_repairs,
    const int64_t* holders, intp_t n_groups, intp_t n_copies, int use_memory, uint8_t* mark,
    const float64_t* mult, intp_t n_mult,
    float64_t* rec_end, float64_t* rec_start, intp_t n_rec,
    const int8_t* cls_flags, const float64_t* cls_det, intp_t n_cls, int use_classes, const Draws* d,
    const int8_t* log_r,
) noexcept nogil:
    cdef int phase = <int>io[E_PHASE], status
    cdef float64_t start = io[E_START], max_wall = par[P_MAX_WALL]
    cdef float64_t frel, pool_old, in_place, tr, det, took0, xs, x, sh
    cdef float64_t one_depth = 1.0, no_patch = 0.0
    cdef intp_t row
    cdef int8_t flags = 0
    cdef int8_t kind
    cdef intp_t lo, hi, mid, i, first, k, g, c
    cdef intp_t j
    cdef bint lost
    while True:
        if phase == PH_FIND:
            if <intp_t>io[E_NREC] >= n_rec:
                io[E_PHASE] = phase
                return RECORDS_FULL
            # the epoch's failure: the log's first row after its start (every group is in the
            # job at an epoch's start: the first failure of any group ends it). On the compute
            # clock the log's time is the job's computing time: the start less the time down
            # so far, a row one rounding from the restart's own failure counting as at it
            # (``_ComputeClock``'s arithmetic, the batch loop's)
            xs = start
            sh = 0.0
            if io[E_OFF] != 0.0:  # only ever set on the compute clock
                x = start - io[E_OFF]
                xs = x + 1e-9 * (fabs(x) if fabs(x) > 1.0 else 1.0)
                sh = xs - x
            lo, hi = 0, n_log
            while lo < hi:
                mid = (lo + hi) >> 1
                if log_t[mid] <= xs:
                    lo = mid + 1
                else:
                    hi = mid
            if lo >= n_log:
                if horizon + io[E_OFF] > max_wall:
                    phase = PH_END  # no failure before the wall limit: none matters
                    continue
                io[E_PHASE] = phase
                return NEED_LOG
            first = lo
            if use_classes:
                # the epoch's failure: its class (failure classes, ``ClassDraws.first``)
                row = <intp_t>(io[E_EPOCH] - io[E_CLS_BASE])
                if row < 0 or row >= n_cls:
                    io[E_PHASE] = phase
                    return NEED_CLASSES
                flags = cls_flags[row]
                io[E_DET] = cls_det[row]
                io[E_FORCED] = 1.0 if flags & CL_FORCED else 0.0
            frel = (log_t[first] - xs) + sh  # the sources' own arithmetic (sh 0 on the wall clock)
            # the failures at that very instant (a run restores from memory only if every group
            # among them keeps a copy on a group outside them)
            i = first + 1
            while i < n_log and (log_t[i] - xs) + sh == frel:
                i += 1
            lost = False
            if use_memory:
                for k in range(first, i):
                    if not (0 <= log_g[k] < n_groups):
                        io[E_PHASE] = phase
                        return BAD_LOG
                # a job-wide fault takes no node: its group keeps its host memory (its copies too)
                for k in range(first + 1 if flags & CL_WIDE else first, i):
                    mark[log_g[k]] = 1
                for k in range(first + 1 if flags & CL_WIDE else first, i):
                    g = log_g[k]
                    c = 0
                    while c < n_copies and mark[holders[g * n_copies + c]]:
                        c += 1
                    if c == n_copies:
                        lost = True
                for k in range(first, i):
                    mark[log_g[k]] = 0
            io[E_READY] = -DBL_MAX
            io[E_TOOK] = 0.0
            if use_repairs:
                if not (flags & CL_WIDE):
                    # the failed node takes the next spare (``_merge_repairs``'s rule for one
                    # failure); E_TOOK counts the takes (two when a healthy node is pulled first)
                    took0 = rs[R_USED]
                    if d == NULL:  # one failure: nothing to undo
                        _take_spare(rs, pool, start + frel, &pool_old, log_r != NULL and log_r[first] != 0)
                    else:
                        _take_drawn(rs, pool, start + frel, d, 1, log_r != NULL and log_r[first] != 0)
                    io[E_TOOK] = rs[R_USED] - took0
                io[E_READY] = rs[R_READY]
            io[E_FREL] = frel
            io[E_LOST] = 1.0 if lost else 0.0
            io[E_KIND] = F_RESTART
            io[E_J] = 0
            phase = PH_WALK if use_memory else PH_EVENT
        elif phase == PH_WALK:
            # up to the failure first: which snapshot the copies hold is the kernel's
            tr = start + io[E_FREL]
            j = 0
            status = _advance(st, par, NULL, start, NULL, NULL, NULL, NULL, NULL, NULL, 0, &j, tr, mult, n_mult)
            if status != NEED_FAILURES:
                io[E_PHASE] = phase
                return status
            if st[ST_T_MEM] > -INFINITY and io[E_LOST] == 0.0:  # a copy outlives the failure
                io[E_KIND] = F_RESTART_MEMORY
            phase = PH_EVENT
        elif phase == PH_EVENT:
            kind = <int8_t>io[E_KIND]
            frel = io[E_FREL]
            in_place = io[E_READY]
            det = io[E_DET]
            j = <intp_t>io[E_J]
            status = _advance(st, par, &frel, start, &kind, &one_depth, &no_patch, NULL,
                              &in_place if use_repairs else NULL, &det if use_classes else NULL, 1, &j, INFINITY,
                              mult, n_mult)
            io[E_J] = j
            if status != RESTARTED:
                io[E_PHASE] = phase
                return status
            k = <intp_t>io[E_NREC]
            rec_end[k] = start + frel
            start = st[ST_ACT_END]
            rec_start[k] = start
            if io[E_CLOCK] != 0.0:  # the job was down from the failure to the resume
                io[E_OFF] += start - rec_end[k]
            io[E_NREC] = k + 1
            io[E_START] = start
            io[E_EPOCH] += 1.0
            io[E_NFORCED] += io[E_FORCED]
            if use_repairs:  # every group back, nothing pending (``RepairBook.restart``)
                rs[R_READY] = 0.0
                rs[R_HEAD] = 0.0
                rs[R_COUNT] = 0.0
            phase = PH_END if start > max_wall else PH_FIND
        else:
            j = 0
            status = _advance(st, par, NULL, start, NULL, NULL, NULL, NULL, NULL, NULL, 0, &j, INFINITY, mult, n_mult)
            io[E_PHASE] = phase
            return status


def restart_epochs(float64_t[::1] state, const float64_t[::1] params, float64_t[::1] io,
                   const float64_t[::1] log_t, const int64_t[::1] log_g, float64_t horizon,
                   float64_t[::1] rs, float64_t[::1] pool, const int64_t[:, ::1] holders,
                   const float64_t[::1] mult, float64_t[::1] rec_end, float64_t[::1] rec_start,
                   const int8_t[::1] cls_flags=None, const float64_t[::1] cls_det=None,
                   const float64_t[::1] draw_rep=None, const float64_t[::1] draw_swap=None,
                   const int8_t[::1] draw_mis=None, int64_t[::1] take_slot=None, float64_t[::1] take_old=None,
                   float64_t[::1] standby=None, int64_t[::1] standby_slot=None, float64_t[::1] standby_old=None,
                   const int8_t[::1] log_r=None, float64_t[::1] take_ret=None):
    """Walk the epochs of a run whose every failure is a global restart, on a node failure log.

    Parameters
    ----------
    state, params : float64[N_STATE], float64[N_PARAMS]
        As :func:`advance` (``state`` IN-OUT).
    io : float64[N_EPOCH_IO], IN-OUT
        The loop's registers (``EPOCH_SLOTS``): zeros at a run's start (phase ``PH_FIND``,
        epoch start 0), but ``E_CLOCK`` 1 for a log on the job's compute clock; kept between
        calls.
    log_t, log_g : float64[n], int64[n], IN
        The log's failures so far (times ascending, ties by node; the failed node's group), on
        the wall clock, or with ``E_CLOCK`` on the job's compute clock (an epoch reads the rows
        after its start less ``E_OFF``, the time the job has been down).
    horizon : float, IN
        Every failure before it is in ``log_t``.
    rs, pool : arrays of ``RepairBook``, IN-OUT, or ``rs`` of length 0 for a run without repairs
        The spare pool's counters and ring (``merge_repairs``).
    holders : int64[n_groups, copies], IN, or shape (0, 0) without a memory tier
        The groups holding each group's in-memory copies.
    mult : float64[n_mult], IN
        Step multipliers, consumed from ``state[ST_MULT_IDX]``.
    rec_end, rec_start : float64[n_rec], OUT
        Per restart: the failure's time and the resume time, from ``io[E_NREC]``.
    cls_flags, cls_det : int8[n_cls], float64[n_cls], IN, optional
        With failure classes: the class flags (``CL_FORCED``, ``CL_WIDE``) and detection seconds
        of the first failure of epochs ``io[E_CLS_BASE] ..`` (``ClassDraws.first``). A job-wide
        failure takes no spare and leaves its group its snapshot copies; the detection delays
        the restart. None: no classes (every failure a node's, noticed at once).
    draw_rep, draw_swap, draw_mis, take_slot, take_old : arrays or None
        Drawn durations per take (``merge_repairs``); they must cover two takes per record
        left in ``rec_end``.
    log_r : int8[n], IN, optional
        1 for a log row whose node retires ([fleet] retire_after; ``merge_repairs``'s raw_ret).
    take_ret : float64[len(take_slot)], OUT, optional
        Each take's retirement time (``merge_repairs``'s).

    Returns
    -------
    int
        ``DONE``, ``TIMEOUT``, ``NEED_MULT`` (a new chunk of multipliers, ``ST_MULT_IDX`` reset:
        call again), ``NEED_LOG`` (extend the log, call again with it), ``RECORDS_FULL`` (read
        and reset ``io[E_NREC]``, call again), ``BAD_LOG`` (a group read from ``log_g`` outside
        ``holders``' rows), ``NEED_CLASSES`` (the class arrays do not reach epoch
        ``io[E_EPOCH]``: give those from it, with ``io[E_CLS_BASE]`` set to it). O(steps +
        restarts log n) with the GIL released.
    """
    cdef intp_t n_log = log_t.shape[0], n_groups = holders.shape[0], n_copies = holders.shape[1]
    cdef intp_t i, c
    cdef int status, use_repairs = rs.shape[0] > 0, use_memory = n_groups > 0
    cdef int use_classes = cls_flags is not None
    cdef intp_t n_cls = 0
    if (cls_flags is None) != (cls_det is None) or (use_classes and cls_det.shape[0] != cls_flags.shape[0]):
        raise ValueError("cls_flags and cls_det go together, of one length")
    if use_classes:
        n_cls = cls_flags.shape[0]
        for i in range(n_cls):
            if not (cls_det[i] >= 0.0 and cls_det[i] <= DBL_MAX) or not (0 <= cls_flags[i] <= 3):
                raise ValueError("cls_det must be finite seconds >= 0 and cls_flags in 0..3")
    if state.shape[0] != N_STATE or params.shape[0] != N_PARAMS or io.shape[0] != N_EPOCH_IO:
        raise ValueError("state, params or io has the wrong length")
    if log_r is not None and log_r.shape[0] != n_log:
        raise ValueError("log_r must have log_t's length")
    if log_g.shape[0] != n_log or rec_start.shape[0] != rec_end.shape[0] or rec_end.shape[0] < 1:
        raise ValueError("log_t and log_g, rec_end and rec_start must have one length (records >= 1)")
    if not (0 <= io[E_PHASE] <= PH_END) or not (0 <= io[E_NREC] <= rec_end.shape[0]) or not (0 <= io[E_J] <= 1):
        raise ValueError("io registers out of range")
    if not (0 <= state[ST_MULT_IDX] <= mult.shape[0]):
        raise ValueError("state's multiplier index is outside the buffer")
    if not (1.0 <= params[P_N_STEPS] <= 9007199254740992.0):
        raise ValueError(f"params n_steps must be in [1, 2**53], got {params[P_N_STEPS]}")
    if use_repairs and (rs.shape[0] != N_REPAIR or pool.shape[0] < 1
                        or not (-1 <= rs[R_N_SPARES] <= pool.shape[0]) or rs[R_USED] < 0):
        raise ValueError("rs and pool are not a RepairBook's")
    if use_memory:
        if n_copies < 1:
            raise ValueError("holders needs at least one copy per group")
        for i in range(n_groups):
            for c in range(n_copies):
                if not (0 <= holders[i, c] < n_groups):
                    raise ValueError(f"holders must be in [0, {n_groups})")
    cdef Draws dr
    cdef Draws* dp = NULL
    if use_repairs:
        dp = _draws(rs, draw_rep, draw_swap, draw_mis, take_slot, take_old, standby, standby_slot, standby_old, &dr,
                    2 * (rec_end.shape[0] - <intp_t>io[E_NREC]))
        _keep_ret(dp, take_ret, take_slot)
    elif draw_rep is not None:
        raise ValueError("draw arrays need repairs (rs)")
    mark = np.zeros(max(n_groups, 1), dtype=np.uint8)
    cdef uint8_t[::1] mk = mark
    with nogil:
        status = _restart_epochs(&state[0], &params[0], &io[0],
                                 &log_t[0] if n_log else NULL, &log_g[0] if n_log else NULL, n_log, horizon,
                                 &rs[0] if use_repairs else NULL, &pool[0] if use_repairs else NULL, use_repairs,
                                 &holders[0, 0] if use_memory else NULL, n_groups, n_copies, use_memory, &mk[0],
                                 &mult[0] if mult.shape[0] else NULL, mult.shape[0],
                                 &rec_end[0], &rec_start[0], rec_end.shape[0],
                                 &cls_flags[0] if n_cls else NULL, &cls_det[0] if n_cls else NULL, n_cls,
                                 use_classes, dp, &log_r[0] if log_r is not None and n_log else NULL)
    return status

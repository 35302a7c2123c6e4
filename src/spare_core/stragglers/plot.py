"""The what-if heatmap: workers × steps, each cell the slowdown with only that worker as recorded.

Needs matplotlib (``pip install 'spare_core[plot]'``), imported on the first call.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ._analysis import WhatIfResult

__all__ = ["heatmap", "MAX_ROWS"]

#: the most workers drawn as rows (the worst first); the DP × PP panel shows all of them
MAX_ROWS = 32


def heatmap(result: WhatIfResult, *, rows: int = MAX_ROWS) -> Any:
    """A matplotlib Figure: left, the worst ``rows`` workers × steps (per-step slowdown with only
    that worker as recorded, the value written in each cell when it fits); right, every worker
    on the DP rank × stage grid (the whole-trace value). Colours: 1 (white) to the largest value.

    Raises
    ------
    ImportError
        matplotlib is not installed.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = np.argsort([-result.by_worker[r] for r, _, _ in result.workers], kind="stable")[:rows]
    data = result.by_worker_steps[order]
    labels = [f"rank {result.workers[i][0]} (dp {result.workers[i][1]}, pp {result.workers[i][2]})" for i in order]
    S = data.shape[1]
    D, P = result.sizes.dp, result.sizes.pp
    grid = np.ones((P, D))
    for r, d, p in result.workers:
        grid[p, d] = result.by_worker[r]
    vmax = max(1.05, float(np.nanmax(data)) if data.size else 1.05, float(grid.max()))
    w_left = min(14.0, 3.0 + 0.35 * S)
    w_right = min(10.0, 1.5 + 0.3 * D)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(w_left + w_right, max(3.0, 0.32 * len(order) + 1.8)),
                                  gridspec_kw={"width_ratios": [w_left, w_right]})
    ax.imshow(data, aspect="auto", cmap="Reds", vmin=1.0, vmax=vmax, interpolation="nearest")
    ax.set_yticks(range(len(order)), labels, fontsize=8)
    step_ticks = range(0, S, max(1, S // 20))
    ax.set_xticks(list(step_ticks), [str(int(result.steps[i])) for i in step_ticks], fontsize=8, rotation=90)
    ax.set_xlabel("step")
    ax.set_title(f"worst {len(order)} of {len(result.workers)} workers: slowdown with only that worker as recorded",
                 fontsize=9)
    if S <= 24 and len(order) <= MAX_ROWS:
        for i in range(len(order)):
            for j in range(S):
                ax.text(j, i, f"{data[i, j]:.2f}", ha="center", va="center", fontsize=6,
                        color="white" if data[i, j] > 1 + 0.6 * (vmax - 1) else "black")
    im2 = ax2.imshow(grid, aspect="auto", cmap="Reds", vmin=1.0, vmax=vmax, interpolation="nearest")
    ax2.set_xlabel("DP rank")
    ax2.set_ylabel("stage (PP rank)")
    ax2.set_yticks(range(P))
    if D <= 32:
        ax2.set_xticks(range(D))
        if P * D <= 256:
            for p in range(P):
                for d in range(D):
                    ax2.text(d, p, f"{grid[p, d]:.2f}", ha="center", va="center", fontsize=6)
    ax2.set_title(f"S = {result.slowdown:.3f} (ideal: {result.ideal_rule}); per worker, whole trace", fontsize=9)
    fig.colorbar(im2, ax=ax2, label="slowdown (S_w)")
    fig.tight_layout()
    return fig

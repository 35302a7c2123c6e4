"""The markdown tables of docs/results.md, from ``spare compare --json`` files.

Usage::

    spare compare --json default.json
    spare compare --no-patch-cost --json no-patch.json
    spare compare --failure-model system --json system.json
    spare compare --rep-variant disjoint --json disjoint.json
    spare compare --layout sidon --json sidon.json
    python bench/results_tables.py default.json no-patch.json system.json disjoint.json sidon.json

Prints: the per-r table of the first file (TTT/T0 / availability / overhead of Rep+CKPT and
SPARe+CKPT per N), the best-r summary of every file (one block per variant), and the per-r
SPARe rows at r = 5, 8, 10, 15, 20 of the file whose SPARe layout is Sidon-type, if any.
"""
from __future__ import annotations

import json
import sys

PER_R = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20)
SIDON_R = (5, 8, 10, 15, 20)


def _cell_text(c) -> str:
    if c is None:
        return "-"
    if c["finished"] < c["seeds"]:
        return f"> {c['horizon_t0']:g} ({100 * c['progress']:.0f} %)" if "progress" in c else "> horizon"
    return f"{c['ratio_mean']:.2f} / {c['availability']:.2f} / {c['overhead']:.2f}"


def _cells(doc):
    out = {}
    for c in doc["cells"]:
        c = dict(c, horizon_t0=doc["horizon_t0"])
        out[(c["n_groups"], c["policy"], c["redundancy"])] = c
    return out


def per_r_table(doc) -> str:
    cells = _cells(doc)
    ns = sorted({n for n, _, _ in cells})
    head = "| r | " + " | ".join(f"{p} N={n}" for n in ns for p in ("Rep", "SPARe")) + " |"
    rows = [head, "|" + "---|" * (1 + 2 * len(ns))]
    for r in PER_R:
        # at r = 1 every policy is CKPT-only (the sweep simulates it once)
        vals = [_cell_text(cells.get((n, p, r)) or cells.get((n, "CKPT-only", r)))
                for n in ns for p in ("Rep+CKPT", "SPARe+CKPT")]
        rows.append(f"| {r} | " + " | ".join(vals) + " |")
    return "\n".join(rows)


def _best(c) -> str:
    return (f"r={c['redundancy']}: {c['ratio_mean']:.2f} ± {c['ratio_std']:.2f}, "
            f"{c['availability']:.2f}, {c['overhead']:.2f}")


def best_rows(doc, label: str) -> list[str]:
    rows = []
    for i, (n, best) in enumerate(sorted(doc["best"].items(), key=lambda kv: int(kv[0]))):
        # Rep+CKPT is labelled "Rep+CKPT (disjoint)" under --rep-variant disjoint
        rep = next((v for k, v in best.items() if k.startswith("Rep+CKPT")), None)
        spare = best.get("SPARe+CKPT")
        change = "-" if not (rep and spare) else f"{100 * (spare['ratio_mean'] / rep['ratio_mean'] - 1):+.1f} %"
        rows.append(f"| {label if i == 0 else ''} | {n} | {_best(rep) if rep else '-'} | "
                    f"{_best(spare) if spare else '-'} | {change.replace('-', '−')} |")
    return rows


def sidon_table(doc) -> str:
    cells = _cells(doc)
    ns = sorted({n for n, _, _ in cells})
    rows = ["| r | " + " | ".join(f"N={n}" for n in ns) + " |", "|" + "---|" * (1 + len(ns))]
    for r in SIDON_R:
        rows.append(f"| {r} | " + " | ".join(_cell_text(cells.get((n, "SPARe+CKPT", r))) for n in ns) + " |")
    return "\n".join(rows)


def _label(doc) -> str:
    parts = []
    if not doc["charge_patch"]:
        parts.append("`--no-patch-cost`")
    if not doc["failure_model"].startswith("per-unit"):
        parts.append("`--failure-model system`")
    if doc["rep_variant"] != "cyclic":
        parts.append(f"`--rep-variant {doc['rep_variant']}`")
    if doc["spare_layout"] != "consecutive":
        parts.append(f"`--layout {doc['spare_layout']}`")
    return " ".join(parts) or "default"


def main(paths) -> int:
    docs = [json.load(open(p)) for p in paths]
    print(per_r_table(docs[0]), end="\n\n")
    print("| variant | N | best Rep+CKPT | best SPARe+CKPT | SPARe vs Rep |\n|---|---|---|---|---|")
    for doc in docs:
        print("\n".join(best_rows(doc, _label(doc))))
    for doc in docs:
        if doc["spare_layout"] == "sidon":
            print("\n" + sidon_table(doc))
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))

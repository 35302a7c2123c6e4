"""``spare report FILE.toml --html OUT.html [--md OUT.md]``: the advice as a page to forward.

``spare advise`` on the file (every advise flag applies), rendered for a reader who never ran
the tool: one self-contained HTML page (the figures embedded, no network) and, with ``--md``,
the same report as Markdown with its figures in ``OUT_figures/`` beside it. In order:

1. the recommendation in one paragraph: strategy, r, the checkpoint interval in steps and
   hours, expected time-to-train, ETTR and cost, each with its 95 % confidence interval, and
   the runner-up with how much slower (paired over seeds);
2. where the time goes, per strategy: kept steps, saves, in-memory snapshots, restarts, waits
   for spares, pauses and work rolled back, as a share of the wall time (the parts of each run
   sum to its wall time) — a table and a stacked bar;
3. what moves the answer: the failure rate, costs, repair times, the spare pool and the
   in-memory tier varied one at a time, and which strategy wins each;
4. the figures ``spare advise --plot`` draws, and any ``spare map --json`` outputs given with
   ``--map``, redrawn;
5. the assumptions in words (the job, the failure model and rate, the costs) and the failure
   data's provenance (a log's path, digest, rows and window; a fitted law and its check);
6. how to read the numbers, the command that reproduces the report, and the advice's text.
"""
from __future__ import annotations

import base64
import contextlib
import html
import io
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Sequence

from .._writer import write_atomic
from ..sim.results import KEPT_STEPS, TIME_PARTS, judged_cells, time_breakdown
from . import UsageError
from . import advise
from .outputs import check_output_path, check_plot_dir
from .text import fmt_duration

HELP = ("the advice as a report to forward: one self-contained HTML page (and Markdown) with the recommendation, "
        "where the time goes, what moves the answer, the figures, the assumptions and their confidence intervals")

#: the advise figures the page shows, in order, with their captions
FIGURES = (("ttt_vs_r.png", "Time-to-train (over the failure-free time) and availability against the redundancy r, "
                            "per strategy: the mean over seeds and their spread."),
           ("ettr_vs_interval.png", "ETTR of the recommended strategy against the checkpoint interval: the closed "
                                    "forms (Young, Daly) and the chosen interval marked."),
           ("spares.png", "Time-to-train and cost against the number of hot spare nodes, per strategy."),
           ("timeline.png", "One run of the recommended strategy: failures over time, masked ones and restarts."),
           ("breakdown.png", "Where each strategy's wall time goes (mean over seeds)."))


def add_arguments(parser: Any) -> None:
    """Every option of ``spare advise``, and the report's outputs."""
    advise.add_arguments(parser)
    parser.add_argument("--html", metavar="OUT.html", default=None, help="write the report as one self-contained "
                        "HTML page (figures embedded)")
    parser.add_argument("--md", metavar="OUT.md", default=None,
                        help="write the report as Markdown, its figures in OUT_figures/ beside it")
    parser.add_argument("--map", metavar="MAP.json", action="append", default=[],
                        help="a 'spare map --json' output to include, redrawn (repeatable)")


def _read_map(path: str) -> dict:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"--map {path}: cannot read it as JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("command") != "spare map" or "cells" not in doc:
        raise UsageError(f"--map {path}: not the --json output of 'spare map'")
    return doc


def run(args: Any) -> int:
    """Run ``spare advise`` on the file, then write the page(s)."""
    if not args.html and not args.md:
        raise UsageError("give --html OUT.html, --md OUT.md or both")
    for flag in ("html", "md"):
        check_output_path(getattr(args, flag), f"--{flag}")
    maps = [(p, _read_map(p)) for p in args.map]
    try:  # the figures are part of the report
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError("spare report draws its figures with matplotlib: pip install 'spare_core[plot]'") from None
    if args.plot is not None:
        check_plot_dir(args.plot)
    with tempfile.TemporaryDirectory(prefix="spare-report-") as tmp:
        own_json, own_plot = args.json, args.plot
        args.json = own_json or os.path.join(tmp, "advise.json")
        args.plot = own_plot or os.path.join(tmp, "figures")
        os.makedirs(args.plot, exist_ok=True)
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            code = advise.run(args)
        if code != 0:
            print(text.getvalue(), end="")
            return code
        doc = json.loads(Path(args.json).read_text(encoding="utf-8"))
        if doc.get("advice") is None:
            print(text.getvalue(), end="")
            raise UsageError(f"{args.file}: no strategy finished on every seed: nothing to report (raise "
                             "compare.horizon or try other policies)")
        shown = [ln for ln in text.getvalue().splitlines() if not ln.startswith("wrote ")]
        report = build_report(doc, "\n".join(shown), maps)
        figures = {name: Path(args.plot, name).read_bytes() for name, _ in FIGURES if Path(args.plot, name).is_file()}
        figures.update(_extra_figures(report, maps, tmp))
        args.json, args.plot = own_json, own_plot
        written = []
        if args.html:
            write_atomic(args.html, render_html(report, figures).encode("utf-8"), "--html")
            written.append(args.html)
        if args.md:
            written.extend(_write_markdown(args.md, report, figures))
    print("\n".join(shown[:3]))
    print(f"recommendation: {report['headline']}")
    for path in written:
        print(f"wrote {path}")
    return 0


# -- the report as data -------------------------------------------------------------------------
def _ci(v: Sequence[float] | None, fmt: str = "{:.3f}") -> str:
    """``m [lo, hi]`` of a (mean, low, high), ``m`` alone without an interval."""
    if v is None:
        return "-"
    m, lo, hi = v
    if m is None:
        return "-"
    if lo is None or hi is None or (isinstance(lo, float) and math.isnan(lo)):
        return fmt.format(m) + " (one seed: no interval)"
    return f"{fmt.format(m)} [{fmt.format(lo)}, {fmt.format(hi)}]"


def _name(policy: str, r: Any, uses_r: bool) -> str:
    return f"{policy} r = {r}" if uses_r else policy


def _cells_of(doc: dict, grid: str) -> list[dict]:
    return [c for c in doc["cells"] if c.get("grid") == grid]


def _best_cells(doc: dict) -> list[tuple[dict, bool]]:
    """Per policy of the main grid, its best finished cell and whether the policy uses r
    (judged at r >= 2 when a policy without redundancy is compared: the one rule of
    :func:`judged_cells`), best first."""
    cells = _cells_of(doc, "main")
    uses = {p: any(c["redundancy"] > 1 for c in cells if c["policy"] == p) for p in (c["policy"] for c in cells)}
    plain = any(not u for u in uses.values())
    out = []
    for p in uses:
        mine = judged_cells([c for c in cells if c["policy"] == p], uses_redundancy=uses[p], plain_compared=plain,
                            redundancy=lambda c: c["redundancy"])
        done = [c for c in mine if c["finished"] == c["seeds"] and c["ratio_mean"] is not None]
        if done:
            out.append((min(done, key=lambda c: (c["ratio_mean"], c["redundancy"])), uses[p]))
    return sorted(out, key=lambda cu: cu[0]["ratio_mean"])


def _runs_of(doc: dict, grid: str, policy: str, r: int, interval: float | None = None) -> list[dict]:
    runs = [x for x in doc["runs"] if x["grid"] == grid and x["policy"] == policy and x["redundancy"] == r]
    if interval is not None:
        runs = [x for x in runs if math.isclose(x["checkpoint_interval"], interval, rel_tol=1e-9)]
    return runs


def build_report(doc: dict, text: str, maps: Sequence[tuple[str, dict]] = ()) -> dict:
    """The report's content from ``spare advise``'s JSON document: every section as data (the
    HTML and Markdown renderers only lay it out)."""
    a = doc["advice"]
    prov = doc["provenance"]
    sc = prov["scenario"]
    iv = a.get("interval", {})
    steps = iv.get("steps")
    every = fmt_duration(a["checkpoint_interval"])
    who = _name(a["policy"], a["redundancy"], a["uses_redundancy"])
    save = f"every {steps:,} steps ({every} of training)" if steps else f"every {every} of training"
    headline = f"{who}, saving a checkpoint {save}"
    rec = [f"Run **{who}** and save a persistent checkpoint **{save}**.",
           f"Expected time-to-train: **{_ci(a['ttt_days'], '{:.2f}')} days** (failure-free "
           f"{sc['scenario']['n_steps'] * (sc['scenario']['t_compute'] + sc['scenario']['t_allreduce']) / 86400:.2f} d), "
           f"i.e. {_ci(a['ratio'])} times the failure-free time; ETTR {_ci(a['ettr'])}."]
    if a.get("cost") is not None:
        rec.append(f"Cost: **{_ci(a['cost'], '{:,.0f}')}** ({_ci(a['gpu_hours'], '{:,.0f}')} GPU-hours, spares "
                   "included).")
    if a.get("spot_cost_per_mtoken") is not None and a.get("on_demand_cost_per_mtoken") is not None:
        rec.append(f"Cost per million tokens: {_ci(a['on_demand_cost_per_mtoken'], '{:.4g}')} on demand, "
                   f"{_ci(a['spot_cost_per_mtoken'], '{:.4g}')} on spot nodes.")
    elif a.get("cost_per_mtoken") is not None:
        rec.append(f"Cost per million tokens: {_ci(a['cost_per_mtoken'], '{:.4g}')}.")
    ru = a.get("runner_up")
    if ru is not None:
        gap = ru["slower_percent"]
        clear = gap[1] is not None and gap[1] > 0
        rec.append(f"Runner-up: {_name(ru['policy'], ru['redundancy'], ru['uses_redundancy'])}, "
                   f"{_ci(gap, '{:+.1f}')} % time-to-train (paired over the same failures; "
                   + ("the gap is clear of zero)." if clear else "not clearly slower: the two are close)."))
    if iv.get("rule"):
        rec.append(f"Why this interval: {iv['rule']}.")

    # where the time goes: the recommended strategy at its chosen interval, the others at their best cell
    parts = []
    rec_runs = _runs_of(doc, "interval scan", a["policy"], a["redundancy"], a["checkpoint_interval"]) \
        or _runs_of(doc, "main", a["policy"], a["redundancy"])
    if rec_runs:
        parts.append({"strategy": who + " (recommended)", "seeds": len(rec_runs), **time_breakdown(rec_runs)})
    for c, uses in _best_cells(doc):
        if c["policy"] == a["policy"]:
            continue
        runs = _runs_of(doc, "main", c["policy"], c["redundancy"])
        if runs:
            parts.append({"strategy": _name(c["policy"], c["redundancy"], uses), "seeds": len(runs),
                          **time_breakdown(runs)})

    # what each change does to the advice as given (advise's levers: paired over the same seeds)
    levers = []
    for lv in a.get("levers") or []:
        t, c = lv["time_percent"], lv["cost_percent"]
        levers.append({"change": lv["label"], "ttt": _ci(t, "{:+.1f}") + " %",
                       "cost": "-" if c is None else _ci(c, "{:+.1f}") + " %",
                       "winner": lv["winner"] or "-"})
    if levers:
        first = a["levers"][0]
        t = first["cost_percent"] if a.get("objective") == "cost" and first["cost_percent"] else first["time_percent"]
        rec.append(f"Change first: **{first['label']}** ({_ci(t, '{:+.1f}')} %, paired over the same failures)."
                   if t[2] is not None and t[2] < 0
                   else "None of the changes tried makes the recommendation better beyond the seed noise.")
    sc_check = a.get("spares_check")
    if sc_check is not None:
        rec.append(f"Spare pool: about {sc_check['in_repair']:.1f} nodes are in repair at any time (Little's law: a "
                   f"failure every {fmt_duration(sc_check['failure_every'])}, {fmt_duration(sc_check['repair_time'])} "
                   f"{'on average' if sc_check.get('drawn') else 'each'}) against {sc_check['pool']} spares; "
                   f"{100 * sc_check['wait_share']:.3g} % of failures find every spare in repair: "
                   + ("enough." if sc_check["enough"] else "**too few** — restarts wait for repairs."))
    for w in (iv.get("edge_warning"),):
        if w:
            rec.append(f"Note: {w}.")

    assumptions = [ln for ln in text.splitlines()[:3] if ln.strip()]
    data = []
    if "trace" in sc:
        t = sc["trace"]
        data.append(f"Failure log `{t.get('path')}` (sha256 {str(t.get('sha256', ''))[:16]}...): {t.get('rows'):,} rows "
                    f"on {t.get('units'):,} units, {t.get('end_seconds', 0) / 86400:.1f} days.")
    if "fit" in sc:
        f = sc["fit"]
        params = ", ".join(f"{k} = {v:.4g}" for k, v in f["params"].items())
        check = f.get("check") or {}
        data.append(f"Fitted law: {f['law']} ({params}) to the {f['level']}, {f['failures']:,} failures and "
                    f"{f['censored']:,} censored; re-simulated over the log's window: "
                    f"{'reproduced' if check.get('reproduced', True) else 'NOT reproduced'}.")
    data.append(f"Rate as used: {sc.get('failure_rate', '')}.")
    return {
        "title": f"Fault-tolerance plan: {sc.get('name', '')}",
        "headline": headline,
        "recommendation": rec,
        "breakdown": parts,
        "levers": levers,
        "assumptions": assumptions,
        "data": data,
        "file": sc.get("file", {}),
        "maps": [(p, m) for p, m in maps],
        "reading": [
            f"Every number is the mean over {a['seeds']} independently seeded simulations of the whole job, with "
            "its 95 % Student-t confidence interval in brackets; the strategies meet the same failures on each "
            "seed, so differences between them are paired over seeds.",
            "Time-to-train counts everything: training steps, checkpoint saves, restarts, waits for spare nodes, "
            "pauses and the work redone after a rollback; the parts of each run add up to its wall time.",
            "Only what the scenario file states is modelled: the assumptions below are the whole input.",
        ],
        "reproduce": " ".join(["spare", *prov.get("argv", [])[1:]]) if prov.get("argv") else "spare advise FILE",
        "provenance": {k: prov[k] for k in ("version", "created", "python", "numpy", "scipy", "platform") if k in prov},
        "seeds": prov.get("seeds"),
        "text": text,
        "objective": a.get("objective", "time"),
    }


def _extra_figures(report: dict, maps: Sequence[tuple[str, dict]], tmp: str) -> dict[str, bytes]:
    """The breakdown's stacked bar and each map redrawn, as PNG bytes by name."""
    from types import SimpleNamespace

    from .plots import plot_breakdown, plot_map

    out = {}
    if report["breakdown"]:
        path = plot_breakdown(report["breakdown"], os.path.join(tmp, "breakdown.png"))
        out["breakdown.png"] = Path(path).read_bytes()
    for k, (src, m) in enumerate(maps):
        axes = [SimpleNamespace(key=m[a]["key"], texts=tuple(str(v) for v in m[a]["values"]),
                                labels=tuple(m[a]["labels"]), log=m[a]["log"]) for a in ("x", "y")]
        names = [s["name"] for s in m["strategies"]]
        path = os.path.join(tmp, f"map_{k + 1}.png")
        plot_map(m, axes[0], axes[1], names, path)
        out[f"map_{k + 1}.png"] = Path(path).read_bytes()
    return out


# -- renderers ----------------------------------------------------------------------------------
_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; max-width: 980px; margin: 2em auto;
       padding: 0 1em; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 1.8em; border-bottom: 1px solid #ddd; }
.headline { font-size: 1.15em; background: #f3f6fa; border-left: 4px solid #4c72b0; padding: 0.6em 1em; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.5em; text-align: right; } th { background: #f5f5f5; }
td { white-space: nowrap; } .wide { overflow-x: auto; }
td:first-child, th:first-child { text-align: left; }
figure { margin: 1.2em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #555; } pre { background: #f8f8f8; padding: 0.8em; overflow-x: auto;
font-size: 0.82em; } .small { font-size: 0.85em; color: #555; }
"""


def _md_inline(s: str) -> str:
    """The report's sentences use ``**bold**`` and ```code```; as HTML."""
    out, bold, code = [], False, False
    for k, part in enumerate(s.replace("**", "\0").split("\0")):
        if k:
            bold = not bold
            out.append("<strong>" if bold else "</strong>")
        pieces = part.split("`")
        for j, piece in enumerate(pieces):
            if j:
                code = not code
                out.append("<code>" if code else "</code>")
            out.append(html.escape(piece))
    return "".join(out)


def _dur(x: float) -> str:
    """A part of the wall time (``0 s`` for none: not the interval formatter's "every step")."""
    return "0 s" if x <= 0 else fmt_duration(x)


def _pct(x: float, wall: float) -> str:
    return f"{100.0 * x / wall:.1f} %" if wall > 0 else "-"


def _breakdown_rows(report: dict) -> tuple[list[str], list[list[str]]]:
    """The breakdown as a table: one row per part of the wall time, one column per strategy
    (a few strategies side by side read better than nine parts side by side)."""
    rows_in = report["breakdown"]
    head = ["", *(f"{r['strategy']} ({r['seeds']} seeds)" for r in rows_in)]
    rows = [["wall time", *(_dur(r["wall"]) for r in rows_in)]]
    for key, label in ((KEPT_STEPS, KEPT_STEPS), *TIME_PARTS):
        rows.append([label, *(f"{_dur(r[key])} ({_pct(r[key], r['wall'])})" for r in rows_in)])
    return head, rows


def _lever_rows(report: dict) -> tuple[list[str], list[list[str]]]:
    head = ["what changes", "time-to-train, change", "cost, change", "best strategy then"]
    rows = [[lv["change"], lv["ttt"], lv["cost"], lv["winner"]] for lv in report["levers"]]
    return head, rows


def _html_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<div class="wide"><table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table></div>'


def _figure_list(report: dict, figures: dict[str, bytes]) -> list[tuple[str, str]]:
    caps = dict(FIGURES)
    out = [(n, caps[n]) for n, _ in FIGURES if n in figures]
    for k, (src, m) in enumerate(report["maps"]):
        name = f"map_{k + 1}.png"
        if name in figures:
            out.append((name, f"Which strategy wins where ({os.path.basename(src)}): {m['x']['key']} against "
                              f"{m['y']['key']}; each cell names the winner and its best rival of another family."))
    return out


def render_html(report: dict, figures: dict[str, bytes]) -> str:
    """The report as one HTML page, the figures embedded as data URIs (no network needed)."""
    h = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
         f"<title>{html.escape(report['title'])}</title>", f"<style>{_CSS}</style></head><body>",
         f"<h1>{html.escape(report['title'])}</h1>",
         f'<p class="small">spare_core {html.escape(str(report["provenance"].get("version", "")))}, '
         f'{html.escape(str(report["provenance"].get("created", "")))}</p>',
         f'<p class="headline" id="recommendation">Recommendation: {html.escape(report["headline"])}</p>',
         "<h2>Recommendation</h2>", *(f"<p>{_md_inline(s)}</p>" for s in report["recommendation"])]
    if report["breakdown"]:
        h += ['<h2 id="breakdown">Where the time goes</h2>',
              "<p>Each strategy's wall time split into its parts (mean over seeds); the parts add up to the wall "
              "time.</p>", _html_table(*_breakdown_rows(report))]
    if report["levers"]:
        h += ['<h2 id="levers">What moves the answer</h2>',
              "<p>One thing changed at a time, the recommendation kept as given (strategy, r, interval), on the same "
              "failures; the change in time-to-train and cost is paired over seeds, best first.</p>",
              _html_table(*_lever_rows(report))]
    figs = _figure_list(report, figures)
    if figs:
        h.append('<h2 id="figures">Figures</h2>')
        for name, cap in figs:
            uri = "data:image/png;base64," + base64.b64encode(figures[name]).decode("ascii")
            h.append(f'<figure><img src="{uri}" alt="{html.escape(cap)}"><figcaption>{html.escape(cap)}'
                     "</figcaption></figure>")
    h += ['<h2 id="assumptions">Assumptions</h2>', "<ul>", *(f"<li>{html.escape(s)}</li>" for s in report["assumptions"]),
          "</ul>", '<h2 id="data">Failure data</h2>', "<ul>", *(f"<li>{_md_inline(s)}</li>" for s in report["data"]),
          "</ul>", "<p>The scenario file as read (after any --set):</p>",
          f"<pre>{html.escape(json.dumps(report['file'], indent=1))}</pre>",
          '<h2 id="reading">How to read the numbers</h2>', *(f"<p>{html.escape(s)}</p>" for s in report["reading"]),
          '<h2 id="reproduce">Reproduce</h2>', f"<pre>{html.escape(report['reproduce'])}</pre>",
          f'<p class="small">{html.escape(", ".join(f"{k} {v}" for k, v in report["provenance"].items()))}; seeds '
          f'{html.escape(str(report["seeds"]))}</p>',
          '<h2 id="advice-text">The advice as printed</h2>', f"<pre>{html.escape(report['text'])}</pre>",
          "</body></html>"]
    return "\n".join(h) + "\n"


def _md_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    esc = [[c.replace("|", "\\|") for c in row] for row in rows]
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head), *("| " + " | ".join(r) + " |" for r in esc)]


def render_markdown(report: dict, figures: Sequence[tuple[str, str]], figure_dir: str) -> str:
    """The report as Markdown, its figures referenced in ``figure_dir`` (relative)."""
    m = [f"# {report['title']}", "", f"spare_core {report['provenance'].get('version', '')}, "
         f"{report['provenance'].get('created', '')}", "", f"> **Recommendation:** {report['headline']}", "",
         "## Recommendation", "", *(x for s in report["recommendation"] for x in (s, ""))]
    if report["breakdown"]:
        m += ["## Where the time goes", "", "Each strategy's wall time split into its parts (mean over seeds); the "
              "parts add up to the wall time.", "", *_md_table(*_breakdown_rows(report)), ""]
    if report["levers"]:
        m += ["## What moves the answer", "", "One thing changed at a time, the recommendation kept as given (strategy, "
              "r, interval), on the same failures; the change is paired over seeds, best first.", "",
              *_md_table(*_lever_rows(report)), ""]
    if figures:
        m += ["## Figures", ""]
        for name, cap in figures:
            m += [f"![{cap}]({figure_dir}/{name})", "", f"*{cap}*", ""]
    m += ["## Assumptions", "", *(f"- {s}" for s in report["assumptions"]), "", "## Failure data", "",
          *(f"- {s}" for s in report["data"]), "", "The scenario file as read (after any --set):", "", "```json",
          json.dumps(report["file"], indent=1), "```", "", "## How to read the numbers", "",
          *(x for s in report["reading"] for x in (s, "")), "## Reproduce", "", "```", report["reproduce"], "```", "",
          ", ".join(f"{k} {v}" for k, v in report["provenance"].items()) + f"; seeds {report['seeds']}", "",
          "## The advice as printed", "", "```", report["text"], "```", ""]
    return "\n".join(m)


def _write_markdown(path: str, report: dict, figures: dict[str, bytes]) -> list[str]:
    """The Markdown file and its figures in ``<stem>_figures/`` beside it; the paths written."""
    stem = os.path.splitext(os.path.basename(path))[0]
    fig_dir = f"{stem}_figures"
    where = os.path.join(os.path.dirname(os.path.abspath(path)), fig_dir)
    figs = _figure_list(report, figures)
    if figs:
        os.makedirs(where, exist_ok=True)
        for name, _ in figs:
            write_atomic(os.path.join(where, name), figures[name], "--md")
    write_atomic(path, render_markdown(report, figs, fig_dir).encode("utf-8"), "--md")
    return [path] + ([where + os.sep] if figs else [])
